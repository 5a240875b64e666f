/* gcp_http.c -- one Compute Engine / Billing exchange with the bearer
 * token and the Google error classifier. */
#include <stdlib.h>
#include <string.h>

#include "drvc_bearer.h"
#include "drvc_enc.h"
#include "drvc_mem.h"
#include "gcp.h"

int gcp_api(gcp_ctx *c, const char *method, const char *url,
            const char *body, const char *rate_class, const char *what,
            gb_http_resp *resp, gb_error *err)
{
	const char *hdrs[] = {
		"Accept: application/json",
		"Content-Type: application/json",
	};
	gcp_what w = {c, what};
	gb_http_req req;
	drvc_call call;

	memset(&req, 0, sizeof(req));
	req.method = method;
	req.url = url;
	req.headers = hdrs;
	req.nheaders = body ? 2 : 1;
	req.body = body;
	req.body_len = body ? strlen(body) : 0;
	req.rate_class = rate_class;
	memset(&call, 0, sizeof(call));
	call.host = c->host;
	call.tok = &c->tok;
	call.margin_s = 60;
	call.fetch = gcp_fetch_token;
	call.fetch_ud = c;
	call.classify = gcp_classify;
	call.classify_ud = &w;
	return drvc_call_http(&call, &req, resp, err);
}

char *gcp_zone_url(gcp_ctx *c, const char *zone, const char *rest)
{
	drvc_buf b = DRVC_BUF_INIT;
	char *s;
	drvc_buf_adds(&b, c->compute);
	drvc_buf_adds(&b, "projects/");
	drvc_pct_encode(&b, c->project, strlen(c->project), 0);
	drvc_buf_adds(&b, "/zones/");
	drvc_pct_encode(&b, zone, strlen(zone), 0);
	drvc_buf_adds(&b, "/");
	drvc_buf_adds(&b, rest);
	s = drvc_buf_take(&b);
	if (!s)
		abort();
	return s;
}
