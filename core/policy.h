/*
 * policy.h -- Lua 5.4 placement policies in a sandbox.
 *
 * A policy file returns a table with any of
 *     filter(req, offer) -> ok[, reason]
 *     score(req, offer)  -> number (lower is better)
 * All filters of a set must pass; scores add up.  Org-wide policies are
 * loaded first and always run.
 *
 * Sandbox: only base (minus dofile/loadfile/load/loadstring/require/
 * collectgarbage/print... see policy.c), table, string (minus dump),
 * math, utf8; text chunks only; req and offer are read-only (writes raise
 * an error); a per-call instruction budget (count hook, re-armed so pcall
 * cannot swallow it) and a memory cap (allocator).  A policy that breaks a
 * limit or raises an error fails the evaluation with a message naming the
 * policy, the function and the limit.
 *
 * Offers reach Lua as read-only objects with fields:
 *   cloud region zone instance_type gpu_model gpu_count gpu_memory_gb
 *   vcpus ram_gb capacity ("spot"|"on-demand"|"reserved") price
 *   price_per_gpu_hour source fetched_at tags (list) bench (table|nil)
 * req carries the pool spec: name team purpose count min max
 *   gpu{models,count,memory_gb} capacity{...} clouds regions colocate
 *   data_region compliance{...} max_price_per_hour ttl idle_timeout
 *   labels{} team{name,max_gpus,max_price_per_hour,monthly_budget}
 * Helpers: gb.region(name[, cloud]) -> {cloud,name,country,jurisdiction,
 *   lat,lon,tags{},carbon} | nil, gb.distance_km(a, b) (region names or
 *   {lat=,lon=} tables), gb.glob(pattern, s), gb.log(...).
 *
 * Threading: a gb_policy_set is used by one thread at a time.
 */
#ifndef GB_POLICY_H
#define GB_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "config.h"
#include "spec.h"

typedef struct gb_policy_set gb_policy_set;

typedef struct gb_policy_limits {
	uint64_t instructions; /* per call; 0 = default (1,000,000) */
	size_t memory_bytes;   /* whole sandbox; 0 = default (64 MiB) */
} gb_policy_limits;

typedef struct gb_policy_result {
	int refused_by;      /* -1 = every filter passed, else policy index */
	const char *reason;  /* refusal reason; borrowed, valid until the set
	                        is freed */
	double score;        /* sum of scores (when not refused) */
} gb_policy_result;

/* Resolve and load policies: each entry of `org` then `pool` is a path
 * ending in ".lua" or a name looked up as <dir>/<name>.lua in
 * search_path (in order).  Returns 0, or -1 with a message in err naming
 * the policy and the problem (not found, syntax error with line, not
 * returning a table, ...).  Ownership: caller frees *out with
 * gb_policy_set_free. */
int gb_policy_set_new(gb_policy_set **out, const gb_strv *org,
                      const gb_strv *pool, const gb_strv *search_path,
                      const gb_policy_limits *lim, char *err, size_t errcap);
void gb_policy_set_free(gb_policy_set *ps);

size_t gb_policy_count(const gb_policy_set *ps);
/* Borrowed: the policy's name (file name without .lua), its path, and the
 * sha256 hex of its source. */
const char *gb_policy_name(const gb_policy_set *ps, size_t i);
const char *gb_policy_path(const gb_policy_set *ps, size_t i);
const char *gb_policy_hash(const gb_policy_set *ps, size_t i);

/* Bind the request (and the team's limits, may be NULL) for the following
 * evaluations.  0 or -1 with err. */
int gb_policy_set_request(gb_policy_set *ps, const gb_pool_spec *spec,
                          const gb_team_cfg *team, char *err, size_t errcap);

/* Evaluate every policy on n offers: filters in order (the first refusal
 * wins), then scores summed for the survivors.  Returns 0, or -1 when a
 * policy failed (error or limit), with err like
 *   "policy 'cost': score: instruction limit (1000000) exceeded"
 * in which case the whole evaluation must be treated as failed. */
int gb_policy_eval(gb_policy_set *ps, const gb_coffer *const *offers,
                   size_t n, gb_policy_result *out, char *err,
                   size_t errcap);

/* Messages from gb.log() since the last call (borrowed until the next
 * evaluation); n set to their count. */
const char *const *gb_policy_logs(const gb_policy_set *ps, size_t *n);

#endif
