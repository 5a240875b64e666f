/* azure_lro.c -- ARM long-running operations: poll Azure-AsyncOperation
 * (status InProgress|Succeeded|Failed|Canceled), or Location (202 while
 * running, 200/204 when done) when ARM gave no Azure-AsyncOperation,
 * each at the time its Retry-After names, until a deadline. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"
#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_util.h"

char *azure_op_url(azure_ctx *c, const gb_http_resp *r, int *location)
{
	char buf[16384];
	*location = 0;
	if (drvc_header(r, "Azure-AsyncOperation", buf, sizeof(buf)) <= 0) {
		if (drvc_header(r, "Location", buf, sizeof(buf)) <= 0)
			return NULL;
		*location = 1;
	}
	/* Our bearer token goes with every poll: only to ARM itself. */
	if (!drvc_same_origin(buf, c->arm)) {
		if (c->host->log)
			c->host->log(c->host->ctx, GB_LOG_WARN,
			             "azure: ignoring an operation URL off the ARM "
			             "endpoint's origin (%.120s)", buf);
		return NULL;
	}
	return drvc_xstrdup(buf);
}

int azure_parse_op(const char *body, size_t len, char *st, size_t stcap,
                   char *code, size_t codecap, char *msg, size_t msgcap)
{
	gb_error e;
	json_t *root = drvc_json_buf(body, len, AZURE_MAX_SMALL,
	                             "Azure operation status", &e);
	const char *s;
	st[0] = code[0] = msg[0] = '\0';
	if (!root)
		return -1;
	s = drvc_jstr(root, "status");
	if (!s) {
		json_decref(root);
		return -1;
	}
	drvc_clean_text(st, stcap, s, stcap - 1);
	if (json_is_object(json_object_get(root, "error")))
		azure_error_fields(root, code, codecap, msg, msgcap);
	json_decref(root);
	return 0;
}

static void op_failed(azure_op *op, const char *code, const char *msg,
                      const char *status)
{
	op->done = op->failed = 1;
	drvc_err(&op->err, azure_code_class(code, msg, 0), 0,
	         code && *code ? code : "OperationFailed",
	         "Azure VM %s: operation %s%s%s%s%s", op->name, status,
	         code && *code ? ": " : "", code ? code : "",
	         msg && *msg ? ": " : "", msg ? msg : "");
}

/* One poll.  Returns 0 (op updated, *delay = suggested ms or 0) or -1
 * with err when the poll request itself failed. */
static int poll_once(azure_ctx *c, azure_op *op, int64_t *delay,
                     gb_error *err)
{
	const gb_host *h = c->host;
	gb_http_resp resp;
	char what[160], st[32], code[96], msg[512];
	int rc;

	snprintf(what, sizeof(what), "operation status of VM %s", op->name);
	rc = azure_arm(c, "GET", op->url, NULL, "arm-read", what, &resp, err);
	*delay = drvc_retry_after_ms(&resp, h->now_ms(h->ctx));
	if (rc != 0) {
		h->http_free(h->ctx, &resp);
		return -1;
	}
	if (op->location) {
		/* 202: still running; 200/204: done (errors came as 4xx/5xx). */
		if (resp.status != 202)
			op->done = 1;
	} else if (azure_parse_op(resp.body, resp.body_len, st, sizeof(st),
	                          code, sizeof(code), msg, sizeof(msg)) != 0) {
		h->http_free(h->ctx, &resp);
		drvc_err(err, GB_ERR_TRANSIENT, (int)resp.status,
		         "MalformedOperationStatus",
		         "Azure VM %s: the operation status answer is not "
		         "{\"status\": ...} JSON", op->name);
		return -1;
	} else if (strcasecmp(st, "Succeeded") == 0) {
		op->done = 1;
	} else if (strcasecmp(st, "Failed") == 0 ||
	           strcasecmp(st, "Canceled") == 0) {
		op_failed(op, code, msg, st);
	}
	h->http_free(h->ctx, &resp);
	return 0;
}

int azure_lro_wait(azure_ctx *c, azure_op *ops, size_t n, int64_t deadline,
                   gb_error *err)
{
	const gb_host *h = c->host;
	for (;;) {
		int64_t now = h->mono_ms(h->ctx), next = 0;
		size_t pending = 0;
		for (size_t i = 0; i < n; i++) {
			int64_t d = 0;
			if (ops[i].done)
				continue;
			if (!ops[i].url) {
				ops[i].done = 1;
				continue;
			}
			/* each operation is polled when its last answer (or the
			 * PUT's Retry-After) said to, not before: ARM's read
			 * bucket is the subscription's, shared with everyone */
			if (ops[i].next_ms <= now) {
				if (poll_once(c, &ops[i], &d, err) != 0)
					return -1;
				if (ops[i].done)
					continue;
				ops[i].next_ms = h->mono_ms(h->ctx) +
				                 (d > 0 ? d : c->poll_interval_ms);
			}
			pending++;
			if (!next || ops[i].next_ms < next)
				next = ops[i].next_ms;
		}
		if (!pending)
			return 0;
		now = h->mono_ms(h->ctx);
		if (next > deadline) {
			drvc_err(err, GB_ERR_TRANSIENT, 0, "OperationTimeout",
			         "Azure: %zu VM operation(s) still running after the "
			         "create timeout (option create_timeout_s)", pending);
			return -1;
		}
		if (next > now)
			h->sleep_ms(h->ctx, next - now);
	}
}
