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
	gcp_what w = {c, what};
	drvc_call call = drvc_call_make(c->host, &c->tok, 60, gcp_fetch_token, c,
	                                gcp_classify, &w);
	return drvc_call_json(&call, method, url, body, NULL, rate_class,
	                      resp, err);
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
