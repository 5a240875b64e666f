/*
 * policy_cache.c -- one compiled policy set per process for the same
 * entries, search path, limits and file contents (policy.h, Caching).
 *
 * A get resolves every entry and hashes the file it names (a read and a
 * sha256, no Lua); a cached set with the same identity and hashes is
 * handed out with one more reference, else the set is compiled and
 * replaces the entry of that identity.  The cache holds one reference per
 * entry; plans hold theirs, so replacing or clearing never frees a set
 * in use.  Compiles are serialised: threads missing the same set at once
 * compile it once.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "policy_int.h"

typedef struct entry {
	char *ident;   /* limits, entries, search path (length-prefixed) */
	char *hashes;  /* "LEN:path=sha256;" per resolved entry */
	gb_policy_set *ps;
	unsigned long long used;
} entry;

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
/* held while compiling a missing set; taken before cache_mu */
static pthread_mutex_t build_mu = PTHREAD_MUTEX_INITIALIZER;
static entry cache[GB_POLICY_CACHE_MAX];
static size_t ncache;
static unsigned long long tick;

static void put_list(gb_buf *b, const char *tag, const gb_strv *v)
{
	gb_buf_printf(b, "%s%zu", tag, v ? v->n : 0);
	for (size_t i = 0; v && i < v->n; i++)
		gb_buf_printf(b, ",%zu:%s", strlen(v->v[i]), v->v[i]);
}

static void put_hash(gb_buf *b, const char *path, const char *hash)
{
	gb_buf_printf(b, "%zu:%s=%s;", strlen(path), path, hash);
}

/* Resolves and hashes every entry of one list; -1 on any problem (the
 * uncached build then reports it as it always has). */
static int hash_list(const gb_strv *v, const gb_strv *dirs, gb_buf *out)
{
	for (size_t i = 0; v && i < v->n; i++) {
		char err[8], hex[65], *src = NULL;
		size_t len;
		char *path = gb_policy_resolve(v->v[i], dirs, err, sizeof(err));
		if (!path)
			return -1;
		if (gb_read_file(path, GB_POLICY_MAX_SOURCE, &src, &len) != 0) {
			free(path);
			return -1;
		}
		gb_sha256_hex(src, len, hex);
		put_hash(out, path, hex);
		free(src);
		free(path);
	}
	return 0;
}

/* Does every policy of ps carry the content hashed into hashes?  (A file
 * changed between the hashing and the compile: not cached.) */
static int matches(gb_policy_set *ps, const char *hashes)
{
	for (size_t i = 0; i < gb_policy_count(ps); i++) {
		gb_buf b = GB_BUF_INIT;
		int found;
		put_hash(&b, gb_policy_path(ps, i), gb_policy_hash(ps, i));
		found = strstr(hashes, gb_buf_str(&b)) != NULL;
		gb_buf_free(&b);
		if (!found)
			return 0;
	}
	return 1;
}

static void entry_drop(entry *en)
{
	free(en->ident);
	free(en->hashes);
	gb_policy_set_free(en->ps);
	memset(en, 0, sizeof(*en));
}

/* Under cache_mu: the entry of ident, or NULL. */
static entry *find(const char *ident)
{
	for (size_t i = 0; i < ncache; i++)
		if (strcmp(cache[i].ident, ident) == 0)
			return &cache[i];
	return NULL;
}

/* The cached set for ident and hashes, with one more reference, into
 * *out: 1, else 0. */
static int lookup(const char *ident, const char *hashes,
                  gb_policy_set **out)
{
	entry *en;
	pthread_mutex_lock(&cache_mu);
	en = find(ident);
	if (en && strcmp(en->hashes, hashes) == 0 &&
	    !gb_policy_set_retired(en->ps)) {
		gb_policy_set_ref(en->ps);
		en->used = ++tick;
		*out = en->ps;
	}
	pthread_mutex_unlock(&cache_mu);
	return *out != NULL;
}

/* Under cache_mu: keep ps (one reference taken) as ident's entry. */
static void store(char *ident, char *hashes, gb_policy_set *ps)
{
	entry *en = find(ident);
	if (!en && ncache < GB_POLICY_CACHE_MAX) {
		en = &cache[ncache++];
	} else if (!en) {
		en = &cache[0];
		for (size_t i = 1; i < ncache; i++)
			if (cache[i].used < en->used)
				en = &cache[i];
	}
	if (en->ps)
		entry_drop(en);
	gb_policy_set_ref(ps);
	en->ident = ident;
	en->hashes = hashes;
	en->ps = ps;
	en->used = ++tick;
}

int gb_policy_set_get(gb_policy_set **out, const gb_strv *org,
                      const gb_strv *pool, const gb_strv *search_path,
                      const gb_policy_limits *lim, char *err, size_t errcap)
{
	gb_buf ident = GB_BUF_INIT, hashes = GB_BUF_INIT;
	gb_policy_limits none;
	int rc;

	memset(&none, 0, sizeof(none));
	if (!lim)
		lim = &none;
	*out = NULL;
	gb_buf_printf(&ident, "lim:%llu/%zu/%u;",
	              (unsigned long long)lim->instructions, lim->memory_bytes,
	              lim->time_ms);
	put_list(&ident, "org", org);
	put_list(&ident, ";pool", pool);
	put_list(&ident, ";path", search_path);
	if (hash_list(org, search_path, &hashes) != 0 ||
	    hash_list(pool, search_path, &hashes) != 0) {
		gb_buf_free(&ident);
		gb_buf_free(&hashes);
		return gb_policy_set_new(out, org, pool, search_path, lim, err,
		                         errcap);
	}
	if (lookup(gb_buf_str(&ident), gb_buf_str(&hashes), out)) {
		gb_buf_free(&ident);
		gb_buf_free(&hashes);
		return 0;
	}
	/* a miss: one compile at a time, so threads missing together wait
	 * for the first instead of compiling the same set again */
	pthread_mutex_lock(&build_mu);
	if (lookup(gb_buf_str(&ident), gb_buf_str(&hashes), out)) {
		pthread_mutex_unlock(&build_mu);
		gb_buf_free(&ident);
		gb_buf_free(&hashes);
		return 0;
	}
	rc = gb_policy_set_new(out, org, pool, search_path, lim, err, errcap);
	if (rc == 0 && matches(*out, gb_buf_str(&hashes))) {
		pthread_mutex_lock(&cache_mu);
		store(gb_buf_take(&ident), gb_buf_take(&hashes), *out);
		pthread_mutex_unlock(&cache_mu);
	}
	pthread_mutex_unlock(&build_mu);
	gb_buf_free(&ident);
	gb_buf_free(&hashes);
	return rc;
}

void gb_policy_cache_clear(void)
{
	pthread_mutex_lock(&cache_mu);
	for (size_t i = 0; i < ncache; i++)
		entry_drop(&cache[i]);
	ncache = 0;
	pthread_mutex_unlock(&cache_mu);
}
