/* test_redact.c -- the secret registry's queries (gb_redact_has_secret,
 * gb_redact_count) and the log tap that `gpubroker drivers test` uses to
 * see every line a driver logs: the tap gets the redacted text, also of
 * lines below the level (which are still not written), and nothing once
 * removed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"

static void test_has_secret(void **state)
{
	(void)state;
	gb_redact_clear();
	assert_int_equal(gb_redact_count(), 0);
	assert_int_equal(gb_redact_has_secret("anything at all"), 0);
	gb_redact_register("s3cr3t-value");
	gb_redact_register("abc"); /* too short: ignored */
	gb_redact_register("s3cr3t-value"); /* once */
	assert_int_equal(gb_redact_count(), 1);
	assert_int_equal(gb_redact_has_secret("x s3cr3t-value y"), 1);
	assert_int_equal(gb_redact_has_secret("s3cr3t-valu"), 0);
	assert_int_equal(gb_redact_has_secret("abc"), 0);
	assert_int_equal(gb_redact_has_secret(""), 0);
	assert_int_equal(gb_redact_has_secret(NULL), 0);
	gb_redact_register("other-secret");
	assert_int_equal(gb_redact_count(), 2);
	assert_int_equal(gb_redact_has_secret("[other-secret]"), 1);
	gb_redact_clear();
	assert_int_equal(gb_redact_has_secret("x s3cr3t-value y"), 0);
}

typedef struct seen {
	int n;
	gb_log_level lvl;
	char comp[64], msg[256];
} seen;

static void tap(void *ud, gb_log_level lvl, const char *comp,
                const char *msg)
{
	seen *s = ud;
	s->n++;
	s->lvl = lvl;
	snprintf(s->comp, sizeof(s->comp), "%s", comp);
	snprintf(s->msg, sizeof(s->msg), "%s", msg);
}

static void test_tap(void **state)
{
	seen s;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	(void)state;
	assert_non_null(f);
	memset(&s, 0, sizeof(s));
	gb_redact_clear();
	gb_redact_register("tok-12345678");
	gb_log_set_file(f);
	gb_log_set_level(GB_LOG_WARN);
	gb_log_set_tap(tap, &s);
	gb_log(GB_LOG_DEBUG, "drv", "using tok-12345678 now");
	assert_int_equal(s.n, 1);
	assert_int_equal(s.lvl, GB_LOG_DEBUG);
	assert_string_equal(s.comp, "drv");
	assert_string_equal(s.msg, "using [REDACTED] now");
	gb_log(GB_LOG_WARN, NULL, "warned");
	assert_int_equal(s.n, 2);
	assert_string_equal(s.comp, "gpubroker");
	gb_log_set_tap(NULL, NULL);
	gb_log(GB_LOG_ERROR, "drv", "after");
	assert_int_equal(s.n, 2);
	gb_log_set_file(NULL);
	fclose(f);
	/* the debug line was for the tap only; the others were written */
	assert_null(strstr(out, "using"));
	assert_non_null(strstr(out, "warned"));
	assert_non_null(strstr(out, "after"));
	free(out);
	gb_redact_clear();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_has_secret),
		cmocka_unit_test(test_tap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
