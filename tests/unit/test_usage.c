/* test_usage.c -- the usage computation (core/engine/engine_usage.c,
 * gb_usage_compute) on synthetic instances and samples with known
 * answers: GPU-hours bought split by UTC hour and weekday, utilisation
 * weighted by time, a sample held for GB_USAGE_HOLD_MS at most, time no
 * sample covers (an instance without heartbeats) unmeasured and never
 * idle, and the period's bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"

#define H 3600000LL
/* Monday 2026-11-23 00:00:00 UTC */
#define MON 1795392000000LL

#define near(a, b) assert_true((a) - (b) < 1e-9 && (b) - (a) < 1e-9)

static void test_monday_is_monday(void **state)
{
	gb_usage_inst v = {1, MON, MON + 1000, 1, 0};
	gb_usage_bucket b[7];
	(void)state;
	gb_usage_compute(&v, 1, NULL, 0, 1, 0, INT64_MAX, b, NULL);
	assert_true(b[0].bought_h > 0); /* mon */
	near(b[6].bought_h, 0);
}

/* Two instances: A (2 GPUs) 10:00-12:00 with samples 1.0 at 10:00 and
 * 0.5 every 5 minutes from 11:00 (held until 12:00); B (1 GPU)
 * 10:30-11:30 with no samples at all. */
static void test_hours_weighted(void **state)
{
	gb_usage_inst v[2] = {
		{7, MON + 10 * H, MON + 12 * H, 2, 0},
		{9, MON + 10 * H + H / 2, MON + 11 * H + H / 2, 1, 1},
	};
	gb_hb_sample s[14];
	gb_usage_bucket b[24], per[2];
	size_t ns = 0;
	(void)state;
	/* 1.0 at 10:00 is held 10 minutes only: 10:10-11:00 unmeasured */
	s[ns++] = (gb_hb_sample){7, MON + 10 * H, 1.0};
	for (int m = 0; m < 60; m += 5)
		s[ns++] = (gb_hb_sample){7, MON + 11 * H + m * 60000LL, 0.5};
	assert_int_equal(gb_usage_compute(v, 2, s, ns, 0, MON, MON + 24 * H, b,
	                                  per), 1);
	/* hour 10: A 2 GPU-h + B 0.5 GPU-h bought; measured A 10 min x 2 */
	near(b[10].bought_h, 2.5);
	near(b[10].measured_h, 2.0 / 6);
	near(b[10].busy_h, 2.0 / 6);
	/* hour 11: A 2 + B 0.5; measured A 2 GPU-h at 0.5 */
	near(b[11].bought_h, 2.5);
	near(b[11].measured_h, 2.0);
	near(b[11].busy_h, 1.0);
	near(b[9].bought_h, 0);
	near(b[12].bought_h, 0);
	/* B sent nothing: bought, never measured (so never idle) */
	near(per[1].bought_h, 1.0);
	near(per[1].measured_h, 0);
	near(per[0].bought_h, 4.0);
	near(per[0].measured_h, 2.0 + 2.0 / 6);
}

/* The period cuts lifetimes and samples; a sample from before the
 * period still covers its start; an instance ending cuts its sample. */
static void test_period_bounds(void **state)
{
	gb_usage_inst v = {3, MON, MON + 5 * H + 5 * 60000, 1, 0};
	gb_hb_sample s[2] = {
		{3, MON + 2 * H - 5 * 60000, 0.2},  /* covers 2:00-2:05 */
		{3, MON + 5 * H, 0.8},              /* cut by the end at 5:05 */
	};
	gb_usage_bucket b[24];
	(void)state;
	gb_usage_compute(&v, 1, s, 2, 0, MON + 2 * H, MON + 6 * H, b, NULL);
	near(b[1].bought_h, 0);
	near(b[2].bought_h, 1.0);
	near(b[2].measured_h, 5.0 / 60);
	near(b[2].busy_h, 0.2 * 5 / 60);
	near(b[5].bought_h, 5.0 / 60);
	near(b[5].measured_h, 5.0 / 60);
	near(b[5].busy_h, 0.8 * 5 / 60);
}

/* By weekday: 36 hours from Saturday 12:00 fill sat 12 h and sun 24 h;
 * no sample anywhere: nothing measured. */
static void test_weekdays(void **state)
{
	gb_usage_inst v = {1, MON + 5 * 24 * H + 12 * H,
	                   MON + 7 * 24 * H, 4, 0};
	gb_usage_bucket b[7];
	(void)state;
	assert_int_equal(gb_usage_compute(&v, 1, NULL, 0, 1, 0, INT64_MAX, b,
	                                  NULL), 0);
	near(b[5].bought_h, 48);
	near(b[6].bought_h, 96);
	near(b[0].bought_h, 0);
	near(b[6].measured_h, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monday_is_monday),
		cmocka_unit_test(test_hours_weighted),
		cmocka_unit_test(test_period_bounds),
		cmocka_unit_test(test_weekdays),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
