/* test_store_copy.c -- gb_store_copy: SQLite to SQLite always; SQLite to
 * PostgreSQL and back when GB_TEST_PG_URL names a server (as test_store.c,
 * each in a fresh database).  Every table's rows arrive, ids kept, reals
 * exact; a target that holds a state is refused and left alone; new rows
 * of the target get ids past the copied ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgtest.h"
#include "store.h"

static char dir[] = "/tmp/gb-copy-XXXXXX";
static const char *pg_url;

/* A fresh database's URL on the test server (dropped in teardown). */
static void pg_fresh(char *url, size_t cap)
{
	assert_int_equal(gbt_pg_create("gbcopy", url, cap), 0);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/gb-copy-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];
	(void)state;
	gbt_pg_drop_all();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static gb_store *open_at(const char *target)
{
	gb_store *s = NULL;
	char err[512];
	if (gb_store_open(target, &s, err, sizeof(err)) != 0)
		fail_msg("open %s: %s", target, err);
	return s;
}

#define PRICE (0.1 + 0.2) /* 0.30000000000000004: 17 digits */

/* A state with rows in every table the copy takes. */
static void fill(gb_store *s)
{
	gb_pool_row p;
	gb_intent_row in;
	gb_inst_row r;
	gb_audit_row a;
	gb_offer_row o;
	json_t *rec;
	memset(&p, 0, sizeof(p));
	p.team = (char *)"ml";
	p.spec_json = (char *)"{}";
	p.spec_hash = (char *)"h";
	p.state = (char *)"active";
	p.desired = 2;
	p.created_at = 1000;
	p.ttl_s = 3600;
	p.name = (char *)"p1";
	assert_int_equal(gb_store_pool_put(s, &p), 0);
	p.name = (char *)"p2";
	assert_int_equal(gb_store_pool_put(s, &p), 0);
	for (int i = 0; i < 3; i++) {
		memset(&in, 0, sizeof(in));
		in.kind = (char *)"create";
		in.pool = (char *)"p1";
		in.cloud = (char *)"aws";
		in.region = (char *)"us-east-1";
		in.instance_type = (char *)"g5.xlarge";
		in.capacity = (char *)"spot";
		in.count = 1;
		in.token = (char *)"tok";
		in.price_per_hour = PRICE;
		assert_int_equal(gb_store_intent_open(s, &in), 0);
		if (i == 0) /* a gap in the ids, which the copy keeps */
			assert_int_equal(gb_store_intent_close(s, in.id, "done",
			                                       NULL), 0);
		memset(&r, 0, sizeof(r));
		r.pool = (char *)"p1";
		r.cloud = (char *)"aws";
		r.region = (char *)"us-east-1";
		r.zone = (char *)"us-east-1a";
		r.instance_type = (char *)"g5.xlarge";
		r.capacity = (char *)"spot";
		r.provider_id = (char *)(i == 0 ? "i-0" : i == 1 ? "i-1" : "i-2");
		r.state = (char *)"running";
		r.price_per_hour = PRICE;
		r.launched_ms = 1700000000123;
		r.intent_id = in.id;
		r.name_index = i;
		assert_int_equal(gb_store_inst_put(s, &r), 0);
		assert_int_equal(gb_store_inst_heartbeat(s, r.id, 1700000000,
		                                         0.75), 0);
		assert_int_equal(gb_store_hb_add(s, r.id, 1700000000000 + i,
		                                 0.25 * i), 0);
	}
	for (int i = 0; i < 5; i++)
		assert_int_equal(gb_store_event(s, i % 2 ? "p1" : NULL, NULL,
		                                "created", "event %d", i), 0);
	memset(&a, 0, sizeof(a));
	a.time_ms = 5;
	a.actor = (char *)"admin";
	a.action = (char *)"apply";
	a.target = (char *)"p1";
	a.pool = (char *)"p1";
	a.result = (char *)"200";
	assert_int_equal(gb_store_audit(s, &a), 0);
	rec = json_pack("{s:s}", "pool", "p1");
	assert_int_equal(gb_store_decision(s, "p1", rec), 0);
	json_decref(rec);
	memset(&o, 0, sizeof(o));
	o.cloud = (char *)"aws";
	o.region = (char *)"us-east-1";
	o.zone = (char *)"";
	o.instance_type = (char *)"g5.xlarge";
	o.capacity = (char *)"spot";
	o.gpu_model = (char *)"A10G";
	o.gpu_count = 1;
	o.ram_gb = 16;
	o.price = PRICE;
	o.source = (char *)"test";
	o.fetched_at = 77;
	assert_int_equal(gb_store_offers_replace(s, "aws", NULL, &o, 1), 0);
	assert_int_equal(gb_store_unavailable_mark(s, "aws", "us-east-1", "",
	                                           "g5.xlarge", "spot",
	                                           4000000000, "no capacity"),
	                 0);
	assert_int_equal(gb_store_meta_set(s, "note", "kept"), 0);
	/* an agent's bootstrap token (its credential goes along) */
	assert_int_equal(gb_store_agent_mint(s, "p1", "p1-0", "boot0", 9000),
	                 0);
	{
		int ch;
		assert_int_equal(gb_store_as_demand(s, "p1", 2, 5000, 100, &ch),
		                 0);
	}
}

static const char expected_report[] =
	/* meta: "note" and "offers_version" (offers_replace moves it) */
	"pools 2\nintents 3\ninstances 3\nevents 5\naudit 1\ndecisions 1\n"
	"heartbeats 3\nagents 1\nautoscale 1\noffers 1\nunavailable 1\nmeta 2\n";

/* The target holds what fill() wrote, with the source's ids. */
static void check_copied(gb_store *src, gb_store *dst)
{
	gb_inst_row *sv, *dv;
	gb_intent_row *oi;
	gb_offer_row *of;
	gb_event_row *ev;
	gb_pool_row p;
	size_t sn, dn, n;
	char *v = NULL, *ver = NULL;
	assert_int_equal(gb_store_inst_list(src, NULL, 0, &sv, &sn), 0);
	assert_int_equal(gb_store_inst_list(dst, NULL, 0, &dv, &dn), 0);
	assert_int_equal(sn, 3);
	assert_int_equal(dn, sn);
	for (size_t i = 0; i < sn; i++) {
		assert_int_equal(dv[i].id, sv[i].id);
		assert_int_equal(dv[i].intent_id, sv[i].intent_id);
		assert_string_equal(dv[i].provider_id, sv[i].provider_id);
		assert_true(dv[i].price_per_hour == PRICE);
		assert_true(dv[i].last_gpu_util == 0.75);
		assert_int_equal(dv[i].last_heartbeat_at,
		                 sv[i].last_heartbeat_at);
		assert_int_equal(dv[i].launched_ms, 1700000000123);
		assert_null(dv[i].private_ip); /* NULL stays NULL */
	}
	{
		gb_hb_sample *hb;
		assert_int_equal(gb_store_hb_list(dst, "p1", 0, INT64_MAX, &hb,
		                                  &n), 0);
		assert_int_equal(n, 3);
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(hb[i].instance_id, sv[i].id);
			assert_int_equal(hb[i].time_ms,
			                 1700000000000 + (int64_t)i);
			assert_true(hb[i].gpu_util == 0.25 * (double)i);
		}
		free(hb);
	}
	gb_inst_list_free(sv, sn);
	gb_inst_list_free(dv, dn);
	assert_int_equal(gb_store_intent_list_open(dst, &oi, &n), 0);
	assert_int_equal(n, 2);
	assert_true(oi[0].price_per_hour == PRICE);
	gb_intent_list_free(oi, n);
	assert_int_equal(gb_store_offers_list(dst, &of, &n), 0);
	assert_int_equal(n, 1);
	assert_true(of[0].price == PRICE);
	assert_true(of[0].ram_gb == 16);
	gb_offer_list_free(of, n);
	assert_int_equal(gb_store_event_list(dst, NULL, 0, 0, 0, &ev, &n), 0);
	assert_int_equal(n, 5);
	assert_null(ev[0].pool);
	assert_string_equal(ev[4].message, "event 4");
	gb_event_list_free(ev, n);
	{
		gb_audit_row *al;
		assert_int_equal(gb_store_audit_list(dst, 0, "ml", 0, &al, &n), 0);
		assert_int_equal(n, 1);
		assert_string_equal(al[0].pool, "p1");
		assert_string_equal(al[0].pool_team, "ml");
		assert_int_equal(al[0].pool_inc, 1);
		gb_audit_list_free(al, n);
	}
	assert_int_equal(gb_store_pool_get(dst, "p2", &p), 0);
	assert_int_equal(p.ttl_s, 3600);
	assert_int_equal(p.desired, 2);
	gb_pool_row_free(&p);
	assert_int_equal(gb_store_unavailable_check(dst, "aws", "us-east-1", "",
	                                            "g5.xlarge", "spot", 100,
	                                            NULL, 0, NULL), 1);
	assert_int_equal(gb_store_meta_get(dst, "note", &v), 0);
	assert_string_equal(v, "kept");
	free(v);
	assert_int_equal(gb_store_meta_get(dst, "schema_version", &ver), 0);
	assert_int_equal(atoi(ver), GB_STORE_SCHEMA_VERSION);
	free(ver);
}

/* New rows of the target take ids past the copied ones. */
static void check_new_ids(gb_store *src, gb_store *dst)
{
	gb_event_row *ev;
	gb_intent_row in;
	size_t n;
	int64_t last;
	assert_int_equal(gb_store_event_list(src, NULL, 0, 0, 0, &ev, &n), 0);
	last = ev[n - 1].id;
	gb_event_list_free(ev, n);
	assert_int_equal(gb_store_event(dst, "p1", NULL, "after", "new"), 0);
	assert_int_equal(gb_store_event_list(dst, NULL, last, 0, 0, &ev, &n), 0);
	assert_int_equal(n, 1);
	assert_true(ev[0].id > last);
	gb_event_list_free(ev, n);
	memset(&in, 0, sizeof(in));
	in.kind = (char *)"terminate";
	in.pool = (char *)"p2";
	in.cloud = (char *)"aws";
	in.region = (char *)"us-east-1";
	in.token = (char *)"tok-new";
	assert_int_equal(gb_store_intent_open(dst, &in), 0);
	assert_true(in.id > 3);
}

/* A second copy into a target that holds a state: refused, unchanged. */
static void check_refused(gb_store *src, gb_store *dst)
{
	char *report = (char *)"untouched";
	gb_event_row *ev;
	size_t n;
	assert_int_equal(gb_store_event_list(dst, NULL, 0, 0, 0, &ev, &n), 0);
	gb_event_list_free(ev, n);
	assert_int_equal(gb_store_copy(src, dst, &report), 1);
	assert_null(report);
	assert_non_null(strstr(gb_store_errmsg(dst), "already holds a state (2 "
	                       "pools, 3 instances"));
	assert_non_null(strstr(gb_store_errmsg(dst), "migrate only into an "
	                       "empty database"));
	{
		size_t n2;
		assert_int_equal(gb_store_event_list(dst, NULL, 0, 0, 0, &ev,
		                                     &n2), 0);
		assert_int_equal(n2, n);
		gb_event_list_free(ev, n2);
	}
}

static void copy_between(const char *src_target, const char *dst_target,
                         const char *back_target)
{
	gb_store *src = open_at(src_target), *dst = open_at(dst_target);
	char *report = NULL;
	fill(src);
	if (gb_store_copy(src, dst, &report) != 0)
		fail_msg("copy: %s", gb_store_errmsg(dst));
	assert_string_equal(report, expected_report);
	free(report);
	check_copied(src, dst);
	check_refused(src, dst);
	if (back_target) { /* and back, from the copy into a third store */
		gb_store *back = open_at(back_target);
		assert_int_equal(gb_store_copy(dst, back, &report), 0);
		assert_string_equal(report, expected_report);
		free(report);
		check_copied(src, back);
		gb_store_close(back);
	}
	check_new_ids(src, dst);
	gb_store_close(src);
	gb_store_close(dst);
}

static void test_sqlite_to_sqlite(void **state)
{
	char a[512], b[512];
	(void)state;
	snprintf(a, sizeof(a), "%s/a.db", dir);
	snprintf(b, sizeof(b), "%s/b.db", dir);
	copy_between(a, b, NULL);
}

static void test_empty_source(void **state)
{
	char a[512], b[512], *report = NULL;
	gb_store *src, *dst;
	(void)state;
	snprintf(a, sizeof(a), "%s/a.db", dir);
	snprintf(b, sizeof(b), "%s/b.db", dir);
	src = open_at(a);
	dst = open_at(b);
	assert_int_equal(gb_store_copy(src, dst, &report), 0);
	assert_non_null(strstr(report, "pools 0\n"));
	assert_non_null(strstr(report, "meta 0\n"));
	free(report);
	gb_store_close(src);
	gb_store_close(dst);
}

/* A source whose table is a view of endless rows (not a state gpubroker
 * wrote) is refused before anything is read. */
static void test_view_source_refused(void **state)
{
	char a[512], b[512], *report = NULL;
	gb_store *src, *dst;
	sqlite3 *db;
	(void)state;
	snprintf(a, sizeof(a), "%s/a.db", dir);
	snprintf(b, sizeof(b), "%s/b.db", dir);
	gb_store_close(open_at(a));
	assert_int_equal(sqlite3_open(a, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DROP TABLE events; CREATE VIEW"
	                              " events AS WITH RECURSIVE c(x) AS"
	                              " (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
	                              " SELECT x AS id, x AS time_ms, NULL AS"
	                              " pool, NULL AS instance, 'k' AS kind,"
	                              " 'm' AS message, NULL AS team, 0 AS"
	                              " pool_inc FROM c", NULL, NULL, NULL),
	                 SQLITE_OK);
	sqlite3_close(db);
	src = open_at(a);
	dst = open_at(b);
	assert_int_equal(gb_store_copy(src, dst, &report), 1);
	assert_null(report);
	assert_non_null(strstr(gb_store_errmsg(dst), "events is not a table"));
	gb_store_close(src);
	gb_store_close(dst);
}

static void test_sqlite_to_pg_and_back(void **state)
{
	char a[512], url[512], back[512];
	(void)state;
	snprintf(a, sizeof(a), "%s/a.db", dir);
	snprintf(back, sizeof(back), "%s/back.db", dir);
	pg_fresh(url, sizeof(url));
	copy_between(a, url, back);
}

static void test_pg_to_pg(void **state)
{
	char a[512], b[512];
	(void)state;
	pg_fresh(a, sizeof(a));
	pg_fresh(b, sizeof(b));
	copy_between(a, b, NULL);
}

#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
	const struct CMUnitTest sqlite[] = {
		T(test_sqlite_to_sqlite),
		T(test_empty_source),
		T(test_view_source_refused),
	};
	const struct CMUnitTest pg[] = {
		T(test_sqlite_to_pg_and_back),
		T(test_pg_to_pg),
	};
	int rc;
	pg_url = gbt_pg_url();
	rc = cmocka_run_group_tests_name("sqlite", sqlite, NULL, NULL);
	if (pg_url && *pg_url) {
		rc |= cmocka_run_group_tests_name("postgresql", pg, NULL, NULL);
	} else if (getenv("GB_TEST_PG_REQUIRED")) {
		print_error("GB_TEST_PG_REQUIRED is set but GB_TEST_PG_URL is not: "
		            "no PostgreSQL server to test against\n");
		rc = 1;
	} else {
		print_message("postgresql: not tested (GB_TEST_PG_URL unset)\n");
	}
	return rc;
}
