/* test_plan.c -- the planner (core/plan/plan.c) on a small hand-made catalog
 * whose answers can be worked out by hand: every C filter with its
 * refusal kind and text, ranking (capacity order, then price or policy
 * score), the shipped gdpr and data-locality policies (real Lua, from
 * $GB_SRC/policies), the engine's unavailability hook, the no-candidate
 * summary, and the decision record (hashes, every refusal). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "catalog.h"
#include "plan.h"
#include "policy.h"
#include "spec.h"
#include "util.h"

/* ------------------------------------------------------------ fixtures */

typedef struct row {
	const char *region, *zone, *type, *model;
	int gpus;
	gb_capacity cap;
	double price;
} row;

/* 1 x A10G g5.xlarge unless said otherwise; prices per instance-hour. */
static const row ROWS[] = {
	{"us-east-1", "us-east-1a", "g5.xlarge", "A10G", 1, GB_CAPACITY_ON_DEMAND, 1.00},
	{"us-east-1", "us-east-1a", "g5.xlarge", "A10G", 1, GB_CAPACITY_SPOT, 0.40},
	{"eu-west-1", "eu-west-1a", "g5.xlarge", "A10G", 1, GB_CAPACITY_ON_DEMAND, 1.20},
	{"eu-west-1", "eu-west-1a", "g5.xlarge", "A10G", 1, GB_CAPACITY_SPOT, 0.50},
	{"eu-west-2", "eu-west-2a", "g5.xlarge", "A10G", 1, GB_CAPACITY_ON_DEMAND, 1.10},
	{"eu-central-1", "eu-central-1a", "g5.xlarge", "A10G", 1, GB_CAPACITY_ON_DEMAND, 1.30},
	{"eu-north-1", "eu-north-1a", "g5.xlarge", "A10G", 1, GB_CAPACITY_ON_DEMAND, 1.05},
	{"ap-northeast-1", "ap-northeast-1a", "g5.xlarge", "A10G", 1, GB_CAPACITY_ON_DEMAND, 0.90},
	{"xx-nowhere-1", "xx-nowhere-1a", "g5.xlarge", "A10G", 1, GB_CAPACITY_ON_DEMAND, 0.50},
	{"us-east-1", "us-east-1a", "g6.xlarge", "L4", 1, GB_CAPACITY_ON_DEMAND, 0.80},
	{"us-east-1", "us-east-1a", "g5.12xlarge", "A10G", 4, GB_CAPACITY_ON_DEMAND, 5.67},
};
#define NROWS (sizeof(ROWS) / sizeof(ROWS[0]))

static gb_catalog *catalog(void)
{
	gb_catalog *c = gb_catalog_new();
	for (size_t i = 0; i < NROWS; i++) {
		gb_offer o;
		memset(&o, 0, sizeof(o));
		o.region = ROWS[i].region;
		o.zone = ROWS[i].zone;
		o.instance_type = ROWS[i].type;
		o.gpu_model = ROWS[i].model;
		o.gpu_count = ROWS[i].gpus;
		o.gpu_memory_gb = 24;
		o.vcpus = 4;
		o.ram_gb = 16;
		o.capacity = ROWS[i].cap;
		o.price_per_hour = ROWS[i].price;
		o.source = "test_plan.c";
		o.fetched_at = 1790000000;
		gb_catalog_add(c, "aws", &o);
	}
	return c;
}

/* A spec from YAML lines after the common head (name, team, gpu). */
static void spec_from(gb_spec_set *set, const char *extra)
{
	gb_diags d = GB_DIAGS_INIT;
	char *y = gb_xasprintf("pool:\n  name: p\n  team: research\n"
	                       "  gpu: {model: A10G}\n%s", extra);
	if (gb_spec_load_buf("test.yaml", y, strlen(y), NULL, set, &d) != 0) {
		gb_diags_print(&d, stderr);
		fail_msg("spec does not load:\n%s", y);
	}
	gb_diags_free(&d);
	free(y);
	assert_int_equal(set->n, 1);
}

static const char *src_dir(void)
{
	const char *s = getenv("GB_SRC");
	return s && *s ? s : ".";
}

/* The pool's policies, from the source tree; NULL when it names none. */
static gb_policy_set *policies(const gb_pool_spec *s)
{
	gb_policy_set *ps = NULL;
	gb_strv path = {0};
	char err[512];
	char *dir = gb_xasprintf("%s/policies", src_dir());
	if (!s->policies.n) {
		free(dir);
		return NULL;
	}
	gb_strv_push(&path, dir);
	free(dir);
	if (gb_policy_set_new(&ps, NULL, &s->policies, &path, NULL, err,
	                      sizeof(err)) != 0)
		fail_msg("policies: %s (is GB_SRC the source tree?)", err);
	gb_strv_free(&path);
	return ps;
}

typedef struct planned {
	gb_catalog *cat;
	gb_spec_set set;
	gb_policy_set *ps;
	gb_plan plan;
} planned;

static void plan_with(planned *t, const char *extra, gb_unavailable_fn un,
                      void *ud)
{
	gb_plan_opts o;
	char err[512];
	memset(t, 0, sizeof(*t));
	t->cat = catalog();
	spec_from(&t->set, extra);
	t->ps = policies(&t->set.pools[0]);
	memset(&o, 0, sizeof(o));
	o.policies = t->ps;
	o.unavailable = un;
	o.unavailable_ud = ud;
	if (gb_plan_pool(&t->set.pools[0], t->cat, &o, &t->plan, err,
	                 sizeof(err)) != 0)
		fail_msg("plan: %s", err);
	assert_int_equal(t->plan.considered, NROWS);
	/* every offer is either a candidate or refused, once */
	assert_int_equal(t->plan.ncands + t->plan.nrefusals, NROWS);
}

static void planned_free(planned *t)
{
	gb_plan_free(&t->plan);
	gb_policy_set_free(t->ps);
	gb_spec_set_free(&t->set);
	gb_catalog_free(t->cat);
}

/* "region/capacity" of candidate i, for order checks. */
static const char *cand(const planned *t, size_t i)
{
	static char buf[8][96];
	const gb_coffer *o;
	assert_true(i < t->plan.ncands);
	o = t->plan.cands[i].offer;
	snprintf(buf[i % 8], sizeof(buf[0]), "%s/%s", o->region,
	         gb_capacity_name(o->capacity));
	return buf[i % 8];
}

/* The refusal of the offer in `region` with `capacity`, or fail. */
static const gb_refusal *refusal_of(const planned *t, const char *region,
                                    const char *type, gb_capacity c)
{
	for (size_t i = 0; i < t->plan.nrefusals; i++) {
		const gb_coffer *o = t->plan.refusals[i].offer;
		if (strcmp(o->region, region) == 0 &&
		    strcmp(o->instance_type, type) == 0 && o->capacity == c)
			return &t->plan.refusals[i];
	}
	fail_msg("no refusal for %s %s", region, type);
	return NULL;
}

static void assert_refusal_text(const planned *t, const gb_refusal *r,
                                const char *needle)
{
	char *s = gb_plan_refusal_text(&t->plan, r);
	if (!strstr(s, needle))
		fail_msg("refusal text \"%s\" lacks \"%s\"", s, needle);
	free(s);
}

/* --------------------------------------------------------------- tests */

/* On-demand only, 2 instances: the C filters refuse what cannot serve and
 * the rest rank by the pool's price. */
static void test_filters_and_price_rank(void **state)
{
	planned t;
	(void)state;
	plan_with(&t, "  count: 2\n  capacity: [on-demand]\n", NULL, NULL);
	assert_int_equal(t.plan.ncands, 7);
	assert_string_equal(cand(&t, 0), "xx-nowhere-1/on-demand");
	assert_string_equal(cand(&t, 1), "ap-northeast-1/on-demand");
	assert_string_equal(cand(&t, 2), "us-east-1/on-demand");
	assert_string_equal(cand(&t, 3), "eu-north-1/on-demand");
	assert_string_equal(cand(&t, 4), "eu-west-2/on-demand");
	assert_string_equal(cand(&t, 5), "eu-west-1/on-demand");
	assert_string_equal(cand(&t, 6), "eu-central-1/on-demand");
	assert_true(t.plan.cands[1].pool_price > 1.79 &&
	            t.plan.cands[1].pool_price < 1.81);
	assert_false(t.plan.scored_by_policy);
	assert_int_equal(t.plan.counts[GB_REFUSE_GPU_MODEL], 1);
	assert_int_equal(t.plan.counts[GB_REFUSE_GPU_COUNT], 1);
	assert_int_equal(t.plan.counts[GB_REFUSE_CAPACITY], 2);
	assert_refusal_text(&t, refusal_of(&t, "us-east-1", "g6.xlarge",
	                                   GB_CAPACITY_ON_DEMAND), "L4");
	assert_refusal_text(&t, refusal_of(&t, "us-east-1", "g5.12xlarge",
	                                   GB_CAPACITY_ON_DEMAND), "4 GPUs");
	assert_refusal_text(&t, refusal_of(&t, "eu-west-1", "g5.xlarge",
	                                   GB_CAPACITY_SPOT), "spot");
	planned_free(&t);
}

/* Capacity order beats price: spot first (cheapest spot first), then
 * on-demand. */
static void test_capacity_order(void **state)
{
	planned t;
	(void)state;
	plan_with(&t, "  count: 1\n  capacity: [spot, on-demand]\n", NULL, NULL);
	assert_int_equal(t.plan.ncands, 9);
	assert_string_equal(cand(&t, 0), "us-east-1/spot");
	assert_string_equal(cand(&t, 1), "eu-west-1/spot");
	assert_string_equal(cand(&t, 2), "xx-nowhere-1/on-demand");
	assert_int_equal(t.plan.cands[0].cap_order, 0);
	assert_int_equal(t.plan.cands[2].cap_order, 1);
	planned_free(&t);
	/* the other way round: on-demand first although spot is cheaper */
	plan_with(&t, "  count: 1\n  capacity: [on-demand, spot]\n", NULL, NULL);
	assert_string_equal(cand(&t, 0), "xx-nowhere-1/on-demand");
	assert_string_equal(cand(&t, 7), "us-east-1/spot");
	assert_string_equal(cand(&t, 8), "eu-west-1/spot");
	planned_free(&t);
}

/* placement.compliance: [gdpr] keeps regions tagged gdpr (EU/EEA; the UK
 * is uk-gdpr); a region without facts cannot prove it and is refused. */
static void test_compliance_gdpr(void **state)
{
	planned t;
	(void)state;
	plan_with(&t, "  count: 1\n  capacity: [on-demand]\n"
	              "  placement: {compliance: [gdpr]}\n", NULL, NULL);
	assert_int_equal(t.plan.ncands, 3);
	assert_string_equal(cand(&t, 0), "eu-north-1/on-demand");
	assert_string_equal(cand(&t, 1), "eu-west-1/on-demand");
	assert_string_equal(cand(&t, 2), "eu-central-1/on-demand");
	assert_int_equal(t.plan.counts[GB_REFUSE_COMPLIANCE], 4);
	assert_refusal_text(&t, refusal_of(&t, "eu-west-2", "g5.xlarge",
	                                   GB_CAPACITY_ON_DEMAND), "gdpr");
	assert_refusal_text(&t, refusal_of(&t, "xx-nowhere-1", "g5.xlarge",
	                                   GB_CAPACITY_ON_DEMAND), "no region facts");
	planned_free(&t);
}

/* The shipped gdpr policy (Lua): EU/EEA soil only, each refusal with the
 * policy's own reason; the decision record names and hashes it. */
static void test_gdpr_policy(void **state)
{
	planned t;
	const gb_refusal *r;
	(void)state;
	plan_with(&t, "  count: 1\n  capacity: [on-demand]\n  policy: [gdpr]\n",
	          NULL, NULL);
	assert_int_equal(t.plan.ncands, 3);
	for (size_t i = 0; i < t.plan.ncands; i++)
		assert_string_equal(t.plan.cands[i].offer->rinfo->jurisdiction,
		                    "EU");
	assert_int_equal(t.plan.counts[GB_REFUSE_POLICY], 4);
	r = refusal_of(&t, "eu-west-2", "g5.xlarge", GB_CAPACITY_ON_DEMAND);
	assert_int_equal(r->kind, GB_REFUSE_POLICY);
	assert_non_null(strstr(r->reason, "UK jurisdiction, not EU/EEA"));
	r = refusal_of(&t, "xx-nowhere-1", "g5.xlarge", GB_CAPACITY_ON_DEMAND);
	assert_non_null(strstr(r->reason, "unknown region aws/xx-nowhere-1"));
	assert_int_equal(t.plan.policy_names.n, 1);
	assert_string_equal(t.plan.policy_names.v[0], "gdpr");
	assert_int_equal(strlen(t.plan.policy_hashes.v[0]), 64);
	planned_free(&t);
}

/* The shipped data-locality policy: nearest to the data first (its score
 * outweighs price), refused beyond 2000 km, or beyond the pool's own
 * maximum from a label. */
static void test_data_locality(void **state)
{
	planned t;
	const gb_refusal *r;
	(void)state;
	plan_with(&t, "  count: 1\n  capacity: [on-demand]\n"
	              "  placement: {data: {region: eu-west-1}}\n"
	              "  policy: [data-locality]\n", NULL, NULL);
	assert_true(t.plan.scored_by_policy);
	/* Dublin: London ~460 km, Frankfurt ~1090 km, Stockholm ~1630 km */
	assert_int_equal(t.plan.ncands, 4);
	assert_string_equal(cand(&t, 0), "eu-west-1/on-demand");
	assert_string_equal(cand(&t, 1), "eu-west-2/on-demand");
	assert_string_equal(cand(&t, 2), "eu-central-1/on-demand");
	assert_string_equal(cand(&t, 3), "eu-north-1/on-demand");
	assert_true(t.plan.cands[0].score < t.plan.cands[1].score);
	r = refusal_of(&t, "us-east-1", "g5.xlarge", GB_CAPACITY_ON_DEMAND);
	assert_int_equal(r->kind, GB_REFUSE_POLICY);
	assert_non_null(r->reason);
	planned_free(&t);

	plan_with(&t, "  count: 1\n  capacity: [on-demand]\n"
	              "  placement: {data: {region: eu-west-1}}\n"
	              "  labels: {max-data-distance-km: \"500\"}\n"
	              "  policy: [data-locality]\n", NULL, NULL);
	assert_int_equal(t.plan.ncands, 2);
	assert_string_equal(cand(&t, 1), "eu-west-2/on-demand");
	planned_free(&t);
}

/* limits.max_price_per_hour is for the whole pool (price x count). */
static void test_price_limit(void **state)
{
	planned t;
	(void)state;
	plan_with(&t, "  count: 2\n  capacity: [on-demand]\n"
	              "  limits: {max_price_per_hour: 2.05}\n", NULL, NULL);
	assert_int_equal(t.plan.ncands, 3); /* 1.00, 1.80, 2.00 */
	assert_string_equal(cand(&t, 2), "us-east-1/on-demand");
	assert_int_equal(t.plan.counts[GB_REFUSE_PRICE], 4);
	assert_refusal_text(&t, refusal_of(&t, "eu-north-1", "g5.xlarge",
	                                   GB_CAPACITY_ON_DEMAND),
	                    "limits.max_price_per_hour $2.05");
	planned_free(&t);
}

/* placement.regions globs. */
static void test_region_globs(void **state)
{
	planned t;
	(void)state;
	plan_with(&t, "  count: 1\n  capacity: [on-demand]\n"
	              "  placement: {regions: [\"eu-west-*\", ap-northeast-1]}\n",
	          NULL, NULL);
	assert_int_equal(t.plan.ncands, 3);
	assert_string_equal(cand(&t, 0), "ap-northeast-1/on-demand");
	assert_string_equal(cand(&t, 1), "eu-west-2/on-demand");
	assert_string_equal(cand(&t, 2), "eu-west-1/on-demand");
	assert_int_equal(t.plan.counts[GB_REFUSE_REGION], 4);
	planned_free(&t);
}

/* The engine's capacity cooldown: marked offers are refused with its
 * note, and the rest still rank. */
static int cooling(void *ud, const gb_coffer *o, char *why, size_t cap)
{
	int *calls = ud;
	(*calls)++;
	if (strcmp(o->zone, "us-east-1a") != 0)
		return 0;
	snprintf(why, cap, "InsufficientInstanceCapacity, until 13:45:02Z");
	return 1;
}

static void test_unavailable(void **state)
{
	planned t;
	int calls = 0;
	const gb_refusal *r;
	(void)state;
	plan_with(&t, "  count: 1\n  capacity: [spot, on-demand]\n", cooling,
	          &calls);
	assert_true(calls >= 9);
	assert_int_equal(t.plan.counts[GB_REFUSE_UNAVAILABLE], 2);
	assert_string_equal(cand(&t, 0), "eu-west-1/spot");
	r = refusal_of(&t, "us-east-1", "g5.xlarge", GB_CAPACITY_SPOT);
	assert_int_equal(r->kind, GB_REFUSE_UNAVAILABLE);
	assert_string_equal(r->reason,
	                    "InsufficientInstanceCapacity, until 13:45:02Z");
	planned_free(&t);
}

/* Nothing qualifies: the summary leads with the commonest reason and
 * gives an example of each. */
static void test_no_candidate(void **state)
{
	planned t;
	char *m;
	const char *a, *b;
	(void)state;
	plan_with(&t, "  count: 1\n  capacity: [on-demand]\n"
	              "  placement: {regions: [\"eu-*\"]}\n"
	              "  limits: {max_price_per_hour: 0.10}\n", NULL, NULL);
	assert_int_equal(t.plan.ncands, 0);
	m = gb_plan_no_candidate_msg(&t.plan);
	assert_non_null(strstr(m, "no offer qualifies for pool 'p'"));
	assert_non_null(strstr(m, "11 offers considered"));
	/* price 4 (the eu-* on-demand offers), region 3, capacity 2 (spot),
	 * gpu-count 1, gpu-model 1: commonest first */
	assert_int_equal(t.plan.counts[GB_REFUSE_PRICE], 4);
	assert_int_equal(t.plan.counts[GB_REFUSE_REGION], 3);
	a = strstr(m, "4 refused by price");
	b = strstr(m, "3 refused by region");
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a < b);
	b = strstr(m, "2 refused by capacity");
	assert_non_null(b);
	assert_true(a < b);
	assert_non_null(strstr(m, "over limits.max_price_per_hour $0.10"));
	free(m);
	/* the same order as a list; the tie (1 gpu-model, 1 gpu-count)
	 * in enum order */
	{
		gb_refusal_kind order[GB_REFUSE__COUNT];
		static const gb_refusal_kind want[] = {
			GB_REFUSE_PRICE, GB_REFUSE_REGION, GB_REFUSE_CAPACITY,
			GB_REFUSE_GPU_MODEL, GB_REFUSE_GPU_COUNT,
		};
		size_t n = gb_plan_refusal_order(&t.plan, order);
		assert_int_equal(n, sizeof(want) / sizeof(want[0]));
		for (size_t i = 0; i < n; i++)
			assert_int_equal(order[i], want[i]);
	}
	planned_free(&t);
}

/* The decision record as JSON: candidates, every refusal with --explain,
 * the catalog hash, the policies with their hashes. */
static void test_decision_json(void **state)
{
	planned t;
	json_t *j, *pol, *ref;
	(void)state;
	plan_with(&t, "  count: 1\n  capacity: [on-demand]\n  policy: [gdpr]\n",
	          NULL, NULL);
	j = gb_plan_to_json(&t.plan, 2, 1);
	assert_int_equal(json_array_size(json_object_get(j, "candidates")), 2);
	assert_int_equal(json_array_size(json_object_get(j, "refusals")),
	                 t.plan.nrefusals);
	assert_int_equal(json_integer_value(json_object_get(j,
	                                                     "offers_considered")),
	                 NROWS);
	assert_int_equal(json_integer_value(json_object_get(
	                         json_object_get(j, "refused"), "policy")),
	                 4);
	assert_int_equal(strlen(json_string_value(json_object_get(j,
	                                                           "catalog_sha256"))),
	                 64);
	pol = json_array_get(json_object_get(j, "policies"), 0);
	assert_string_equal(json_string_value(json_object_get(pol, "name")),
	                    "gdpr");
	assert_string_equal(json_string_value(json_object_get(pol, "sha256")),
	                    t.plan.policy_hashes.v[0]);
	ref = json_array_get(json_object_get(j, "refusals"), 0);
	assert_non_null(json_string_value(json_object_get(ref, "rule")));
	assert_non_null(json_string_value(json_object_get(ref, "reason")));
	json_decref(j);
	/* a stored decision's sample: the first 2 of each kind (4 policy
	 * refusals become 2; every kind with fewer keeps all of its own) */
	{
		json_t *all = gb_plan_refusals_json(&t.plan, 0);
		json_t *few = gb_plan_refusals_json(&t.plan, 2), *r;
		size_t i, npolicy = 0, want = 0;
		size_t per[GB_REFUSE__COUNT] = {0};
		assert_int_equal(json_array_size(all), t.plan.nrefusals);
		for (i = 0; i < t.plan.nrefusals; i++)
			per[t.plan.refusals[i].kind]++;
		for (i = 0; i < GB_REFUSE__COUNT; i++)
			want += per[i] < 2 ? per[i] : 2;
		assert_int_equal(json_array_size(few), want);
		assert_true(json_array_size(few) < json_array_size(all));
		json_array_foreach(few, i, r)
			npolicy += strcmp(json_string_value(json_object_get(r, "rule")),
			                  "gdpr") == 0;
		assert_int_equal(npolicy, 2);
		json_decref(all);
		json_decref(few);
	}
	planned_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filters_and_price_rank),
		cmocka_unit_test(test_capacity_order),
		cmocka_unit_test(test_compliance_gdpr),
		cmocka_unit_test(test_gdpr_policy),
		cmocka_unit_test(test_data_locality),
		cmocka_unit_test(test_price_limit),
		cmocka_unit_test(test_region_globs),
		cmocka_unit_test(test_unavailable),
		cmocka_unit_test(test_no_candidate),
		cmocka_unit_test(test_decision_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
