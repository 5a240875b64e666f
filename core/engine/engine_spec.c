/* engine_spec.c -- a stored pool's spec, parsed once per (name, text).
 *
 * A stored spec never changes (a new apply stores new text), and the
 * reconciler needs every active pool's spec on every pass: loading one
 * (JSON, validation, defaults) cost more than the rest of a pool's
 * converge.  The parsed spec is remembered by its name and text and
 * copied out.  A spec that does not load is not remembered (what it
 * lacks may be fixed meanwhile) and is parsed again on each call.
 * Bounded: past SPEC_MEMO_MAX entries the memo starts over. */
#include "engine_int.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_MEMO_MAX 4096

typedef struct spec_ent {
	uint64_t hash;
	char *name, *json;     /* NULL: free slot */
	gb_pool_spec *spec;
} spec_ent;

static struct {
	pthread_mutex_t mu;
	spec_ent *slots;
	size_t cap, n;
} memo = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL; /* FNV-1a */
	return h;
}

static uint64_t key_of(const gb_pool_row *row)
{
	return fnv(fnv(1469598103934665603ULL, row->name) ^ 0x1f,
	           row->spec_json);
}

static void ent_free(spec_ent *e)
{
	free(e->name);
	free(e->json);
	gb_pool_spec_free(e->spec);
	free(e->spec);
}

/* The slot of row, or the free slot where it would go; memo.mu held and
 * memo.cap > 0. */
static spec_ent *slot_of(const gb_pool_row *row, uint64_t h)
{
	size_t i;
	for (i = h & (memo.cap - 1); memo.slots[i].json;
	     i = (i + 1) & (memo.cap - 1))
		if (memo.slots[i].hash == h &&
		    strcmp(memo.slots[i].json, row->spec_json) == 0 &&
		    strcmp(memo.slots[i].name, row->name) == 0)
			break;
	return &memo.slots[i];
}

static void grow(void)
{
	size_t ncap = memo.cap ? memo.cap * 2 : 256;
	spec_ent *ns = gb_xcalloc(ncap, sizeof(*ns));
	for (size_t k = 0; k < memo.cap; k++) {
		spec_ent *o = &memo.slots[k];
		size_t j;
		if (!o->json)
			continue;
		for (j = o->hash & (ncap - 1); ns[j].json; j = (j + 1) & (ncap - 1))
			;
		ns[j] = *o;
	}
	free(memo.slots);
	memo.slots = ns;
	memo.cap = ncap;
}

static void clear(void)
{
	for (size_t i = 0; i < memo.cap; i++)
		if (memo.slots[i].json)
			ent_free(&memo.slots[i]);
	free(memo.slots);
	memo.slots = NULL;
	memo.cap = memo.n = 0;
}

/* Parses the stored spec (no memo). */
static int load(const gb_pool_row *row, gb_pool_spec *out, char *err,
                size_t cap)
{
	gb_spec_set set;
	gb_diags d = GB_DIAGS_INIT;
	gb_spec_opts so;
	memset(&so, 0, sizeof(so));
	memset(out, 0, sizeof(*out));
	if (gb_spec_load_json(row->name, row->spec_json, strlen(row->spec_json),
	                      &so, &set, &d) != 0 || set.n != 1) {
		char *m = gb_diags_str(&d);
		snprintf(err, cap, "stored spec of pool %s no longer loads: %s",
		         row->name, m);
		free(m);
		gb_diags_free(&d);
		if (set.n)
			gb_spec_set_free(&set);
		return -1;
	}
	gb_diags_free(&d);
	gb_pool_spec_copy(out, &set.pools[0]);
	gb_spec_set_free(&set);
	return 0;
}

/* Looks row up; on a hit copies the spec into out (when out) and its
 * purpose into *purpose (when purpose).  1 found, 0 not remembered. */
static int lookup(const gb_pool_row *row, uint64_t h, gb_pool_spec *out,
                  const char **purpose)
{
	int found = 0;
	pthread_mutex_lock(&memo.mu);
	if (memo.cap) {
		spec_ent *e = slot_of(row, h);
		if (e->json) {
			if (out)
				gb_pool_spec_copy(out, e->spec);
			if (purpose)
				*purpose = gb_purpose_name(e->spec->purpose);
			found = 1;
		}
	}
	pthread_mutex_unlock(&memo.mu);
	return found;
}

static void remember(const gb_pool_row *row, uint64_t h,
                     const gb_pool_spec *spec)
{
	spec_ent *e;
	pthread_mutex_lock(&memo.mu);
	if (memo.n >= SPEC_MEMO_MAX)
		clear();
	if ((memo.n + 1) * 2 > memo.cap)
		grow();
	e = slot_of(row, h);
	if (!e->json) { /* another thread may have added it meanwhile */
		e->hash = h;
		e->name = gb_xstrdup(row->name);
		e->json = gb_xstrdup(row->spec_json);
		e->spec = gb_xcalloc(1, sizeof(*e->spec));
		gb_pool_spec_copy(e->spec, spec);
		memo.n++;
	}
	pthread_mutex_unlock(&memo.mu);
}

int gb_engine__spec(const gb_pool_row *row, gb_pool_spec *out, char *err,
                    size_t cap)
{
	uint64_t h = key_of(row);
	if (lookup(row, h, out, NULL))
		return 0;
	if (load(row, out, err, cap) != 0)
		return -1;
	remember(row, h, out);
	return 0;
}

const char *gb_engine__spec_purpose(const gb_pool_row *row)
{
	const char *purpose = "unknown";
	gb_pool_spec spec;
	char err[1024];
	if (lookup(row, key_of(row), NULL, &purpose))
		return purpose;
	if (gb_engine__spec(row, &spec, err, sizeof(err)) != 0)
		return "unknown";
	purpose = gb_purpose_name(spec.purpose);
	gb_pool_spec_free(&spec);
	return purpose;
}
