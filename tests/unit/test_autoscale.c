/* test_autoscale.c -- the pure autoscale decision with a fake clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "autoscale.h"

#define T0 1795000000 /* a fixed "now" (2026-11-18, a Wednesday) */
#define FRESH 60

typedef struct sim {
	gb_autoscale as;
	gb_as_state st;
	gb_as_sample inst[64];
	int n;          /* running instances = current */
	int64_t now;
	int min, max;
	int demand;
	int64_t demand_until;
	int actions;
	gb_as_decision last;
} sim;

static void sim_init(sim *s, int min, int max, int n)
{
	memset(s, 0, sizeof(*s));
	s->as.enabled = 1;
	s->as.gpu_util_target = 0.7;
	s->as.up_after_s = 60;
	s->as.down_after_s = 600;
	s->as.max_step = 2;
	s->min = min;
	s->max = max;
	s->n = n;
	s->now = T0;
}

/* One pass: every instance reports util (or nothing when util < 0);
 * the pool follows the decision at once (new instances report the same
 * load spread over more instances from the next pass). */
static int step(sim *s, double total_load, int report)
{
	gb_as_input in = {0};
	for (int i = 0; i < s->n; i++) {
		s->inst[i].id = i + 1;
		s->inst[i].created_at = T0 + i;
		s->inst[i].util = total_load / s->n > 1 ? 1 : total_load / s->n;
		s->inst[i].at = report ? s->now : 0;
	}
	in.min = s->min;
	in.max = s->max;
	in.as = &s->as;
	in.current = s->n;
	in.samples = s->inst;
	in.nsamples = (size_t)s->n;
	in.demand = s->demand;
	in.demand_until = s->demand_until;
	in.now = s->now;
	in.fresh_s = FRESH;
	gb_autoscale_decide(&in, &s->st, &s->last);
	if (s->last.desired != s->n)
		s->actions++;
	s->n = s->last.desired;
	return s->n;
}

/* Runs passes every 10 s for `secs` with a constant load. */
static int run(sim *s, double load, int secs)
{
	for (int t = 0; t < secs; t += 10) {
		step(s, load, 1);
		s->now += 10;
	}
	return s->n;
}

static void test_ramp_up_hold_down(void **state)
{
	sim s;
	(void)state;
	sim_init(&s, 1, 10, 2);
	/* 2 instances at 0.95: above 0.7 + band; nothing before up_after */
	step(&s, 1.9, 1);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.last.next, "up");
	assert_int_equal(s.last.next_at, T0 + 60);
	s.now += 50;
	step(&s, 1.9, 1);
	assert_int_equal(s.n, 2);
	s.now += 10;
	step(&s, 1.9, 1); /* at up_after: want ceil(1.9/0.7)=3 -> +1 */
	assert_int_equal(s.n, 3);
	assert_non_null(strstr(s.last.reason, "mean gpu_util 0.95 > 0.70 for "
	                                      "1m: 2 -> 3"));
	/* more load: steps of at most max_step, each after a whole window */
	s.now += 10;
	assert_int_equal(run(&s, 6.0, 50), 3);
	assert_int_equal(run(&s, 6.0, 20), 5);
	assert_int_equal(run(&s, 6.0, 60), 5); /* the window restarts */
	assert_int_equal(run(&s, 6.0, 10), 7);
	assert_int_equal(run(&s, 6.0, 70), 9);  /* ceil(6/0.7) = 9 */
	assert_int_equal(run(&s, 6.0, 600), 9); /* 0.67: inside the band */
	/* the load falls: nothing before down_after, then down */
	assert_int_equal(run(&s, 2.0, 590), 9);
	assert_int_equal(run(&s, 2.0, 20), 7);
	assert_non_null(strstr(s.last.reason, "< 0.70 for 10m: 9 -> 7"));
	assert_int_equal(run(&s, 2.0, 3000), 3); /* ceil(2/0.7) = 3 */
	assert_int_equal(run(&s, 0.0, 3000), 1); /* min */
	assert_int_equal(run(&s, 0.0, 3000), 1);
}

static void test_max_clamp(void **state)
{
	sim s;
	(void)state;
	sim_init(&s, 1, 4, 3);
	assert_int_equal(run(&s, 10.0, 300), 4);
	assert_non_null(strstr(s.last.reason, "")); /* no crash at max */
	assert_int_equal(run(&s, 10.0, 300), 4);
}

static void test_noisy_no_flap(void **state)
{
	sim s;
	uint32_t x = 12345;
	(void)state;
	sim_init(&s, 1, 10, 4);
	/* load around 4 x 0.7 = 2.8 with +-10% noise: at most one
	 * adjustment, never back and forth */
	for (int t = 0; t < 6 * 3600; t += 10) {
		double noise;
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		noise = ((double)(x % 2001) / 1000.0 - 1.0) * 0.28;
		step(&s, 2.8 + noise, 1);
		s.now += 10;
	}
	assert_true(s.actions <= 1);
	assert_true(s.n >= 4 && s.n <= 5);
}

static void test_unknown_not_idle(void **state)
{
	sim s;
	(void)state;
	sim_init(&s, 1, 10, 6);
	/* nobody reports: hold, however long */
	for (int t = 0; t < 7200; t += 10) {
		step(&s, 0.0, 0);
		s.now += 10;
	}
	assert_int_equal(s.n, 6);
	assert_int_equal(s.last.reporting, 0);
	assert_non_null(strstr(s.last.reason, "no instance reported"));
	/* 2 of 6 report idle, 4 silent (stale heartbeats): no scale-down */
	for (int t = 0; t < 7200; t += 10) {
		gb_as_input in = {0};
		gb_as_sample sm[6];
		for (int i = 0; i < 6; i++) {
			sm[i].id = i + 1;
			sm[i].created_at = T0;
			sm[i].util = 0;
			sm[i].at = i < 2 ? s.now : s.now - 3600;
		}
		in.min = 1;
		in.max = 10;
		in.as = &s.as;
		in.current = 6;
		in.samples = sm;
		in.nsamples = 6;
		in.now = s.now;
		in.fresh_s = FRESH;
		gb_autoscale_decide(&in, &s.st, &s.last);
		assert_int_equal(s.last.desired, 6);
		s.now += 10;
	}
	assert_int_equal(s.last.reporting, 2);
	assert_non_null(strstr(s.last.reason, "only 2 of 6"));
}

/* One pass at time t in which nobody reports; the pool's size after. */
static int silent_pass_at(sim *s, int64_t t)
{
	s->now = t;
	return step(s, 0, 0);
}

static void test_schedule_floor(void **state)
{
	gb_autoscale as = {0};
	sim s;
	/* 2026-11-16 was a Monday; 00:00 UTC */
	int64_t mon = 1794787200;
	(void)state;
	as.nwindows = 1;
	as.windows[0] = (gb_autoscale_window){0x1f, 8 * 60, 20 * 60, 60, 4, NULL};
	/* Monday 06:59 UTC = 07:59 +01:00: closed; 07:00 UTC: open */
	assert_int_equal(gb_autoscale_schedule_floor(&as, mon + 6 * 3600 +
	                                             59 * 60), 0);
	assert_int_equal(gb_autoscale_schedule_floor(&as, mon + 7 * 3600), 4);
	assert_int_equal(gb_autoscale_schedule_floor(&as, mon + 18 * 3600 +
	                                             59 * 60), 4);
	assert_int_equal(gb_autoscale_schedule_floor(&as, mon + 19 * 3600), 0);
	/* Saturday: closed; Sunday 23:30 UTC with -05:30 ... */
	assert_int_equal(gb_autoscale_schedule_floor(&as, mon + 5 * 86400 +
	                                             10 * 3600), 0);
	/* Friday 23:30 UTC is Saturday 00:30 at +01:00: closed; Monday
	 * 00:30 local is Sunday 23:30 UTC */
	as.windows[0] = (gb_autoscale_window){0x01, 0, 60, 60, 3, NULL};
	assert_int_equal(gb_autoscale_schedule_floor(&as, mon - 1800), 3);
	assert_int_equal(gb_autoscale_schedule_floor(&as, mon + 1800), 0);

	/* in a pool: the window raises the floor at its start, releases it
	 * at its end (nobody reports) */
	sim_init(&s, 1, 10, 1);
	s.as.nwindows = 1;
	s.as.windows[0] = (gb_autoscale_window){0x7f, 8 * 60, 9 * 60, 0, 4, NULL};
	assert_int_equal(silent_pass_at(&s, mon + 8 * 3600 - 20), 1);
	assert_int_equal(silent_pass_at(&s, mon + 8 * 3600), 4);
	assert_non_null(strstr(s.last.reason, "schedule window floor 4: 1 -> 4"));
	assert_int_equal(silent_pass_at(&s, mon + 9 * 3600 - 10), 4);
	assert_int_equal(silent_pass_at(&s, mon + 9 * 3600), 1);
	assert_non_null(strstr(s.last.reason, "schedule window ended"));
}

/* issue 42.4: a scale-down for low use that a window's floor holds says
 * the real reason; at max nothing says "next: up". */
static void test_reasons_and_next(void **state)
{
	sim s;
	(void)state;
	/* a daily window all day with floor 3; the pool at 4; low use */
	sim_init(&s, 1, 10, 4);
	s.as.nwindows = 1;
	s.as.windows[0] = (gb_autoscale_window){0x7f, 0, 24 * 60, 0, 3, NULL};
	run(&s, 0.4, 700);
	assert_int_equal(s.n, 3);
	assert_null(strstr(s.last.reason, "schedule window floor 3: 4 -> 3"));
	/* the change's reason, from the pass that made it */
	sim_init(&s, 1, 10, 4);
	s.as.nwindows = 1;
	s.as.windows[0] = (gb_autoscale_window){0x7f, 0, 24 * 60, 0, 3, NULL};
	for (int t = 0; t < 700 && s.n == 4; t += 10) {
		step(&s, 0.4, 1);
		s.now += 10;
	}
	assert_int_equal(s.n, 3);
	assert_non_null(strstr(s.last.reason, "mean gpu_util 0.10 < 0.70 for "
	                                      "10m (held at schedule window "
	                                      "floor 3): 4 -> 3"));
	/* at max under load: the next action is none, not "up at ..." */
	sim_init(&s, 1, 3, 3);
	run(&s, 3.0, 300);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.last.next, "none");
	assert_int_equal(s.last.next_at, 0);
}

/* A Europe/Berlin window follows daylight saving: mon-fri 08:00-20:00
 * opens at 07:00 UTC in winter (CET, +01:00) and 06:00 UTC in summer
 * (CEST, +02:00).  Skips without /usr/share/zoneinfo (install tzdata). */
static void test_schedule_floor_zone(void **state)
{
	gb_autoscale as = {0};
	char err[256];
	const gb_tz *z;
	int64_t jan12 = 1768176000, jul13 = 1783900800; /* Mondays 00:00 UTC */
	(void)state;
	if (access(GB_ZONEINFO_DIR "/Europe/Berlin", R_OK) != 0) {
		fprintf(stderr, "skip: %s/Europe/Berlin missing (install "
		        "tzdata)\n", GB_ZONEINFO_DIR);
		skip();
	}
	assert_non_null(z = gb_tz_get("Europe/Berlin", err, sizeof(err)));
	as.nwindows = 1;
	/* tz_min is ignored when a zone is set */
	as.windows[0] = (gb_autoscale_window){0x1f, 8 * 60, 20 * 60, -300, 4,
	                                      z};
	/* winter */
	assert_int_equal(gb_autoscale_schedule_floor(&as, jan12 + 6 * 3600 +
	                                             59 * 60), 0);
	assert_int_equal(gb_autoscale_schedule_floor(&as, jan12 + 7 * 3600), 4);
	assert_int_equal(gb_autoscale_schedule_floor(&as, jan12 + 18 * 3600 +
	                                             59 * 60), 4);
	assert_int_equal(gb_autoscale_schedule_floor(&as, jan12 + 19 * 3600), 0);
	/* summer: an hour earlier in UTC */
	assert_int_equal(gb_autoscale_schedule_floor(&as, jul13 + 5 * 3600 +
	                                             59 * 60), 0);
	assert_int_equal(gb_autoscale_schedule_floor(&as, jul13 + 6 * 3600), 4);
	assert_int_equal(gb_autoscale_schedule_floor(&as, jul13 + 17 * 3600 +
	                                             59 * 60), 4);
	assert_int_equal(gb_autoscale_schedule_floor(&as, jul13 + 18 * 3600), 0);
	/* Friday 22:30 UTC in summer is Saturday 00:30 local: closed */
	as.windows[0].days = 0x10; /* fri */
	as.windows[0].from_min = 0;
	as.windows[0].to_min = 24 * 60;
	assert_int_equal(gb_autoscale_schedule_floor(&as, jul13 + 4 * 86400 +
	                                             21 * 3600 + 1800), 4);
	assert_int_equal(gb_autoscale_schedule_floor(&as, jul13 + 4 * 86400 +
	                                             22 * 3600 + 1800), 0);
}

static void test_demand(void **state)
{
	sim s;
	(void)state;
	sim_init(&s, 1, 8, 2);
	/* clamped to max, held until it lapses */
	s.demand = 50;
	s.demand_until = T0 + 600;
	step(&s, 1.0, 1);
	assert_int_equal(s.n, 8);
	assert_non_null(strstr(s.last.reason, "demand signal 50"));
	assert_int_equal(run(&s, 1.0, 590), 8); /* idle, but held */
	s.now = T0 + 600;
	step(&s, 1.0, 1); /* lapsed: 1.0 load needs ceil(1/0.7) = 2 */
	assert_int_equal(s.n, 2);
	assert_non_null(strstr(s.last.reason, "demand signal ended"));
	/* a demand below what the load needs does not lower it */
	s.demand = 1;
	s.demand_until = s.now + 600;
	assert_int_equal(run(&s, 1.0, 300), 2);
}

static void test_victims(void **state)
{
	gb_as_sample sm[4] = {
		{1, 0.50, T0, T0 - 300, 0},
		{2, 0.10, T0, T0 - 200, 0},
		{3, 0.10, T0, T0 - 100, 0}, /* as idle as 2, newer */
		{4, 0.00, 0, T0, 0},        /* never reported: last */
	};
	int64_t out[4];
	(void)state;
	assert_int_equal(gb_autoscale_victims(sm, 4, T0, FRESH, 3, out), 3);
	assert_int_equal(out[0], 3);
	assert_int_equal(out[1], 2);
	assert_int_equal(out[2], 1);
	assert_int_equal(gb_autoscale_victims(sm, 4, T0, FRESH, 9, out), 4);
	assert_int_equal(out[3], 4);
}

/* Equally used: the dearest goes first (a $27.45/h cloud instance before
 * a $9.60/h on-prem node, even when the node is newer), then the newest. */
static void test_victims_by_cost(void **state)
{
	gb_as_sample sm[3] = {
		{1, 0.10, T0, T0 - 300, 27.45},
		{2, 0.10, T0, T0 - 100, 9.60},
		{3, 0.10, T0, T0 - 200, 9.60},
	};
	int64_t out[3];
	(void)state;
	assert_int_equal(gb_autoscale_victims(sm, 3, T0, FRESH, 3, out), 3);
	assert_int_equal(out[0], 1);
	assert_int_equal(out[1], 2);
	assert_int_equal(out[2], 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ramp_up_hold_down),
		cmocka_unit_test(test_victims_by_cost),
		cmocka_unit_test(test_max_clamp),
		cmocka_unit_test(test_noisy_no_flap),
		cmocka_unit_test(test_unknown_not_idle),
		cmocka_unit_test(test_schedule_floor),
		cmocka_unit_test(test_schedule_floor_zone),
		cmocka_unit_test(test_reasons_and_next),
		cmocka_unit_test(test_demand),
		cmocka_unit_test(test_victims),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
