/* test_buf.c -- gb_buf, the growable buffer: printf formats into the
 * room left and only formats again when the text did not fit, so every
 * length around the room's edge must come out whole and NUL-terminated;
 * reserve makes later appends allocation-free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util.h"

static void test_printf_around_the_edge(void **state)
{
	(void)state;
	/* for each fill level, texts that fit, fill exactly, and overflow */
	for (size_t fill = 0; fill < 70; fill++) {
		for (int len = 0; len < 140; len++) {
			gb_buf b = GB_BUF_INIT;
			char want[512];
			for (size_t i = 0; i < fill; i++)
				gb_buf_putc(&b, 'f');
			gb_buf_printf(&b, "%0*d", len, 7);
			snprintf(want, sizeof(want), "%.*s%0*d", (int)fill,
			         "ffffffffffffffffffffffffffffffffffffffffffffffffff"
			         "ffffffffffffffffffffffffffffffffffffffffffffffffff",
			         len, 7);
			assert_int_equal(b.len, strlen(want));
			assert_string_equal(gb_buf_str(&b), want);
			gb_buf_free(&b);
		}
	}
}

static void test_printf_many_and_empty(void **state)
{
	gb_buf b = GB_BUF_INIT;
	char *s;
	(void)state;
	gb_buf_printf(&b, "%s", "");
	assert_string_equal(gb_buf_str(&b), "");
	for (int i = 0; i < 1000; i++)
		gb_buf_printf(&b, "%d,", i % 10);
	assert_int_equal(b.len, 2000);
	assert_memory_equal(b.data, "0,1,2,", 6);
	assert_memory_equal(b.data + 1994, "7,8,9,", 6);
	assert_int_equal(b.data[2000], '\0');
	s = gb_buf_take(&b);
	assert_int_equal(strlen(s), 2000);
	assert_null(b.data);
	free(s);
}

static void test_reserve_then_no_realloc(void **state)
{
	gb_buf b = GB_BUF_INIT;
	char *data;
	size_t cap;
	(void)state;
	gb_buf_puts(&b, "head ");
	gb_buf_reserve(&b, 4000);
	assert_true(b.cap >= b.len + 4001);
	data = b.data;
	cap = b.cap;
	for (int i = 0; i < 100; i++)
		gb_buf_printf(&b, "line %03d of the text\n", i); /* 21 each */
	assert_ptr_equal(b.data, data);
	assert_int_equal(b.cap, cap);
	assert_int_equal(b.len, 5 + 100 * 21);
	assert_memory_equal(b.data + 5, "line 000 of the text\n", 21);
	assert_string_equal(b.data + 5 + 99 * 21, "line 099 of the text\n");
	gb_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_printf_around_the_edge),
		cmocka_unit_test(test_printf_many_and_empty),
		cmocka_unit_test(test_reserve_then_no_realloc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
