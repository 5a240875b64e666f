/*
 * spec.h -- pool specs: what users write (YAML) as typed structs.
 *
 * A spec file holds one pool per YAML document ('---' between them; empty
 * documents are skipped; a file without any pool is an error).  Each
 * document is a mapping with the single key `pool`.  ${VAR} and
 * ${VAR:-default} (default also when VAR is empty, as in sh) are expanded
 * from the environment in every value; an unset VAR without a default is
 * an error; $${ is a literal ${.  Limits: 1 MiB per file, nesting 32
 * deep, no YAML aliases (*ref), UTF-8 only, no NUL bytes.
 *
 * Schema and defaults (the files in examples/ show each in use):
 *   pool:
 *     name        required; 1..48 of [a-z0-9-], starts with a letter, does
 *                 not end with '-' (checked after ${VAR} expansion);
 *                 unique within a file
 *     team        1..63 of [a-z0-9_.-] starting with a letter; default
 *                 "default"
 *     labels      map string->string, at most 32; keys like team names,
 *                 "gpubroker-*" reserved; values <= 63 characters
 *     purpose     training | inference | dev          (default training)
 *     count       instances, 1..10000                 (default 1)
 *     min, max    a range for scaling (inference, dev).  Rules:
 *                   only count        -> min = max = count
 *                   min/max, no count -> count = min (min defaults to 1,
 *                                        max to min)
 *                   count and max     -> min defaults to count (or max)
 *                   count and min     -> max defaults to count
 *                 min <= count <= max, else an error.  training pools are
 *                 fixed: min/max (if given) must be equal.
 *     gpu         {model: name or list (required; canonical names via
 *                  gb_gpu_canonical, case-insensitive, with aliases such as
 *                  a100-40gb, h100-80gb), count: per instance (1..16,
 *                  default 1), memory_gb: minimum per GPU (0..1024,
 *                  default 0; at least one listed model must have it)}
 *     capacity    list of spot | on-demand | reserved, no repeats, the
 *                 order to try (default: training and dev [spot,
 *                 on-demand]; inference [on-demand]); or a mix
 *                 {on_demand_base: 0..10000 (default 0), spot_share:
 *                 0..1 (default 0)}: the first on_demand_base instances
 *                 on-demand, spot_share of the rest (rounded down) on
 *                 spot, falling back to on-demand when no spot is to be
 *                 had; not with colocate zone/region
 *     placement   {clouds: subset of the known clouds (gb_spec_opts;
 *                  default: empty = every loaded driver),
 *                  regions: region ids or globs such as "eu-*" (default:
 *                  empty = any; with gb_spec_opts.catalog, each must
 *                  match a region of the pool's clouds, and each cloud
 *                  placement.clouds lists must have a region among them:
 *                  region names differ per cloud, see region_glob.h),
 *                  colocate: zone | region | none (default zone for
 *                  training with count > 1, else none),
 *                  data: {region: a known region id}  (data locality),
 *                  spread: zone | none (zone: at most ceil(n / zones)
 *                  instances per zone, a zone that reclaimed spot
 *                  cools down; default zone for inference pools that
 *                  are not co-located, else none),
 *                  compliance: list of region tags (gb_region_tags:
 *                  gdpr | uk-gdpr | hipaa | fedramp; hipaa-eligible is
 *                  refused naming hipaa)}
 *     limits      {max_price_per_hour: USD for the whole pool, > 0 and
 *                  <= 1e6; leave out for no limit}
 *     lifecycle   {ttl, idle_timeout: durations (90s, 30m, 6h, 2d, 1w,
 *                  1h30m), > 0 when given; leave out for none;
 *                  consolidate: bool, default true;
 *                  preemptible: bool (default true for dev, else false):
 *                  the admission may take its instances back above min;
 *                  preempt_grace: duration <= 1d (default 2m): their
 *                  notice}
 *     priority    a class of the broker config's priorities: (default:
 *                 by purpose, gb_config_priority_default)
 *     policy      list of policy names ([a-z0-9_-], policies/NAME.lua) or
 *                 paths ending in .lua, applied in order; kept as written
 *                 (resolved at plan time); an entry may be {name: NAME,
 *                 args: {KEY: VALUE}} to set the parameters the policy
 *                 declares (scalars; checked by gb_spec_opts.policy_arg
 *                 when given, else when the pool is planned)
 *     image       {CLOUD: image id}; keys are known clouds
 *     ssh_keys    list of OpenSSH public keys (ssh-ed25519, ssh-rsa,
 *                 ecdsa-sha2-*, sk-*); private keys are refused
 *     user_data   cloud-init text, at most 16 KiB
 *     agent       true: run gpubroker-agent on each instance (default false)
 *     autoscale   only for pools with min < max:
 *                 {gpu_util_target: 0 < x <= 1 (required),
 *                  up_after: duration > 0 (default 1m),
 *                  down_after: duration > 0 (default 10m),
 *                  max_step: 1..10000 (default 1),
 *                  schedule: list (at most 8) of {days: "mon-fri",
 *                    "sat,sun", ... (ranges may wrap: fri-mon), from:
 *                    "HH:MM", to: "HH:MM" (after from; 24:00 allowed),
 *                    tz: an IANA zone name such as Europe/Berlin (from
 *                    /usr/share/zoneinfo, daylight saving followed), UTC
 *                    or a fixed offset "+01:00" / "UTC-05:30" (default
 *                    UTC), min: within the pool's min..max}}
 *     serve       {port: 1..65535}: the port its instances serve on
 *                 (GET /v1/pools/NAME/targets)
 * A single string is accepted wherever a list is expected.
 */
#ifndef GB_SPEC_H
#define GB_SPEC_H

#include <stdint.h>

#include "diag.h"
#include "tzfile.h"
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

#define GB_AUTOSCALE_MAX_WINDOWS 8

/* A preempted instance's notice when lifecycle.preempt_grace is not
 * given: the two minutes a spot instance gets. */
#define GB_PREEMPT_GRACE_S 120

/* A schedule window: from..to local time (zone, or offset tz_min from UTC
 * when zone is NULL) on the days in the mask (bit 0 = Monday .. bit 6 =
 * Sunday) raises the floor to min.  zone is owned by tzfile's process-wide
 * cache (immutable, never freed), so copying a window by value is safe. */
typedef struct gb_autoscale_window {
	unsigned days;
	int from_min, to_min; /* minutes after local midnight, from < to */
	int tz_min;           /* local = UTC + tz_min minutes (no zone) */
	int min;
	const gb_tz *zone;    /* IANA zone, or NULL; borrowed from the cache */
} gb_autoscale_window;

typedef struct gb_autoscale {
	int enabled;             /* 0 = no autoscale block */
	double gpu_util_target;  /* 0 < x <= 1 */
	int64_t up_after_s, down_after_s;
	int max_step;
	gb_autoscale_window windows[GB_AUTOSCALE_MAX_WINDOWS];
	int nwindows;
} gb_autoscale;

typedef struct gb_pool_spec {
	char *name;
	char *team;
	gb_kvs labels;
	gb_purpose purpose;
	int count;        /* desired instances (min when not given) */
	int min, max;     /* min <= count <= max; all equal for fixed pools */
	gb_strv gpu_models;   /* canonical model names, e.g. H100, A100-80GB */
	int gpu_count;        /* GPUs per instance */
	int gpu_memory_gb;    /* minimum memory per GPU, 0 = any */
	gb_capacity capacity[GB_MAX_CAPACITY_KINDS]; /* order to try */
	int ncapacity;
	int mix;              /* capacity: {on_demand_base, spot_share}: then
	                         capacity is [spot, on-demand] */
	int on_demand_base;   /* on-demand instances first (mix) */
	double spot_share;    /* 0..1 of the instances above the base on spot */
	int spread_zone;      /* placement.spread: zone (at most ceil(n /
	                         zones) per zone); default for inference
	                         pools that are not co-located */
	int spread_set;       /* placement.spread was written */
	int serve_port;       /* serve.port; 0 = none (targets list ip only) */
	char *serve_webhook;  /* serve.webhook: the targets list is POSTed
	                         there on change; NULL = none */
	gb_strv clouds;       /* empty = every loaded driver */
	gb_strv regions;      /* globs; empty = any */
	gb_colocate colocate;
	char *data_region;    /* NULL = no data locality */
	gb_strv compliance;   /* e.g. gdpr, hipaa */
	double max_price_per_hour; /* whole pool, USD; 0 = no limit */
	int64_t ttl_s;        /* 0 = none */
	int64_t idle_timeout_s; /* 0 = none */
	int no_consolidate;   /* lifecycle.consolidate: false (default true:
	                         move onto owned or cheaper capacity that
	                         frees up) */
	int preemptible;      /* lifecycle.preemptible (default: purpose
	                         dev); -1 only while decoding */
	int64_t preempt_grace_s; /* lifecycle.preempt_grace; 0 = the
	                            default, GB_PREEMPT_GRACE_S */
	char *priority;       /* a class of the config's priorities:; NULL =
	                         the purpose's default
	                         (gb_config_priority_default) */
	gb_strv policies;     /* names or paths, in order */
	gb_kvs *policy_args;  /* NULL, or one per policies entry: its args
	                         (name -> value as written; empty = none) */
	gb_kvs images;        /* cloud -> image */
	gb_strv ssh_keys;
	char *user_data;      /* NULL = none */
	gb_autoscale autoscale; /* plain data: copied with the struct */
	int agent;            /* agent: true: each instance runs
	                         gpubroker-agent (bootstrap in its user data;
	                         the instance is ready once it reported) */
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
	/* The clouds a spec may name (placement.clouds, image keys): the
	 * loaded drivers (gb_config_clouds, gb_drivers_names).  NULL = any
	 * driver-like name (1-32 of [a-z0-9_-], folded to lower case): for
	 * stored specs, and for a client whose daemon checks the names. */
	const char *const *clouds;
	/* With clouds: the catalog of the loaded drivers' offers; each
	 * placement.regions glob must then match a region of the pool's
	 * clouds (placement.clouds, or every one of `clouds`), as
	 * gb_region_glob_problem judges.  NULL = not checked (stored specs,
	 * a client whose daemon checks). */
	const struct gb_catalog *catalog;
	/* Checks a policy entry's args ({name:, args:}): with key NULL, that
	 * the policy loads; else that it declares key and value reads as
	 * its type.  0, or -1 with a message in msg (reported at the name or
	 * the key).  NULL = args are checked when the pool is planned. */
	int (*policy_arg)(void *ud, const char *policy, const char *key,
	                  const char *value, char *msg, size_t cap);
	void *policy_ud;
	/* The priority classes priority: may name (the config's
	 * priorities:), NULL-terminated; NULL = any class-like name. */
	const char *const *priorities;
} gb_spec_opts;

/* Parse every pool in a file ('---' separated).  Returns 0 when valid.
 * On error returns -1 with ALL problems in d; *out is then empty.
 * Ownership: caller frees *out with gb_spec_set_free. */
int gb_spec_load_file(const char *path, const gb_spec_opts *opts,
                      gb_spec_set *out, gb_diags *d);
int gb_spec_load_buf(const char *name, const char *buf, size_t len,
                     const gb_spec_opts *opts, gb_spec_set *out,
                     gb_diags *d);
/* Parse a JSON document with the same schema (as the API receives it):
 * an object {"pool": {...}} or an array of them.  No ${VAR} expansion
 * (API input must never read the daemon's environment); diagnostics carry
 * key paths but line/col 0.  gb_pool_spec_to_json output loads back to an
 * identical spec. */
int gb_spec_load_json(const char *name, const char *json, size_t len,
                      const gb_spec_opts *opts, gb_spec_set *out,
                      gb_diags *d);
void gb_spec_set_free(gb_spec_set *s);
void gb_pool_spec_free(gb_pool_spec *p);
/* Deep copy; caller frees with gb_pool_spec_free. */
void gb_pool_spec_copy(gb_pool_spec *dst, const gb_pool_spec *src);

/* The spec as a JSON string (canonical: same spec, same text; keys
 * sorted, compact; {"pool": {...}} with every field that is set, ttl and
 * idle_timeout in seconds; no provenance); caller frees.  Used for the
 * store, the API and hashing (source_hash = sha256 of this text). */
char *gb_pool_spec_to_json(const gb_pool_spec *p);

const char *gb_purpose_name(gb_purpose p);
const char *gb_colocate_name(gb_colocate c);

/* Canonical GPU model name for a user spelling ("h100" -> "H100",
 * "a100-80gb" -> "A100-80GB"); NULL when unknown.  Borrowed (static). */
const char *gb_gpu_canonical(const char *s);
/* Nominal memory per GPU in GB of a canonical model; 0 when unknown. */
int gb_gpu_memory_gb(const char *canonical);
/* Iterate the canonical names: i in [0, gb_gpu_model_count()). */
size_t gb_gpu_model_count(void);
const char *gb_gpu_model_at(size_t i);
/* The canonical name nearest to an unknown spelling (for "did you
 * mean"), or NULL.  Borrowed (static). */
const char *gb_gpu_suggest(const char *s);

#endif
