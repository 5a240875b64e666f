/*
 * engine.h -- apply / destroy / scale / observe / recover / gc: the only
 * code that calls driver mutations.
 *
 * The promise: what the spec says is what runs, and nothing is leaked or
 * duplicated even if the process dies at any instant.
 *   - Before every create (and terminate) the engine writes an intent to
 *     the store and COMMITS it; then it calls the driver; then it records
 *     the instances and closes the intent in one transaction.
 *   - Tokens are journaled, and providers deduplicate retried creates with
 *     them (EC2 ClientToken, ARM PUT by name, GCE requestId), so a retried
 *     or recovered create returns the same instances.
 *   - On every start, open intents are resolved by asking the drivers for
 *     instances carrying the intent's token: they are adopted (or, when
 *     their pool is gone, terminated); the intent is closed.
 *   - After a terminate call, its intent is closed and the time the cloud
 *     accepted each instance's terminate (where its billing ends) is
 *     recorded, in one transaction.  When the store refuses that write
 *     (a full disk), the outcome is held in memory and written first by
 *     every later operation, as soon as the store takes writes again;
 *     until then nothing else changes.  A terminate whose intent cannot
 *     be journaled is not sent.
 *   - A row is marked terminated only after the cloud confirmed it
 *     (describe says terminated, or the instance is gone); until then it
 *     is "terminating" and still costs money in `cost`.
 *   - gc finds instances tagged with this broker's id that the store does
 *     not know (and no open intent explains) and terminates or adopts them.
 *     It terminates them as every other terminate: recorded (in the pool
 *     "(orphans)") with their intent, then sent, batched per call where
 *     the driver can; one the cloud refused is sent again by the next gc.
 *
 * Failover: candidates come from the planner in rank order; a CAPACITY or
 * QUOTA error marks (cloud, region, zone, type, capacity) unavailable for
 * the cooldown (shared through the store by all pools and processes) and
 * the next candidate is tried.  Creates on one candidate are
 * all-or-nothing; `colocate: zone` pools keep every instance in one zone
 * and move whole when their zone has no room.
 *
 * Scale-down order: instances that are not running yet go first, then the
 * newest (highest name index), so the longest-running ones stay.
 *
 * Threading: driver calls run on worker threads (opts.workers at once);
 * engine calls for one pool are serialised by a per-pool lock (a mutex,
 * plus an flock on <state>.locks/<pool> against other processes: when
 * that cannot be taken, every operation that would change the pool is
 * refused with the path and the reason); different pools proceed in
 * parallel.
 */
#ifndef GB_ENGINE_H
#define GB_ENGINE_H

#include <jansson.h>
#include <signal.h>

#include "catalog.h"
#include "config.h"
#include "drivers.h"
#include "plan.h"
#include "spec.h"
#include "store.h"

typedef struct gb_engine gb_engine;

/* Called for every event as it happens (also stored as an event row). */
typedef void (*gb_engine_progress_fn)(void *ud, const char *pool,
                                      const char *instance, const char *kind,
                                      const char *message);

typedef struct gb_engine_opts {
	const gb_config *cfg;       /* borrowed */
	gb_store *store;            /* borrowed */
	gb_drivers *drivers;        /* borrowed */
	gb_catalog *cat;            /* borrowed */
	const char *policy_dir;     /* extra policy directory, may be NULL */
	int workers;                /* parallel driver calls; 0 = cfg->workers */
	int64_t cooldown_s;         /* 0 = cfg->failover_cooldown_s */
	int64_t confirm_timeout_s;  /* destroy waits this long for the cloud
	                               to confirm (0 = 600) */
	int64_t poll_ms;            /* describe period while waiting (0 = 1000) */
	gb_engine_progress_fn progress;
	void *progress_ud;
	volatile sig_atomic_t *stop; /* when set, long waits return early */
	/* Shared store (PostgreSQL) only: a pool is converged under a lease
	 * (store.h) instead of an flock.  lease_ms: 0 = cfg->lease_s (15 s).
	 * sticky: keep a pool's lease after an operation (the daemon: the
	 * pool stays this replica's to reconcile until another process asks
	 * for it or this one stops); 0 gives it back at once (the CLI). */
	int64_t lease_ms;
	int sticky_leases;
} gb_engine_opts;

/* A gb_unavailable_fn over the state store's failover cooldowns (ud: a
 * gb_engine_cool), so plans skip what the engine would skip right now;
 * first_s gets the earliest end of the cooldowns it applied (unix s; 0:
 * none), when a pool they leave without a candidate is tried again. */
typedef struct gb_engine_cool {
	gb_store *st;     /* borrowed */
	int64_t first_s;  /* set by the calls; start it at 0 */
} gb_engine_cool;
int gb_engine_unavailable(void *ud, const gb_coffer *o, char *why,
                          size_t cap);
/* For plan p of spec, made from cat with po (whose unavailable is
 * gb_engine_unavailable over cool): when only the cooldowns left it
 * without a candidate (a plan without them has some), what a pool of it
 * does: "no candidate: 5 offers refused by capacity cooldown (CODE);
 * next attempt TIME (in 2m30s), when the first cooldown ends" (caller
 * frees); else NULL. */
char *gb_engine_cooldown_msg(const gb_pool_spec *spec, const gb_catalog *cat,
                             const gb_plan_opts *po, const gb_plan *p,
                             const gb_engine_cool *cool);

/* Whether this process may converge `pool` now: on a shared store, takes
 * or renews the pool's lease without waiting.  0 = yes (always on
 * SQLite), 1 = another process holds it (holder gets its owner id when
 * not NULL), -1 = the store failed (its message in err).  A fresh
 * take-over (the lease was another's, or lapsed) first recovers the
 * pool's open intents (*recovered = how many; may be NULL). */
GB_MUST_CHECK int gb_engine_claim(gb_engine *e, const char *pool, char *holder, size_t cap,
                    int *recovered);

/* Ownership: free with gb_engine_free (borrowed things stay the caller's). */
gb_engine *gb_engine_new(const gb_engine_opts *o);
void gb_engine_free(gb_engine *e);

/* Result of an operation: a human message on failure, counts, and the
 * pool's state as JSON (new reference, may be NULL). */
typedef struct gb_engine_result {
	int ok;                 /* 1 converged / done */
	int partial;            /* some instances could not be placed */
	int deferred;           /* placing was not tried: the pool's note
	                           says nothing can be placed before its
	                           retry time (message repeats the note) */
	int repeated;           /* failed for the reason the pool's note
	                           already gave (a "waiting" event said it
	                           when it changed): a caller that logs
	                           failures need not log it again */
	int created, kept, destroyed, replaced;
	int not_found;          /* failed: there is no such pool */
	int store_failed;       /* failed: the state store failed (message:
	                           "state store failed: ..."); nothing was
	                           done on the strength of what it could not
	                           read (the daemon answers 503) */
	char message[1024];     /* on failure: what, why, how to fix */
	json_t *pool;           /* gb_engine_pool_json of the pool */
} gb_engine_result;

void gb_engine_result_free(gb_engine_result *r);

/* The pools of one file (or one apply), checked together: each pool's
 * quota and budget checks count the pools before it as if applied
 * (their GPUs, their $/h priced as apply prices them, and their
 * spending for their TTL or the rest of the month), in place of what
 * the store holds for pools of those names.  Zero-initialise
 * (GB_ENGINE_BATCH_INIT); free with gb_engine_batch_free. */
typedef struct gb_engine_batch_pool {
	char *name, *team;
	int gpus;
	double per_hour;
	int64_t ttl_s;
} gb_engine_batch_pool;
typedef struct gb_engine_batch {
	gb_engine_batch_pool *v;
	size_t n;
} gb_engine_batch;
#define GB_ENGINE_BATCH_INIT {NULL, 0}
/* Adds spec, as plan p prices it (count x its first candidate). */
void gb_engine_batch_add(gb_engine_batch *bt, const gb_pool_spec *spec,
                         const gb_plan *p);
/* Plans spec (as gb_engine_diff would) and adds it: 0, or -1 with err. */
int gb_engine_batch_plan(gb_engine *e, gb_engine_batch *bt,
                         const gb_pool_spec *spec, char *err, size_t cap);
void gb_engine_batch_free(gb_engine_batch *bt);

/* What apply would do, terraform-style, without doing it.  Returns a JSON
 * object {pool, create:[..], keep:[..], destroy:[..], replace:[..],
 * price_per_hour_before/after, candidates:[..], no_match, error,
 * apply_refused (gb_engine_check_plan's refusal, earlier counted: the
 * pools of the same file before spec, or NULL)} (new
 * reference) or NULL with err.  error (only when instances are missing
 * and no candidate is left) says why; no_match is true when no offer can
 * match the spec at all (an apply of it is refused), false when only
 * failover cooldowns stand in the way (an apply stores the pool, which
 * waits for the first to end). */
GB_MUST_CHECK json_t *gb_engine_diff(gb_engine *e, const gb_pool_spec *spec,
                                     const gb_engine_batch *earlier,
                                     char *err, size_t cap);

/* The quota and budget checks apply makes (teams[].max_gpus,
 * max_price_per_hour, monthly_budget), for plan p of spec, priced as
 * apply prices it: NULL when apply would go ahead, else its refusal
 * (caller frees).  e: the engine on the state (the team's other pools
 * and this month's spending count); NULL without a state.  earlier: the
 * pools of the same file before spec, counted as if applied, or NULL. */
char *gb_engine_check_plan(gb_engine *e, const gb_config *cfg,
                           const gb_pool_spec *spec, const gb_plan *p,
                           const gb_engine_batch *earlier);

/* Store the spec and converge the pool to it.  Quotas and budgets are
 * checked before any call (refused with a message), and so is a spec no
 * offer can match while the pool is short of instances (refused with the
 * plan's reasons; nothing stored).  Idempotent. */
GB_MUST_CHECK int gb_engine_apply(gb_engine *e, const gb_pool_spec *spec,
                    gb_engine_result *res);
/* Converge a stored pool (replace preempted/failed instances, create
 * missing, destroy extra) -- the reconciler's step. */
GB_MUST_CHECK int gb_engine_converge(gb_engine *e, const char *pool, gb_engine_result *res);
/* The same without the pool's own describe first (the caller has just
 * refreshed every pool with gb_engine_refresh(e, NULL)), and without
 * res->pool (left NULL: the reconciler has no use for it). */
GB_MUST_CHECK int gb_engine_converge_fresh(gb_engine *e, const char *pool,
                             gb_engine_result *res);
/* 1 when the last converge of `pool` by this engine had nothing to do
 * and the pool's generation is still `generation` (no apply or scale
 * since); 0 otherwise.  The reconciler skips the converge of a pool that
 * is steady in the store (gb_store_pool_list_steady) and settled here
 * (engine_settled.c). */
int gb_engine_settled(gb_engine *e, const char *pool, int64_t generation);
/* The first half of apply, for the daemon: quota/budget checks (and the
 * refusal of a spec no offer can match), store the spec and the decision
 * record, no cloud calls.  The caller converges
 * later (asynchronously). */
GB_MUST_CHECK int gb_engine_submit(gb_engine *e, const gb_pool_spec *spec,
                     gb_engine_result *res);
/* The first half of scale: validate and store the new size. */
GB_MUST_CHECK int gb_engine_set_desired(gb_engine *e, const char *pool, int n,
                          gb_engine_result *res);
/* Change the desired size (min..max of the spec when given). */
GB_MUST_CHECK int gb_engine_scale(gb_engine *e, const char *pool, int n,
                    gb_engine_result *res);
/* Terminate every instance, confirm through describe, mark the pool
 * destroyed.  Safe to re-run after any crash (a pool left destroying
 * is finished); a pool destroyed already is gone: -1 with
 * res->not_found, as for no such pool.  reason is recorded ("user",
 * "ttl", "idle"). */
GB_MUST_CHECK int gb_engine_destroy(gb_engine *e, const char *pool, const char *reason,
                      gb_engine_result *res);

/* The first half of destroy, for the daemon: under the pool's lock, mark
 * an active pool destroying (reason recorded; the event names `by`); no
 * cloud call (gb_engine_destroy_step does the rest).  0 done (res->pool
 * set); 1 the store failed (refuses writes now, a full disk; or a
 * read failed: res->store_failed); -1 refused (no such
 * pool, or its lock cannot be taken), with res->message; res->not_found
 * when there is no such pool, or it was destroyed already. */
GB_MUST_CHECK int gb_engine_request_destroy(gb_engine *e, const char *pool,
                              const char *reason, const char *by,
                              gb_engine_result *res);

/* One non-blocking step of destroy for the daemon: mark the pool
 * destroying (with reason) if it is active, (re)send termination for live
 * instances not yet asked (or asked over a minute ago), and mark it
 * destroyed once every instance is confirmed gone.  1 = destroyed now,
 * 0 = still in progress (also while the store refuses writes: nothing
 * done, res->message says why), -1 = error (res->message; the pool's
 * lock cannot be taken, or the store failed). */
GB_MUST_CHECK int gb_engine_destroy_step(gb_engine *e, const char *pool, const char *reason,
                           gb_engine_result *res);

/* Ask the drivers about live instances (of one pool, or all when NULL)
 * and update their states; one describe per driver and region. */
GB_MUST_CHECK int gb_engine_refresh(gb_engine *e, const char *pool);
/* gb_engine_refresh(e, NULL); with keep_for_gc the listings it made are
 * kept for the next gb_engine_gc, which then lists again only the
 * (driver, region) pairs the refresh did not (or could not), if it runs
 * within GB_GC_REUSE_MS.  The reconciler's gc pass is one of its passes:
 * listing every instance twice in it cost as much as the pass itself. */
GB_MUST_CHECK int gb_engine_refresh_all(gb_engine *e, int keep_for_gc);
#define GB_GC_REUSE_MS 60000
/* Refresh until the pool is as asked -- as many instances run as it
 * desires, and the ones it ended (a scale-down) are confirmed gone by
 * their cloud -- or timeout_s passes (0 = wait forever until *stop).
 * 1 = as asked, 0 = timed out (or stopped), -1 error,
 * GB_ENGINE_WAIT_GONE when the pool is being (or has been) destroyed: a
 * TTL, an idle teardown or a destroy ends the wait at once (err says
 * which). */
#define GB_ENGINE_WAIT_GONE (-2)
GB_MUST_CHECK int gb_engine_wait(gb_engine *e, const char *pool, int64_t timeout_s,
                   char *err, size_t cap);

/* Resolve open intents (call on every start).  Returns how many were
 * resolved, -1 on error. */
GB_MUST_CHECK int gb_engine_recover(gb_engine *e);

/* Instances carrying this broker's tag that the store does not know.
 * With adopt, those whose pool tag names an active pool are adopted;
 * every other orphan is terminated, through the journaled terminate of
 * engine_destroy.c (an orphan an earlier gc recorded whose terminate the
 * cloud refused, or has not carried out a minute later, is terminated
 * again and reported again).  Fills *report (new reference: a JSON
 * array of {cloud, region, id, pool, action}; a region whose listing
 * failed is a row {cloud, region, id: null, action: "unchecked", error}).
 * Returns 0, 1 when some region could not be listed (its orphans were not
 * looked for), -1 when the store could not be read. */
GB_MUST_CHECK int gb_engine_gc(gb_engine *e, int adopt, json_t **report);

/* agent.package: at most this big; its SHA-256 (hex) into out: 0, or
 * -1 with errno.  engine_agent.c */
#define GB_AGENT_PACKAGE_MAX ((size_t)64 << 20)
GB_MUST_CHECK int gb_agent_package_sha256(const char *path, char out[65]);
/* An agent pool's running instances not ready agent.ready_timeout after
 * they ran: each gets a "not-ready" event with its agent's last words
 * and is terminated (the pool's converge replaces it).  Returns how many
 * (0 for other pools).  engine_agent.c */
int gb_engine_agent_overdue(gb_engine *e, const gb_pool_row *row);

/* The pool as JSON: name, team, purpose, state, desired, running,
 * pending, clouds, price_per_hour, age_s, ttl_left_s, instances[...].
 * New reference, NULL when unknown or when the store failed
 * (gb_store_errmsg): never a pool without the instances it could not
 * read. */
GB_MUST_CHECK json_t *gb_engine_pool_json(gb_engine *e, const char *pool);
/* Every pool (team NULL = all) but the destroyed ones (kept as
 * history: with include_destroyed, those too).  New reference (array),
 * NULL when the store failed (gb_store_errmsg). */
GB_MUST_CHECK json_t *gb_engine_pools_json(gb_engine *e, const char *team,
                             int include_destroyed);

/* Cost: billed seconds x price at launch, grouped by "team", "pool",
 * "cloud" or "label:KEY", counting time after since_s (0 = all time),
 * of the pools of `team` only when it is not NULL.  An instance is
 * billed from its launch to its end (or now), and at least the minimum
 * of its cloud's loaded driver (billing_minimum_s), as the clouds bill.
 * rolled_back: the instances made by a create whose intent failed (the
 * engine deleted them again), rolled_back_cost their cost (part of
 * cost).  hours: billed hours.
 * New reference: {total, currency, since, groups:[{key, cost, hours,
 * instances, rolled_back, rolled_back_cost}]}; NULL when the store
 * failed (gb_store_errmsg): never a report of what it could not read. */
GB_MUST_CHECK json_t *gb_engine_cost(gb_engine *e, const char *by, int64_t since_s,
                       const char *team);

/* Each configured team's month against its budget (engine_budget.c),
 * team NULL = every team, else that one only: [{team, budget (null
 * without one), warn_fraction, spent (this month, UTC), per_hour (its pending
 * and running instances now), projected (spent + what runs now until
 * the month's end or its pool's TTL), spent_fraction, projected_fraction
 * (null without a budget), state: "ok" | "warning" (spent >= warn_fraction) |
 * "over" (spent >= budget) | "no budget", month_end}].  New reference,
 * NULL when the store failed (gb_store_errmsg): never a month of $0. */
GB_MUST_CHECK json_t *gb_engine_budgets(gb_engine *e, const char *team);
/* Sets "team_budget" of a pool's JSON (or of each in an array) to its
 * team's element of budgets (gb_engine_budgets; shared, not copied);
 * nothing for a team budgets does not list. */
void gb_engine_budget_attach(json_t *pools, json_t *budgets);

/* ---- usage (engine_usage.c) ---- */
/* A heartbeat sample stands for the instance's utilisation until its
 * next one, for this long at most; time no sample covers (an instance
 * that sends none, before its first, a gap) is unmeasured. */
#define GB_USAGE_HOLD_MS (10 * 60 * 1000)
typedef struct gb_usage_inst {
	int64_t id;               /* the store id its samples name */
	int64_t start_ms, end_ms; /* billed: launch .. billed end */
	int gpu_count;
	size_t row;               /* the caller's own index */
} gb_usage_inst;
typedef struct gb_usage_bucket {
	double bought_h;   /* GPU-hours bought */
	double measured_h; /* of those, GPU-hours a sample covers */
	double busy_h;     /* sum of measured x utilisation */
} gb_usage_bucket;
/* Sums the instances v[0..n) over [since_ms, until_ms) into out[24]
 * (UTC hour of day) or out[7] (by_weekday: mon..sun), with the samples
 * s[0..ns) (sorted by instance_id, then time_ms); per_inst (NULL or n
 * elements) gets each instance's sums.  1 when any time was measured. */
int gb_usage_compute(const gb_usage_inst *v, size_t n,
                     const gb_hb_sample *s, size_t ns, int by_weekday,
                     int64_t since_ms, int64_t until_ms,
                     gb_usage_bucket *out, gb_usage_bucket *per_inst);
/* The usage report of `pool` (NULL: all) or of `team`'s pools (NULL:
 * all), by "hour" (default) or "weekday", over [since_ms, until_ms):
 * {by, since, until, pool, team, gpu_hours, measured_gpu_hours,
 *  unmeasured_gpu_hours, gpu_util (null: nothing measured),
 *  idle_gpu_hours (measured x (1 - gpu_util)), unmeasured_instances,
 *  buckets:[{bucket ("00".."23" | "mon".."sun"), gpu_hours, ...}],
 *  pools:[{pool, team, instances, unmeasured_instances, gpu_hours, ...}]}
 * New reference, NULL when the store failed (gb_store_errmsg). */
/* The shared-GPU admission over the stored pools (engine_admission.c,
 * admission.h): {queue:[{position, pool, team, priority, count, held,
 * waits_for, preempting, reason, ahead:[pool...]}], resources:[{name,
 * kind, capacity, used}], preemptions:[{victim, for, count, why,
 * reason}]}.  The pools that must wait are pushed to blocked (may be
 * NULL).  New reference; never NULL (empty lists when nothing is
 * shared or the store failed). */
/* leaving (may be NULL): instances of pool already under a preemption
 * notice (still running until their grace ends). */
typedef int (*gb_engine_leaving_fn)(void *ud, const char *pool);
json_t *gb_engine_admission(gb_engine *e, int64_t now,
                            gb_engine_leaving_fn leaving, void *ud,
                            gb_strv *blocked);
/* Ends k of pool's live instances (the newest first) for a preemption
 * whose grace is over; reason goes to the event.  The pool keeps its
 * size: it waits in the queue for them again.  0, or -1 with
 * res->message. */
GB_MUST_CHECK int gb_engine_preempt(gb_engine *e, const char *pool, int k,
                      const char *reason, gb_engine_result *res);

GB_MUST_CHECK json_t *gb_engine_usage(gb_engine *e, const char *by, const char *pool,
                        const char *team, int64_t since_ms, int64_t until_ms);

/* Replace the catalog the engine plans from (the caller makes sure no
 * engine call runs meanwhile, e.g. the daemon's config write lock). */
void gb_engine_set_catalog(gb_engine *e, gb_catalog *cat);

/* For tests and the daemon's metrics. */
typedef struct gb_engine_stats {
	uint64_t failovers;
	uint64_t creates;
	uint64_t terminates;
	uint64_t preemptions;
	uint64_t gc_terminated;
	uint64_t gc_adopted;
	uint64_t gc_listed;     /* (driver, region) listings a gc made */
	uint64_t gc_reused;     /* ... and took from the pass's refresh */
	uint64_t rolled_back;   /* instances a partial colocated create made
	                           and the engine deleted again */
} gb_engine_stats;
void gb_engine_stats_get(gb_engine *e, gb_engine_stats *out);

#endif
