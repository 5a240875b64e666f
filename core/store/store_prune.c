/* store_prune.c -- retention (old audit, event, decision and heartbeat
 * rows) and the state's size on disk. */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

/* rows deleted per transaction: other writers wait at most one batch */
#define PRUNE_BATCH 5000

/* Deletes the rows of `table` older than before_ms.  Rows are found
 * from the oldest id up to the first row that is not older (ids grow with
 * time; a row written under a clock that stepped back stays until the
 * rows before it go).  0 with *n deleted, or -1. */
static int prune_table(gb_store *s, const char *first_kept_sql,
                       const char *delete_sql, int64_t before_ms, int64_t *n)
{
	gb_sql *st;
	int64_t cutoff = INT64_MAX;
	int rc;
	*n = 0;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, first_kept_sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_int(st, 1, before_ms);
	rc = gb_sql_step(st);
	if (rc == GB_SQL_ROW)
		cutoff = gb_sql_int(st, 0);
	else if (rc != GB_SQL_DONE)
		rc = gb_store__fail(s, "find rows past their retention");
	gb_sql_reset(st);
	gb_store__unlock(s);
	if (rc != GB_SQL_ROW && rc != GB_SQL_DONE)
		return -1;
	for (;;) {
		int changed;
		if (gb_store_begin(s) != 0)
			return -1;
		if (!(st = gb_store__stmt(s, delete_sql))) {
			gb_store_rollback(s);
			return -1;
		}
		gb_sql_bind_int(st, 1, cutoff);
		gb_sql_bind_int(st, 2, PRUNE_BATCH);
		if (gb_store__exec_stmt(s, st, "delete rows past their "
		                               "retention") != 0) {
			gb_store_rollback(s);
			return -1;
		}
		changed = (int)gb_sql_changes(st);
		if (gb_store_commit(s) != 0)
			return -1;
		*n += changed;
		if (changed < PRUNE_BATCH)
			return 0;
	}
}

int gb_store_prune(gb_store *s, int64_t audit_before_ms,
                   int64_t events_before_ms, int64_t *audit_n,
                   int64_t *events_n)
{
	static const char audit_first[] =
		"SELECT id FROM audit WHERE time_ms >= ? ORDER BY id LIMIT 1";
	static const char audit_del[] =
		"DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE id < ?"
		" ORDER BY id LIMIT ?)";
	static const char events_first[] =
		"SELECT id FROM events WHERE time_ms >= ? ORDER BY id LIMIT 1";
	static const char events_del[] =
		"DELETE FROM events WHERE id IN (SELECT id FROM events WHERE id < ?"
		" ORDER BY id LIMIT ?)";
	*audit_n = *events_n = 0;
	if (audit_before_ms > 0 &&
	    prune_table(s, audit_first, audit_del, audit_before_ms, audit_n) != 0)
		return -1;
	if (events_before_ms > 0 &&
	    prune_table(s, events_first, events_del, events_before_ms,
	                events_n) != 0)
		return -1;
	return 0;
}

int gb_store_hb_prune(gb_store *s, int64_t before_ms, int64_t *n)
{
	static const char first[] =
		"SELECT id FROM heartbeats WHERE time_ms >= ? ORDER BY id LIMIT 1";
	static const char del[] =
		"DELETE FROM heartbeats WHERE id IN (SELECT id FROM heartbeats"
		" WHERE id < ? ORDER BY id LIMIT ?)";
	return prune_table(s, first, del, before_ms, n);
}

int gb_store_decisions_prune(gb_store *s, int64_t before_ms, int64_t *n)
{
	static const char first[] =
		"SELECT id FROM decisions WHERE time_ms >= ? ORDER BY id LIMIT 1";
	/* each pool's latest record stays, however old */
	static const char del[] =
		"DELETE FROM decisions WHERE id IN (SELECT id FROM decisions d"
		" WHERE id < ?1 AND id < (SELECT MAX(id) FROM decisions l"
		" WHERE l.pool = d.pool) ORDER BY id LIMIT ?2)";
	return prune_table(s, first, del, before_ms, n);
}
