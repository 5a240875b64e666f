/*
 * lambda_api.c -- the Lambda Cloud listener: routes /api/v1/..., checks
 * the API key (Bearer, or HTTP Basic with the key as the user), applies
 * the rate limits (bucket `requests` for every call, `launch` for
 * launches too: 429) and the injected faults, answers errors in Lambda's
 * envelope.  Facts and sources: drivers/lambda/API.md.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "lambda.h"

static void verror(lam_ctx *c, int status, const char *code,
                   const char *suggestion, const char *fmt, va_list ap)
{
	char *msg = gb_xvasprintf(fmt, ap);
	sim_resp_json(c->resp, status,
	              json_pack("{s:{s:s,s:s,s:o}}", "error", "code", code,
	                        "message", msg, "suggestion",
	                        suggestion ? json_string(suggestion)
	                                   : json_null()));
	free(msg);
}

void lam_error(lam_ctx *c, int status, const char *code,
               const char *suggestion, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(c, status, code, suggestion, fmt, ap);
	va_end(ap);
}

void lam_bad(lam_ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(c, 400, "global/invalid-parameters", NULL, fmt, ap);
	va_end(ap);
}

json_t *lam_body_object(lam_ctx *c)
{
	json_error_t je;
	json_t *body = json_loadb(c->req->body, c->req->body_len, 0, &je);
	if (json_is_object(body))
		return body;
	if (body)
		lam_bad(c, "Invalid request data: the body must be a JSON "
		        "object.");
	else
		lam_bad(c, "Invalid request data: the body is not JSON (%s "
		        "at line %d, column %d).", je.text, je.line, je.column);
	json_decref(body);
	return NULL;
}

int lam_only_keys(lam_ctx *c, const json_t *obj, const char *what,
                  const char *const *allowed)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)obj, k, v) {
		int ok = 0;
		for (size_t i = 0; allowed[i]; i++)
			ok |= strcmp(k, allowed[i]) == 0;
		if (!ok) {
			lam_bad(c, "Invalid request data: %s has no field "
			        "\"%s\".", what, k);
			return 0;
		}
	}
	return 1;
}

typedef enum route {
	R_NONE, R_METHOD, R_TYPES, R_LIST, R_GET, R_LAUNCH, R_TERMINATE,
	R_KEYS, R_KEY_ADD, R_KEY_DELETE
} route;

/* The path after /api/v1/: at most two segments; the second (an id) is
 * percent-decoded into c->id. */
static route classify(lam_ctx *c)
{
	const char *m = c->req->method, *p = c->req->path, *slash;
	char first[40];
	size_t len;
	if (strncmp(p, "/api/v1/", 8) != 0)
		return R_NONE;
	p += 8;
	slash = strchr(p, '/');
	len = slash ? (size_t)(slash - p) : strlen(p);
	if (len >= sizeof(first))
		return R_NONE;
	memcpy(first, p, len);
	first[len] = '\0';
	if (slash) {
		const char *rest = slash + 1;
		if (!*rest || strchr(rest, '/'))
			return R_NONE;
		if (strcmp(first, "instance-operations") == 0) {
			if (strcmp(rest, "launch") == 0) {
				c->op = "launchInstance";
				return strcmp(m, "POST") == 0 ? R_LAUNCH
				                              : R_METHOD;
			}
			if (strcmp(rest, "terminate") == 0) {
				c->op = "terminateInstance";
				return strcmp(m, "POST") == 0 ? R_TERMINATE
				                              : R_METHOD;
			}
			return R_NONE;
		}
		if (strcmp(first, "instances") != 0 &&
		    strcmp(first, "ssh-keys") != 0)
			return R_NONE;
		c->id = sim_pct_decode(rest, strlen(rest), 0);
		if (!c->id)
			return R_NONE;
		if (first[0] == 'i') {
			c->op = "getInstance";
			return strcmp(m, "GET") == 0 ? R_GET : R_METHOD;
		}
		c->op = "deleteSSHKey";
		return strcmp(m, "DELETE") == 0 ? R_KEY_DELETE : R_METHOD;
	}
	if (strcmp(first, "instance-types") == 0) {
		c->op = "instanceTypes";
		return strcmp(m, "GET") == 0 ? R_TYPES : R_METHOD;
	}
	if (strcmp(first, "instances") == 0) {
		c->op = "listInstances";
		return strcmp(m, "GET") == 0 ? R_LIST : R_METHOD;
	}
	if (strcmp(first, "ssh-keys") == 0) {
		if (strcmp(m, "POST") == 0) {
			c->op = "addSSHKey";
			return R_KEY_ADD;
		}
		c->op = "listSSHKeys";
		return strcmp(m, "GET") == 0 ? R_KEYS : R_METHOD;
	}
	return R_NONE;
}

static int key_equal(const char *given, size_t n)
{
	const char *key = sim_g.sc.lambda_key;
	return n == strlen(key) && CRYPTO_memcmp(given, key, n) == 0;
}

/* HTTP Basic: base64("KEY:") or base64("KEY") (the password must be
 * empty), or the key itself after "Basic " (API.md, "Base URL and
 * authentication"). */
static int basic_ok(const char *cred)
{
	size_t n = strlen(cred);
	unsigned char buf[512];
	int len;
	char *colon;
	if (key_equal(cred, n))
		return 1;
	if (n == 0 || n % 4 != 0 || n / 4 * 3 >= sizeof(buf))
		return 0;
	len = EVP_DecodeBlock(buf, (const unsigned char *)cred, (int)n);
	if (len < 0)
		return 0;
	if (cred[n - 1] == '=')
		len--;
	if (cred[n - 2] == '=')
		len--;
	if (len < 0)
		return 0;
	buf[len] = '\0';
	if (memchr(buf, '\0', (size_t)len))
		return 0;
	colon = strchr((char *)buf, ':');
	if (colon) {
		if (colon[1])
			return 0;
		*colon = '\0';
	}
	return key_equal((char *)buf, strlen((char *)buf));
}

static int check_key(lam_ctx *c)
{
	const char *h = sim_req_header(c->req, "Authorization");
	int ok = 0;
	if (h && strncasecmp(h, "Bearer ", 7) == 0)
		ok = key_equal(h + 7, strlen(h + 7));
	else if (h && strncasecmp(h, "Basic ", 6) == 0)
		ok = basic_ok(h + 6);
	if (ok && sim_g.sc.lambda_inactive) {
		sim_count_fault(SIM_LAMBDA, SIM_F_AUTH);
		lam_error(c, 403, "global/account-inactive",
		          "Make sure you have verified your email address and "
		          "have a valid payment method. Contact Support if "
		          "problems continue.", "Your account is inactive.");
		return -1;
	}
	if (ok)
		return 0;
	sim_count_fault(SIM_LAMBDA, SIM_F_AUTH);
	lam_error(c, 401, "global/invalid-api-key",
	          "Check your API key or create a new one, then try again.",
	          "API key was invalid, expired, or deleted.");
	return -1;
}

static int throttled(lam_ctx *c, const char *bucket)
{
	int64_t retry = 0;
	if (!sim_throttle(SIM_LAMBDA, "", bucket, 1, &retry, NULL))
		return 0;
	sim_resp_headerf(c->resp, "Retry-After", "%lld",
	                 (long long)(retry + 999) / 1000);
	lam_error(c, 429, "global/rate-limited",
	          "Wait for the time the Retry-After header gives, then retry.",
	          "Too many requests: the API's %s rate limit was exceeded.",
	          strcmp(bucket, "launch") == 0 ? "launch" : "request");
	return 1;
}

static void internal_error(lam_ctx *c)
{
	lam_error(c, 500, "global/unknown", NULL,
	          "Something unexpected occurred. (request %s)",
	          c->req->request_id);
}

static void serve(lam_ctx *c, route r)
{
	if (check_key(c) != 0 || throttled(c, "requests"))
		return;
	if (r == R_LAUNCH && throttled(c, "launch"))
		return;
	if (sim_fault_error(SIM_LAMBDA, c->op)) {
		internal_error(c);
		return;
	}
	switch (r) {
	case R_TYPES: lam_instance_types(c); break;
	case R_LIST: lam_list(c); break;
	case R_GET: lam_get(c); break;
	case R_LAUNCH: lam_launch(c); break;
	case R_TERMINATE: lam_terminate(c); break;
	case R_KEYS: lam_keys_list(c); break;
	case R_KEY_ADD: lam_keys_add(c); break;
	case R_KEY_DELETE: lam_keys_delete(c); break;
	default: break;
	}
	if ((r == R_LAUNCH || r == R_TERMINATE) && c->resp->status == 200 &&
	    sim_fault_lost(SIM_LAMBDA, c->op))
		internal_error(c);
}

void sim_lambda_handle(sim_req *req, sim_resp *resp)
{
	lam_ctx c;
	route r;
	memset(&c, 0, sizeof(c));
	c.req = req;
	c.resp = resp;
	r = classify(&c);
	req->op = c.op ? c.op : "unknown";
	if (req->body_too_large) {
		lam_error(&c, 413, "global/invalid-parameters", NULL,
		          "The request body exceeds %lld bytes.",
		          (long long)sim_g.sc.max_body);
	} else if (r == R_NONE) {
		lam_error(&c, 404, "global/object-does-not-exist",
		          "The API's paths are under /api/v1/ (see "
		          "drivers/lambda/API.md).",
		          "Not found: %s %s.", req->method, req->path);
	} else if (r == R_METHOD) {
		lam_error(&c, 405, "global/invalid-parameters", NULL,
		          "Method %s is not allowed on %s.", req->method,
		          req->path);
	} else {
		sim_latency(SIM_LAMBDA, c.op);
		sim_lock();
		c.now = sim_now();
		sim_count_call(SIM_LAMBDA, c.op);
		serve(&c, r);
		sim_unlock();
	}
	free(c.id);
}
