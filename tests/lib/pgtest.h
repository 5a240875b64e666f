/* pgtest.h -- fresh databases on the test PostgreSQL server for the C
 * unit tests (tests/run.sh starts one: tests/lib/pg.sh, and names it in
 * GB_TEST_PG_URL, the password in PGPASSWORD).  Not thread-safe. */
#ifndef GB_PGTEST_H
#define GB_PGTEST_H

#include <stddef.h>

/* The server's admin URL, or NULL when the tests run without one. */
const char *gbt_pg_url(void);
/* Runs one statement as the admin; 0, or -1 with why printed. */
int gbt_pg_admin(const char *sql);
/* Creates a database named PREFIX_<pid>_<n> and writes its URL (the
 * admin URL's options kept) to url; 0 or -1. */
int gbt_pg_create(const char *prefix, char *url, size_t cap);
/* Drops every database gbt_pg_create made (teardown). */
void gbt_pg_drop_all(void);

#endif
