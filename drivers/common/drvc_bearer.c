/* drvc_bearer.c -- see drvc_bearer.h. */
#include "drvc_bearer.h"

#include <string.h>

#include "drvc_http.h"
#include "drvc_mem.h"
#include "drvc_util.h"

static void drop_token(drvc_call *c)
{
	drvc_free_secret(c->token);
	drvc_free_secret(c->auth_line);
	c->token = NULL;
	c->auth_line = NULL;
}

static int sign_cb(void *ud, const gb_http_req *req, const char **out,
                   size_t cap, gb_error *err)
{
	drvc_call *c = ud;
	(void)req;
	if (cap < 1 || !c->auth_line) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "SignFailed",
		         "bearer: no token to sign with");
		return -1;
	}
	out[0] = c->auth_line;
	return 1;
}

static gb_err_class classify_cb(void *ud, const gb_http_resp *r,
                                gb_error *err)
{
	drvc_call *c = ud;
	int expired = 0;
	gb_err_class cls = c->classify(c->classify_ud, r, err, &expired);
	if (cls != GB_ERR_NONE && expired) {
		c->expired_seen = 1;
		/* Not retried by the host: drvc_call_http refreshes and repeats. */
		cls = err->cls = GB_ERR_AUTH;
	}
	return cls;
}

drvc_call drvc_call_make(const gb_host *host, drvc_token *tok,
                         int64_t margin_s, drvc_token_fetch_fn fetch,
                         void *fetch_ud, drvc_classify_fn classify,
                         void *classify_ud)
{
	drvc_call c;
	memset(&c, 0, sizeof(c));
	c.host = host;
	c.tok = tok;
	c.margin_s = margin_s;
	c.fetch = fetch;
	c.fetch_ud = fetch_ud;
	c.classify = classify;
	c.classify_ud = classify_ud;
	return c;
}

int drvc_call_http(drvc_call *c, gb_http_req *req, gb_http_resp *resp,
                   gb_error *err)
{
	int rc = -1;
	c->token = NULL;
	c->auth_line = NULL;
	req->classify = classify_cb;
	req->classify_ud = c;
	req->sign = c->tok ? sign_cb : NULL;
	req->sign_ud = c;
	memset(resp, 0, sizeof(*resp));
	for (int round = 0; round < 2; round++) {
		memset(err, 0, sizeof(*err));
		c->expired_seen = 0;
		if (c->tok) {
			if (drvc_token_get(c->tok, c->host, c->margin_s, c->fetch,
			                   c->fetch_ud, &c->token, err) != 0) {
				rc = -1;
				break;
			}
			c->auth_line =
				drvc_xasprintf("Authorization: Bearer %s", c->token);
		}
		rc = c->host->http(c->host->ctx, req, resp, err);
		if (rc == 0 || !c->expired_seen || !c->tok || round == 1)
			break;
		/* The server refused the token as expired/invalid: forget it
		 * and try once more with a fresh one. */
		if (c->host->log)
			c->host->log(c->host->ctx, GB_LOG_INFO,
			             "bearer token refused (HTTP %ld %s); fetching a "
			             "new one", resp->status, err->code);
		drvc_token_invalidate(c->tok, c->token);
		drop_token(c);
		c->host->http_free(c->host->ctx, resp);
	}
	if (rc != 0) {
		if (err->cls == GB_ERR_NONE)
			err->cls = GB_ERR_INTERNAL;
		drvc_scrub(err->message, sizeof(err->message), c->token);
	}
	drop_token(c);
	return rc;
}

int drvc_call_json(drvc_call *c, const char *method, const char *url,
                   const char *body, const char *extra,
                   const char *rate_class, gb_http_resp *resp,
                   gb_error *err)
{
	const char *hdrs[3] = {
		"Accept: application/json",
		"Content-Type: application/json",
	};
	gb_http_req req;

	memset(&req, 0, sizeof(req));
	req.method = method;
	req.url = url;
	req.headers = hdrs;
	req.nheaders = body ? 2 : 1;
	if (extra)
		hdrs[req.nheaders++] = extra;
	req.body = body;
	req.body_len = body ? strlen(body) : 0;
	req.rate_class = rate_class;
	return drvc_call_http(c, &req, resp, err);
}

int drvc_call_form(drvc_call *c, const char *url, const char *body,
                   const char *rate_class, gb_http_resp *resp,
                   gb_error *err)
{
	const char *hdrs[] = {
		"Content-Type: application/x-www-form-urlencoded",
		"Accept: application/json",
	};
	gb_http_req req;

	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = url;
	req.headers = hdrs;
	req.nheaders = 2;
	req.body = body;
	req.body_len = strlen(body);
	req.rate_class = rate_class;
	return drvc_call_http(c, &req, resp, err);
}
