/* test_driver_loader.c -- the loader refuses broken drivers, naming the
 * file and the reason; optional methods are used only when the driver's
 * minor version and descriptor size allow.  The fake drivers are built
 * from tests/drivers/fake/ into $GB_BUILD/tests/fakedrv/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers.h"
#include "http.h"
#include "log.h"
#include "../../drivers/aws/aws.h"
#include "../../drivers/azure/azure.h"
#include "../../drivers/gcp/gcp.h"

static char path[512];

static const char *fake(const char *name)
{
	const char *b = getenv("GB_BUILD");
	snprintf(path, sizeof(path), "%s/tests/fakedrv/%s.so", b ? b : "build",
	         name);
	if (access(path, R_OK) != 0)
		fail_msg("%s is not built (run through make test)", path);
	return path;
}

static void refused(const char *name, const char *expect_name,
                    const char *reason)
{
	gb_drv *drv = NULL;
	char err[600];
	const char *p = fake(name);
	assert_int_equal(gb_drv_open(p, expect_name, &drv, err, sizeof(err)), -1);
	assert_null(drv);
	if (!strstr(err, p))
		fail_msg("error does not name the file: %s", err);
	if (!strstr(err, reason))
		fail_msg("error lacks \"%s\": %s", reason, err);
}

static void test_missing_file(void **state)
{
	gb_drv *drv;
	char err[600];
	(void)state;
	assert_int_equal(gb_drv_open("/nonexistent/x.so", NULL, &drv, err,
	                             sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/x.so: cannot load"));
}

static void test_not_a_driver(void **state)
{
	(void)state;
	refused("fake_no_entry", NULL, "does not export gb_driver_entry()");
}

static void test_refuses_host(void **state)
{
	(void)state;
	refused("fake_refuses", NULL, "refused this host");
}

static void test_abi_major_mismatch(void **state)
{
	(void)state;
	refused("fake_bad_major", NULL, "ABI major 2 does not match the host's 1");
}

static void test_short_descriptor(void **state)
{
	(void)state;
	refused("fake_short", NULL, "descriptor is 24 bytes, shorter than");
}

static void test_null_mandatory(void **state)
{
	(void)state;
	refused("fake_null_create", NULL, "has no create() method, which is "
	                                  "mandatory");
}

static void test_wrong_name(void **state)
{
	(void)state;
	refused("fake_good", "aws", "configured as driver 'aws' but the file "
	                            "is driver 'fake'");
}

static void out_cb(void *ud, const char *json)
{
	snprintf(ud, 64, "%s", json);
}

static void test_good_driver(void **state)
{
	gb_drv *drv = NULL;
	char err[600], got[64] = "";
	gb_error e;
	gb_kvs opts = {0};
	(void)state;
	assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
	                             sizeof(err)), 0);
	assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), 0);
	assert_true(drv->ready);
	assert_string_equal(drv->d->version, "1.2.3");
	assert_true(GB_DRV_HAS(drv, command));
	assert_false(GB_DRV_HAS(drv, refresh_prices)); /* NULL pointer */
	memset(&e, 0, sizeof(e));
	assert_int_equal(drv->d->command(drv->ctx, "ping", 0, NULL, out_cb, got,
	                                 &e), 0);
	assert_string_equal(got, "{\"pong\": true}");
	/* the loader added data_dir and bin_dir */
	assert_non_null(gb_kvs_get(&drv->options, "data_dir"));
	assert_non_null(gb_kvs_get(&drv->options, "bin_dir"));
	gb_drv_close(drv);
}

/* A minor-0 driver: command() lies beyond its descriptor, so the host
 * must not consider it present even though the bytes there are not 0. */
static void test_old_minor_optional_not_called(void **state)
{
	gb_drv *drv = NULL;
	char err[600];
	(void)state;
	assert_int_equal(gb_drv_open(fake("fake_old_minor"), "fake", &drv, err,
	                             sizeof(err)), 0);
	assert_int_equal(drv->d->abi_minor, 0);
	assert_true(drv->d->command != NULL);     /* garbage is there */
	assert_false(GB_DRV_HAS(drv, command));   /* and is not used */
	gb_drv_close(drv);
}

static void test_init_failure_kept_with_status(void **state)
{
	gb_drv *drv = NULL;
	char err[600];
	gb_kvs opts = {0};
	(void)state;
	assert_int_equal(gb_drv_open(fake("fake_init_fails"), "fake", &drv, err,
	                             sizeof(err)), 0);
	assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), -1);
	assert_false(drv->ready);
	assert_non_null(strstr(drv->status, "failed to initialise: no "
	                                    "credentials: set FAKE_TOKEN "
	                                    "(NoCredentials)"));
	gb_drv_close(drv);
}

/* Transport options the host reads itself: a value it cannot use is an
 * error naming the driver, the option and what it accepts -- the driver
 * is not initialised with a silent default. */
static void test_bad_transport_options(void **state)
{
	static const char *const cases[][3] = {
		{"http_attempts", "lots", "option http_attempts: expected a whole "
		                          "number from 1 to 99, found \"lots\""},
		{"http_attempts", "0", "from 1 to 99, found \"0\""},
		{"http_timeout_ms", "5s", "option http_timeout_ms: expected a "
		                          "whole number"},
		{"backoff_base_ms", "-5", "option backoff_base_ms"},
		{"max_in_flight", "1e3", "option max_in_flight"},
		{"rate.RunInstances", "fast", "option rate.RunInstances: expected "
		                              "CAPACITY/REFILL_PER_SECOND"},
		{"rate.Describe", "5/0", "found \"5/0\""},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gb_drv *drv = NULL;
		char err[600] = "";
		gb_kvs opts = {0};
		assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
		                             sizeof(err)), 0);
		gb_kvs_set(&opts, cases[i][0], cases[i][1]);
		assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), -1);
		assert_false(drv->ready);
		if (!strstr(err, cases[i][2]) || !strstr(err, "driver 'fake'"))
			fail_msg("%s=%s: error lacks \"%s\": %s", cases[i][0],
			         cases[i][1], cases[i][2], err);
		assert_string_equal(drv->status, err);
		gb_kvs_free(&opts);
		gb_drv_close(drv);
	}
	/* good values, and 0/off dropping a bucket, are accepted */
	{
		gb_drv *drv = NULL;
		char err[600];
		gb_kvs opts = {0};
		assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
		                             sizeof(err)), 0);
		gb_kvs_set(&opts, "http_attempts", "3");
		gb_kvs_set(&opts, "backoff_cap_ms", "2000");
		gb_kvs_set(&opts, "rate.RunInstances", "5/2.5");
		gb_kvs_set(&opts, "rate.Describe", "off");
		gb_kvs_set(&opts, "rate.default", "0");
		assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), 0);
		gb_kvs_free(&opts);
		gb_drv_close(drv);
	}
}

/* The driver's documented default_rates become the host's buckets; the
 * config's rate.<class> overrides one, adds one, or drops one (off/0).
 * And the shipped cloud drivers document theirs. */
static void test_default_rates(void **state)
{
	gb_drv *drv = NULL;
	char err[600];
	gb_kvs opts = {0};
	double cap = 0, refill = 0;
	const gb_driver *shipped[] = {&aws_driver, &azure_driver_desc,
	                              &gcp_driver_desc};
	(void)state;
	assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
	                             sizeof(err)), 0);
	gb_kvs_set(&opts, "rate.fake-b", "off");
	gb_kvs_set(&opts, "rate.fake-c", "7/0.5");
	assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), 0);
	assert_int_equal(gb_http_get_rate(drv->http, "fake-a", &cap, &refill), 0);
	assert_true(cap == 3 && refill == 1);
	assert_int_equal(gb_http_get_rate(drv->http, "fake-b", &cap, &refill), -1);
	assert_int_equal(gb_http_get_rate(drv->http, "fake-c", &cap, &refill), 0);
	assert_true(cap == 7 && refill == 0.5);
	gb_kvs_free(&opts);
	gb_drv_close(drv);

	for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++) {
		const char *const *p = shipped[i]->default_rates;
		size_t n = 0;
		assert_true(shipped[i]->abi_minor >= 2);
		assert_non_null(p);
		for (; p[0]; p += 2, n++) {
			assert_non_null(p[1]);
			if (gb_http_parse_rate(p[1], &cap, &refill) != 0)
				fail_msg("%s: default rate %s=%s does not parse",
				         shipped[i]->name, p[0], p[1]);
		}
		assert_true(n >= 3);
	}
	/* EC2's own RunInstances bucket */
	assert_string_equal(aws_driver.default_rates[0], "RunInstances");
	assert_string_equal(aws_driver.default_rates[1], "5/2");
}

/* A configured option that neither the driver (its ABI 1.4 options
 * list) nor the host reads is named in a warning, not ignored in
 * silence; known ones, KEY.* patterns and the host's own are not. */
static void test_unknown_option_warned(void **state)
{
	gb_drv *drv = NULL;
	char err[600], buf[8192];
	gb_kvs opts = {0};
	FILE *f = tmpfile();
	size_t n;
	(void)state;
	assert_non_null(f);
	assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
	                             sizeof(err)), 0);
	gb_kvs_set(&opts, "known", "1");
	gb_kvs_set(&opts, "image", "img");
	gb_kvs_set(&opts, "image.eu-west-1", "img-eu");
	gb_kvs_set(&opts, "rate.fake-a", "1/1");
	gb_kvs_set(&opts, "ca_file", "/dev/null");
	gb_kvs_set(&opts, "state_dir", "/tmp");
	gb_kvs_set(&opts, "knwon", "1");
	gb_kvs_set(&opts, "image.", "x");
	gb_log_set_file(f);
	assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), 0);
	gb_log_set_file(NULL);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "option knwon is not one driver 'fake' "
	                            "reads, so it is ignored (a typo?). Its "
	                            "options: known, image.*"));
	assert_non_null(strstr(buf, "option image. is not one"));
	assert_null(strstr(buf, "option known "));
	assert_null(strstr(buf, "option image.eu-west-1"));
	assert_null(strstr(buf, "option image is"));
	assert_null(strstr(buf, "option rate.fake-a"));
	assert_null(strstr(buf, "option ca_file"));
	assert_null(strstr(buf, "option state_dir"));
	gb_kvs_free(&opts);
	gb_drv_close(drv);
}

/* Loading a config with a broken driver keeps going: the others load,
 * the broken one is listed with its reason. */
static void test_load_list_keeps_going(void **state)
{
	gb_config cfg;
	gb_drivers ds;
	char good[512], bad[512];
	(void)state;
	snprintf(good, sizeof(good), "%s", fake("fake_good"));
	snprintf(bad, sizeof(bad), "%s", fake("fake_bad_major"));
	memset(&cfg, 0, sizeof(cfg));
	cfg.ndrivers = 2;
	cfg.drivers = calloc(2, sizeof(gb_driver_cfg));
	cfg.drivers[0].name = (char *)"fake";
	cfg.drivers[0].path = good;
	cfg.drivers[1].name = (char *)"future";
	cfg.drivers[1].path = bad;
	assert_int_equal(gb_drivers_load(&ds, &cfg), 1);
	assert_int_equal(ds.n, 2);
	assert_true(gb_drivers_find(&ds, "fake")->ready);
	assert_false(gb_drivers_find(&ds, "future")->ready);
	assert_non_null(strstr(gb_drivers_find(&ds, "future")->status,
	                       "does not match the host's"));
	gb_drivers_free(&ds);
	free(cfg.drivers);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_not_a_driver),
		cmocka_unit_test(test_refuses_host),
		cmocka_unit_test(test_abi_major_mismatch),
		cmocka_unit_test(test_short_descriptor),
		cmocka_unit_test(test_null_mandatory),
		cmocka_unit_test(test_wrong_name),
		cmocka_unit_test(test_good_driver),
		cmocka_unit_test(test_old_minor_optional_not_called),
		cmocka_unit_test(test_init_failure_kept_with_status),
		cmocka_unit_test(test_bad_transport_options),
		cmocka_unit_test(test_default_rates),
		cmocka_unit_test(test_unknown_option_warned),
		cmocka_unit_test(test_load_list_keeps_going),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
