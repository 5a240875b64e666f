/* store_pools.c -- the pools table. */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

#define POOL_COLS                                                          \
	"name, team, spec_json, spec_hash, state, desired, created_at,"    \
	" updated_at, ttl_s, idle_timeout_s, last_heartbeat_at,"           \
	" last_gpu_use_at, destroy_reason, generation, note, retry_at_ms,"  \
	" incarnation"

void gb_pool_row_free(gb_pool_row *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->team);
	free(r->spec_json);
	free(r->spec_hash);
	free(r->state);
	free(r->destroy_reason);
	free(r->note);
	memset(r, 0, sizeof(*r));
}

void gb_pool_list_free(gb_pool_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		gb_pool_row_free(&v[i]);
	free(v);
}

static void pools_free(void *v, size_t n)
{
	gb_pool_list_free(v, n);
}

static void read_pool(gb_sql *st, void *row)
{
	gb_pool_row *r = row;
	r->name = gb_sql_strdup(st, 0);
	r->team = gb_sql_strdup(st, 1);
	r->spec_json = gb_sql_strdup(st, 2);
	r->spec_hash = gb_sql_strdup(st, 3);
	r->state = gb_sql_strdup(st, 4);
	r->desired = (int)gb_sql_int(st, 5);
	r->created_at = gb_sql_int(st, 6);
	r->updated_at = gb_sql_int(st, 7);
	r->ttl_s = gb_sql_int(st, 8);
	r->idle_timeout_s = gb_sql_int(st, 9);
	r->last_heartbeat_at = gb_sql_int(st, 10);
	r->last_gpu_use_at = gb_sql_int(st, 11);
	r->destroy_reason = gb_sql_strdup(st, 12);
	r->generation = gb_sql_int(st, 13);
	r->note = gb_sql_strdup(st, 14);
	r->retry_at_ms = gb_sql_int(st, 15);
	r->incarnation = gb_sql_int(st, 16);
}

static const gb_store__rows pool_rows = {
	sizeof(gb_pool_row), read_pool, pools_free, "list pools"
};

int gb_store_pool_put(gb_store *s, const gb_pool_row *r)
{
	/* A destroyed pool applied again starts over (new created_at, so its
	 * TTL counts afresh); an active one keeps created_at. */
	static const char sql[] =
		"INSERT INTO pools (" POOL_COLS ") VALUES"
		" (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0, 0, NULL, 1, NULL, 0,"
		" 1)"
		" ON CONFLICT(name) DO UPDATE SET team = ?2, spec_json = ?3,"
		" spec_hash = ?4, state = ?5, desired = ?6, updated_at = ?8,"
		" ttl_s = ?9, idle_timeout_s = ?10, generation = pools.generation + 1,"
		" created_at = CASE WHEN pools.state = 'destroyed' THEN ?7"
		"   ELSE pools.created_at END,"
		" last_heartbeat_at = CASE WHEN pools.state = 'destroyed' THEN 0"
		"   ELSE pools.last_heartbeat_at END,"
		" last_gpu_use_at = CASE WHEN pools.state = 'destroyed' THEN 0"
		"   ELSE pools.last_gpu_use_at END,"
		" incarnation = CASE WHEN pools.state = 'destroyed'"
		"   THEN pools.incarnation + 1 ELSE pools.incarnation END,"
		" destroy_reason = NULL, note = NULL, retry_at_ms = 0";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, r->name);
	gb_sql_bind_text(st, 2, r->team);
	gb_sql_bind_text(st, 3, r->spec_json);
	gb_sql_bind_text(st, 4, r->spec_hash);
	gb_sql_bind_text(st, 5, r->state ? r->state : "active");
	gb_sql_bind_int(st, 6, r->desired);
	gb_sql_bind_int(st, 7, r->created_at);
	gb_sql_bind_int(st, 8, r->updated_at ? r->updated_at : r->created_at);
	gb_sql_bind_int(st, 9, r->ttl_s);
	gb_sql_bind_int(st, 10, r->idle_timeout_s);
	rc = gb_store__exec_stmt(s, st, "save pool");
	gb_store__unlock(s);
	return rc;
}

int gb_store_pool_get(gb_store *s, const char *name, gb_pool_row *out)
{
	static const char sql[] = "SELECT " POOL_COLS " FROM pools WHERE name = ?";
	gb_sql *st;
	int rc;
	memset(out, 0, sizeof(*out));
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, name);
	rc = gb_sql_step(st);
	if (rc == GB_SQL_ROW) {
		read_pool(st, out);
		rc = 0;
	} else {
		rc = rc == GB_SQL_DONE ? 1 : gb_store__fail(s, "read pool");
	}
	gb_sql_reset(st);
	gb_store__unlock(s);
	return rc;
}

int gb_store_pool_list(gb_store *s, const char *team, int include_destroyed,
                       gb_pool_row **out, size_t *n)
{
	static const char sql[] =
		"SELECT " POOL_COLS " FROM pools WHERE (CAST(?1 AS TEXT) IS NULL OR team = ?1)"
		" AND (?2 OR state != 'destroyed') ORDER BY name";
	const gb_store__arg args[] = { GB_STORE_TEXT(team),
	                               GB_STORE_INT(include_destroyed) };
	void *v;
	int rc = gb_store__list(s, sql, args, GB_ARRAY_LEN(args), &pool_rows,
	                        &v, n);
	*out = v;
	return rc;
}

void gb_pool_gen_list_free(gb_pool_gen *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].name);
	free(v);
}

static void gens_free(void *v, size_t n)
{
	gb_pool_gen_list_free(v, n);
}

static void read_gen(gb_sql *st, void *row)
{
	gb_pool_gen *r = row;
	r->name = gb_sql_strdup(st, 0);
	r->generation = gb_sql_int(st, 1);
}

static const gb_store__rows gen_rows = {
	sizeof(gb_pool_gen), read_gen, gens_free, "list steady pools"
};

int gb_store_pool_list_steady(gb_store *s, gb_pool_gen **out, size_t *n)
{
	/* each subquery uses an index: intents_open, instances_pool */
	static const char sql[] =
		"SELECT p.name, p.generation FROM pools p WHERE p.state = 'active'"
		" AND NOT EXISTS (SELECT 1 FROM intents i WHERE i.state = 'open'"
		"  AND i.pool = p.name)"
		" AND NOT EXISTS (SELECT 1 FROM instances x WHERE x.pool = p.name"
		"  AND x.state NOT IN ('running', 'terminated'))"
		" AND (SELECT COUNT(*) FROM instances x WHERE x.pool = p.name"
		"  AND x.state = 'running') = p.desired";
	void *v;
	int rc = gb_store__list(s, sql, NULL, 0, &gen_rows, &v, n);
	*out = v;
	return rc;
}

int gb_store_pool_set_state(gb_store *s, const char *name, const char *state,
                            const char *reason)
{
	static const char sql[] =
		"UPDATE pools SET state = ?2, updated_at = ?3,"
		" destroy_reason = COALESCE(?4, destroy_reason) WHERE name = ?1";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, name);
	gb_sql_bind_text(st, 2, state);
	gb_sql_bind_int(st, 3, gb_now_ms() / 1000);
	gb_sql_bind_text(st, 4, reason);
	rc = gb_store__exec_stmt(s, st, "set pool state");
	gb_store__unlock(s);
	return rc;
}

int gb_store_pool_set_desired(gb_store *s, const char *name, int desired)
{
	static const char sql[] =
		"UPDATE pools SET desired = ?2, updated_at = ?3,"
		" generation = pools.generation + 1, note = NULL, retry_at_ms = 0"
		" WHERE name = ?1";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, name);
	gb_sql_bind_int(st, 2, desired);
	gb_sql_bind_int(st, 3, gb_now_ms() / 1000);
	rc = gb_store__exec_stmt(s, st, "set pool size");
	gb_store__unlock(s);
	return rc;
}

int gb_store_pool_heartbeat(gb_store *s, const char *name, int64_t at,
                            int gpu_busy)
{
	static const char sql[] =
		"UPDATE pools SET last_heartbeat_at = GREATEST(last_heartbeat_at, ?2),"
		" last_gpu_use_at = CASE WHEN ?3 THEN GREATEST(last_gpu_use_at, ?2)"
		" ELSE last_gpu_use_at END WHERE name = ?1";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, name);
	gb_sql_bind_int(st, 2, at);
	gb_sql_bind_int(st, 3, gpu_busy);
	rc = gb_store__exec_stmt(s, st, "record heartbeat");
	gb_store__unlock(s);
	return rc;
}

int gb_store_pool_set_note(gb_store *s, const char *name, const char *note,
                           int64_t retry_at_ms)
{
	static const char sql[] =
		"UPDATE pools SET note = ?2, retry_at_ms = ?3 WHERE name = ?1";
	const gb_store__arg args[] = { GB_STORE_TEXT(name), GB_STORE_TEXT(note),
	                               GB_STORE_INT(note ? retry_at_ms : 0) };
	return gb_store__exec(s, sql, args, GB_ARRAY_LEN(args), "note pool",
	                      NULL);
}
