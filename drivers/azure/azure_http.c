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
	azure_what w = {c, what};
	drvc_call call = drvc_call_make(c->host, &c->tok, 300, azure_fetch_token,
	                                c, azure_classify, &w);
	return drvc_call_json(&call, method, url, body, extra, rate_class,
	                      resp, err);
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
