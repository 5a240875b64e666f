/*
 * gce_api.c -- routing for the GCP listener: POST /token (OAuth),
 * /compute/v1/projects/... (Compute Engine) and /cloudbilling/v1/...
 * (Cloud Billing catalog).  Compute and billing need a bearer token from
 * /token; Compute requests count against per-minute windows per group
 * (mutations, reads, lists, operations) and get 403 rateLimitExceeded
 * beyond them.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gce.h"

void gce_error(gce_ctx *c, int status, const char *reason,
               const char *domain, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	va_start(ap, fmt);
	msg = gb_xvasprintf(fmt, ap);
	va_end(ap);
	sim_resp_json(c->resp, status,
	              json_pack("{s:{s:i,s:s,s:[{s:s,s:s,s:s}]}}", "error",
	                        "code", status, "message", msg, "errors",
	                        "message", msg, "domain", domain, "reason",
	                        reason));
	free(msg);
}

char *gce_url(const char *fmt, ...)
{
	va_list ap;
	char *tail, *s;
	va_start(ap, fmt);
	tail = gb_xvasprintf(fmt, ap);
	va_end(ap);
	s = gb_xasprintf("%s/compute/v1/%s", sim_g.url[2], tail);
	free(tail);
	return s;
}

char *gce_key(const char *project, const char *zone, const char *name)
{
	return gb_xasprintf("gcp|%s|%s|%s", project, zone, name);
}

char *gce_token_make(const char *kind, const char *pos)
{
	char *raw = gb_xasprintf("cloudsim:%s:%s", kind, pos);
	char *t = sim_b64url_encode(raw, strlen(raw));
	free(raw);
	return t;
}

char *gce_token_parse(const char *kind, const char *tok)
{
	size_t n = 0, kl = strlen(kind);
	unsigned char *raw = sim_b64url_decode(tok, strlen(tok), &n);
	char *out = NULL;
	if (raw && n > 10 + kl && memcmp(raw, "cloudsim:", 9) == 0 &&
	    memcmp(raw + 9, kind, kl) == 0 && raw[9 + kl] == ':' &&
	    strlen((char *)raw) == n)
		out = gb_xstrdup((char *)raw + 10 + kl);
	free(raw);
	return out;
}

static int split_path(gce_ctx *c)
{
	const char *p = c->req->path;
	while (*p) {
		const char *e;
		size_t len;
		char *s;
		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		len = e ? (size_t)(e - p) : strlen(p);
		s = sim_pct_decode(p, len, 0);
		if (!s || c->nseg >= 16) {
			free(s);
			return -1;
		}
		c->segs = gb_xrealloc(c->segs, (c->nseg + 1) * sizeof(char *));
		c->segs[c->nseg++] = s;
		p += len;
	}
	return 0;
}

static int seg(const gce_ctx *c, size_t i, const char *s)
{
	return i < c->nseg && strcmp(c->segs[i], s) == 0;
}

typedef enum route {
	R_NONE, R_TOKEN, R_INSERT, R_BULK, R_LIST, R_GET, R_DELETE, R_AGG, R_OPGET,
	R_OPWAIT, R_OPLIST, R_REGION, R_SERVICES, R_SKUS, R_METHOD
} route;

static route classify(gce_ctx *c)
{
	const char *m = c->req->method;
	if (c->nseg == 1 && seg(c, 0, "token")) {
		c->op = "token";
		return strcmp(m, "POST") == 0 ? R_TOKEN : R_METHOD;
	}
	if (seg(c, 0, "cloudbilling") && seg(c, 1, "v1") &&
	    seg(c, 2, "services")) {
		c->op = "skus.list";
		if (c->nseg == 3)
			return R_SERVICES;
		if (c->nseg == 5 && seg(c, 4, "skus"))
			return R_SKUS;
		return R_NONE;
	}
	if (!seg(c, 0, "compute") || !seg(c, 1, "v1") ||
	    !seg(c, 2, "projects") || c->nseg < 5)
		return R_NONE;
	c->project = c->segs[3];
	if (c->nseg == 6 && seg(c, 4, "aggregated") &&
	    seg(c, 5, "instances")) {
		c->op = "instances.aggregatedList";
		return strcmp(m, "GET") == 0 ? R_AGG : R_METHOD;
	}
	if (c->nseg == 6 && seg(c, 4, "regions")) {
		c->region = c->segs[5];
		c->op = "regions.get";
		return strcmp(m, "GET") == 0 ? R_REGION : R_METHOD;
	}
	if (!seg(c, 4, "zones") || c->nseg < 7)
		return R_NONE;
	c->zone = c->segs[5];
	if (seg(c, 6, "instances")) {
		if (c->nseg == 7) {
			if (strcmp(m, "POST") == 0) {
				c->op = "instances.insert";
				return R_INSERT;
			}
			c->op = "instances.list";
			return strcmp(m, "GET") == 0 ? R_LIST : R_METHOD;
		}
		if (c->nseg != 8)
			return R_NONE;
		if (seg(c, 7, "bulkInsert") && strcmp(m, "POST") == 0) {
			/* never an instance name: those are lowercase */
			c->op = "instances.bulkInsert";
			return R_BULK;
		}
		c->name = c->segs[7];
		if (strcmp(m, "DELETE") == 0) {
			c->op = "instances.delete";
			return R_DELETE;
		}
		c->op = "instances.get";
		return strcmp(m, "GET") == 0 ? R_GET : R_METHOD;
	}
	if (seg(c, 6, "operations")) {
		if (c->nseg == 7) {
			c->op = "zoneOperations.list";
			return strcmp(m, "GET") == 0 ? R_OPLIST : R_METHOD;
		}
		c->opname = c->segs[7];
		if (c->nseg == 9 && seg(c, 8, "wait")) {
			c->op = "zoneOperations.wait";
			return strcmp(m, "POST") == 0 ? R_OPWAIT : R_METHOD;
		}
		if (c->nseg == 8) {
			c->op = "zoneOperations.get";
			return strcmp(m, "GET") == 0 ? R_OPGET : R_METHOD;
		}
	}
	return R_NONE;
}

static const char *group_of(route r)
{
	switch (r) {
	case R_INSERT:
	case R_BULK:
	case R_DELETE: return "mutations";
	case R_GET:
	case R_REGION: return "reads";
	case R_LIST:
	case R_AGG:
	case R_OPLIST: return "lists";
	case R_OPGET:
	case R_OPWAIT: return "operations";
	default: return NULL;
	}
}

static int check_bearer(gce_ctx *c)
{
	const char *h = sim_req_header(c->req, "Authorization");
	int rc;
	if (!h || strncasecmp(h, "Bearer ", 7) != 0 || !h[7]) {
		gce_error(c, 401, "required", "global",
		          "Request is missing required authentication "
		          "credential. Expected OAuth 2 access token, login "
		          "cookie or other valid authentication credential. See "
		          "https://developers.google.com/identity/sign-in/web/"
		          "devconsole-project.");
		goto fail;
	}
	rc = sim_token_check(SIM_GCP, h + 7, NULL);
	if (rc == 0)
		return 0;
	gce_error(c, 401, "authError", "global",
	          "Request had invalid authentication credentials. Expected "
	          "OAuth 2 access token, login cookie or other valid "
	          "authentication credential. See https://developers.google."
	          "com/identity/sign-in/web/devconsole-project.");
fail:
	sim_resp_header(c->resp, "WWW-Authenticate",
	                "Bearer realm=\"https://accounts.google.com/\", "
	                "error=\"invalid_token\"");
	sim_count_fault(SIM_GCP, SIM_F_AUTH);
	return -1;
}

static void internal_error(gce_ctx *c)
{
	gce_error(c, 500, "backendError", "global",
	          "Internal error. Please try again or contact Google "
	          "Support. (Code: '%s')", c->req->request_id);
}

static void compute(gce_ctx *c, route r)
{
	const char *group = group_of(r);
	int64_t retry = 0;
	if (check_bearer(c) != 0)
		return;
	if (strcmp(c->project, sim_g.sc.gcp_project) != 0) {
		gce_error(c, 404, "notFound", "global",
		          "The resource 'projects/%s' was not found",
		          c->project);
		return;
	}
	if (group && sim_throttle(SIM_GCP, "", group, 1, &retry, NULL)) {
		static const char *const names[][2] = {
			{"mutations", "Queries"}, {"reads", "Read requests"},
			{"lists", "List requests"},
			{"operations", "Operation read requests"},
		};
		const char *metric = "Queries";
		for (size_t i = 0; i < GB_ARRAY_LEN(names); i++)
			if (strcmp(names[i][0], group) == 0)
				metric = names[i][1];
		gce_error(c, 403, "rateLimitExceeded", "usageLimits",
		          "Quota exceeded for quota metric '%s' and limit "
		          "'%s per minute' of service 'compute.googleapis.com' "
		          "for consumer 'project_number:424242424242'.",
		          metric, metric);
		return;
	}
	if (sim_fault_error(SIM_GCP, c->op)) {
		internal_error(c);
		return;
	}
	switch (r) {
	case R_INSERT: gce_insert(c); break;
	case R_BULK: gce_bulk_insert(c); break;
	case R_LIST: gce_list(c, 0); break;
	case R_AGG: gce_list(c, 1); break;
	case R_GET: gce_get(c); break;
	case R_DELETE: gce_delete(c); break;
	case R_OPGET: gce_op_get(c); break;
	case R_OPWAIT: gce_op_wait(c); break;
	case R_OPLIST: gce_op_list(c); break;
	case R_REGION: gce_region_get(c); break;
	default: break;
	}
	if ((r == R_INSERT || r == R_BULK || r == R_DELETE) &&
	    c->resp->status == 200 &&
	    sim_fault_lost(SIM_GCP, c->op))
		internal_error(c);
}

void sim_gcp_handle(sim_req *req, sim_resp *resp)
{
	gce_ctx c;
	route r;
	memset(&c, 0, sizeof(c));
	c.req = req;
	c.resp = resp;
	if (split_path(&c) != 0) {
		gce_error(&c, 400, "invalid", "global",
		          "Invalid request path.");
		goto out;
	}
	r = classify(&c);
	req->op = c.op ? c.op : "unknown";
	if (req->bad_query) {
		gce_error(&c, 400, "invalid", "global",
		          "Invalid query string (malformed percent-escape).");
		goto out;
	}
	if (req->body_too_large) {
		gce_error(&c, 413, "uploadTooLarge", "global",
		          "The request body exceeds %lld bytes.",
		          (long long)sim_g.sc.max_body);
		goto out;
	}
	if (r == R_NONE) {
		gce_error(&c, 404, "notFound", "global",
		          "The requested URL %s was not found on this server.",
		          req->path);
		goto out;
	}
	if (r == R_METHOD) {
		gce_error(&c, 405, "httpMethodNotAllowed", "global",
		          "HTTP method %s is not supported by this URL",
		          req->method);
		goto out;
	}
	sim_latency(SIM_GCP, c.op);
	sim_lock();
	c.now = sim_now();
	sim_count_call(SIM_GCP, c.op);
	if (r == R_TOKEN) {
		if (sim_fault_error(SIM_GCP, c.op))
			sim_resp_json(resp, 503,
			              json_pack("{s:s,s:s}", "error",
			                        "internal_failure",
			                        "error_description",
			                        "Backend error, try again."));
		else
			gcp_token(&c);
	} else if (r == R_SERVICES || r == R_SKUS) {
		if (check_bearer(&c) == 0) {
			if (sim_fault_error(SIM_GCP, c.op))
				internal_error(&c);
			else if (r == R_SERVICES)
				gcp_billing_services(&c);
			else
				gcp_billing_skus(&c, c.segs[3]);
		}
	} else {
		compute(&c, r);
	}
	sim_unlock();
out:
	for (size_t i = 0; i < c.nseg; i++)
		free(c.segs[i]);
	free(c.segs);
}
