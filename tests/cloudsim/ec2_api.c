/*
 * ec2_api.c -- the EC2 endpoint: collects the Query parameters (query
 * string and form body), verifies SigV4 against the scenario's key,
 * applies throttling and injected faults, and dispatches the action.
 * The region is the one in the credential scope (one endpoint serves all
 * regions, as with AWS_ENDPOINT_URL_EC2).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ec2.h"
#include "sigv4.h"

#define SKEW_MS (5 * 60 * 1000)

typedef struct action {
	const char *name;
	void (*fn)(ec2_ctx *);
	const char *bucket;
	int mutating;
} action;

static const action actions[] = {
	{"RunInstances", ec2_run_instances, "RunInstances", 1},
	{"TerminateInstances", ec2_terminate_instances, "TerminateInstances",
	 1},
	{"DescribeInstances", ec2_describe_instances, "Describe", 0},
	{"DescribeInstanceTypes", ec2_describe_instance_types, "Describe", 0},
	{"DescribeSpotPriceHistory", ec2_describe_spot_price_history,
	 "Describe", 0},
	{"DescribeAvailabilityZones", ec2_describe_availability_zones,
	 "Describe", 0},
};

static int signs_header(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;
	while (*p) {
		const char *e = strchr(p, ';');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncasecmp(p, name, n) == 0)
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/* 0 when authenticated (c->region set); else an error response is set. */
static int authenticate(ec2_ctx *c)
{
	sim_sigv4_in in;
	sim_sigv4_auth a;
	char msg[512], scope[256], sig[65];
	char *date, *creq, *sts;
	int64_t t;
	int rc;
	in.method = c->req->method;
	in.path = c->req->path;
	in.query = c->req->query;
	in.hdrs = c->req->hdrs;
	in.nhdrs = c->req->nhdrs;
	in.body = c->req->body;
	in.body_len = c->req->body_len;
	rc = sim_sigv4_parse(&in, &a, msg, sizeof(msg));
	if (rc == SIM_SIGV4_MISSING) {
		if (gb_kvs_get(&c->params, "X-Amz-Algorithm"))
			ec2_error(c, 400, "IncompleteSignature",
			          "cloudsim accepts only the Authorization "
			          "header form of SigV4 (no presigned query "
			          "parameters)");
		else
			ec2_error(c, 401, "MissingAuthenticationToken", "%s",
			          msg);
		return -1;
	}
	if (rc != SIM_SIGV4_OK) {
		ec2_error(c, 400, "IncompleteSignature", "%s", msg);
		return -1;
	}
	date = sim_sigv4_header(&in, "x-amz-date");
	if (!date) {
		ec2_error(c, 400, "IncompleteSignature",
		          "Authorization header requires existence of either "
		          "a 'X-Amz-Date' or a 'Date' header.");
		return -1;
	}
	if (!signs_header(a.signed_headers, "host")) {
		free(date);
		ec2_error(c, 400, "IncompleteSignature",
		          "'Host' or ':authority' must be a 'SignedHeader' in "
		          "the AWS Authorization.");
		return -1;
	}
	if (strcmp(a.service, "ec2") != 0) {
		free(date);
		ec2_error(c, 403, "SignatureDoesNotMatch",
		          "Credential should be scoped to correct service: "
		          "'ec2'.");
		return -1;
	}
	if (strcmp(a.akid, sim_g.sc.aws_key_id) != 0) {
		free(date);
		ec2_error(c, 401, "AuthFailure",
		          "AWS was not able to validate the provided access "
		          "credentials");
		return -1;
	}
	{
		char iso[32];
		if (strlen(date) != 16 || date[8] != 'T' || date[15] != 'Z') {
			ec2_error(c, 400, "IncompleteSignature",
			          "Date must be in ISO-8601 'basic format'. Got "
			          "'%s'. See http://en.wikipedia.org/wiki/"
			          "ISO_8601", date);
			free(date);
			return -1;
		}
		snprintf(iso, sizeof(iso), "%.4s-%.2s-%.2sT%.2s:%.2s:%.2sZ",
		         date, date + 4, date + 6, date + 9, date + 11,
		         date + 13);
		if (sim_parse_iso(iso, &t) != 0) {
			ec2_error(c, 400, "IncompleteSignature",
			          "Date must be in ISO-8601 'basic format'. Got "
			          "'%s'.", date);
			free(date);
			return -1;
		}
	}
	if (strncmp(a.date, date, 8) != 0) {
		ec2_error(c, 403, "SignatureDoesNotMatch",
		          "Date in Credential scope does not match YYYYMMDD "
		          "from ISO-8601 version of date from HTTP: '%s' != "
		          "'%.8s', from '%s'.", a.date, date, date);
		free(date);
		return -1;
	}
	if (t < c->now - SKEW_MS || t > c->now + SKEW_MS) {
		char iso[40];
		sim_time_s(c->now, iso, sizeof(iso));
		ec2_error(c, 400, "RequestExpired",
		          "Request has expired. Timestamp date is %s, server "
		          "time is %s (more than 5 minutes apart).", date, iso);
		free(date);
		return -1;
	}
	snprintf(scope, sizeof(scope), "%s/%s/%s/aws4_request", a.date,
	         a.region, a.service);
	creq = sim_sigv4_canonical(&in, a.signed_headers);
	sts = sim_sigv4_sts(date, scope, creq);
	sim_sigv4_sign(sim_g.sc.aws_secret, a.date, a.region, a.service, sts,
	               sig);
	free(creq);
	free(sts);
	free(date);
	if (!gb_ct_streq(sig, a.signature)) {
		ec2_error(c, 403, "SignatureDoesNotMatch",
		          "The request signature we calculated does not match "
		          "the signature you provided. Check your AWS Secret "
		          "Access Key and signing method. Consult the service "
		          "documentation for details.");
		return -1;
	}
	if (!sim_region_find(SIM_AWS, a.region)) {
		ec2_error(c, 401, "AuthFailure",
		          "Credential should be scoped to a valid region, not "
		          "'%s'.", a.region);
		return -1;
	}
	snprintf(c->region, sizeof(c->region), "%s", a.region);
	return 0;
}

static int collect_params(ec2_ctx *c)
{
	const char *ct;
	for (size_t i = 0; i < c->req->qargs.n; i++)
		gb_kvs_set(&c->params, c->req->qargs.keys[i],
		           c->req->qargs.vals[i]);
	if (strcmp(c->req->method, "POST") != 0 || !c->req->body_len)
		return 0;
	ct = sim_req_header(c->req, "Content-Type");
	if (ct && strncasecmp(ct, "application/x-www-form-urlencoded", 33) != 0)
		return 0;
	return sim_parse_form(c->req->body, c->req->body_len, 1, &c->params);
}

static int unfiltered(const ec2_ctx *c)
{
	for (size_t i = 0; i < c->params.n; i++) {
		const char *k = c->params.keys[i];
		if (strncmp(k, "Filter.", 7) == 0 ||
		    strncmp(k, "InstanceId.", 11) == 0 ||
		    strcmp(k, "MaxResults") == 0 || strcmp(k, "NextToken") == 0)
			return 0;
	}
	return 1;
}

void sim_ec2_handle(sim_req *req, sim_resp *resp)
{
	ec2_ctx c;
	const action *act = NULL;
	const char *bucket;
	int64_t retry = 0;
	memset(&c, 0, sizeof(c));
	c.req = req;
	c.resp = resp;
	sim_resp_header(resp, "x-amzn-RequestId", req->request_id);
	sim_resp_header(resp, "Server", "AmazonEC2");
	if (req->bad_query || collect_params(&c) != 0) {
		c.now = sim_now();
		ec2_error(&c, 400, "MalformedQueryString",
		          "The query string contains a malformed "
		          "percent-escape or too many parameters.");
		goto out;
	}
	if (req->body_too_large) {
		ec2_error(&c, 413, "RequestEntityTooLarge",
		          "The request body is larger than %lld bytes.",
		          (long long)sim_g.sc.max_body);
		goto out;
	}
	c.action = gb_kvs_get(&c.params, "Action");
	for (size_t i = 0; c.action && i < GB_ARRAY_LEN(actions); i++)
		if (strcmp(actions[i].name, c.action) == 0)
			act = &actions[i];
	req->op = act ? act->name : "unknown";
	if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "POST") != 0) {
		c.now = sim_now();
		ec2_error(&c, 405, "UnsupportedHttpVerb",
		          "The HTTP verb %s is not supported; use GET or POST.",
		          req->method);
		goto out;
	}
	sim_latency(SIM_AWS, req->op);
	sim_lock();
	c.now = sim_now();
	sim_count_call(SIM_AWS, req->op);
	if (authenticate(&c) != 0) {
		sim_count_fault(SIM_AWS, SIM_F_AUTH);
		sim_unlock();
		goto out;
	}
	if (!act) {
		ec2_error(&c, 400, "InvalidAction",
		          "The action %s is not valid for this web service.",
		          c.action ? c.action : "(none)");
		sim_unlock();
		goto out;
	}
	if (!gb_kvs_get(&c.params, "Version")) {
		ec2_error(&c, 400, "MissingParameter",
		          "The request must contain the parameter Version");
		sim_unlock();
		goto out;
	}
	bucket = act->bucket;
	if (act->fn == ec2_describe_instances && unfiltered(&c))
		bucket = "DescribeUnfiltered";
	if (sim_throttle(SIM_AWS, c.region, bucket, 1, &retry, NULL)) {
		ec2_error(&c, 503, "RequestLimitExceeded", "Request limit "
		          "exceeded.");
		sim_unlock();
		goto out;
	}
	if (sim_fault_error(SIM_AWS, act->name)) {
		ec2_error(&c, 500, "InternalError",
		          "An internal error has occurred");
		sim_unlock();
		goto out;
	}
	act->fn(&c);
	if (act->mutating && resp->status == 200 &&
	    sim_fault_lost(SIM_AWS, act->name))
		ec2_error(&c, 500, "InternalError",
		          "An internal error has occurred");
	sim_unlock();
out:
	gb_kvs_free(&c.params);
}
