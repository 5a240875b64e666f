/* lambda_describe.c -- describe: one GET /instances (every region, not
 * paged) filtered here by ids, or by the gpubroker pool / broker / token
 * tags (from the instance's tags, else read back from its name), and by
 * region when the request names one.  Terminated instances are reported
 * only when asked for. */
#include <string.h>

#include "drvc_util.h"
#include "lambda.h"

typedef struct dcol {
	const gb_describe_req *req;
	gb_instance_cb emit;
	void *ud;
} dcol;

static int tag_is(const lambda_inst *inst, const char *key, const char *want)
{
	const char *v;
	if (!want || !*want)
		return 1;
	v = lambda_inst_tag(inst, key);
	return v && strcmp(v, want) == 0;
}

static int match(const gb_describe_req *r, const lambda_inst *inst)
{
	if (r->region && *r->region &&
	    (!inst->region || strcmp(inst->region, r->region) != 0))
		return 0;
	if (!r->include_terminated &&
	    lambda_state(inst->status) == GB_INST_TERMINATED)
		return 0;
	if (r->nids) {
		for (size_t i = 0; i < r->nids; i++)
			if (r->ids[i] && strcmp(r->ids[i], inst->id) == 0)
				return 1;
		return 0;
	}
	return tag_is(inst, GB_TAG_POOL, r->pool) &&
	       tag_is(inst, GB_TAG_BROKER, r->broker_id) &&
	       tag_is(inst, GB_TAG_TOKEN, r->token);
}

static int dfn(void *ud, const lambda_inst *inst)
{
	dcol *d = ud;
	if (!match(d->req, inst))
		return 0;
	return lambda_emit_inst(inst, NULL, d->emit, d->ud) != 0;
}

int lambda_describe(void *ctx, const gb_describe_req *req,
                    gb_instance_cb emit, void *ud, gb_error *err)
{
	lambda_ctx *c = ctx;
	dcol d = {req, emit, ud};
	if (lambda_require(c, err) != 0)
		return -1;
	if (!req->nids && !(req->pool && *req->pool) &&
	    !(req->broker_id && *req->broker_id)) {
		drvc_err(err, GB_ERR_INVALID, 0, "DescribeFilterMissing",
		         "Lambda describe needs ids, a pool or a broker id");
		return -1;
	}
	return lambda_list(c, dfn, &d, err);
}
