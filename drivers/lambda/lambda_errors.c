/* lambda_errors.c -- Lambda's error envelope -> classes.  An error answer
 * is {"error": {"code": "...", "message": "...", "suggestion": "..."}}
 * (API.md, "Errors"):
 *
 *   instance-operations/launch/insufficient-capacity  -> CAPACITY
 *   global/quota-exceeded                             -> QUOTA
 *   HTTP 429                                          -> THROTTLED (+Retry-After)
 *   HTTP 5xx, global/unknown                          -> TRANSIENT
 *   global/invalid-api-key, global/account-inactive,
 *   HTTP 401, 403                                     -> AUTH
 *   global/object-does-not-exist, HTTP 404            -> NOT_FOUND
 *   global/invalid-parameters, other 4xx              -> INVALID
 *   ssh-keys/key-in-use, global/duplicate, HTTP 409   -> CONFLICT
 */
#include <stdio.h>
#include <string.h>

#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_util.h"
#include "lambda.h"

gb_err_class lambda_code_class(const char *code, long status)
{
	const char *c = code ? code : "";
	if (status == 429)
		return GB_ERR_THROTTLED;
	if (strstr(c, "insufficient-capacity"))
		return GB_ERR_CAPACITY;
	if (strcmp(c, "global/quota-exceeded") == 0 || strstr(c, "quota"))
		return GB_ERR_QUOTA;
	if (strcmp(c, "global/invalid-api-key") == 0 ||
	    strcmp(c, "global/account-inactive") == 0)
		return GB_ERR_AUTH;
	if (strcmp(c, "global/object-does-not-exist") == 0)
		return GB_ERR_NOT_FOUND;
	if (strcmp(c, "ssh-keys/key-in-use") == 0 ||
	    strcmp(c, "global/duplicate") == 0)
		return GB_ERR_CONFLICT;
	if (strcmp(c, "global/invalid-parameters") == 0 && status < 500)
		return GB_ERR_INVALID;
	if (strcmp(c, "global/unknown") == 0)
		return GB_ERR_TRANSIENT;
	return drvc_status_class(status);
}

gb_err_class lambda_classify(void *ud, const gb_http_resp *r, gb_error *err)
{
	lambda_what *w = ud;
	char code[96] = "", msg[600] = "";
	json_t *root;
	gb_err_class cls;

	if (r->status >= 200 && r->status < 300)
		return GB_ERR_NONE;
	root = drvc_json_error_body(r, LAMBDA_MAX_SMALL);
	if (root) {
		const json_t *e = json_object_get(root, "error");
		const char *c = drvc_jstr(e, "code");
		const char *m = drvc_jstr(e, "message");
		const char *s = drvc_jstr(e, "suggestion");
		char full[600];
		drvc_clean_text(code, sizeof(code), c ? c : "", sizeof(code) - 1);
		snprintf(full, sizeof(full), "%s%s%s", m ? m : "",
		         s && *s ? " (" : "", s && *s ? s : "");
		if (s && *s && strlen(full) + 1 < sizeof(full))
			strcat(full, ")");
		drvc_clean_text(msg, sizeof(msg), full, sizeof(msg) - 1);
	}
	json_decref(root);
	cls = lambda_code_class(code, r->status);
	drvc_http_fail(err, w->c->host, r, cls, code, code, msg, "Lambda %s",
	               w->what);
	drvc_scrub(err->message, sizeof(err->message), w->c->key);
	return cls;
}
