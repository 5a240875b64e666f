/* test_plan_room.c -- the planner and offers that say how many can be had
 * (gb_coffer.available, on-prem free nodes): a `colocate: none` pool's
 * first choice fills down the ranked candidates, each taking what it has
 * (plan JSON "placement", its price the parts' sum); a co-located pool
 * refuses an offer with fewer free than it needs (kind "room", with the
 * numbers), counting what the pool already holds there; a pool no
 * candidate has room for says how many are left over. */
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
#include "spec.h"
#include "util.h"

typedef struct row {
	const char *cloud, *region, *type;
	double price;
	int available;
} row;

/* The lab of `make run`: two free 4 x A100 nodes, then the cloud. */
static const row ROWS[] = {
	{"onprem", "demo-lab", "lab-4xa100", 4.40, 2},
	{"azure", "eastus", "Standard_NC96ads_A100_v4", 14.69, 0},
	{"azure", "westus", "Standard_NC96ads_A100_v4", 19.10, 0},
};

static gb_catalog *catalog(size_t nrows)
{
	gb_catalog *c = gb_catalog_new();
	for (size_t i = 0; i < nrows; i++) {
		gb_offer o;
		memset(&o, 0, sizeof(o));
		o.region = ROWS[i].region;
		o.zone = "";
		o.instance_type = ROWS[i].type;
		o.gpu_model = "A100-80GB";
		o.gpu_count = 4;
		o.gpu_memory_gb = 80;
		o.capacity = GB_CAPACITY_ON_DEMAND;
		o.price_per_hour = ROWS[i].price;
		o.source = "test_plan_room.c";
		o.available = ROWS[i].available;
		gb_catalog_add(c, ROWS[i].cloud, &o);
	}
	return c;
}

typedef struct planned {
	gb_catalog *cat;
	gb_spec_set set;
	gb_plan plan;
} planned;

static int held_two_onprem(void *ud, const gb_coffer *o)
{
	(void)ud;
	return strcmp(o->cloud, "onprem") == 0 ? 2 : 0;
}

/* count 4 of 4 x A100-80GB, colocate as given; opts may be NULL. */
static void plan_with(planned *t, size_t nrows, const char *colocate,
                      const gb_plan_opts *o)
{
	gb_diags d = GB_DIAGS_INIT;
	char err[512];
	char *y = gb_xasprintf("pool:\n  name: burst\n  team: research\n"
	                       "  count: 4\n  gpu: {model: A100-80GB, count: 4}\n"
	                       "  capacity: [on-demand]\n"
	                       "  placement: {colocate: %s}\n", colocate);
	memset(t, 0, sizeof(*t));
	t->cat = catalog(nrows);
	if (gb_spec_load_buf("burst.yaml", y, strlen(y), NULL, &t->set, &d) != 0) {
		gb_diags_print(&d, stderr);
		fail_msg("spec does not load:\n%s", y);
	}
	gb_diags_free(&d);
	free(y);
	if (gb_plan_pool(&t->set.pools[0], t->cat, o, &t->plan, err,
	                 sizeof(err)) != 0)
		fail_msg("plan: %s", err);
}

static void planned_free(planned *t)
{
	gb_plan_free(&t->plan);
	gb_spec_set_free(&t->set);
	gb_catalog_free(t->cat);
}

static void assert_part(json_t *parts, size_t i, int count, const char *cloud,
                        const char *region)
{
	json_t *p = json_array_get(parts, i);
	assert_non_null(p);
	assert_int_equal(json_integer_value(json_object_get(p, "count")), count);
	assert_string_equal(json_string_value(json_object_get(p, "cloud")), cloud);
	assert_string_equal(json_string_value(json_object_get(p, "region")),
	                    region);
}

/* colocate none: the two free lab nodes, then the cheapest cloud for the
 * other two; the pool's price is the parts' sum, not 4 x the lab's. */
static void test_none_fills_down_the_candidates(void **state)
{
	planned t;
	gb_plan_part parts[4];
	int unplaced = -1;
	double price = 0;
	size_t n;
	json_t *j, *pl;
	(void)state;
	plan_with(&t, 3, "none", NULL);
	assert_int_equal(t.plan.ncands, 3);
	assert_string_equal(t.plan.cands[0].offer->cloud, "onprem");
	n = gb_plan_first_choice(&t.plan, 4, parts, 4, &unplaced, &price);
	assert_int_equal(n, 2);
	assert_int_equal(parts[0].count, 2);
	assert_string_equal(parts[0].offer->cloud, "onprem");
	assert_int_equal(parts[1].count, 2);
	assert_string_equal(parts[1].offer->region, "eastus");
	assert_int_equal(unplaced, 0);
	assert_true(price > 38.17 && price < 38.19); /* 2 x 4.40 + 2 x 14.69 */
	/* fewer than the lab has: all there */
	n = gb_plan_first_choice(&t.plan, 1, parts, 4, &unplaced, &price);
	assert_int_equal(n, 1);
	assert_int_equal(parts[0].count, 1);
	assert_string_equal(parts[0].offer->cloud, "onprem");

	j = gb_plan_to_json(&t.plan, 10, 0);
	pl = json_object_get(j, "placement");
	assert_int_equal(json_array_size(pl), 2);
	assert_part(pl, 0, 2, "onprem", "demo-lab");
	assert_part(pl, 1, 2, "azure", "eastus");
	assert_true(json_real_value(json_object_get(j, "placement_price_per_hour")) >
	            38.17);
	assert_null(json_object_get(j, "unplaced"));
	/* the candidate says what it has */
	assert_int_equal(json_integer_value(json_object_get(
	                         json_array_get(json_object_get(j, "candidates"), 0),
	                         "available")),
	                 2);
	assert_null(json_object_get(
	        json_array_get(json_object_get(j, "candidates"), 1), "available"));
	json_decref(j);
	assert_int_equal(t.plan.counts[GB_REFUSE_ROOM], 0);
	planned_free(&t);
}

/* colocate zone/region: the lab cannot take a pool of 4 in one place */
static void test_colocated_refuses_short_offer(void **state)
{
	static const char *const modes[] = {"zone", "region"};
	(void)state;
	for (size_t m = 0; m < 2; m++) {
		planned t;
		char *txt, *want;
		json_t *j;
		plan_with(&t, 3, modes[m], NULL);
		assert_int_equal(t.plan.ncands, 2);
		assert_string_equal(t.plan.cands[0].offer->region, "eastus");
		assert_int_equal(t.plan.counts[GB_REFUSE_ROOM], 1);
		assert_int_equal(t.plan.nrefusals, 1);
		assert_int_equal(t.plan.refusals[0].kind, GB_REFUSE_ROOM);
		assert_string_equal(t.plan.refusals[0].offer->cloud, "onprem");
		txt = gb_plan_refusal_text(&t.plan, &t.plan.refusals[0]);
		want = gb_xasprintf("only 2 free; the pool needs 4 in one %s",
		                    modes[m]);
		assert_string_equal(txt, want);
		free(want);
		free(txt);
		assert_string_equal(gb_refusal_kind_name(GB_REFUSE_ROOM), "room");
		/* the whole pool on the best candidate */
		j = gb_plan_to_json(&t.plan, 10, 1);
		assert_int_equal(json_array_size(json_object_get(j, "placement")),
		                 1);
		assert_part(json_object_get(j, "placement"), 0, 4, "azure",
		            "eastus");
		assert_int_equal(json_integer_value(json_object_get(
		                         json_object_get(j, "refused"), "room")),
		                 1);
		json_decref(j);
		planned_free(&t);
	}
}

/* What the pool already holds at the place counts towards its room there
 * (a co-located lab pool of 2, scaled to 4 with 2 nodes free); a pool
 * that is to have fewer (scaled down) needs fewer. */
static void test_colocated_counts_held_and_need(void **state)
{
	planned t;
	gb_plan_opts o;
	(void)state;
	memset(&o, 0, sizeof(o));
	o.held = held_two_onprem;
	plan_with(&t, 3, "zone", &o);
	assert_int_equal(t.plan.counts[GB_REFUSE_ROOM], 0);
	assert_string_equal(t.plan.cands[0].offer->cloud, "onprem");
	planned_free(&t);

	memset(&o, 0, sizeof(o));
	o.need = 2;
	plan_with(&t, 3, "zone", &o);
	assert_int_equal(t.plan.counts[GB_REFUSE_ROOM], 0);
	assert_int_equal(t.plan.need, 2);
	planned_free(&t);

	memset(&o, 0, sizeof(o));
	o.need = 3;
	plan_with(&t, 3, "region", &o);
	assert_int_equal(t.plan.counts[GB_REFUSE_ROOM], 1);
	{
		char *txt = gb_plan_refusal_text(&t.plan, &t.plan.refusals[0]);
		assert_string_equal(txt, "only 2 free; the pool needs 3 in one "
		                         "region");
		free(txt);
	}
	planned_free(&t);
}

/* Only the lab: two have a place, two have none (said, not hidden). */
static void test_none_unplaced(void **state)
{
	planned t;
	json_t *j;
	(void)state;
	plan_with(&t, 1, "none", NULL);
	j = gb_plan_to_json(&t.plan, 10, 0);
	assert_int_equal(json_array_size(json_object_get(j, "placement")), 1);
	assert_part(json_object_get(j, "placement"), 0, 2, "onprem", "demo-lab");
	assert_int_equal(json_integer_value(json_object_get(j, "unplaced")), 2);
	json_decref(j);
	planned_free(&t);
}

/* Owned capacity (issue 41): with the default capacity order [spot,
 * on-demand], an owned on-demand node at $25.99/h still ranks above a
 * cloud spot offer at $2/h (it is already paid for); the same offer
 * not marked owned ranks after every spot offer. */
static void test_owned_ranks_first(void **state)
{
	gb_diags d = GB_DIAGS_INIT;
	gb_spec_set set;
	gb_catalog *c;
	gb_plan p;
	char err[512];
	const char *y = "pool:\n  name: lab\n  team: research\n  count: 1\n"
	                "  gpu: {model: A100-80GB, count: 4}\n";
	(void)state;
	for (int owned = 0; owned <= 1; owned++) {
		gb_offer o;
		c = gb_catalog_new();
		memset(&o, 0, sizeof(o));
		o.region = "lab";
		o.zone = "";
		o.instance_type = "4xA100-80GB";
		o.gpu_model = "A100-80GB";
		o.gpu_count = 4;
		o.gpu_memory_gb = 80;
		o.capacity = GB_CAPACITY_ON_DEMAND;
		o.price_per_hour = 25.99;
		o.source = "inventory";
		gb_catalog_add(c, "onprem", &o);
		o.region = "us-east-1";
		o.zone = "us-east-1a";
		o.instance_type = "p4de.24xlarge";
		o.capacity = GB_CAPACITY_SPOT;
		o.price_per_hour = 2.0;
		gb_catalog_add(c, "aws", &o);
		if (owned)
			gb_catalog_mark_owned(c, "onprem");
		assert_int_equal(gb_spec_load_buf("lab.yaml", y, strlen(y), NULL,
		                                  &set, &d), 0);
		assert_int_equal(gb_plan_pool(&set.pools[0], c, NULL, &p, err,
		                              sizeof(err)), 0);
		assert_int_equal(p.ncands, 2);
		assert_string_equal(p.cands[0].offer->cloud,
		                    owned ? "onprem" : "aws");
		gb_plan_free(&p);
		gb_spec_set_free(&set);
		gb_catalog_free(c);
	}
	gb_diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none_fills_down_the_candidates),
		cmocka_unit_test(test_colocated_refuses_short_offer),
		cmocka_unit_test(test_colocated_counts_held_and_need),
		cmocka_unit_test(test_none_unplaced),
		cmocka_unit_test(test_owned_ranks_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
