/* strset.c -- interned strings: open addressing over owned copies
 * (gb_strset in util.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static void grow(gb_strset *set)
{
	size_t ncap = set->cap ? set->cap * 2 : 64;
	char **ns = gb_xcalloc(ncap, sizeof(*ns));
	for (size_t i = 0; i < set->cap; i++) {
		size_t j;
		if (!set->slots[i])
			continue;
		j = str_hash(set->slots[i]) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = set->slots[i];
	}
	free(set->slots);
	set->slots = ns;
	set->cap = ncap;
}

const char *gb_strset_find(const gb_strset *set, const char *s)
{
	size_t j;
	if (!s || !set->cap)
		return NULL;
	j = str_hash(s) & (set->cap - 1);
	while (set->slots[j]) {
		if (strcmp(set->slots[j], s) == 0)
			return set->slots[j];
		j = (j + 1) & (set->cap - 1);
	}
	return NULL;
}

const char *gb_strset_intern(gb_strset *set, const char *s)
{
	size_t j;
	if (!s)
		return NULL;
	if ((set->n + 1) * 2 > set->cap)
		grow(set);
	j = str_hash(s) & (set->cap - 1);
	while (set->slots[j]) {
		if (strcmp(set->slots[j], s) == 0)
			return set->slots[j];
		j = (j + 1) & (set->cap - 1);
	}
	set->slots[j] = gb_xstrdup(s);
	set->n++;
	return set->slots[j];
}

void gb_strset_free(gb_strset *set)
{
	for (size_t i = 0; i < set->cap; i++)
		free(set->slots[i]);
	free(set->slots);
	memset(set, 0, sizeof(*set));
}
