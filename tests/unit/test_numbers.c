/* test_numbers.c -- numbers as people write them (issue 19, point 10):
 * gb_format_real gives the shortest text that reads back as the same
 * double (0.7, not 0.69999999999999996), and never loses a value;
 * gb_plural makes "1 instance" and "2 instances". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output.h"
#include "util.h"

static void test_shortest_text(void **state)
{
	char buf[32];
	(void)state;
	assert_string_equal(gb_format_real(0.7, buf, sizeof(buf)), "0.7");
	assert_string_equal(gb_format_real(1.006, buf, sizeof(buf)), "1.006");
	assert_string_equal(gb_format_real(98.32, buf, sizeof(buf)), "98.32");
	assert_string_equal(gb_format_real(80, buf, sizeof(buf)), "80");
	assert_string_equal(gb_format_real(-2.5e-7, buf, sizeof(buf)), "-2.5e-07");
}

static void test_reads_back_exactly(void **state)
{
	/* 0.1 * 7 is not 0.7: its text must say so, in as few digits */
	const double v[] = {0.1 * 7, 1.0 / 3, 2.0 / 3, 1e300 / 7, 5e-324,
	                    0.1 + 0.2, 123456789.123456789};
	char buf[32];
	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		gb_format_real(v[i], buf, sizeof(buf));
		assert_true(strtod(buf, NULL) == v[i]);
	}
	assert_string_equal(gb_format_real(0.1 + 0.2, buf, sizeof(buf)),
	                    "0.30000000000000004");
}

static void test_plural(void **state)
{
	char buf[64];
	(void)state;
	for (int n = -2; n <= 3; n++) {
		snprintf(buf, sizeof(buf), "%d instance%s", n, gb_plural(n));
		assert_int_equal(strcmp(buf + strlen(buf) - 1, "s") == 0,
		                 n != 1 && n != -1);
	}
	assert_string_equal(gb_plural(1), "");
	assert_string_equal(gb_plural(0), "s");
}

/* A table column has one precision (issue 41 point 6): `cost` showed
 * 0.10 beside 0.084 hours and 0.9791 beside 2.31 dollars. */
static void test_column_precision(void **state)
{
	static const gb_column cols[] = {
		{"hours", "hours", 1}, {"cost usd", "cost", 1}, {NULL, NULL, 0},
	};
	json_t *rows = json_pack("[{s:f, s:f}, {s:f, s:f}]", "hours", 0.1,
	                         "cost", 0.9791, "hours", 0.084, "cost", 2.31);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	(void)state;
	gb_out_table(f, rows, cols);
	fclose(f);
	assert_non_null(strstr(out, "0.100"));
	assert_non_null(strstr(out, "0.084"));
	assert_non_null(strstr(out, "0.9791"));
	assert_non_null(strstr(out, "2.3100"));
	assert_null(strstr(out, "0.10 "));
	free(out);
	json_decref(rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shortest_text),
		cmocka_unit_test(test_reads_back_exactly),
		cmocka_unit_test(test_plural),
		cmocka_unit_test(test_column_precision),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
