/* store_int.h -- helpers shared by the store_*.c files (not public). */
#ifndef GB_STORE_INT_H
#define GB_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "store.h"

#define GB_STMT_CACHE 96

struct gb_store {
	sqlite3 *db;
	char *path;
	pthread_mutex_t lock;   /* recursive */
	int tx_depth;
	char errmsg[512];
	char tx_err[512];       /* the first error inside the open
	                           transaction ("" when none): what a failed
	                           commit reports when SQLite had already
	                           rolled back because of it */
	struct {
		const char *sql;     /* static string: compared by pointer */
		sqlite3_stmt *st;
	} cache[GB_STMT_CACHE];
	size_t ncache;
};

/* Prepared (cached) statement for a static SQL string; reset and
 * unbound.  Caller holds the lock.  NULL on error (errmsg set). */
sqlite3_stmt *gb_store__stmt(gb_store *s, const char *sql);
void gb_store__lock(gb_store *s);
void gb_store__unlock(gb_store *s);
int gb_store__fail(gb_store *s, const char *what);
/* Bind helpers: NULL strings bind NULL. */
void gb_store__bind_str(sqlite3_stmt *st, int i, const char *v);
/* Column text copied (NULL stays NULL). */
char *gb_store__col_str(sqlite3_stmt *st, int i);
/* Run a statement to completion (no rows expected): 0 / -1. */
int gb_store__exec_stmt(gb_store *s, sqlite3_stmt *st, const char *what);

#endif
