/* azure_lro.c -- waiting for VM creates.  ARM's PUT starts a long-running
 * operation; rather than polling the operation and then reading the VM,
 * the driver reads the VM itself (GET with its instance view) when the
 * PUT's Retry-After says, until provisioningState is terminal: one ARM
 * read per VM instead of two or more, and ARM's read bucket is the
 * subscription's.  The operation (Azure-AsyncOperation, or Location: 202
 * while running, 200/204 when done) is read only when the VM ended
 * Failed, for its error code (AllocationFailed, ...). */
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

/* One read of the operation.  Returns 0 (op updated) or -1
 * with err when the poll request itself failed. */
static int poll_once(azure_ctx *c, azure_op *op, gb_error *err)
{
	const gb_host *h = c->host;
	gb_http_resp resp;
	char what[160], st[32], code[96], msg[512];
	int rc;

	snprintf(what, sizeof(what), "operation status of VM %s", op->name);
	rc = azure_arm(c, "GET", op->url, NULL, "arm-read", what, &resp, err);
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

/* A failed operation with no telling code is an allocation failure. */
static void op_class(gb_error *e)
{
	if (e->cls == GB_ERR_TRANSIENT ||
	    (e->cls == GB_ERR_INVALID && strncasecmp(e->code, "Invalid", 7) &&
	     !strcasestr(e->code, "NotFound")))
		e->cls = GB_ERR_CAPACITY;
}

/* The error of a VM that ended provisioningState Failed: its operation's,
 * when the operation says so (AllocationFailed & co. classify as they
 * should), else VMProvisioningFailed (CAPACITY). */
static void vm_failed(azure_ctx *c, azure_op *op, const char *why)
{
	gb_error e;
	if (op->url && poll_once(c, op, &e) == 0 && op->failed) {
		op_class(&op->err);
		return;
	}
	op->done = op->failed = 1;
	drvc_err(&op->err, GB_ERR_CAPACITY, 0, "VMProvisioningFailed",
	         "Azure VM %s ended provisioningState %s", op->name, why);
}

int azure_vm_wait(azure_ctx *c, azure_op *ops, azure_vm *vms, size_t n,
                  int64_t deadline, gb_error *err)
{
	const gb_host *h = c->host;
	gb_error last; /* the last refused read, for the timeout's message */
	memset(&last, 0, sizeof(last));
	for (;;) {
		int64_t now = h->mono_ms(h->ctx), next = 0;
		size_t pending = 0;
		for (size_t i = 0; i < n; i++) {
			if (ops[i].done)
				continue;
			if (ops[i].next_ms <= now) {
				azure_vm vm;
				gb_error e1;
				int r = azure_get_vm(c, ops[i].name, &vm, &e1);
				if (r < 0 && e1.cls != GB_ERR_THROTTLED &&
				    e1.cls != GB_ERR_TRANSIENT) {
					*err = e1;
					return -1;
				}
				if (r < 0) {
					/* refused, not answered: the VM is there
					 * or coming all the same.  Giving up here
					 * made the engine replay the whole create,
					 * which under throttling kept the read
					 * bucket empty (tests/reliability/
					 * fault_storm.sh) */
					int sh = ops[i].misses < 4 ? ops[i].misses + 1
					                           : 5;
					ops[i].misses++;
					last = e1;
					ops[i].next_ms = h->mono_ms(h->ctx) +
					                 (e1.retry_after_ms > 0
					                          ? e1.retry_after_ms
					                          : c->poll_interval_ms << sh);
					pending++;
					if (!next || ops[i].next_ms < next)
						next = ops[i].next_ms;
					continue;
				}
				ops[i].misses = 0;
				if (r == 1) {
					const char *ps = vm.prov_state;
					if (strcasecmp(ps, "Succeeded") == 0) {
						vms[i] = vm; /* the caller's now */
						ops[i].done = 1;
						continue;
					}
					if (strcasecmp(ps, "Failed") == 0) {
						azure_vm_free(&vm);
						vm_failed(c, &ops[i], "Failed");
						continue;
					}
					if (strcasecmp(ps, "Deleting") == 0) {
						azure_vm_free(&vm);
						ops[i].done = ops[i].failed = 1;
						drvc_err(&ops[i].err, GB_ERR_TRANSIENT, 0,
						         "VMDeletedDuringCreate",
						         "Azure VM %s is being deleted while "
						         "it was being created", ops[i].name);
						continue;
					}
					azure_vm_free(&vm); /* Creating, Updating, ... */
				}
				/* not there yet (404 right after the PUT) or still
				 * provisioning: again after ARM's Retry-After */
				ops[i].next_ms = h->mono_ms(h->ctx) +
				                 (ops[i].retry_ms > 0 ? ops[i].retry_ms
				                                      : c->poll_interval_ms);
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
			         "Azure: %zu VM(s) still provisioning after the "
			         "create timeout (option create_timeout_s)%s%.400s",
			         pending, last.cls ? "; the last read was refused: "
			                           : "", last.cls ? last.message : "");
			return -1;
		}
		if (next > now)
			h->sleep_ms(h->ctx, next - now);
	}
}
