/* store_instances.c -- the instances table. */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

#define INST_COLS                                                           \
	"id, pool, cloud, region, zone, instance_type, capacity, provider_id," \
	" name, token, state, state_reason, private_ip, public_ip, gpu_model," \
	" gpu_count, price_per_hour, launched_ms, running_ms,"                 \
	" terminate_requested_ms, terminated_ms, last_seen_ms,"                \
	" last_heartbeat_at, last_gpu_util, intent_id, name_index, team,"     \
	" pool_inc"

void gb_inst_row_free(gb_inst_row *r)
{
	if (!r)
		return;
	free(r->pool);
	free(r->cloud);
	free(r->region);
	free(r->zone);
	free(r->instance_type);
	free(r->capacity);
	free(r->provider_id);
	free(r->name);
	free(r->token);
	free(r->state);
	free(r->state_reason);
	free(r->private_ip);
	free(r->public_ip);
	free(r->gpu_model);
	free(r->team);
	memset(r, 0, sizeof(*r));
}

void gb_inst_list_free(gb_inst_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		gb_inst_row_free(&v[i]);
	free(v);
}

static void insts_free(void *v, size_t n)
{
	gb_inst_list_free(v, n);
}

static void read_inst(gb_sql *st, void *row)
{
	gb_inst_row *r = row;
	r->id = gb_sql_int(st, 0);
	r->pool = gb_sql_strdup(st, 1);
	r->cloud = gb_sql_strdup(st, 2);
	r->region = gb_sql_strdup(st, 3);
	r->zone = gb_sql_strdup(st, 4);
	r->instance_type = gb_sql_strdup(st, 5);
	r->capacity = gb_sql_strdup(st, 6);
	r->provider_id = gb_sql_strdup(st, 7);
	r->name = gb_sql_strdup(st, 8);
	r->token = gb_sql_strdup(st, 9);
	r->state = gb_sql_strdup(st, 10);
	r->state_reason = gb_sql_strdup(st, 11);
	r->private_ip = gb_sql_strdup(st, 12);
	r->public_ip = gb_sql_strdup(st, 13);
	r->gpu_model = gb_sql_strdup(st, 14);
	r->gpu_count = (int)gb_sql_int(st, 15);
	r->price_per_hour = gb_sql_double(st, 16);
	r->launched_ms = gb_sql_int(st, 17);
	r->running_ms = gb_sql_int(st, 18);
	r->terminate_requested_ms = gb_sql_int(st, 19);
	r->terminated_ms = gb_sql_int(st, 20);
	r->last_seen_ms = gb_sql_int(st, 21);
	r->last_heartbeat_at = gb_sql_int(st, 22);
	r->last_gpu_util = gb_sql_double(st, 23);
	r->intent_id = gb_sql_int(st, 24);
	r->name_index = (int)gb_sql_int(st, 25);
	r->team = gb_sql_strdup(st, 26);
	r->pool_inc = gb_sql_int(st, 27);
}

static const gb_store__rows inst_rows = {
	sizeof(gb_inst_row), read_inst, insts_free, "list instances"
};

int gb_store_inst_put(gb_store *s, gb_inst_row *r)
{
	static const char ins[] =
		"INSERT INTO instances (pool, cloud, region, zone, instance_type,"
		" capacity, provider_id, name, token, state, state_reason,"
		" private_ip, public_ip, gpu_model, gpu_count, price_per_hour,"
		" launched_ms, running_ms, terminate_requested_ms, terminated_ms,"
		" last_seen_ms, intent_id, name_index, team, pool_inc)"
		" VALUES (?1, ?2, ?3, ?4, ?5,"
		" ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,"
		" ?20, ?21, ?22, ?23, (SELECT team FROM pools WHERE name = ?1),"
		" COALESCE((SELECT incarnation FROM pools WHERE name = ?1), 1))"
		" ON CONFLICT(cloud, provider_id) WHERE state != 'terminated'"
		" DO UPDATE SET region = ?3,"
		" zone = ?4, state = ?10, state_reason = ?11,"
		" private_ip = COALESCE(?12, instances.private_ip),"
		" public_ip = COALESCE(?13, instances.public_ip),"
		" running_ms = GREATEST(instances.running_ms, ?18),"
		" terminate_requested_ms = GREATEST(instances.terminate_requested_ms, ?19),"
		" terminated_ms = GREATEST(instances.terminated_ms, ?20),"
		" last_seen_ms = GREATEST(instances.last_seen_ms, ?21) RETURNING id";
	static const char upd[] =
		"UPDATE instances SET state = ?2, state_reason = ?3,"
		" private_ip = COALESCE(?4, private_ip),"
		" public_ip = COALESCE(?5, public_ip),"
		" running_ms = GREATEST(running_ms, ?6),"
		" terminate_requested_ms = GREATEST(terminate_requested_ms, ?7),"
		" terminated_ms = GREATEST(terminated_ms, ?8),"
		" last_seen_ms = GREATEST(last_seen_ms, ?9),"
		" provider_id = COALESCE(?10, provider_id),"
		" zone = COALESCE(NULLIF(?11, ''), zone) WHERE id = ?1";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (r->id > 0) {
		if (!(st = gb_store__stmt(s, upd))) {
			gb_store__unlock(s);
			return -1;
		}
		gb_sql_bind_int(st, 1, r->id);
		gb_sql_bind_text(st, 2, r->state);
		gb_sql_bind_text(st, 3, r->state_reason);
		gb_sql_bind_text(st, 4, r->private_ip);
		gb_sql_bind_text(st, 5, r->public_ip);
		gb_sql_bind_int(st, 6, r->running_ms);
		gb_sql_bind_int(st, 7, r->terminate_requested_ms);
		gb_sql_bind_int(st, 8, r->terminated_ms);
		gb_sql_bind_int(st, 9, r->last_seen_ms);
		gb_sql_bind_text(st, 10, r->provider_id);
		gb_sql_bind_text(st, 11, r->zone);
		rc = gb_store__exec_stmt(s, st, "update instance");
		gb_store__unlock(s);
		return rc;
	}
	/* a new instance is recorded under the pool's lease (store.h) */
	if (gb_store_begin(s) != 0) {
		gb_store__unlock(s);
		return -1;
	}
	if (gb_store__fence(s, r->pool) != 0 ||
	    !(st = gb_store__stmt(s, ins))) {
		gb_store_rollback(s);
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, r->pool);
	gb_sql_bind_text(st, 2, r->cloud);
	gb_sql_bind_text(st, 3, r->region);
	gb_sql_bind_text(st, 4, r->zone ? r->zone : "");
	gb_sql_bind_text(st, 5, r->instance_type);
	gb_sql_bind_text(st, 6, r->capacity);
	gb_sql_bind_text(st, 7, r->provider_id);
	gb_sql_bind_text(st, 8, r->name);
	gb_sql_bind_text(st, 9, r->token);
	gb_sql_bind_text(st, 10, r->state);
	gb_sql_bind_text(st, 11, r->state_reason);
	gb_sql_bind_text(st, 12, r->private_ip);
	gb_sql_bind_text(st, 13, r->public_ip);
	gb_sql_bind_text(st, 14, r->gpu_model);
	gb_sql_bind_int(st, 15, r->gpu_count);
	gb_sql_bind_double(st, 16, r->price_per_hour);
	gb_sql_bind_int(st, 17, r->launched_ms);
	gb_sql_bind_int(st, 18, r->running_ms);
	gb_sql_bind_int(st, 19, r->terminate_requested_ms);
	gb_sql_bind_int(st, 20, r->terminated_ms);
	gb_sql_bind_int(st, 21, r->last_seen_ms);
	if (r->intent_id > 0)
		gb_sql_bind_int(st, 22, r->intent_id);
	else
		gb_sql_bind_null(st, 22);
	gb_sql_bind_int(st, 23, r->name_index);
	rc = gb_sql_step(st);
	if (rc == GB_SQL_ROW) {
		r->id = gb_sql_int(st, 0);
		gb_sql_reset(st);
		rc = gb_store_commit(s);
	} else {
		rc = gb_store__fail(s, "save instance");
		gb_sql_reset(st);
		gb_store_rollback(s);
	}
	gb_store__unlock(s);
	return rc;
}

static int get_one(gb_store *s, const char *sql, int64_t id, const char *a,
                   const char *b, gb_inst_row *out)
{
	gb_sql *st;
	int rc;
	memset(out, 0, sizeof(*out));
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	if (a) {
		gb_sql_bind_text(st, 1, a);
		gb_sql_bind_text(st, 2, b);
	} else {
		gb_sql_bind_int(st, 1, id);
	}
	rc = gb_sql_step(st);
	if (rc == GB_SQL_ROW) {
		read_inst(st, out);
		rc = 0;
	} else {
		rc = rc == GB_SQL_DONE ? 1 : gb_store__fail(s, "read instance");
	}
	gb_sql_reset(st);
	gb_store__unlock(s);
	return rc;
}

int gb_store_inst_get(gb_store *s, int64_t id, gb_inst_row *out)
{
	static const char sql[] = "SELECT " INST_COLS " FROM instances WHERE id = ?1";
	return get_one(s, sql, id, NULL, NULL, out);
}

int gb_store_inst_find(gb_store *s, const char *cloud,
                       const char *provider_id, gb_inst_row *out)
{
	/* the live row if there is one, else the newest */
	static const char sql[] = "SELECT " INST_COLS " FROM instances"
	                          " WHERE cloud = ?1 AND provider_id = ?2"
	                          " ORDER BY state = 'terminated', id DESC"
	                          " LIMIT 1";
	return get_one(s, sql, 0, cloud, provider_id, out);
}

int gb_store_inst_lookup(gb_store *s, const char *id_or_name,
                         gb_inst_row *out)
{
	static const char sql[] = "SELECT " INST_COLS " FROM instances"
	                          " WHERE (provider_id = ?1 OR name = ?2)"
	                          " AND state != 'terminated' ORDER BY id DESC"
	                          " LIMIT 1";
	return get_one(s, sql, 0, id_or_name, id_or_name, out);
}

int gb_store_inst_list(gb_store *s, const char *pool, int live_only,
                       gb_inst_row **out, size_t *n)
{
	/* Two statements: "?1 IS NULL OR pool = ?1" would keep SQLite from
	 * using the (pool, state) index, so listing one pool would scan
	 * every instance ever recorded. */
	static const char all_sql[] =
		"SELECT " INST_COLS " FROM instances WHERE"
		" (NOT ?2 OR state != 'terminated') ORDER BY pool, name_index, id";
	static const char pool_sql[] =
		"SELECT " INST_COLS " FROM instances WHERE pool = ?1"
		" AND (NOT ?2 OR state != 'terminated') ORDER BY name_index, id";
	/* ?1 is not in all_sql: bound NULL there, which it is anyway */
	const gb_store__arg args[] = { GB_STORE_TEXT(pool),
	                               GB_STORE_INT(live_only) };
	void *v;
	int rc = gb_store__list(s, pool ? pool_sql : all_sql, args,
	                        GB_ARRAY_LEN(args), &inst_rows, &v, n);
	*out = v;
	return rc;
}

static void read_id(gb_sql *st, void *row)
{
	*(int64_t *)row = gb_sql_int(st, 0);
}

static void ids_free(void *v, size_t n)
{
	(void)n;
	free(v);
}

static const gb_store__rows id_rows = {
	sizeof(int64_t), read_id, ids_free, "list rolled-back instances"
};

int gb_store_inst_rolled_back(gb_store *s, int64_t **out, size_t *n)
{
	static const char sql[] =
		"SELECT i.id FROM instances i JOIN intents t ON t.id ="
		" i.intent_id WHERE t.kind = 'create' AND t.state = 'failed'"
		" ORDER BY i.id";
	void *v;
	int rc = gb_store__list(s, sql, NULL, 0, &id_rows, &v, n);
	*out = v;
	return rc;
}

int gb_store_inst_move_state(gb_store *s, int64_t id, const char *from,
                             const char *state, const char *reason,
                             int64_t at)
{
	static const char sql[] =
		"UPDATE instances SET state = ?2, state_reason = CASE WHEN ?2 ="
		" 'running' THEN NULL ELSE COALESCE(?3, state_reason) END,"
		" running_ms = CASE WHEN ?2 = 'running' AND"
		" running_ms = 0 THEN ?4 ELSE running_ms END,"
		" terminated_ms = CASE WHEN terminated_ms != 0 THEN terminated_ms"
		"   WHEN ?2 = 'terminated' AND terminate_requested_ms > 0"
		"     THEN terminate_requested_ms"
		"   WHEN ?2 IN ('terminated', 'preempted') THEN ?4"
		"   ELSE 0 END WHERE id = ?1"
		" AND (CAST(?5 AS TEXT) IS NULL OR state = ?5)";
	const gb_store__arg args[] = {
		GB_STORE_INT(id), GB_STORE_TEXT(state), GB_STORE_TEXT(reason),
		GB_STORE_INT(at), GB_STORE_TEXT(from),
	};
	int64_t changed = 0;
	if (gb_store__exec(s, sql, args, GB_ARRAY_LEN(args),
	                   "set instance state", &changed) != 0)
		return -1;
	return changed > 0;
}

int gb_store_inst_set_state(gb_store *s, int64_t id, const char *state,
                            const char *reason, int64_t at)
{
	return gb_store_inst_move_state(s, id, NULL, state, reason, at) < 0
	               ? -1 : 0;
}

int gb_store_inst_term_accepted(gb_store *s, int64_t id, int64_t at)
{
	static const char sql[] =
		"UPDATE instances SET terminate_requested_ms = ?2 WHERE id = ?1"
		" AND terminate_requested_ms = 0";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_int(st, 1, id);
	gb_sql_bind_int(st, 2, at);
	rc = gb_store__exec_stmt(s, st, "record terminate request");
	gb_store__unlock(s);
	/* an ending instance's agent reports no more (store_agent.c) */
	return rc == 0 ? gb_store_agent_revoke(s, id, at) : rc;
}

int gb_store_inst_heartbeat(gb_store *s, int64_t id, int64_t at,
                            double gpu_util)
{
	static const char sql[] =
		"UPDATE instances SET last_heartbeat_at = GREATEST(last_heartbeat_at, ?2),"
		" last_gpu_util = ?3 WHERE id = ?1";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_int(st, 1, id);
	gb_sql_bind_int(st, 2, at);
	gb_sql_bind_double(st, 3, gpu_util);
	rc = gb_store__exec_stmt(s, st, "record instance heartbeat");
	gb_store__unlock(s);
	return rc;
}

int gb_store_inst_max_index(gb_store *s, const char *pool, int *out)
{
	return gb_store_inst_max_spent(s, pool, NULL, out);
}

int gb_store_inst_max_spent(gb_store *s, const char *pool,
                            const char *clean_clouds, int *out)
{
	/* Names of every create ever journaled count, even failed ones: a
	 * failed attempt may leave a half-deleted VM holding its name
	 * (Azure names are unique per resource group) -- except a failed
	 * create on a cloud of clean_clouds that recorded no instance. */
	static const char sql[] =
		"SELECT GREATEST(COALESCE((SELECT MAX(name_index) FROM instances"
		" WHERE pool = ?1), -1), COALESCE((SELECT MAX(first_index + count"
		" - 1) FROM intents i WHERE pool = ?1 AND kind = 'create'"
		" AND NOT (i.state = 'failed' AND (',' || COALESCE(?2, '') ||"
		" ',') LIKE ('%,' || i.cloud || ',%') AND NOT EXISTS (SELECT 1"
		" FROM instances x WHERE x.intent_id = i.id))), -1))";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, pool);
	gb_sql_bind_text(st, 2, clean_clouds);
	rc = gb_sql_step(st);
	if (rc == GB_SQL_ROW) {
		*out = (int)gb_sql_int(st, 0);
		rc = 0;
	} else {
		rc = gb_store__fail(s, "read instance index");
	}
	gb_sql_reset(st);
	gb_store__unlock(s);
	return rc;
}
