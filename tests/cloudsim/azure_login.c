/*
 * azure_login.c -- the Microsoft identity platform token endpoint,
 * POST /{tenant}/oauth2/v2.0/token with a client_credentials form body.
 * Issues opaque bearer tokens that expire after
 * credentials.azure.token_lifetime_s; errors use AAD's OAuth JSON shape.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"

static void oauth_error(az_ctx *c, int status, const char *err,
                        const char *desc)
{
	char t[40];
	char *d = gb_xasprintf("%s Trace ID: %s Correlation ID: %s Timestamp: "
	                       "%s", desc, c->req->request_id,
	                       c->req->request_id,
	                       sim_time_s(c->now, t, sizeof(t)));
	json_t *o = json_pack("{s:s,s:s,s:[i],s:s,s:s,s:s}", "error", err,
	                      "error_description", d, "error_codes", 0,
	                      "timestamp", t, "trace_id", c->req->request_id,
	                      "correlation_id", c->req->request_id);
	sim_resp_json(c->resp, status, o);
	free(d);
	sim_count_fault(SIM_AZURE, SIM_F_AUTH);
}

void az_login(az_ctx *c)
{
	gb_kvs form = {NULL, NULL, 0};
	const char *tenant = c->segs[0];
	const char *gt, *cid, *sec, *scope;
	char tok[128];
	int64_t life = sim_g.sc.az_token_life_s;
	if (sim_parse_form(c->req->body, c->req->body_len, 1, &form) != 0) {
		oauth_error(c, 400, "invalid_request",
		            "AADSTS900144: The request body must contain the "
		            "following parameter: 'grant_type'.");
		goto out;
	}
	if (strcasecmp(tenant, sim_g.sc.az_tenant) != 0) {
		char *d = gb_xasprintf(
			"AADSTS90002: Tenant '%s' not found. Check to make sure "
			"you have the correct tenant ID and are signing into "
			"the correct cloud.", tenant);
		oauth_error(c, 400, "invalid_request", d);
		free(d);
		goto out;
	}
	gt = gb_kvs_get(&form, "grant_type");
	cid = gb_kvs_get(&form, "client_id");
	sec = gb_kvs_get(&form, "client_secret");
	scope = gb_kvs_get(&form, "scope");
	if (!gt) {
		oauth_error(c, 400, "invalid_request",
		            "AADSTS900144: The request body must contain the "
		            "following parameter: 'grant_type'.");
		goto out;
	}
	if (strcmp(gt, "client_credentials") != 0) {
		char *d = gb_xasprintf("AADSTS70003: The app requested an "
		                       "unsupported grant type '%s'.", gt);
		oauth_error(c, 400, "unsupported_grant_type", d);
		free(d);
		goto out;
	}
	if (!cid) {
		oauth_error(c, 400, "invalid_request",
		            "AADSTS900144: The request body must contain the "
		            "following parameter: 'client_id'.");
		goto out;
	}
	if (!scope) {
		oauth_error(c, 400, "invalid_request",
		            "AADSTS900144: The request body must contain the "
		            "following parameter: 'scope'.");
		goto out;
	}
	if (strlen(scope) < 9 ||
	    strcmp(scope + strlen(scope) - 9, "/.default") != 0) {
		char *d = gb_xasprintf(
			"AADSTS1002012: The provided value for scope %s is not "
			"valid. Client credential flows must have a scope value "
			"with /.default suffixed to the resource identifier "
			"(application ID URI).", scope);
		oauth_error(c, 400, "invalid_scope", d);
		free(d);
		goto out;
	}
	if (strcasecmp(cid, sim_g.sc.az_client) != 0) {
		char *d = gb_xasprintf(
			"AADSTS700016: Application with identifier '%s' was not "
			"found in the directory '%s'.", cid, tenant);
		oauth_error(c, 400, "unauthorized_client", d);
		free(d);
		goto out;
	}
	if (!sec) {
		oauth_error(c, 401, "invalid_client",
		            "AADSTS7000218: The request body must contain the "
		            "following parameter: 'client_assertion' or "
		            "'client_secret'.");
		goto out;
	}
	if (!gb_ct_streq(sec, sim_g.sc.az_secret)) {
		char *d = gb_xasprintf(
			"AADSTS7000215: Invalid client secret provided. Ensure "
			"the secret being sent in the request is the client "
			"secret value, not the client secret ID, for a secret "
			"added to app '%s'.", cid);
		oauth_error(c, 401, "invalid_client", d);
		free(d);
		goto out;
	}
	sim_token_issue(SIM_AZURE, life, tok, sizeof(tok));
	sim_resp_json(c->resp, 200,
	              json_pack("{s:s,s:I,s:I,s:s}", "token_type", "Bearer",
	                        "expires_in", (json_int_t)life,
	                        "ext_expires_in", (json_int_t)life,
	                        "access_token", tok));
	sim_resp_header(c->resp, "Cache-Control", "no-store, no-cache");
out:
	gb_kvs_free(&form);
}
