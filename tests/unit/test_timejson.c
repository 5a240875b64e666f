/* test_timejson.c -- the one form of every time in gpubroker's JSON
 * (issue 19, point 6): RFC 3339 UTC with milliseconds, null for none,
 * and back to unix ms without losing the milliseconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "timejson.h"
#include "util.h"

static void test_format(void **state)
{
	char buf[32];
	(void)state;
	assert_string_equal(gb_format_time_ms(1795767910123, buf, sizeof(buf)),
	                    "2026-11-27T08:25:10.123Z");
	assert_string_equal(gb_format_time_ms(1795767910000, buf, sizeof(buf)),
	                    "2026-11-27T08:25:10.000Z");
	assert_string_equal(gb_format_time_ms(5, buf, sizeof(buf)),
	                    "1970-01-01T00:00:00.005Z");
	/* before 1970: the milliseconds still count forwards */
	assert_string_equal(gb_format_time_ms(-1, buf, sizeof(buf)),
	                    "1969-12-31T23:59:59.999Z");
}

static void test_json_round_trip(void **state)
{
	int64_t ms = 0;
	json_t *j;
	(void)state;
	j = gb_json_time(1795767910123);
	assert_string_equal(json_string_value(j), "2026-11-27T08:25:10.123Z");
	assert_int_equal(gb_json_time_get(j, &ms), 0);
	assert_int_equal(ms, 1795767910123);
	json_decref(j);
	/* 0 is "never": null, and null is no time */
	j = gb_json_time(0);
	assert_true(json_is_null(j));
	assert_int_equal(gb_json_time_get(j, &ms), -1);
	json_decref(j);
	/* an epoch number is not a time string */
	j = json_integer(1795767910);
	assert_int_equal(gb_json_time_get(j, &ms), -1);
	json_decref(j);
	assert_int_equal(gb_json_time_get(NULL, &ms), -1);
}

static void test_parse(void **state)
{
	int64_t ms = 0;
	(void)state;
	assert_int_equal(gb_parse_time_ms("2026-11-27T08:25:10.1Z", &ms), 0);
	assert_int_equal(ms, 1795767910100);
	assert_int_equal(gb_parse_time_ms("2026-11-27T08:25:10Z", &ms), 0);
	assert_int_equal(ms, 1795767910000);
	assert_int_equal(gb_parse_time_ms("2026-11-27T08:25:10.123456Z", &ms), 0);
	assert_int_equal(ms, 1795767910123);
	assert_int_equal(gb_parse_time_ms("2026-11-27", &ms), 0);
	assert_int_equal(ms, 1795737600000);
	assert_int_equal(gb_parse_time_ms("1795767910", &ms), -1);
	assert_int_equal(gb_parse_time_ms("yesterday", &ms), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
