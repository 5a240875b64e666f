/* store_pg.c -- the PostgreSQL backend of the store (libpq), for several
 * daemons (replicas) on several hosts over one database.
 *
 * Statements are the store's own (written once, with ?N parameters:
 * mapped to $N here) run with PQexecParams, parameters as text.  Writers
 * are serialised as SQLite serialises them: every write transaction, and
 * every write statement outside one, holds a transaction-level advisory
 * lock, so read-then-write steps (a name index, a quota) see every commit
 * before theirs.  Every write transaction also bumps meta 'changes', the
 * version the daemon's long polls and snapshots compare (store.h,
 * gb_store_version_try): another replica's change is seen at the next
 * check.
 *
 * A lost connection is reset, with a backoff, at the next statement
 * outside a transaction; inside one, the transaction is lost (the commit
 * fails with the cause) and nothing half-written stays. */
#include "store_int.h"

#include <ctype.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* the advisory lock of writers ("gpubrokr" as a number) */
#define WRITE_LOCK "SELECT pg_advisory_xact_lock(7453010373645627250)"
#define BUMP "INSERT INTO meta(key, value) VALUES ('changes', '1') ON" \
	" CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + 1)::text"

typedef struct pg_db {
	PGconn *conn;
	char *conninfo_url;     /* the URL as given (holds no password) */
	char *password;         /* NULL = libpq's own mechanisms */
	char err[GB_STORE_ERR_CAP]; /* the last failure's message */
	char cause[GB_STORE_ERR_CAP]; /* why the last connection failed */
	int wrote;              /* the open transaction wrote */
	int64_t writes;         /* write statements through this connection */
	int64_t retry_at_ms;    /* monotonic: next reconnect attempt */
	int64_t idle_tx_ms;     /* idle_in_transaction_session_timeout */
	int64_t backoff_ms;
} pg_db;

typedef struct pg_stmt {
	gb_sql base;
	char *sql;              /* with $N parameters */
	int nparams;
	int write;              /* INSERT, UPDATE or DELETE */
	int quiet;              /* a write of the leases table */
	char **vals;            /* nparams, owned; NULL = SQL NULL */
	Oid *types;             /* 0 (the server infers it), or text for a
	                           parameter the SQL does not use */
	PGresult *res;
	int row;                /* current row; -1 before the first step */
	int64_t changes;
} pg_stmt;

#define PG(s) ((pg_db *)(s)->db)
#define PST(x) ((pg_stmt *)(x))

static void set_err(gb_store *s, const char *msg)
{
	pg_db *p = PG(s);
	size_t n;
	snprintf(p->err, sizeof(p->err), "%s", msg && *msg ? msg : "unknown error");
	n = strlen(p->err);
	while (n && (p->err[n - 1] == '\n' || p->err[n - 1] == ' '))
		p->err[--n] = '\0';
	for (char *c = p->err; *c; c++)
		if (*c == '\n')
			*c = ' ';
}

static const char *pg_errmsg(gb_store *s)
{
	return s->db ? PG(s)->err : "not open";
}

static void quiet(void *arg, const char *msg)
{
	(void)arg;
	gb_log(GB_LOG_DEBUG, "store", "postgresql: %s", msg);
}

static PGconn *connect_now(pg_db *p)
{
	const char *keys[] = { "dbname", "password", "connect_timeout",
	                       "application_name", NULL };
	const char *vals[] = { p->conninfo_url, p->password, "5", "gpubroker",
	                       NULL };
	PGconn *c;
	if (!p->password) {
		keys[1] = "connect_timeout";
		vals[1] = "5";
		keys[2] = "application_name";
		vals[2] = "gpubroker";
		keys[3] = NULL;
		vals[3] = NULL;
	}
	c = PQconnectdbParams(keys, vals, 1);
	if (c && PQstatus(c) == CONNECTION_OK)
		PQsetNoticeProcessor(c, quiet, NULL);
	return c;
}

/* Every session: no NOTICE chatter, and a session that sits inside a
 * transaction (its process paused or partitioned while it held the
 * writers' lock) is ended by the server, so it cannot stall the other
 * replicas for longer than that; a wait for a lock gives up rather than
 * hang. */
static int session_setup(gb_store *s)
{
	char sql[200];
	PGresult *r;
	int64_t idle = PG(s)->idle_tx_ms > 0 ? PG(s)->idle_tx_ms : 5000;
	snprintf(sql, sizeof(sql), "SET client_min_messages = warning;"
	         " SET idle_in_transaction_session_timeout = %lld;"
	         " SET lock_timeout = '30s'", (long long)idle);
	r = PQexec(PG(s)->conn, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		set_err(s, PQresultErrorMessage(r));
	PQclear(r);
	return ok ? 0 : -1;
}

/* Outside a transaction: a connection that broke is made again (at most
 * once per backoff: 0.25 s doubling to 5 s).  0 when usable. */
static int usable(gb_store *s)
{
	pg_db *p = PG(s);
	int64_t now;
	if (p->conn && PQstatus(p->conn) == CONNECTION_OK)
		return 0;
	if (s->tx_depth > 0) {
		set_err(s, "the connection to the database was lost");
		return -1;
	}
	now = gb_mono_ms();
	if (now < p->retry_at_ms) {
		char m[GB_STORE_ERR_CAP];
		snprintf(m, sizeof(m), "unreachable (retrying in %lld ms): %.400s",
		         (long long)(p->retry_at_ms - now), p->cause);
		set_err(s, m);
		return -1;
	}
	if (p->conn)
		PQfinish(p->conn);
	p->conn = connect_now(p);
	if (p->conn && PQstatus(p->conn) == CONNECTION_OK &&
	    session_setup(s) == 0) {
		gb_log(GB_LOG_INFO, "store", "reconnected to %s", s->path);
		p->backoff_ms = 0;
		return 0;
	}
	if (!p->conn || PQstatus(p->conn) != CONNECTION_OK)
		set_err(s, p->conn ? PQerrorMessage(p->conn) : "out of memory");
	memcpy(p->cause, p->err, sizeof(p->cause));
	p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : 250;
	if (p->backoff_ms > 5000)
		p->backoff_ms = 5000;
	p->retry_at_ms = now + p->backoff_ms;
	return -1;
}

static int result_ok(gb_store *s, PGresult *r)
{
	ExecStatusType t = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	if (t == PGRES_COMMAND_OK || t == PGRES_TUPLES_OK)
		return 1;
	set_err(s, r ? PQresultErrorMessage(r) : PQerrorMessage(PG(s)->conn));
	return 0;
}

/* One simple-protocol command (several statements allowed). */
static int run(gb_store *s, const char *sql)
{
	PGresult *r;
	int ok;
	if (usable(s) != 0)
		return -1;
	r = PQexec(PG(s)->conn, sql);
	ok = result_ok(s, r);
	PQclear(r);
	return ok ? 0 : -1;
}

static int pg_exec(gb_store *s, const char *sql, const char *what)
{
	pg_db *p = PG(s);
	if (strcmp(sql, "COMMIT") == 0 && p->wrote) {
		/* the version other replicas compare moves with the data */
		if (run(s, BUMP) != 0)
			return gb_store__fail(s, what);
	}
	if (strncmp(sql, "BEGIN", 5) == 0 || strcmp(sql, "COMMIT") == 0 ||
	    strcmp(sql, "ROLLBACK") == 0)
		p->wrote = 0;
	if (strcmp(sql, "ROLLBACK") == 0 &&
	    (!p->conn || PQtransactionStatus(p->conn) == PQTRANS_IDLE))
		return 0; /* nothing open (the database ended it already) */
	if (run(s, sql) != 0)
		return gb_store__fail(s, what);
	return 0;
}

/* ?N -> $N, ? -> $k (the k-th), outside quoted text. */
static char *map_params(const char *sql, int *nparams, unsigned char *used,
                        size_t cap)
{
	size_t n = strlen(sql);
	char *out = gb_xmalloc(n * 4 + 1), *o = out;
	int next = 0, max = 0;
	char quote = 0;
	for (const char *c = sql; *c; c++) {
		if (quote) {
			if (*c == quote)
				quote = 0;
			*o++ = *c;
		} else if (*c == '\'' || *c == '"') {
			quote = *c;
			*o++ = *c;
		} else if (*c == '?') {
			int k;
			if (isdigit((unsigned char)c[1])) {
				k = (int)strtol(c + 1, NULL, 10);
				while (isdigit((unsigned char)c[1]))
					c++;
			} else {
				k = ++next;
			}
			if (k > max)
				max = k;
			if (k > 0 && (size_t)k <= cap)
				used[k - 1] = 1;
			o += sprintf(o, "$%d", k);
		} else {
			*o++ = *c;
		}
	}
	*o = '\0';
	*nparams = max;
	return out;
}

static gb_sql *pg_prepare(gb_store *s, const char *sql)
{
	pg_stmt *st = gb_xcalloc(1, sizeof(*st));
	const char *w = sql;
	unsigned char used[64] = { 0 };
	while (isspace((unsigned char)*w))
		w++;
	st->base.s = s;
	st->sql = map_params(sql, &st->nparams, used, sizeof(used));
	st->vals = gb_xcalloc((size_t)st->nparams + 1, sizeof(char *));
	st->types = gb_xcalloc((size_t)st->nparams + 1, sizeof(Oid));
	for (int i = 0; i < st->nparams && (size_t)i < sizeof(used); i++)
		st->types[i] = used[i] ? 0 : 25; /* 25: text */
	st->row = -1;
	st->write = strncmp(w, "INSERT", 6) == 0 || strncmp(w, "UPDATE", 6) == 0 ||
	            strncmp(w, "DELETE", 6) == 0;
	/* lease traffic (renewals every few seconds) is not a change the
	 * version announces: long polls would wake for nothing */
	st->quiet = strncmp(w, "INSERT INTO leases", 18) == 0 ||
	            strncmp(w, "UPDATE leases", 13) == 0;
	return &st->base;
}

static void pg_reset(gb_sql *x)
{
	pg_stmt *st = PST(x);
	PQclear(st->res);
	st->res = NULL;
	st->row = -1;
	for (int i = 0; i < st->nparams; i++) {
		free(st->vals[i]);
		st->vals[i] = NULL;
	}
}

static void pg_finalize(gb_sql *x)
{
	if (!x)
		return;
	pg_reset(x);
	free(PST(x)->vals);
	free(PST(x)->types);
	free(PST(x)->sql);
	free(x);
}

static void set_val(gb_sql *x, int i, char *v)
{
	pg_stmt *st = PST(x);
	if (i < 1 || i > st->nparams) { /* a parameter the SQL does not use */
		free(v);
		return;
	}
	free(st->vals[i - 1]);
	st->vals[i - 1] = v;
}

static void pg_bind_text(gb_sql *x, int i, const char *v)
{
	set_val(x, i, v ? gb_xstrdup(v) : NULL);
}

static void pg_bind_int(gb_sql *x, int i, int64_t v)
{
	set_val(x, i, gb_xasprintf("%lld", (long long)v));
}

static void pg_bind_double(gb_sql *x, int i, double v)
{
	set_val(x, i, gb_xasprintf("%.17g", v));
}

static void pg_bind_null(gb_sql *x, int i)
{
	set_val(x, i, NULL);
}

static int exec_params(gb_sql *x)
{
	pg_stmt *st = PST(x);
	gb_store *s = x->s;
	PGresult *r = PQexecParams(PG(s)->conn, st->sql, st->nparams, st->types,
	                           (const char *const *)st->vals, NULL, NULL, 0);
	if (!result_ok(s, r)) {
		PQclear(r);
		return GB_SQL_ERR;
	}
	st->res = r;
	st->row = 0;
	st->changes = atoll(PQcmdTuples(r));
	if (st->write && !st->quiet) {
		PG(s)->wrote = 1;
		PG(s)->writes++;
	}
	return PQntuples(r) > 0 ? GB_SQL_ROW : GB_SQL_DONE;
}

static int pg_step(gb_sql *x)
{
	pg_stmt *st = PST(x);
	gb_store *s = x->s;
	int rc;
	if (st->res) {
		st->row++;
		return st->row < PQntuples(st->res) ? GB_SQL_ROW : GB_SQL_DONE;
	}
	if (usable(s) != 0)
		return GB_SQL_ERR;
	if (!st->write || s->tx_depth > 0)
		return exec_params(x);
	/* a write on its own: one writer at a time, as in a transaction */
	if (run(s, "BEGIN; " WRITE_LOCK) != 0)
		return GB_SQL_ERR;
	rc = exec_params(x);
	if (rc == GB_SQL_ERR ||
	    run(s, st->quiet ? "COMMIT" : BUMP "; COMMIT") != 0) {
		char keep[GB_STORE_ERR_CAP];
		memcpy(keep, PG(s)->err, sizeof(keep));
		PQclear(PQexec(PG(s)->conn, "ROLLBACK"));
		memcpy(PG(s)->err, keep, sizeof(keep));
		PQclear(st->res);
		st->res = NULL;
		return GB_SQL_ERR;
	}
	PG(s)->wrote = 0;
	return rc;
}

static int pg_isnull(gb_sql *x, int i)
{
	pg_stmt *st = PST(x);
	return !st->res || st->row < 0 || st->row >= PQntuples(st->res) ||
	       i >= PQnfields(st->res) || PQgetisnull(st->res, st->row, i);
}

static int64_t pg_col_int(gb_sql *x, int i)
{
	const char *v;
	if (pg_isnull(x, i))
		return 0;
	v = PQgetvalue(PST(x)->res, PST(x)->row, i);
	if (v[0] == 't' && !v[1])
		return 1;
	if (v[0] == 'f' && !v[1])
		return 0;
	return strtoll(v, NULL, 10);
}

static double pg_col_double(gb_sql *x, int i)
{
	if (pg_isnull(x, i))
		return 0;
	return strtod(PQgetvalue(PST(x)->res, PST(x)->row, i), NULL);
}

static const char *pg_col_text(gb_sql *x, int i)
{
	if (pg_isnull(x, i))
		return NULL;
	return PQgetvalue(PST(x)->res, PST(x)->row, i);
}

static int64_t pg_changes(gb_sql *x)
{
	return PST(x)->changes;
}

static int pg_tx_lost(gb_store *s)
{
	return !PG(s)->conn ||
	       PQtransactionStatus(PG(s)->conn) != PQTRANS_INTRANS;
}

static int pg_has_table(gb_store *s, const char *name)
{
	const char *v[] = { name };
	PGresult *r;
	int yes;
	if (usable(s) != 0)
		return gb_store__fail(s, "read schema");
	/* a table (plain or partitioned), not a view */
	r = PQexecParams(PG(s)->conn, "SELECT EXISTS (SELECT 1 FROM pg_class"
	                 " WHERE oid = to_regclass($1) AND relkind IN ('r',"
	                 " 'p'))", 1, NULL, v, NULL, NULL, 0);
	if (!result_ok(s, r)) {
		PQclear(r);
		return gb_store__fail(s, "read schema");
	}
	yes = PQgetvalue(r, 0, 0)[0] == 't';
	PQclear(r);
	return yes;
}

static int pg_version(gb_store *s, int64_t v[2])
{
	static const char sql[] = "SELECT value FROM meta WHERE key = 'changes'";
	gb_sql *st = gb_store__stmt(s, sql);
	int rc;
	if (!st)
		return -1;
	rc = pg_step(st);
	if (rc == GB_SQL_ERR) {
		gb_store__fail(s, "read the change counter");
		pg_reset(st);
		return -1;
	}
	v[0] = PG(s)->writes;
	v[1] = rc == GB_SQL_ROW ? strtoll(pg_col_text(st, 0), NULL, 10) : 0;
	pg_reset(st);
	return 0;
}

/* The schema as written (SQLite's types) in PostgreSQL's: 64-bit
 * integers, identity row ids, double precision; plus the functions the
 * statements use (gb_now_ms: the database's clock, in unix ms). */
static char *pg_schema(const char *sql)
{
	static const struct { const char *from, *to; } map[] = {
		{ "INTEGER PRIMARY KEY", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" },
		{ "INTEGER", "BIGINT" },
		{ "REAL", "DOUBLE PRECISION" },
	};
	gb_buf b = GB_BUF_INIT;
	const char *c = sql;
	while (*c) {
		size_t k;
		int at_word = c == sql || !(isalnum((unsigned char)c[-1]) || c[-1] == '_');
		for (k = 0; k < GB_ARRAY_LEN(map); k++) {
			size_t n = strlen(map[k].from);
			if (at_word && strncmp(c, map[k].from, n) == 0 &&
			    !(isalnum((unsigned char)c[n]) || c[n] == '_')) {
				gb_buf_puts(&b, map[k].to);
				c += n;
				break;
			}
		}
		if (k == GB_ARRAY_LEN(map))
			gb_buf_putc(&b, *c++);
	}
	if (strstr(sql, "CREATE TABLE meta"))
		gb_buf_puts(&b, "CREATE OR REPLACE FUNCTION gb_now_ms() RETURNS"
		            " bigint LANGUAGE sql AS $$ SELECT (extract(epoch"
		            " FROM clock_timestamp()) * 1000)::bigint $$;");
	return gb_buf_take(&b);
}

static int pg_idle_tx(gb_store *s, int64_t ms)
{
	PG(s)->idle_tx_ms = ms;
	return usable(s) == 0 ? session_setup(s) : -1;
}

static int pg_size(gb_store *s, int64_t *bytes, int64_t *free_bytes)
{
	static const char sql[] = "SELECT pg_database_size(current_database())";
	gb_sql *st;
	*bytes = 0;
	*free_bytes = -1; /* the server's disk is not ours to see */
	gb_store__lock(s);
	if ((st = gb_store__stmt(s, sql))) {
		if (pg_step(st) == GB_SQL_ROW)
			*bytes = pg_col_int(st, 0);
		pg_reset(st);
	}
	gb_store__unlock(s);
	return 0;
}

/* postgresql://USER@HOST:PORT/DB?opts -> "postgresql://USER@HOST:PORT/DB"
 * (options may hold secrets such as sslpassword; they are not shown).
 * -1 when the URL carries a password. */
static int display_url(const char *url, char **out)
{
	const char *rest = strstr(url, "://") + 3;
	const char *end = rest + strcspn(rest, "/?");
	const char *at = memchr(rest, '@', (size_t)(end - rest));
	const char *colon = at ? memchr(rest, ':', (size_t)(at - rest)) : NULL;
	size_t n = strcspn(url, "?");
	if (colon)
		return -1;
	if (strstr(url + n, "password="))
		return -1;
	*out = gb_xstrndup(url, n);
	return 0;
}

/* A database reached over the network without sslmode=verify-full:
 * neither the server's certificate nor its name is checked (require
 * only encrypts; prefer and allow may not even do that), so whoever sits
 * in between reads and rewrites the state.  Warned about once per open;
 * loopback and Unix sockets are exempt. */
static void sslmode_warn(const gb_store *s, PGconn *c)
{
	const char *host = PQhost(c), *mode = NULL;
	PQconninfoOption *opts = PQconninfo(c), *o;
	for (o = opts; o && o->keyword; o++)
		if (strcmp(o->keyword, "sslmode") == 0)
			mode = o->val;
	if (host && *host && host[0] != '/' && strcmp(host, "localhost") != 0 &&
	    strncmp(host, "127.", 4) != 0 && strcmp(host, "::1") != 0 &&
	    (!mode || strcmp(mode, "verify-full") != 0))
		gb_log(GB_LOG_WARN, "store", "state database %s: the connection "
		       "to %s uses sslmode=%s, which does not verify the "
		       "server's certificate and name (anyone in between could "
		       "read and change the state): add sslmode=verify-full to "
		       "the URL, with the server's CA in ~/.postgresql/root.crt "
		       "or sslrootcert=PATH", s->path, host,
		       mode ? mode : "prefer");
	PQconninfoFree(opts);
}

static int pg_open(gb_store *s, const char *url, const char *password,
                   char *err, size_t cap)
{
	pg_db *p;
	if (display_url(url, &s->path) != 0) {
		s->path = gb_xstrdup("postgresql://(redacted)");
		snprintf(err, cap, "the state URL carries a password: remove it "
		         "(postgresql://USER@HOST:PORT/DB) and give the password "
		         "through PGPASSWORD, PGPASSFILE (~/.pgpass) or "
		         "state_password: env:NAME | file:PATH in the config");
		return -1;
	}
	p = gb_xcalloc(1, sizeof(*p));
	s->db = p;
	p->conninfo_url = gb_xstrdup(url);
	if (password) {
		p->password = gb_xstrdup(password);
		gb_redact_register(p->password);
	}
	p->conn = connect_now(p);
	if (!p->conn || PQstatus(p->conn) != CONNECTION_OK) {
		set_err(s, p->conn ? PQerrorMessage(p->conn) : "out of memory");
		snprintf(err, cap, "cannot open state database %s: %s", s->path,
		         p->err);
		return -1;
	}
	if (session_setup(s) != 0) {
		snprintf(err, cap, "cannot open state database %s: %s", s->path,
		         p->err);
		return -1;
	}
	sslmode_warn(s, p->conn);
	return 0;
}

static void pg_close(gb_store *s)
{
	pg_db *p = PG(s);
	if (p->conn)
		PQfinish(p->conn);
	free(p->conninfo_url);
	if (p->password) {
		memset(p->password, 0, strlen(p->password));
		free(p->password);
	}
	free(p);
	s->db = NULL;
}

const gb_store_backend gb_store_pg = {
	.name = "postgresql",
	.open = pg_open,
	.close = pg_close,
	.exec = pg_exec,
	.prepare = pg_prepare,
	.finalize = pg_finalize,
	.bind_text = pg_bind_text,
	.bind_int = pg_bind_int,
	.bind_double = pg_bind_double,
	.bind_null = pg_bind_null,
	.step = pg_step,
	.col_int = pg_col_int,
	.col_double = pg_col_double,
	.col_text = pg_col_text,
	.reset = pg_reset,
	.changes = pg_changes,
	.errmsg = pg_errmsg,
	.tx_lost = pg_tx_lost,
	.begin_sql = "BEGIN; " WRITE_LOCK,
	.has_table = pg_has_table,
	.version = pg_version,
	.schema = pg_schema,
	.size = pg_size,
	.idle_tx = pg_idle_tx,
	.shared = 1,
};
