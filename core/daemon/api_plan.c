/* api_plan.c -- POST /v1/plan: plans for the pools of a spec file, with
 * their work and their answer bounded (a viewer may ask, so a request
 * must not be able to take the daemon's memory or time):
 *   - at most daemon.plan_max_pools pools in one request (413);
 *   - each token plans at most daemon.plan_per_minute pools a minute
 *     (429 with Retry-After);
 *   - limit= (candidates per pool) at most GB_API_PLAN_MAX_LIMIT, and
 *     refusals=N lists only the first N offers each rule refused;
 *   - the answer is written pool by pool into one buffer (each pool's
 *     JSON tree is freed as soon as it is written), and stops with 413
 *     once it would pass daemon.plan_max_answer bytes.
 * The answer's buffer is large: api_http.c gives its memory back to the
 * system once it is sent (GB_API_TRIM_AT). */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "engine.h"
#include "plan.h"
#include "plan_json.h"

#define GB_API_PLAN_MAX_LIMIT 1000

typedef struct capped {
	gb_buf *b;
	size_t cap;
	int over;
} capped;

/* json_dump_callback's sink: appends until the cap, then stops the
 * dump (so one huge pool costs no more than the cap either). */
static int put_capped(const char *p, size_t n, void *ud)
{
	capped *c = ud;
	if (c->b->len + n > c->cap) {
		c->over = 1;
		return -1;
	}
	gb_buf_append(c->b, p, n);
	return 0;
}

/* Plans pool i of set into its report; NULL after setting the 422.
 * earlier: the request's pools before it, counted by apply's quota and
 * budget checks as if applied (s is added). */
static json_t *plan_one(gb_api_req *r, const gb_pool_spec *s, size_t limit,
                        int explain, size_t per_rule,
                        gb_engine_batch *earlier)
{
	gb_plan p;
	gb_plan_opts po;
	char err[1024];
	int failed = 0;
	json_t *j;
	char *refusal, *cooling;
	gb_engine_cool cool = {r->d->store, 0};
	gb_policy_set *ps = gb_plan_load_policies(r->d->cfg, s, NULL, &failed,
	                                          err, sizeof(err));
	if (failed) {
		gb_api_error(r, 422, "PolicyError", "%s", err);
		return NULL;
	}
	memset(&po, 0, sizeof(po));
	po.policies = ps;
	po.team = gb_config_team(r->d->cfg, s->team);
	po.unavailable = gb_engine_unavailable;
	po.unavailable_ud = &cool;
	if (gb_plan_pool(s, r->d->app.rt.cat, &po, &p, err, sizeof(err)) != 0) {
		gb_api_error(r, 422, "PolicyError", "%s", err);
		j = NULL;
	} else {
		j = gb_plan_report_n(&p, limit, explain, per_rule);
		json_object_set_new(j, "warnings", gb_spec_warnings(
		                            &r->d->app.rt.drivers,
		                            r->d->app.rt.cat, s, &p));
		/* what apply would refuse (quota, budget), plan says too */
		refusal = gb_engine_check_plan(r->d->eng, r->d->cfg, s, &p,
		                               earlier);
		gb_engine_batch_add(earlier, s, &p);
		json_object_set_new(j, "apply_refused",
		                    refusal ? json_string(refusal) : json_null());
		/* when the pool would be tried again */
		cooling = gb_engine_cooldown_msg(s, r->d->app.rt.cat, &po, &p,
		                                 &cool);
		if (cooling)
			json_object_set_new(j, "no_candidate", json_string(cooling));
		free(refusal);
		free(cooling);
	}
	gb_plan_free(&p);
	gb_policy_set_free(ps);
	return j;
}

/* 1 when q (a query parameter) is absent or an integer in [lo, hi]
 * (into *out); else 0 after the 400. */
static int query_int(gb_api_req *r, const char *key, int64_t lo, int64_t hi,
                     int64_t *out)
{
	const char *q = gb_api_query(r, key);
	if (!q)
		return 1;
	if (gb_parse_int64(q, out) == 0 && *out >= lo && *out <= hi)
		return 1;
	gb_api_error(r, 400, "BadQuery", "%s is an integer from %lld to %lld",
	             key, (long long)lo, (long long)hi);
	return 0;
}

void gb_api_plan(gb_api_req *r)
{
	const gb_config *cfg = r->d->cfg;
	int explain = gb_api_query(r, "explain") != NULL, retry = 0;
	int64_t limit = 20, per_rule = 0;
	gb_spec_set set;
	gb_engine_batch earlier = GB_ENGINE_BATCH_INIT;
	gb_buf out = GB_BUF_INIT;
	capped c;
	char *who;
	if (!query_int(r, "limit", 1, GB_API_PLAN_MAX_LIMIT, &limit) ||
	    !query_int(r, "refusals", 0, 1000000, &per_rule))
		return;
	if (gb_api_body_spec(r, &set) != 0)
		return;
	if (set.n > (size_t)cfg->plan_max_pools) {
		gb_api_error(r, 413, "TooManyPools",
		             "this request plans %zu pools; one plan request "
		             "may hold at most %d (daemon.plan_max_pools): send "
		             "the pools in smaller files, or one at a time (as "
		             "'gpubroker plan -f FILE' does)", set.n,
		             cfg->plan_max_pools);
		gb_spec_set_free(&set);
		return;
	}
	/* each token's pools a minute: a budget apart from its reconciles */
	who = gb_xasprintf("plan\x1f%s", r->actor);
	/* (a request never costs more than a whole minute's budget, so one
	 * of plan_max_pools pools fits however the two are set) */
	if (r->d->srv &&
	    !gb_api_token_take(gb_api_srv_limits(r->d), who, cfg->plan_per_minute,
	                       set.n < (size_t)cfg->plan_per_minute
	                               ? (int)set.n
	                               : cfg->plan_per_minute,
	                       &retry)) {
		r->retry_after_s = retry;
		gb_api_error(r, 429, "RateLimited",
		             "token '%s' may plan %d pools a minute "
		             "(daemon.plan_per_minute) and this request has %zu; "
		             "retry in %d s", r->actor, cfg->plan_per_minute,
		             set.n, retry);
		free(who);
		gb_spec_set_free(&set);
		return;
	}
	free(who);
	c.b = &out;
	c.cap = (size_t)cfg->plan_max_answer;
	c.over = 0;
	gb_buf_puts(&out, "{\"plans\":[");
	for (size_t i = 0; i < set.n; i++) {
		json_t *j = plan_one(r, &set.pools[i], (size_t)limit, explain,
		                     (size_t)per_rule, &earlier);
		if (!j)
			break;
		if (i)
			gb_buf_putc(&out, ',');
		json_dump_callback(j, put_capped, &c,
		                   JSON_COMPACT |
		                   JSON_REAL_PRECISION(GB_JSON_DIGITS));
		json_decref(j);
		if (c.over) {
			gb_api_error(r, 413, "AnswerTooLarge",
			             "the plan answer would be larger than %lld "
			             "bytes (daemon.plan_max_answer) at pool %zu of "
			             "%zu (%s); ask for less: fewer pools at once, a "
			             "smaller limit= (now %lld candidates a pool), "
			             "refusals=N (the first N offers each rule "
			             "refused) or no explain",
			             (long long)cfg->plan_max_answer, i + 1, set.n,
			             set.pools[i].name, (long long)limit);
			break;
		}
	}
	if (!r->status) {
		gb_buf_puts(&out, "]}");
		r->text_len = out.len;
		r->text = gb_buf_take(&out);
		r->content_type = "application/json";
		r->status = 200;
	}
	{
		/* a refused answer's buffer (an answer's is freed once sent) */
		size_t big = out.cap;
		gb_buf_free(&out);
		gb_spec_set_free(&set);
		gb_engine_batch_free(&earlier);
		gb_api_give_back(big);
	}
}
