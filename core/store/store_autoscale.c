/* store_autoscale.c -- the autoscale table: each autoscaled pool's
 * demand signal and decision state (store.h). */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

void gb_as_row_free(gb_as_row *r)
{
	if (!r)
		return;
	free(r->state);
	free(r->last);
	free(r->refused);
	memset(r, 0, sizeof(*r));
}

int gb_store_as_get(gb_store *s, const char *pool, gb_as_row *out)
{
	/* the row of the pool's present incarnation only */
	static const char sql[] =
		"SELECT a.demand, a.demand_until, a.state, a.last, a.refused"
		" FROM autoscale a JOIN pools p ON p.name = a.pool"
		" AND p.incarnation = a.pool_inc WHERE a.pool = ?1";
	gb_sql *st;
	int rc;
	memset(out, 0, sizeof(*out));
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, pool);
	rc = gb_sql_step(st);
	if (rc == GB_SQL_ROW) {
		out->demand = (int)gb_sql_int(st, 0);
		out->demand_until = gb_sql_int(st, 1);
		out->state = gb_sql_strdup(st, 2);
		out->last = gb_sql_strdup(st, 3);
		out->refused = gb_sql_strdup(st, 4);
		rc = 0;
	} else {
		rc = rc == GB_SQL_DONE ? 1 : gb_store__fail(s, "read autoscale");
	}
	gb_sql_reset(st);
	gb_store__unlock(s);
	return rc;
}

/* A row of another incarnation is started over: its fields are kept
 * only while pool_inc stays. */
#define SAME_INC "autoscale.pool_inc = excluded.pool_inc"
#define POOL_INC "COALESCE((SELECT incarnation FROM pools WHERE name = ?1), 1)"

int gb_store_as_demand(gb_store *s, const char *pool, int n, int64_t until,
                       int64_t now_s, int *changed)
{
	static const char sql[] =
		"INSERT INTO autoscale (pool, pool_inc, demand, demand_until)"
		" VALUES (?1, " POOL_INC ", ?2, ?3) ON CONFLICT (pool) DO UPDATE"
		" SET demand = ?2, demand_until = ?3,"
		" state = CASE WHEN " SAME_INC " THEN autoscale.state END,"
		" last = CASE WHEN " SAME_INC " THEN autoscale.last END,"
		" refused = CASE WHEN " SAME_INC " THEN autoscale.refused END,"
		" pool_inc = excluded.pool_inc";
	gb_as_row old;
	gb_sql *st;
	int rc, in_force;
	*changed = 0;
	if (gb_store_begin(s) != 0)
		return -1;
	if ((rc = gb_store_as_get(s, pool, &old)) < 0) {
		gb_store_rollback(s);
		return -1;
	}
	in_force = rc == 0 && old.demand && now_s < old.demand_until;
	*changed = n ? !in_force || old.demand != n : in_force;
	gb_as_row_free(&old);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store_rollback(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, pool);
	gb_sql_bind_int(st, 2, n);
	gb_sql_bind_int(st, 3, until);
	if (gb_store__exec_stmt(s, st, "save demand signal") != 0) {
		gb_store_rollback(s);
		return -1;
	}
	return gb_store_commit(s);
}

static int same(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

int gb_store_as_save(gb_store *s, const char *pool, const char *state,
                     const char *last, const char *refused)
{
	static const char sql[] =
		"INSERT INTO autoscale (pool, pool_inc, state, last, refused)"
		" VALUES (?1, " POOL_INC ", ?2, ?3, ?4) ON CONFLICT (pool) DO"
		" UPDATE SET state = ?2, last = ?3, refused = ?4,"
		" demand = CASE WHEN " SAME_INC " THEN autoscale.demand ELSE 0 END,"
		" demand_until = CASE WHEN " SAME_INC
		" THEN autoscale.demand_until ELSE 0 END,"
		" pool_inc = excluded.pool_inc";
	gb_as_row old;
	gb_sql *st;
	int rc;
	/* one writer per pool (its lease holder): no transaction needed
	 * between the read and the write */
	if ((rc = gb_store_as_get(s, pool, &old)) < 0)
		return -1;
	if (rc == 0 && same(old.state, state) && same(old.last, last) &&
	    same(old.refused, refused)) {
		/* unchanged: no write (watchers of the store stay asleep) */
		gb_as_row_free(&old);
		return 0;
	}
	gb_as_row_free(&old);
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, pool);
	gb_sql_bind_text(st, 2, state);
	gb_sql_bind_text(st, 3, last);
	gb_sql_bind_text(st, 4, refused);
	rc = gb_store__exec_stmt(s, st, "save autoscale state");
	gb_store__unlock(s);
	return rc;
}
