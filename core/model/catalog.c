/* catalog.c -- offers from every driver, with interned strings. */
#include "catalog.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct intern_set {
	char **slots;
	size_t cap;  /* power of two */
	size_t n;
} intern_set;

struct gb_catalog {
	gb_coffer *offers;
	size_t n, cap;
	intern_set strings;
	/* gb_catalog_hash's cache: plans on several threads (API requests,
	 * job workers, the reconciler) share one catalog */
	pthread_mutex_t hash_mu;
	char hash[65];
	int hash_valid;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static void intern_grow(intern_set *set)
{
	size_t ncap = set->cap ? set->cap * 2 : 256;
	char **ns = gb_xcalloc(ncap, sizeof(char *));
	for (size_t i = 0; i < set->cap; i++) {
		char *s = set->slots[i];
		size_t j;
		if (!s)
			continue;
		j = hash_str(s) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = s;
	}
	free(set->slots);
	set->slots = ns;
	set->cap = ncap;
}

static const char *intern(intern_set *set, const char *s)
{
	size_t j;
	if (!s)
		return NULL;
	if ((set->n + 1) * 2 > set->cap)
		intern_grow(set);
	j = hash_str(s) & (set->cap - 1);
	while (set->slots[j]) {
		if (strcmp(set->slots[j], s) == 0)
			return set->slots[j];
		j = (j + 1) & (set->cap - 1);
	}
	set->slots[j] = gb_xstrdup(s);
	set->n++;
	return set->slots[j];
}

gb_catalog *gb_catalog_new(void)
{
	gb_catalog *c = gb_xcalloc(1, sizeof(gb_catalog));
	pthread_mutex_init(&c->hash_mu, NULL);
	return c;
}

void gb_catalog_free(gb_catalog *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->strings.cap; i++)
		free(c->strings.slots[i]);
	free(c->strings.slots);
	free(c->offers);
	pthread_mutex_destroy(&c->hash_mu);
	free(c);
}

const char *gb_catalog_lookup(const gb_catalog *c, const char *s)
{
	const intern_set *set = &c->strings;
	size_t j;
	if (!s || !set->cap)
		return NULL;
	j = hash_str(s) & (set->cap - 1);
	while (set->slots[j]) {
		if (strcmp(set->slots[j], s) == 0)
			return set->slots[j];
		j = (j + 1) & (set->cap - 1);
	}
	return NULL;
}

const char *gb_catalog_intern(gb_catalog *c, const char *s)
{
	return intern(&c->strings, s);
}

const gb_coffer *gb_catalog_add(gb_catalog *c, const char *cloud,
                                const gb_offer *o)
{
	gb_coffer *d;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 1024;
		c->offers = gb_xrealloc(c->offers, c->cap * sizeof(*c->offers));
	}
	d = &c->offers[c->n];
	memset(d, 0, sizeof(*d));
	d->id = (uint32_t)c->n;
	d->cloud = intern(&c->strings, cloud);
	d->region = intern(&c->strings, o->region ? o->region : "");
	d->zone = intern(&c->strings, o->zone ? o->zone : "");
	d->instance_type = intern(&c->strings, o->instance_type);
	d->gpu_model = intern(&c->strings, o->gpu_model);
	d->gpu_count = o->gpu_count;
	d->gpu_memory_gb = o->gpu_memory_gb;
	d->vcpus = o->vcpus;
	d->ram_gb = o->ram_gb;
	d->capacity = o->capacity;
	d->price = o->price_per_hour;
	d->source = intern(&c->strings, o->source ? o->source : "");
	d->fetched_at = o->fetched_at;
	d->bench_json = intern(&c->strings, o->bench_json);
	d->tags = intern(&c->strings, o->tags);
	d->rinfo = gb_region_find(cloud, d->region);
	c->n++;
	c->hash_valid = 0;
	return d;
}

size_t gb_catalog_count(const gb_catalog *c)
{
	return c->n;
}

const gb_coffer *gb_catalog_at(const gb_catalog *c, size_t i)
{
	return i < c->n ? &c->offers[i] : NULL;
}

/* Order-independent: XOR-fold of per-offer digests would be weak, so sum
 * the 64-bit prefixes of each offer's SHA-256 into four lanes and hash the
 * lanes.  Same offers in any order -> same hash. */
void gb_catalog_hash(const gb_catalog *cc, char out[65])
{
	gb_catalog *c = (gb_catalog *)(uintptr_t)cc; /* cache: logically const */
	uint64_t lanes[4] = {0, 0, 0, 0};
	char lanebuf[4 * 17 + 1];
	pthread_mutex_lock(&c->hash_mu);
	if (c->hash_valid) {
		memcpy(out, c->hash, 65);
		pthread_mutex_unlock(&c->hash_mu);
		return;
	}
	for (size_t i = 0; i < c->n; i++) {
		const gb_coffer *o = &c->offers[i];
		char line[512], hex[65];
		int n = snprintf(line, sizeof(line), "%s|%s|%s|%s|%s|%d|%d|%d|%d|%.6f",
		                 o->cloud, o->region, o->zone, o->instance_type,
		                 o->gpu_model, o->gpu_count, o->gpu_memory_gb,
		                 o->vcpus, (int)o->capacity, o->price);
		gb_sha256_hex(line, n > 0 ? (size_t)n : 0, hex);
		for (int l = 0; l < 4; l++) {
			char part[17];
			memcpy(part, hex + 16 * l, 16);
			part[16] = '\0';
			lanes[l] += strtoull(part, NULL, 16);
		}
	}
	for (int l = 0; l < 4; l++)
		snprintf(lanebuf + 17 * l, 18, "%016llx.",
		         (unsigned long long)lanes[l]);
	gb_sha256_hex(lanebuf, strlen(lanebuf), out);
	memcpy(c->hash, out, 65);
	c->hash_valid = 1;
	pthread_mutex_unlock(&c->hash_mu);
}
