/* store_usage.c -- heartbeat samples: each heartbeat's GPU utilisation,
 * kept for `usage` until their retention (gb_store_hb_prune). */
#include "store_int.h"

#include <stdlib.h>

int gb_store_hb_add(gb_store *s, int64_t id, int64_t at_ms, double gpu_util)
{
	static const char sql[] =
		"INSERT INTO heartbeats (instance_id, pool, time_ms, gpu_util,"
		" team, pool_inc)"
		" SELECT id, pool, ?2, ?3, team, pool_inc FROM instances"
		" WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM heartbeats h"
		" WHERE h.instance_id = ?1 AND h.time_ms <= ?2"
		" AND h.time_ms + 1000 > ?2)";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_int(st, 1, id);
	gb_sql_bind_int(st, 2, at_ms);
	gb_sql_bind_double(st, 3, gpu_util);
	rc = gb_store__exec_stmt(s, st, "keep heartbeat sample");
	gb_store__unlock(s);
	return rc;
}

static void samples_free(void *v, size_t n)
{
	(void)n;
	free(v);
}

static void read_sample(gb_sql *st, void *row)
{
	gb_hb_sample *h = row;
	h->instance_id = gb_sql_int(st, 0);
	h->time_ms = gb_sql_int(st, 1);
	h->gpu_util = gb_sql_double(st, 2);
}

static const gb_store__rows sample_rows = {
	sizeof(gb_hb_sample), read_sample, samples_free, "list heartbeats"
};

int gb_store_hb_list(gb_store *s, const char *pool, int64_t from_ms,
                     int64_t to_ms, gb_hb_sample **out, size_t *n)
{
	static const char sql[] =
		"SELECT instance_id, time_ms, gpu_util FROM heartbeats"
		" WHERE time_ms >= ?1 AND time_ms < ?2"
		" AND (CAST(?3 AS TEXT) IS NULL OR pool = ?3)"
		" ORDER BY instance_id, time_ms, id";
	const gb_store__arg args[] = { GB_STORE_INT(from_ms),
	                               GB_STORE_INT(to_ms),
	                               GB_STORE_TEXT(pool) };
	void *v;
	int rc = gb_store__list(s, sql, args, GB_ARRAY_LEN(args), &sample_rows,
	                        &v, n);
	*out = v;
	return rc;
}
