/* gcp_errors.c -- Google API answers and operation errors -> classes.
 *
 *   ZONE_RESOURCE_POOL_EXHAUSTED[_WITH_DETAILS]      -> CAPACITY
 *   QUOTA_EXCEEDED, quotaExceeded                    -> QUOTA
 *   403/429 rateLimitExceeded, userRateLimitExceeded,
 *   RATE_LIMIT_EXCEEDED, HTTP 429                    -> THROTTLED (+Retry-After)
 *   HTTP 5xx                                         -> TRANSIENT
 *   401                                              -> refresh once, then AUTH
 *   403 otherwise                                    -> AUTH
 *   404                                              -> NOT_FOUND
 *   409 (alreadyExists)                              -> CONFLICT
 *   other 4xx                                        -> INVALID
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_util.h"
#include "gcp.h"

static int is_capacity(const char *code)
{
	/* insufficientCapacity: a bulkInsert refused up front (503) */
	return code && (strncasecmp(code, "ZONE_RESOURCE_POOL_EXHAUSTED", 28) == 0 ||
	                strcasecmp(code, "resourcePoolExhausted") == 0 ||
	                strcasecmp(code, "insufficientCapacity") == 0);
}

static int is_quota(const char *code)
{
	return code && (strcasecmp(code, "QUOTA_EXCEEDED") == 0 ||
	                strcasecmp(code, "quotaExceeded") == 0);
}

static int is_rate(const char *code)
{
	return code && (strcasecmp(code, "rateLimitExceeded") == 0 ||
	                strcasecmp(code, "userRateLimitExceeded") == 0 ||
	                strcasecmp(code, "RATE_LIMIT_EXCEEDED") == 0);
}

gb_err_class gcp_code_class(const char *code, long status)
{
	if (is_rate(code) || status == 429)
		return GB_ERR_THROTTLED;
	if (is_capacity(code))
		return GB_ERR_CAPACITY;
	if (is_quota(code))
		return GB_ERR_QUOTA;
	return drvc_status_class(status);
}

void gcp_error_fields(const json_t *root, char *code, size_t codecap,
                      char *msg, size_t msgcap)
{
	const json_t *e = json_object_get(root, "error");
	const json_t *errs = json_object_get(e, "errors");
	const char *c = NULL, *m = drvc_jstr(e, "message");
	json_t *v;
	size_t i;
	/* errors[].reason is the telling code; prefer a capacity/quota/rate
	 * one when there are several. */
	if (json_is_array(errs)) {
		json_array_foreach(errs, i, v) {
			const char *r = drvc_jstr(v, "reason");
			if (i >= 32)
				break;
			if (!r)
				continue;
			if (!c || is_capacity(r) || is_quota(r) || is_rate(r)) {
				c = r;
				if (drvc_jstr(v, "message"))
					m = drvc_jstr(v, "message");
			}
			if (is_capacity(r) || is_quota(r) || is_rate(r))
				break;
		}
	}
	if (!c)
		c = drvc_jstr(e, "status");
	if (!c && json_is_string(e))
		c = json_string_value(e);  /* OAuth style {"error": "..."} */
	/* A capacity code can hide in the message of a generic reason. */
	if (m && strstr(m, "ZONE_RESOURCE_POOL_EXHAUSTED") && !is_capacity(c))
		c = "ZONE_RESOURCE_POOL_EXHAUSTED";
	drvc_clean_text(code, codecap, c ? c : "", codecap - 1);
	drvc_clean_text(msg, msgcap, m ? m : "", msgcap - 1);
}

gb_err_class gcp_classify(void *ud, const gb_http_resp *r, gb_error *err,
                          int *auth_expired)
{
	gcp_what *w = ud;
	char code[96] = "", msg[512] = "";
	json_t *root;
	gb_err_class cls;

	*auth_expired = 0;
	if (r->status >= 200 && r->status < 300)
		return GB_ERR_NONE;
	root = drvc_json_error_body(r, GCP_MAX_SMALL);
	if (root)
		gcp_error_fields(root, code, sizeof(code), msg, sizeof(msg));
	json_decref(root);
	cls = gcp_code_class(code, r->status);
	if (r->status == 401)
		*auth_expired = 1;
	drvc_http_fail(err, w->c->host, r, cls, code, code, msg, "GCP %s",
	               w->what);
	return cls;
}
