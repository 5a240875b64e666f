/* test_store.c -- the state store, on both backends: every test runs on
 * SQLite, and again on PostgreSQL when GB_TEST_PG_URL names a server
 * (tests/run.sh starts one: tests/lib/pg.sh), each in a fresh database.
 * The few that need SQLite's own machinery (its VFS, the file's mode) run
 * on SQLite only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "pgtest.h"
#include "store.h"
#include "store_int.h"
#include "timejson.h"

static char dir[] = "/tmp/gb-store-XXXXXX";
static char path[512];
static const char *pg_url;  /* the server's admin URL; NULL: SQLite only */
static int on_pg;           /* the group now running */

/* The database's words for a failed constraint. */
static const char *why_fk(void)
{
	return on_pg ? "violates foreign key constraint" : "FOREIGN KEY constraint failed";
}
static const char *why_check(void)
{
	return on_pg ? "violates check constraint" : "CHECK constraint failed";
}
static const char *why_not_null(void)
{
	return on_pg ? "violates not-null constraint" : "NOT NULL constraint failed";
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/gb-store-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	if (!on_pg) {
		snprintf(path, sizeof(path), "%s/sub/state.db", dir);
		return 0;
	}
	/* a fresh database per test, on the harness's server */
	return gbt_pg_create("gbtest", path, sizeof(path));
}

static int teardown(void **state)
{
	char cmd[300];
	(void)state;
	if (on_pg)
		gbt_pg_drop_all();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static gb_store *open_store(void)
{
	gb_store *s = NULL;
	char err[512];
	int rc = gb_store_open(path, &s, err, sizeof(err));
	if (rc != 0)
		fail_msg("open: %s", err);
	return s;
}

static void test_open_creates_private_file_and_schema(void **state)
{
	gb_store *s;
	struct stat st;
	char *v = NULL;
	(void)state;
	s = open_store();
	if (!on_pg) {
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
	}
	assert_string_equal(gb_store_backend_name(s),
	                    on_pg ? "postgresql" : "sqlite");
	assert_int_equal(gb_store_is_shared(s), on_pg);
	assert_int_equal(gb_store_meta_get(s, "schema_version", &v), 0);
	assert_int_equal(atoi(v), GB_STORE_SCHEMA_VERSION);
	free(v);
	assert_int_equal(gb_store_meta_get(s, "nope", &v), 1);
	gb_store_close(s);
	/* reopening does not migrate again */
	s = open_store();
	assert_int_equal(gb_store_meta_get(s, "schema_version", &v), 0);
	assert_int_equal(atoi(v), GB_STORE_SCHEMA_VERSION);
	free(v);
	gb_store_close(s);
}

static void test_newer_schema_refused(void **state)
{
	gb_store *s;
	char err[512];
	(void)state;
	s = open_store();
	assert_int_equal(gb_store_meta_set(s, "schema_version", "99"), 0);
	gb_store_close(s);
	assert_int_equal(gb_store_open(path, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "schema version 99"));
	assert_non_null(strstr(err, "upgrade gpubroker"));
}

static void put_pool(gb_store *s, const char *name, int desired, int64_t at)
{
	gb_pool_row p;
	memset(&p, 0, sizeof(p));
	p.name = (char *)name;
	p.team = (char *)"research";
	p.spec_json = (char *)"{}";
	p.spec_hash = (char *)"h";
	p.desired = desired;
	p.created_at = at;
	p.ttl_s = 3600;
	if (gb_store_pool_put(s, &p) != 0)
		fail_msg("put pool: %s", gb_store_errmsg(s));
}

static void test_pools_keep_created_at_until_destroyed(void **state)
{
	gb_store *s = open_store();
	gb_pool_row r;
	(void)state;
	put_pool(s, "p1", 2, 1000);
	put_pool(s, "p1", 3, 2000); /* re-apply: created_at kept */
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	assert_int_equal(r.desired, 3);
	assert_int_equal(r.created_at, 1000);
	assert_int_equal(r.generation, 2);
	assert_string_equal(r.state, "active");
	gb_pool_row_free(&r);
	assert_int_equal(gb_store_pool_set_state(s, "p1", "destroyed", "ttl"), 0);
	put_pool(s, "p1", 1, 5000); /* applied again after destroy: new TTL */
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	assert_int_equal(r.created_at, 5000);
	assert_null(r.destroy_reason);
	gb_pool_row_free(&r);
	assert_int_equal(gb_store_pool_get(s, "missing", &r), 1);
	gb_store_close(s);
}

static void test_instances_upsert_by_provider_id(void **state)
{
	gb_store *s = open_store();
	gb_inst_row r, g;
	gb_inst_row *list;
	size_t n;
	int maxi;
	(void)state;
	put_pool(s, "p1", 2, 1000);
	memset(&r, 0, sizeof(r));
	r.pool = (char *)"p1";
	r.cloud = (char *)"aws";
	r.region = (char *)"us-east-1";
	r.zone = (char *)"us-east-1a";
	r.instance_type = (char *)"p5.48xlarge";
	r.capacity = (char *)"spot";
	r.provider_id = (char *)"i-1";
	r.state = (char *)"pending";
	r.price_per_hour = 30.5;
	r.launched_ms = 1000;
	r.name_index = 4;
	assert_int_equal(gb_store_inst_put(s, &r), 0);
	assert_true(r.id > 0);
	/* same provider id again: an update, not a duplicate */
	r.id = 0;
	r.state = (char *)"running";
	r.private_ip = (char *)"10.0.0.1";
	r.running_ms = 1010;
	assert_int_equal(gb_store_inst_put(s, &r), 0);
	assert_int_equal(gb_store_inst_list(s, "p1", 1, &list, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(list[0].state, "running");
	assert_string_equal(list[0].private_ip, "10.0.0.1");
	assert_int_equal(list[0].running_ms, 1010);
	gb_inst_list_free(list, n);
	/* a move from a state the row has left is not made: a concurrent
	 * refresh made it (and announced it) first */
	assert_int_equal(gb_store_inst_move_state(s, r.id, "pending", "running",
	                                          NULL, 1500), 0);
	assert_int_equal(gb_store_inst_move_state(s, r.id, "running",
	                                          "stopping", NULL, 1500), 1);
	assert_int_equal(gb_store_inst_move_state(s, r.id, "running",
	                                          "stopping", NULL, 1500), 0);
	assert_int_equal(gb_store_inst_set_state(s, r.id, "terminated",
	                                         "user", 2000), 0);
	assert_int_equal(gb_store_inst_find(s, "aws", "i-1", &g), 0);
	assert_string_equal(g.state, "terminated");
	assert_int_equal(g.terminated_ms, 2000);
	gb_inst_row_free(&g);
	assert_int_equal(gb_store_inst_list(s, "p1", 1, &list, &n), 0);
	assert_int_equal(n, 0);
	free(list);
	assert_int_equal(gb_store_inst_max_index(s, "p1", &maxi), 0);
	assert_int_equal(maxi, 4);
	assert_int_equal(gb_store_inst_max_index(s, "other", &maxi), 0);
	assert_int_equal(maxi, -1);
	gb_store_close(s);
}

/* An on-prem node (or a reused VM name) leased again after its old
 * instance terminated is a new row, not the old one revived. */
static void test_provider_id_reused_after_termination(void **state)
{
	gb_store *s = open_store();
	gb_inst_row r, g;
	gb_inst_row *list;
	size_t n;
	int64_t first;
	(void)state;
	put_pool(s, "p1", 1, 1000);
	put_pool(s, "p2", 1, 1000);
	memset(&r, 0, sizeof(r));
	r.pool = (char *)"p1";
	r.cloud = (char *)"onprem";
	r.region = (char *)"fra-dc1";
	r.instance_type = (char *)"dgx-h100-8";
	r.capacity = (char *)"on-demand";
	r.provider_id = (char *)"node-1";
	r.state = (char *)"running";
	r.launched_ms = 1000;
	assert_int_equal(gb_store_inst_put(s, &r), 0);
	first = r.id;
	assert_int_equal(gb_store_inst_set_state(s, first, "terminated", NULL,
	                                         2000), 0);
	r.id = 0;
	r.pool = (char *)"p2";
	r.launched_ms = 3000;
	assert_int_equal(gb_store_inst_put(s, &r), 0);
	assert_true(r.id != first);
	assert_int_equal(gb_store_inst_list(s, "p1", 0, &list, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(list[0].state, "terminated");
	gb_inst_list_free(list, n);
	assert_int_equal(gb_store_inst_find(s, "onprem", "node-1", &g), 0);
	assert_string_equal(g.pool, "p2"); /* the live one */
	assert_string_equal(g.state, "running");
	gb_inst_row_free(&g);
	/* but two LIVE rows with one id are refused (the upsert updates) */
	r.id = 0;
	r.pool = (char *)"p2";
	r.state = (char *)"pending";
	assert_int_equal(gb_store_inst_put(s, &r), 0);
	assert_int_equal(gb_store_inst_list(s, "p2", 1, &list, &n), 0);
	assert_int_equal(n, 1);
	gb_inst_list_free(list, n);
	gb_store_close(s);
}

static void test_instance_needs_pool(void **state)
{
	gb_store *s = open_store();
	gb_inst_row r;
	(void)state;
	memset(&r, 0, sizeof(r));
	r.pool = (char *)"ghost";
	r.cloud = (char *)"aws";
	r.region = (char *)"us-east-1";
	r.instance_type = (char *)"t";
	r.capacity = (char *)"spot";
	r.state = (char *)"pending";
	assert_int_equal(gb_store_inst_put(s, &r), -1);
	assert_non_null(strstr(gb_store_errmsg(s), why_fk()));
	gb_store_close(s);
}

static void test_intents_journal(void **state)
{
	gb_store *s = open_store(), *s2;
	gb_intent_row in, *open;
	size_t n;
	(void)state;
	put_pool(s, "p1", 1, 1000);
	memset(&in, 0, sizeof(in));
	in.kind = (char *)"create";
	in.pool = (char *)"p1";
	in.cloud = (char *)"gcp";
	in.region = (char *)"europe-west4";
	in.zone = (char *)"europe-west4-a";
	in.instance_type = (char *)"a3-highgpu-8g";
	in.capacity = (char *)"on-demand";
	in.count = 2;
	in.token = (char *)"tok-1";
	assert_int_equal(gb_store_intent_open(s, &in), 0);
	assert_true(in.id > 0);
	/* committed: a second connection sees it */
	s2 = open_store();
	assert_int_equal(gb_store_intent_list_open(s2, &open, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(open[0].token, "tok-1");
	assert_int_equal(open[0].count, 2);
	gb_intent_list_free(open, n);
	assert_int_equal(gb_store_intent_close(s, in.id, "done", NULL), 0);
	assert_int_equal(gb_store_intent_list_open(s2, &open, &n), 0);
	assert_int_equal(n, 0);
	free(open);
	gb_store_close(s2);
	gb_store_close(s);
}

/* One create intent of p1 in `region`, closed `state`, with `made`
 * instances recorded for it; its id. */
static int64_t create_attempt(gb_store *s, const char *region,
                              const char *state, int made)
{
	static int serial;
	gb_intent_row in;
	memset(&in, 0, sizeof(in));
	in.kind = (char *)"create";
	in.pool = (char *)"p1";
	in.cloud = (char *)"azure";
	in.region = (char *)region;
	in.zone = (char *)"";
	in.instance_type = (char *)"Standard_NC4as_T4_v3";
	in.capacity = (char *)"on-demand";
	in.count = 4;
	in.token = (char *)"tok";
	assert_int_equal(gb_store_intent_open(s, &in), 0);
	for (int i = 0; i < made; i++) {
		gb_inst_row r;
		char id[32];
		snprintf(id, sizeof(id), "vm-%d", ++serial);
		memset(&r, 0, sizeof(r));
		r.pool = (char *)"p1";
		r.cloud = (char *)"azure";
		r.region = (char *)region;
		r.zone = (char *)"";
		r.instance_type = in.instance_type;
		r.capacity = (char *)"on-demand";
		r.provider_id = id;
		r.state = (char *)"terminated";
		r.price_per_hour = 0.5;
		r.launched_ms = 1000;
		r.intent_id = in.id;
		assert_int_equal(gb_store_inst_put(s, &r), 0);
	}
	assert_int_equal(gb_store_intent_close(s, in.id, state, "capacity"), 0);
	return in.id;
}

/* The journal's partial creates (what the engine paces colocated pools
 * by) and the pool's note (why it is short, when it tries again). */
static void test_partials_and_pool_note(void **state)
{
	gb_store *s = open_store();
	gb_partial_row *v;
	gb_pool_row r;
	size_t n;
	int64_t partial;
	(void)state;
	put_pool(s, "p1", 4, 1000);
	create_attempt(s, "eastus", "failed", 0);   /* refused: made nothing */
	create_attempt(s, "westus2", "done", 4);    /* placed: not a partial */
	partial = create_attempt(s, "westeurope", "failed", 2);
	assert_int_equal(gb_store_partials(s, "p1", 0, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].intent_id, partial);
	assert_string_equal(v[0].region, "westeurope");
	assert_int_equal(v[0].asked, 4);
	assert_int_equal(v[0].made, 2);
	assert_true(v[0].at_ms > 0);
	gb_partial_list_free(v, n);
	/* older than the window: not listed */
	assert_int_equal(gb_store_partials(s, "p1", gb_now_ms() + 60000, &v, &n), 0);
	assert_int_equal(n, 0);
	gb_partial_list_free(v, n);
	assert_int_equal(gb_store_partials(s, "other", 0, &v, &n), 0);
	assert_int_equal(n, 0);
	gb_partial_list_free(v, n);

	/* the note: set, read back, cleared by an apply and by a scale */
	assert_int_equal(gb_store_pool_set_note(s, "p1", "no zone could hold 4",
	                                        123000), 0);
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	assert_string_equal(r.note, "no zone could hold 4");
	assert_int_equal(r.retry_at_ms, 123000);
	gb_pool_row_free(&r);
	put_pool(s, "p1", 4, 1000);
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	assert_null(r.note);
	assert_int_equal(r.retry_at_ms, 0);
	gb_pool_row_free(&r);
	assert_int_equal(gb_store_pool_set_note(s, "p1", "again", 5), 0);
	assert_int_equal(gb_store_pool_set_desired(s, "p1", 2), 0);
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	assert_null(r.note);
	gb_pool_row_free(&r);
	/* NULL clears */
	assert_int_equal(gb_store_pool_set_note(s, "p1", "x", 7), 0);
	assert_int_equal(gb_store_pool_set_note(s, "p1", NULL, 7), 0);
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	assert_null(r.note);
	assert_int_equal(r.retry_at_ms, 0);
	gb_pool_row_free(&r);
	gb_store_close(s);
}

/* An instance row of pool `pool` in `state`; its id. */
/* An instance <pool>-<index>. */
static int64_t put_inst_at(gb_store *s, const char *pool, const char *pid,
                           const char *state, int index)
{
	gb_inst_row r;
	memset(&r, 0, sizeof(r));
	r.name_index = index;
	r.pool = (char *)pool;
	r.cloud = (char *)"aws";
	r.region = (char *)"us-east-1";
	r.instance_type = (char *)"g4dn.xlarge";
	r.capacity = (char *)"on-demand";
	r.provider_id = (char *)pid;
	r.state = (char *)state;
	r.launched_ms = 1000;
	if (gb_store_inst_put(s, &r) != 0)
		fail_msg("put instance: %s", gb_store_errmsg(s));
	return r.id;
}

static int64_t put_inst(gb_store *s, const char *pool, const char *pid,
                        const char *state)
{
	return put_inst_at(s, pool, pid, state, 0);
}

/* The names of the steady pools, sorted, joined with ',' (and each
 * one's generation checked against the pool's). */
static void steady_names(gb_store *s, char *out, size_t cap)
{
	gb_pool_gen *v;
	size_t n;
	const char *names[16];
	assert_int_equal(gb_store_pool_list_steady(s, &v, &n), 0);
	assert_true(n < 16);
	for (size_t i = 0; i < n; i++) {
		gb_pool_row r;
		assert_int_equal(gb_store_pool_get(s, v[i].name, &r), 0);
		assert_int_equal(v[i].generation, r.generation);
		gb_pool_row_free(&r);
		names[i] = v[i].name;
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			const char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		snprintf(out + strlen(out), cap - strlen(out), "%s%s",
		         i ? "," : "", names[i]);
	gb_pool_gen_list_free(v, n);
}

/* Steady: active, no open intent, every live instance running and
 * exactly `desired` of them.  Each other pool misses one condition. */
static void test_pools_steady(void **state)
{
	gb_store *s = open_store();
	gb_intent_row in;
	char got[256];
	int64_t id;
	(void)state;
	put_pool(s, "ok", 2, 1000);        /* 2 running + 1 terminated */
	put_pool(s, "empty", 0, 1000);     /* desired 0, nothing live */
	put_pool(s, "short", 2, 1000);     /* 1 running of 2 */
	put_pool(s, "over", 1, 1000);      /* 2 running of 1 */
	put_pool(s, "pending", 2, 1000);   /* 1 running, 1 pending */
	put_pool(s, "preempt", 2, 1000);   /* 1 running, 1 preempted */
	put_pool(s, "term", 1, 1000);      /* 1 running, 1 terminating */
	put_pool(s, "intent", 1, 1000);    /* 1 running, an open intent */
	put_pool(s, "gone", 1, 1000);      /* destroying */
	put_inst(s, "ok", "i-ok1", "running");
	put_inst(s, "ok", "i-ok2", "running");
	put_inst(s, "ok", "i-ok3", "terminated");
	put_inst(s, "short", "i-sh1", "running");
	put_inst(s, "over", "i-ov1", "running");
	put_inst(s, "over", "i-ov2", "running");
	put_inst(s, "pending", "i-pe1", "running");
	put_inst(s, "pending", "i-pe2", "pending");
	put_inst(s, "preempt", "i-pr1", "running");
	id = put_inst(s, "preempt", "i-pr2", "running");
	put_inst(s, "term", "i-te1", "running");
	put_inst(s, "term", "i-te2", "terminating");
	put_inst(s, "intent", "i-in1", "running");
	put_inst(s, "gone", "i-go1", "running");
	assert_int_equal(gb_store_pool_set_state(s, "gone", "destroying",
	                                         "user"), 0);
	memset(&in, 0, sizeof(in));
	in.kind = (char *)"create";
	in.pool = (char *)"intent";
	in.cloud = (char *)"aws";
	in.region = (char *)"us-east-1";
	in.count = 1;
	in.token = (char *)"tok-steady";
	assert_int_equal(gb_store_intent_open(s, &in), 0);
	steady_names(s, got, sizeof(got));
	assert_string_equal(got, "empty,ok,preempt");
	/* a refresh that sees an instance preempted makes its pool unsteady */
	assert_int_equal(gb_store_inst_set_state(s, id, "preempted",
	                                         "spot", 2000), 0);
	steady_names(s, got, sizeof(got));
	assert_string_equal(got, "empty,ok");
	/* the intent closed: steady; a scale (generation bumped) keeps it
	 * steady when the count still fits, with the new generation */
	assert_int_equal(gb_store_intent_close(s, in.id, "done", NULL), 0);
	assert_int_equal(gb_store_pool_set_desired(s, "over", 2), 0);
	steady_names(s, got, sizeof(got));
	assert_string_equal(got, "empty,intent,ok,over");
	gb_store_close(s);
}

/* One instance row of pool p1 made by intent iid (0: none). */
static int64_t put_made_inst(gb_store *s, const char *pid, int64_t iid)
{
	gb_inst_row r;
	memset(&r, 0, sizeof(r));
	r.pool = (char *)"p1";
	r.cloud = (char *)"azure";
	r.region = (char *)"eastus";
	r.instance_type = (char *)"Standard_ND96isr_H100_v5";
	r.capacity = (char *)"on-demand";
	r.provider_id = (char *)pid;
	r.state = (char *)"pending";
	r.price_per_hour = 98.32;
	r.launched_ms = 1000;
	r.intent_id = iid;
	assert_int_equal(gb_store_inst_put(s, &r), 0);
	return r.id;
}

/* A create intent of pool p1 closed `state` ("done", "failed"), or left
 * open when state is NULL. */
static int64_t put_create(gb_store *s, const char *token, const char *state)
{
	gb_intent_row in;
	memset(&in, 0, sizeof(in));
	in.kind = (char *)"create";
	in.pool = (char *)"p1";
	in.cloud = (char *)"azure";
	in.region = (char *)"eastus";
	in.instance_type = (char *)"Standard_ND96isr_H100_v5";
	in.capacity = (char *)"on-demand";
	in.count = 2;
	in.token = (char *)token;
	assert_int_equal(gb_store_intent_open(s, &in), 0);
	if (state)
		assert_int_equal(gb_store_intent_close(s, in.id, state,
		                                       "AllocationFailed"), 0);
	return in.id;
}

/* The instances of a create whose intent failed (the engine rolled them
 * back), and only those: not a done or still open create's, nor a row
 * without an intent. */
static void test_inst_rolled_back(void **state)
{
	gb_store *s = open_store();
	int64_t done, failed, open, a, b, *ids;
	size_t n;
	(void)state;
	put_pool(s, "p1", 2, 1000);
	assert_int_equal(gb_store_inst_rolled_back(s, &ids, &n), 0);
	assert_int_equal(n, 0);
	assert_null(ids);
	done = put_create(s, "tok-done", "done");
	failed = put_create(s, "tok-failed", "failed");
	open = put_create(s, "tok-open", NULL);
	put_made_inst(s, "vm-0", done);
	a = put_made_inst(s, "vm-1", failed);
	put_made_inst(s, "vm-2", open);
	put_made_inst(s, "vm-3", 0);
	b = put_made_inst(s, "vm-4", failed);
	assert_int_equal(gb_store_inst_rolled_back(s, &ids, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ids[0], a);
	assert_int_equal(ids[1], b);
	free(ids);
	gb_store_close(s);
}

/* Heartbeat samples: kept with the instance's pool, listed by instance
 * then time within [from, to) and by pool, pruned by age. */
static void test_heartbeat_samples(void **state)
{
	gb_store *s = open_store();
	gb_hb_sample *v;
	size_t n;
	int64_t a, b, del;
	(void)state;
	put_pool(s, "p1", 2, 1000);
	a = put_made_inst(s, "vm-a", 0);
	b = put_made_inst(s, "vm-b", 0);
	assert_int_equal(gb_store_hb_add(s, b, 5000, 0.5), 0);
	assert_int_equal(gb_store_hb_add(s, a, 6000, 0.25), 0);
	assert_int_equal(gb_store_hb_add(s, a, 4000, 1.0), 0);
	assert_int_equal(gb_store_hb_add(s, a, 9000, 0.75), 0);
	/* no such instance: nothing kept */
	assert_int_equal(gb_store_hb_add(s, b + 100, 5000, 0.5), 0);
	assert_int_equal(gb_store_hb_list(s, "p1", 4000, 9000, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].instance_id, a);
	assert_int_equal(v[0].time_ms, 4000);
	assert_true(v[0].gpu_util == 1.0);
	assert_int_equal(v[1].time_ms, 6000);
	assert_true(v[1].gpu_util == 0.25);
	assert_int_equal(v[2].instance_id, b);
	free(v);
	assert_int_equal(gb_store_hb_list(s, "p2", 0, 99999, &v, &n), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	/* ids grow with time here: the rows before 5500 (the first kept
	 * row is the one at 6000, written second) go */
	assert_int_equal(gb_store_hb_prune(s, 5500, &del), 0);
	assert_int_equal(del, 1);
	assert_int_equal(gb_store_hb_list(s, NULL, 0, 99999, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].time_ms, 4000); /* written after 6000: kept */
	free(v);
	assert_int_equal(gb_store_hb_prune(s, 99999, &del), 0);
	assert_int_equal(del, 3);
	gb_store_close(s);
}

/* "p1" applied by team product (a new incarnation once destroyed). */
static void put_product_p1(gb_store *s)
{
	gb_pool_row p;
	memset(&p, 0, sizeof(p));
	p.name = (char *)"p1";
	p.team = (char *)"product";
	p.spec_json = (char *)"{}";
	p.spec_hash = (char *)"h";
	p.desired = 1;
	p.created_at = 3000;
	assert_int_equal(gb_store_pool_put(s, &p), 0);
}

/* A destroyed pool's name applied again, by another team: a new
 * incarnation; instances, events and heartbeat samples keep the team
 * and incarnation they were written under. */
static void test_pool_incarnations(void **state)
{
	gb_store *s = open_store();
	gb_pool_row p;
	gb_inst_row r, *list;
	gb_event_row *ev;
	size_t n;
	int64_t a, b;
	(void)state;
	put_pool(s, "p1", 1, 1000); /* team research */
	assert_int_equal(gb_store_pool_get(s, "p1", &p), 0);
	assert_int_equal(p.incarnation, 1);
	gb_pool_row_free(&p);
	put_pool(s, "p1", 2, 1500); /* re-applied while active: same */
	a = put_made_inst(s, "vm-a", 0);
	assert_int_equal(gb_store_hb_add(s, a, 2000, 0.5), 0);
	assert_int_equal(gb_store_event(s, "p1", NULL, "created", "one"), 0);
	assert_int_equal(gb_store_event(s, NULL, NULL, "gc", "no pool"), 0);
	assert_int_equal(gb_store_pool_set_state(s, "p1", "destroyed", "x"), 0);
	put_product_p1(s);
	assert_int_equal(gb_store_pool_get(s, "p1", &p), 0);
	assert_int_equal(p.incarnation, 2);
	assert_string_equal(p.team, "product");
	gb_pool_row_free(&p);
	b = put_made_inst(s, "vm-b", 0);
	assert_int_equal(gb_store_event(s, "p1", NULL, "created", "two"), 0);
	assert_int_equal(gb_store_inst_get(s, a, &r), 0);
	assert_string_equal(r.team, "research");
	assert_int_equal(r.pool_inc, 1);
	gb_inst_row_free(&r);
	assert_int_equal(gb_store_inst_list(s, "p1", 0, &list, &n), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(list[i].team,
		                    list[i].id == b ? "product" : "research");
		assert_int_equal(list[i].pool_inc, list[i].id == b ? 2 : 1);
	}
	gb_inst_list_free(list, n);
	assert_int_equal(gb_store_event_list(s, NULL, 0, 0, 0, &ev, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(ev[0].team, "research");
	assert_int_equal(ev[0].pool_inc, 1);
	assert_null(ev[1].team);
	assert_int_equal(ev[1].pool_inc, 0);
	assert_string_equal(ev[2].team, "product");
	assert_int_equal(ev[2].pool_inc, 2);
	gb_event_list_free(ev, n);
	gb_store_close(s);
}

static void audit_put(gb_store *s, const char *actor, const char *team,
                      const char *action, const char *pool)
{
	gb_audit_row a;
	memset(&a, 0, sizeof(a));
	a.actor = (char *)actor;
	a.role = (char *)"operator";
	a.team = (char *)team;
	a.action = (char *)action;
	a.target = (char *)pool;
	a.pool = (char *)pool;
	a.result = (char *)"202";
	assert_int_equal(gb_store_audit(s, &a), 0);
}

/* A reused name's audit rows keep the team that owned the pool and its
 * incarnation when written; ?team= finds a team's rows by its tokens or
 * its pools. */
static void test_audit_pool_incarnations(void **state)
{
	gb_store *s = open_store();
	gb_audit_row *al;
	size_t n;
	(void)state;
	put_pool(s, "p1", 1, 1000); /* team research */
	audit_put(s, "r-ci", "research", "apply", "p1");
	assert_int_equal(gb_store_pool_set_state(s, "p1", "destroyed", "x"), 0);
	audit_put(s, "admin", NULL, "destroy", "p1");
	put_product_p1(s);
	audit_put(s, "p-ci", "product", "apply", "p1");
	audit_put(s, "admin", NULL, "gc", NULL);
	assert_int_equal(gb_store_audit_list(s, 0, NULL, 0, &al, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(al[0].pool_team, "research");
	assert_int_equal(al[0].pool_inc, 1);
	assert_string_equal(al[1].action, "destroy");
	assert_null(al[1].team);
	assert_string_equal(al[1].pool, "p1");
	assert_string_equal(al[1].pool_team, "research");
	assert_int_equal(al[1].pool_inc, 1);
	assert_string_equal(al[2].pool_team, "product");
	assert_int_equal(al[2].pool_inc, 2);
	assert_null(al[3].pool);
	assert_null(al[3].pool_team);
	assert_int_equal(al[3].pool_inc, 0);
	gb_audit_list_free(al, n);
	/* the admin's destroy is research's: it was research's pool */
	assert_int_equal(gb_store_audit_list(s, 0, "research", 0, &al, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(al[0].actor, "r-ci");
	assert_string_equal(al[1].actor, "admin");
	assert_string_equal(al[1].action, "destroy");
	gb_audit_list_free(al, n);
	assert_int_equal(gb_store_audit_list(s, 0, "product", 0, &al, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(al[0].actor, "p-ci");
	gb_audit_list_free(al, n);
	assert_int_equal(gb_store_audit_list(s, 0, "nobody", 0, &al, &n), 0);
	assert_int_equal(n, 0);
	gb_audit_list_free(al, n);
	gb_store_close(s);
}

static void test_rollback_discards(void **state)
{
	gb_store *s = open_store();
	gb_pool_row r;
	(void)state;
	assert_int_equal(gb_store_begin(s), 0);
	put_pool(s, "tx", 1, 1);
	gb_store_rollback(s);
	assert_int_equal(gb_store_pool_get(s, "tx", &r), 1);
	assert_int_equal(gb_store_begin(s), 0);
	put_pool(s, "tx", 1, 1);
	assert_int_equal(gb_store_commit(s), 0);
	assert_int_equal(gb_store_pool_get(s, "tx", &r), 0);
	gb_pool_row_free(&r);
	gb_store_close(s);
}

/* ---- a full disk, without filling one ----
 *
 * A VFS over the default one whose writes fail with SQLITE_FULL (what
 * the unix VFS returns on ENOSPC) while disk_full is set; gb_store_open
 * uses the default VFS, so registering it as the default puts it under
 * the store. */
static sqlite3_vfs *real_vfs;
static sqlite3_vfs full_vfs;
static sqlite3_io_methods full_io;
static volatile int disk_full;
static int full_writes_refused;

typedef struct full_file {
	sqlite3_file base;
	sqlite3_file *real; /* right after this struct */
} full_file;

#define REAL(f) (((full_file *)(f))->real)

static int ff_close(sqlite3_file *f)
{
	return REAL(f)->pMethods->xClose(REAL(f));
}
static int ff_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{
	return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}
static int ff_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
	if (disk_full) {
		full_writes_refused++;
		return SQLITE_FULL;
	}
	return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}
static int ff_truncate(sqlite3_file *f, sqlite3_int64 n)
{
	return REAL(f)->pMethods->xTruncate(REAL(f), n);
}
static int ff_sync(sqlite3_file *f, int fl)
{
	return REAL(f)->pMethods->xSync(REAL(f), fl);
}
static int ff_size(sqlite3_file *f, sqlite3_int64 *n)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), n);
}
static int ff_lock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xLock(REAL(f), l);
}
static int ff_unlock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), l);
}
static int ff_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int ff_fcntl(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int ff_sector(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}
static int ff_devchar(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int ff_shmmap(sqlite3_file *f, int pg, int sz, int ext,
                     void volatile **pp)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, ext, pp);
}
static int ff_shmlock(sqlite3_file *f, int off, int n, int fl)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, fl);
}
static void ff_shmbarrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}
static int ff_shmunmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}
static int ff_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **pp)
{
	return REAL(f)->pMethods->xFetch(REAL(f), o, n, pp);
}
static int ff_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p)
{
	return REAL(f)->pMethods->xUnfetch(REAL(f), o, p);
}

static int ff_open(sqlite3_vfs *v, const char *name, sqlite3_file *f,
                   int flags, int *out)
{
	full_file *ff = (full_file *)f;
	int rc;
	(void)v;
	ff->real = (sqlite3_file *)(ff + 1);
	rc = real_vfs->xOpen(real_vfs, name, ff->real, flags, out);
	if (!ff->real->pMethods) {
		f->pMethods = NULL;
		return rc;
	}
	full_io = (sqlite3_io_methods){
		ff->real->pMethods->iVersion, ff_close, ff_read, ff_write,
		ff_truncate, ff_sync, ff_size, ff_lock, ff_unlock, ff_reserved,
		ff_fcntl, ff_sector, ff_devchar, ff_shmmap, ff_shmlock,
		ff_shmbarrier, ff_shmunmap, ff_fetch, ff_unfetch,
	};
	f->pMethods = &full_io;
	return rc;
}

static void full_vfs_install(void)
{
	real_vfs = sqlite3_vfs_find(NULL);
	assert_non_null(real_vfs);
	full_vfs = *real_vfs;
	full_vfs.zName = "gbtest-full";
	full_vfs.szOsFile = (int)sizeof(full_file) + real_vfs->szOsFile;
	full_vfs.xOpen = ff_open;
	full_vfs.pNext = NULL;
	assert_int_equal(sqlite3_vfs_register(&full_vfs, 1), SQLITE_OK);
	disk_full = 0;
	full_writes_refused = 0;
}

static void full_vfs_remove(void)
{
	disk_full = 0;
	sqlite3_vfs_unregister(&full_vfs);
}

/* The disk fills during a commit: SQLite rolls the transaction back
 * itself, so the commit must not ROLLBACK again and report "cannot
 * rollback - no transaction is active" instead of the cause; nothing of
 * the transaction is kept, and the store works once there is space. */
static void test_commit_keeps_the_cause(void **state)
{
	gb_store *s;
	gb_pool_row r;
	char *v = NULL;
	(void)state;
	full_vfs_install();
	s = open_store();
	assert_int_equal(gb_store_begin(s), 0);
	put_pool(s, "full", 1, 1);
	assert_int_equal(gb_store_meta_set(s, "k", "lost"), 0);
	disk_full = 1;
	assert_int_equal(gb_store_commit(s), -1);
	disk_full = 0;
	assert_true(full_writes_refused > 0); /* the fault was injected */
	assert_non_null(strstr(gb_store_errmsg(s), "database or disk is full"));
	assert_non_null(strstr(gb_store_errmsg(s), "commit"));
	assert_null(strstr(gb_store_errmsg(s), "cannot rollback"));
	assert_int_equal(gb_store_pool_get(s, "full", &r), 1);
	assert_int_equal(gb_store_meta_get(s, "k", &v), 1);
	/* space again: the same writes commit */
	assert_int_equal(gb_store_begin(s), 0);
	put_pool(s, "full", 1, 1);
	assert_int_equal(gb_store_meta_set(s, "k", "kept"), 0);
	assert_int_equal(gb_store_commit(s), 0);
	assert_int_equal(gb_store_pool_get(s, "full", &r), 0);
	gb_pool_row_free(&r);
	assert_int_equal(gb_store_meta_get(s, "k", &v), 0);
	assert_string_equal(v, "kept");
	free(v);
	gb_store_close(s);
	full_vfs_remove();
}

/* A write of one transaction after the transaction was rolled back
 * (an inner gb_store_rollback, or SQLite after an error) must fail, not
 * run and commit on its own; the commit then reports why, not "cannot
 * commit - no transaction is active". */
static void test_no_write_after_the_transaction_is_lost(void **state)
{
	gb_store *s = open_store();
	gb_pool_row r;
	char *v = NULL;
	(void)state;
	assert_int_equal(gb_store_begin(s), 0);
	put_pool(s, "lost", 1, 1);
	assert_int_equal(gb_store_begin(s), 0);
	assert_int_equal(gb_store_meta_set(s, "inner", "x"), 0);
	gb_store_rollback(s);               /* the whole transaction */
	assert_int_equal(gb_store_meta_set(s, "after", "x"), -1);
	assert_non_null(strstr(gb_store_errmsg(s), "rolled back"));
	assert_int_equal(gb_store_commit(s), -1);
	assert_null(strstr(gb_store_errmsg(s), "no transaction is active"));
	assert_non_null(strstr(gb_store_errmsg(s), "rolled back"));
	assert_int_equal(gb_store_meta_get(s, "after", &v), 1);
	assert_int_equal(gb_store_meta_get(s, "inner", &v), 1);
	assert_int_equal(gb_store_pool_get(s, "lost", &r), 1);
	/* and the store goes on */
	assert_int_equal(gb_store_begin(s), 0);
	assert_int_equal(gb_store_meta_set(s, "after", "y"), 0);
	assert_int_equal(gb_store_commit(s), 0);
	assert_int_equal(gb_store_meta_get(s, "after", &v), 0);
	assert_string_equal(v, "y");
	free(v);
	gb_store_close(s);
}

/* gb_store_version_try: unchanged while nothing is written; moves on a
 * write through this connection and on a commit through another one (a
 * second process, as the CLI next to the daemon); "busy" (1) inside an
 * open transaction and while another thread holds the store. */
static int version_moved(gb_store *s, int64_t v[2])
{
	int64_t w[2];
	assert_int_equal(gb_store_version_try(s, w), 0);
	int moved = w[0] != v[0] || w[1] != v[1];
	v[0] = w[0];
	v[1] = w[1];
	return moved;
}

typedef struct holder_arg {
	gb_store *s;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stage; /* 1: holds the store; 2: may let go */
} holder_arg;

static void *holder(void *p)
{
	holder_arg *h = p;
	assert_int_equal(gb_store_begin(h->s), 0);
	pthread_mutex_lock(&h->mu);
	h->stage = 1;
	pthread_cond_broadcast(&h->cv);
	while (h->stage != 2)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
	assert_int_equal(gb_store_commit(h->s), 0);
	return NULL;
}

static void test_version(void **state)
{
	gb_store *s = open_store(), *other = open_store();
	int64_t v[2], w[2];
	gb_pool_row r;
	holder_arg h;
	pthread_t t;
	(void)state;
	assert_int_equal(gb_store_version_try(s, v), 0);
	assert_int_equal(gb_store_pool_get(s, "nothing", &r), 1); /* a read */
	assert_false(version_moved(s, v));
	put_pool(s, "here", 1, 1); /* this connection writes */
	assert_true(version_moved(s, v));
	assert_false(version_moved(s, v));
	put_pool(other, "there", 1, 1); /* another connection commits */
	assert_true(version_moved(s, v));
	assert_false(version_moved(s, v));

	/* our own transaction open: not settled yet */
	assert_int_equal(gb_store_begin(s), 0);
	assert_int_equal(gb_store_version_try(s, w), 1);
	assert_int_equal(gb_store_commit(s), 0);

	/* another thread holds the store: answered at once, "busy" */
	h.s = s;
	h.stage = 0;
	pthread_mutex_init(&h.mu, NULL);
	pthread_cond_init(&h.cv, NULL);
	pthread_create(&t, NULL, holder, &h);
	pthread_mutex_lock(&h.mu);
	while (h.stage != 1)
		pthread_cond_wait(&h.cv, &h.mu);
	pthread_mutex_unlock(&h.mu);
	assert_int_equal(gb_store_version_try(s, w), 1);
	pthread_mutex_lock(&h.mu);
	h.stage = 2;
	pthread_cond_broadcast(&h.cv);
	pthread_mutex_unlock(&h.mu);
	pthread_join(t, NULL);
	assert_int_equal(gb_store_version_try(s, w), 0);

	/* gb_store_ver: read, unchanged, moved by a write; unknown = moved */
	{
		gb_store_ver at;
		gb_store_ver_read(s, &at);
		assert_true(at.known);
		assert_int_equal(gb_store_ver_moved(s, &at), 0);
		put_pool(other, "later", 1, 1);
		assert_int_equal(gb_store_ver_moved(s, &at), 1);
		at.known = 0;
		gb_store_ver_read(s, &at);
		assert_int_equal(gb_store_ver_moved(s, &at), 0);
		at.known = 0;
		assert_int_equal(gb_store_ver_moved(s, &at), 1);
	}
	pthread_mutex_destroy(&h.mu);
	pthread_cond_destroy(&h.cv);
	gb_store_close(other);
	gb_store_close(s);
}

static void test_events_and_audit(void **state)
{
	gb_store *s = open_store();
	gb_event_row *ev;
	gb_audit_row a, *al;
	size_t n;
	(void)state;
	assert_int_equal(gb_store_event(s, "p1", "i-1", "failover",
	                                "InsufficientInstanceCapacity in %s; "
	                                "failing over to %s", "us-east-1a",
	                                "us-east-1b"), 0);
	assert_int_equal(gb_store_event(s, "p2", NULL, "created", "x"), 0);
	assert_int_equal(gb_store_event_list(s, "p1", 0, 0, 0, &ev, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(ev[0].message, "InsufficientInstanceCapacity in "
	                                   "us-east-1a; failing over to "
	                                   "us-east-1b");
	gb_event_list_free(ev, n);
	assert_int_equal(gb_store_event_list(s, NULL, 1, 0, 0, &ev, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(ev[0].pool, "p2");
	gb_event_list_free(ev, n);
	memset(&a, 0, sizeof(a));
	a.actor = (char *)"ci";
	a.role = (char *)"operator";
	a.team = (char *)"research";
	a.action = (char *)"apply";
	a.target = (char *)"p1";
	a.result = (char *)"202";
	assert_int_equal(gb_store_audit(s, &a), 0);
	assert_int_equal(gb_store_audit_list(s, 0, NULL, 0, &al, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(al[0].action, "apply");
	assert_string_equal(al[0].result, "202");
	gb_audit_list_free(al, n);
	gb_store_close(s);
}

static void test_decision_last(void **state)
{
	gb_store *s = open_store();
	json_t *rec = json_pack("{s:s, s:i}", "pool", "p1", "candidate_count", 3);
	json_t *got;
	(void)state;
	assert_int_equal(gb_store_decision_last(s, "p1", &got), 1);
	assert_null(got);
	assert_int_equal(gb_store_decision(s, "p1", rec), 0);
	json_object_set_new(rec, "candidate_count", json_integer(5));
	assert_int_equal(gb_store_decision(s, "p1", rec), 0);
	json_object_set_new(rec, "candidate_count", json_integer(7));
	assert_int_equal(gb_store_decision(s, "p2", rec), 0);
	/* the latest of p1's, not p2's */
	assert_int_equal(gb_store_decision_last(s, "p1", &got), 0);
	assert_int_equal(json_integer_value(json_object_get(
		json_object_get(got, "plan"), "candidate_count")), 5);
	{
		int64_t at_ms = 0;
		assert_int_equal(gb_json_time_get(json_object_get(got, "time"),
		                                  &at_ms), 0);
		assert_true(at_ms > 1700000000000LL);
	}
	json_decref(got);
	assert_int_equal(gb_store_decision_last(s, "p3", &got), 1);
	json_decref(rec);
	gb_store_close(s);
}

/* One decision record per change: the same record again writes
 * nothing; retention deletes the old ones but each pool's latest. */
static void test_decisions_once_per_change(void **state)
{
	gb_store *s = open_store();
	json_t *a = json_pack("{s:i}", "candidate_count", 3);
	json_t *b = json_pack("{s:i}", "candidate_count", 4);
	json_t *got;
	int64_t n = -1;
	(void)state;
	for (int i = 0; i < 300; i++)
		assert_int_equal(gb_store_decision(s, "p1", a), 0);
	assert_int_equal(gb_store_decision(s, "p1", b), 0);
	assert_int_equal(gb_store_decision(s, "p1", a), 0); /* a change */
	assert_int_equal(gb_store_decision(s, "p2", b), 0);
	assert_int_equal(gb_store_decisions_prune(s, 0, &n), 0);
	assert_int_equal(n, 0); /* nothing older than the epoch */
	/* everything is old an hour from now: p1's first two go, p1's
	 * and p2's latest stay */
	assert_int_equal(gb_store_decisions_prune(s, gb_now_ms() + 3600000,
	                                          &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(gb_store_decision_last(s, "p1", &got), 0);
	assert_int_equal(json_integer_value(json_object_get(
		json_object_get(got, "plan"), "candidate_count")), 3);
	json_decref(got);
	assert_int_equal(gb_store_decision_last(s, "p2", &got), 0);
	json_decref(got);
	assert_int_equal(gb_store_decisions_prune(s, gb_now_ms() + 3600000,
	                                          &n), 0);
	assert_int_equal(n, 0);
	json_decref(a);
	json_decref(b);
	gb_store_close(s);
}

/* A heartbeat flood keeps one sample a second per instance. */
static void test_heartbeat_samples_coalesce(void **state)
{
	gb_store *s = open_store();
	gb_hb_sample *v;
	size_t n;
	int64_t a, b;
	(void)state;
	put_pool(s, "p1", 2, 1000);
	a = put_made_inst(s, "vm-a", 0);
	b = put_made_inst(s, "vm-b", 0);
	for (int i = 0; i < 500; i++) /* 500 in 2.5 s */
		assert_int_equal(gb_store_hb_add(s, a, 10000 + i * 5, 0.5), 0);
	assert_int_equal(gb_store_hb_add(s, b, 10001, 0.5), 0);
	assert_int_equal(gb_store_hb_list(s, "p1", 0, 99999, &v, &n), 0);
	assert_int_equal(n, 4); /* a: 10000, 11000, 12000; b: 10001 */
	assert_int_equal(v[0].time_ms, 10000);
	assert_int_equal(v[1].time_ms, 11000);
	assert_int_equal(v[2].time_ms, 12000);
	assert_int_equal(v[3].instance_id, b);
	free(v);
	gb_store_close(s);
}

/* An autoscaled pool's demand signal and decision state: a repeat of
 * the signal in force is no change, a save keeps the demand, and a new
 * incarnation of the name starts empty. */
static void test_autoscale_state(void **state)
{
	gb_store *s = open_store();
	gb_as_row a;
	int ch = -1;
	(void)state;
	put_pool(s, "p1", 1, 1000);
	assert_int_equal(gb_store_as_get(s, "p1", &a), 1);
	assert_int_equal(gb_store_as_demand(s, "p1", 3, 1000, 500, &ch), 0);
	assert_int_equal(ch, 1);
	assert_int_equal(gb_store_as_demand(s, "p1", 3, 2000, 600, &ch), 0);
	assert_int_equal(ch, 0); /* the same signal, a later end */
	assert_int_equal(gb_store_as_demand(s, "p1", 4, 2000, 600, &ch), 0);
	assert_int_equal(ch, 1);
	assert_int_equal(gb_store_as_demand(s, "p1", 4, 3000, 2500, &ch), 0);
	assert_int_equal(ch, 1); /* the one before had lapsed */
	assert_int_equal(gb_store_as_save(s, "p1", "{\"a\":1}", "{\"b\":2}",
	                                  "no"), 0);
	assert_int_equal(gb_store_as_get(s, "p1", &a), 0);
	assert_int_equal(a.demand, 4);
	assert_int_equal(a.demand_until, 3000);
	assert_string_equal(a.state, "{\"a\":1}");
	assert_string_equal(a.last, "{\"b\":2}");
	assert_string_equal(a.refused, "no");
	gb_as_row_free(&a);
	assert_int_equal(gb_store_as_save(s, "p1", "{\"a\":1}", "{\"b\":2}",
	                                  "no"), 0); /* unchanged */
	assert_int_equal(gb_store_as_save(s, "p1", "{\"a\":2}", NULL, NULL), 0);
	assert_int_equal(gb_store_as_demand(s, "p1", 0, 0, 2600, &ch), 0);
	assert_int_equal(ch, 1); /* withdrawn */
	assert_int_equal(gb_store_as_demand(s, "p1", 0, 0, 2600, &ch), 0);
	assert_int_equal(ch, 0);
	assert_int_equal(gb_store_as_get(s, "p1", &a), 0);
	assert_int_equal(a.demand, 0);
	assert_string_equal(a.state, "{\"a\":2}");
	assert_null(a.last);
	assert_null(a.refused);
	gb_as_row_free(&a);
	/* a demand in force, then the name destroyed and applied again */
	assert_int_equal(gb_store_as_demand(s, "p1", 2, 9000, 2600, &ch), 0);
	assert_int_equal(gb_store_pool_set_state(s, "p1", "destroyed", "x"), 0);
	put_pool(s, "p1", 1, 5000);
	assert_int_equal(gb_store_as_get(s, "p1", &a), 1);
	assert_int_equal(gb_store_as_demand(s, "p1", 2, 9000, 2700, &ch), 0);
	assert_int_equal(ch, 1);
	assert_int_equal(gb_store_as_get(s, "p1", &a), 0);
	assert_null(a.state);
	assert_int_equal(a.demand, 2);
	gb_as_row_free(&a);
	gb_store_close(s);
}

static void test_unavailable_cooldown(void **state)
{
	gb_store *s = open_store();
	char why[128];
	int64_t until = 0;
	(void)state;
	assert_int_equal(gb_store_unavailable_mark(s, "aws", "us-east-1",
	                                           "us-east-1a", "p5.48xlarge",
	                                           "spot", 1180,
	                                           "InsufficientInstanceCapacity"),
	                 0);
	assert_true(gb_store_unavailable_check(s, "aws", "us-east-1",
	                                       "us-east-1a", "p5.48xlarge", "spot",
	                                       1000, why, sizeof(why), &until));
	assert_string_equal(why, "InsufficientInstanceCapacity");
	assert_int_equal(until, 1180);
	/* other zone, other capacity, or after expiry: available */
	assert_false(gb_store_unavailable_check(s, "aws", "us-east-1",
	                                        "us-east-1b", "p5.48xlarge",
	                                        "spot", 1000, NULL, 0, NULL));
	assert_false(gb_store_unavailable_check(s, "aws", "us-east-1",
	                                        "us-east-1a", "p5.48xlarge",
	                                        "on-demand", 1000, NULL, 0, NULL));
	assert_false(gb_store_unavailable_check(s, "aws", "us-east-1",
	                                        "us-east-1a", "p5.48xlarge",
	                                        "spot", 1181, NULL, 0, NULL));
	/* a region-wide mark (zone "") covers every zone */
	assert_int_equal(gb_store_unavailable_mark(s, "azure", "westeurope", "",
	                                           "Standard_ND96isr_H100_v5",
	                                           "spot", 2000, "SkuNotAvailable"),
	                 0);
	assert_true(gb_store_unavailable_check(s, "azure", "westeurope", "2",
	                                       "Standard_ND96isr_H100_v5", "spot",
	                                       1500, NULL, 0, NULL));
	gb_store_close(s);
}

static void test_offers_replace(void **state)
{
	gb_store *s = open_store();
	gb_offer_row o[2], *out;
	size_t n;
	(void)state;
	memset(o, 0, sizeof(o));
	for (int i = 0; i < 2; i++) {
		o[i].cloud = (char *)"aws";
		o[i].region = (char *)(i ? "us-west-2" : "us-east-1");
		o[i].zone = (char *)"";
		o[i].instance_type = (char *)"g5.xlarge";
		o[i].capacity = (char *)"spot";
		o[i].gpu_model = (char *)"A10G";
		o[i].gpu_count = 1;
		o[i].price = 0.4 + i;
		o[i].source = (char *)"test";
		o[i].fetched_at = 77;
	}
	assert_int_equal(gb_store_offers_replace(s, "aws", NULL, o, 2), 0);
	o[0].price = 0.3;
	/* refreshing one region leaves the other alone */
	assert_int_equal(gb_store_offers_replace(s, "aws", "us-east-1", o, 1), 0);
	assert_int_equal(gb_store_offers_list(s, &out, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].region, "us-east-1");
	assert_true(out[0].price > 0.29 && out[0].price < 0.31);
	assert_string_equal(out[1].region, "us-west-2");
	gb_offer_list_free(out, n);
	gb_store_close(s);
}

typedef struct writer_arg {
	int id;
	int ok;
} writer_arg;

static void *writer(void *p)
{
	writer_arg *a = p;
	gb_store *s = NULL;
	char err[256], name[32];
	if (gb_store_open(path, &s, err, sizeof(err)) != 0) {
		print_error("writer %d: %s\n", a->id, err);
		return NULL;
	}
	for (int i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "w%d-%d", a->id, i);
		if (gb_store_event(s, name, NULL, "x", "y") == 0)
			a->ok++;
		else
			print_error("writer %d: %s\n", a->id, gb_store_errmsg(s));
	}
	gb_store_close(s);
	return NULL;
}

/* Two connections (like a CLI and a daemon) writing at once: busy
 * handling means nobody fails. */
static void test_concurrent_connections(void **state)
{
	pthread_t t[4];
	writer_arg a[4];
	gb_store *s;
	gb_event_row *ev;
	size_t n;
	(void)state;
	s = open_store(); /* creates the schema first */
	for (int i = 0; i < 4; i++) {
		a[i].id = i;
		a[i].ok = 0;
		pthread_create(&t[i], NULL, writer, &a[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(a[i].ok, 50);
	}
	assert_int_equal(gb_store_event_list(s, NULL, 0, 0, 500, &ev, &n), 0);
	assert_int_equal(n, 200);
	gb_event_list_free(ev, n);
	gb_store_close(s);
}

/* Two threads sharing one store, each making the store fail its own way
 * over and over: gb_store_errmsg must give each thread its own error,
 * never the other thread's (the daemon's API workers and reconciler share
 * one gb_store). */
typedef struct err_loop {
	gb_store *s;
	int pool_error;         /* 1: a CHECK violation, 0: a FOREIGN KEY one */
	pthread_barrier_t *go;
	int failed;             /* calls that did not fail (expected -1) */
	int wrong;              /* messages that were not this thread's */
	char seen[512];         /* the first wrong message */
} err_loop;

#define ERR_LOOPS 20000

static void *provoke_errors(void *p)
{
	err_loop *l = p;
	gb_pool_row pool;
	gb_inst_row inst;
	memset(&pool, 0, sizeof(pool));
	pool.name = (char *)"bad";
	pool.team = (char *)"t";
	pool.spec_json = (char *)"{}";
	pool.spec_hash = (char *)"h";
	pool.state = (char *)"bogus"; /* CHECK (state IN (...)) */
	memset(&inst, 0, sizeof(inst));
	inst.pool = (char *)"ghost"; /* no such pool */
	inst.cloud = (char *)"aws";
	inst.region = (char *)"us-east-1";
	inst.instance_type = (char *)"t";
	inst.capacity = (char *)"spot";
	inst.state = (char *)"pending";
	pthread_barrier_wait(l->go);
	for (int i = 0; i < ERR_LOOPS; i++) {
		const char *msg, *what, *why;
		int rc;
		if (l->pool_error) {
			rc = gb_store_pool_put(l->s, &pool);
			what = "save pool";
			why = why_check();
		} else {
			rc = gb_store_inst_put(l->s, &inst);
			what = "save instance";
			why = why_fk();
		}
		if (rc != -1) {
			l->failed++;
			continue;
		}
		msg = gb_store_errmsg(l->s);
		if (!strstr(msg, what) || !strstr(msg, why)) {
			if (!l->wrong++)
				snprintf(l->seen, sizeof(l->seen), "%s", msg);
		}
	}
	return NULL;
}

static void test_errmsg_per_thread(void **state)
{
	gb_store *s = open_store();
	pthread_barrier_t go;
	pthread_t t[2];
	err_loop l[2];
	char mine[512];
	(void)state;
	/* this thread's own error, before the others start */
	assert_int_equal(gb_store_meta_set(s, "k", NULL), -1);
	snprintf(mine, sizeof(mine), "%s", gb_store_errmsg(s));
	assert_non_null(strstr(mine, "write meta"));
	assert_non_null(strstr(mine, why_not_null()));
	pthread_barrier_init(&go, NULL, 2);
	for (int i = 0; i < 2; i++) {
		memset(&l[i], 0, sizeof(l[i]));
		l[i].s = s;
		l[i].pool_error = i;
		l[i].go = &go;
		assert_int_equal(pthread_create(&t[i], NULL, provoke_errors,
		                                &l[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&go);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(l[i].failed, 0);
		if (l[i].wrong)
			fail_msg("thread %d read another thread's error %d times "
			         "of %d, e.g. \"%s\"", i, l[i].wrong, ERR_LOOPS,
			         l[i].seen);
	}
	/* and this thread still has its own */
	assert_string_equal(gb_store_errmsg(s), mine);
	gb_store_close(s);
}

/* Leases and fencing: one holder at a time, a token that moves on when
 * the lease changes hands, and a holder that lost its lease can neither
 * open nor close an intent, nor record an instance. */
static void test_leases_fence_the_journal(void **state)
{
	gb_store *a = open_store(), *b = open_store();
	gb_intent_row in;
	gb_inst_row inst;
	int64_t ta = 0, tb = 0, t2 = 0;
	char holder[128];
	(void)state;
	put_pool(a, "p", 1, 1);
	assert_string_not_equal(gb_store_lease_owner(a), gb_store_lease_owner(b));
	assert_int_equal(gb_store_lease_acquire(a, "pool:p", 300, &ta, NULL, 0), 0);
	assert_true(gb_store_lease_held(a, "pool:p"));
	/* renewing keeps the token */
	assert_int_equal(gb_store_lease_acquire(a, "pool:p", 300, &t2, NULL, 0), 0);
	assert_int_equal(t2, ta);
	/* another owner is refused and told who holds it */
	assert_int_equal(gb_store_lease_acquire(b, "pool:p", 300, &tb, holder,
	                                        sizeof(holder)), 1);
	assert_string_equal(holder, gb_store_lease_owner(a));
	assert_false(gb_store_lease_held(b, "pool:p"));
	gb_store_fence_on(a);
	gb_store_fence_on(b);
	memset(&in, 0, sizeof(in));
	in.kind = (char *)"create";
	in.pool = (char *)"p";
	in.cloud = (char *)"aws";
	in.region = (char *)"us-east-1";
	in.token = (char *)"tok-1";
	in.count = 1;
	assert_int_equal(gb_store_intent_open(a, &in), 0);
	/* b does not hold the pool: nothing is written */
	in.token = (char *)"tok-b";
	assert_int_equal(gb_store_intent_open(b, &in), -1);
	assert_non_null(strstr(gb_store_errmsg(b), "does not hold the pool's lease"));
	/* a renews while alive; then stops (paused) and the lease runs out */
	assert_int_equal(gb_store_lease_renew_all(a, 300), 0);
	usleep(450 * 1000);
	assert_int_equal(gb_store_lease_acquire(b, "pool:p", 5000, &tb, NULL, 0), 0);
	assert_true(tb > ta);
	/* the stale holder: its intent cannot close, no new one opens, no
	 * instance is recorded */
	in.token = (char *)"tok-2";
	assert_int_equal(gb_store_intent_open(a, &in), -1);
	assert_non_null(strstr(gb_store_errmsg(a), "lease"));
	assert_int_equal(gb_store_intent_close(a, 1, "done", NULL), -1);
	memset(&inst, 0, sizeof(inst));
	inst.pool = (char *)"p";
	inst.cloud = (char *)"aws";
	inst.region = (char *)"us-east-1";
	inst.instance_type = (char *)"t";
	inst.capacity = (char *)"spot";
	inst.state = (char *)"pending";
	inst.provider_id = (char *)"i-1";
	assert_int_equal(gb_store_inst_put(a, &inst), -1);
	/* renewing finds nothing to renew: the lease is gone */
	assert_int_equal(gb_store_lease_acquire(a, "pool:p", 300, &t2, NULL, 0), 1);
	assert_false(gb_store_lease_held(a, "pool:p"));
	/* the new holder writes */
	assert_int_equal(gb_store_intent_close(b, 1, "done", NULL), 0);
	inst.id = 0;
	assert_int_equal(gb_store_inst_put(b, &inst), 0);
	{
		gb_intent_row *v;
		size_t n;
		assert_int_equal(gb_store_intent_list_open(b, &v, &n), 0);
		assert_int_equal(n, 0); /* only tok-1 was opened, and closed */
		gb_intent_list_free(v, n);
	}
	/* released: the next owner takes it at once, with a new token */
	assert_int_equal(gb_store_lease_release(b, "pool:p"), 0);
	assert_int_equal(gb_store_lease_acquire(a, "pool:p", 300, &t2, NULL, 0), 0);
	assert_true(t2 > tb);
	gb_store_close(b);
	gb_store_close(a);
}

/* A password in the URL is refused, and not echoed. */
/* The serving lock: a daemon's shared hold refuses `state migrate`'s
 * exclusive one, and a migration's refuses a daemon; both end with the
 * holder. */
static void test_serving_lock(void **state)
{
	gb_store *a, *b;
	char err[512];
	int fd = -1;
	(void)state;
	a = open_store();
	b = open_store();
	assert_int_equal(gb_store_serve_exclusive(path, &fd, err, sizeof(err)), 0);
	assert_true(fd >= 0);
	assert_int_equal(gb_store_serve_hold(a), -1);
	assert_non_null(strstr(gb_store_errmsg(a), "state migrate` is copying"));
	close(fd);
	assert_int_equal(gb_store_serve_hold(a), 0);
	assert_int_equal(gb_store_serve_hold(b), 0); /* daemons share it */
	assert_int_equal(gb_store_serve_exclusive(path, &fd, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "daemon is serving from"));
	assert_int_equal(fd, -1);
	gb_store_close(a);
	assert_int_equal(gb_store_serve_exclusive(path, &fd, err, sizeof(err)), 1);
	gb_store_close(b);
	assert_int_equal(gb_store_serve_exclusive(path, &fd, err, sizeof(err)), 0);
	close(fd);
}

static void test_pg_url_password_refused(void **state)
{
	gb_store *s = NULL;
	char err[512];
	(void)state;
	assert_int_equal(gb_store_open("postgresql://u:hunter2@127.0.0.1:1/db",
	                               &s, err, sizeof(err)), -1);
	assert_null(s);
	assert_non_null(strstr(err, "carries a password"));
	assert_null(strstr(err, "hunter2"));
	assert_int_equal(gb_store_open("postgres://u@127.0.0.1:1/db?password=hunter2",
	                               &s, err, sizeof(err)), -1);
	assert_null(strstr(err, "hunter2"));
	/* unreachable: the message names the URL without its options */
	assert_int_equal(gb_store_open("postgresql://u@127.0.0.1:1/db?sslmode=disable",
	                               &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "postgresql://u@127.0.0.1:1/db"));
	assert_true(gb_store_is_url("postgres://x/y"));
	assert_false(gb_store_is_url("/var/lib/x.db"));
}

/* PostgreSQL reached by a name that is not loopback without
 * sslmode=verify-full is warned about (the server, on 127.0.0.1, is
 * reached as db.invalid through hostaddr); loopback is not.  SQLite:
 * nothing to do. */
static void test_pg_sslmode_warned(void **state)
{
	gb_store *s = NULL;
	char err[512], url[700], buf[4096];
	const char *at = strstr(path, "@127.0.0.1:");
	FILE *f;
	size_t n;
	gb_log_level lvl = gb_log_get_level();
	(void)state;
	if (!on_pg)
		return;
	assert_non_null(at);
	snprintf(url, sizeof(url), "%.*s@db.invalid:%s%shostaddr=127.0.0.1",
	         (int)(at - path), path, at + 11,
	         strchr(at, '?') ? "&" : "?");
	f = tmpfile();
	assert_non_null(f);
	gb_log_set_file(f);
	gb_log_set_level(GB_LOG_WARN);
	s = open_store();
	gb_store_close(s);
	if (gb_store_open(url, &s, err, sizeof(err)) != 0)
		fail_msg("open %s: %s", url, err);
	gb_store_close(s);
	gb_log_set_file(NULL);
	gb_log_set_level(lvl);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	if (!strstr(buf, "the connection to db.invalid uses sslmode=disable, "
	                 "which does not verify") ||
	    !strstr(buf, "add sslmode=verify-full"))
		fail_msg("no sslmode warning for db.invalid: %s", buf);
	assert_null(strstr(buf, "connection to 127.0.0.1"));
}

/* Tokens exchanged for CI ID tokens: found by hash until they expire,
 * then gone (and pruned); ID tokens seen once are a replay the second
 * time, until they expire. */
static void test_exchanged_tokens(void **state)
{
	gb_store *s = open_store();
	gb_xtoken_row row, got;
	int64_t del = -1;
	char h1[65], h2[65];
	(void)state;
	gb_sha256_hex("gbo_one", 7, h1);
	gb_sha256_hex("gbo_two", 7, h2);
	memset(&row, 0, sizeof(row));
	row.actor = "oidc:repo:org/repo";
	row.role = "operator";
	row.team = "research";
	row.labels = "{\"ci-repository\":\"org/repo\"}";
	row.created_ms = 1000;
	row.expires_ms = 5000;
	assert_int_equal(gb_store_xtoken_add(s, h1, &row), 0);
	row.expires_ms = 9000;
	assert_int_equal(gb_store_xtoken_add(s, h2, &row), 0);
	assert_int_equal(gb_store_xtoken_add(s, h2, &row), -1); /* once */
	assert_int_equal(gb_store_xtoken_get(s, h1, 4999, &got), 0);
	assert_string_equal(got.actor, "oidc:repo:org/repo");
	assert_string_equal(got.role, "operator");
	assert_string_equal(got.team, "research");
	assert_string_equal(got.labels, "{\"ci-repository\":\"org/repo\"}");
	assert_int_equal(got.created_ms, 1000);
	assert_int_equal(got.expires_ms, 5000);
	gb_xtoken_row_free(&got);
	assert_int_equal(gb_store_xtoken_get(s, h1, 5000, &got), 1); /* expired */
	assert_int_equal(gb_store_xtoken_get(s, "0000", 0, &got), 1);
	assert_int_equal(gb_store_xtoken_prune(s, 6000, &del), 0);
	assert_int_equal(del, 1);
	assert_int_equal(gb_store_xtoken_get(s, h2, 6000, &got), 0);
	gb_xtoken_row_free(&got);
	/* replay */
	assert_int_equal(gb_store_oidc_seen(s, "tABC", 5000, 1000), 0);
	assert_int_equal(gb_store_oidc_seen(s, "tABC", 5000, 2000), 1);
	assert_int_equal(gb_store_oidc_seen(s, "jXYZ", 5000, 2000), 0);
	/* expired keys are forgotten */
	assert_int_equal(gb_store_oidc_seen(s, "tABC", 9000, 5000), 0);
	gb_store_close(s);
}

/* Store fault injection (store_fault.c): the Nth statement (of those
 * whose SQL matches) fails with the chosen error, on either backend; a
 * failure inside a transaction ends it (the commit fails, nothing of it
 * is written); the count says how many statements ran. */
static void test_fault_injection(void **state)
{
	gb_store *s = open_store();
	gb_pool_row r;
	(void)state;
	put_pool(s, "p1", 2, 1000);
	gb_store__fault_set(0, "FROM pools WHERE name", NULL);
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	gb_pool_row_free(&r);
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	gb_pool_row_free(&r);
	assert_int_equal(gb_store__fault_count(), 2);
	/* the 2nd read of p1 fails, the 1st and 3rd work */
	gb_store__fault_set(2, "FROM pools WHERE name", "full");
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	gb_pool_row_free(&r);
	assert_int_equal(gb_store_pool_get(s, "p1", &r), -1);
	assert_non_null(strstr(gb_store_errmsg(s), "read pool"));
	assert_non_null(strstr(gb_store_errmsg(s), "database or disk is full "
	                                           "(injected by GB_STORE_FAULT)"));
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	assert_int_equal(r.desired, 2);
	gb_pool_row_free(&r);
	/* inside a transaction: the write after the failed one is refused,
	 * the commit fails with the cause, nothing is written */
	gb_store__fault_set(1, "UPDATE pools SET desired", "lost");
	assert_int_equal(gb_store_begin(s), 0);
	assert_int_equal(gb_store_pool_set_desired(s, "p1", 5), -1);
	assert_int_not_equal(gb_store_pool_set_state(s, "p1", "destroying",
	                                             "x"), 0);
	assert_int_equal(gb_store_commit(s), -1);
	assert_non_null(strstr(gb_store_errmsg(s), "server closed the "
	                                           "connection unexpectedly"));
	gb_store__fault_set(0, NULL, NULL);
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	assert_int_equal(r.desired, 2);
	assert_string_equal(r.state, "active");
	gb_pool_row_free(&r);
	/* a failed COMMIT (an exec) rolls back too; the store works on */
	gb_store__fault_set(1, "COMMIT", NULL);
	assert_int_equal(gb_store_begin(s), 0);
	assert_int_equal(gb_store_pool_set_desired(s, "p1", 7), 0);
	assert_int_equal(gb_store_commit(s), -1);
	assert_non_null(strstr(gb_store_errmsg(s), "disk I/O error"));
	gb_store__fault_set(0, NULL, NULL);
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	assert_int_equal(r.desired, 2);
	gb_pool_row_free(&r);
	assert_int_equal(gb_store_pool_set_desired(s, "p1", 3), 0);
	assert_int_equal(gb_store_pool_get(s, "p1", &r), 0);
	assert_int_equal(r.desired, 3);
	gb_pool_row_free(&r);
	gb_store_close(s);
}

/* The one ready instance of p1, 0 when none. */
static int64_t ready_one(gb_store *s)
{
	int64_t *ids = NULL, id = 0;
	size_t n = 0;
	assert_int_equal(gb_store_agent_ready(s, "p1", &ids, &n), 0);
	assert_true(n <= 1);
	if (n)
		id = ids[0];
	free(ids);
	return id;
}

/* Instance agents: a bootstrap token is exchanged once, by its own
 * instance's name, before it expires; the credential finds its instance
 * while it is live and not revoked; reports set and clear readiness. */
static int reg(gb_store *s, const char *name, const char *boot, int64_t id,
               const char *cred, int64_t at)
{
	return gb_store_agent_register(s, name, boot, id, cred, at);
}

static int auth(gb_store *s, const char *cred, int64_t *id, char name[64])
{
	return gb_store_agent_auth(s, cred, id, name, 64, NULL);
}

static void test_agents(void **state)
{
	gb_store *s = open_store();
	int64_t a, b, id = 0;
	char name[64];
	(void)state;
	put_pool(s, "p1", 2, 1000);
	a = put_inst(s, "p1", "vm-a", "running");
	b = put_inst_at(s, "p1", "vm-b", "running", 1);
	assert_int_equal(gb_store_agent_mint(s, "p1", "p1-0", "boot0", 5000), 0);
	assert_int_equal(gb_store_agent_mint(s, "p1", "p1-1", "boot1", 5000), 0);
	/* another instance's token, an expired one, an unknown one */
	assert_int_equal(reg(s, "p1-0", "boot1", a, "c0", 1000), 1);
	assert_int_equal(reg(s, "p1-1", "boot1", b, "c1", 5000), 1);
	assert_int_equal(reg(s, "p1-0", "nope", a, "c0", 1000), 1);
	assert_int_equal(auth(s, "c0", &id, name), 1);
	assert_int_equal(gb_store_agent_token_open(s, "p1-0", "boot0", 1000), 1);
	assert_int_equal(gb_store_agent_token_open(s, "p1-1", "boot0", 1000), 0);
	assert_int_equal(gb_store_agent_token_open(s, "p1-0", "boot0", 5000), 0);
	/* once */
	assert_int_equal(reg(s, "p1-0", "boot0", a, "c0", 1000), 0);
	assert_int_equal(reg(s, "p1-0", "boot0", a, "cX", 1001), 1);
	assert_int_equal(gb_store_agent_token_open(s, "p1-0", "boot0", 1001), 0);
	assert_int_equal(auth(s, "cX", &id, name), 1);
	assert_int_equal(auth(s, "c0", &id, name), 0);
	assert_int_equal(id, a);
	assert_string_equal(name, "p1-0");
	/* readiness follows the reports */
	assert_int_equal(ready_one(s), 0);
	assert_int_equal(gb_store_agent_report(s, a, 2000, "{}", 1), 0);
	assert_int_equal(ready_one(s), a);
	{
		int ready = 0;
		assert_int_equal(gb_store_agent_auth(s, "c0", &id, name, 64,
		                                     &ready), 0);
		assert_int_equal(ready, 1);
	}
	assert_int_equal(gb_store_agent_report(s, a, 3000, "{}", 0), 0);
	assert_int_equal(ready_one(s), 0);
	/* an instance that is ending: its credential is refused */
	assert_int_equal(gb_store_inst_term_accepted(s, a, 4000), 0);
	assert_int_equal(auth(s, "c0", &id, name), 1);
	/* its terminate revoked its credential: and an unused token of
	 * p1-1 (name_index 1) goes with p1-1's terminate */
	assert_int_equal(gb_store_agent_report(s, a, 4000, "{}", 1), 0);
	assert_int_equal(ready_one(s), 0);
	assert_int_equal(gb_store_inst_term_accepted(s, b, 4000), 0);
	assert_int_equal(reg(s, "p1-1", "boot1", b, "c1", 4001), 1);
	gb_store_close(s);
}

#define BOTH(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
	const struct CMUnitTest common[] = {
		BOTH(test_open_creates_private_file_and_schema),
		BOTH(test_newer_schema_refused),
		BOTH(test_pools_keep_created_at_until_destroyed),
		BOTH(test_instances_upsert_by_provider_id),
		BOTH(test_provider_id_reused_after_termination),
		BOTH(test_instance_needs_pool),
		BOTH(test_intents_journal),
		BOTH(test_partials_and_pool_note),
		BOTH(test_pools_steady),
		BOTH(test_inst_rolled_back),
		BOTH(test_heartbeat_samples),
		BOTH(test_pool_incarnations),
		BOTH(test_audit_pool_incarnations),
		BOTH(test_exchanged_tokens),
		BOTH(test_agents),
		BOTH(test_rollback_discards),
		BOTH(test_version),
		BOTH(test_events_and_audit),
		BOTH(test_decision_last),
		BOTH(test_decisions_once_per_change),
		BOTH(test_heartbeat_samples_coalesce),
		BOTH(test_autoscale_state),
		BOTH(test_unavailable_cooldown),
		BOTH(test_offers_replace),
		BOTH(test_concurrent_connections),
		BOTH(test_errmsg_per_thread),
		BOTH(test_leases_fence_the_journal),
		BOTH(test_pg_sslmode_warned),
		BOTH(test_fault_injection),
	};
	const struct CMUnitTest sqlite_only[] = {
		BOTH(test_commit_keeps_the_cause),
		BOTH(test_no_write_after_the_transaction_is_lost),
		BOTH(test_serving_lock),
		cmocka_unit_test(test_pg_url_password_refused),
	};
	int rc;
	pg_url = gbt_pg_url();
	rc = cmocka_run_group_tests_name("sqlite", common, NULL, NULL);
	rc |= cmocka_run_group_tests_name("sqlite only", sqlite_only, NULL, NULL);
	if (pg_url) {
		on_pg = 1;
		rc |= cmocka_run_group_tests_name("postgresql", common, NULL, NULL);
	} else if (getenv("GB_TEST_PG_REQUIRED")) {
		print_error("GB_TEST_PG_REQUIRED is set but GB_TEST_PG_URL is not: "
		            "no PostgreSQL server to test against\n");
		rc = 1;
	} else {
		print_message("postgresql: not tested (GB_TEST_PG_URL unset; "
		              "tests/run.sh starts a server when PostgreSQL is "
		              "installed: make deps)\n");
	}
	return rc;
}
