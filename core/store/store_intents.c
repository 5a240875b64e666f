/* store_intents.c -- the journal: intents are committed before the cloud
 * is asked to do anything, and closed after. */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

#define INTENT_COLS                                                        \
	"id, kind, pool, cloud, region, zone, instance_type, capacity, count," \
	" token, name_prefix, first_index, price_per_hour, gpu_model,"         \
	" gpu_count, state, error, detail, created_at, closed_at"

void gb_intent_row_free(gb_intent_row *r)
{
	if (!r)
		return;
	free(r->kind);
	free(r->pool);
	free(r->cloud);
	free(r->region);
	free(r->zone);
	free(r->instance_type);
	free(r->capacity);
	free(r->token);
	free(r->name_prefix);
	free(r->gpu_model);
	free(r->state);
	free(r->error);
	free(r->detail);
	memset(r, 0, sizeof(*r));
}

void gb_intent_list_free(gb_intent_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		gb_intent_row_free(&v[i]);
	free(v);
}

static void intents_free(void *v, size_t n)
{
	gb_intent_list_free(v, n);
}

static void read_intent(gb_sql *st, void *row)
{
	gb_intent_row *r = row;
	r->id = gb_sql_int(st, 0);
	r->kind = gb_sql_strdup(st, 1);
	r->pool = gb_sql_strdup(st, 2);
	r->cloud = gb_sql_strdup(st, 3);
	r->region = gb_sql_strdup(st, 4);
	r->zone = gb_sql_strdup(st, 5);
	r->instance_type = gb_sql_strdup(st, 6);
	r->capacity = gb_sql_strdup(st, 7);
	r->count = (int)gb_sql_int(st, 8);
	r->token = gb_sql_strdup(st, 9);
	r->name_prefix = gb_sql_strdup(st, 10);
	r->first_index = (int)gb_sql_int(st, 11);
	r->price_per_hour = gb_sql_double(st, 12);
	r->gpu_model = gb_sql_strdup(st, 13);
	r->gpu_count = (int)gb_sql_int(st, 14);
	r->state = gb_sql_strdup(st, 15);
	r->error = gb_sql_strdup(st, 16);
	r->detail = gb_sql_strdup(st, 17);
	r->created_at = gb_sql_int(st, 18);
	r->closed_at = gb_sql_int(st, 19);
}

static const gb_store__rows intent_rows = {
	sizeof(gb_intent_row), read_intent, intents_free, "list intents"
};

int gb_store_intent_open(gb_store *s, gb_intent_row *r)
{
	static const char sql[] =
		"INSERT INTO intents (kind, pool, cloud, region, zone,"
		" instance_type, capacity, count, token, name_prefix, first_index,"
		" price_per_hour, gpu_model, gpu_count, state, detail, created_at)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
		" ?14, 'open', ?15, ?16) RETURNING id";
	gb_sql *st;
	int rc;
	/* Its own transaction when called outside one: committed on return,
	 * which is the point of a journal. */
	if (gb_store_begin(s) != 0)
		return -1;
	/* the pool's lease, checked in this transaction (store.h) */
	if (gb_store__fence(s, r->pool) != 0 ||
	    !(st = gb_store__stmt(s, sql))) {
		gb_store_rollback(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, r->kind);
	gb_sql_bind_text(st, 2, r->pool);
	gb_sql_bind_text(st, 3, r->cloud);
	gb_sql_bind_text(st, 4, r->region);
	gb_sql_bind_text(st, 5, r->zone ? r->zone : "");
	gb_sql_bind_text(st, 6, r->instance_type);
	gb_sql_bind_text(st, 7, r->capacity);
	gb_sql_bind_int(st, 8, r->count);
	gb_sql_bind_text(st, 9, r->token);
	gb_sql_bind_text(st, 10, r->name_prefix);
	gb_sql_bind_int(st, 11, r->first_index);
	gb_sql_bind_double(st, 12, r->price_per_hour);
	gb_sql_bind_text(st, 13, r->gpu_model);
	gb_sql_bind_int(st, 14, r->gpu_count);
	gb_sql_bind_text(st, 15, r->detail);
	gb_sql_bind_int(st, 16, r->created_at ? r->created_at : gb_now_ms());
	rc = gb_sql_step(st);
	if (rc != GB_SQL_ROW) {
		gb_store__fail(s, "write intent");
		gb_sql_reset(st);
		gb_store_rollback(s);
		return -1;
	}
	r->id = gb_sql_int(st, 0);
	gb_sql_reset(st);
	return gb_store_commit(s);
}

int gb_store_intent_close(gb_store *s, int64_t id, const char *state,
                          const char *error)
{
	static const char sql[] =
		"UPDATE intents SET state = ?2, error = ?3, closed_at = ?4"
		" WHERE id = ?1";
	static const char pool_sql[] = "SELECT pool FROM intents WHERE id = ?1";
	gb_sql *st;
	char *pool = NULL;
	if (gb_store_begin(s) != 0)
		return -1;
	if (s->fenced) {
		/* the pool's lease, checked in this transaction (store.h) */
		if (!(st = gb_store__stmt(s, pool_sql)))
			goto fail;
		gb_sql_bind_int(st, 1, id);
		if (gb_sql_step(st) == GB_SQL_ROW)
			pool = gb_sql_strdup(st, 0);
		gb_sql_reset(st);
		if (pool && gb_store__fence(s, pool) != 0)
			goto fail;
	}
	if (!(st = gb_store__stmt(s, sql)))
		goto fail;
	gb_sql_bind_int(st, 1, id);
	gb_sql_bind_text(st, 2, state);
	gb_sql_bind_text(st, 3, error);
	gb_sql_bind_int(st, 4, gb_now_ms());
	if (gb_store__exec_stmt(s, st, "close intent") != 0)
		goto fail;
	free(pool);
	return gb_store_commit(s);
fail:
	free(pool);
	gb_store_rollback(s);
	return -1;
}

int gb_store_intent_list_open(gb_store *s, gb_intent_row **out, size_t *n)
{
	static const char sql[] =
		"SELECT " INTENT_COLS " FROM intents WHERE state = 'open' ORDER BY id";
	void *v;
	int rc = gb_store__list(s, sql, NULL, 0, &intent_rows, &v, n);
	*out = v;
	return rc;
}

/* ---- partial creates ---- */

void gb_partial_list_free(gb_partial_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].cloud);
		free(v[i].region);
		free(v[i].zone);
		free(v[i].instance_type);
	}
	free(v);
}

static void partials_free(void *v, size_t n)
{
	gb_partial_list_free(v, n);
}

static void read_partial(gb_sql *st, void *row)
{
	gb_partial_row *r = row;
	r->intent_id = gb_sql_int(st, 0);
	r->at_ms = gb_sql_int(st, 1);
	r->cloud = gb_sql_strdup(st, 2);
	r->region = gb_sql_strdup(st, 3);
	r->zone = gb_sql_strdup(st, 4);
	r->instance_type = gb_sql_strdup(st, 5);
	r->asked = (int)gb_sql_int(st, 6);
	r->made = (int)gb_sql_int(st, 7);
}

static const gb_store__rows partial_rows = {
	sizeof(gb_partial_row), read_partial, partials_free,
	"list partial creates"
};

int gb_store_partials(gb_store *s, const char *pool, int64_t since_ms,
                      gb_partial_row **out, size_t *n)
{
	static const char sql[] =
		"SELECT i.id, i.created_at, i.cloud, i.region, i.zone,"
		" i.instance_type, i.count, COUNT(n.id) FROM intents i"
		" JOIN instances n ON n.intent_id = i.id"
		" WHERE i.pool = ?1 AND i.kind = 'create' AND i.state = 'failed'"
		" AND i.created_at >= ?2"
		" GROUP BY i.id, i.created_at, i.cloud, i.region, i.zone,"
		" i.instance_type, i.count ORDER BY i.created_at DESC, i.id DESC";
	const gb_store__arg args[] = { GB_STORE_TEXT(pool),
	                               GB_STORE_INT(since_ms) };
	void *v;
	int rc = gb_store__list(s, sql, args, GB_ARRAY_LEN(args), &partial_rows,
	                        &v, n);
	*out = v;
	return rc;
}
