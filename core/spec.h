/*
 * spec.h -- pool specs: what users write (YAML) as typed structs.
 *
 * Schema and defaults (see README "Pool spec"):
 *   pool:
 *     name        required; [a-z0-9-]{1,48}, starts with a letter
 *     team        default "default"
 *     labels      map string->string, default empty
 *     purpose     training | inference | dev          (default training)
 *     count       instances; or min/max (inference)  (default 1)
 *     gpu         {model: [..] (required), count: per instance (1..16,
 *                  default 1), memory_gb: minimum per GPU (default 0)}
 *     capacity    [spot, on-demand, reserved] order tried
 *                 (default: training [spot, on-demand]; inference
 *                  [on-demand]; dev [spot, on-demand])
 *     placement   {clouds (default all), regions globs (default ["*"]),
 *                  colocate zone|region|none (default: zone for training
 *                  with count>1, else none), data: {region},
 *                  compliance: [gdpr, hipaa, ...]}
 *     limits      {max_price_per_hour: USD for the whole pool, 0 = none}
 *     lifecycle   {ttl: duration (0 = none), idle_timeout: duration}
 *     policy      [name | path.lua]
 *     image       {aws: ami-.., gcp: .., azure: .., onprem: ..}
 *     ssh_keys    [public key text]
 *     user_data   cloud-init text
 */
#ifndef GB_SPEC_H
#define GB_SPEC_H

#include <stdint.h>

#include "diag.h"
#include "util.h"

typedef enum gb_purpose {
	GB_PURPOSE_TRAINING = 0,
	GB_PURPOSE_INFERENCE,
	GB_PURPOSE_DEV
} gb_purpose;

typedef enum gb_colocate {
	GB_COLOCATE_NONE = 0,
	GB_COLOCATE_REGION,
	GB_COLOCATE_ZONE
} gb_colocate;

#define GB_MAX_CAPACITY_KINDS 3
#define GB_POOL_MAX_INSTANCES 10000

typedef struct gb_pool_spec {
	char *name;
	char *team;
	gb_kvs labels;
	gb_purpose purpose;
	int count;        /* desired instances (== min when min/max given) */
	int min, max;     /* min <= count <= max; all equal for fixed pools */
	gb_strv gpu_models;   /* canonical model names, e.g. H100, A100-80GB */
	int gpu_count;        /* GPUs per instance */
	int gpu_memory_gb;    /* minimum memory per GPU, 0 = any */
	gb_capacity capacity[GB_MAX_CAPACITY_KINDS]; /* order to try */
	int ncapacity;
	gb_strv clouds;       /* empty = every loaded driver */
	gb_strv regions;      /* globs; empty = any */
	gb_colocate colocate;
	char *data_region;    /* NULL = no data locality */
	gb_strv compliance;   /* e.g. gdpr, hipaa */
	double max_price_per_hour; /* whole pool, USD; 0 = no limit */
	int64_t ttl_s;        /* 0 = none */
	int64_t idle_timeout_s; /* 0 = none */
	gb_strv policies;     /* names or paths, in order */
	gb_kvs images;        /* cloud -> image */
	gb_strv ssh_keys;
	char *user_data;      /* NULL = none */
	/* provenance */
	char *file;
	int line;
	char *source_hash;    /* sha256 hex of this pool's canonical JSON */
} gb_pool_spec;

typedef struct gb_spec_set {
	gb_pool_spec *pools;
	size_t n;
} gb_spec_set;

typedef struct gb_spec_opts {
	/* Environment lookup for ${VAR}; NULL = getenv. */
	const char *(*getenv_fn)(void *ud, const char *name);
	void *getenv_ud;
	/* Known cloud names for placement.clouds validation; NULL = the
	 * built-in list (aws, azure, gcp, onprem). */
	const char *const *clouds;
} gb_spec_opts;

/* Parse every pool in a file ('---' separated).  Returns 0 when valid.
 * On error returns -1 with ALL problems in d; *out is then empty.
 * Ownership: caller frees *out with gb_spec_set_free. */
int gb_spec_load_file(const char *path, const gb_spec_opts *opts,
                      gb_spec_set *out, gb_diags *d);
int gb_spec_load_buf(const char *name, const char *buf, size_t len,
                     const gb_spec_opts *opts, gb_spec_set *out,
                     gb_diags *d);
/* Parse a JSON document with the same schema (as the API receives it). */
int gb_spec_load_json(const char *name, const char *json, size_t len,
                      const gb_spec_opts *opts, gb_spec_set *out,
                      gb_diags *d);
void gb_spec_set_free(gb_spec_set *s);
void gb_pool_spec_free(gb_pool_spec *p);
/* Deep copy; caller frees with gb_pool_spec_free. */
void gb_pool_spec_copy(gb_pool_spec *dst, const gb_pool_spec *src);

/* The spec as a JSON string (canonical: same spec, same text); caller
 * frees.  Used for the store, the API and hashing. */
char *gb_pool_spec_to_json(const gb_pool_spec *p);

const char *gb_purpose_name(gb_purpose p);
const char *gb_colocate_name(gb_colocate c);

/* Canonical GPU model name for a user spelling ("h100" -> "H100",
 * "a100-80gb" -> "A100-80GB"); NULL when unknown.  Borrowed (static). */
const char *gb_gpu_canonical(const char *s);

#endif
