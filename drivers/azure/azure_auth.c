/* azure_auth.c -- Microsoft identity platform client-credentials flow:
 * POST {authority}/{tenant}/oauth2/v2.0/token with client_id,
 * client_secret, scope=https://management.azure.com/.default and
 * grant_type=client_credentials; the answer carries access_token and
 * expires_in.  The secret is read from its source for each request and
 * wiped afterwards; it never appears in a log line or an error. */
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"
#include "drvc_bearer.h"
#include "drvc_enc.h"
#include "drvc_http.h"
#include "drvc_mem.h"
#include "drvc_token.h"
#include "drvc_util.h"

typedef struct tok_ud {
	azure_ctx *c;
	const char *secret;
} tok_ud;

int azure_parse_token(const char *body, size_t len, char **token,
                      int64_t *expires_in_s, gb_error *err)
{
	return drvc_parse_token_response(body, len, AZURE_MAX_SMALL,
	                                 "Azure token response", token, expires_in_s,
	                                 err);
}

static gb_err_class token_classify(void *ud, const gb_http_resp *r,
                                   gb_error *err, int *auth_expired)
{
	tok_ud *t = ud;
	*auth_expired = 0;
	return drvc_oauth_classify(t->c->host, r, 300, t->secret, err,
	                           "Azure token request (tenant %s, client %s) "
	                           "at %s", t->c->tenant, t->c->client_id,
	                           t->c->authority);
}

int azure_fetch_token(void *ud, char **token, int64_t *expires_in_s,
                      gb_error *err)
{
	azure_ctx *c = ud;
	const gb_host *h = c->host;
	char secret[4096];
	drvc_buf form = DRVC_BUF_INIT;
	char *url, *tenant_enc, *body;
	gb_http_resp resp;
	tok_ud t = {c, secret};
	drvc_call call = drvc_call_make(h, NULL, 0, NULL, NULL, token_classify,
	                                &t);
	int rc;

	*token = NULL;
	if (drvc_creds_ok(c->auth_problem, err) != 0)
		return -1;
	if (h->secret(h->ctx, c->secret_source, secret, sizeof(secret)) <= 0) {
		drvc_err(err, GB_ERR_AUTH, 0, "CredentialsMissing",
		         "Azure client secret not found at source %.200s "
		         "(option credentials.client_secret)", c->secret_source);
		return -1;
	}
	drvc_buf_adds(&form, "grant_type=client_credentials&client_id=");
	drvc_pct_encode(&form, c->client_id, strlen(c->client_id), 0);
	drvc_buf_adds(&form, "&client_secret=");
	drvc_pct_encode(&form, secret, strlen(secret), 0);
	drvc_buf_adds(&form, "&scope=");
	drvc_pct_encode(&form, AZURE_SCOPE, strlen(AZURE_SCOPE), 0);
	body = drvc_buf_take(&form);
	if (!body)
		abort();
	tenant_enc = drvc_pct_encode_str(c->tenant);
	url = drvc_xasprintf("%s/%s/oauth2/v2.0/token", c->authority,
	                     tenant_enc);
	free(tenant_enc);

	rc = drvc_call_form(&call, url, body, "aad-token", &resp, err);
	if (rc == 0)
		rc = azure_parse_token(resp.body, resp.body_len, token,
		                       expires_in_s, err);
	h->http_free(h->ctx, &resp);
	drvc_scrub(err->message, sizeof(err->message), secret);
	OPENSSL_cleanse(body, strlen(body));
	free(body);
	OPENSSL_cleanse(secret, sizeof(secret));
	free(url);
	return rc;
}
