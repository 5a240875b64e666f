/*
 * gcp_oauth.c -- Google's OAuth 2.0 token endpoint for service accounts
 * (POST /token, grant_type urn:ietf:params:oauth:grant-type:jwt-bearer).
 * Verifies the RS256 assertion against the public half of the key
 * cloudsim holds: iss = the service account's client_email, aud = this
 * token URL, a scope, iat/exp with exp <= iat + 3600 and not expired, and
 * the PKCS#1 v1.5 SHA-256 signature.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "gce.h"

#define JWT_BEARER "urn:ietf:params:oauth:grant-type:jwt-bearer"

static void oauth_error(gce_ctx *c, int status, const char *err,
                        const char *desc)
{
	sim_resp_json(c->resp, status,
	              json_pack("{s:s,s:s}", "error", err, "error_description",
	                        desc));
	sim_count_fault(SIM_GCP, SIM_F_AUTH);
}

static json_t *decode_part(const char *s, size_t n)
{
	size_t len = 0;
	unsigned char *raw = sim_b64url_decode(s, n, &len);
	json_t *o;
	if (!raw)
		return NULL;
	o = json_loadb((const char *)raw, len, 0, NULL);
	free(raw);
	if (o && !json_is_object(o)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int verify_sig(const char *signed_part, size_t n, const char *sig64,
                      size_t slen)
{
	size_t len = 0;
	unsigned char *sig = sim_b64url_decode(sig64, slen, &len);
	EVP_MD_CTX *md;
	int ok = 0;
	if (!sig || !sim_g.gcp_pub)
		goto out;
	md = EVP_MD_CTX_new();
	if (md &&
	    EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, sim_g.gcp_pub) ==
	            1 &&
	    EVP_DigestVerify(md, sig, len, (const unsigned char *)signed_part,
	                     n) == 1)
		ok = 1;
	EVP_MD_CTX_free(md);
out:
	free(sig);
	return ok;
}

static int int_claim(const json_t *o, const char *k, int64_t *out)
{
	const json_t *v = json_object_get(o, k);
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_real(v)) {
		*out = (int64_t)json_real_value(v);
		return 0;
	}
	return -1;
}

void gcp_token(gce_ctx *c)
{
	gb_kvs form = {NULL, NULL, 0};
	const char *gt, *as, *d1, *d2;
	json_t *hdr = NULL, *cl = NULL;
	const char *alg, *kid, *iss, *aud, *scope;
	int64_t iat, exp, now_s = c->now / 1000;
	char tok[128];
	if (sim_parse_form(c->req->body, c->req->body_len, 1, &form) != 0) {
		oauth_error(c, 400, "invalid_request",
		            "Malformed form body.");
		goto out;
	}
	gt = gb_kvs_get(&form, "grant_type");
	as = gb_kvs_get(&form, "assertion");
	if (!gt) {
		oauth_error(c, 400, "invalid_request",
		            "Missing required parameter: grant_type");
		goto out;
	}
	if (strcmp(gt, JWT_BEARER) != 0) {
		char *d = gb_xasprintf("Invalid grant_type: %s", gt);
		oauth_error(c, 400, "unsupported_grant_type", d);
		free(d);
		goto out;
	}
	if (!as || !*as) {
		oauth_error(c, 400, "invalid_request",
		            "Missing required parameter: assertion");
		goto out;
	}
	d1 = strchr(as, '.');
	d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	if (!d1 || !d2 || strchr(d2 + 1, '.')) {
		oauth_error(c, 400, "invalid_grant",
		            "Invalid JWT: not three base64url parts.");
		goto out;
	}
	hdr = decode_part(as, (size_t)(d1 - as));
	cl = decode_part(d1 + 1, (size_t)(d2 - d1 - 1));
	if (!hdr || !cl) {
		oauth_error(c, 400, "invalid_grant",
		            "Invalid JWT: header or claims are not base64url "
		            "JSON objects.");
		goto out;
	}
	alg = json_string_value(json_object_get(hdr, "alg"));
	if (!alg || strcmp(alg, "RS256") != 0) {
		oauth_error(c, 400, "invalid_grant",
		            "Invalid JWT: the algorithm must be RS256.");
		goto out;
	}
	iss = json_string_value(json_object_get(cl, "iss"));
	if (!iss || strcmp(iss, sim_g.sc.gcp_email) != 0) {
		oauth_error(c, 400, "invalid_grant",
		            "Invalid grant: account not found");
		goto out;
	}
	kid = json_string_value(json_object_get(hdr, "kid"));
	if ((kid && strcmp(kid, sim_g.gcp_key_id) != 0) ||
	    !verify_sig(as, (size_t)(d2 - as), d2 + 1, strlen(d2 + 1))) {
		oauth_error(c, 400, "invalid_grant", "Invalid JWT Signature.");
		goto out;
	}
	aud = json_string_value(json_object_get(cl, "aud"));
	if (!aud || strcmp(aud, sim_g.url[4]) != 0) {
		char *d = gb_xasprintf("Invalid JWT: Failed audience check. The "
		                       "right audience is %s", sim_g.url[4]);
		oauth_error(c, 400, "invalid_grant", d);
		free(d);
		goto out;
	}
	if (int_claim(cl, "iat", &iat) != 0 || int_claim(cl, "exp", &exp) != 0 ||
	    exp <= iat || exp - iat > 3600 || exp <= now_s ||
	    iat > now_s + 300) {
		oauth_error(c, 400, "invalid_grant",
		            "Invalid JWT: Token must be a short-lived token (60 "
		            "minutes) and in a reasonable timeframe. Check your "
		            "iat and exp values in the JWT claim.");
		goto out;
	}
	scope = json_string_value(json_object_get(cl, "scope"));
	if (!scope || !*scope) {
		oauth_error(c, 400, "invalid_scope",
		            "Empty or missing scope not allowed.");
		goto out;
	}
	sim_token_issue(SIM_GCP, sim_g.sc.gcp_token_life_s, tok, sizeof(tok));
	sim_resp_json(c->resp, 200,
	              json_pack("{s:s,s:I,s:s}", "access_token", tok,
	                        "expires_in",
	                        (json_int_t)sim_g.sc.gcp_token_life_s,
	                        "token_type", "Bearer"));
	sim_resp_header(c->resp, "Cache-Control", "no-cache, no-store");
out:
	json_decref(hdr);
	json_decref(cl);
	gb_kvs_free(&form);
}
