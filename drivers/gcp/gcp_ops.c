/* gcp_ops.c -- zonal Operations: GET zones/{z}/operations/{name} until
 * status DONE, then look at operation.error (DONE can still carry an
 * error: ZONE_RESOURCE_POOL_EXHAUSTED, QUOTA_EXCEEDED, ...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_util.h"
#include "gcp.h"

gb_err_class gcp_op_class(const char *code, long http_status)
{
	if (!code || !*code)
		return http_status >= 500 ? GB_ERR_TRANSIENT : GB_ERR_CAPACITY;
	if (strncasecmp(code, "ZONE_RESOURCE_POOL_EXHAUSTED", 28) == 0)
		return GB_ERR_CAPACITY;
	if (strcasecmp(code, "QUOTA_EXCEEDED") == 0)
		return GB_ERR_QUOTA;
	if (strcasecmp(code, "RATE_LIMIT_EXCEEDED") == 0)
		return GB_ERR_THROTTLED;
	if (strcasecmp(code, "RESOURCE_ALREADY_EXISTS") == 0 ||
	    strcasecmp(code, "alreadyExists") == 0)
		return GB_ERR_CONFLICT;
	if (http_status >= 500)
		return GB_ERR_TRANSIENT;
	if (http_status == 403 || http_status == 401)
		return GB_ERR_AUTH;
	return GB_ERR_INVALID;
}

int gcp_parse_op(const char *body, size_t len, char *name, size_t namecap,
                 char *status, size_t stcap, char *code, size_t codecap,
                 char *msg, size_t msgcap, long *http_status)
{
	gb_error e;
	json_t *root = drvc_json_buf(body, len, GCP_MAX_SMALL, "GCE operation",
	                             &e);
	const json_t *errs, *v;
	const char *c = NULL, *m = NULL;
	int64_t hs = 0;
	size_t i;

	name[0] = status[0] = code[0] = msg[0] = '\0';
	*http_status = 0;
	if (!root)
		return -1;
	if (!drvc_jstr(root, "name") || !drvc_jstr(root, "status")) {
		json_decref(root);
		return -1;
	}
	drvc_clean_text(name, namecap, drvc_jstr(root, "name"), namecap - 1);
	drvc_clean_text(status, stcap, drvc_jstr(root, "status"), stcap - 1);
	errs = drvc_jpath(root, "error.errors");
	if (json_is_array(errs)) {
		json_array_foreach(errs, i, v) {
			const char *ec = drvc_jstr(v, "code");
			if (i >= 32)
				break;
			if (!ec)
				continue;
			if (!c || gcp_op_class(ec, 0) == GB_ERR_CAPACITY ||
			    gcp_op_class(ec, 0) == GB_ERR_QUOTA) {
				c = ec;
				m = drvc_jstr(v, "message");
			}
		}
		if (!c)
			c = "OperationFailed";
	}
	if (drvc_jint(json_object_get(root, "httpErrorStatusCode"), &hs) == 0)
		*http_status = (long)hs;
	if (c)
		drvc_clean_text(code, codecap, c, codecap - 1);
	if (m)
		drvc_clean_text(msg, msgcap, m, msgcap - 1);
	else if (drvc_jstr(root, "httpErrorMessage"))
		drvc_clean_text(msg, msgcap, drvc_jstr(root, "httpErrorMessage"),
		                msgcap - 1);
	json_decref(root);
	return 0;
}

static int op_name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return 0;
	return 1;
}

int gcp_op_answer(const gb_http_resp *resp, const char *what, gcp_op *op,
                  gb_error *err)
{
	char name[128], st[32], code[96], msg[512];
	long hs;
	if (drvc_json_ctype_ok(resp, what, err) != 0)
		return -1;
	if (gcp_parse_op(resp->body, resp->body_len, name, sizeof(name), st,
	                 sizeof(st), code, sizeof(code), msg, sizeof(msg),
	                 &hs) != 0 ||
	    !op_name_ok(name)) {
		drvc_err(err, GB_ERR_TRANSIENT, (int)resp->status,
		         "MalformedOperation",
		         "GCP %s: the answer is not an Operation", what);
		return -1;
	}
	if (!op->name)
		op->name = drvc_xstrdup(name);
	if (strcmp(st, "DONE") == 0) {
		op->done = 1;
		if (code[0]) {
			op->failed = 1;
			drvc_err(&op->err, gcp_op_class(code, hs), (int)hs, code,
			         "GCE %s in %s: %s%s%s", op->target, op->zone,
			         code, msg[0] ? ": " : "", msg);
		}
	}
	return 0;
}

/* One poll; 0 (op updated) or -1 with err. */
static int poll_once(gcp_ctx *c, gcp_op *op, int64_t *delay, gb_error *err)
{
	const gb_host *h = c->host;
	gb_http_resp resp;
	char what[200], *rest, *url;
	int rc;

	rest = drvc_xasprintf("operations/%s", op->name);
	url = gcp_zone_url(c, op->zone, rest);
	free(rest);
	snprintf(what, sizeof(what), "operation %.60s (%.100s)", op->name,
	         op->target);
	rc = gcp_api(c, "GET", url, NULL, "gce-ops", what, &resp, err);
	free(url);
	*delay = drvc_retry_after_ms(&resp, h->now_ms(h->ctx));
	if (rc == 0)
		rc = gcp_op_answer(&resp, what, op, err);
	h->http_free(h->ctx, &resp);
	return rc;
}

/* The first look at a fresh operation: most end within a few hundred
 * ms (a zone without room refuses at once), so they are looked at
 * soon, then every 2x as long, up to poll_interval_ms. */
#define GCP_OPS_FIRST_MS 100

int gcp_ops_wait(gcp_ctx *c, gcp_op *ops, size_t n, int64_t deadline,
                 gb_error *err)
{
	const gb_host *h = c->host;
	int64_t backoff = GCP_OPS_FIRST_MS < c->poll_interval_ms
	                          ? GCP_OPS_FIRST_MS
	                          : c->poll_interval_ms;
	for (;;) {
		int64_t wait = 0;
		size_t pending = 0;
		for (size_t i = 0; i < n; i++) {
			int64_t d = 0;
			if (ops[i].done)
				continue;
			if (!ops[i].name) {
				ops[i].done = 1;
				continue;
			}
			if (poll_once(c, &ops[i], &d, err) != 0)
				return -1;
			if (!ops[i].done) {
				pending++;
				if (d > wait)
					wait = d;
			}
		}
		if (!pending)
			return 0;
		if (wait <= 0) {
			wait = backoff;
			backoff = backoff * 2 < c->poll_interval_ms
			                  ? backoff * 2
			                  : c->poll_interval_ms;
		}
		if (h->mono_ms(h->ctx) + wait > deadline) {
			drvc_err(err, GB_ERR_TRANSIENT, 0, "OperationTimeout",
			         "GCP: %zu operation(s) not DONE after the "
			         "create timeout (option create_timeout_s)", pending);
			return -1;
		}
		h->sleep_ms(h->ctx, wait);
	}
}
