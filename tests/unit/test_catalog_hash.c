/* test_catalog_hash.c -- gb_catalog_hash: the same offers in any order
 * give the same hash, a new offer changes it, and many threads may ask
 * for it at once (the daemon plans on API threads, job workers and the
 * reconciler over one shared catalog).  The concurrency case is the
 * regression test for a data race on the hash cache found by
 * tests/reliability/tsan.sh; it proves itself in a TSan build
 * (make TSAN=1 BUILD=build/rel-tsan build/rel-tsan/tests/test_catalog_hash). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "catalog.h"

static void add(gb_catalog *c, const char *region, const char *type,
                double price)
{
	gb_offer o;
	memset(&o, 0, sizeof(o));
	o.region = region;
	o.zone = "";
	o.instance_type = type;
	o.gpu_model = "A10G";
	o.gpu_count = 1;
	o.gpu_memory_gb = 24;
	o.vcpus = 4;
	o.ram_gb = 16;
	o.capacity = GB_CAPACITY_ON_DEMAND;
	o.price_per_hour = price;
	gb_catalog_add(c, "aws", &o);
}

static void test_order_independent(void **state)
{
	gb_catalog *a = gb_catalog_new(), *b = gb_catalog_new();
	char ha[65], hb[65], hc[65];
	(void)state;
	add(a, "us-east-1", "g5.xlarge", 1.006);
	add(a, "eu-west-1", "g5.2xlarge", 1.4);
	add(b, "eu-west-1", "g5.2xlarge", 1.4);
	add(b, "us-east-1", "g5.xlarge", 1.006);
	gb_catalog_hash(a, ha);
	gb_catalog_hash(b, hb);
	assert_string_equal(ha, hb);
	assert_int_equal(strlen(ha), 64);
	/* cached, then invalidated by a new offer */
	gb_catalog_hash(a, hc);
	assert_string_equal(ha, hc);
	add(a, "us-west-2", "g5.xlarge", 1.006);
	gb_catalog_hash(a, hc);
	assert_string_not_equal(ha, hc);
	gb_catalog_free(a);
	gb_catalog_free(b);
}

struct job {
	const gb_catalog *c;
	char out[65];
};

static void *hash_thread(void *arg)
{
	struct job *j = arg;
	for (int i = 0; i < 50; i++)
		gb_catalog_hash(j->c, j->out);
	return NULL;
}

static void test_concurrent(void **state)
{
	enum { N = 8 };
	gb_catalog *c = gb_catalog_new();
	pthread_t t[N];
	struct job jobs[N];
	char want[65];
	(void)state;
	for (int i = 0; i < 500; i++) {
		char type[32];
		snprintf(type, sizeof(type), "t%d.xlarge", i);
		add(c, i % 2 ? "us-east-1" : "eu-west-1", type, 1.0 + i / 100.0);
	}
	/* every thread starts with the cache cold */
	for (int i = 0; i < N; i++) {
		jobs[i].c = c;
		assert_int_equal(pthread_create(&t[i], NULL, hash_thread, &jobs[i]), 0);
	}
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	gb_catalog_hash(c, want);
	for (int i = 0; i < N; i++)
		assert_string_equal(jobs[i].out, want);
	gb_catalog_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_independent),
		cmocka_unit_test(test_concurrent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
