/* store_lease.c -- leases with fencing tokens (store.h, "leases").
 * The statements run on both backends; times are the database's clock
 * (gb_now_ms(), a SQL function both define), so replicas on hosts whose
 * clocks differ agree on who holds what. */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

void gb_store_lease_owner_init(gb_store *s)
{
	unsigned char r[6] = { 0 };
	char host[32] = "host";
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		int64_t t = gb_mono_ns();
		memcpy(r, &t, sizeof(r));
	}
	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	snprintf(s->owner, sizeof(s->owner), "%s:%ld:%02x%02x%02x%02x%02x%02x",
	         host, (long)getpid(), r[0], r[1], r[2], r[3], r[4], r[5]);
}

const char *gb_store_lease_owner(gb_store *s)
{
	return s->owner;
}

void gb_store_fence_on(gb_store *s)
{
	gb_store__lock(s);
	s->fenced = 1;
	gb_store__unlock(s);
}

static gb_store_lease *held(gb_store *s, const char *name)
{
	for (size_t i = 0; i < s->nleases; i++)
		if (strcmp(s->leases[i].name, name) == 0)
			return &s->leases[i];
	return NULL;
}

static void forget(gb_store *s, const char *name)
{
	gb_store_lease *l = held(s, name);
	if (!l)
		return;
	free(l->name);
	*l = s->leases[--s->nleases];
}

static void remember(gb_store *s, const char *name, int64_t token,
                     int64_t ttl_ms)
{
	gb_store_lease *l = held(s, name);
	if (!l) {
		s->leases = gb_xrealloc(s->leases,
		                        (s->nleases + 1) * sizeof(*s->leases));
		l = &s->leases[s->nleases++];
		l->name = gb_xstrdup(name);
	}
	l->token = token;
	l->expires_mono_ms = gb_mono_ms() + ttl_ms;
}

int gb_store_lease_acquire(gb_store *s, const char *name, int64_t ttl_ms,
                           int64_t *token, char *holder, size_t cap)
{
	/* The token moves on whenever the lease is taken anew: from another
	 * owner, or after it lapsed (a stale step of this owner then fails
	 * its fencing check too). */
	static const char take[] =
		"INSERT INTO leases (name, owner, token, expires_ms) VALUES"
		" (?1, ?2, 1, gb_now_ms() + ?3) ON CONFLICT (name) DO UPDATE SET"
		" token = CASE WHEN leases.owner = ?2 AND leases.expires_ms >"
		" gb_now_ms() THEN leases.token ELSE leases.token + 1 END,"
		" owner = ?2, expires_ms = gb_now_ms() + ?3,"
		" want = CASE WHEN leases.want = ?2 THEN NULL ELSE leases.want END"
		" WHERE leases.owner = ?2 OR leases.expires_ms <= gb_now_ms()"
		" RETURNING token";
	static const char who[] = "SELECT owner FROM leases WHERE name = ?1";
	gb_sql *st;
	int rc;
	if (holder && cap)
		holder[0] = '\0';
	if (gb_store_begin(s) != 0)
		return -1;
	if (!(st = gb_store__stmt(s, take)))
		goto fail;
	gb_sql_bind_text(st, 1, name);
	gb_sql_bind_text(st, 2, s->owner);
	gb_sql_bind_int(st, 3, ttl_ms);
	rc = gb_sql_step(st);
	if (rc == GB_SQL_ERR) {
		gb_store__fail(s, "take a lease");
		gb_sql_reset(st);
		goto fail;
	}
	if (rc == GB_SQL_ROW) {
		*token = gb_sql_int(st, 0);
		gb_sql_reset(st);
		if (gb_store_commit(s) != 0) {
			gb_store__lock(s);
			forget(s, name);
			gb_store__unlock(s);
			return -1;
		}
		gb_store__lock(s);
		remember(s, name, *token, ttl_ms);
		gb_store__unlock(s);
		return 0;
	}
	gb_sql_reset(st);
	if (holder && cap && (st = gb_store__stmt(s, who))) {
		gb_sql_bind_text(st, 1, name);
		if (gb_sql_step(st) == GB_SQL_ROW && gb_sql_text(st, 0))
			snprintf(holder, cap, "%s", gb_sql_text(st, 0));
		gb_sql_reset(st);
	}
	forget(s, name);
	if (gb_store_commit(s) != 0)
		return -1;
	return 1;
fail:
	gb_store_rollback(s);
	return -1;
}

int gb_store_lease_renew_all(gb_store *s, int64_t ttl_ms)
{
	static const char sql[] =
		"UPDATE leases SET expires_ms = gb_now_ms() + ?3 WHERE name = ?1"
		" AND owner = ?2 AND token = ?4 AND expires_ms > gb_now_ms()";
	int lost = 0;
	gb_store__lock(s);
	for (size_t i = 0; i < s->nleases;) {
		gb_store_lease *l = &s->leases[i];
		const gb_store__arg args[] = { GB_STORE_TEXT(l->name),
		                               GB_STORE_TEXT(s->owner),
		                               GB_STORE_INT(ttl_ms),
		                               GB_STORE_INT(l->token) };
		int64_t changed = 0;
		if (gb_store__exec(s, sql, args, GB_ARRAY_LEN(args),
		                   "renew a lease", &changed) != 0) {
			gb_store__unlock(s);
			return -1;
		}
		if (changed == 1) {
			l->expires_mono_ms = gb_mono_ms() + ttl_ms;
			i++;
		} else {
			forget(s, l->name); /* moves the last one here */
			lost++;
		}
	}
	gb_store__unlock(s);
	return lost;
}

int gb_store_lease_release(gb_store *s, const char *name)
{
	static const char sql[] =
		"UPDATE leases SET expires_ms = 0 WHERE name = ?1 AND owner = ?2"
		" AND token = ?3";
	gb_store_lease *l;
	int rc;
	gb_store__lock(s);
	if (!(l = held(s, name))) {
		gb_store__unlock(s);
		return 0;
	}
	{
		const gb_store__arg args[] = { GB_STORE_TEXT(name),
		                               GB_STORE_TEXT(s->owner),
		                               GB_STORE_INT(l->token) };
		rc = gb_store__exec(s, sql, args, GB_ARRAY_LEN(args),
		                    "release a lease", NULL);
	}
	forget(s, name);
	gb_store__unlock(s);
	return rc;
}

void gb_store_lease_release_all(gb_store *s)
{
	if (!s->db)
		return;
	for (;;) {
		char *name;
		gb_store__lock(s);
		name = s->nleases ? gb_xstrdup(s->leases[0].name) : NULL;
		gb_store__unlock(s);
		if (!name)
			return;
		if (gb_store_lease_release(s, name) != 0) {
			gb_store__lock(s);
			forget(s, name);
			gb_store__unlock(s);
		}
		free(name);
	}
}

int gb_store_lease_held(gb_store *s, const char *name)
{
	int yes;
	gb_store__lock(s);
	yes = held(s, name) != NULL;
	gb_store__unlock(s);
	return yes;
}

int gb_store__fence(gb_store *s, const char *pool)
{
	static const char sql[] =
		"SELECT token FROM leases WHERE name = ?1 AND owner = ?2 AND"
		" token = ?3 AND expires_ms > gb_now_ms()";
	char name[300];
	gb_store_lease *l;
	gb_sql *st;
	int rc;
	if (!s->fenced)
		return 0;
	snprintf(name, sizeof(name), "pool:%s", pool ? pool : "");
	if (!(l = held(s, name)))
		return gb_store__failf(s, "state database %s: pool %s: this "
		                       "process does not hold the pool's lease "
		                       "(another replica converges it); nothing "
		                       "was written", s->path, pool);
	if (!(st = gb_store__stmt(s, sql)))
		return -1;
	gb_sql_bind_text(st, 1, name);
	gb_sql_bind_text(st, 2, s->owner);
	gb_sql_bind_int(st, 3, l->token);
	rc = gb_sql_step(st);
	gb_sql_reset(st);
	if (rc == GB_SQL_ERR)
		return gb_store__fail(s, "check the pool's lease");
	if (rc == GB_SQL_DONE) {
		int64_t token = l->token;
		forget(s, name);
		return gb_store__failf(s, "state database %s: pool %s: the lease "
		                       "(fencing token %lld) was lost: another "
		                       "replica has taken the pool over; nothing "
		                       "was written", s->path, pool,
		                       (long long)token);
	}
	return 0;
}

int gb_store_lease_want(gb_store *s, const char *name)
{
	/* renewed while the asker waits: an ask older than two seconds is
	 * from one that stopped waiting (or died) */
	static const char sql[] =
		"UPDATE leases SET want = ?2, want_ms = gb_now_ms() WHERE name = ?1"
		" AND owner != ?2";
	const gb_store__arg args[] = { GB_STORE_TEXT(name),
	                               GB_STORE_TEXT(s->owner) };
	return gb_store__exec(s, sql, args, GB_ARRAY_LEN(args),
	                      "ask for a lease", NULL);
}

int gb_store_lease_wanted(gb_store *s, gb_strv *out)
{
	static const char sql[] =
		"SELECT name FROM leases WHERE owner = ?1 AND want IS NOT NULL"
		" AND want_ms > gb_now_ms() - 2000 AND expires_ms > gb_now_ms()"
		" ORDER BY name";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, s->owner);
	while ((rc = gb_sql_step(st)) == GB_SQL_ROW)
		gb_strv_push(out, gb_sql_text(st, 0));
	if (rc == GB_SQL_ERR)
		gb_store__fail(s, "read wanted leases");
	gb_sql_reset(st);
	gb_store__unlock(s);
	return rc == GB_SQL_ERR ? -1 : 0;
}

int gb_store_lease_list(gb_store *s, gb_strv *out)
{
	gb_store__lock(s);
	for (size_t i = 0; i < s->nleases; i++)
		gb_strv_push(out, s->leases[i].name);
	gb_store__unlock(s);
	return 0;
}

int gb_store_lease_check(gb_store *s, const char *pool)
{
	int rc;
	gb_store__lock(s);
	rc = gb_store__fence(s, pool);
	gb_store__unlock(s);
	return rc;
}
