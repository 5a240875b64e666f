/* azure_errors.c -- ARM answers -> gb_error classes.
 *
 *   SkuNotAvailable, AllocationFailed, ZonalAllocationFailed,
 *   Overconstrained*AllocationRequest, AzureSpotIsNotSupportedForThisVMSize,
 *   SpotPriceGreaterThanProvidedMaxPrice          -> CAPACITY
 *   QuotaExceeded, OperationNotAllowed about quota -> QUOTA
 *   HTTP 429 (any code)                           -> THROTTLED + Retry-After
 *   HTTP 5xx                                      -> TRANSIENT
 *   401 ExpiredAuthenticationToken / InvalidAuthenticationToken
 *                                                 -> refresh once, then AUTH
 *   401/403 otherwise                             -> AUTH
 *   404                                           -> NOT_FOUND
 *   409 otherwise                                 -> CONFLICT
 *   other 4xx                                     -> INVALID
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "azure.h"
#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_util.h"

static const char *const capacity_codes[] = {
	"SkuNotAvailable",
	"AllocationFailed",
	"ZonalAllocationFailed",
	"OverconstrainedAllocationRequest",
	"OverconstrainedZonalAllocationRequest",
	"AzureSpotIsNotSupportedForThisVMSize",
	"SpotPriceGreaterThanProvidedMaxPrice",
	NULL,
};

static int in_list(const char *code, const char *const *list)
{
	for (size_t i = 0; code && list[i]; i++)
		if (strcasecmp(code, list[i]) == 0)
			return 1;
	return 0;
}

static int is_quota(const char *code, const char *message)
{
	if (!code)
		return 0;
	if (strcasecmp(code, "QuotaExceeded") == 0)
		return 1;
	return strcasecmp(code, "OperationNotAllowed") == 0 && message &&
	       strcasestr(message, "quota") != NULL;
}

gb_err_class azure_code_class(const char *code, const char *message,
                              long status)
{
	if (status == 429)
		return GB_ERR_THROTTLED;
	if (in_list(code, capacity_codes))
		return GB_ERR_CAPACITY;
	if (is_quota(code, message))
		return GB_ERR_QUOTA;
	if (status >= 500 || status == 0)
		return GB_ERR_TRANSIENT;
	if (code && strcasecmp(code, "TooManyRequests") == 0)
		return GB_ERR_THROTTLED;
	if (status == 401 || status == 403)
		return GB_ERR_AUTH;
	if (status == 404) {
		if (code && (strcasecmp(code, "ResourceGroupNotFound") == 0 ||
		             strcasecmp(code, "SubscriptionNotFound") == 0))
			return GB_ERR_INVALID;
		return GB_ERR_NOT_FOUND;
	}
	if (status == 409)
		return GB_ERR_CONFLICT;
	if (status >= 400)
		return GB_ERR_INVALID;
	/* A failed operation (no HTTP status of its own). */
	if (code && (strcasecmp(code, "Conflict") == 0))
		return GB_ERR_CONFLICT;
	return code && *code ? GB_ERR_INVALID : GB_ERR_TRANSIENT;
}

void azure_error_fields(const json_t *root, char *code, size_t codecap,
                        char *msg, size_t msgcap)
{
	const json_t *e = json_object_get(root, "error");
	const json_t *details;
	const char *c, *m;
	size_t i;
	json_t *d;
	if (!json_is_object(e))
		e = root;
	c = drvc_jstr(e, "code");
	m = drvc_jstr(e, "message");
	/* A generic outer code may wrap the telling one in details. */
	details = json_object_get(e, "details");
	if (json_is_array(details) &&
	    !(c && (in_list(c, capacity_codes) || is_quota(c, m)))) {
		json_array_foreach(details, i, d) {
			const char *dc = drvc_jstr(d, "code");
			const char *dm = drvc_jstr(d, "message");
			if (i >= 32)
				break;
			if (dc && (in_list(dc, capacity_codes) ||
			           strcasecmp(dc, "QuotaExceeded") == 0)) {
				c = dc;
				m = dm ? dm : m;
				break;
			}
		}
	}
	drvc_clean_text(code, codecap, c ? c : "", codecap - 1);
	drvc_clean_text(msg, msgcap, m ? m : "", msgcap - 1);
}

gb_err_class azure_classify(void *ud, const gb_http_resp *r, gb_error *err,
                            int *auth_expired)
{
	azure_what *w = ud;
	char code[96] = "", msg[512] = "";
	json_t *root;
	gb_err_class cls;

	*auth_expired = 0;
	if (r->status >= 200 && r->status < 300)
		return GB_ERR_NONE;
	root = drvc_json_error_body(r, AZURE_MAX_SMALL);
	if (root)
		azure_error_fields(root, code, sizeof(code), msg, sizeof(msg));
	json_decref(root);
	cls = azure_code_class(code, msg, r->status);
	if (r->status == 401 &&
	    (strcasecmp(code, "ExpiredAuthenticationToken") == 0 ||
	     strcasecmp(code, "InvalidAuthenticationToken") == 0))
		*auth_expired = 1;
	drvc_http_fail(err, w->c->host, r, cls,
	               code[0] ? code
	                       : (r->status == 429 ? "TooManyRequests" : ""),
	               code, msg, "Azure %s", w->what);
	return cls;
}
