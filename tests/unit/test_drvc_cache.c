/* test_drvc_cache.c -- the drivers' bounded string map (drvc_cache):
 * values in and out, replacement, NULL values, oldest-first eviction at
 * the cap, deletion, and concurrent use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "drvc_cache.h"

static void put2(drvc_cache *c, const char *k, const char *a, const char *b)
{
	const char *v[2] = {a, b};
	drvc_cache_put(c, k, v, 2);
}

static void test_put_get_replace_del(void **state)
{
	drvc_cache c;
	char *v[2] = {(char *)"untouched", (char *)"untouched"};
	(void)state;
	assert_int_equal(drvc_cache_init(&c, 8), 0);
	assert_int_equal(drvc_cache_get(&c, "vm-1", v, 2), 0);
	assert_string_equal(v[0], "untouched"); /* left alone on a miss */

	put2(&c, "vm-1", "10.0.0.4", NULL);
	assert_int_equal(drvc_cache_get(&c, "vm-1", v, 2), 1);
	assert_string_equal(v[0], "10.0.0.4");
	assert_null(v[1]);
	free(v[0]);

	/* replaced, not duplicated */
	put2(&c, "vm-1", "10.0.0.5", "20.1.2.3");
	assert_int_equal(drvc_cache_size(&c), 1);
	assert_int_equal(drvc_cache_get(&c, "vm-1", v, 2), 1);
	assert_string_equal(v[0], "10.0.0.5");
	assert_string_equal(v[1], "20.1.2.3");
	free(v[0]);
	free(v[1]);

	/* asking for more values than stored gives NULL for the rest */
	{
		char *w[3];
		assert_int_equal(drvc_cache_get(&c, "vm-1", w, 3), 1);
		assert_string_equal(w[1], "20.1.2.3");
		assert_null(w[2]);
		free(w[0]);
		free(w[1]);
	}

	drvc_cache_del(&c, "vm-1");
	drvc_cache_del(&c, "never-there");
	assert_int_equal(drvc_cache_get(&c, "vm-1", v, 2), 0);
	assert_int_equal(drvc_cache_size(&c), 0);
	drvc_cache_free(&c);
	drvc_cache_free(&c); /* twice is harmless */
}

static void test_evicts_oldest(void **state)
{
	drvc_cache c;
	char k[32], *z;
	(void)state;
	assert_int_equal(drvc_cache_init(&c, 100), 0);
	for (int i = 0; i < 250; i++) {
		const char *zone = i % 2 ? "us-central1-a" : "europe-west4-b";
		snprintf(k, sizeof(k), "inst-%d", i);
		drvc_cache_put(&c, k, &zone, 1);
		assert_true(drvc_cache_size(&c) <= 100);
	}
	assert_int_equal(drvc_cache_size(&c), 100);
	/* the 150 oldest are gone, the newest 100 are there */
	for (int i = 0; i < 250; i++) {
		snprintf(k, sizeof(k), "inst-%d", i);
		z = NULL;
		assert_int_equal(drvc_cache_get(&c, k, &z, 1), i >= 150);
		if (i >= 150)
			assert_string_equal(z, i % 2 ? "us-central1-a"
			                              : "europe-west4-b");
		free(z);
	}
	/* replacing an entry does not evict anything */
	{
		const char *zone = "asia-east1-c";
		drvc_cache_put(&c, "inst-150", &zone, 1);
		assert_int_equal(drvc_cache_size(&c), 100);
		assert_int_equal(drvc_cache_get(&c, "inst-151", &z, 1), 1);
		free(z);
	}
	drvc_cache_free(&c);
}

typedef struct worker_arg {
	drvc_cache *c;
	int id;
	int misses; /* own keys not found right after putting them */
} worker_arg;

static void *worker(void *p)
{
	worker_arg *a = p;
	char k[32], val[32];
	for (int i = 0; i < 2000; i++) {
		char *got = NULL;
		const char *v = val;
		snprintf(k, sizeof(k), "t%d-%d", a->id, i % 50);
		snprintf(val, sizeof(val), "%d", i);
		drvc_cache_put(a->c, k, &v, 1);
		if (!drvc_cache_get(a->c, k, &got, 1))
			a->misses++;
		free(got);
		if (i % 7 == 0)
			drvc_cache_del(a->c, k);
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	drvc_cache c;
	pthread_t t[4];
	worker_arg a[4];
	(void)state;
	/* room for every key: a miss right after a put would be a bug */
	assert_int_equal(drvc_cache_init(&c, 4 * 50), 0);
	for (int i = 0; i < 4; i++) {
		a[i].c = &c;
		a[i].id = i;
		a[i].misses = 0;
		assert_int_equal(pthread_create(&t[i], NULL, worker, &a[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(a[i].misses, 0);
	}
	assert_true(drvc_cache_size(&c) <= 200);
	drvc_cache_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_replace_del),
		cmocka_unit_test(test_evicts_oldest),
		cmocka_unit_test(test_concurrent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
