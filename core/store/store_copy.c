/* store_copy.c -- gb_store_copy: one state copied into another store
 * (SQLite to PostgreSQL when a broker moves up from one machine; any
 * backend to any other works), ids kept, in one transaction of the
 * target, then verified by counting the rows of each table on both sides.
 * The source is read inside a write transaction of its own: one snapshot,
 * and its other writers wait until the copy is done.
 *
 * Generic over the statement API (store_int.h): each table is listed with
 * its columns (as migrations[] in store.c creates them) and their types,
 * so integers and reals travel as numbers (a REAL read as SQLite's text
 * would lose digits).  leases are not copied: they belong to the
 * processes of the old store; nor are oidc_tokens and oidc_seen (CI
 * tokens live an hour or so: a job signs in again). */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* rows of one table a copy takes at most */
#define GB_COPY_MAX_ROWS 100000000LL

typedef struct copy_table {
	const char *name;
	const char *cols;  /* as in store.c's CREATE TABLE */
	const char *types; /* one letter a column: t text, i integer, r real */
	const char *order; /* the primary key */
	const char *where; /* NULL, or the rows that are copied */
	int has_id;        /* an INTEGER PRIMARY KEY id (an identity on PG) */
} copy_table;

/* Foreign-key order: pools before intents before instances. */
static const copy_table tables[] = {
	{ "pools",
	  "name, team, spec_json, spec_hash, state, desired, created_at,"
	  " updated_at, ttl_s, idle_timeout_s, last_heartbeat_at,"
	  " last_gpu_use_at, destroy_reason, generation, note, retry_at_ms,"
	  " incarnation",
	  "tttttiiiiiiititii", "name", NULL, 0 },
	{ "intents",
	  "id, kind, pool, cloud, region, zone, instance_type, capacity, count,"
	  " token, name_prefix, first_index, price_per_hour, gpu_model,"
	  " gpu_count, state, error, detail, created_at, closed_at",
	  "itttttttittirtitttii", "id", NULL, 1 },
	{ "instances",
	  "id, pool, cloud, region, zone, instance_type, capacity, provider_id,"
	  " name, token, state, state_reason, private_ip, public_ip, gpu_model,"
	  " gpu_count, price_per_hour, launched_ms, running_ms,"
	  " terminate_requested_ms, terminated_ms, last_seen_ms,"
	  " last_heartbeat_at, last_gpu_util, intent_id, name_index, team,"
	  " pool_inc",
	  "itttttttttttttt" "iriiiiiirii" "ti", "id", NULL, 1 },
	{ "events", "id, time_ms, pool, instance, kind, message, team, pool_inc",
	  "iittttti", "id", NULL, 1 },
	{ "audit",
	  "id, time_ms, actor, role, team, action, target, result, detail,"
	  " pool, pool_team, pool_inc",
	  "iittttttt" "tti", "id", NULL, 1 },
	{ "decisions", "id, time_ms, pool, record", "iitt", "id", NULL, 1 },
	{ "heartbeats", "id, instance_id, pool, time_ms, gpu_util, team,"
	  " pool_inc", "iitirti",
	  "id", NULL, 1 },
	/* agents keep reporting with their credentials after a move */
	{ "agents",
	  "boot_sha256, pool, name, boot_expires_ms, cred_sha256, instance_id,"
	  " registered_ms, revoked_ms, reported_ms, ready_ms, report",
	  "tttitiiiiit", "boot_sha256", NULL, 0 },
	{ "autoscale",
	  "pool, pool_inc, demand, demand_until, state, last, refused",
	  "tiiittt", "pool", NULL, 0 },
	{ "offers",
	  "cloud, region, zone, instance_type, capacity, gpu_model, gpu_count,"
	  " gpu_memory_gb, vcpus, ram_gb, price, source, fetched_at",
	  "ttttttiiirrti", "cloud, region, zone, instance_type, capacity",
	  NULL, 0 },
	{ "unavailable",
	  "cloud, region, zone, instance_type, capacity, until_s, reason",
	  "tttttit", "cloud, region, zone, instance_type, capacity", NULL, 0 },
	/* the schema version is the target's own (its migrations wrote it);
	 * 'changes' is PostgreSQL's change counter (store_pg.c) */
	{ "meta", "key, value", "tt", "key",
	  "key NOT IN ('schema_version', 'changes')", 0 },
};

/* The tables a target must not have rows in. */
static const char *const state_tables[] = {
	"pools", "instances", "intents", "events", "audit",
};

/* "?1, ?2, ..., ?n" */
static char *placeholders(size_t n)
{
	gb_buf b = GB_BUF_INIT;
	for (size_t i = 1; i <= n; i++)
		gb_buf_printf(&b, "%s?%zu", i > 1 ? ", " : "", i);
	return gb_buf_take(&b);
}

/* One statement run once (not cached: its text is built here). */
static int query_int(gb_store *s, const char *sql, const char *what,
                     int64_t *out)
{
	gb_sql *st;
	int rc;
	*out = 0;
	gb_store__lock(s);
	if (!(st = s->be->prepare(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	rc = gb_sql_step(st);
	if (rc == GB_SQL_ROW)
		*out = gb_sql_int(st, 0);
	else if (rc == GB_SQL_ERR)
		gb_store__fail(s, what);
	s->be->finalize(st);
	gb_store__unlock(s);
	return rc == GB_SQL_ERR ? -1 : 0;
}

static int count_rows(gb_store *s, const copy_table *t, int64_t *n)
{
	char *sql = gb_xasprintf("SELECT COUNT(*) FROM %s%s%s", t->name,
	                         t->where ? " WHERE " : "",
	                         t->where ? t->where : "");
	char *what = gb_xasprintf("count the rows of %s", t->name);
	int rc = query_int(s, sql, what, n);
	free(sql);
	free(what);
	return rc;
}

/* Copies one table; the caller holds `to`'s transaction.  *copied gets
 * the rows written. */
static int copy_table_rows(gb_store *from, gb_store *to, const copy_table *t,
                           int64_t *copied)
{
	size_t ncol = strlen(t->types);
	char *ph = placeholders(ncol);
	char *sel = gb_xasprintf("SELECT %s FROM %s%s%s ORDER BY %s", t->cols,
	                         t->name, t->where ? " WHERE " : "",
	                         t->where ? t->where : "", t->order);
	char *ins = gb_xasprintf("INSERT INTO %s (%s) VALUES (%s)", t->name,
	                         t->cols, ph);
	gb_sql *rd = NULL, *wr = NULL;
	int rc = -1, step;
	size_t commas = 0;
	*copied = 0;
	for (const char *c = t->cols; *c; c++)
		commas += *c == ',';
	if (commas + 1 != ncol) { /* a mistake in tables[] */
		free(ph);
		free(sel);
		free(ins);
		return gb_store__failf(to, "copy %s: %zu columns but %zu types",
		                       t->name, commas + 1, ncol);
	}
	gb_store__lock(from);
	if (!(rd = from->be->prepare(from, sel)) ||
	    !(wr = to->be->prepare(to, ins)))
		goto out;
	while ((step = gb_sql_step(rd)) == GB_SQL_ROW) {
		for (size_t i = 0; i < ncol; i++) {
			int c = (int)i, p = (int)i + 1;
			if (!gb_sql_text(rd, c))
				gb_sql_bind_null(wr, p);
			else if (t->types[i] == 'i')
				gb_sql_bind_int(wr, p, gb_sql_int(rd, c));
			else if (t->types[i] == 'r')
				gb_sql_bind_double(wr, p, gb_sql_double(rd, c));
			else
				gb_sql_bind_text(wr, p, gb_sql_text(rd, c));
		}
		if (gb_sql_step(wr) == GB_SQL_ERR) {
			char *what = t->has_id
				? gb_xasprintf("copy %s row id %lld", t->name,
				               (long long)gb_sql_int(rd, 0))
				: gb_xasprintf("copy a row of %s", t->name);
			gb_store__fail(to, what);
			free(what);
			goto out;
		}
		gb_sql_reset(wr);
		if (++*copied > GB_COPY_MAX_ROWS) {
			gb_store__failf(to, "copy %s: more than %lld rows in %s: "
			                "refusing to copy (delete old rows, e.g. "
			                "with daemon.*_retention, first)", t->name,
			                (long long)GB_COPY_MAX_ROWS, from->path);
			goto out;
		}
	}
	if (step == GB_SQL_ERR) {
		char *what = gb_xasprintf("read %s", t->name);
		gb_store__fail(from, what);
		free(what);
		goto out;
	}
	rc = 0;
out:
	if (rd)
		from->be->finalize(rd);
	if (wr)
		to->be->finalize(wr);
	gb_store__unlock(from);
	free(ph);
	free(sel);
	free(ins);
	return rc;
}

/* 0 empty, 1 refused (error set), -1 error. */
static int check_empty(gb_store *to)
{
	int64_t n[GB_ARRAY_LEN(state_tables)];
	int64_t total = 0;
	gb_buf b = GB_BUF_INIT;
	char *text;
	for (size_t i = 0; i < GB_ARRAY_LEN(state_tables); i++) {
		copy_table t = { .name = state_tables[i] };
		if (count_rows(to, &t, &n[i]) != 0)
			return -1;
		total += n[i];
	}
	if (!total)
		return 0;
	for (size_t i = 0; i < GB_ARRAY_LEN(state_tables); i++)
		gb_buf_printf(&b, "%s%lld %s", i ? ", " : "", (long long)n[i],
		              state_tables[i]);
	text = gb_buf_take(&b);
	gb_store__failf(to, "state database %s already holds a state (%s): "
	                "migrate only into an empty database", to->path, text);
	free(text);
	return 1;
}

/* Every table of the source is a table (a view in its place, maybe of
 * endless rows, is refused before anything is read).  0, 1 refused
 * (error set), -1 error. */
static int check_tables(gb_store *from)
{
	for (size_t i = 0; i < GB_ARRAY_LEN(tables); i++) {
		int rc = from->be->has_table(from, tables[i].name);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			gb_store__failf(from, "state database %s: %s is not a "
			                "table (a view, or missing): this is not "
			                "a state gpubroker wrote; refusing to copy "
			                "it", from->path, tables[i].name);
			return 1;
		}
	}
	return 0;
}

/* After the copy, PostgreSQL's identity sequences start past the copied
 * ids (else the next insert would reuse id 1). */
static int move_sequences(gb_store *to)
{
	if (strcmp(gb_store_backend_name(to), "postgresql") != 0)
		return 0;
	for (size_t i = 0; i < GB_ARRAY_LEN(tables); i++) {
		const copy_table *t = &tables[i];
		char *sql;
		int64_t v;
		int rc;
		if (!t->has_id)
			continue;
		sql = gb_xasprintf("SELECT setval(pg_get_serial_sequence('%s',"
		                   " 'id'), COALESCE(MAX(id), 0) + 1, false) FROM"
		                   " %s", t->name, t->name);
		rc = query_int(to, sql, "move the id sequence past the copied "
		               "ids", &v);
		free(sql);
		if (rc != 0)
			return -1;
	}
	return 0;
}

int gb_store_copy(gb_store *from, gb_store *to, char **report)
{
	int64_t copied[GB_ARRAY_LEN(tables)], had[GB_ARRAY_LEN(tables)];
	gb_buf b = GB_BUF_INIT;
	int rc;
	if (report)
		*report = NULL;
	/* A write transaction on the source too: what is read is one
	 * snapshot, and no other process writes to it until the copy is
	 * done (its writers wait, as for any other writer). */
	if (gb_store_begin(from) != 0)
		return -1;
	if (gb_store_begin(to) != 0) {
		gb_store_rollback(from);
		return -1;
	}
	if ((rc = check_empty(to)) != 0 || (rc = check_tables(from)) != 0)
		goto fail;
	rc = -1;
	for (size_t i = 0; i < GB_ARRAY_LEN(tables); i++) {
		if (copy_table_rows(from, to, &tables[i], &copied[i]) != 0 ||
		    count_rows(from, &tables[i], &had[i]) != 0)
			goto fail;
	}
	if (gb_store_commit(to) != 0) {
		gb_store_rollback(from);
		return -1;
	}
	gb_store_rollback(from); /* it wrote nothing */
	if (move_sequences(to) != 0)
		return -1;
	/* verify: what the target holds now against the source's snapshot */
	for (size_t i = 0; i < GB_ARRAY_LEN(tables); i++) {
		const copy_table *t = &tables[i];
		int64_t z;
		if (count_rows(to, t, &z) != 0) {
			gb_buf_free(&b);
			return -1;
		}
		if (had[i] != z || z != copied[i]) {
			gb_buf_free(&b);
			return gb_store__failf(to, "state database %s: %s has "
			                       "%lld rows in %s but %lld here (%lld "
			                       "copied): the copy is not complete (did "
			                       "a process write to it meanwhile?)",
			                       to->path, t->name, (long long)had[i],
			                       from->path, (long long)z,
			                       (long long)copied[i]);
		}
		gb_buf_printf(&b, "%s %lld\n", t->name, (long long)z);
	}
	if (report)
		*report = gb_buf_take(&b);
	else
		gb_buf_free(&b);
	return 0;
fail:
	gb_store_rollback(to);
	gb_store_rollback(from);
	return rc;
}
