/*
 * aws_describe.c -- describe (by ids, or by pool/broker/token tags with
 * paging) and terminate (grouped by region, idempotent).
 *
 * EC2 is eventually consistent: an instance launched a moment ago may draw
 * InvalidInstanceID.NotFound from a describe by id, and an instance that
 * is long gone draws the same from terminate.  EC2 fails the whole call
 * then, naming the missing ids in the message; the driver drops those ids
 * (describe: "not visible yet", emits nothing for them; terminate:
 * "already gone", success) and repeats the call for the rest.  When the
 * message names none of them, it falls back to one call per id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws.h"
#include "aws_ec2.h"
#include "aws_util.h"
#include "drvc_util.h"

#define DESCRIBE_IDS_PER_CALL 200
#define TERMINATE_IDS_PER_CALL 1000
#define MAX_PAGES 10000

typedef struct filt {
	gb_instance_cb emit;
	void *ud;
	const char *token;      /* client-side token filter (describe by ids) */
	int include_terminated;
	int stopped;            /* the caller's emit asked to stop */
} filt;

static int filt_emit(void *ud, const gb_instance *in)
{
	filt *f = ud;
	if (!f->include_terminated && in->state == GB_INST_TERMINATED)
		return 0;
	if (f->token) {
		int ok = 0;
		for (size_t i = 0; i < in->ntags; i++)
			if (strcmp(in->tags[i].key, GB_TAG_TOKEN) == 0 &&
			    strcmp(in->tags[i].value, f->token) == 0)
				ok = 1;
		if (!ok)
			return 0;
	}
	if (f->emit(f->ud, in)) {
		f->stopped = 1;
		return 1;
	}
	return 0;
}

/* One DescribeInstances / TerminateInstances call for ids[i] with
 * !gone[i].  Returns 0, or -1 with err. */
static int call_ids(aws_ctx *c, const char *region, const char *action,
                    const char *const *ids, const unsigned char *gone,
                    size_t n, filt *f, gb_error *err)
{
	const char **live = aws_xcalloc(n, sizeof(*live));
	size_t nl = 0;
	gb_http_resp resp;
	char *body;
	int rc;
	for (size_t i = 0; i < n; i++)
		if (!gone[i])
			live[nl++] = ids[i];
	if (nl == 0) {
		free(live);
		return 0;
	}
	body = f ? aws_ec2_describe_body(live, nl, NULL, NULL, NULL, NULL)
	         : aws_ec2_terminate_body(live, nl);
	free(live);
	rc = aws_call(c, region, action, body, 0, &resp, err);
	free(body);
	if (rc == 0)
		rc = aws_check_answer(c, action, &resp, err);
	if (rc == 0) {
		if (f)
			rc = aws_ec2_parse_instances(resp.body, resp.body_len,
			                             "DescribeInstancesResponse",
			                             region, filt_emit, f, NULL,
			                             err) < 0
			             ? -1
			             : 0;
		else
			rc = aws_ec2_parse_terminate(resp.body, resp.body_len,
			                             err) < 0
			             ? -1
			             : 0;
	}
	c->host->http_free(c->host->ctx, &resp);
	return rc;
}

static int is_not_found(const gb_error *err)
{
	return err->cls == GB_ERR_NOT_FOUND &&
	       strcmp(err->code, "InvalidInstanceID.NotFound") == 0;
}

/* ids[0..n) in one region, with the NotFound handling described above.
 * f != NULL: describe; f == NULL: terminate. */
static int ids_with_retry(aws_ctx *c, const char *region, const char *action,
                          const char *const *ids, size_t n, filt *f,
                          gb_error *err)
{
	unsigned char *gone = aws_xcalloc(n, 1);
	int rc = -1;
	for (size_t round = 0; round <= n; round++) {
		if (call_ids(c, region, action, ids, gone, n, f, err) == 0) {
			rc = 0;
			goto out;
		}
		if (!is_not_found(err))
			goto out;
		if (aws_ec2_missing_ids(err->message, ids, n, gone) == 0)
			break; /* the message named none of ours */
	}
	/* one id per call: a missing one is skipped */
	for (size_t i = 0; i < n; i++) {
		unsigned char *one = aws_xcalloc(n, 1);
		memset(one, 1, n);
		one[i] = 0;
		if (gone[i]) {
			free(one);
			continue;
		}
		rc = call_ids(c, region, action, ids, one, n, f, err);
		free(one);
		if (rc != 0 && !is_not_found(err))
			goto out;
		if (f && f->stopped)
			break;
	}
	rc = 0;
out:
	if (rc == 0)
		memset(err, 0, sizeof(*err));
	free(gone);
	return rc;
}

static int describe_by_tags(aws_ctx *c, const gb_describe_req *req, filt *f,
                            gb_error *err)
{
	char *next = NULL;
	for (int page = 0; page < MAX_PAGES; page++) {
		gb_http_resp resp;
		char *body = aws_ec2_describe_body(NULL, 0, req->pool,
		                                   req->broker_id, req->token,
		                                   next);
		char *nn = NULL;
		int rc = aws_call(c, req->region, "DescribeInstances", body, 0,
		                  &resp, err);
		free(body);
		if (rc == 0)
			rc = aws_check_answer(c, "DescribeInstances", &resp,
			                      err);
		if (rc == 0 &&
		    aws_ec2_parse_instances(resp.body, resp.body_len,
		                            "DescribeInstancesResponse",
		                            req->region, filt_emit, f, &nn,
		                            err) < 0)
			rc = -1;
		c->host->http_free(c->host->ctx, &resp);
		if (rc != 0) {
			free(next);
			return -1;
		}
		if (nn && next && strcmp(nn, next) == 0) {
			drvc_err(err, GB_ERR_INVALID, 0, "PagingLoop",
			         "EC2 DescribeInstances in %s returned the same "
			         "nextToken twice", req->region);
			free(nn);
			free(next);
			return -1;
		}
		free(next);
		next = nn;
		if (!next || f->stopped)
			break;
	}
	if (next) {
		free(next);
		if (!f->stopped) {
			drvc_err(err, GB_ERR_INVALID, 0, "PagingLoop",
			         "EC2 DescribeInstances in %s did not finish "
			         "within %d pages", req->region, MAX_PAGES);
			return -1;
		}
	}
	return 0;
}

int aws_describe(void *ctx, const gb_describe_req *req, gb_instance_cb emit,
                 void *ud, gb_error *err)
{
	aws_ctx *c = ctx;
	filt f;
	if (!req || !req->region || !*req->region) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidRequest",
		         "aws describe: a region is required");
		return -1;
	}
	if (req->nids == 0 && !(req->pool && *req->pool) &&
	    !(req->broker_id && *req->broker_id)) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidRequest",
		         "aws describe: give instance ids, a pool or a broker "
		         "id (the driver never lists a whole account)");
		return -1;
	}
	if (!c->creds.have) {
		aws_no_creds_error(c, "DescribeInstances", err);
		return -1;
	}
	memset(&f, 0, sizeof(f));
	f.emit = emit;
	f.ud = ud;
	f.include_terminated = req->include_terminated;
	if (req->nids == 0)
		return describe_by_tags(c, req, &f, err);
	f.token = req->token && *req->token ? req->token : NULL;
	for (size_t i = 0; i < req->nids && !f.stopped;
	     i += DESCRIBE_IDS_PER_CALL) {
		size_t n = req->nids - i < DESCRIBE_IDS_PER_CALL
		                   ? req->nids - i
		                   : DESCRIBE_IDS_PER_CALL;
		for (size_t k = 0; k < n; k++)
			if (!req->ids[i + k] || !*req->ids[i + k]) {
				drvc_err(err, GB_ERR_INVALID, 0,
				         "InvalidRequest", "aws describe: "
				         "instance id %zu is empty", i + k + 1);
				return -1;
			}
		if (ids_with_retry(c, req->region, "DescribeInstances",
		                   req->ids + i, n, &f, err) != 0)
			return -1;
	}
	return 0;
}

int aws_terminate_ids(aws_ctx *c, const char *region, const char *const *ids,
                      size_t n, gb_error *err)
{
	if (!c->creds.have) {
		aws_no_creds_error(c, "TerminateInstances", err);
		return -1;
	}
	for (size_t i = 0; i < n; i += TERMINATE_IDS_PER_CALL) {
		size_t k = n - i < TERMINATE_IDS_PER_CALL ? n - i
		                                          : TERMINATE_IDS_PER_CALL;
		if (c->host->log)
			c->host->log(c->host->ctx, GB_LOG_INFO,
			             "aws: terminating %zu instance(s) in %s", k,
			             region);
		if (ids_with_retry(c, region, "TerminateInstances", ids + i, k,
		                   NULL, err) != 0)
			return -1;
	}
	return 0;
}

int aws_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                  gb_error *err)
{
	aws_ctx *c = ctx;
	const char **ids;
	unsigned char *done;
	int rc = 0;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!refs[i].id || !*refs[i].id || !refs[i].region ||
		    !*refs[i].region) {
			drvc_err(err, GB_ERR_INVALID, 0, "InvalidRequest",
			         "aws terminate: instance %zu needs an id and a "
			         "region", i + 1);
			return -1;
		}
	ids = aws_xcalloc(n, sizeof(*ids));
	done = aws_xcalloc(n, 1);
	/* one batch per region, in the order regions first appear */
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t k = 0;
		if (done[i])
			continue;
		for (size_t j = i; j < n; j++)
			if (!done[j] &&
			    strcmp(refs[j].region, refs[i].region) == 0) {
				ids[k++] = refs[j].id;
				done[j] = 1;
			}
		rc = aws_terminate_ids(c, refs[i].region, ids, k, err);
	}
	free(ids);
	free(done);
	return rc;
}
