/* pgtest.c -- see pgtest.h. */
#include "pgtest.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char made[16][64];
static int nmade;
static int serial;

const char *gbt_pg_url(void)
{
	const char *u = getenv("GB_TEST_PG_URL");
	return u && *u ? u : NULL;
}

int gbt_pg_admin(const char *sql)
{
	PGconn *c = PQconnectdb(gbt_pg_url());
	PGresult *r;
	int ok;
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "postgresql: %s", PQerrorMessage(c));
		PQfinish(c);
		return -1;
	}
	r = PQexec(c, sql);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "postgresql: %s: %s", sql,
		        PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	return ok ? 0 : -1;
}

int gbt_pg_create(const char *prefix, char *url, size_t cap)
{
	const char *admin = gbt_pg_url(), *slash, *q;
	char sql[128];
	if (!admin || nmade >= (int)(sizeof(made) / sizeof(made[0])))
		return -1;
	snprintf(made[nmade], sizeof(made[nmade]), "%s_%ld_%d", prefix,
	         (long)getpid(), ++serial);
	snprintf(sql, sizeof(sql), "CREATE DATABASE %.63s", made[nmade]);
	if (gbt_pg_admin(sql) != 0)
		return -1;
	slash = strrchr(admin, '/');
	q = strchr(slash, '?');
	snprintf(url, cap, "%.*s/%s%s", (int)(slash - admin), admin,
	         made[nmade], q ? q : "");
	nmade++;
	return 0;
}

void gbt_pg_drop_all(void)
{
	char sql[128];
	for (int i = 0; i < nmade; i++) {
		snprintf(sql, sizeof(sql), "DROP DATABASE %.63s WITH (FORCE)",
		         made[i]);
		gbt_pg_admin(sql);
	}
	nmade = 0;
}
