/* store_int.h -- helpers shared by the store_*.c files (not public).
 *
 * The store is one set of SQL statements over two backends (the pattern
 * of SQLite's VFS: one interface, a reference implementation and a
 * second one): store_sqlite.c (one file on this machine; the default)
 * and store_pg.c (PostgreSQL through libpq, for several replicas).  The
 * statements are written once, in the SQL both accept: ?N parameters,
 * ON CONFLICT upserts, RETURNING, GREATEST (registered in SQLite).  The
 * schema is written once too; store_pg.c maps its column types. */
#ifndef GB_STORE_INT_H
#define GB_STORE_INT_H

#include <pthread.h>

#include "store.h"

#define GB_STMT_CACHE 112
#define GB_STORE_ERR_CAP 512 /* an error message, NUL included */

/* One prepared statement of either backend.  Backends embed it as the
 * first member of their own statement struct. */
typedef struct gb_sql {
	gb_store *s;
	const char *sql; /* its text when known (gb_store__stmt), else NULL:
	                    what GB_STORE_FAULT's SUBSTRING is matched with */
	int stepped;     /* stepped since its last reset (store.c) */
} gb_sql;

#define GB_SQL_DONE 0
#define GB_SQL_ROW 1
#define GB_SQL_ERR (-1)

/* What a backend does.  Every function is called with the store's lock
 * held.  Failures set the calling thread's error (gb_store__failf) and
 * return -1 / NULL. */
typedef struct gb_store_backend {
	const char *name; /* "sqlite" | "postgresql" */
	/* Connects to `target` (a path, or a URL for store_pg.c; password
	 * NULL = the backend's own mechanisms).  Sets s->path to what
	 * messages may show (a URL without any secret). */
	int (*open)(gb_store *s, const char *target, const char *password,
	            char *err, size_t cap);
	void (*close)(gb_store *s);
	/* Statements without parameters or rows ("BEGIN", the schema). */
	int (*exec)(gb_store *s, const char *sql, const char *what);
	gb_sql *(*prepare)(gb_store *s, const char *sql);
	void (*finalize)(gb_sql *st);
	void (*bind_text)(gb_sql *st, int i, const char *v); /* NULL: NULL */
	void (*bind_int)(gb_sql *st, int i, int64_t v);
	void (*bind_double)(gb_sql *st, int i, double v);
	void (*bind_null)(gb_sql *st, int i);
	/* GB_SQL_ROW, GB_SQL_DONE or GB_SQL_ERR (error NOT set: the caller
	 * names what failed through gb_store__fail). */
	int (*step)(gb_sql *st);
	int64_t (*col_int)(gb_sql *st, int i);
	double (*col_double)(gb_sql *st, int i);
	const char *(*col_text)(gb_sql *st, int i); /* NULL for NULL */
	void (*reset)(gb_sql *st); /* clears bindings too */
	int64_t (*changes)(gb_sql *st); /* rows its last step changed */
	/* The database's message for the last failure. */
	const char *(*errmsg)(gb_store *s);
	/* Inside gb_store_begin .. commit, whether the database has already
	 * ended the transaction (SQLite on SQLITE_FULL, IOERR, NOMEM;
	 * PostgreSQL on any error or a lost connection). */
	int (*tx_lost)(gb_store *s);
	const char *begin_sql;  /* opens a write transaction: writers are
	                           serialised across every process */
	int (*has_table)(gb_store *s, const char *name); /* 1, 0, -1 */
	/* gb_store_version_try's two numbers. */
	int (*version)(gb_store *s, int64_t v[2]);
	/* The schema's text for this backend (migrations[i] as written). */
	char *(*schema)(const char *sql);
	int (*size)(gb_store *s, int64_t *bytes, int64_t *free_bytes);
	/* How long the server lets a session sit inside a transaction before
	 * it ends it (NULL: nothing to set, as for SQLite). */
	int (*idle_tx)(gb_store *s, int64_t ms);
	int shared; /* several hosts share it: pools are leased (store.h) */
} gb_store_backend;

extern const gb_store_backend gb_store_sqlite;
extern const gb_store_backend gb_store_pg;

/* A lease this store holds (store_lease.c). */
typedef struct gb_store_lease {
	char *name;
	int64_t token;
	int64_t expires_mono_ms; /* when it is surely gone (local clock) */
} gb_store_lease;

struct gb_store {
	const gb_store_backend *be;
	void *db;               /* the backend's connection */
	char *path;             /* shown in messages: never a secret */
	pthread_mutex_t lock;   /* recursive */
	int tx_depth;
	/* no error message here: it is the calling thread's (store.c) */
	char tx_err[GB_STORE_ERR_CAP]; /* the first error inside the open
	                           transaction ("" when none): what a failed
	                           commit reports when the database had already
	                           rolled back because of it; written and read
	                           under the lock */
	struct {
		const char *sql;     /* static string: compared by pointer */
		gb_sql *st;
	} cache[GB_STMT_CACHE];
	size_t ncache;
	/* leases (store_lease.c), under the lock */
	char owner[64];         /* this store's owner id in the leases table */
	int fenced;             /* journal writes check the pool's lease */
	gb_store_lease *leases;
	size_t nleases;
	int serve_fd;           /* the serving lock (store_serve.c); -1 none */
	/* store fault injection (store.c, store_fault.c), under the lock */
	const char *fault_msg;  /* the last step's injected failure, or NULL */
	int fault_tx_lost;      /* an injected failure inside the open
	                           transaction ended it (as a real one does) */
};

/* Prepared (cached) statement for a static SQL string; reset and
 * unbound.  Caller holds the lock.  NULL on error (error set). */
gb_sql *gb_store__stmt(gb_store *s, const char *sql);
void gb_store__lock(gb_store *s);
void gb_store__unlock(gb_store *s);
/* Sets the calling thread's error from the connection's last one ("state
 * database PATH: WHAT: the database's message"); -1.  Caller holds the
 * lock (the connection's message is another thread's once it is
 * released). */
int gb_store__fail(gb_store *s, const char *what);
/* Store fault injection (store_fault.c; a test switch, HACKING.md):
 * GB_STORE_FAULT=N[:SUBSTRING[:KIND]] makes the Nth statement run (its
 * first step after a reset, or an exec other than ROLLBACK) of this
 * process, counting only those whose SQL contains SUBSTRING when given,
 * fail with KIND's message; GB_STORE_FAULT_COUNT=FILE writes how many
 * were counted at exit.  Read once, at the first store open.
 * gb_store__fault_init: called by every open.  gb_store__fault: counts
 * one run of `sql` (NULL: a statement whose text is not kept); NULL to
 * go on, or the injected failure's message (static). */
void gb_store__fault_init(void);
const char *gb_store__fault(const char *sql);
/* For unit tests: arms the switch as GB_STORE_FAULT=N:match:kind would
 * (n 0 = off; match, kind may be NULL) and restarts the count. */
void gb_store__fault_set(long long n, const char *match, const char *kind);
/* The statement runs counted since the switch was (re)armed. */
long long gb_store__fault_count(void);

/* Sets the calling thread's error to a formatted message; -1. */
int gb_store__failf(gb_store *s, const char *fmt, ...) GB_PRINTF(2, 3);
/* Run a statement to completion (no rows expected): 0 / -1. */
int gb_store__exec_stmt(gb_store *s, gb_sql *st, const char *what);

/* The statement API (store.c dispatches to the backend). */
void gb_sql_bind_text(gb_sql *st, int i, const char *v);
void gb_sql_bind_int(gb_sql *st, int i, int64_t v);
void gb_sql_bind_double(gb_sql *st, int i, double v);
void gb_sql_bind_null(gb_sql *st, int i);
int gb_sql_step(gb_sql *st);
int64_t gb_sql_int(gb_sql *st, int i);
double gb_sql_double(gb_sql *st, int i);
const char *gb_sql_text(gb_sql *st, int i);
char *gb_sql_strdup(gb_sql *st, int i); /* copied; NULL stays NULL */
void gb_sql_reset(gb_sql *st);
int64_t gb_sql_changes(gb_sql *st);

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
	void (*read)(gb_sql *st, void *row);       /* fills a zeroed row */
	void (*free_list)(void *v, size_t n);      /* the public *_list_free */
	const char *what;                          /* "list pools": errors */
} gb_store__rows;

/* Runs `sql` (a static string, see gb_store__stmt; a statement that
 * returns no rows) with args[i] bound to ?(i+1).  0 with *changes (may be
 * NULL) the rows it changed, or -1 with the error set ("what" names it).
 * Takes the lock. */
int gb_store__exec(gb_store *s, const char *sql, const gb_store__arg *args,
                   size_t nargs, const char *what, int64_t *changes);

/* Runs `sql` (a static string, see gb_store__stmt) with args[i] bound to
 * ?(i+1), and reads every row it returns, in its order, into an array of
 * rows->size elements.  0 with *out (NULL when *n is 0; the caller frees
 * it with the list's *_list_free) and *n, or -1 with *out NULL, *n 0 and
 * the error set.  Takes the lock. */
int gb_store__list(gb_store *s, const char *sql, const gb_store__arg *args,
                   size_t nargs, const gb_store__rows *rows, void **out,
                   size_t *n);

/* Fencing (store_lease.c): inside a transaction, 0 when this store
 * holds the lease of `pool` (with the token it was granted, unexpired by
 * the database's clock), or when the store is not fenced; -1 with the
 * error set otherwise.  Caller holds the lock. */
int gb_store__fence(gb_store *s, const char *pool);

#endif
