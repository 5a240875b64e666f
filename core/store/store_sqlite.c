/* store_sqlite.c -- the SQLite backend of the store (the default and the
 * reference implementation): one file, WAL, foreign keys, a busy timeout
 * so a CLI and a daemon share it, mode 0600. */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

typedef struct lite_stmt {
	gb_sql base;
	sqlite3_stmt *st;
} lite_stmt;

#define DB(s) ((sqlite3 *)(s)->db)
#define ST(x) (((lite_stmt *)(x))->st)

static const char *lite_errmsg(gb_store *s)
{
	return s->db ? sqlite3_errmsg(DB(s)) : "not open";
}

static int lite_exec(gb_store *s, const char *sql, const char *what)
{
	char *msg = NULL;
	if (sqlite3_exec(DB(s), sql, NULL, NULL, &msg) != SQLITE_OK) {
		gb_store__failf(s, "state database %s: %s: %s", s->path, what,
		                msg ? msg : sqlite3_errmsg(DB(s)));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static gb_sql *lite_prepare(gb_store *s, const char *sql)
{
	sqlite3_stmt *st;
	lite_stmt *l;
	if (sqlite3_prepare_v2(DB(s), sql, -1, &st, NULL) != SQLITE_OK) {
		gb_store__fail(s, "prepare");
		return NULL;
	}
	l = gb_xcalloc(1, sizeof(*l));
	l->base.s = s;
	l->st = st;
	return &l->base;
}

static void lite_finalize(gb_sql *x)
{
	if (!x)
		return;
	sqlite3_finalize(ST(x));
	free(x);
}

static void lite_bind_text(gb_sql *x, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(ST(x), i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(ST(x), i);
}

static void lite_bind_int(gb_sql *x, int i, int64_t v)
{
	sqlite3_bind_int64(ST(x), i, v);
}

static void lite_bind_double(gb_sql *x, int i, double v)
{
	sqlite3_bind_double(ST(x), i, v);
}

static void lite_bind_null(gb_sql *x, int i)
{
	sqlite3_bind_null(ST(x), i);
}

static int lite_step(gb_sql *x)
{
	int rc = sqlite3_step(ST(x));
	if (rc == SQLITE_ROW)
		return GB_SQL_ROW;
	return rc == SQLITE_DONE ? GB_SQL_DONE : GB_SQL_ERR;
}

static int64_t lite_col_int(gb_sql *x, int i)
{
	return sqlite3_column_int64(ST(x), i);
}

static double lite_col_double(gb_sql *x, int i)
{
	return sqlite3_column_double(ST(x), i);
}

static const char *lite_col_text(gb_sql *x, int i)
{
	return (const char *)sqlite3_column_text(ST(x), i);
}

static void lite_reset(gb_sql *x)
{
	sqlite3_reset(ST(x));
	sqlite3_clear_bindings(ST(x));
}

static int64_t lite_changes(gb_sql *x)
{
	return sqlite3_changes64(DB(x->s));
}

static int lite_tx_lost(gb_store *s)
{
	return sqlite3_get_autocommit(DB(s));
}

static int lite_has_table(gb_store *s, const char *name)
{
	sqlite3_stmt *st;
	int rc;
	if (sqlite3_prepare_v2(DB(s), "SELECT name FROM sqlite_master WHERE"
	                       " type='table' AND name=?", -1, &st,
	                       NULL) != SQLITE_OK)
		return gb_store__fail(s, "read schema");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : gb_store__fail(s, "read schema");
}

/* v[0] counts the rows written through this connection, v[1] moves on
 * every commit by any other connection (PRAGMA data_version). */
static int lite_version(gb_store *s, int64_t v[2])
{
	static const char sql[] = "PRAGMA data_version";
	gb_sql *st = gb_store__stmt(s, sql);
	int rc = -1;
	if (!st)
		return -1;
	if (lite_step(st) == GB_SQL_ROW) {
		v[0] = sqlite3_total_changes64(DB(s));
		v[1] = lite_col_int(st, 0);
		rc = 0;
	} else {
		gb_store__fail(s, "read data_version");
	}
	sqlite3_reset(ST(st));
	return rc;
}

static char *lite_schema(const char *sql)
{
	return gb_xstrdup(sql);
}

static int64_t file_size(const char *path, const char *suffix)
{
	struct stat st;
	char *p = gb_xasprintf("%s%s", path, suffix);
	int64_t n = stat(p, &st) == 0 ? (int64_t)st.st_size : 0;
	free(p);
	return n;
}

static int lite_size(gb_store *s, int64_t *bytes, int64_t *free_bytes)
{
	struct statvfs vfs;
	char *dir = gb_xstrdup(s->path), *slash = strrchr(dir, '/');
	*bytes = file_size(s->path, "") + file_size(s->path, "-wal") +
	         file_size(s->path, "-shm");
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		strcpy(dir, ".");
	*free_bytes = statvfs(dir, &vfs) == 0
	                      ? (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize
	                      : -1;
	free(dir);
	return 0;
}

/* GREATEST(a, b, ...): PostgreSQL's name for the largest argument, so
 * the statements are written once (NULLs are skipped, as there). */
static void fn_greatest(sqlite3_context *cx, int n, sqlite3_value **v)
{
	sqlite3_value *best = NULL;
	for (int i = 0; i < n; i++) {
		if (sqlite3_value_type(v[i]) == SQLITE_NULL)
			continue;
		if (!best || (sqlite3_value_numeric_type(v[i]) == SQLITE_FLOAT ||
		              sqlite3_value_numeric_type(best) == SQLITE_FLOAT
		                      ? sqlite3_value_double(v[i]) >
		                                sqlite3_value_double(best)
		                      : sqlite3_value_int64(v[i]) >
		                                sqlite3_value_int64(best)))
			best = v[i];
	}
	if (best)
		sqlite3_result_value(cx, best);
	else
		sqlite3_result_null(cx);
}

/* gb_now_ms(): the database's clock in unix ms (leases expire by it). */
static void fn_now_ms(sqlite3_context *cx, int n, sqlite3_value **v)
{
	(void)n;
	(void)v;
	sqlite3_result_int64(cx, gb_now_ms());
}

static int mkdir_p(const char *path)
{
	char *tmp = gb_xstrdup(path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, 0700) != 0 && errno != EEXIST) {
				free(tmp);
				return -1;
			}
			*p = '/';
		}
	}
	free(tmp);
	return 0;
}

static int lite_open(gb_store *s, const char *path, const char *password,
                     char *err, size_t cap)
{
	sqlite3 *db = NULL;
	int fd;
	(void)password;
	s->path = gb_xstrdup(path);
	if (mkdir_p(path) != 0) {
		snprintf(err, cap, "cannot create the directory of %s: %s", path,
		         strerror(errno));
		return -1;
	}
	/* Create the file 0600 ourselves so SQLite (and its -wal/-shm files,
	 * which copy the database's mode) never exist world-readable. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, cap, "cannot open state database %s: %s", path,
		         strerror(errno));
		return -1;
	}
	close(fd);
	if (sqlite3_open_v2(path, &db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX,
	                    NULL) != SQLITE_OK) {
		snprintf(err, cap, "cannot open state database %s: %s", path,
		         db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -1;
	}
	s->db = db;
	sqlite3_busy_timeout(db, 15000);
	sqlite3_create_function(db, "greatest", -1,
	                        SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
	                        fn_greatest, NULL, NULL);
	sqlite3_create_function(db, "gb_now_ms", 0, SQLITE_UTF8, NULL,
	                        fn_now_ms, NULL, NULL);
	if (lite_exec(s, "PRAGMA journal_mode=WAL", "enable WAL") != 0 ||
	    lite_exec(s, "PRAGMA foreign_keys=ON", "enable foreign keys") != 0 ||
	    lite_exec(s, "PRAGMA synchronous=NORMAL", "set synchronous") != 0) {
		snprintf(err, cap, "%s", gb_store_errmsg(s));
		return -1;
	}
	return 0;
}

static void lite_close(gb_store *s)
{
	sqlite3_close(DB(s));
	s->db = NULL;
}

const gb_store_backend gb_store_sqlite = {
	.name = "sqlite",
	.open = lite_open,
	.close = lite_close,
	.exec = lite_exec,
	.prepare = lite_prepare,
	.finalize = lite_finalize,
	.bind_text = lite_bind_text,
	.bind_int = lite_bind_int,
	.bind_double = lite_bind_double,
	.bind_null = lite_bind_null,
	.step = lite_step,
	.col_int = lite_col_int,
	.col_double = lite_col_double,
	.col_text = lite_col_text,
	.reset = lite_reset,
	.changes = lite_changes,
	.errmsg = lite_errmsg,
	.tx_lost = lite_tx_lost,
	.begin_sql = "BEGIN IMMEDIATE",
	.has_table = lite_has_table,
	.version = lite_version,
	.schema = lite_schema,
	.size = lite_size,
	.shared = 0,
};
