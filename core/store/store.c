/* store.c -- opening, migrating and locking the SQLite state. */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* Schema version 1.  Migrations append to this list; each runs once, in a
 * transaction, and bumps meta.schema_version. */
static const char *const migrations[] = {
	/* 1 */
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE pools ("
	" name TEXT PRIMARY KEY, team TEXT NOT NULL, spec_json TEXT NOT NULL,"
	" spec_hash TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN"
	" ('active','destroying','destroyed')), desired INTEGER NOT NULL,"
	" created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
	" ttl_s INTEGER NOT NULL DEFAULT 0, idle_timeout_s INTEGER NOT NULL"
	" DEFAULT 0, last_heartbeat_at INTEGER NOT NULL DEFAULT 0,"
	" last_gpu_use_at INTEGER NOT NULL DEFAULT 0, destroy_reason TEXT,"
	" generation INTEGER NOT NULL DEFAULT 1);"
	"CREATE TABLE intents ("
	" id INTEGER PRIMARY KEY, kind TEXT NOT NULL, pool TEXT NOT NULL"
	" REFERENCES pools(name), cloud TEXT NOT NULL, region TEXT NOT NULL,"
	" zone TEXT NOT NULL DEFAULT '', instance_type TEXT, capacity TEXT,"
	" count INTEGER NOT NULL DEFAULT 0, token TEXT NOT NULL, name_prefix"
	" TEXT, first_index INTEGER NOT NULL DEFAULT 0, price_per_hour REAL"
	" NOT NULL DEFAULT 0, gpu_model TEXT, gpu_count INTEGER NOT NULL"
	" DEFAULT 0, state TEXT NOT NULL CHECK (state IN ('open','done',"
	"'failed')), error TEXT, detail TEXT, created_at INTEGER NOT NULL,"
	" closed_at INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX intents_open ON intents(state) WHERE state = 'open';"
	"CREATE INDEX intents_token ON intents(token);"
	"CREATE TABLE instances ("
	" id INTEGER PRIMARY KEY, pool TEXT NOT NULL REFERENCES pools(name),"
	" cloud TEXT NOT NULL, region TEXT NOT NULL, zone TEXT NOT NULL"
	" DEFAULT '', instance_type TEXT NOT NULL, capacity TEXT NOT NULL,"
	" provider_id TEXT, name TEXT, token TEXT, state TEXT NOT NULL,"
	" state_reason TEXT, private_ip TEXT, public_ip TEXT, gpu_model TEXT,"
	" gpu_count INTEGER NOT NULL DEFAULT 0, price_per_hour REAL NOT NULL,"
	" launched_ms INTEGER NOT NULL, running_ms INTEGER NOT NULL DEFAULT 0,"
	" terminate_requested_ms INTEGER NOT NULL DEFAULT 0, terminated_ms"
	" INTEGER NOT NULL DEFAULT 0, last_seen_ms INTEGER NOT NULL DEFAULT 0,"
	" last_heartbeat_at INTEGER NOT NULL DEFAULT 0, last_gpu_util REAL"
	" NOT NULL DEFAULT 0, intent_id INTEGER REFERENCES intents(id),"
	" name_index INTEGER NOT NULL DEFAULT 0);"
	/* one live row per cloud instance; ids may be reused once gone
	 * (on-prem node names, VM names) */
	"CREATE UNIQUE INDEX instances_live_id ON instances(cloud, provider_id)"
	" WHERE state != 'terminated';"
	"CREATE INDEX instances_pool ON instances(pool, state);"
	"CREATE TABLE events ("
	" id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, pool TEXT,"
	" instance TEXT, kind TEXT NOT NULL, message TEXT NOT NULL);"
	"CREATE INDEX events_pool ON events(pool, id);"
	"CREATE TABLE audit ("
	" id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, actor TEXT NOT"
	" NULL, role TEXT, team TEXT, action TEXT NOT NULL, target TEXT,"
	" result TEXT NOT NULL, detail TEXT);"
	"CREATE TABLE decisions ("
	" id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, pool TEXT NOT NULL,"
	" record TEXT NOT NULL);"
	"CREATE INDEX decisions_pool ON decisions(pool, id);"
	"CREATE TABLE offers ("
	" cloud TEXT NOT NULL, region TEXT NOT NULL, zone TEXT NOT NULL,"
	" instance_type TEXT NOT NULL, capacity TEXT NOT NULL, gpu_model TEXT"
	" NOT NULL, gpu_count INTEGER NOT NULL, gpu_memory_gb INTEGER NOT NULL,"
	" vcpus INTEGER NOT NULL, ram_gb REAL NOT NULL, price REAL NOT NULL,"
	" source TEXT NOT NULL, fetched_at INTEGER NOT NULL,"
	" PRIMARY KEY (cloud, region, zone, instance_type, capacity));"
	"CREATE TABLE unavailable ("
	" cloud TEXT NOT NULL, region TEXT NOT NULL, zone TEXT NOT NULL,"
	" instance_type TEXT NOT NULL, capacity TEXT NOT NULL, until_s INTEGER"
	" NOT NULL, reason TEXT NOT NULL,"
	" PRIMARY KEY (cloud, region, zone, instance_type, capacity));",
};

/* The calling thread's last store error.  Per thread, not per
 * connection: the daemon's threads share one gb_store, and a thread reads
 * its error after the call has released the lock, when another thread's
 * error could already have replaced a shared one. */
static _Thread_local char thread_err[GB_STORE_ERR_CAP];

const char *gb_store_errmsg(gb_store *s)
{
	(void)s;
	return thread_err;
}

const char *gb_store_path(const gb_store *s)
{
	return s->path;
}

/* After an error inside gb_store_begin .. commit: when SQLite rolled
 * the transaction back because of it, it is the cause a later commit
 * reports (caller holds the lock). */
static void note_tx_err(gb_store *s)
{
	if (s->tx_depth > 0 && !s->tx_err[0] && sqlite3_get_autocommit(s->db))
		memcpy(s->tx_err, thread_err, sizeof(s->tx_err));
}

int gb_store__fail(gb_store *s, const char *what)
{
	snprintf(thread_err, sizeof(thread_err), "state database %s: %s: %s",
	         s->path, what, sqlite3_errmsg(s->db));
	note_tx_err(s);
	return -1;
}

/* Inside gb_store_begin .. commit, but SQLite has rolled the transaction
 * back (it does on SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM): a statement
 * now would run, and commit, on its own. */
static int tx_lost(gb_store *s)
{
	return s->tx_depth > 0 && sqlite3_get_autocommit(s->db);
}

static void fail_tx_lost(gb_store *s, const char *what)
{
	if (s->tx_err[0])
		snprintf(thread_err, sizeof(thread_err), "%.400s (rolled back)",
		         s->tx_err);
	else
		snprintf(thread_err, sizeof(thread_err), "state database %s: %s: "
		         "the transaction was rolled back by an earlier step",
		         s->path, what);
}

void gb_store__lock(gb_store *s)
{
	pthread_mutex_lock(&s->lock);
}

void gb_store__unlock(gb_store *s)
{
	pthread_mutex_unlock(&s->lock);
}

sqlite3_stmt *gb_store__stmt(gb_store *s, const char *sql)
{
	sqlite3_stmt *st;
	if (tx_lost(s)) {
		fail_tx_lost(s, "statement");
		return NULL;
	}
	for (size_t i = 0; i < s->ncache; i++) {
		if (s->cache[i].sql == sql) {
			st = s->cache[i].st;
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			return st;
		}
	}
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		gb_store__fail(s, "prepare");
		return NULL;
	}
	if (s->ncache < GB_STMT_CACHE) {
		s->cache[s->ncache].sql = sql;
		s->cache[s->ncache].st = st;
		s->ncache++;
	} else {
		/* Cache full: a programming error (more distinct statements
		 * than expected); keep working but leak-free by finalising the
		 * oldest. */
		sqlite3_finalize(s->cache[0].st);
		memmove(&s->cache[0], &s->cache[1],
		        (GB_STMT_CACHE - 1) * sizeof(s->cache[0]));
		s->cache[GB_STMT_CACHE - 1].sql = sql;
		s->cache[GB_STMT_CACHE - 1].st = st;
	}
	return st;
}

void gb_store__bind_str(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

char *gb_store__col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? gb_xstrdup((const char *)t) : NULL;
}

int gb_store__exec_stmt(gb_store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		gb_store__fail(s, what);
		sqlite3_reset(st);
		return -1;
	}
	sqlite3_reset(st);
	return 0;
}

int gb_store__list(gb_store *s, const char *sql, const gb_store__arg *args,
                   size_t nargs, const gb_store__rows *rows, void **out,
                   size_t *n)
{
	sqlite3_stmt *st;
	char *v = NULL;
	size_t cap = 0, len = 0;
	int rc;
	*out = NULL;
	*n = 0;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	for (size_t i = 0; i < nargs; i++) {
		if (args[i].is_text)
			gb_store__bind_str(st, (int)i + 1, args[i].text);
		else
			sqlite3_bind_int64(st, (int)i + 1, args[i].num);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			v = gb_xrealloc(v, cap * rows->size);
		}
		memset(v + len * rows->size, 0, rows->size);
		rows->read(st, v + len * rows->size);
		len++;
	}
	if (rc != SQLITE_DONE) {
		gb_store__fail(s, rows->what);
		sqlite3_reset(st);
		gb_store__unlock(s);
		rows->free_list(v, len);
		return -1;
	}
	sqlite3_reset(st);
	gb_store__unlock(s);
	*out = v;
	*n = len;
	return 0;
}

static int exec_sql(gb_store *s, const char *sql, const char *what)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(thread_err, sizeof(thread_err),
		         "state database %s: %s: %s", s->path, what,
		         msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		note_tx_err(s);
		return -1;
	}
	return 0;
}

int gb_store_version_try(gb_store *s, int64_t v[2])
{
	sqlite3_stmt *st;
	int rc = -1;
	if (pthread_mutex_trylock(&s->lock) != 0)
		return 1;
	if (s->tx_depth) { /* our own transaction is open: not settled */
		gb_store__unlock(s);
		return 1;
	}
	if ((st = gb_store__stmt(s, "PRAGMA data_version"))) {
		if (sqlite3_step(st) == SQLITE_ROW) {
			v[0] = sqlite3_total_changes64(s->db);
			v[1] = sqlite3_column_int64(st, 0);
			rc = 0;
		} else {
			gb_store__fail(s, "read data_version");
		}
		sqlite3_reset(st);
	}
	gb_store__unlock(s);
	return rc;
}

void gb_store_ver_read(gb_store *s, gb_store_ver *at)
{
	at->known = gb_store_version_try(s, at->v) == 0;
}

int gb_store_ver_moved(gb_store *s, const gb_store_ver *at)
{
	int64_t v[2];
	if (gb_store_version_try(s, v) != 0)
		return -1;
	return !at->known || v[0] != at->v[0] || v[1] != at->v[1];
}

int gb_store_begin(gb_store *s)
{
	gb_store__lock(s);
	if (s->tx_depth == 0) {
		s->tx_err[0] = '\0';
		if (exec_sql(s, "BEGIN IMMEDIATE", "begin transaction") != 0) {
			gb_store__unlock(s);
			return -1;
		}
	}
	s->tx_depth++;
	return 0;
}

/* ROLLBACK when a transaction is still open; the error that led here
 * stays the thread's error (a failing ROLLBACK does not replace it). */
static void rollback_open(gb_store *s)
{
	char keep[sizeof(thread_err)];
	if (sqlite3_get_autocommit(s->db))
		return; /* SQLite rolled back already */
	memcpy(keep, thread_err, sizeof(keep));
	exec_sql(s, "ROLLBACK", "rollback");
	memcpy(thread_err, keep, sizeof(keep));
}

int gb_store_commit(gb_store *s)
{
	int rc = 0;
	if (--s->tx_depth == 0) {
		if (sqlite3_get_autocommit(s->db)) {
			/* already rolled back (by SQLite after an error, or an
			 * inner gb_store_rollback): nothing to commit */
			fail_tx_lost(s, "commit");
			rc = -1;
		} else if ((rc = exec_sql(s, "COMMIT", "commit")) != 0) {
			rollback_open(s);
		}
	}
	gb_store__unlock(s);
	return rc;
}

void gb_store_rollback(gb_store *s)
{
	/* Rolling back an inner level rolls back the whole transaction; the
	 * outer commit then fails, as it should. */
	if (s->tx_depth > 0) {
		s->tx_depth--;
		rollback_open(s);
	}
	gb_store__unlock(s);
}

static int schema_version(gb_store *s, int *v)
{
	sqlite3_stmt *st;
	int rc;
	*v = 0;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT name FROM sqlite_master WHERE type='table'"
	                       " AND name='meta'", -1, &st, NULL) != SQLITE_OK)
		return gb_store__fail(s, "read schema");
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return 0; /* empty database */
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT value FROM meta WHERE key='schema_version'",
	                       -1, &st, NULL) != SQLITE_OK)
		return gb_store__fail(s, "read schema version");
	if (sqlite3_step(st) == SQLITE_ROW)
		*v = atoi((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return 0;
}

static int migrate(gb_store *s)
{
	int v;
	const int latest = (int)GB_ARRAY_LEN(migrations);
	if (exec_sql(s, "BEGIN IMMEDIATE", "begin migration") != 0)
		return -1;
	if (schema_version(s, &v) != 0)
		goto fail;
	if (v > latest) {
		snprintf(thread_err, sizeof(thread_err),
		         "state database %s has schema version %d, newer than "
		         "this gpubroker understands (%d): upgrade gpubroker",
		         s->path, v, latest);
		goto fail;
	}
	for (int i = v; i < latest; i++) {
		char sql[128];
		if (exec_sql(s, migrations[i], "migrate") != 0)
			goto fail;
		snprintf(sql, sizeof(sql),
		         "INSERT OR REPLACE INTO meta(key, value) VALUES"
		         " ('schema_version', '%d')", i + 1);
		if (exec_sql(s, sql, "record schema version") != 0)
			goto fail;
		if (v > 0)
			gb_log(GB_LOG_INFO, "store", "migrated %s to schema %d",
			       s->path, i + 1);
	}
	return exec_sql(s, "COMMIT", "commit migration");
fail:
	exec_sql(s, "ROLLBACK", "rollback migration");
	return -1;
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

int gb_store_open(const char *path, gb_store **out, char *err, size_t cap)
{
	gb_store *s;
	pthread_mutexattr_t ma;
	int fd;
	*out = NULL;
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
	s = gb_xcalloc(1, sizeof(*s));
	s->path = gb_xstrdup(path);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&s->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	if (sqlite3_open_v2(path, &s->db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX,
	                    NULL) != SQLITE_OK) {
		snprintf(err, cap, "cannot open state database %s: %s", path,
		         s->db ? sqlite3_errmsg(s->db) : "out of memory");
		gb_store_close(s);
		return -1;
	}
	sqlite3_busy_timeout(s->db, 15000);
	if (exec_sql(s, "PRAGMA journal_mode=WAL", "enable WAL") != 0 ||
	    exec_sql(s, "PRAGMA foreign_keys=ON", "enable foreign keys") != 0 ||
	    exec_sql(s, "PRAGMA synchronous=NORMAL", "set synchronous") != 0 ||
	    migrate(s) != 0) {
		snprintf(err, cap, "%s", thread_err);
		gb_store_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

void gb_store_close(gb_store *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ncache; i++)
		sqlite3_finalize(s->cache[i].st);
	if (s->db)
		sqlite3_close(s->db);
	pthread_mutex_destroy(&s->lock);
	free(s->path);
	free(s);
}

int gb_store_meta_get(gb_store *s, const char *key, char **out)
{
	static const char sql[] = "SELECT value FROM meta WHERE key = ?";
	sqlite3_stmt *st;
	int rc;
	*out = NULL;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_store__bind_str(st, 1, key);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = gb_store__col_str(st, 0);
		rc = 0;
	} else {
		rc = rc == SQLITE_DONE ? 1 : gb_store__fail(s, "read meta");
	}
	sqlite3_reset(st);
	gb_store__unlock(s);
	return rc;
}

int gb_store_meta_set(gb_store *s, const char *key, const char *value)
{
	static const char sql[] =
		"INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)";
	sqlite3_stmt *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_store__bind_str(st, 1, key);
	gb_store__bind_str(st, 2, value);
	rc = gb_store__exec_stmt(s, st, "write meta");
	gb_store__unlock(s);
	return rc;
}
