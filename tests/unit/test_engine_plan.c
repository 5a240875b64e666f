/* test_engine_plan.c -- the engine's plan of one operation
 * (core/engine/engine_plan.c) on a hand-made catalog of three offers and
 * a real SQLite store: a pool whose only obstacle is the failover
 * cooldowns is told apart from one no offer can match (no_match), even
 * when the offers in cooldown would be refused by a price limit or a
 * policy anyway; the one-line notes a pool short of instances carries
 * (status, events) for both; and a plan kept from a submit borrows the
 * converge's spec once taken, not the submit's, which is gone by then.
 * Permanent refusals (engine_refused.c): remembered per pool, spec and
 * cloud; a walk skips a cloud that refused the spec, without a driver
 * call, and says so as a refused note; a failed plan (a policy that
 * raises) is a refused note and one event. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine_int.h"
#include "util.h"

static char dir[64];

typedef struct fixture {
	gb_config cfg;
	gb_store *store;
	gb_catalog *cat;
	gb_engine *eng;
	gb_spec_set set;
} fixture;

/* three on-demand g5.xlarge (1 x A10G): $1.00, $1.10, $1.20 */
static const struct {
	const char *region, *zone;
	double price;
} ROWS[] = {
	{"us-east-1", "us-east-1a", 1.00},
	{"us-east-1", "us-east-1b", 1.10},
	{"eu-west-1", "eu-west-1a", 1.20},
};
#define NROWS (sizeof(ROWS) / sizeof(ROWS[0]))

/* dir/NAME.lua: a policy whose filter's body is body.  0 or -1. */
static int write_filter(const char *name, const char *body)
{
	char path[128];
	FILE *pol;
	snprintf(path, sizeof(path), "%s/%s.lua", dir, name);
	if (!(pol = fopen(path, "w")))
		return -1;
	fprintf(pol, "return { filter = function(req, offer)\n\t%s\nend }\n",
	        body);
	return fclose(pol) == 0 ? 0 : -1;
}

static int setup(void **state)
{
	fixture *f = gb_xcalloc(1, sizeof(*f));
	gb_engine_opts o;
	char path[128], err[512];
	strcpy(dir, "/tmp/gb-engplan-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	/* a policy that refuses everything, and one that raises */
	if (write_filter("refuse-all", "return false, \"nothing suits\"") ||
	    write_filter("raise", "error(\"the gate is broken\")"))
		return -1;
	snprintf(path, sizeof(path), "%s/state.db", dir);
	if (gb_store_open(path, &f->store, err, sizeof(err)) != 0) {
		fprintf(stderr, "open: %s\n", err);
		return -1;
	}
	f->cat = gb_catalog_new();
	for (size_t i = 0; i < NROWS; i++) {
		gb_offer of;
		memset(&of, 0, sizeof(of));
		of.region = ROWS[i].region;
		of.zone = ROWS[i].zone;
		of.instance_type = "g5.xlarge";
		of.gpu_model = "A10G";
		of.gpu_count = 1;
		of.gpu_memory_gb = 24;
		of.vcpus = 4;
		of.ram_gb = 16;
		of.capacity = GB_CAPACITY_ON_DEMAND;
		of.price_per_hour = ROWS[i].price;
		of.source = "test_engine_plan.c";
		of.fetched_at = 1790000000;
		gb_catalog_add(f->cat, "aws", &of);
	}
	memset(&o, 0, sizeof(o));
	o.cfg = &f->cfg;
	o.store = f->store;
	o.cat = f->cat;
	o.policy_dir = dir;
	f->eng = gb_engine_new(&o);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	char cmd[128];
	gb_spec_set_free(&f->set);
	gb_engine_free(f->eng);
	gb_catalog_free(f->cat);
	gb_store_close(f->store);
	free(f);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The pool "p": 1 x A10G on AWS, on demand, plus extra YAML lines. */
static const gb_pool_spec *spec(fixture *f, const char *extra)
{
	gb_diags d = GB_DIAGS_INIT;
	char *y = gb_xasprintf("pool:\n  name: p\n  team: research\n"
	                       "  gpu: {model: A10G}\n  capacity: [on-demand]\n"
	                       "  placement: {clouds: [aws]}\n%s", extra);
	gb_spec_set_free(&f->set);
	if (gb_spec_load_buf("test.yaml", y, strlen(y), NULL, &f->set, &d) != 0) {
		gb_diags_print(&d, stderr);
		fail_msg("spec does not load:\n%s", y);
	}
	gb_diags_free(&d);
	free(y);
	assert_int_equal(f->set.n, 1);
	return &f->set.pools[0];
}

/* Every offer cools down; the first ends in 60 s.  Returns that end. */
static int64_t cool_all(fixture *f)
{
	int64_t now = gb_now_ms() / 1000;
	for (size_t i = 0; i < NROWS; i++)
		assert_int_equal(gb_store_unavailable_mark(f->store, "aws",
		                                           ROWS[i].region,
		                                           ROWS[i].zone,
		                                           "g5.xlarge", "on-demand",
		                                           now + 60 + 30 * (int64_t)i,
		                                           "InsufficientInstanceCapacity"),
		                 0);
	return now + 60;
}

static void test_candidates(void **state)
{
	fixture *f = *state;
	gb_engine_plan ep;
	assert_int_equal(gb_engine__plan(f->eng, spec(f, ""), &ep), 0);
	assert_int_equal(ep.plan.ncands, NROWS);
	assert_int_equal(ep.no_match, 0);
	assert_int_equal(ep.cool_until_s, 0);
	gb_engine__plan_free(&ep);
}

/* Only cooldowns in the way: waiting, not no_match; the note names the
 * count, the error code and the first cooldown's end as the next try. */
static void test_cooldown_only(void **state)
{
	fixture *f = *state;
	gb_engine_plan ep;
	char when[32], *note, *want;
	int64_t first = cool_all(f);
	assert_int_equal(gb_engine__plan(f->eng, spec(f, ""), &ep), 0);
	assert_int_equal(ep.plan.ncands, 0);
	assert_int_equal(ep.plan.counts[GB_REFUSE_UNAVAILABLE], NROWS);
	assert_int_equal(ep.no_match, 0);
	assert_int_equal(ep.cool_until_s, first);
	note = gb_engine__cooldown_note(&ep);
	want = gb_xasprintf("no candidate: 3 offers refused by capacity "
	                    "cooldown (InsufficientInstanceCapacity); next "
	                    "attempt %s, when the first cooldown ends",
	                    gb_format_time(first, when, sizeof(when)));
	assert_string_equal(note, want);
	free(want);
	free(note);
	gb_engine__plan_free(&ep);
}

/* A price limit under every offer: no_match, whatever cools down. */
static void test_price_never(void **state)
{
	fixture *f = *state;
	gb_engine_plan ep;
	char *note;
	assert_int_equal(gb_engine__plan(f->eng, spec(f, "  limits: "
	                                           "{max_price_per_hour: 0.5}\n"),
	                                 &ep), 0);
	assert_int_equal(ep.plan.ncands, 0);
	assert_int_equal(ep.no_match, 1);
	note = gb_engine__no_match_note(&ep);
	assert_string_equal(note, "no offer qualifies (3 considered: 3 refused "
	                          "by price); tried again when the spec, the "
	                          "policies or the offers change");
	free(note);
	gb_engine__plan_free(&ep);
}

/* The $1.00 offer is cooling down, the others are over the limit: only
 * the cooldown stands in the way, so the pool waits. */
static void test_price_and_cooldown(void **state)
{
	fixture *f = *state;
	gb_engine_plan ep;
	cool_all(f);
	assert_int_equal(gb_engine__plan(f->eng, spec(f, "  limits: "
	                                           "{max_price_per_hour: 1.05}\n"),
	                                 &ep), 0);
	assert_int_equal(ep.plan.ncands, 0);
	assert_int_equal(ep.plan.counts[GB_REFUSE_UNAVAILABLE], 1);
	assert_int_equal(ep.plan.counts[GB_REFUSE_PRICE], 2);
	assert_int_equal(ep.no_match, 0);
	assert_true(ep.cool_until_s > 0);
	gb_engine__plan_free(&ep);
}

/* Every offer cools down, and a policy would refuse them all anyway:
 * no_match, and the plan's reasons are the policy's, not the cooldowns
 * (the refusals of a plan made without them). */
static void test_policy_never(void **state)
{
	fixture *f = *state;
	gb_engine_plan ep;
	char *msg;
	cool_all(f);
	assert_int_equal(gb_engine__plan(f->eng, spec(f, "  policy: "
	                                           "[refuse-all]\n"), &ep), 0);
	assert_int_equal(ep.rc, 0);
	assert_int_equal(ep.plan.ncands, 0);
	assert_int_equal(ep.no_match, 1);
	assert_int_equal(ep.cool_until_s, 0);
	assert_int_equal(ep.plan.counts[GB_REFUSE_UNAVAILABLE], 0);
	assert_int_equal(ep.plan.counts[GB_REFUSE_POLICY], NROWS);
	msg = gb_plan_no_candidate_msg(&ep.plan);
	assert_non_null(strstr(msg, "3 refused by policy"));
	assert_non_null(strstr(msg, "nothing suits"));
	free(msg);
	gb_engine__plan_free(&ep);
}

/* A submit's plan is kept for the converge; the converge's spec replaces
 * the submit's (freed by then) in it. */
static void test_kept_plan_spec(void **state)
{
	fixture *f = *state;
	gb_engine_plan ep, got;
	gb_pool_row row;
	gb_spec_set mine;
	gb_diags d = GB_DIAGS_INIT;
	const char *y = "pool:\n  name: p\n  team: research\n"
	                "  gpu: {model: A10G}\n  capacity: [on-demand]\n"
	                "  limits: {max_price_per_hour: 0.5}\n";
	char *msg;
	assert_int_equal(gb_spec_load_buf("a.yaml", y, strlen(y), NULL, &mine,
	                                  &d), 0);
	gb_diags_free(&d);
	assert_int_equal(gb_engine__plan(f->eng, &mine.pools[0], &ep), 0);
	memset(&row, 0, sizeof(row));
	row.name = (char *)"p";
	row.spec_hash = (char *)"h1";
	row.generation = 7;
	gb_engine__keep_plan(f->eng, &row, &ep);
	gb_spec_set_free(&mine); /* the submit's request ends */
	assert_int_equal(gb_engine__take_plan(f->eng, &row, spec(f, "  limits: "
	                                                       "{max_price_per_hour: 0.5}\n"),
	                                      &got), 1);
	assert_ptr_equal(got.plan.spec, &f->set.pools[0]);
	msg = gb_plan_no_candidate_msg(&got.plan);
	assert_non_null(strstr(msg, "no offer qualifies for pool 'p'"));
	free(msg);
	gb_engine__plan_free(&got);
}

static int events_of(fixture *f, const char *kind)
{
	gb_event_row *v;
	size_t n;
	int k = 0;
	assert_int_equal(gb_store_event_list(f->store, "p", 0, 0, 0, &v, &n), 0);
	for (size_t i = 0; i < n; i++)
		k += strcmp(v[i].kind, kind) == 0;
	gb_event_list_free(v, n);
	return k;
}

static void test_refusal_memory(void **state)
{
	fixture *f = *state;
	char key[65], other[65], *words = NULL;
	int64_t until = 0, until2 = 0;
	gb_error err;
	memset(&err, 0, sizeof(err));
	gb_error_set(&err, GB_ERR_INVALID, 400, "InvalidAMIID.Malformed",
	             "Invalid id: \"not-an-ami\"");
	gb_engine__spec_key(spec(f, "  image: {aws: not-an-ami}\n"), key);
	gb_engine__spec_key(spec(f, "  image: {aws: ami-12345678}\n"), other);
	assert_string_not_equal(key, other);
	assert_false(gb_engine__refused(f->eng, "p", key, "aws", &until, &words));
	/* new: to be said; the same again: said already */
	assert_int_equal(gb_engine__refuse(f->eng, "p", key, "aws", &err,
	                                   &until, &words), 0);
	assert_string_equal(words, "aws refused the request (invalid, "
	                    "InvalidAMIID.Malformed): Invalid id: \"not-an-ami\"");
	free(words);
	assert_true(until >= gb_now_ms() + GB_REFUSED_RETRY_MS - 5000);
	assert_int_equal(gb_engine__refuse(f->eng, "p", key, "aws", &err,
	                                   &until, &words), 1);
	free(words);
	assert_true(gb_engine__refused(f->eng, "p", key, "aws", &until2,
	                               &words));
	assert_true(until2 == until);
	free(words);
	/* another spec, pool or cloud is asked */
	assert_false(gb_engine__refused(f->eng, "p", other, "aws", &until, &words));
	assert_false(gb_engine__refused(f->eng, "q", key, "aws", &until, &words));
	assert_false(gb_engine__refused(f->eng, "p", key, "gcp", &until, &words));
	/* an apply forgets */
	gb_engine__forget_refusals(f->eng, "p");
	assert_false(gb_engine__refused(f->eng, "p", key, "aws", &until, &words));
	assert_false(gb_engine__note_refused("no zone could hold 2 x g5"));
	assert_true(gb_engine__note_refused(GB_NOTE_REFUSED "aws refused"));
	assert_false(gb_engine__note_refused(NULL));
}

/* A cloud that refused this spec is skipped without a call (no driver is
 * loaded here: a call would fail DriverNotReady), and the walk's message
 * is a refused note with the refusal's words and its next attempt. */
static void test_walk_skips_refused(void **state)
{
	fixture *f = *state;
	const gb_pool_spec *s = spec(f, "  image: {aws: not-an-ami}\n");
	gb_engine_plan ep;
	gb_error err;
	char key[65], msg[2048], *words;
	int64_t until, retry = 0;
	int placed = -1;
	memset(&err, 0, sizeof(err));
	gb_error_set(&err, GB_ERR_INVALID, 400, "InvalidAMIID.Malformed",
	             "Invalid id");
	gb_engine__spec_key(s, key);
	gb_engine__refuse(f->eng, "p", key, "aws", &err, &until, &words);
	free(words);
	assert_int_equal(gb_engine__plan(f->eng, s, &ep), 0);
	assert_int_equal(ep.plan.ncands, NROWS);
	assert_int_equal(gb_engine__place(f->eng, s, &ep, 1, 2, NULL, NULL,
	                                  NULL, NULL, &placed, msg, sizeof(msg),
	                                  &retry), -1);
	assert_int_equal(placed, 0);
	assert_non_null(strstr(msg, "pool p: " GB_NOTE_REFUSED "aws refused the "
	                       "request (invalid, InvalidAMIID.Malformed): "
	                       "Invalid id; next attempt "));
	assert_null(strstr(msg, "DriverNotReady"));
	assert_true(retry == until);
	assert_int_equal(events_of(f, "refused"), 0); /* said when refused */
	gb_engine__plan_free(&ep);
}

/* A plan that fails (a policy raised): a refused note with the policy's
 * words, retried after the backoff, and one event. */
static void test_plan_failure_is_refused(void **state)
{
	fixture *f = *state;
	const gb_pool_spec *s = spec(f, "  policy: [raise]\n");
	gb_engine_plan ep;
	char msg[2048];
	int64_t retry = 0;
	int placed = -1;
	assert_int_equal(gb_engine__plan(f->eng, s, &ep), -1);
	assert_int_equal(gb_engine__place(f->eng, s, &ep, 1, 1, NULL, NULL,
	                                  NULL, NULL, &placed, msg, sizeof(msg),
	                                  &retry), -1);
	assert_non_null(strstr(msg, "pool p: " GB_NOTE_REFUSED "planning failed: "));
	assert_non_null(strstr(msg, "the gate is broken"));
	assert_true(retry >= gb_now_ms() + GB_REFUSED_RETRY_MS - 5000);
	assert_int_equal(events_of(f, "refused"), 1);
	gb_engine__plan_free(&ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_candidates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cooldown_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_price_never, setup, teardown),
		cmocka_unit_test_setup_teardown(test_price_and_cooldown, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_policy_never, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kept_plan_spec, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_refusal_memory, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_walk_skips_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_plan_failure_is_refused,
		                                setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
