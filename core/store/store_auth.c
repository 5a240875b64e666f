/* store_auth.c -- broker tokens exchanged for CI ID tokens (by their
 * hash), and the ID tokens already exchanged (replay), both until they
 * expire (store.h). */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

int gb_store_xtoken_add(gb_store *s, const char *sha256,
                        const gb_xtoken_row *row)
{
	static const char sql[] =
		"INSERT INTO oidc_tokens (sha256, actor, role, team, labels,"
		" created_ms, expires_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
	const gb_store__arg args[] = {
		GB_STORE_TEXT(sha256), GB_STORE_TEXT(row->actor),
		GB_STORE_TEXT(row->role), GB_STORE_TEXT(row->team),
		GB_STORE_TEXT(row->labels), GB_STORE_INT(row->created_ms),
		GB_STORE_INT(row->expires_ms)};
	return gb_store__exec(s, sql, args, GB_ARRAY_LEN(args),
	                      "record exchanged token", NULL);
}

void gb_xtoken_row_free(gb_xtoken_row *r)
{
	free(r->actor);
	free(r->role);
	free(r->team);
	free(r->labels);
	memset(r, 0, sizeof(*r));
}

static void xtokens_free(void *v, size_t n)
{
	gb_xtoken_row *r = v;
	for (size_t i = 0; i < n; i++)
		gb_xtoken_row_free(&r[i]);
	free(v);
}

static void read_xtoken(gb_sql *st, void *row)
{
	gb_xtoken_row *r = row;
	r->actor = gb_sql_strdup(st, 0);
	r->role = gb_sql_strdup(st, 1);
	r->team = gb_sql_strdup(st, 2);
	r->labels = gb_sql_strdup(st, 3);
	r->created_ms = gb_sql_int(st, 4);
	r->expires_ms = gb_sql_int(st, 5);
}

static const gb_store__rows xtoken_rows = {
	sizeof(gb_xtoken_row), read_xtoken, xtokens_free, "read exchanged token"
};

int gb_store_xtoken_get(gb_store *s, const char *sha256, int64_t now_ms,
                        gb_xtoken_row *out)
{
	static const char sql[] =
		"SELECT actor, role, team, labels, created_ms, expires_ms"
		" FROM oidc_tokens WHERE sha256 = ?1 AND expires_ms > ?2";
	const gb_store__arg args[] = {GB_STORE_TEXT(sha256),
	                              GB_STORE_INT(now_ms)};
	void *v;
	size_t n;
	memset(out, 0, sizeof(*out));
	if (gb_store__list(s, sql, args, GB_ARRAY_LEN(args), &xtoken_rows, &v,
	                   &n) != 0)
		return -1;
	if (!n)
		return 1;
	*out = *(gb_xtoken_row *)v;
	free(v); /* its one row's strings now belong to *out */
	return 0;
}

int gb_store_oidc_seen(gb_store *s, const char *key, int64_t expires_ms,
                       int64_t now_ms)
{
	static const char prune[] = "DELETE FROM oidc_seen WHERE expires_ms <= ?1";
	static const char add[] =
		"INSERT INTO oidc_seen (key, expires_ms) VALUES (?1, ?2)"
		" ON CONFLICT (key) DO NOTHING";
	const gb_store__arg pa[] = {GB_STORE_INT(now_ms)};
	const gb_store__arg aa[] = {GB_STORE_TEXT(key), GB_STORE_INT(expires_ms)};
	int64_t added = 0;
	if (gb_store_begin(s) != 0)
		return -1;
	if (gb_store__exec(s, prune, pa, 1, "forget expired ID tokens",
	                   NULL) != 0 ||
	    gb_store__exec(s, add, aa, 2, "remember an ID token", &added) != 0) {
		gb_store_rollback(s);
		return -1;
	}
	if (gb_store_commit(s) != 0)
		return -1;
	return added ? 0 : 1;
}

int gb_store_xtoken_prune(gb_store *s, int64_t now_ms, int64_t *n)
{
	static const char sql[] = "DELETE FROM oidc_tokens WHERE expires_ms <= ?1";
	const gb_store__arg args[] = {GB_STORE_INT(now_ms)};
	int64_t changes = 0;
	int rc = gb_store__exec(s, sql, args, 1, "delete expired exchanged tokens",
	                        &changes);
	if (n)
		*n = changes;
	return rc;
}
