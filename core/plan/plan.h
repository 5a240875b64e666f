/*
 * plan.h -- spec + offers + policies -> ranked candidates with a decision
 * record.
 *
 * For one pool the planner
 *   1. refuses offers that cannot satisfy the spec (cloud, GPU model, GPU
 *      count and memory, capacity kind, region globs, compliance tags,
 *      price limit, or marked unavailable by the engine after a capacity
 *      error) -- in C, cheaply;
 *   2. runs the policies (org-wide first) on the survivors: any filter
 *      refusing wins, scores add up;
 *   3. ranks the rest by the spec's capacity order, then score (the policy
 *      score sum when any policy scores, else the pool's price per hour),
 *      then price, then name for determinism.
 * An offer that knows how many can be had (gb_coffer.available: on-prem
 * free nodes) cannot take a co-located pool bigger than that (refused,
 * kind "room"); a pool with `colocate: none` is filled down the ranked
 * candidates, each taking what it has (gb_plan_first_choice).
 * Every refused offer is kept with the rule and reason (rendered lazily,
 * so 100k refusals cost little), with hashes of catalog and policies.
 */
#ifndef GB_PLAN_H
#define GB_PLAN_H

#include <jansson.h>
#include <stdint.h>

#include "catalog.h"
#include "config.h"
#include "policy.h"
#include "spec.h"

typedef enum gb_refusal_kind {
	GB_REFUSE_CLOUD = 0,
	GB_REFUSE_GPU_MODEL,
	GB_REFUSE_GPU_COUNT,
	GB_REFUSE_GPU_MEMORY,
	GB_REFUSE_CAPACITY,
	GB_REFUSE_REGION,
	GB_REFUSE_COMPLIANCE,
	GB_REFUSE_PRICE,
	GB_REFUSE_UNAVAILABLE,
	GB_REFUSE_POLICY,
	GB_REFUSE_ROOM,      /* co-located pool: fewer free than it needs */
	GB_REFUSE__COUNT
} gb_refusal_kind;

typedef struct gb_refusal {
	const gb_coffer *offer;
	uint8_t kind;        /* gb_refusal_kind */
	int16_t policy;      /* policy index for GB_REFUSE_POLICY, else -1 */
	const char *reason;  /* policy's reason or the unavailability note;
	                        borrowed from the policy set (keep a
	                        reference) / plan */
} gb_refusal;

typedef struct gb_candidate {
	const gb_coffer *offer;
	int cap_order;       /* index in the spec's capacity list; -1 for
	                        owned capacity (ranked first) */
	double score;        /* lower is better */
	double pool_price;   /* price x instances, USD/h */
} gb_candidate;

typedef struct gb_plan {
	const gb_pool_spec *spec;  /* borrowed */
	gb_candidate *cands;       /* ranked, best first */
	size_t ncands;
	gb_refusal *refusals;
	size_t nrefusals;
	size_t counts[GB_REFUSE__COUNT];
	size_t considered;         /* offers in the catalog */
	int scored_by_policy;      /* any policy has score() */
	char catalog_hash[65];
	gb_strv policy_names;
	gb_strv policy_hashes;
	gb_strv logs;              /* gb.log() output */
	gb_strv notes;             /* unavailability and room notes (owned) */
	int need;                  /* instances the pool is to have */
	double elapsed_ms;
} gb_plan;

/* Engine hook: is this offer marked unavailable (capacity cooldown)?
 * Returns 1 and writes a short note ("InsufficientInstanceCapacity, until
 * 13:45:02Z") into why, else 0. */
typedef int (*gb_unavailable_fn)(void *ud, const gb_coffer *o, char *why,
                                 size_t cap);

/* Engine hook: how many of the pool's live instances the offer's place
 * (cloud, region, zone, type, capacity) already holds: with the offer's
 * `available` they are the room a co-located pool has there. */
typedef int (*gb_held_fn)(void *ud, const gb_coffer *o);

typedef struct gb_plan_opts {
	gb_policy_set *policies;   /* may be NULL: no policies */
	const gb_team_cfg *team;   /* may be NULL */
	gb_unavailable_fn unavailable;
	void *unavailable_ud;
	int need;                  /* instances the pool is to have; 0 = the
	                              spec's count */
	gb_held_fn held;           /* may be NULL: the pool holds nothing */
	void *held_ud;
} gb_plan_opts;

/* One part of a first-choice placement: `count` instances on `offer`. */
typedef struct gb_plan_part {
	const gb_coffer *offer;    /* borrowed from the catalog */
	int count;
} gb_plan_part;

/* Plan one pool.  Returns 0 (even when no candidate qualifies: check
 * ncands), or -1 when a policy failed, with the message in err.
 * Ownership: the plan borrows spec and cat (and the policy set's reason
 * strings) -- keep them alive until gb_plan_free. */
int gb_plan_pool(const gb_pool_spec *spec, const gb_catalog *cat,
                 const gb_plan_opts *o, gb_plan *out, char *err, size_t cap);
void gb_plan_free(gb_plan *p);

/* Where `need` new instances go first (before any failover): a
 * co-located pool, all on the best candidate; `colocate: none`, down the
 * ranked candidates, each taking min(what is left, its `available`) (an
 * offer without a known `available` takes the rest).  Writes at most cap
 * parts, in rank order; returns how many, with *unplaced = the instances
 * no candidate has room for (0 normally).  *price = the parts' sum,
 * USD/h. */
size_t gb_plan_first_choice(const gb_plan *p, int need, gb_plan_part *parts,
                            size_t cap, int *unplaced, double *price);
/* The first choice as JSON: [{count, cloud, region, zone, instance_type,
 * capacity, price_per_hour}, ...] (price per instance).  New reference. */
json_t *gb_plan_parts_json(const gb_plan *p, int need, int *unplaced,
                           double *price);

/* "GPU model A10G not requested (pool wants H100, A100-80GB)"; caller
 * frees. */
char *gb_plan_refusal_text(const gb_plan *p, const gb_refusal *r);
/* Short name of a refusal kind: "gpu-model", "region", "policy:gdpr"... */
const char *gb_refusal_kind_name(gb_refusal_kind k);
/* The refusal kinds that refused something, commonest first (ties: in
 * enum order), into order; returns how many. */
size_t gb_plan_refusal_order(const gb_plan *p,
                             gb_refusal_kind order[GB_REFUSE__COUNT]);
/* When ncands == 0: "no offer qualifies for pool X: 812 wrong GPU model,
 * 40 refused by policy gdpr (e.g. ...), ..." (commonest first); caller
 * frees. */
char *gb_plan_no_candidate_msg(const gb_plan *p);

/* The plan as JSON: pool, candidates (top `limit`, 0 = all; each with
 * `available` when known), the first choice for the pool's size
 * (`placement`, gb_plan_parts_json, with `placement_price_per_hour` and
 * `unplaced` when some have no room), counts, hashes, and with explain
 * every refusal.  New reference. */
json_t *gb_plan_to_json(const gb_plan *p, size_t limit, int explain);
/* The refused offers, each with its rule and reason (what --explain
 * lists); per_kind > 0 keeps only the first per_kind of each kind of
 * refusal (a stored decision's sample).  New reference. */
json_t *gb_plan_refusals_json(const gb_plan *p, size_t per_kind);

/* The policy search path for a config: cfg->policy_path, else the
 * installed/build-tree policy dir.  extra (may be NULL) goes first.
 * Fills *out (caller frees with gb_strv_free). */
void gb_plan_policy_path(const gb_config *cfg, const char *extra,
                         gb_strv *out);
/* A gb_spec_opts.policy_arg for specs planned with config ud (a const
 * gb_config *, may be NULL): checks a policy entry's args against the
 * policy found in gb_plan_policy_path(ud, NULL) (gb_policy_check_arg). */
int gb_plan_policy_arg(void *ud, const char *policy, const char *key,
                       const char *value, char *msg, size_t cap);
/* Load org policies (cfg) + the pool's policies, through the process-wide
 * policy cache (gb_policy_set_get: compiled once per set and file
 * contents).  Returns NULL when there are none (ok) or on error (err
 * set, *failed = 1).  Ownership: a reference the caller drops with
 * gb_policy_set_free, after the plans made with it are freed. */
gb_policy_set *gb_plan_load_policies(const gb_config *cfg,
                                     const gb_pool_spec *spec,
                                     const char *extra_dir, int *failed,
                                     char *err, size_t cap);

#endif
