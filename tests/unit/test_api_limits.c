/* test_api_limits.c -- what the API counts per client address and per
 * token (api_limits.c): connection caps in all and per address (IPv4 and
 * IPv4-mapped IPv6 are one client), the refusal budget that survives
 * reconnects and reports what it dropped, the per-token budget with its
 * Retry-After, and that idle addresses are forgotten. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>

#include "api.h"

static struct sockaddr_in v4(const char *ip)
{
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, ip, &a.sin_addr), 1);
	return a;
}

#define SA(x) ((const struct sockaddr *)&(x))

static void test_connection_caps(void **state)
{
	gb_api_limits *l = gb_api_limits_new();
	struct sockaddr_in a = v4("127.0.0.2"), b = v4("127.0.0.3");
	struct sockaddr_in6 mapped;
	gb_api_client *ca[3], *cb;
	gb_api_limit_stats st;
	(void)state;
	memset(&mapped, 0, sizeof(mapped));
	mapped.sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, "::ffff:127.0.0.2",
	                           &mapped.sin6_addr), 1);
	/* per client: 3 from a, the fourth refused; b is not affected */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(gb_api_conn_check(l, SA(a), 100, 3), 0);
		ca[i] = gb_api_conn_opened(l, SA(a));
	}
	assert_int_equal(gb_api_conn_check(l, SA(a), 100, 3), 2);
	/* the same address written as IPv4-mapped IPv6 is the same client */
	assert_int_equal(gb_api_conn_check(l, SA(mapped), 100, 3), 2);
	assert_int_equal(gb_api_conn_check(l, SA(b), 100, 3), 0);
	/* no per-client cap: allowed */
	assert_int_equal(gb_api_conn_check(l, SA(a), 100, 0), 0);
	cb = gb_api_conn_opened(l, SA(b));
	/* the total: 4 open, a cap of 4 refuses everyone */
	assert_int_equal(gb_api_conn_check(l, SA(b), 4, 3), 1);
	gb_api_limits_stats(l, &st);
	assert_int_equal(st.open, 4);
	assert_int_equal(st.opened, 4);
	assert_int_equal(st.refused_client, 2);
	assert_int_equal(st.refused_total, 1);
	/* a close makes room again */
	gb_api_conn_closed(l, ca[0]);
	assert_int_equal(gb_api_conn_check(l, SA(a), 100, 3), 0);
	gb_api_conn_closed(l, ca[1]);
	gb_api_conn_closed(l, ca[2]);
	gb_api_conn_closed(l, cb);
	gb_api_limits_stats(l, &st);
	assert_int_equal(st.open, 0);
	gb_api_limits_free(l);
}

static void test_refusal_budget(void **state)
{
	gb_api_limits *l = gb_api_limits_new();
	struct sockaddr_in a = v4("10.1.2.3"), b = v4("10.1.2.4");
	uint64_t dropped = 99;
	int written = 0;
	gb_api_limit_stats st;
	(void)state;
	/* 0 = no budget: every refusal is written */
	for (int i = 0; i < 1000; i++)
		assert_int_equal(gb_api_refusal_admit(l, SA(a), 0, &dropped), 1);
	assert_int_equal(dropped, 0);
	/* 10 a minute: 10 at once, then none; without any connection
	 * (a client that reconnects for every request keeps its budget) */
	for (int i = 0; i < 100; i++)
		written += gb_api_refusal_admit(l, SA(a), 10, &dropped);
	assert_int_equal(written, 10);
	gb_api_limits_stats(l, &st);
	assert_int_equal(st.refusals_dropped, 90);
	/* another address has its own */
	assert_int_equal(gb_api_refusal_admit(l, SA(b), 10, &dropped), 1);
	assert_int_equal(dropped, 0);
	gb_api_limits_free(l);
}

static void test_refusal_budget_refills(void **state)
{
	gb_api_limits *l = gb_api_limits_new();
	struct sockaddr_in a = v4("10.9.9.9");
	uint64_t dropped = 0;
	int64_t t0;
	(void)state;
	/* 600 a minute = 10 a second: spend them, drop 5 */
	for (int i = 0; i < 600; i++)
		assert_int_equal(gb_api_refusal_admit(l, SA(a), 600, &dropped), 1);
	for (int i = 0; i < 5; i++)
		assert_int_equal(gb_api_refusal_admit(l, SA(a), 600, &dropped), 0);
	/* within ~0.2 s one comes back, and it says 5 were left out */
	t0 = gb_mono_ms();
	while (!gb_api_refusal_admit(l, SA(a), 600, &dropped)) {
		assert_true(gb_mono_ms() - t0 < 2000);
		gb_sleep_ms(20);
	}
	assert_true(dropped >= 5);
	gb_api_limits_free(l);
}

static void test_token_budget(void **state)
{
	gb_api_limits *l = gb_api_limits_new();
	int retry = -1, ok = 0;
	(void)state;
	for (int i = 0; i < 20; i++)
		ok += gb_api_token_admit(l, "ci", 6, &retry);
	assert_int_equal(ok, 6);
	/* one request back takes 10 s at 6 a minute */
	assert_true(retry >= 1 && retry <= 11);
	/* budgets are per token */
	assert_int_equal(gb_api_token_admit(l, "admin", 6, &retry), 1);
	assert_int_equal(retry, 0);
	/* 0 = no budget */
	assert_int_equal(gb_api_token_admit(l, "ci", 0, &retry), 1);
	/* thousands of other budgets (one per instance for heartbeats):
	 * those used within the minute are kept, so ci stays refused */
	for (int i = 0; i < 3000; i++) {
		char who[32];
		snprintf(who, sizeof(who), "hb:instance %d", i);
		assert_int_equal(gb_api_token_admit(l, who, 6, &retry), 1);
	}
	assert_int_equal(gb_api_token_admit(l, "ci", 6, &retry), 0);
	gb_api_limits_free(l);
}

/* A plan of n pools takes n from its token's budget at once, or
 * nothing (POST /v1/plan, daemon.plan_per_minute). */
static void test_token_take_n(void **state)
{
	gb_api_limits *l = gb_api_limits_new();
	int retry = -1;
	(void)state;
	assert_int_equal(gb_api_token_take(l, "v", 600, 500, &retry), 1);
	assert_int_equal(retry, 0);
	/* 100 left: 150 does not fit, and takes nothing */
	assert_int_equal(gb_api_token_take(l, "v", 600, 150, &retry), 0);
	/* 50 more come back in 5 s at 10 a second */
	assert_true(retry >= 5 && retry <= 6);
	assert_int_equal(gb_api_token_take(l, "v", 600, 100, &retry), 1);
	assert_int_equal(gb_api_token_take(l, "v", 600, 50, &retry), 0);
	gb_api_limits_free(l);
}

static void test_many_addresses(void **state)
{
	gb_api_limits *l = gb_api_limits_new();
	gb_api_limit_stats st;
	(void)state;
	/* 10,000 addresses open and close a connection: afterwards (their
	 * budgets untouched) the table forgets them */
	for (int i = 0; i < 10000; i++) {
		char ip[32];
		struct sockaddr_in a;
		gb_api_client *c;
		snprintf(ip, sizeof(ip), "10.%d.%d.%d", i >> 16, (i >> 8) & 255,
		         i & 255);
		a = v4(ip);
		c = gb_api_conn_opened(l, SA(a));
		gb_api_conn_closed(l, c);
	}
	gb_api_limits_stats(l, &st);
	assert_true(st.clients <= 4097);
	assert_int_equal(st.open, 0);
	gb_api_limits_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connection_caps),
		cmocka_unit_test(test_refusal_budget),
		cmocka_unit_test(test_refusal_budget_refills),
		cmocka_unit_test(test_token_budget),
		cmocka_unit_test(test_token_take_n),
		cmocka_unit_test(test_many_addresses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
