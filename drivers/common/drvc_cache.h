/*
 * drvc_cache.h -- a bounded, thread-safe map from a string key to a few
 * strings, for what a driver learns about its instances between calls
 * (Azure: a VM's addresses; GCE: an instance's zone).  Lookups are O(1)
 * (a jansson object is the hash table); when full, the oldest key goes.
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Thread-safety: every function but init and free may be called from any
 * number of threads at once on the same cache.  Ownership: put copies
 * key and values; get hands out fresh copies (see drvc_cache_get).
 */
#ifndef DRVC_CACHE_H
#define DRVC_CACHE_H

#include <pthread.h>
#include <stddef.h>

#include <jansson.h>

typedef struct drvc_cache {
	pthread_mutex_t mu;
	json_t *map;   /* key -> [value|null, ...], in insertion order */
	size_t cap;
} drvc_cache;

/* Returns 0, or -1 when the mutex or map cannot be made. */
int drvc_cache_init(drvc_cache *c, size_t cap);
void drvc_cache_free(drvc_cache *c);
/* Stores n values (any may be NULL) under key, replacing what was there. */
void drvc_cache_put(drvc_cache *c, const char *key, const char *const *vals,
                    size_t n);
/* 1 and malloc'd copies in vals[0..n) (NULL where NULL was stored or the
 * entry has fewer values; the caller frees them) when key is present;
 * 0 and vals untouched otherwise. */
int drvc_cache_get(drvc_cache *c, const char *key, char **vals, size_t n);
void drvc_cache_del(drvc_cache *c, const char *key);
size_t drvc_cache_size(drvc_cache *c);

#endif
