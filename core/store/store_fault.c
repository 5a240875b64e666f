/* store_fault.c -- store fault injection for tests, as SQLite's
 * test_vfs.c does for its VFS: the Nth statement this process runs fails
 * with a chosen error, on either backend (store.c calls gb_store__fault
 * from the one place every statement passes through).  The switch is
 * documented in HACKING.md ("Store fault injection"); it is a test
 * switch, not a user setting, and says so on stderr when armed. */
#include "store_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fault_kind {
	const char *name;
	const char *msg;
} fault_kind;

static const fault_kind kinds[] = {
	{"ioerr", "disk I/O error (injected by GB_STORE_FAULT)"},
	{"full", "database or disk is full (injected by GB_STORE_FAULT)"},
	{"busy", "database is locked (injected by GB_STORE_FAULT)"},
	{"lost", "server closed the connection unexpectedly (injected by "
	         "GB_STORE_FAULT)"},
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long long fault_at;    /* N; 0 = never */
static char *fault_match;     /* SUBSTRING or NULL */
static const char *fault_msg; /* the failure's message */
static char *count_file;      /* GB_STORE_FAULT_COUNT or NULL */
static long long counted;     /* runs counted so far (under mu) */
static _Atomic int armed;     /* anything to count: the fast way out */

static void write_count(void)
{
	FILE *f;
	long long n;
	pthread_mutex_lock(&mu);
	n = counted;
	pthread_mutex_unlock(&mu);
	if (!(f = fopen(count_file, "w")))
		return;
	fprintf(f, "%lld\n", n);
	fclose(f);
}

static void bad_switch(const char *v, const char *why)
{
	/* a test switch set wrongly: fail loudly rather than test nothing */
	fprintf(stderr, "gpubroker: GB_STORE_FAULT=%s: %s (expected "
	        "N[:SUBSTRING[:ioerr|full|busy|lost]])\n", v, why);
	exit(2);
}

static void parse(void)
{
	const char *v = getenv("GB_STORE_FAULT");
	const char *c = getenv("GB_STORE_FAULT_COUNT");
	if (c && *c) {
		count_file = strdup(c);
		if (count_file)
			atexit(write_count);
	}
	if (v && *v) {
		char *copy = gb_xstrdup(v), *p = strchr(copy, ':'), *k = NULL;
		char *end;
		if (p) {
			*p++ = '\0';
			if ((k = strchr(p, ':')))
				*k++ = '\0';
		}
		fault_at = strtoll(copy, &end, 10);
		if (end == copy || *end || fault_at < 0)
			bad_switch(v, "N is not a whole number >= 0");
		fault_match = p && *p ? gb_xstrdup(p) : NULL;
		fault_msg = kinds[0].msg;
		if (k && *k) {
			size_t i;
			for (i = 0; i < GB_ARRAY_LEN(kinds); i++)
				if (strcmp(kinds[i].name, k) == 0)
					break;
			if (i == GB_ARRAY_LEN(kinds))
				bad_switch(v, "unknown error kind");
			fault_msg = kinds[i].msg;
		}
		free(copy);
		if (fault_at > 0)
			fprintf(stderr, "gpubroker: GB_STORE_FAULT=%s: store fault "
			        "injection is on (a test switch)\n", v);
	}
	/* an unset switch keeps the matching off entirely */
	if (!count_file && !fault_at) {
		free(fault_match);
		fault_match = NULL;
	}
	armed = count_file || fault_at;
}

void gb_store__fault_init(void)
{
	pthread_once(&once, parse);
}

void gb_store__fault_set(long long n, const char *match, const char *kind)
{
	gb_store__fault_init();
	pthread_mutex_lock(&mu);
	free(fault_match);
	fault_match = match ? gb_xstrdup(match) : NULL;
	fault_at = n;
	fault_msg = kinds[0].msg;
	for (size_t i = 0; kind && i < GB_ARRAY_LEN(kinds); i++)
		if (strcmp(kinds[i].name, kind) == 0)
			fault_msg = kinds[i].msg;
	counted = 0;
	armed = 1;
	pthread_mutex_unlock(&mu);
}

long long gb_store__fault_count(void)
{
	long long n;
	pthread_mutex_lock(&mu);
	n = counted;
	pthread_mutex_unlock(&mu);
	return n;
}

const char *gb_store__fault(const char *sql)
{
	const char *hit = NULL;
	if (!armed)
		return NULL;
	pthread_mutex_lock(&mu);
	if ((fault_at || count_file || fault_match) &&
	    (!fault_match || (sql && strstr(sql, fault_match))) &&
	    ++counted == fault_at) {
		hit = fault_msg;
		/* what failed, for whoever reads the test's log */
		fprintf(stderr, "gpubroker: GB_STORE_FAULT: statement %lld "
		        "fails: %.100s\n", counted, sql ? sql : "(not kept)");
	}
	pthread_mutex_unlock(&mu);
	return hit;
}
