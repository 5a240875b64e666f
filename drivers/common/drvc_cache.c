/* drvc_cache.c -- bounded string map on a jansson object (see header). */
#include "drvc_cache.h"

#include <stdlib.h>
#include <string.h>

#include "drvc_mem.h"

int drvc_cache_init(drvc_cache *c, size_t cap)
{
	memset(c, 0, sizeof(*c));
	if (pthread_mutex_init(&c->mu, NULL) != 0)
		return -1;
	c->map = json_object();
	if (!c->map) {
		pthread_mutex_destroy(&c->mu);
		return -1;
	}
	c->cap = cap ? cap : 1;
	return 0;
}

void drvc_cache_free(drvc_cache *c)
{
	if (!c->map)
		return;
	json_decref(c->map);
	c->map = NULL;
	pthread_mutex_destroy(&c->mu);
}

void drvc_cache_put(drvc_cache *c, const char *key, const char *const *vals,
                    size_t n)
{
	json_t *a = json_array();
	if (!a)
		abort();
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(a, vals[i] ? json_string(vals[i])
		                                     : json_null()) != 0)
			abort();
	pthread_mutex_lock(&c->mu);
	if (!json_object_get(c->map, key) && json_object_size(c->map) >= c->cap) {
		/* jansson iterates in insertion order: the first is the oldest */
		const char *old = json_object_iter_key(json_object_iter(c->map));
		if (old)
			json_object_del(c->map, old);
	}
	/* a key that is not UTF-8 is simply not cached (set_new frees a) */
	(void)json_object_set_new(c->map, key, a);
	pthread_mutex_unlock(&c->mu);
}

int drvc_cache_get(drvc_cache *c, const char *key, char **vals, size_t n)
{
	json_t *a;
	int found = 0;
	pthread_mutex_lock(&c->mu);
	a = json_object_get(c->map, key);
	if (json_is_array(a)) {
		for (size_t i = 0; i < n; i++) {
			const char *s = json_string_value(json_array_get(a, i));
			vals[i] = s ? drvc_xstrdup(s) : NULL;
		}
		found = 1;
	}
	pthread_mutex_unlock(&c->mu);
	return found;
}

void drvc_cache_del(drvc_cache *c, const char *key)
{
	pthread_mutex_lock(&c->mu);
	json_object_del(c->map, key);
	pthread_mutex_unlock(&c->mu);
}

size_t drvc_cache_size(drvc_cache *c)
{
	size_t n;
	pthread_mutex_lock(&c->mu);
	n = json_object_size(c->map);
	pthread_mutex_unlock(&c->mu);
	return n;
}
