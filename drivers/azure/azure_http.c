/* azure_http.c -- one ARM exchange: bearer token from the driver's cache,
 * JSON headers, the ARM classifier. */
#include <stdlib.h>
#include <string.h>

#include "azure.h"
#include "drvc_bearer.h"
#include "drvc_enc.h"
#include "drvc_mem.h"

int azure_arm(azure_ctx *c, const char *method, const char *url,
              const char *body, const char *rate_class, const char *what,
              gb_http_resp *resp, gb_error *err)
{
	return azure_arm_hdr(c, method, url, body, NULL, rate_class, what, resp,
	                     err);
}

int azure_arm_hdr(azure_ctx *c, const char *method, const char *url,
                  const char *body, const char *extra, const char *rate_class,
                  const char *what, gb_http_resp *resp, gb_error *err)
{
	const char *hdrs[3] = {
		"Accept: application/json",
		"Content-Type: application/json",
	};
	azure_what w = {c, what};
	gb_http_req req;
	drvc_call call;

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
	memset(&call, 0, sizeof(call));
	call.host = c->host;
	call.tok = &c->tok;
	call.margin_s = 300;
	call.fetch = azure_fetch_token;
	call.fetch_ud = c;
	call.classify = azure_classify;
	call.classify_ud = &w;
	return drvc_call_http(&call, &req, resp, err);
}

char *azure_vm_url(azure_ctx *c, const char *name, const char *query)
{
	drvc_buf b = DRVC_BUF_INIT;
	char *s;
	drvc_buf_adds(&b, c->arm);
	drvc_buf_adds(&b, "/subscriptions/");
	drvc_pct_encode(&b, c->subscription, strlen(c->subscription), 0);
	drvc_buf_adds(&b, "/resourceGroups/");
	drvc_pct_encode(&b, c->rg, strlen(c->rg), 0);
	drvc_buf_adds(&b, "/providers/Microsoft.Compute/virtualMachines");
	if (name) {
		drvc_buf_adds(&b, "/");
		drvc_pct_encode(&b, name, strlen(name), 0);
	}
	drvc_buf_addf(&b, "?api-version=%s%s%s", AZURE_API_COMPUTE,
	              query && *query ? "&" : "", query ? query : "");
	s = drvc_buf_take(&b);
	if (!s)
		abort();
	return s;
}
