/* gcp_auth.c -- service-account authentication (OAuth 2.0 JWT bearer
 * grant): an RS256 JWT {"iss": client_email, "scope", "aud": token_uri,
 * "iat", "exp": iat+3600} signed with the key's PKCS#8 private key
 * (EVP_DigestSign, SHA-256, PKCS#1 v1.5), POSTed to the key's token_uri as
 * grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<jwt>.
 * The private key, the assertion and the token are registered with
 * host->redact and never appear in an error. */
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drvc_bearer.h"
#include "drvc_enc.h"
#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_token.h"
#include "drvc_util.h"
#include "gcp.h"

/* Registers the PEM and each of its base64 lines for redaction. */
static void redact_pem(const gb_host *h, const char *pem)
{
	const char *p = pem;
	if (!h->redact)
		return;
	h->redact(h->ctx, pem);
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n >= 16 && strncmp(p, "-----", 5) != 0) {
			char *line = drvc_xstrndup(p, n);
			size_t l = strlen(line);
			if (l && line[l - 1] == '\r')
				line[l - 1] = '\0';
			h->redact(h->ctx, line);
			drvc_free_secret(line);
		}
		p += n + (e ? 1 : 0);
	}
}

int gcp_load_key(gcp_ctx *c, const char *json, size_t len, char **why,
                 char **project_id)
{
	json_error_t je;
	json_t *root = json_loadb(json, len, 0, &je);
	const char *type, *email, *pem, *kid, *uri, *proj;
	BIO *bio;
	EVP_PKEY *pk;

	*why = NULL;
	*project_id = NULL;
	if (!json_is_object(root)) {
		*why = drvc_xasprintf("not a JSON object (line %d)", je.line);
		json_decref(root);
		return -1;
	}
	type = drvc_jstr(root, "type");
	email = drvc_jstr(root, "client_email");
	pem = drvc_jstr(root, "private_key");
	kid = drvc_jstr(root, "private_key_id");
	uri = drvc_jstr(root, "token_uri");
	proj = drvc_jstr(root, "project_id");
	if (pem)
		redact_pem(c->host, pem);
	if (type && strcmp(type, "service_account") != 0) {
		char t[64];
		drvc_clean_text(t, sizeof(t), type, 60);
		*why = drvc_xasprintf("\"type\" is \"%s\"; only service_account "
		                      "keys are supported", t);
	} else if (!email || !*email) {
		*why = drvc_xstrdup("\"client_email\" is missing");
	} else if (!pem || !*pem) {
		*why = drvc_xstrdup("\"private_key\" is missing");
	} else if (uri && strncasecmp(uri, "https://", 8) != 0 &&
	           strncasecmp(uri, "http://", 7) != 0) {
		*why = drvc_xstrdup("\"token_uri\" is not an http(s) URL");
	}
	if (*why) {
		json_decref(root);
		return -1;
	}
	bio = BIO_new_mem_buf(pem, (int)strlen(pem));
	pk = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, (void *)"") : NULL;
	BIO_free(bio);
	if (!pk || EVP_PKEY_get_base_id(pk) != EVP_PKEY_RSA) {
		EVP_PKEY_free(pk);
		*why = drvc_xstrdup("\"private_key\" is not a PEM RSA private "
		                    "key");
		json_decref(root);
		return -1;
	}
	EVP_PKEY_free(c->pkey);
	c->pkey = pk;
	free(c->client_email);
	free(c->key_id);
	free(c->token_uri);
	c->client_email = drvc_xstrdup(email);
	c->key_id = drvc_xstrdup(kid && *kid ? kid : NULL);
	c->token_uri = drvc_xstrdup(uri && *uri ? uri : GCP_DEFAULT_TOKEN_URI);
	*project_id = drvc_xstrdup(proj && *proj ? proj : NULL);
	json_decref(root);
	return 0;
}

static char *b64url_json(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	char *b;
	if (!s)
		abort();
	b = drvc_b64url(s, strlen(s));
	free(s);
	if (!b)
		abort();
	return b;
}

char *gcp_jwt(gcp_ctx *c, int64_t now_s, const char *scope)
{
	json_t *hdr, *claims;
	char *h64, *c64, *input, *sig64, *jwt = NULL;
	unsigned char *sig = NULL;
	size_t siglen = 0;
	EVP_MD_CTX *md;

	if (!c->pkey)
		return NULL;
	hdr = json_pack("{s:s,s:s}", "alg", "RS256", "typ", "JWT");
	if (c->key_id)
		json_object_set_new(hdr, "kid", json_string(c->key_id));
	claims = json_pack("{s:s,s:s,s:s,s:I,s:I}", "iss", c->client_email,
	                   "scope", scope, "aud", c->token_uri, "iat",
	                   (json_int_t)now_s, "exp", (json_int_t)(now_s + 3600));
	h64 = b64url_json(hdr);
	c64 = b64url_json(claims);
	json_decref(hdr);
	json_decref(claims);
	input = drvc_xasprintf("%s.%s", h64, c64);
	free(h64);
	free(c64);

	md = EVP_MD_CTX_new();
	if (md && EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, c->pkey) == 1 &&
	    EVP_DigestSign(md, NULL, &siglen, (unsigned char *)input,
	                   strlen(input)) == 1) {
		sig = drvc_xmalloc(siglen);
		if (EVP_DigestSign(md, sig, &siglen, (unsigned char *)input,
		                   strlen(input)) == 1) {
			sig64 = drvc_b64url(sig, siglen);
			if (!sig64)
				abort();
			jwt = drvc_xasprintf("%s.%s", input, sig64);
			free(sig64);
		}
	}
	EVP_MD_CTX_free(md);
	free(sig);
	free(input);
	return jwt;
}

int gcp_parse_token(const char *body, size_t len, char **token,
                    int64_t *expires_in_s, gb_error *err)
{
	return drvc_parse_token_response(body, len, GCP_MAX_SMALL,
	                                 "GCP token response", token, expires_in_s,
	                                 err);
}

typedef struct tok_ud {
	gcp_ctx *c;
	const char *assertion;
} tok_ud;

static gb_err_class token_classify(void *ud, const gb_http_resp *r,
                                   gb_error *err, int *auth_expired)
{
	tok_ud *t = ud;
	*auth_expired = 0;
	return drvc_oauth_classify(t->c->host, r, 250, t->assertion, err,
	                           "GCP token request for %.200s at %.200s",
	                           t->c->client_email, t->c->token_uri);
}

int gcp_fetch_token(void *ud, char **token, int64_t *expires_in_s,
                    gb_error *err)
{
	gcp_ctx *c = ud;
	const gb_host *h = c->host;
	drvc_buf form = DRVC_BUF_INIT;
	char *jwt, *body;
	gb_http_resp resp;
	tok_ud t = {c, NULL};
	drvc_call call = drvc_call_make(h, NULL, 0, NULL, NULL, token_classify,
	                                &t);
	int rc;

	*token = NULL;
	if (drvc_creds_ok(c->auth_problem, err) != 0)
		return -1;
	jwt = gcp_jwt(c, h->now_ms(h->ctx) / 1000, GCP_SCOPE);
	if (!jwt) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "JwtSigningFailed",
		         "GCP: signing the JWT with the key of %.200s failed",
		         c->client_email);
		return -1;
	}
	if (h->redact)
		h->redact(h->ctx, jwt);
	drvc_buf_adds(&form, "grant_type=");
	drvc_pct_encode(&form, "urn:ietf:params:oauth:grant-type:jwt-bearer",
	                43, 0);
	drvc_buf_adds(&form, "&assertion=");
	drvc_pct_encode(&form, jwt, strlen(jwt), 0);
	body = drvc_buf_take(&form);
	if (!body)
		abort();

	t.assertion = jwt;
	rc = drvc_call_form(&call, c->token_uri, body, "oauth-token", &resp,
	                    err);
	if (rc == 0)
		rc = gcp_parse_token(resp.body, resp.body_len, token,
		                     expires_in_s, err);
	h->http_free(h->ctx, &resp);
	drvc_scrub(err->message, sizeof(err->message), jwt);
	drvc_free_secret(body);
	drvc_free_secret(jwt);
	return rc;
}
