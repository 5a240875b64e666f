/*
 * azure_api.c -- routing for the Azure listener, which serves the login
 * token endpoint (/{tenant}/oauth2/v2.0/token), the Retail Prices API
 * (/api/retail/prices) and ARM (/subscriptions/...).  ARM requests need a
 * valid, unexpired bearer token from the login endpoint and an
 * api-version; they draw from per-subscription read/write/delete token
 * buckets (429 + Retry-After + the CRP body when empty) and report the
 * x-ms-ratelimit-remaining-subscription-* headers.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"

static void error_v(az_ctx *c, int status, const char *code,
                    const char *target, const char *fmt, va_list ap)
	GB_PRINTF(5, 0);

static void error_v(az_ctx *c, int status, const char *code,
                    const char *target, const char *fmt, va_list ap)
{
	char *msg = gb_xvasprintf(fmt, ap);
	json_t *e = json_pack("{s:s,s:s}", "code", code, "message", msg);
	if (target)
		json_object_set_new(e, "target", json_string(target));
	sim_resp_json(c->resp, status, json_pack("{s:o}", "error", e));
	free(msg);
}

void az_error(az_ctx *c, int status, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	error_v(c, status, code, NULL, fmt, ap);
	va_end(ap);
}

void az_error_target(az_ctx *c, int status, const char *code,
                     const char *target, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	error_v(c, status, code, target, fmt, ap);
	va_end(ap);
}

int az_api_at_least(const char *api, const char *min)
{
	return strncmp(api, min, 10) >= 0;
}

static int api_valid(const char *v)
{
	/* YYYY-MM-DD with an optional -preview style suffix */
	if (strlen(v) < 10)
		return 0;
	for (int i = 0; i < 10; i++) {
		if (i == 4 || i == 7) {
			if (v[i] != '-')
				return 0;
		} else if (!isdigit((unsigned char)v[i])) {
			return 0;
		}
	}
	return v[10] == '\0' || v[10] == '-';
}

/* Splits and decodes the path; -1 on a bad escape. */
static int split_path(az_ctx *c)
{
	const char *p = c->req->path;
	while (*p) {
		const char *e;
		size_t len;
		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		len = e ? (size_t)(e - p) : strlen(p);
		{
			char *s = sim_pct_decode(p, len, 0);
			if (!s)
				return -1;
			if (c->nseg >= 16) {
				free(s);
				return -1;
			}
			c->segs = gb_xrealloc(c->segs,
			                      (c->nseg + 1) * sizeof(char *));
			c->segs[c->nseg++] = s;
		}
		p += len;
	}
	return 0;
}

static int seg_is(const az_ctx *c, size_t i, const char *s)
{
	return i < c->nseg && strcasecmp(c->segs[i], s) == 0;
}

/* Route -> operation name (for latency, counters, faults). */
typedef enum route {
	R_NONE, R_LOGIN, R_PRICES, R_VM, R_VM_VIEW, R_VM_LIST_RG,
	R_VM_LIST_SUB, R_OP, R_NIC, R_NIC_LIST, R_PIP, R_USAGES
} route;

static route classify(az_ctx *c)
{
	const char *m = c->req->method;
	if (c->nseg == 4 && seg_is(c, 1, "oauth2") && seg_is(c, 2, "v2.0") &&
	    seg_is(c, 3, "token")) {
		c->op = "token";
		return R_LOGIN;
	}
	if (c->nseg == 3 && seg_is(c, 0, "api") && seg_is(c, 1, "retail") &&
	    seg_is(c, 2, "prices")) {
		c->op = "RetailPrices";
		return R_PRICES;
	}
	if (!seg_is(c, 0, "subscriptions") || c->nseg < 4)
		return R_NONE;
	c->sub = c->segs[1];
	if (seg_is(c, 2, "resourceGroups") && c->nseg >= 7 &&
	    seg_is(c, 4, "providers")) {
		c->rg = c->segs[3];
		if (seg_is(c, 5, "Microsoft.Compute") &&
		    seg_is(c, 6, "virtualMachines")) {
			if (c->nseg == 7) {
				c->op = "ListVMs";
				return R_VM_LIST_RG;
			}
			c->name = c->segs[7];
			if (c->nseg == 9 && seg_is(c, 8, "instanceView")) {
				c->op = "GetVM";
				return R_VM_VIEW;
			}
			if (c->nseg != 8)
				return R_NONE;
			c->op = strcmp(m, "PUT") == 0      ? "PutVM"
			        : strcmp(m, "DELETE") == 0 ? "DeleteVM"
			                                   : "GetVM";
			return R_VM;
		}
		if (seg_is(c, 5, "Microsoft.Network") && c->nseg == 7 &&
		    seg_is(c, 6, "networkInterfaces")) {
			c->op = "GetNetwork";
			return R_NIC_LIST;
		}
		if (seg_is(c, 5, "Microsoft.Network") && c->nseg == 8) {
			c->name = c->segs[7];
			c->op = "GetNetwork";
			if (seg_is(c, 6, "networkInterfaces")) {
				if (strcmp(m, "PUT") == 0)
					c->op = "PutNetwork";
				else if (strcmp(m, "DELETE") == 0)
					c->op = "DeleteNetwork";
				return R_NIC;
			}
			if (seg_is(c, 6, "publicIPAddresses"))
				return R_PIP;
		}
		return R_NONE;
	}
	if (seg_is(c, 2, "providers") && seg_is(c, 3, "Microsoft.Compute")) {
		if (c->nseg == 5 && seg_is(c, 4, "virtualMachines")) {
			c->op = "ListVMs";
			return R_VM_LIST_SUB;
		}
		if (c->nseg == 8 && seg_is(c, 4, "locations") &&
		    seg_is(c, 6, "operations")) {
			c->loc = c->segs[5];
			c->op = "GetOperation";
			return R_OP;
		}
		if (c->nseg == 7 && seg_is(c, 4, "locations") &&
		    seg_is(c, 6, "usages")) {
			c->loc = c->segs[5];
			c->op = "Usages";
			return R_USAGES;
		}
	}
	return R_NONE;
}

/* 0 when the bearer token is valid; else a 401 response. */
static int check_bearer(az_ctx *c)
{
	const char *h = sim_req_header(c->req, "Authorization");
	int64_t exp = 0;
	int rc;
	char *www;
	const char *why;
	if (!h) {
		az_error(c, 401, "AuthenticationFailed",
		         "Authentication failed. The 'Authorization' header is "
		         "missing.");
		why = "The 'Authorization' header is missing";
		goto fail;
	}
	if (strncasecmp(h, "Bearer ", 7) != 0 || !h[7]) {
		az_error(c, 401, "AuthenticationFailed",
		         "Authentication failed. The 'Authorization' header is "
		         "provided in an invalid format.");
		why = "The 'Authorization' header is provided in an invalid "
		      "format";
		goto fail;
	}
	rc = sim_token_check(SIM_AZURE, h + 7, &exp);
	if (rc == 0)
		return 0;
	if (rc == 1) {
		char a[40], b[40];
		az_error(c, 401, "ExpiredAuthenticationToken",
		         "The access token expiry UTC time '%s' is earlier "
		         "than current UTC time '%s'.",
		         sim_time_s(exp, a, sizeof(a)),
		         sim_time_s(c->now, b, sizeof(b)));
		why = "The access token has expired";
	} else {
		az_error(c, 401, "InvalidAuthenticationToken",
		         "The access token is invalid.");
		why = "The access token is invalid";
	}
fail:
	www = gb_xasprintf("Bearer authorization_uri=\"%s/%s\", "
	                   "error=\"invalid_token\", error_description=\"%s\"",
	                   sim_g.url[1], sim_g.sc.az_tenant, why);
	sim_resp_header(c->resp, "WWW-Authenticate", www);
	free(www);
	sim_count_fault(SIM_AZURE, SIM_F_AUTH);
	return -1;
}

static const char *bucket_of(const char *method)
{
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		return "reads";
	if (strcmp(method, "DELETE") == 0)
		return "deletes";
	return "writes";
}

static void throttled(az_ctx *c, const char *bucket, int64_t retry_ms)
{
	char st[40], en[40], hdr[96];
	int64_t secs = (retry_ms + 999) / 1000;
	char *detail;
	json_t *body;
	if (secs < 1)
		secs = 1;
	sim_time_s(c->now, st, sizeof(st));
	sim_time_s(c->now + secs * 1000, en, sizeof(en));
	detail = gb_xasprintf("{\"operationGroup\":\"%s\",\"startTime\":\"%s\","
	                      "\"endTime\":\"%s\",\"allowedRequestCount\":%lld,"
	                      "\"measuredRequestCount\":%lld}",
	                      bucket, st, en,
	                      (long long)sim_throttle_peek(SIM_AZURE, "",
	                                                   bucket),
	                      (long long)1);
	/* the Compute resource provider's 429 body has no "error" wrapper
	 * (cloud-apis.md 2.4) */
	body = json_pack("{s:s,s:s,s:[{s:s,s:s,s:s}]}", "code",
	                 "OperationNotAllowed", "message",
	                 "The server rejected the request because too many "
	                 "requests have been received for this subscription.",
	                 "details", "code", "TooManyRequests", "target",
	                 bucket, "message", detail);
	free(detail);
	sim_resp_json(c->resp, 429, body);
	snprintf(hdr, sizeof(hdr), "%lld", (long long)secs);
	sim_resp_header(c->resp, "Retry-After", hdr);
	snprintf(hdr, sizeof(hdr), "x-ms-ratelimit-remaining-subscription-%s",
	         bucket);
	sim_resp_header(c->resp, hdr, "0");
}

static int check_subscription(az_ctx *c)
{
	if (strcasecmp(c->sub, sim_g.sc.az_sub) == 0)
		return 0;
	az_error(c, 404, "SubscriptionNotFound",
	         "The subscription '%s' could not be found.", c->sub);
	return -1;
}

static int check_rg(az_ctx *c)
{
	if (!c->rg || strcasecmp(c->rg, sim_g.sc.az_rg) == 0)
		return 0;
	az_error(c, 404, "ResourceGroupNotFound",
	         "Resource group '%s' could not be found.", c->rg);
	return -1;
}

static void arm(az_ctx *c, route r)
{
	const char *bucket = bucket_of(c->req->method);
	int64_t retry = 0, remaining = 0;
	char hdr[96], val[32];
	if (check_bearer(c) != 0)
		return;
	if (check_subscription(c) != 0)
		return;
	c->api = sim_req_qarg(c->req, "api-version");
	if (!c->api || !*c->api) {
		az_error(c, 400, "MissingApiVersionParameter",
		         "The api-version query parameter (?api-version=) is "
		         "required for all requests.");
		return;
	}
	if (!api_valid(c->api)) {
		az_error(c, 400, "InvalidApiVersionParameter",
		         "The api-version '%s' is invalid. The supported "
		         "versions are '2024-11-01,2024-07-01,2024-03-01,"
		         "2023-09-01,2023-03-01,2022-11-01,2022-08-01,"
		         "2021-11-01,2021-07-01,2021-03-01,2020-12-01,"
		         "2020-06-01,2019-12-01,2019-07-01,2019-03-01'.",
		         c->api);
		return;
	}
	if (sim_throttle(SIM_AZURE, "", bucket, 1, &retry, &remaining)) {
		throttled(c, bucket, retry);
		return;
	}
	snprintf(hdr, sizeof(hdr), "x-ms-ratelimit-remaining-subscription-%s",
	         bucket);
	snprintf(val, sizeof(val), "%lld", (long long)remaining);
	sim_resp_header(c->resp, hdr, val);
	if (check_rg(c) != 0)
		return;
	if (sim_fault_error(SIM_AZURE, c->op)) {
		char t[40];
		az_error(c, 500, "InternalServerError",
		         "Encountered internal server error. Diagnostic "
		         "information: timestamp '%s', subscription id '%s', "
		         "tracking id '%s'.", sim_time_s(c->now, t, sizeof(t)),
		         sim_g.sc.az_sub, c->req->request_id);
		return;
	}
	switch (r) {
	case R_VM:
		if (strcmp(c->req->method, "PUT") == 0)
			arm_vm_put(c);
		else if (strcmp(c->req->method, "DELETE") == 0)
			arm_vm_delete(c);
		else if (strcmp(c->req->method, "GET") == 0)
			arm_vm_get(c, 0);
		else
			az_error(c, 405, "MethodNotAllowed",
			         "The requested resource does not support http "
			         "method '%s'.", c->req->method);
		break;
	case R_VM_VIEW:
		arm_vm_get(c, 1);
		break;
	case R_VM_LIST_RG:
	case R_VM_LIST_SUB:
		arm_vm_list(c, r == R_VM_LIST_SUB);
		break;
	case R_OP:
		arm_op_get(c, c->segs[7]);
		break;
	case R_NIC:
		if (strcmp(c->req->method, "PUT") == 0)
			arm_nic_put(c);
		else if (strcmp(c->req->method, "DELETE") == 0)
			arm_nic_delete(c);
		else if (strcmp(c->req->method, "GET") == 0)
			arm_nic_get(c, c->name);
		else
			az_error(c, 405, "MethodNotAllowed",
			         "The requested resource does not support http "
			         "method '%s'.", c->req->method);
		break;
	case R_NIC_LIST:
		arm_nic_list(c);
		break;
	case R_PIP:
		arm_pip_get(c, c->name);
		break;
	case R_USAGES:
		arm_usages(c);
		break;
	default:
		break;
	}
	if ((r == R_VM) && c->resp->status < 300 &&
	    strcmp(c->req->method, "GET") != 0 &&
	    sim_fault_lost(SIM_AZURE, c->op)) {
		char t[40];
		gb_kvs_free(&c->resp->headers);
		az_error(c, 500, "InternalServerError",
		         "Encountered internal server error. Diagnostic "
		         "information: timestamp '%s', subscription id '%s', "
		         "tracking id '%s'.", sim_time_s(c->now, t, sizeof(t)),
		         sim_g.sc.az_sub, c->req->request_id);
	}
}

void sim_azure_handle(sim_req *req, sim_resp *resp)
{
	az_ctx c;
	route r;
	memset(&c, 0, sizeof(c));
	c.req = req;
	c.resp = resp;
	if (split_path(&c) != 0) {
		c.now = sim_now();
		az_error(&c, 400, "InvalidRequestUri",
		         "The request URI '%s' is not valid.", req->path);
		goto out;
	}
	r = classify(&c);
	req->op = c.op ? c.op : "unknown";
	if (req->bad_query) {
		az_error(&c, 400, "InvalidQueryParameterValue",
		         "The query string has a malformed percent-escape.");
		goto out;
	}
	if (req->body_too_large) {
		az_error(&c, 413, "RequestEntityTooLarge",
		         "The request content length exceeds %lld bytes.",
		         (long long)sim_g.sc.max_body);
		goto out;
	}
	if (r == R_NONE) {
		az_error(&c, 404, "NotFound",
		         "No HTTP resource was found that matches the request "
		         "URI '%s'.", req->path);
		goto out;
	}
	if (r == R_LOGIN && strcmp(req->method, "POST") != 0) {
		json_t *e = json_pack(
			"{s:s,s:s}", "error", "invalid_request",
			"error_description",
			"AADSTS900561: The endpoint only accepts POST requests.");
		sim_resp_json(resp, 405, e);
		goto out;
	}
	sim_latency(SIM_AZURE, c.op);
	sim_lock();
	c.now = sim_now();
	sim_count_call(SIM_AZURE, c.op);
	if (r == R_LOGIN) {
		if (sim_fault_error(SIM_AZURE, c.op)) {
			json_t *e = json_pack(
				"{s:s,s:s}", "error", "temporarily_unavailable",
				"error_description",
				"AADSTS50089: The service is temporarily "
				"unavailable.");
			sim_resp_json(resp, 503, e);
		} else {
			az_login(&c);
		}
	} else if (r == R_PRICES) {
		if (sim_fault_error(SIM_AZURE, c.op))
			sim_resp_json(resp, 500,
			              json_pack("{s:{s:s,s:s}}", "error", "code",
			                        "InternalServerError", "message",
			                        "An error has occurred."));
		else
			az_prices(&c);
	} else {
		sim_resp_header(resp, "x-ms-request-id", req->request_id);
		sim_resp_header(resp, "x-ms-correlation-request-id",
		                req->request_id);
		arm(&c, r);
	}
	sim_unlock();
out:
	for (size_t i = 0; i < c.nseg; i++)
		free(c.segs[i]);
	free(c.segs);
}
