/* test_tzfile.c -- the TZif reader: synthetic files, and the system's
 * zoneinfo (those tests skip when /usr/share/zoneinfo lacks the zone;
 * scripts/deps.sh installs tzdata). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tzfile.h"

static size_t put32(unsigned char *p, size_t at, uint32_t v)
{
	p[at] = (unsigned char)(v >> 24);
	p[at + 1] = (unsigned char)(v >> 16);
	p[at + 2] = (unsigned char)(v >> 8);
	p[at + 3] = (unsigned char)v;
	return at + 4;
}

static size_t header(unsigned char *p, size_t at, char ver, uint32_t time,
                     uint32_t type, uint32_t chars)
{
	memcpy(p + at, "TZif", 4);
	p[at + 4] = (unsigned char)ver;
	memset(p + at + 5, 0, 15);
	at += 20;
	at = put32(p, at, 0);    /* isutcnt */
	at = put32(p, at, 0);    /* isstdcnt */
	at = put32(p, at, 0);    /* leapcnt */
	at = put32(p, at, time); /* timecnt */
	at = put32(p, at, type); /* typecnt */
	return put32(p, at, chars);
}

/* A v2 file: a minimal v1 block, then one transition at 10^9 from +00
 * to +03 and the footer. */
static size_t make_v2(unsigned char *p, const char *footer)
{
	size_t at = header(p, 0, '2', 0, 1, 4);
	memset(p + at, 0, 6);
	at += 6;
	memcpy(p + at, "UTC", 4);
	at += 4;
	at = header(p, at, '2', 1, 2, 8);
	at = put32(p, at, 0);
	at = put32(p, at, 1000000000u);
	p[at++] = 1;
	at = put32(p, at, 0);
	p[at++] = 0;
	p[at++] = 0;
	at = put32(p, at, 10800);
	p[at++] = 0;
	p[at++] = 4;
	memcpy(p + at, "UTC\0+03", 8);
	at += 8;
	at += (size_t)sprintf((char *)p + at, "\n%s\n", footer);
	return at;
}

static void test_synthetic(void **state)
{
	unsigned char b[512];
	char err[128];
	gb_tz *z;
	size_t n;
	(void)state;
	n = make_v2(b, "<+03>-3");
	assert_non_null(z = gb_tz_parse(b, n, err, sizeof(err)));
	assert_int_equal(gb_tz_offset(z, 999999999), 0);
	assert_int_equal(gb_tz_offset(z, 1000000000), 10800);
	assert_int_equal(gb_tz_offset(z, 4000000000LL), 10800);
	gb_tz_free(z);
	/* a footer we do not parse: the last transition's offset holds */
	n = make_v2(b, "<+05>-5<+06>");
	assert_non_null(z = gb_tz_parse(b, n, err, sizeof(err)));
	assert_int_equal(gb_tz_offset(z, 4000000000LL), 10800);
	gb_tz_free(z);
	/* a parsed footer decides after the last transition */
	n = make_v2(b, "CET-1CEST,M3.5.0,M10.5.0/3");
	assert_non_null(z = gb_tz_parse(b, n, err, sizeof(err)));
	assert_int_equal(gb_tz_offset(z, 4103697600LL), 3600); /* 2100-01 */
	assert_int_equal(gb_tz_offset(z, 4119336000LL), 7200); /* 2100-07 */
	gb_tz_free(z);
	/* truncated, bad magic, bad version */
	n = make_v2(b, "UTC0");
	assert_null(gb_tz_parse(b, 100, err, sizeof(err)));
	assert_non_null(strstr(err, "truncated"));
	b[4] = '9';
	assert_null(gb_tz_parse(b, n, err, sizeof(err)));
	assert_non_null(strstr(err, "not a TZif"));
	assert_null(gb_tz_parse((const unsigned char *)"TZ", 2, err,
	                        sizeof(err)));
}

static void test_names(void **state)
{
	char err[256];
	(void)state;
	assert_true(gb_tz_name_ok("Europe/Berlin"));
	assert_true(gb_tz_name_ok("Etc/GMT+5"));
	assert_true(gb_tz_name_ok("America/Port-au-Prince"));
	assert_false(gb_tz_name_ok("../etc/passwd"));
	assert_false(gb_tz_name_ok("Europe/../../etc/passwd"));
	assert_false(gb_tz_name_ok("/etc/passwd"));
	assert_false(gb_tz_name_ok("Europe/Berlin "));
	assert_false(gb_tz_name_ok("Europe//Berlin"));
	assert_false(gb_tz_name_ok(""));
	assert_null(gb_tz_get("../../etc/passwd", err, sizeof(err)));
	assert_non_null(strstr(err, "is not a zone name"));
	assert_null(gb_tz_get("/etc/passwd", err, sizeof(err)));
	assert_null(gb_tz_get("Europe/Berlin;rm", err, sizeof(err)));
	assert_null(gb_tz_get("Mars/Olympus_Mons", err, sizeof(err)));
	assert_non_null(strstr(err, "is not a zone in /usr/share/zoneinfo"));
	if (access(GB_ZONEINFO_DIR "/Europe", F_OK) == 0) {
		/* a directory is not a zone */
		assert_null(gb_tz_get("Europe", err, sizeof(err)));
		assert_non_null(strstr(err, "is not a zone in"));
	}
}

static int have(const char *zone)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", GB_ZONEINFO_DIR, zone);
	if (access(path, R_OK) == 0)
		return 1;
	fprintf(stderr, "skip: %s missing (install tzdata: "
	        "scripts/deps.sh)\n", path);
	return 0;
}

static void test_berlin(void **state)
{
	char err[256];
	const gb_tz *z, *again;
	(void)state;
	if (!have("Europe/Berlin"))
		skip();
	assert_non_null(z = gb_tz_get("Europe/Berlin", err, sizeof(err)));
	assert_string_equal(gb_tz_name(z), "Europe/Berlin");
	assert_int_equal(gb_tz_offset(z, 1768478400), 3600); /* 2026-01-15 */
	assert_int_equal(gb_tz_offset(z, 1784116800), 7200); /* 2026-07-15 */
	/* 2026-03-29 01:00 UTC: CET -> CEST; 2026-10-25 01:00 UTC: back */
	assert_int_equal(gb_tz_offset(z, 1774746000 - 1), 3600);
	assert_int_equal(gb_tz_offset(z, 1774746000), 7200);
	assert_int_equal(gb_tz_offset(z, 1792890000 - 1), 7200);
	assert_int_equal(gb_tz_offset(z, 1792890000), 3600);
	/* 2100: past any compiled transition, the footer's rule */
	assert_int_equal(gb_tz_offset(z, 4103697600LL), 3600);
	assert_int_equal(gb_tz_offset(z, 4119336000LL), 7200);
	/* cached: the same zone */
	again = gb_tz_get("Europe/Berlin", err, sizeof(err));
	assert_ptr_equal(again, z);
}

static void test_new_york_utc(void **state)
{
	char err[256];
	const gb_tz *z;
	(void)state;
	if (!have("America/New_York") || !have("UTC"))
		skip();
	assert_non_null(z = gb_tz_get("America/New_York", err, sizeof(err)));
	assert_int_equal(gb_tz_offset(z, 1768478400), -18000);
	assert_int_equal(gb_tz_offset(z, 1784116800), -14400);
	/* 2026-03-08 07:00 UTC: EST -> EDT; 2026-11-01 06:00 UTC: back */
	assert_int_equal(gb_tz_offset(z, 1772953200 - 1), -18000);
	assert_int_equal(gb_tz_offset(z, 1772953200), -14400);
	assert_int_equal(gb_tz_offset(z, 1793512800 - 1), -14400);
	assert_int_equal(gb_tz_offset(z, 1793512800), -18000);
	assert_int_equal(gb_tz_offset(z, 4119336000LL), -14400);
	assert_non_null(z = gb_tz_get("UTC", err, sizeof(err)));
	assert_int_equal(gb_tz_offset(z, 1784116800), 0);
	assert_int_equal(gb_tz_offset(z, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_berlin),
		cmocka_unit_test(test_new_york_utc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
