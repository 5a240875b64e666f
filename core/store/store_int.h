/* store_int.h -- helpers shared by the store_*.c files (not public). */
#ifndef GB_STORE_INT_H
#define GB_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "store.h"

#define GB_STMT_CACHE 96
#define GB_STORE_ERR_CAP 512 /* an error message, NUL included */

struct gb_store {
	sqlite3 *db;
	char *path;
	pthread_mutex_t lock;   /* recursive */
	int tx_depth;
	/* no error message here: it is the calling thread's (store.c) */
	char tx_err[GB_STORE_ERR_CAP]; /* the first error inside the open
	                           transaction ("" when none): what a failed
	                           commit reports when SQLite had already
	                           rolled back because of it; written and read
	                           under the lock */
	struct {
		const char *sql;     /* static string: compared by pointer */
		sqlite3_stmt *st;
	} cache[GB_STMT_CACHE];
	size_t ncache;
};

/* Prepared (cached) statement for a static SQL string; reset and
 * unbound.  Caller holds the lock.  NULL on error (error set). */
sqlite3_stmt *gb_store__stmt(gb_store *s, const char *sql);
void gb_store__lock(gb_store *s);
void gb_store__unlock(gb_store *s);
/* Sets the calling thread's error from the connection's last one ("state
 * database PATH: WHAT: SQLite's message"); -1.  Caller holds the lock
 * (the connection's message is another thread's once it is released). */
int gb_store__fail(gb_store *s, const char *what);
/* Bind helpers: NULL strings bind NULL. */
void gb_store__bind_str(sqlite3_stmt *st, int i, const char *v);
/* Column text copied (NULL stays NULL). */
char *gb_store__col_str(sqlite3_stmt *st, int i);
/* Run a statement to completion (no rows expected): 0 / -1. */
int gb_store__exec_stmt(gb_store *s, sqlite3_stmt *st, const char *what);

/* One parameter of gb_store__list: text (NULL binds NULL) or an integer. */
typedef struct gb_store__arg {
	const char *text;
	int64_t num;
	int is_text;
} gb_store__arg;
#define GB_STORE_TEXT(v) { .text = (v), .is_text = 1 }
#define GB_STORE_INT(v) { .num = (int64_t)(v) }

/* The rows of one kind of list. */
typedef struct gb_store__rows {
	size_t size;                               /* sizeof one row */
	void (*read)(sqlite3_stmt *st, void *row); /* fills a zeroed row */
	void (*free_list)(void *v, size_t n);      /* the public *_list_free */
	const char *what;                          /* "list pools": errors */
} gb_store__rows;

/* Runs `sql` (a static string, see gb_store__stmt) with args[i] bound to
 * ?(i+1), and reads every row it returns, in its order, into an array of
 * rows->size elements.  0 with *out (NULL when *n is 0; the caller frees
 * it with the list's *_list_free) and *n, or -1 with *out NULL, *n 0 and
 * the error set.  Takes the lock. */
int gb_store__list(gb_store *s, const char *sql, const gb_store__arg *args,
                   size_t nargs, const gb_store__rows *rows, void **out,
                   size_t *n);

#endif
