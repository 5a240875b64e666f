/*
 * map.c -- a string-keyed open-addressing hash map (linear probing with
 * tombstones) and string-keyed counters built on it.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static char tomb_mark;
#define SIM_MAP_TOMB (&tomb_mark)

static size_t hash_str(const char *s)
{
	size_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

static size_t find_slot(const sim_map *m, const char *key)
{
	size_t i = hash_str(key) & (m->cap - 1);
	for (;;) {
		const char *k = m->keys[i];
		if (!k)
			return (size_t)-1;
		if (k != SIM_MAP_TOMB && strcmp(k, key) == 0)
			return i;
		i = (i + 1) & (m->cap - 1);
	}
}

static void rehash(sim_map *m, size_t ncap)
{
	char **ok = m->keys;
	void **ov = m->vals;
	size_t ocap = m->cap;
	m->keys = gb_xcalloc(ncap, sizeof(char *));
	m->vals = gb_xcalloc(ncap, sizeof(void *));
	m->cap = ncap;
	m->tomb = 0;
	for (size_t i = 0; i < ocap; i++) {
		if (ok[i] && ok[i] != SIM_MAP_TOMB) {
			size_t j = hash_str(ok[i]) & (ncap - 1);
			while (m->keys[j])
				j = (j + 1) & (ncap - 1);
			m->keys[j] = ok[i];
			m->vals[j] = ov[i];
		}
	}
	free(ok);
	free(ov);
}

void *sim_map_get(const sim_map *m, const char *key)
{
	size_t i;
	if (!m->cap)
		return NULL;
	i = find_slot(m, key);
	return i == (size_t)-1 ? NULL : m->vals[i];
}

void *sim_map_put(sim_map *m, const char *key, void *val)
{
	size_t i;
	if (!m->cap)
		rehash(m, 16);
	i = find_slot(m, key);
	if (i != (size_t)-1) {
		void *old = m->vals[i];
		m->vals[i] = val;
		return old;
	}
	if ((m->n + m->tomb + 1) * 10 > m->cap * 7)
		rehash(m, m->n * 2 + 1 > m->cap / 2 ? m->cap * 2 : m->cap);
	i = hash_str(key) & (m->cap - 1);
	while (m->keys[i] && m->keys[i] != SIM_MAP_TOMB)
		i = (i + 1) & (m->cap - 1);
	if (m->keys[i] == SIM_MAP_TOMB)
		m->tomb--;
	m->keys[i] = gb_xstrdup(key);
	m->vals[i] = val;
	m->n++;
	return NULL;
}

void *sim_map_del(sim_map *m, const char *key)
{
	size_t i;
	void *v;
	if (!m->cap)
		return NULL;
	i = find_slot(m, key);
	if (i == (size_t)-1)
		return NULL;
	v = m->vals[i];
	free(m->keys[i]);
	m->keys[i] = SIM_MAP_TOMB;
	m->vals[i] = NULL;
	m->n--;
	m->tomb++;
	return v;
}

void *sim_map_slot(const sim_map *m, size_t i, const char **key)
{
	if (i >= m->cap || !m->keys[i] || m->keys[i] == SIM_MAP_TOMB)
		return NULL;
	if (key)
		*key = m->keys[i];
	return m->vals[i];
}

void sim_map_free(sim_map *m, void (*free_val)(void *))
{
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i] && m->keys[i] != SIM_MAP_TOMB) {
			if (free_val)
				free_val(m->vals[i]);
			free(m->keys[i]);
		}
	}
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

int64_t sim_count_get(const sim_map *m, const char *key)
{
	int64_t *v = sim_map_get(m, key);
	return v ? *v : 0;
}

void sim_count_add(sim_map *m, const char *key, int64_t delta)
{
	int64_t *v = sim_map_get(m, key);
	if (!v) {
		if (delta == 0)
			return;
		v = gb_xcalloc(1, sizeof(*v));
		sim_map_put(m, key, v);
	}
	*v += delta;
	if (*v == 0) /* keeps the map bounded by what is in use */
		free(sim_map_del(m, key));
}
