/* store_agent.c -- instance agents: bootstrap tokens, instance
 * credentials (both by their SHA-256), reports and readiness (store.h). */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gb_store_agent_mint(gb_store *s, const char *pool, const char *name,
                        const char *boot_sha256, int64_t expires_ms)
{
	static const char sql[] =
		"INSERT INTO agents (boot_sha256, pool, name, boot_expires_ms)"
		" VALUES (?1, ?2, ?3, ?4)";
	const gb_store__arg args[] = {
		GB_STORE_TEXT(boot_sha256), GB_STORE_TEXT(pool),
		GB_STORE_TEXT(name), GB_STORE_INT(expires_ms)};
	return gb_store__exec(s, sql, args, GB_ARRAY_LEN(args),
	                      "record agent bootstrap token", NULL);
}

int gb_store_agent_register(gb_store *s, const char *name,
                            const char *boot_sha256, int64_t inst_id,
                            const char *cred_sha256, int64_t now_ms)
{
	/* one statement: two agents racing with the same token cannot both
	 * get a credential */
	static const char sql[] =
		"UPDATE agents SET cred_sha256 = ?3, instance_id = ?4,"
		" registered_ms = ?5 WHERE boot_sha256 = ?1 AND name = ?2 AND"
		" registered_ms = 0 AND revoked_ms = 0 AND boot_expires_ms > ?5";
	const gb_store__arg args[] = {
		GB_STORE_TEXT(boot_sha256), GB_STORE_TEXT(name),
		GB_STORE_TEXT(cred_sha256), GB_STORE_INT(inst_id),
		GB_STORE_INT(now_ms)};
	int64_t changed = 0;
	if (gb_store__exec(s, sql, args, GB_ARRAY_LEN(args),
	                   "exchange agent bootstrap token", &changed) != 0)
		return -1;
	return changed == 1 ? 0 : 1;
}

typedef struct {
	int64_t id;
} id_row;

static void read_id(gb_sql *st, void *row)
{
	((id_row *)row)->id = gb_sql_int(st, 0);
}

static void ids_free(void *v, size_t n)
{
	(void)n;
	free(v);
}

static const gb_store__rows id_rows = {
	sizeof(id_row), read_id, ids_free, "read agent rows"
};

int gb_store_agent_token_open(gb_store *s, const char *name,
                              const char *boot_sha256, int64_t now_ms)
{
	static const char sql[] =
		"SELECT 1 FROM agents WHERE boot_sha256 = ?1 AND name = ?2 AND"
		" registered_ms = 0 AND revoked_ms = 0 AND boot_expires_ms > ?3";
	const gb_store__arg args[] = {GB_STORE_TEXT(boot_sha256),
	                              GB_STORE_TEXT(name), GB_STORE_INT(now_ms)};
	void *v;
	size_t n;
	if (gb_store__list(s, sql, args, GB_ARRAY_LEN(args), &id_rows, &v,
	                   &n) != 0)
		return -1;
	ids_free(v, n);
	return n ? 1 : 0;
}

typedef struct {
	int64_t id;
	char *name;
	int ready;
} auth_row;

static void auth_free(void *v, size_t n)
{
	auth_row *r = v;
	for (size_t i = 0; i < n; i++)
		free(r[i].name);
	free(v);
}

static void read_auth(gb_sql *st, void *row)
{
	auth_row *r = row;
	r->id = gb_sql_int(st, 0);
	r->name = gb_sql_strdup(st, 1);
	r->ready = gb_sql_int(st, 2) > 0;
}

static const gb_store__rows auth_rows = {
	sizeof(auth_row), read_auth, auth_free, "check agent credential"
};

int gb_store_agent_auth(gb_store *s, const char *cred_sha256,
                        int64_t *inst_id, char *name, size_t cap,
                        int *ready)
{
	static const char sql[] =
		"SELECT a.instance_id, a.name, a.ready_ms FROM agents a JOIN"
		" instances i ON"
		" i.id = a.instance_id WHERE a.cred_sha256 = ?1 AND"
		" a.revoked_ms = 0 AND i.terminate_requested_ms = 0 AND i.state"
		" NOT IN ('terminating', 'terminated', 'preempted', 'failed')";
	const gb_store__arg args[] = {GB_STORE_TEXT(cred_sha256)};
	void *v;
	size_t n;
	int rc = 1;
	if (gb_store__list(s, sql, args, GB_ARRAY_LEN(args), &auth_rows, &v,
	                   &n) != 0)
		return -1;
	if (n) {
		auth_row *r = v;
		*inst_id = r->id;
		snprintf(name, cap, "%s", r->name ? r->name : "");
		if (ready)
			*ready = r->ready;
		rc = 0;
	}
	auth_free(v, n);
	return rc;
}

int gb_store_agent_report(gb_store *s, int64_t inst_id, int64_t now_ms,
                          const char *report, int ready)
{
	static const char sql[] =
		"UPDATE agents SET reported_ms = ?2, report = ?3, ready_ms ="
		" CASE WHEN ?4 = 0 THEN 0 WHEN ready_ms = 0 THEN ?2 ELSE"
		" ready_ms END WHERE instance_id = ?1 AND revoked_ms = 0";
	const gb_store__arg args[] = {
		GB_STORE_INT(inst_id), GB_STORE_INT(now_ms),
		GB_STORE_TEXT(report), GB_STORE_INT(ready ? 1 : 0)};
	return gb_store__exec(s, sql, args, GB_ARRAY_LEN(args),
	                      "keep agent report", NULL);
}

int gb_store_agent_revoke(gb_store *s, int64_t inst_id, int64_t now_ms)
{
	/* the unused tokens were minted for <pool>-<name_index> */
	static const char sql[] =
		"UPDATE agents SET revoked_ms = ?2 WHERE revoked_ms = 0 AND"
		" (instance_id = ?1 OR (registered_ms = 0 AND name = (SELECT"
		" pool || '-' || CAST(name_index AS TEXT) FROM instances WHERE"
		" id = ?1)))";
	const gb_store__arg args[] = {GB_STORE_INT(inst_id),
	                              GB_STORE_INT(now_ms)};
	return gb_store__exec(s, sql, args, GB_ARRAY_LEN(args),
	                      "revoke agent credential", NULL);
}


int gb_store_agent_ready(gb_store *s, const char *pool, int64_t **ids,
                         size_t *n)
{
	static const char sql[] =
		"SELECT instance_id FROM agents WHERE pool = ?1 AND ready_ms > 0"
		" AND revoked_ms = 0 AND instance_id IS NOT NULL";
	const gb_store__arg args[] = {GB_STORE_TEXT(pool)};
	void *v;
	if (gb_store__list(s, sql, args, GB_ARRAY_LEN(args), &id_rows, &v,
	                   n) != 0) {
		*ids = NULL;
		return -1;
	}
	/* id_row is one int64_t: the array is the ids */
	*ids = v;
	return 0;
}

typedef struct {
	char *report;
} report_row;

static void read_report(gb_sql *st, void *row)
{
	((report_row *)row)->report = gb_sql_strdup(st, 0);
}

static void reports_free(void *v, size_t n)
{
	report_row *r = v;
	for (size_t i = 0; i < n; i++)
		free(r[i].report);
	free(v);
}

static const gb_store__rows report_rows = {
	sizeof(report_row), read_report, reports_free, "read agent report"
};

int gb_store_agent_last(gb_store *s, int64_t inst_id, char **report)
{
	static const char sql[] =
		"SELECT report FROM agents WHERE instance_id = ?1 AND report IS"
		" NOT NULL ORDER BY reported_ms DESC LIMIT 1";
	const gb_store__arg args[] = {GB_STORE_INT(inst_id)};
	void *v;
	size_t n;
	*report = NULL;
	if (gb_store__list(s, sql, args, GB_ARRAY_LEN(args), &report_rows, &v,
	                   &n) != 0)
		return -1;
	if (n) {
		*report = ((report_row *)v)->report;
		((report_row *)v)->report = NULL;
	}
	reports_free(v, n);
	return n ? 0 : 1;
}
