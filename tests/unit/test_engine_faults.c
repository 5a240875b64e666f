/* test_engine_faults.c -- the engine's decisions when the state store
 * fails, against a real SQLite store with its fault injection
 * (store_fault.c) and an in-process fake cloud (a driver table whose
 * describe and terminate work on an array here): a failed read never
 * makes the engine terminate what the user did not ask to remove.
 *   - issue 29's case: three pools of 2, 2 and 1 instances; scale the
 *     first while the read of its row after the UPDATE fails.  Before:
 *     the zeroed row was converged as "every pool, desired 0" and the
 *     other pools' instances were terminated, and scale said success.
 *   - the terminate path itself (a scale down) terminates exactly the
 *     pool's newest instance, and nothing of the other pools;
 *   - every single store fault during a scale down (walked over each
 *     statement the scale runs) terminates nothing outside the pool, and
 *     a scale that reports success did its job;
 *   - a failed read makes cost and the pool JSON fail, not answer $0 or
 *     a pool without instances;
 *   - destroy whose re-read fails does not mark the pool destroyed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine_int.h"
#include "store_int.h"
#include "util.h"

/* ---- the fake cloud ---- */

#define MAXI 32
typedef struct fake_inst {
	char id[32], pool[32];
	int live;
} fake_inst;

typedef struct fake_cloud {
	fake_inst v[MAXI];
	size_t n;
	int terminates; /* instances terminate() was asked to end */
} fake_cloud;

static int fake_init(const gb_host *h, void **ctx, gb_error *err)
{
	(void)h;
	(void)ctx;
	(void)err;
	return -1;
}

static void fake_fini(void *ctx)
{
	(void)ctx;
}

static int fake_offers(void *ctx, gb_offer_cb emit, void *ud, gb_error *err)
{
	(void)ctx;
	(void)emit;
	(void)ud;
	(void)err;
	return 0;
}

static int fake_create(void *ctx, const gb_create_req *req,
                       gb_instance_cb emit, void *ud, gb_error *err)
{
	(void)ctx;
	(void)req;
	(void)emit;
	(void)ud;
	gb_error_set(err, GB_ERR_CAPACITY, 0, "NoCapacity", "no room (fake)");
	return -1;
}

static void emit_one(const fake_inst *f, gb_instance_cb emit, void *ud)
{
	gb_kv tags[] = {{GB_TAG_POOL, f->pool}, {GB_TAG_BROKER, "gpubroker"},
	                {GB_TAG_TOKEN, "t"}, {GB_TAG_TEAM, "research"}};
	gb_instance in;
	memset(&in, 0, sizeof(in));
	in.id = f->id;
	in.name = f->id;
	in.region = "us-east-1";
	in.zone = "us-east-1a";
	in.instance_type = "g5.xlarge";
	in.capacity = GB_CAPACITY_ON_DEMAND;
	in.state = f->live ? GB_INST_RUNNING : GB_INST_TERMINATED;
	in.tags = tags;
	in.ntags = 4;
	emit(ud, &in);
}

static int fake_describe(void *ctx, const gb_describe_req *req,
                         gb_instance_cb emit, void *ud, gb_error *err)
{
	fake_cloud *c = ctx;
	(void)err;
	for (size_t i = 0; i < c->n; i++) {
		int want = 0;
		if (!c->v[i].live && !req->include_terminated)
			continue;
		for (size_t k = 0; k < req->nids; k++)
			want |= strcmp(req->ids[k], c->v[i].id) == 0;
		if (!req->nids)
			want = !req->pool || strcmp(req->pool, c->v[i].pool) == 0;
		if (want)
			emit_one(&c->v[i], emit, ud);
	}
	return 0;
}

static int fake_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                          gb_error *err)
{
	fake_cloud *c = ctx;
	(void)err;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < c->n; i++)
			if (strcmp(c->v[i].id, refs[k].id) == 0 && c->v[i].live) {
				c->v[i].live = 0;
				c->terminates++;
			}
	return 0;
}

static const gb_driver fake_driver = {
	.abi_major = GB_DRIVER_ABI_MAJOR,
	.abi_minor = GB_DRIVER_ABI_MINOR,
	.struct_size = sizeof(gb_driver),
	.name = "aws",
	.version = "test",
	.description = "fake cloud of test_engine_faults.c",
	.init = fake_init,
	.fini = fake_fini,
	.list_offers = fake_offers,
	.create = fake_create,
	.describe = fake_describe,
	.terminate = fake_terminate,
};

/* ---- the fixture: pools a (2), b (2), c (1), running ---- */

typedef struct fixture {
	char dir[64];
	gb_config cfg;
	gb_store *store;
	gb_catalog *cat;
	gb_drv drv;
	gb_drv *drvs[1];
	gb_drivers drivers;
	gb_engine *eng;
	fake_cloud cloud;
} fixture;

static const struct {
	const char *name;
	int count;
} POOLS[] = {{"a", 2}, {"b", 2}, {"c", 1}};

static void add_pool(fixture *f, const char *name, int count)
{
	gb_spec_set set = {NULL, 0};
	gb_diags d = GB_DIAGS_INIT;
	gb_pool_row row;
	char *y = gb_xasprintf("pool:\n  name: %s\n  team: research\n"
	                       "  count: %d\n  gpu: {model: A10G}\n"
	                       "  capacity: [on-demand]\n"
	                       "  placement: {clouds: [aws], colocate: none}\n",
	                       name, count);
	char *json;
	if (gb_spec_load_buf("t.yaml", y, strlen(y), NULL, &set, &d) != 0) {
		gb_diags_print(&d, stderr);
		fail_msg("spec does not load:\n%s", y);
	}
	json = gb_pool_spec_to_json(&set.pools[0]);
	memset(&row, 0, sizeof(row));
	row.name = (char *)name;
	row.team = (char *)"research";
	row.spec_json = json;
	row.spec_hash = (char *)"h";
	row.state = (char *)"active";
	row.desired = count;
	row.created_at = gb_now_ms() / 1000;
	row.updated_at = row.created_at;
	assert_int_equal(gb_store_pool_put(f->store, &row), 0);
	for (int i = 0; i < count; i++) {
		fake_inst *fi = &f->cloud.v[f->cloud.n++];
		gb_inst_row r;
		char nm[40];
		snprintf(fi->id, sizeof(fi->id), "i-%s%d", name, i);
		snprintf(fi->pool, sizeof(fi->pool), "%s", name);
		fi->live = 1;
		snprintf(nm, sizeof(nm), "%s-%d", name, i);
		memset(&r, 0, sizeof(r));
		r.pool = (char *)name;
		r.cloud = (char *)"aws";
		r.region = (char *)"us-east-1";
		r.zone = (char *)"us-east-1a";
		r.instance_type = (char *)"g5.xlarge";
		r.capacity = (char *)"on-demand";
		r.provider_id = fi->id;
		r.name = nm;
		r.token = (char *)"t";
		r.state = (char *)"running";
		r.gpu_model = (char *)"A10G";
		r.gpu_count = 1;
		r.price_per_hour = 1.0;
		r.launched_ms = gb_now_ms() - 3600000;
		r.running_ms = r.launched_ms;
		r.last_seen_ms = gb_now_ms();
		r.name_index = i;
		assert_int_equal(gb_store_inst_put(f->store, &r), 0);
	}
	free(json);
	free(y);
	gb_diags_free(&d);
	gb_spec_set_free(&set);
}

static int setup(void **state)
{
	fixture *f = gb_xcalloc(1, sizeof(*f));
	gb_engine_opts o;
	char path[128], err[512];
	gb_store__fault_set(0, NULL, NULL);
	strcpy(f->dir, "/tmp/gb-engfault-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(path, sizeof(path), "%s/state.db", f->dir);
	if (gb_store_open(path, &f->store, err, sizeof(err)) != 0) {
		fprintf(stderr, "open: %s\n", err);
		return -1;
	}
	f->cat = gb_catalog_new();
	f->drv.name = (char *)"aws";
	f->drv.d = &fake_driver;
	f->drv.ctx = &f->cloud;
	f->drv.ready = 1;
	f->drvs[0] = &f->drv;
	f->drivers.v = f->drvs;
	f->drivers.n = 1;
	for (size_t i = 0; i < GB_ARRAY_LEN(POOLS); i++)
		add_pool(f, POOLS[i].name, POOLS[i].count);
	memset(&o, 0, sizeof(o));
	o.cfg = &f->cfg;
	o.store = f->store;
	o.cat = f->cat;
	o.drivers = &f->drivers;
	o.confirm_timeout_s = 1;
	o.poll_ms = 10;
	f->eng = gb_engine_new(&o);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	char cmd[128];
	gb_store__fault_set(0, NULL, NULL);
	gb_engine_free(f->eng);
	gb_catalog_free(f->cat);
	gb_store_close(f->store);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	free(f);
	return system(cmd) == 0 ? 0 : -1;
}

/* Live instances of pool p in the fake cloud. */
static int live(const fixture *f, const char *p)
{
	int n = 0;
	for (size_t i = 0; i < f->cloud.n; i++)
		n += f->cloud.v[i].live && strcmp(f->cloud.v[i].pool, p) == 0;
	return n;
}

static int stored_desired(fixture *f, const char *p)
{
	gb_pool_row row;
	int d;
	assert_int_equal(gb_store_pool_get(f->store, p, &row), 0);
	d = row.desired;
	gb_pool_row_free(&row);
	return d;
}

/* Issue 29: the read of the pool's row after the UPDATE of its size
 * fails: the 2nd read of a pool row of the scale, matched by its columns
 * (event and instance writes read the pool's team and incarnation FROM
 * pools WHERE name too). */
static void test_scale_failed_reread(void **state)
{
	fixture *f = *state;
	gb_engine_result res;
	gb_store__fault_set(2, "SELECT name, team, spec_json", NULL);
	assert_int_equal(gb_engine_scale(f->eng, "a", 2, &res), -1);
	gb_store__fault_set(0, NULL, NULL);
	assert_true(res.store_failed);
	assert_false(res.ok);
	assert_non_null(strstr(res.message, "state store failed: "));
	assert_non_null(strstr(res.message, "disk I/O error"));
	gb_engine_result_free(&res);
	assert_int_equal(f->cloud.terminates, 0);
	assert_int_equal(live(f, "a"), 2);
	assert_int_equal(live(f, "b"), 2);
	assert_int_equal(live(f, "c"), 1);
}

/* The first read of the pool fails: a store error, not "no active pool
 * named a". */
static void test_scale_failed_first_read(void **state)
{
	fixture *f = *state;
	gb_engine_result res;
	gb_store__fault_set(1, "FROM pools WHERE name", "busy");
	assert_int_equal(gb_engine_scale(f->eng, "a", 1, &res), -1);
	gb_store__fault_set(0, NULL, NULL);
	assert_true(res.store_failed);
	assert_false(res.not_found);
	assert_null(strstr(res.message, "no active pool"));
	assert_non_null(strstr(res.message, "database is locked"));
	gb_engine_result_free(&res);
	assert_int_equal(f->cloud.terminates, 0);
	assert_int_equal(stored_desired(f, "a"), 2);
}

/* The terminate path: a scale down to 1 ends a's newest instance only. */
static void test_scale_down_terminates_own_newest(void **state)
{
	fixture *f = *state;
	gb_engine_result res;
	if (gb_engine_scale(f->eng, "a", 1, &res) != 0)
		fail_msg("scale a 1: %s", res.message);
	assert_true(res.ok);
	assert_int_equal(res.destroyed, 1);
	gb_engine_result_free(&res);
	assert_int_equal(f->cloud.terminates, 1);
	assert_int_equal(live(f, "a"), 1);
	assert_true(f->cloud.v[0].live); /* i-a0, the oldest, stays */
	assert_false(f->cloud.v[1].live);
	assert_int_equal(live(f, "b"), 2);
	assert_int_equal(live(f, "c"), 1);
}

/* Every single statement of a scale down made to fail in turn: never a
 * terminate outside pool a, never below what was asked, and a scale
 * that says it succeeded stored the size and ended the extra one. */
static void test_scale_down_sweep(void **state)
{
	fixture *f = *state;
	gb_engine_result res;
	long long total;
	int failed = 0, succeeded = 0;
	gb_store__fault_set(0, NULL, NULL);
	/* count the statements of one clean run, on a copy of the scenario */
	{
		fixture *g;
		void *gs = NULL;
		assert_int_equal(setup(&gs), 0);
		g = gs;
		gb_store__fault_set(0, "", NULL); /* count every statement */
		assert_int_equal(gb_engine_scale(g->eng, "a", 1, &res), 0);
		gb_engine_result_free(&res);
		total = gb_store__fault_count();
		assert_int_equal(teardown(&gs), 0);
	}
	assert_true(total > 5);
	for (long long n = 1; n <= total + 1; n++) {
		void *gs = NULL;
		fixture *g;
		int rc;
		assert_int_equal(setup(&gs), 0);
		g = gs;
		gb_store__fault_set(n, NULL, NULL);
		rc = gb_engine_scale(g->eng, "a", 1, &res);
		gb_store__fault_set(0, NULL, NULL);
		if (live(g, "b") != 2 || live(g, "c") != 1 || live(g, "a") < 1)
			fail_msg("fault at statement %lld: live a/b/c = %d/%d/%d "
			         "(want >=1/2/1); scale said rc %d: %s", n,
			         live(g, "a"), live(g, "b"), live(g, "c"), rc,
			         res.message);
		if (rc == 0) {
			succeeded++;
			if (stored_desired(g, "a") != 1 || live(g, "a") != 1)
				fail_msg("fault at statement %lld: scale said it "
				         "succeeded, but a wants %d and runs %d", n,
				         stored_desired(g, "a"), live(g, "a"));
		} else {
			failed++;
			if (!strstr(res.message, "state store failed") &&
			    !strstr(res.message, "disk I/O error"))
				fail_msg("fault at statement %lld: the message does "
				         "not say the store failed: %s", n,
				         res.message);
		}
		gb_engine_result_free(&res);
		assert_int_equal(teardown(&gs), 0);
	}
	(void)f;
	assert_true(failed > 0);
	assert_true(succeeded > 0); /* at least the run past the last one */
}

/* A failed read is no $0 report, and no pool without instances. */
static void test_reports_fail(void **state)
{
	fixture *f = *state;
	json_t *c;
	c = gb_engine_cost(f->eng, "pool", 0, NULL);
	assert_non_null(c);
	assert_true(json_real_value(json_object_get(c, "total")) > 0);
	json_decref(c);
	gb_store__fault_set(1, "FROM instances", NULL);
	c = gb_engine_cost(f->eng, "pool", 0, NULL);
	gb_store__fault_set(0, NULL, NULL);
	assert_null(c);
	gb_store__fault_set(1, "FROM instances", NULL);
	c = gb_engine_pool_json(f->eng, "b");
	gb_store__fault_set(0, NULL, NULL);
	assert_null(c);
	gb_store__fault_set(1, "FROM instances", NULL);
	c = gb_engine_pools_json(f->eng, NULL, 0);
	gb_store__fault_set(0, NULL, NULL);
	assert_null(c);
}

/* Destroy of c whose re-read after the describe fails: an error, and c
 * is not marked destroyed while its instance may still run. */
static void test_destroy_failed_reread(void **state)
{
	fixture *f = *state;
	gb_engine_result res;
	gb_pool_row row;
	/* the pool's live rows: 1st before the describe, 2nd after */
	gb_store__fault_set(2, "FROM instances WHERE pool", NULL);
	assert_int_equal(gb_engine_destroy(f->eng, "c", "user", &res), -1);
	gb_store__fault_set(0, NULL, NULL);
	assert_true(res.store_failed);
	gb_engine_result_free(&res);
	assert_int_equal(gb_store_pool_get(f->store, "c", &row), 0);
	assert_string_not_equal(row.state, "destroyed");
	gb_pool_row_free(&row);
	assert_int_equal(live(f, "a"), 2);
	assert_int_equal(live(f, "b"), 2);
	/* and a destroy that works ends c, and only c */
	assert_int_equal(gb_engine_destroy(f->eng, "c", "user", &res), 0);
	gb_engine_result_free(&res);
	assert_int_equal(live(f, "c"), 0);
	assert_int_equal(live(f, "a"), 2);
	assert_int_equal(live(f, "b"), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scale_failed_reread, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_scale_failed_first_read,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_scale_down_terminates_own_newest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scale_down_sweep, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_reports_fail, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_destroy_failed_reread, setup,
		                                teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
