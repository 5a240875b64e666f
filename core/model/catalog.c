/* catalog.c -- offers from every driver, with interned strings. */
#include "catalog.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"


struct gb_catalog {
	gb_coffer *offers;
	size_t n, cap;
	gb_strset strings;
	/* gb_catalog_hash's cache: plans on several threads (API requests,
	 * job workers, the reconciler) share one catalog */
	pthread_mutex_t hash_mu;
	char hash[65];
	int hash_valid;
};

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
	gb_strset_free(&c->strings);
	free(c->offers);
	pthread_mutex_destroy(&c->hash_mu);
	free(c);
}

const char *gb_catalog_lookup(const gb_catalog *c, const char *s)
{
	return gb_strset_find(&c->strings, s);
}

const char *gb_catalog_intern(gb_catalog *c, const char *s)
{
	return gb_strset_intern(&c->strings, s);
}

void gb_catalog_mark_owned(gb_catalog *c, const char *cloud)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->offers[i].cloud, cloud) == 0)
			c->offers[i].owned = 1;
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
	d->cloud = gb_strset_intern(&c->strings, cloud);
	d->region = gb_strset_intern(&c->strings, o->region ? o->region : "");
	d->zone = gb_strset_intern(&c->strings, o->zone ? o->zone : "");
	d->instance_type = gb_strset_intern(&c->strings, o->instance_type);
	d->gpu_model = gb_strset_intern(&c->strings, o->gpu_model);
	d->gpu_count = o->gpu_count;
	d->gpu_memory_gb = o->gpu_memory_gb;
	d->vcpus = o->vcpus;
	d->ram_gb = o->ram_gb;
	d->capacity = o->capacity;
	d->price = o->price_per_hour;
	d->source = gb_strset_intern(&c->strings, o->source ? o->source : "");
	d->fetched_at = o->fetched_at;
	d->bench_json = gb_strset_intern(&c->strings, o->bench_json);
	d->tags = gb_strset_intern(&c->strings, o->tags);
	d->rinfo = gb_region_find(cloud, d->region);
	d->available = o->available > 0 ? o->available : 0;
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
		/* what can be had, when known: the plan depends on it */
		if (o->available > 0 && n > 0 && (size_t)n < sizeof(line))
			n += snprintf(line + n, sizeof(line) - (size_t)n,
			              "|available=%d", o->available);
		if (n >= (int)sizeof(line))
			n = (int)sizeof(line) - 1; /* what snprintf kept */
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
