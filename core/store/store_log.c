/* store_log.c -- events, audit rows and plan decision records. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "timejson.h"

int gb_store_event(gb_store *s, const char *pool, const char *instance,
                   const char *kind, const char *fmt, ...)
{
	static const char sql[] =
		"INSERT INTO events (time_ms, pool, instance, kind, message, team,"
		" pool_inc) VALUES (?1, ?2, ?3, ?4, ?5,"
		" (SELECT team FROM pools WHERE name = ?2),"
		" COALESCE((SELECT incarnation FROM pools WHERE name = ?2), 0))";
	gb_sql *st;
	va_list ap;
	char *msg;
	int rc;
	va_start(ap, fmt);
	msg = gb_xvasprintf(fmt, ap);
	va_end(ap);
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		free(msg);
		return -1;
	}
	gb_sql_bind_int(st, 1, gb_now_ms());
	gb_sql_bind_text(st, 2, pool);
	gb_sql_bind_text(st, 3, instance);
	gb_sql_bind_text(st, 4, kind);
	gb_sql_bind_text(st, 5, msg);
	rc = gb_store__exec_stmt(s, st, "write event");
	gb_store__unlock(s);
	free(msg);
	return rc;
}

void gb_event_row_free(gb_event_row *e)
{
	free(e->pool);
	free(e->instance);
	free(e->kind);
	free(e->message);
	free(e->team);
	memset(e, 0, sizeof(*e));
}

void gb_event_list_free(gb_event_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		gb_event_row_free(&v[i]);
	free(v);
}

static void events_free(void *v, size_t n)
{
	gb_event_list_free(v, n);
}

static void read_event(gb_sql *st, void *row)
{
	gb_event_row *e = row;
	e->id = gb_sql_int(st, 0);
	e->time_ms = gb_sql_int(st, 1);
	e->pool = gb_sql_strdup(st, 2);
	e->instance = gb_sql_strdup(st, 3);
	e->kind = gb_sql_strdup(st, 4);
	e->message = gb_sql_strdup(st, 5);
	e->team = gb_sql_strdup(st, 6);
	e->pool_inc = gb_sql_int(st, 7);
}

static const gb_store__rows event_rows = {
	sizeof(gb_event_row), read_event, events_free, "list events"
};

int gb_store_event_list(gb_store *s, const char *pool, int64_t after_id,
                        int64_t since_ms, size_t limit, gb_event_row **out,
                        size_t *n)
{
	static const char sql[] =
		"SELECT id, time_ms, pool, instance, kind, message, team, pool_inc"
		" FROM events"
		" WHERE id > ?1 AND (CAST(?2 AS TEXT) IS NULL OR pool = ?2) AND time_ms >= ?3"
		" ORDER BY id LIMIT ?4";
	const gb_store__arg args[] = { GB_STORE_INT(after_id),
	                               GB_STORE_TEXT(pool),
	                               GB_STORE_INT(since_ms),
	                               GB_STORE_INT(limit ? limit : 1000) };
	void *v;
	int rc = gb_store__list(s, sql, args, GB_ARRAY_LEN(args), &event_rows,
	                        &v, n);
	*out = v;
	return rc;
}

int gb_store_audit(gb_store *s, const gb_audit_row *r)
{
	static const char sql[] =
		"INSERT INTO audit (time_ms, actor, role, team, action, target,"
		" result, detail, pool, pool_team, pool_inc) VALUES (?1, ?2, ?3,"
		" ?4, ?5, ?6, ?7, ?8, ?9, (SELECT team FROM pools WHERE name = ?9),"
		" COALESCE((SELECT incarnation FROM pools WHERE name = ?9), 0))";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_int(st, 1, r->time_ms ? r->time_ms : gb_now_ms());
	gb_sql_bind_text(st, 2, r->actor ? r->actor : "unknown");
	gb_sql_bind_text(st, 3, r->role);
	gb_sql_bind_text(st, 4, r->team);
	gb_sql_bind_text(st, 5, r->action);
	gb_sql_bind_text(st, 6, r->target);
	gb_sql_bind_text(st, 7, r->result ? r->result : "unknown");
	gb_sql_bind_text(st, 8, r->detail);
	gb_sql_bind_text(st, 9, r->pool);
	rc = gb_store__exec_stmt(s, st, "write audit row");
	gb_store__unlock(s);
	return rc;
}

void gb_audit_list_free(gb_audit_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].actor);
		free(v[i].role);
		free(v[i].team);
		free(v[i].action);
		free(v[i].target);
		free(v[i].result);
		free(v[i].detail);
		free(v[i].pool);
		free(v[i].pool_team);
	}
	free(v);
}

static void audits_free(void *v, size_t n)
{
	gb_audit_list_free(v, n);
}

static void read_audit(gb_sql *st, void *row)
{
	gb_audit_row *a = row;
	a->id = gb_sql_int(st, 0);
	a->time_ms = gb_sql_int(st, 1);
	a->actor = gb_sql_strdup(st, 2);
	a->role = gb_sql_strdup(st, 3);
	a->team = gb_sql_strdup(st, 4);
	a->action = gb_sql_strdup(st, 5);
	a->target = gb_sql_strdup(st, 6);
	a->result = gb_sql_strdup(st, 7);
	a->detail = gb_sql_strdup(st, 8);
	a->pool = gb_sql_strdup(st, 9);
	a->pool_team = gb_sql_strdup(st, 10);
	a->pool_inc = gb_sql_int(st, 11);
}

static const gb_store__rows audit_rows = {
	sizeof(gb_audit_row), read_audit, audits_free, "list audit"
};

int gb_store_audit_list(gb_store *s, int64_t after_id, const char *team,
                        size_t limit, gb_audit_row **out, size_t *n)
{
	static const char sql[] =
		"SELECT id, time_ms, actor, role, team, action, target, result,"
		" detail, pool, pool_team, pool_inc FROM audit WHERE id > ?1"
		" AND (CAST(?2 AS TEXT) IS NULL OR team = ?2 OR pool_team = ?2)"
		" ORDER BY id LIMIT ?3";
	const gb_store__arg args[] = { GB_STORE_INT(after_id),
	                               GB_STORE_TEXT(team),
	                               GB_STORE_INT(limit ? limit : 1000) };
	void *v;
	int rc = gb_store__list(s, sql, args, GB_ARRAY_LEN(args), &audit_rows,
	                        &v, n);
	*out = v;
	return rc;
}

int gb_store_decision(gb_store *s, const char *pool, json_t *record)
{
	static const char sql[] =
		"INSERT INTO decisions (time_ms, pool, record) SELECT ?1, ?2, ?3"
		" WHERE NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id ="
		" (SELECT MAX(id) FROM decisions WHERE pool = ?2)"
		" AND d.record = ?3)";
	gb_sql *st;
	char *text = json_dumps(record, JSON_COMPACT | JSON_SORT_KEYS);
	int rc;
	if (!text)
		return -1;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		free(text);
		return -1;
	}
	gb_sql_bind_int(st, 1, gb_now_ms());
	gb_sql_bind_text(st, 2, pool);
	gb_sql_bind_text(st, 3, text);
	rc = gb_store__exec_stmt(s, st, "write decision");
	gb_store__unlock(s);
	free(text);
	return rc;
}

/* A decision row as {"time": RFC 3339, "plan": RECORD} (RECORD null when
 * the stored text does not parse). */
static void decision_read(gb_sql *st, void *row)
{
	const char *text = gb_sql_text(st, 1);
	*(json_t **)row = json_pack("{s:o, s:o?}", "time",
	                            gb_json_time(gb_sql_int(st, 0)), "plan",
	                            text ? json_loads(text, 0, NULL) : NULL);
}

static void decisions_free(void *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_decref(((json_t **)v)[i]);
	free(v);
}

static const gb_store__rows decision_rows = {
	sizeof(json_t *), decision_read, decisions_free, "read decision"
};

int gb_store_decision_last(gb_store *s, const char *pool, json_t **out)
{
	static const char sql[] =
		"SELECT time_ms, record FROM decisions WHERE pool = ?1"
		" ORDER BY id DESC LIMIT 1";
	const gb_store__arg args[] = { GB_STORE_TEXT(pool) };
	void *v;
	size_t n;
	*out = NULL;
	if (gb_store__list(s, sql, args, GB_ARRAY_LEN(args), &decision_rows,
	                   &v, &n) != 0)
		return -1;
	if (n && json_is_object(json_object_get(((json_t **)v)[0], "plan")))
		*out = json_incref(((json_t **)v)[0]);
	decisions_free(v, n);
	return *out ? 0 : 1;
}
