/* store.c -- what both backends share: errors, the lock, statements,
 * transactions, the schema and its migrations (store_int.h). */
#include "store_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "drivers.h"
#include "log.h"

/* Migrations append to this list; each runs once, in a transaction, and
 * bumps meta.schema_version.  Written once for both backends: SQLite's
 * types here, mapped by the PostgreSQL backend (store_pg.c). */
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
	/* 2: leases (store_lease.c): who converges a pool, with the fencing
	 * token every journal write checks */
	"CREATE TABLE leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL,"
	" token INTEGER NOT NULL, expires_ms INTEGER NOT NULL, want TEXT,"
	" want_ms INTEGER NOT NULL DEFAULT 0);",
	/* 3: why a pool is short and when the engine tries again
	 * (gb_store_pool_set_note); an apply or a scale clears it */
	"ALTER TABLE pools ADD COLUMN note TEXT;"
	"ALTER TABLE pools ADD COLUMN retry_at_ms INTEGER NOT NULL DEFAULT 0;",
	/* 4: every heartbeat's GPU utilisation, kept for `usage`
	 * (store_usage.c) until daemon.heartbeats_retention */
	"CREATE TABLE heartbeats (id INTEGER PRIMARY KEY, instance_id INTEGER"
	" NOT NULL, pool TEXT NOT NULL, time_ms INTEGER NOT NULL, gpu_util REAL"
	" NOT NULL);"
	"CREATE INDEX heartbeats_time ON heartbeats(time_ms);",
	/* 5: a pool name may be reused once destroyed, by another team: the
	 * pool's incarnation (bumped when a destroyed pool is applied again)
	 * and the team that owned it then are kept on its instances, events
	 * and heartbeat samples, so cost, usage and events follow them, not
	 * the name's present owner.  Rows from before: the owner now. */
	"ALTER TABLE pools ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE instances ADD COLUMN team TEXT;"
	"ALTER TABLE instances ADD COLUMN pool_inc INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE events ADD COLUMN team TEXT;"
	"ALTER TABLE events ADD COLUMN pool_inc INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE heartbeats ADD COLUMN team TEXT;"
	"ALTER TABLE heartbeats ADD COLUMN pool_inc INTEGER NOT NULL DEFAULT 1;"
	"UPDATE instances SET team = (SELECT team FROM pools"
	" WHERE pools.name = instances.pool);"
	"UPDATE events SET team = (SELECT team FROM pools"
	" WHERE pools.name = events.pool), pool_inc = 1 WHERE pool IS NOT NULL;"
	"UPDATE heartbeats SET team = (SELECT team FROM pools"
	" WHERE pools.name = heartbeats.pool);",
	/* 6: an instance's samples by time (gb_store_hb_add keeps one a
	 * second per instance) */
	"CREATE INDEX heartbeats_instance ON heartbeats(instance_id, time_ms);",
	/* 7: an autoscaled pool's demand signal and decision state
	 * (store_autoscale.c), shared by the replicas and kept across
	 * restarts; rows of an earlier incarnation of the name are not read */
	"CREATE TABLE autoscale (pool TEXT PRIMARY KEY, pool_inc INTEGER NOT"
	" NULL, demand INTEGER NOT NULL DEFAULT 0, demand_until INTEGER NOT"
	" NULL DEFAULT 0, state TEXT, last TEXT, refused TEXT);",
	/* 8: broker tokens exchanged for CI ID tokens (store_auth.c), by
	 * the SHA-256 of the token, and the ID tokens already exchanged
	 * (replay), each kept until it expires */
	"CREATE TABLE oidc_tokens (sha256 TEXT PRIMARY KEY, actor TEXT NOT"
	" NULL, role TEXT NOT NULL, team TEXT NOT NULL, labels TEXT NOT NULL,"
	" created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL);"
	"CREATE TABLE oidc_seen (key TEXT PRIMARY KEY, expires_ms INTEGER"
	" NOT NULL);",
	/* 9: an audit row about a pool keeps the pool (its name), the team
	 * that owned it and its incarnation when the row was written, as
	 * events do (5): a reused name's rows stay apart.  Rows from before:
	 * the pool actions' target, the owner and incarnation now. */
	"ALTER TABLE audit ADD COLUMN pool TEXT;"
	"ALTER TABLE audit ADD COLUMN pool_team TEXT;"
	"ALTER TABLE audit ADD COLUMN pool_inc INTEGER NOT NULL DEFAULT 0;"
	"UPDATE audit SET pool = target, pool_team = (SELECT team FROM pools"
	" WHERE pools.name = audit.target), pool_inc = COALESCE((SELECT"
	" incarnation FROM pools WHERE pools.name = audit.target), 0)"
	" WHERE action IN ('apply', 'destroy', 'scale', 'demand')"
	" AND target IS NOT NULL;",
	/* 10: instance agents (store_agent.c): each instance's one-time
	 * bootstrap token and, once exchanged, its instance credential (both
	 * by their SHA-256), the agent's last report and when the instance
	 * became ready */
	"CREATE TABLE agents (boot_sha256 TEXT PRIMARY KEY, pool TEXT NOT"
	" NULL, name TEXT NOT NULL, boot_expires_ms INTEGER NOT NULL,"
	" cred_sha256 TEXT, instance_id INTEGER, registered_ms INTEGER NOT"
	" NULL DEFAULT 0, revoked_ms INTEGER NOT NULL DEFAULT 0, reported_ms"
	" INTEGER NOT NULL DEFAULT 0, ready_ms INTEGER NOT NULL DEFAULT 0,"
	" report TEXT);"
	"CREATE UNIQUE INDEX agents_cred ON agents(cred_sha256);"
	"CREATE INDEX agents_instance ON agents(instance_id);"
	"CREATE INDEX agents_pool ON agents(pool);",
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

const char *gb_store_backend_name(const gb_store *s)
{
	return s->be->name;
}

int gb_store_is_shared(const gb_store *s)
{
	return s->be->shared;
}

/* After an error inside gb_store_begin .. commit: when the database
 * rolled the transaction back because of it, it is the cause a later
 * commit reports (caller holds the lock). */
/* The backend's view, or an injected failure's (store_fault.c): such a
 * failure inside a transaction ends it, as a real one does on
 * PostgreSQL (and SQLite on SQLITE_FULL or IOERR). */
static int be_tx_lost(gb_store *s)
{
	return s->fault_tx_lost || s->be->tx_lost(s);
}

/* The message of the last failure: the injected one when the last step
 * was made to fail, else the database's. */
static const char *be_errmsg(gb_store *s)
{
	return s->fault_msg ? s->fault_msg : s->be->errmsg(s);
}

static void note_tx_err(gb_store *s)
{
	if (s->tx_depth > 0 && !s->tx_err[0] && be_tx_lost(s))
		memcpy(s->tx_err, thread_err, sizeof(s->tx_err));
}

int gb_store__failf(gb_store *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(thread_err, sizeof(thread_err), fmt, ap);
	va_end(ap);
	note_tx_err(s);
	return -1;
}

int gb_store__fail(gb_store *s, const char *what)
{
	return gb_store__failf(s, "state database %s: %s: %s", s->path, what,
	                       be_errmsg(s));
}

/* Inside gb_store_begin .. commit, but the database has rolled the
 * transaction back: a statement now would run, and commit, on its own. */
static int tx_lost(gb_store *s)
{
	return s->tx_depth > 0 && be_tx_lost(s);
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

gb_sql *gb_store__stmt(gb_store *s, const char *sql)
{
	gb_sql *st;
	if (tx_lost(s)) {
		fail_tx_lost(s, "statement");
		return NULL;
	}
	for (size_t i = 0; i < s->ncache; i++) {
		if (s->cache[i].sql == sql) {
			st = s->cache[i].st;
			s->be->reset(st);
			st->stepped = 0;
			return st;
		}
	}
	if (!(st = s->be->prepare(s, sql)))
		return NULL;
	st->sql = sql;
	if (s->ncache < GB_STMT_CACHE) {
		s->cache[s->ncache].sql = sql;
		s->cache[s->ncache].st = st;
		s->ncache++;
	} else {
		/* Cache full: a programming error (more distinct statements
		 * than expected); keep working but leak-free by finalising the
		 * oldest. */
		s->be->finalize(s->cache[0].st);
		memmove(&s->cache[0], &s->cache[1],
		        (GB_STMT_CACHE - 1) * sizeof(s->cache[0]));
		s->cache[GB_STMT_CACHE - 1].sql = sql;
		s->cache[GB_STMT_CACHE - 1].st = st;
	}
	return st;
}

void gb_sql_bind_text(gb_sql *st, int i, const char *v)
{
	st->s->be->bind_text(st, i, v);
}

void gb_sql_bind_int(gb_sql *st, int i, int64_t v)
{
	st->s->be->bind_int(st, i, v);
}

void gb_sql_bind_double(gb_sql *st, int i, double v)
{
	st->s->be->bind_double(st, i, v);
}

void gb_sql_bind_null(gb_sql *st, int i)
{
	st->s->be->bind_null(st, i);
}

/* Every statement's steps pass here: the first step of a run is where
 * an injected fault (store_fault.c) makes it fail. */
int gb_sql_step(gb_sql *st)
{
	gb_store *s = st->s;
	s->fault_msg = NULL;
	if (!st->stepped) {
		st->stepped = 1;
		if ((s->fault_msg = gb_store__fault(st->sql))) {
			if (s->tx_depth > 0)
				s->fault_tx_lost = 1;
			return GB_SQL_ERR;
		}
	}
	return s->be->step(st);
}

int64_t gb_sql_int(gb_sql *st, int i)
{
	return st->s->be->col_int(st, i);
}

double gb_sql_double(gb_sql *st, int i)
{
	return st->s->be->col_double(st, i);
}

const char *gb_sql_text(gb_sql *st, int i)
{
	return st->s->be->col_text(st, i);
}

char *gb_sql_strdup(gb_sql *st, int i)
{
	const char *t = gb_sql_text(st, i);
	return t ? gb_xstrdup(t) : NULL;
}

void gb_sql_reset(gb_sql *st)
{
	st->s->be->reset(st);
	st->stepped = 0;
}

int64_t gb_sql_changes(gb_sql *st)
{
	return st->s->be->changes(st);
}

int gb_store__exec_stmt(gb_store *s, gb_sql *st, const char *what)
{
	int rc = gb_sql_step(st);
	if (rc == GB_SQL_ERR) {
		gb_store__fail(s, what);
		gb_sql_reset(st);
		return -1;
	}
	gb_sql_reset(st);
	return 0;
}

static void bind_args(gb_sql *st, const gb_store__arg *args, size_t nargs)
{
	for (size_t i = 0; i < nargs; i++) {
		if (args[i].is_text)
			gb_sql_bind_text(st, (int)i + 1, args[i].text);
		else
			gb_sql_bind_int(st, (int)i + 1, args[i].num);
	}
}

int gb_store__exec(gb_store *s, const char *sql, const gb_store__arg *args,
                   size_t nargs, const char *what, int64_t *changes)
{
	gb_sql *st;
	int rc = -1;
	gb_store__lock(s);
	if ((st = gb_store__stmt(s, sql))) {
		bind_args(st, args, nargs);
		if (gb_sql_step(st) == GB_SQL_ERR) {
			gb_store__fail(s, what);
		} else {
			if (changes)
				*changes = gb_sql_changes(st);
			rc = 0;
		}
		gb_sql_reset(st);
	}
	gb_store__unlock(s);
	return rc;
}

int gb_store__list(gb_store *s, const char *sql, const gb_store__arg *args,
                   size_t nargs, const gb_store__rows *rows, void **out,
                   size_t *n)
{
	gb_sql *st;
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
	bind_args(st, args, nargs);
	while ((rc = gb_sql_step(st)) == GB_SQL_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			v = gb_xrealloc(v, cap * rows->size);
		}
		memset(v + len * rows->size, 0, rows->size);
		rows->read(st, v + len * rows->size);
		len++;
	}
	if (rc != GB_SQL_DONE) {
		gb_store__fail(s, rows->what);
		gb_sql_reset(st);
		gb_store__unlock(s);
		rows->free_list(v, len);
		return -1;
	}
	gb_sql_reset(st);
	gb_store__unlock(s);
	*out = v;
	*n = len;
	return 0;
}

/* ROLLBACK is never made to fail: it is the way out of a failure. */
static int exec_sql(gb_store *s, const char *sql, const char *what)
{
	const char *fault;
	s->fault_msg = NULL;
	if (strcmp(sql, "ROLLBACK") != 0 && (fault = gb_store__fault(sql))) {
		if (s->tx_depth > 0)
			s->fault_tx_lost = 1;
		return gb_store__failf(s, "state database %s: %s: %s", s->path,
		                       what, fault);
	}
	return s->be->exec(s, sql, what);
}

int gb_store_version_try(gb_store *s, int64_t v[2])
{
	int rc;
	if (pthread_mutex_trylock(&s->lock) != 0)
		return 1;
	if (s->tx_depth) { /* our own transaction is open: not settled */
		gb_store__unlock(s);
		return 1;
	}
	rc = s->be->version(s, v);
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
		s->fault_tx_lost = 0;
		if (exec_sql(s, s->be->begin_sql, "begin transaction") != 0) {
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
	memcpy(keep, thread_err, sizeof(keep));
	exec_sql(s, "ROLLBACK", "rollback");
	s->fault_tx_lost = 0;
	memcpy(thread_err, keep, sizeof(keep));
}

int gb_store_commit(gb_store *s)
{
	int rc = 0;
	if (--s->tx_depth == 0) {
		if (be_tx_lost(s)) {
			/* already rolled back (by the database after an error,
			 * or an inner gb_store_rollback): nothing to commit */
			fail_tx_lost(s, "commit");
			rollback_open(s);
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
	gb_sql *st;
	int rc;
	*v = 0;
	if ((rc = s->be->has_table(s, "meta")) <= 0)
		return rc; /* 0: an empty database */
	if (!(st = s->be->prepare(s, "SELECT value FROM meta WHERE key ="
	                             " 'schema_version'")))
		return -1;
	rc = gb_sql_step(st);
	if (rc == GB_SQL_ROW)
		*v = atoi(s->be->col_text(st, 0));
	else if (rc == GB_SQL_ERR)
		gb_store__fail(s, "read schema version");
	s->be->finalize(st);
	return rc == GB_SQL_ERR ? -1 : 0;
}

static int migrate(gb_store *s)
{
	int v;
	const int latest = (int)GB_ARRAY_LEN(migrations);
	if (exec_sql(s, s->be->begin_sql, "begin migration") != 0)
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
		char sql[160];
		char *text = s->be->schema(migrations[i]);
		int rc = exec_sql(s, text, "migrate");
		free(text);
		if (rc != 0)
			goto fail;
		snprintf(sql, sizeof(sql),
		         "INSERT INTO meta(key, value) VALUES ('schema_version',"
		         " '%d') ON CONFLICT (key) DO UPDATE SET value ="
		         " excluded.value", i + 1);
		if (exec_sql(s, sql, "record schema version") != 0)
			goto fail;
		if (v > 0)
			gb_log(GB_LOG_INFO, "store", "migrated %s to schema %d",
			       s->path, i + 1);
	}
	return exec_sql(s, "COMMIT", "commit migration");
fail:
	rollback_open(s);
	return -1;
}

/* postgresql:// and postgres:// name a PostgreSQL database; anything
 * else is a SQLite file. */
static const gb_store_backend *backend_for(const char *target)
{
	if (strncmp(target, "postgresql://", 13) == 0 ||
	    strncmp(target, "postgres://", 11) == 0)
		return &gb_store_pg;
	return &gb_store_sqlite;
}

int gb_store_is_url(const char *target)
{
	return target && backend_for(target) == &gb_store_pg;
}

int gb_store_open_auth(const char *target, const char *password,
                       gb_store **out, char *err, size_t cap)
{
	gb_store *s;
	pthread_mutexattr_t ma;
	*out = NULL;
	gb_store__fault_init();
	s = gb_xcalloc(1, sizeof(*s));
	s->be = backend_for(target);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&s->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	s->serve_fd = -1;
	gb_store_lease_owner_init(s);
	if (s->be->open(s, target, password, err, cap) != 0) {
		gb_store_close(s);
		return -1;
	}
	if (migrate(s) != 0) {
		snprintf(err, cap, "%s", thread_err);
		gb_store_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

int gb_store_open_retryable(const char *err)
{
	/* PostgreSQL's messages (SQLSTATE 53300, 57P03): libpq hands a
	 * refused connection's cause over as text only */
	static const char *const busy[] = {
		"too many clients", "too many connections",
		"connection slots are reserved",
		"the database system is starting up",
		"the database system is shutting down",
		"the database system is in recovery mode",
		"the database system is not yet accepting connections",
	};
	for (size_t i = 0; err && i < GB_ARRAY_LEN(busy); i++)
		if (strstr(err, busy[i]))
			return 1;
	return 0;
}

int gb_store_open(const char *target, gb_store **out, char *err, size_t cap)
{
	return gb_store_open_auth(target, NULL, out, err, cap);
}

int gb_store_open_cfg(const gb_config *cfg, gb_store **out, char *err,
                      size_t cap)
{
	char pw[1024];
	int rc;
	if (!cfg->state_password || !gb_store_is_url(cfg->state_path))
		return gb_store_open_auth(cfg->state_path, NULL, out, err, cap);
	/* the source's name may be shown; its value never is */
	if (gb_secret_lookup(cfg->state_password, pw, sizeof(pw)) < 0) {
		*out = NULL;
		snprintf(err, cap, "state_password: %s gives no password (unset, "
		         "empty or unreadable): set it, or remove state_password "
		         "to use PGPASSWORD / PGPASSFILE", cfg->state_password);
		return -1;
	}
	rc = gb_store_open_auth(cfg->state_path, pw, out, err, cap);
	memset(pw, 0, sizeof(pw));
	return rc;
}

void gb_store_close(gb_store *s)
{
	if (!s)
		return;
	gb_store_lease_release_all(s);
	if (s->serve_fd >= 0)
		close(s->serve_fd); /* releases the serving lock */
	for (size_t i = 0; i < s->ncache; i++)
		s->be->finalize(s->cache[i].st);
	if (s->db)
		s->be->close(s);
	for (size_t i = 0; i < s->nleases; i++)
		free(s->leases[i].name);
	free(s->leases);
	pthread_mutex_destroy(&s->lock);
	free(s->path);
	free(s);
}

int gb_store_set_idle_tx(gb_store *s, int64_t ms)
{
	int rc = 0;
	gb_store__lock(s);
	if (s->be->idle_tx && (rc = s->be->idle_tx(s, ms)) != 0)
		gb_store__fail(s, "set the idle transaction timeout");
	gb_store__unlock(s);
	return rc;
}

int gb_store_ping(gb_store *s)
{
	static const char sql[] = "SELECT 1";
	gb_sql *st;
	int rc = -1;
	gb_store__lock(s);
	if ((st = gb_store__stmt(s, sql))) {
		if (gb_sql_step(st) == GB_SQL_ROW)
			rc = 0;
		else
			gb_store__failf(s, "the state store %s is unreachable: %s",
			                s->path, be_errmsg(s));
		gb_sql_reset(st);
	}
	gb_store__unlock(s);
	return rc;
}

int gb_store_size(gb_store *s, int64_t *bytes, int64_t *free_bytes)
{
	return s->be->size(s, bytes, free_bytes);
}

int gb_store_meta_get(gb_store *s, const char *key, char **out)
{
	static const char sql[] = "SELECT value FROM meta WHERE key = ?";
	gb_sql *st;
	int rc;
	*out = NULL;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, key);
	rc = gb_sql_step(st);
	if (rc == GB_SQL_ROW) {
		*out = gb_sql_strdup(st, 0);
		rc = 0;
	} else {
		rc = rc == GB_SQL_DONE ? 1 : gb_store__fail(s, "read meta");
	}
	gb_sql_reset(st);
	gb_store__unlock(s);
	return rc;
}

int gb_store_meta_set(gb_store *s, const char *key, const char *value)
{
	static const char sql[] =
		"INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT (key)"
		" DO UPDATE SET value = ?2";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, key);
	gb_sql_bind_text(st, 2, value);
	rc = gb_store__exec_stmt(s, st, "write meta");
	gb_store__unlock(s);
	return rc;
}
