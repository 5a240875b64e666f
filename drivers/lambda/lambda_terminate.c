/* lambda_terminate.c -- POST /instance-operations/terminate with every
 * id in one request (API.md, "Terminate").  Idempotent: when Lambda
 * refuses the batch because an id is unknown or already terminated, the
 * instances are listed and the request repeated with those still alive;
 * none alive is success. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "drvc_mem.h"
#include "drvc_util.h"
#include "lambda.h"

static int post_terminate(lambda_ctx *c, const char *const *ids, size_t n,
                          gb_error *err)
{
	json_t *body = json_object(), *arr = json_array();
	gb_http_resp resp;
	char *s;
	int rc;
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, json_string(ids[i]));
	json_object_set_new(body, "instance_ids", arr);
	s = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(body);
	if (!s)
		abort();
	rc = lambda_api(c, "POST", "/instance-operations/terminate", s,
	                LAMBDA_RATE_API, 0, "terminate", &resp, err);
	c->host->http_free(c->host->ctx, &resp);
	free(s);
	return rc;
}

typedef struct alive {
	const char **want;
	size_t nwant;
	const char **keep;
	size_t nkeep;
} alive;

static int alive_fn(void *ud, const lambda_inst *inst)
{
	alive *a = ud;
	gb_instance_state st = lambda_state(inst->status);
	if (st == GB_INST_TERMINATED || st == GB_INST_STOPPING)
		return 0;
	for (size_t i = 0; i < a->nwant; i++)
		if (strcmp(a->want[i], inst->id) == 0) {
			a->keep[a->nkeep++] = a->want[i];
			break;
		}
	return 0;
}

int lambda_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                     gb_error *err)
{
	lambda_ctx *c = ctx;
	const char **ids;
	size_t m = 0;
	alive a;
	int rc;

	if (lambda_require(c, err) != 0)
		return -1;
	ids = drvc_xcalloc(n ? n : 1, sizeof(*ids));
	for (size_t i = 0; i < n; i++) {
		int dup = 0;
		if (!refs[i].id || !*refs[i].id)
			continue;
		for (size_t j = 0; j < m && !dup; j++)
			dup = strcmp(ids[j], refs[i].id) == 0;
		if (!dup)
			ids[m++] = refs[i].id;
	}
	if (m == 0) {
		free(ids);
		return 0;
	}
	rc = post_terminate(c, ids, m, err);
	if (rc == 0 || (err->cls != GB_ERR_NOT_FOUND &&
	                err->cls != GB_ERR_INVALID)) {
		free(ids);
		return rc;
	}
	/* an unknown or already terminated id: end those still alive */
	memset(&a, 0, sizeof(a));
	a.want = ids;
	a.nwant = m;
	a.keep = drvc_xcalloc(m, sizeof(*a.keep));
	rc = lambda_list(c, alive_fn, &a, err);
	if (rc == 0 && a.nkeep > 0) {
		rc = post_terminate(c, a.keep, a.nkeep, err);
		if (rc != 0 && err->cls == GB_ERR_NOT_FOUND) {
			memset(err, 0, sizeof(*err));
			rc = 0; /* gone meanwhile */
		}
	} else if (rc == 0) {
		memset(err, 0, sizeof(*err));
	}
	free(a.keep);
	free(ids);
	return rc;
}
