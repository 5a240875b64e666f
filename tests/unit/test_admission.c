/* test_admission.c -- the pure admission decision (issue 35), scenarios
 * replayed with a fake clock: each pass's grants are applied, and a
 * preemption's instances go away when its grace has passed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "admission.h"

#define T0 1795000000
#define GRACE 60
#define MAXD 16
#define MAXR 4

typedef struct world {
	gb_adm_resource res[MAXR];
	size_t nres;
	gb_adm_demand dem[MAXD];
	int per[MAXD][MAXR];
	size_t ndem;
	gb_adm_team teams[4];
	size_t nteams;
	int64_t now;
	int64_t leave_at[MAXD]; /* when the leaving instances go */
	int preempted[MAXD];    /* instances preempted in all */
	gb_adm_result last;
} world;

static void w_init(world *w)
{
	memset(w, 0, sizeof *w);
	w->now = T0;
}

static size_t w_res(world *w, const char *name, gb_adm_kind kind, int cap)
{
	w->res[w->nres].name = name;
	w->res[w->nres].kind = kind;
	w->res[w->nres].capacity = cap;
	return w->nres++;
}

static void w_team(world *w, const char *name, double share)
{
	w->teams[w->nteams].name = name;
	w->teams[w->nteams].share = share;
	w->nteams++;
}

/* A pool of team `team` wanting `count` instances of one unit of r. */
static size_t w_pool(world *w, const char *pool, const char *team,
                     int prio, int count, size_t r)
{
	size_t i = w->ndem++;
	gb_adm_demand *d = &w->dem[i];
	d->pool = pool;
	d->team = team;
	d->priority = prio;
	d->count = count;
	w->per[i][r] = 1;
	d->per = w->per[i];
	d->arrival = w->now;
	return i;
}

/* One pass at the current clock; applies grants and preemptions. */
static void w_pass(world *w)
{
	gb_admission_free(&w->last);
	for (size_t i = 0; i < w->ndem; i++)
		if (w->dem[i].leaving > 0 && w->now >= w->leave_at[i]) {
			w->dem[i].held -= w->dem[i].leaving;
			w->dem[i].leaving = 0;
		}
	gb_adm_input in = {w->res, w->nres, w->dem, w->ndem,
	                   w->teams, w->nteams, w->now};
	gb_admission_decide(&in, &w->last);
	for (size_t i = 0; i < w->ndem; i++)
		w->dem[i].held = w->last.granted[i];
	for (size_t k = 0; k < w->last.npreempt; k++) {
		const gb_adm_preemption *e = &w->last.preempt[k];
		w->dem[e->victim].leaving += e->count;
		w->leave_at[e->victim] = w->now + GRACE;
		w->preempted[e->victim] += e->count;
	}
}

static void w_free(world *w)
{
	gb_admission_free(&w->last);
}

static int position(const world *w, size_t i)
{
	for (size_t k = 0; k < w->last.nqueue; k++)
		if (w->last.queue[k].demand == i)
			return w->last.queue[k].position;
	return 0;
}

static const gb_adm_wait *wait_of(const world *w, size_t i)
{
	for (size_t k = 0; k < w->last.nqueue; k++)
		if (w->last.queue[k].demand == i)
			return &w->last.queue[k];
	return NULL;
}

/* A higher class is admitted before a lower one that came first. */
static void test_priority_first(void **state)
{
	world w;
	(void)state;
	w_init(&w);
	size_t r = w_res(&w, "onprem:lab", GB_ADM_ONPREM, 2);
	size_t dev = w_pool(&w, "dev", "a", 10, 2, r);
	w.now += 5;
	size_t prod = w_pool(&w, "prod", "b", 1000, 2, r);
	w_pass(&w);
	assert_int_equal(w.dem[prod].held, 2);
	assert_int_equal(w.dem[dev].held, 0);
	assert_int_equal(position(&w, dev), 1);
	assert_int_equal(w.last.queue[0].waits_for, (long)r);
	assert_non_null(strstr(w.last.queue[0].reason, "onprem:lab"));
	assert_int_equal(w.last.npreempt, 0);
	w_free(&w);
}

/* Within a class: the team with the lowest weighted dominant share goes
 * first, whatever the arrival order; shares are weights. */
static void test_drf_order(void **state)
{
	world w;
	(void)state;
	w_init(&w);
	size_t r = w_res(&w, "aws:us-east-1:P", GB_ADM_CLOUD_QUOTA, 8);
	w_team(&w, "big", 4);
	w_team(&w, "small", 1);
	size_t a = w_pool(&w, "a1", "big", 100, 8, r);
	size_t b = w_pool(&w, "b1", "small", 100, 8, r);
	size_t c = w_pool(&w, "c1", "other", 100, 8, r); /* share 1 */
	w_pass(&w);
	/* 8 units, weights 4:1:1 -> big gets about 4/6 of them */
	int sum = w.dem[a].held + w.dem[b].held + w.dem[c].held;
	assert_int_equal(sum, 8);
	assert_true(w.dem[a].held >= 5 && w.dem[a].held <= 6);
	assert_true(w.dem[b].held >= 1 && w.dem[b].held <= 2);
	assert_true(w.dem[c].held >= 1 && w.dem[c].held <= 2);
	/* the queue: the lowest weighted share first */
	assert_int_equal(w.last.nqueue, 3);
	w_free(&w);

	/* an earlier arrival does not beat a lower share */
	w_init(&w);
	r = w_res(&w, "onprem:lab", GB_ADM_ONPREM, 3);
	a = w_pool(&w, "a", "ta", 100, 4, r);
	w.dem[a].held = 2;
	w.now += 100;
	b = w_pool(&w, "b", "tb", 100, 1, r);
	w_pass(&w);
	assert_int_equal(w.dem[b].held, 1);
	assert_int_equal(w.dem[a].held, 2);
	assert_int_equal(position(&w, a), 1);
	w_free(&w);
}

/* Borrowing: a team alone may take everything; reclaim takes back the
 * borrowed part from a preemptible pool when another team asks. */
static void test_borrow_and_reclaim(void **state)
{
	world w;
	(void)state;
	w_init(&w);
	size_t r = w_res(&w, "onprem:lab", GB_ADM_ONPREM, 4);
	size_t a = w_pool(&w, "a-dev", "ta", 10, 4, r);
	w.dem[a].preemptible = 1;
	w_pass(&w);
	assert_int_equal(w.dem[a].held, 4); /* borrowed all of it */
	assert_int_equal(w.last.nqueue, 0);

	w.now += 30;
	size_t b = w_pool(&w, "b-dev", "tb", 10, 2, r);
	w_pass(&w);
	assert_int_equal(w.dem[b].held, 0);
	assert_int_equal(w.last.npreempt, 1);
	assert_int_equal(w.last.preempt[0].victim, a);
	assert_int_equal(w.last.preempt[0].count, 2);
	assert_int_equal(w.last.preempt[0].beneficiary, b);
	assert_int_equal(w.last.preempt[0].why, GB_ADM_RECLAIM);
	assert_non_null(strstr(w.last.preempt[0].reason, "reclaimed"));
	assert_true(wait_of(&w, b)->preempting);

	/* during the grace: no second preemption, b still waits */
	w.now += GRACE / 2;
	w_pass(&w);
	assert_int_equal(w.last.npreempt, 0);
	assert_int_equal(w.dem[b].held, 0);

	/* the grace over: b gets the room, a waits at its share */
	w.now += GRACE;
	w_pass(&w);
	assert_int_equal(w.dem[b].held, 2);
	assert_int_equal(w.dem[a].held, 2);
	assert_int_equal(w.last.npreempt, 0);
	assert_int_equal(position(&w, a), 1);
	/* and nothing more: both at their share, no ping-pong */
	w.now += 600;
	w_pass(&w);
	assert_int_equal(w.last.npreempt, 0);
	assert_int_equal(w.preempted[a], 2);
	assert_int_equal(w.preempted[b], 0);
	w_free(&w);
}

/* Reclaim moves an instance larger than one unit when that makes the
 * shares no worse, and never moves it back. */
static void test_reclaim_no_ping_pong(void **state)
{
	world w;
	(void)state;
	w_init(&w);
	size_t r = w_res(&w, "aws:us-east-1:P", GB_ADM_CLOUD_QUOTA, 8);
	size_t a = w_pool(&w, "a-dev", "ta", 10, 2, r);
	w.per[a][r] = 4;
	w.dem[a].preemptible = 1;
	w_pass(&w);
	assert_int_equal(w.dem[a].held, 2);
	size_t b = w_pool(&w, "b-dev", "tb", 10, 2, r);
	w.per[b][r] = 4;
	w.dem[b].preemptible = 1;
	w_pass(&w);
	assert_int_equal(w.last.npreempt, 1);
	assert_int_equal(w.last.preempt[0].victim, a);
	assert_int_equal(w.last.preempt[0].count, 1);
	for (int k = 0; k < 20; k++) {
		w.now += GRACE;
		w_pass(&w);
	}
	assert_int_equal(w.dem[a].held, 1);
	assert_int_equal(w.dem[b].held, 1);
	assert_int_equal(w.preempted[a], 1);
	assert_int_equal(w.preempted[b], 0);
	w_free(&w);

	/* one 8-GPU instance: taking it would only swap who is over */
	w_init(&w);
	r = w_res(&w, "aws:us-east-1:P", GB_ADM_CLOUD_QUOTA, 8);
	a = w_pool(&w, "a-dev", "ta", 10, 1, r);
	w.per[a][r] = 8;
	w.dem[a].preemptible = 1;
	w_pass(&w);
	b = w_pool(&w, "b-dev", "tb", 10, 1, r);
	w.per[b][r] = 8;
	w_pass(&w);
	assert_int_equal(w.last.npreempt, 0);
	assert_int_equal(position(&w, b), 1);
	w_free(&w);
}

/* Not preemptible: the loan stays, the other team waits its turn. */
static void test_no_reclaim_unless_preemptible(void **state)
{
	world w;
	(void)state;
	w_init(&w);
	size_t r = w_res(&w, "onprem:lab", GB_ADM_ONPREM, 4);
	size_t a = w_pool(&w, "a-batch", "ta", 100, 4, r);
	w_pass(&w);
	size_t b = w_pool(&w, "b-batch", "tb", 100, 2, r);
	w_pass(&w);
	assert_int_equal(w.last.npreempt, 0);
	assert_int_equal(w.dem[b].held, 0);
	assert_int_equal(position(&w, b), 1);
	/* when a shrinks, b is admitted in the same pass */
	w.dem[a].count = 2;
	w.dem[a].held = 2;
	w_pass(&w);
	assert_int_equal(w.dem[b].held, 2);
	w_free(&w);
}

/* A higher class preempts a lower preemptible one, newest first, and
 * never an equal class of its own team, never below min. */
static void test_priority_preemption(void **state)
{
	world w;
	(void)state;
	w_init(&w);
	size_t r = w_res(&w, "onprem:lab", GB_ADM_ONPREM, 4);
	size_t old = w_pool(&w, "old-dev", "ta", 10, 2, r);
	w.now += 10;
	size_t young = w_pool(&w, "young-dev", "ta", 10, 2, r);
	w.dem[old].preemptible = w.dem[young].preemptible = 1;
	w_pass(&w);
	assert_int_equal(w.dem[old].held + w.dem[young].held, 4);
	size_t prod = w_pool(&w, "prod", "ta", 1000, 1, r);
	w_pass(&w);
	assert_int_equal(w.last.npreempt, 1);
	assert_int_equal(w.last.preempt[0].victim, young);
	assert_int_equal(w.last.preempt[0].count, 1);
	assert_int_equal(w.last.preempt[0].why, GB_ADM_PRIORITY);
	assert_non_null(strstr(w.last.preempt[0].reason, "priority 1000 over 10"));
	w.now += GRACE;
	w_pass(&w);
	assert_int_equal(w.dem[prod].held, 1);
	/* young waits again, and does not take the room back */
	assert_int_equal(w.dem[young].held, 1);
	w_free(&w);

	/* min: a pool at min 3 of 4 can give 1; the step needs 2: nothing */
	w_init(&w);
	r = w_res(&w, "onprem:lab", GB_ADM_ONPREM, 4);
	size_t dev = w_pool(&w, "dev", "ta", 10, 4, r);
	w.dem[dev].preemptible = 1;
	w.dem[dev].min = 3;
	w_pass(&w);
	prod = w_pool(&w, "prod", "tb", 1000, 2, r);
	w.dem[prod].gang = 1;
	w_pass(&w);
	assert_int_equal(w.last.npreempt, 0);
	assert_int_equal(w.dem[dev].held, 4);
	assert_int_equal(w.dem[prod].held, 0);
	w_free(&w);

	/* equal or higher class: never a victim */
	w_init(&w);
	r = w_res(&w, "onprem:lab", GB_ADM_ONPREM, 2);
	size_t b1 = w_pool(&w, "batch1", "ta", 100, 2, r);
	w.dem[b1].preemptible = 1;
	w_pass(&w);
	size_t b2 = w_pool(&w, "batch2", "ta", 100, 2, r); /* same team */
	size_t d2 = w_pool(&w, "dev2", "tb", 10, 2, r);
	w_pass(&w);
	assert_int_equal(w.last.npreempt, 0);
	assert_int_equal(position(&w, b2), 1);
	assert_int_equal(position(&w, d2), 2);
	w_free(&w);
}

/* A gang that cannot be fully placed holds nothing; its blocking
 * reserves the resource against lower classes (no inversion). */
static void test_gang_and_reservation(void **state)
{
	world w;
	(void)state;
	w_init(&w);
	size_t r = w_res(&w, "onprem:lab", GB_ADM_ONPREM, 4);
	size_t x = w_pool(&w, "x", "ta", 100, 1, r);
	w_pass(&w);
	size_t g = w_pool(&w, "cluster", "tb", 100, 4, r);
	w.dem[g].gang = 1;
	size_t lo = w_pool(&w, "low", "tc", 10, 1, r);
	size_t same = w_pool(&w, "same", "tc", 100, 1, r);
	w_pass(&w);
	assert_int_equal(w.dem[g].held, 0);    /* not 3 of 4 */
	assert_int_equal(w.dem[lo].held, 0);   /* reserved for class 100 */
	assert_int_equal(w.dem[same].held, 1); /* same class may backfill */
	assert_int_equal(position(&w, g), 1);
	assert_int_equal(position(&w, lo), 2);
	const gb_adm_wait *wg = wait_of(&w, g);
	assert_int_equal(wg->waits_for, (long)r);
	assert_non_null(strstr(wait_of(&w, lo)->reason, "ahead: cluster"));
	/* x and same finish: the gang goes first, then low */
	w.dem[x].count = w.dem[x].held = 0;
	w.dem[same].count = w.dem[same].held = 0;
	w_pass(&w);
	assert_int_equal(w.dem[g].held, 4);
	assert_int_equal(w.dem[lo].held, 0);
	w_free(&w);
}

/* Within a class, a blocked team's room is not taken by a team further
 * over its share (no overtaking the under-share head); a team no
 * further over may still use it. */
static void test_no_overtaking_within_class(void **state)
{
	world w;
	(void)state;
	w_init(&w);
	size_t r = w_res(&w, "onprem:lab", GB_ADM_ONPREM, 4);
	size_t a = w_pool(&w, "a", "ta", 100, 3, r);
	w_pass(&w);
	assert_int_equal(w.dem[a].held, 3);
	size_t g = w_pool(&w, "b-gang", "tb", 100, 2, r);
	w.dem[g].gang = 1;
	size_t a2 = w_pool(&w, "a2", "ta", 100, 1, r);
	w_pass(&w);
	assert_int_equal(w.dem[g].held, 0);
	assert_int_equal(w.dem[a2].held, 0); /* ta is over: it waits */
	assert_int_equal(position(&w, g), 1);
	size_t c = w_pool(&w, "c", "tc", 100, 1, r);
	w_pass(&w);
	assert_int_equal(w.dem[c].held, 1); /* tc holds nothing either */
	w_free(&w);
}

/* A team quota caps its team only, and nobody is preempted for it. */
static void test_team_quota(void **state)
{
	world w;
	(void)state;
	w_init(&w);
	size_t r = w_res(&w, "onprem:lab", GB_ADM_ONPREM, 8);
	size_t q = w_res(&w, "team:ta", GB_ADM_TEAM_QUOTA, 2);
	size_t a = w_pool(&w, "a", "ta", 1000, 4, r);
	w.per[a][q] = 1;
	size_t d = w_pool(&w, "d", "tb", 10, 8, r);
	w.dem[d].preemptible = 1;
	w_pass(&w);
	assert_int_equal(w.dem[a].held, 2);
	assert_int_equal(w.dem[d].held, 6);
	assert_int_equal(w.last.npreempt, 0);
	const gb_adm_wait *wa = wait_of(&w, a);
	assert_non_null(wa);
	assert_int_equal(wa->waits_for, (long)q);
	w_free(&w);
}

/* The same input twice: the same output. */
static void test_deterministic(void **state)
{
	world w1, w2;
	(void)state;
	for (int k = 0; k < 2; k++) {
		world *w = k ? &w2 : &w1;
		w_init(w);
		size_t r = w_res(w, "onprem:lab", GB_ADM_ONPREM, 5);
		w_team(w, "ta", 2);
		for (int i = 0; i < 6; i++) {
			size_t d = w_pool(w, i % 2 ? "p-odd" : "p-even",
			                  i % 3 ? "ta" : "tb", i % 2 ? 10 : 100,
			                  2, r);
			w->dem[d].preemptible = 1;
		}
		w_pass(w);
	}
	assert_int_equal(w1.last.nqueue, w2.last.nqueue);
	for (size_t i = 0; i < w1.ndem; i++)
		assert_int_equal(w1.last.granted[i], w2.last.granted[i]);
	for (size_t k = 0; k < w1.last.nqueue; k++) {
		assert_int_equal(w1.last.queue[k].demand, w2.last.queue[k].demand);
		assert_string_equal(w1.last.queue[k].reason,
		                    w2.last.queue[k].reason);
	}
	w_free(&w1);
	w_free(&w2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_priority_first),
		cmocka_unit_test(test_drf_order),
		cmocka_unit_test(test_borrow_and_reclaim),
		cmocka_unit_test(test_reclaim_no_ping_pong),
		cmocka_unit_test(test_no_reclaim_unless_preemptible),
		cmocka_unit_test(test_priority_preemption),
		cmocka_unit_test(test_gang_and_reservation),
		cmocka_unit_test(test_no_overtaking_within_class),
		cmocka_unit_test(test_team_quota),
		cmocka_unit_test(test_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
