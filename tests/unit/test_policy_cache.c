/* test_policy_cache.c -- policy sets are compiled once per process per
 * (set, file contents): gb_plan_load_policies hands the same compiled set
 * out again (gb_policy_loads does not move), a changed file is compiled
 * afresh (one more load) while plans holding the old set keep working, a
 * set whose evaluation failed is not handed out again, and threads plan
 * with one shared set at once (its evaluation lock). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "catalog.h"
#include "plan.h"
#include "policy.h"
#include "spec.h"
#include "util.h"

static char dir[64];

static void write_file(const char *name, const char *text)
{
	char *path = gb_xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	free(path);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gbpcache.XXXXXX");
	assert_non_null(mkdtemp(dir));
	gb_policy_cache_clear();
	return 0;
}

static int teardown(void **state)
{
	char *cmd = gb_xasprintf("rm -rf '%s'", dir);
	(void)state;
	gb_policy_cache_clear();
	assert_int_equal(system(cmd), 0);
	free(cmd);
	return 0;
}

static gb_catalog *catalog(void)
{
	static const char *const regions[] = {"us-east-1", "eu-west-1",
	                                      "eu-north-1", "ap-northeast-1"};
	gb_catalog *c = gb_catalog_new();
	for (size_t i = 0; i < 4; i++) {
		gb_offer o;
		memset(&o, 0, sizeof(o));
		o.region = regions[i];
		o.zone = "";
		o.instance_type = "g5.xlarge";
		o.gpu_model = "A10G";
		o.gpu_count = 1;
		o.gpu_memory_gb = 24;
		o.vcpus = 4;
		o.ram_gb = 16;
		o.capacity = GB_CAPACITY_ON_DEMAND;
		o.price_per_hour = 1.0 + (double)i / 10;
		o.source = "test_policy_cache.c";
		o.fetched_at = 1790000000;
		gb_catalog_add(c, "aws", &o);
	}
	return c;
}

static void spec_from(gb_spec_set *set, const char *policies)
{
	gb_diags d = GB_DIAGS_INIT;
	char *y = gb_xasprintf("pool:\n  name: p\n  team: research\n"
	                       "  gpu: {model: A10G}\n  policy: [%s]\n",
	                       policies);
	if (gb_spec_load_buf("test.yaml", y, strlen(y), NULL, set, &d) != 0) {
		gb_diags_print(&d, stderr);
		fail_msg("spec does not load:\n%s", y);
	}
	gb_diags_free(&d);
	free(y);
}

static gb_policy_set *load(const gb_pool_spec *s)
{
	char err[512];
	int failed = 0;
	gb_policy_set *ps = gb_plan_load_policies(NULL, s, dir, &failed, err,
	                                          sizeof(err));
	if (failed)
		fail_msg("policies: %s", err);
	assert_non_null(ps);
	return ps;
}

/* The region of the best candidate, planned with ps (0 or -1). */
static int best(const gb_pool_spec *s, const gb_catalog *cat,
                gb_policy_set *ps, char *region, size_t cap)
{
	gb_plan p;
	gb_plan_opts o;
	char err[512];
	int rc;
	memset(&o, 0, sizeof(o));
	o.policies = ps;
	rc = gb_plan_pool(s, cat, &o, &p, err, sizeof(err));
	if (rc == 0 && p.ncands)
		snprintf(region, cap, "%s", p.cands[0].offer->region);
	gb_plan_free(&p);
	return rc;
}

#define PREFER(r) "return { score = function(req, offer)\n" \
	"  if offer.region == '" r "' then return 0 end\n" \
	"  return 1 + offer.price end }\n"

static void test_loaded_once_per_contents(void **state)
{
	gb_spec_set set;
	gb_catalog *cat = catalog();
	gb_policy_set *a, *b, *c, *d;
	unsigned long long n0;
	char r[64];
	(void)state;
	write_file("pick.lua", PREFER("eu-north-1"));
	spec_from(&set, "pick");
	n0 = gb_policy_loads();
	a = load(&set.pools[0]);
	assert_int_equal(gb_policy_loads() - n0, 1);
	b = load(&set.pools[0]);
	assert_int_equal(gb_policy_loads() - n0, 1); /* same set: no load */
	assert_ptr_equal(a, b);
	assert_int_equal(best(&set.pools[0], cat, a, r, sizeof(r)), 0);
	assert_string_equal(r, "eu-north-1");

	/* a changed file: compiled again, with its new content */
	write_file("pick.lua", PREFER("ap-northeast-1"));
	c = load(&set.pools[0]);
	assert_int_equal(gb_policy_loads() - n0, 2);
	assert_ptr_not_equal(c, a);
	assert_string_not_equal(gb_policy_hash(c, 0), gb_policy_hash(a, 0));
	assert_int_equal(best(&set.pools[0], cat, c, r, sizeof(r)), 0);
	assert_string_equal(r, "ap-northeast-1");
	/* the replaced set stays valid for those holding it */
	assert_int_equal(best(&set.pools[0], cat, a, r, sizeof(r)), 0);
	assert_string_equal(r, "eu-north-1");
	d = load(&set.pools[0]);
	assert_ptr_equal(d, c);
	assert_int_equal(gb_policy_loads() - n0, 2);

	gb_policy_set_free(a);
	gb_policy_set_free(b);
	gb_policy_set_free(c);
	gb_policy_set_free(d);
	gb_spec_set_free(&set);
	gb_catalog_free(cat);
}

static void test_sets_are_told_apart(void **state)
{
	gb_spec_set one, two;
	gb_policy_set *a, *b, *c;
	unsigned long long n0;
	(void)state;
	write_file("pick.lua", PREFER("eu-north-1"));
	write_file("cheap.lua", "return { score = function(req, offer) "
	                        "return offer.price end }\n");
	spec_from(&one, "pick");
	spec_from(&two, "pick, cheap");
	n0 = gb_policy_loads();
	a = load(&one.pools[0]);
	b = load(&two.pools[0]);
	assert_int_equal(gb_policy_loads() - n0, 2);
	assert_ptr_not_equal(a, b);
	assert_int_equal(gb_policy_count(b), 2);
	c = load(&one.pools[0]); /* the first is still cached */
	assert_ptr_equal(a, c);
	assert_int_equal(gb_policy_loads() - n0, 2);
	gb_policy_set_free(a);
	gb_policy_set_free(b);
	gb_policy_set_free(c);
	gb_spec_set_free(&one);
	gb_spec_set_free(&two);
}

static void test_failed_set_is_not_reused(void **state)
{
	gb_spec_set set;
	gb_catalog *cat = catalog();
	gb_policy_set *a, *b;
	unsigned long long n0;
	char r[64];
	(void)state;
	write_file("boom.lua", "return { filter = function(req, offer)\n"
	                       "  if offer.region == 'eu-west-1' then "
	                       "error('boom') end\n  return true end }\n");
	spec_from(&set, "boom");
	n0 = gb_policy_loads();
	a = load(&set.pools[0]);
	assert_int_equal(best(&set.pools[0], cat, a, r, sizeof(r)), -1);
	b = load(&set.pools[0]);
	assert_int_equal(gb_policy_loads() - n0, 2);
	assert_ptr_not_equal(a, b);
	gb_policy_set_free(a);
	gb_policy_set_free(b);
	gb_spec_set_free(&set);
	gb_catalog_free(cat);
}

typedef struct worker {
	const gb_pool_spec *spec;
	const gb_catalog *cat;
	int wrong;
} worker;

static void *plan_many(void *ud)
{
	worker *w = ud;
	for (int i = 0; i < 50; i++) {
		char err[512], r[64] = "";
		int failed = 0;
		gb_policy_set *ps = gb_plan_load_policies(NULL, w->spec, dir,
		                                          &failed, err,
		                                          sizeof(err));
		if (failed || !ps ||
		    best(w->spec, w->cat, ps, r, sizeof(r)) != 0 ||
		    strcmp(r, "eu-north-1") != 0)
			w->wrong++;
		gb_policy_set_free(ps);
	}
	return NULL;
}

static void test_threads_share_one_set(void **state)
{
	gb_spec_set set;
	gb_catalog *cat = catalog();
	gb_policy_set *first;
	pthread_t th[4];
	worker w[4];
	unsigned long long n0;
	(void)state;
	write_file("pick.lua", PREFER("eu-north-1"));
	spec_from(&set, "pick");
	n0 = gb_policy_loads();
	first = load(&set.pools[0]);
	for (int i = 0; i < 4; i++) {
		w[i].spec = &set.pools[0];
		w[i].cat = cat;
		w[i].wrong = 0;
		assert_int_equal(pthread_create(&th[i], NULL, plan_many, &w[i]),
		                 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(w[i].wrong, 0);
	}
	assert_int_equal(gb_policy_loads() - n0, 1);
	gb_policy_set_free(first);
	gb_spec_set_free(&set);
	gb_catalog_free(cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_loaded_once_per_contents,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_sets_are_told_apart, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_failed_set_is_not_reused,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads_share_one_set,
		                                setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
