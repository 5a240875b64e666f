/* engine_int.h -- shared internals of engine*.c (not public). */
#ifndef GB_ENGINE_INT_H
#define GB_ENGINE_INT_H

#include <pthread.h>

#include "engine.h"

/* The outcome of one journaled terminate call (a group: one pool, cloud
 * and region) that the store refused to record (a full disk, an I/O
 * error): kept in memory and written by gb_engine__settle, in one
 * transaction, before anything else the engine does next. */
typedef struct gb_term_outcome {
	int64_t intent_id;     /* the group's terminate intent */
	char *pool;
	char *error;           /* intent closed "failed" with it; NULL: "done" */
	size_t n;              /* rows whose terminate the cloud accepted: */
	int64_t *row;          /*   their store ids */
	int64_t *at_ms;        /*   when their call returned (unix ms) */
	char *cause;           /* the store error that kept it here */
	struct gb_term_outcome *next;
} gb_term_outcome;

typedef struct pool_lock {
	char *name;
	pthread_mutex_t mu;
	int users;
	int fd;          /* flock'ed file while held, else -1 */
	int leased;      /* shared store: this operation took its lease */
	int destroy_wanted; /* destroys waiting for this lock (locks_mu) */
	struct pool_lock *next;
} pool_lock;

struct gb_engine {
	gb_engine_opts o;
	int workers;
	int64_t cooldown_s;
	int64_t confirm_timeout_s;
	int64_t poll_ms;
	char *broker_id;        /* owned copy: a SIGHUP reload frees the
	                           config the engine was started with */
	pthread_mutex_t locks_mu;
	pool_lock *locks;
	pthread_mutex_t stats_mu;
	gb_engine_stats stats;
	/* The listings of the last gb_engine_refresh_all(e, 1), kept for the
	 * gc that follows it in the same reconcile pass (engine_observe.c's
	 * dgroup array; taken, or dropped by the next refresh). */
	pthread_mutex_t kept_mu;
	void *kept;
	size_t nkept;
	int64_t kept_ms;  /* mono ms of its describes */
	/* Terminate outcomes the store refused (engine_destroy.c), oldest
	 * first.  pend_mu guards the list and is a leaf lock (nothing else
	 * is taken while it is held); settle_mu lets one thread at a time
	 * write them and is taken before the store's lock, never after. */
	pthread_mutex_t pend_mu;
	pthread_mutex_t settle_mu;
	gb_term_outcome *pend;
	int64_t pend_logged_ms; /* mono ms of the last "still refused" log */
	/* Plans recorded by gb_engine_submit, kept for the converge that
	 * places them (engine_plan.c).  plans_mu is a leaf lock. */
	pthread_mutex_t plans_mu;
	struct gb_kept_plan *plans;
	/* Pools whose last converge had nothing to do, with the generation
	 * it saw: pool name -> integer (engine_settled.c).  settled_mu is a
	 * leaf lock. */
	pthread_mutex_t settled_mu;
	json_t *settled;
	/* Pools that may consolidate (engine_consolidate.c): pool name ->
	 * the unix ms of their next check; a settled pool is converged
	 * again when its check is due.  Under settled_mu. */
	json_t *consol;
	/* Clouds that refused a pool's spec for good (engine_refused.c).
	 * refused_mu is a leaf lock. */
	pthread_mutex_t refused_mu;
	struct gb_cloud_refusal *refused;
	/* Shared store (PostgreSQL): pools are leased, not flock'ed
	 * (engine.c).  The keeper thread renews the leases every third of
	 * lease_ms and gives up those another process asks for while this
	 * one is not using them. */
	int64_t lease_ms;
	pthread_t keeper;
	int keeper_started;
	pthread_mutex_t keeper_mu;
	pthread_cond_t keeper_cv;
	int keeper_stop;
};

/* Resolves the open intents of one pool (engine_observe.c), as
 * gb_engine_recover does at a start; the caller must NOT hold the pool's
 * lock (a create's replay takes it).  How many, or -1. */
int gb_engine__recover_pool(gb_engine *e, const char *pool);

/* After a converge of `pool` at `generation` (engine_settled.c): clean
 * (it created, replaced and terminated nothing, placed nothing, waited
 * for nothing) remembers the generation, anything else forgets it. */
void gb_engine__note_converge(gb_engine *e, const char *pool,
                              int64_t generation, int rc,
                              const gb_engine_result *res);
void gb_engine__drop_settled(gb_engine *e);

/* How many times one placement walk asks a place again after a create
 * there failed with GB_ERR_CODE_NODE_UNHEALTHY (the driver dropped the
 * failing machine: the place may have others).  Each failure is an
 * "unhealthy" event; past this the walk goes on down the plan. */
#define GB_NODE_RETRIES 8

/* Permanent refusals (engine_refused.c, whose header states the rules):
 * an AUTH or INVALID error of a create is the cloud's answer to the
 * spec, not to the moment, so the cloud is not asked again for this
 * spec until GB_REFUSED_RETRY_MS passed (or an apply: it forgets the
 * pool's refusals).  A pool that no candidate can place then has a
 * note starting with GB_NOTE_REFUSED ("waiting" in the API, with
 * "refused": true), and the waits (apply --wait, scale --wait) end at
 * once with exit 1 and its words. */
#define GB_REFUSED_RETRY_MS (30 * 60 * 1000)
#define GB_NOTE_REFUSED "refused: "
/* The key of a spec (sha256 hex of its canonical JSON). */
void gb_engine__spec_key(const gb_pool_spec *spec, char out[65]);
/* Records that cloud refused pool's spec (key) with err; *until_ms: when
 * it may be asked again; *words: "CLOUD refused the request (CLASS,
 * CODE): MESSAGE", redacted (caller frees).  Returns 1 when the same
 * refusal (spec, class and code) was recorded before (said already: no
 * new event), else 0. */
int gb_engine__refuse(gb_engine *e, const char *pool, const char *key,
                      const char *cloud, const gb_error *err,
                      int64_t *until_ms, char **words);
/* 1 with *until_ms and *words (caller frees) when cloud refused this
 * spec of pool and the backoff has not passed; else 0. */
int gb_engine__refused(gb_engine *e, const char *pool, const char *key,
                       const char *cloud, int64_t *until_ms, char **words);
/* Forgets pool's refusals (NULL: every pool's). */
void gb_engine__forget_refusals(gb_engine *e, const char *pool);
/* 1 when a pool's note is a permanent refusal. */
int gb_engine__note_refused(const char *note);

/* Frees the kept listings (engine_observe.c). */
void gb_engine__drop_kept(gb_engine *e);

/* The pool that holds the instances the gc terminates: orphans carry
 * this broker's id but no pool the store knows, and a terminate intent
 * and an instance row need one.  Not a valid pool name (see spec.c), so
 * no user pool can take it; kept in state "destroyed", so no pool list,
 * converge or reconcile pass sees it.  Its describes ask by broker id
 * only (its instances carry other pool tags, or none). */
#define GB_ORPHAN_POOL "(orphans)"

/* A copy of what a driver reported about one instance: its strings are
 * one allocation starting at id (gb_engine__collect), freed with it by
 * gb_seen_list_free; never free or take one alone. */
typedef struct gb_seen {
	char *id, *name, *region, *zone, *instance_type, *state_reason;
	char *private_ip, *public_ip, *token, *pool;
	gb_capacity capacity;
	gb_instance_state state;
	int64_t created_at;
	int64_t created_ms;  /* 0 = unknown (or a driver older than minor 3) */
} gb_seen;

typedef struct gb_seen_list {
	gb_seen *v;
	size_t n, cap;       /* grown geometrically */
	pthread_mutex_t *mu; /* optional, for concurrent emitters */
	uint32_t drv_minor;  /* the emitting driver's abi_minor: fields of
	                        gb_instance newer than it are not read */
	/* optional: the request; what does not match it (driver.h's
	 * gb_describe_req rules, by the tags the driver reports) is dropped,
	 * so a driver that emits more than asked cannot make the engine
	 * adopt or collect another pool's or broker's instance */
	const gb_describe_req *want;
} gb_seen_list;

/* Instance callback collecting into a gb_seen_list. */
int gb_engine__collect(void *ud, const gb_instance *inst);
void gb_seen_list_free(gb_seen_list *l);

/* The user data of instance <pool>-<index> of an agent pool on cloud
 * (its metadata service: ec2, gce, azure or none): mints and
 * keeps (hashed) its one-time bootstrap token and puts the agent's
 * config in a cloud-init part before the pool's own user_data (MIME
 * multipart).  Caller frees; NULL with err set (no agent.broker_url,
 * the store failed).  engine_agent.c */
char *gb_engine__agent_user_data(gb_engine *e, const gb_pool_spec *spec,
                                 const char *cloud, int index, gb_error *err);

void gb_engine__event(gb_engine *e, const char *pool, const char *instance,
                      const char *kind, const char *fmt, ...) GB_PRINTF(5, 6);
gb_drv *gb_engine__drv(gb_engine *e, const char *cloud);
/* Takes a pool's lock: the in-process mutex, then an flock on
 * <state>.locks/<pool>.  0 when held (release with
 * gb_engine__unlock_pool); -1 when the flock cannot be taken, with err
 * saying what, where and how to fix it: then nothing is held, and the
 * caller refuses its operation (no store change, no cloud call), since
 * another process (a CLI, the daemon) might be changing the pool. */
int gb_engine__lock_pool(gb_engine *e, const char *name, char *err,
                         size_t cap);
void gb_engine__unlock_pool(gb_engine *e, const char *name);
/* A destroy (user, TTL, idle) of pool `name` waits for its lock (on = 1,
 * until it holds it: on = 0).  While one does, a placement walk that
 * holds the lock stops before its next candidate
 * (gb_engine__destroy_wanted), so a destroy never waits for a long
 * failover walk. */
void gb_engine__want_destroy(gb_engine *e, const char *name, int on);
int gb_engine__destroy_wanted(gb_engine *e, const char *name);
/* Whether a placement walk of pool `name` stops before its next
 * candidate: a destroy of this process waits for it, or (shared store)
 * another replica asks for the pool's lease -- a user's destroy, scale
 * or apply there.  NULL to go on, else why ("the pool is being
 * destroyed"). */
const char *gb_engine__walk_stop(gb_engine *e, const char *name);
/* gb_engine__begin for a destroy: says it wants the lock first. */
int gb_engine__begin_destroy(gb_engine *e, const char *pool,
                             gb_engine_result *res);
/* How every operation on a pool starts: the terminate outcomes the store
 * refused earlier are written first (gb_engine__settle), then the pool's
 * lock is taken.  0 with the lock held; 1 when the store still refuses
 * those outcomes, -1 when the lock cannot be taken: both with
 * res->message, and nothing held. */
int gb_engine__begin(gb_engine *e, const char *pool, gb_engine_result *res);
/* The operation stops because the store failed: res->message becomes
 * "state store failed: " and the store's error (the calling thread's),
 * store_failed is set, ok cleared.  Returns -1. */
int gb_engine__store_failed(gb_engine *e, gb_engine_result *res);
/* Writes the terminate outcomes the store refused earlier (engine_destroy.c);
 * every engine operation that changes the store calls it first, so a
 * refresh never ends an instance's billing at the time it saw it gone
 * when the cloud had accepted its terminate earlier.  0 when none is
 * left; -1 with err when the store still refuses them (then the caller
 * changes nothing else). */
int gb_engine__settle(gb_engine *e, char *err, size_t cap);
/* Store ids of the rows whose terminate outcome is still unrecorded,
 * sorted (a malloc'd array the caller frees; NULL and 0 when none). */
int64_t *gb_engine__pending_rows(gb_engine *e, size_t *n);
/* 1 when the outcome of this terminate intent is still held in memory. */
int gb_engine__pending_intent(gb_engine *e, int64_t intent_id);
/* Engine teardown: a last try to write them, then they are dropped
 * (logged; their intents stay open for the next start's recovery). */
void gb_engine__drop_pending(gb_engine *e);
/* Parse a stored pool's spec JSON (engine_spec.c: once per name and
 * text, copied out; free out with gb_pool_spec_free).  0 or -1 with err. */
int gb_engine__spec(const gb_pool_row *row, gb_pool_spec *out, char *err,
                    size_t cap);
/* Its purpose name (static), "unknown" when the spec does not load. */
const char *gb_engine__spec_purpose(const gb_pool_row *row);
/* The store state string for a driver state. */
const char *gb_engine__state_str(gb_instance_state st);
/* Ask the driver to terminate rows (journaled), marking them
 * terminating.  Rows whose intent cannot be journaled (or while earlier
 * outcomes wait to be written: gb_engine__settle) are not sent and stay
 * as they are.  A row with id 0 is not in the store yet (an orphan the
 * gc found): it is inserted in the transaction that opens its intent
 * (its id set then; back to 0 when that transaction fails), so a crash
 * after the intent leaves the row for recovery, and none before it.  A
 * row whose terminate the cloud accepted gets terminate_requested_ms set
 * (when it was 0) to when the call returned: a caller that wants to know
 * which were accepted zeroes it in its copy first.  Returns 0 when every
 * call was sent and accepted, -2 when some were not sent because the
 * store failed (the journal could not be written: its error is the
 * thread's gb_store_errmsg), else -1 (a call the cloud refused). */
int gb_engine__terminate_rows(gb_engine *e, gb_inst_row **rows, size_t n,
                              const char *reason);
void gb_engine__stat(gb_engine *e, uint64_t *field, uint64_t by);
/* Instances of a pool grouped for describe: fills regions (unique
 * cloud/region pairs). */
int gb_engine__refresh_rows(gb_engine *e, const char *pool, gb_inst_row *rows,
                            size_t n);
/* Live (pending or running) instances of a pool in the store: *all of
 * them, and *of_intent those a create intent recorded (intent_id; 0 for
 * none).  0, or -1 when the store failed (its error set; both 0): a
 * store error is not "none". */
GB_MUST_CHECK int gb_engine__live(gb_engine *e, const char *pool,
                                  int64_t intent_id, int *all,
                                  int *of_intent);
/* The pool's live instance rows (not terminated), after a describe of
 * them when refresh is set: 0 with *rows (caller frees with
 * gb_inst_list_free) and *n, or -1 when the store failed (its error set;
 * *rows NULL).  pool must name one pool: never NULL. */
GB_MUST_CHECK int gb_engine__live_rows(gb_engine *e, const char *pool,
                                       int refresh, gb_inst_row **rows,
                                       size_t *n);

/* The plan of one operation (engine_plan.c).  An apply makes it once,
 * with the pool lock held: it prices the budget check, is stored as the
 * decision record and is the candidate list placement walks (failover
 * re-checks each candidate's cooldown as it comes to it). */
/* What a pool keeps while a placement walk adds to it: the walk's team
 * checks count it (gb_engine__check_place). */
typedef struct gb_engine_have {
	int count;
	double price;          /* USD/h, all of them */
	/* a capacity mix or placement.spread (converge fills these; 0 =
	 * the plan's order, as before) */
	int shaped;            /* 1: the walk shares out by kind and zone */
	int od_want;           /* of the walk's need, on-demand instances */
	int total;             /* the pool's size once placed */
	const gb_inst_row *const *keep; /* what it keeps (their zones) */
	size_t nkeep;
} gb_engine_have;

typedef struct gb_engine_plan {
	gb_plan plan;          /* valid (possibly no candidate) when rc == 0 */
	int64_t cool_until_s;  /* the earliest end of a failover cooldown that
	                          kept an offer out of the plan; 0 = none */
	gb_policy_set *ps;     /* the reference the plan's reasons borrow */
	int rc;                /* 0, or -1: planning failed, err says why */
	int store_failed;      /* rc -1 because the store failed */
	int no_match;          /* rc 0 and no candidate even without the
	                          cooldowns: no offer of the catalog passes
	                          the spec and the policies (the plan's
	                          refusals are then those of a plan made
	                          without cooldowns); 0 when there are
	                          candidates, or only cooldowns stand in
	                          the way (cool_until_s says until when) */
	char err[1024];
} gb_engine_plan;

/* Consolidation (engine_consolidate.c): a pool at its size, all
 * running, colocate none and not lifecycle.consolidate: false, whose
 * plan now has owned capacity with free room (or an offer with free room
 * at least GB_CONSOLIDATE_SAVING cheaper) than its dearest instance,
 * gets one instance there and then loses the dearest (make before
 * break); checked at most every GB_CONSOLIDATE_CHECK_MS per pool, at most
 * GB_CONSOLIDATE_PER_HOUR moves per pool per hour (counted from its
 * "consolidate" events).  Returns the instances made (0 or 1). */
#define GB_CONSOLIDATE_CHECK_MS 60000
#define GB_CONSOLIDATE_PER_HOUR 2
#define GB_CONSOLIDATE_SAVING 0.10
int gb_engine__consolidate(gb_engine *e, const gb_pool_spec *spec,
                           const gb_engine_plan *ep, int64_t generation,
                           gb_inst_row **keep, size_t nkeep);


/* 0, or -1 with ep->err (ep->rc tells the same).  Ownership: free with
 * gb_engine__plan_free either way. */
int gb_engine__plan(gb_engine *e, const gb_pool_spec *spec,
                    gb_engine_plan *ep);
void gb_engine__plan_free(gb_engine_plan *ep);
/* A pool's note (one line) for a plan with no candidate.  no_match:
 * "no offer qualifies (2180 considered: 1169 refused by cloud, ...);
 * tried again when ...".  Else (cooldowns only): "no candidate: 5
 * offers refused by capacity cooldown (InsufficientInstanceCapacity);
 * next attempt <cool_until_s>, when ...".  Caller frees. */
char *gb_engine__no_match_note(const gb_engine_plan *ep);
char *gb_engine__cooldown_note(const gb_engine_plan *ep);

/* How long a submitted plan waits for its converge before it is thrown
 * away (the converge then plans afresh). */
#define GB_KEPT_PLAN_MAX_MS 60000
/* How many offers of each kind of refusal a stored decision record keeps
 * (with the counts of all of them). */
#define GB_DECISION_REFUSALS_PER_KIND 5
/* gb_engine_submit keeps the plan it recorded as the pool's decision
 * (moved out of *ep, which is left empty), so the converge that follows
 * on another thread places from that very plan.  Replaces an older one of
 * the pool.  Caller holds the pool lock. */
void gb_engine__keep_plan(gb_engine *e, const gb_pool_row *row,
                          gb_engine_plan *ep);
/* The kept plan of row's pool when it was made for this spec and
 * generation, against the current catalog, less than
 * GB_KEPT_PLAN_MAX_MS ago: moved into *out (free it with
 * gb_engine__plan_free), returns 1.  Else 0 (a stale one is dropped).
 * Its plan borrows spec (row's, loaded by the caller) from then on: the
 * submit's spec it was made from is gone.  Caller holds the pool lock. */
int gb_engine__take_plan(gb_engine *e, const gb_pool_row *row,
                         const gb_pool_spec *spec, gb_engine_plan *out);
/* Frees every kept plan: at gb_engine_free, and when the catalog the
 * plans point into is replaced (gb_engine_set_catalog). */
void gb_engine__drop_plans(gb_engine *e);

/* Place `need` instances (engine_create.c) walking ep's candidates
 * (ep->err when planning failed), restricted to cloud/region/zone when
 * given (NULL = anywhere).  Returns 0 when all were placed; else -1 with
 * a message, *placed telling how many did get placed.  *retry_ms: when
 * the shortfall is only capacity (every candidate refused, cooling down or
 * paced, or cooldowns left the plan no candidate), the unix ms before
 * which walking again cannot place anything, and msg then says so ("no
 * zone could hold ...", "no candidate: 5 offers refused by capacity
 * cooldown ..."); also when every candidate left was refused for good
 * (engine_refused.c) or the plan failed: then msg's first line is
 * "pool P: refused: ...; next attempt T, ..." (GB_NOTE_REFUSED after
 * "pool P: ") and *retry_ms the end of the backoff; else 0.  -2 when
 * the walk stopped because the store failed (msg: "state store failed:
 * ..."): it fails over to nothing. */
int gb_engine__place(gb_engine *e, const gb_pool_spec *spec,
                     const gb_engine_plan *ep, int64_t generation, int need,
                     const char *cloud, const char *region, const char *zone,
                     const gb_engine_have *have, int *placed, char *msg,
                     size_t cap, int64_t *retry_ms);

/* The team's limits (engine_budget.c; the check itself is
 * gb_engine__check_team, engine_report.c): 0 allowed, -1 refused, -2
 * the store failed (both with msg).
 * check_team: `desired` instances of spec costing pool_price $/h in all
 * (the team's other pools counted from the store).  check_scale: the
 * pool at n instances (its live ones at their prices, the rest at its
 * best candidate's; plans, so the pool lock is held).  check_place:
 * before asking offer o for `ask` more, with `placed` already placed by
 * this walk for placed_price $/h, and what the pool keeps (have, may be
 * NULL). */
int gb_engine__check_team(gb_engine *e, const gb_pool_spec *spec, int desired,
                          double pool_price, char *msg, size_t cap);
/* The month (UTC) around unix second now: its first second, and the
 * first second of the next month. */
int64_t gb_engine__month_start(int64_t now);
int64_t gb_engine__month_end(int64_t now);
/* What team's instances cost since the month's start (gb_engine_cost). */
/* e NULL: 0 spent.  0, or -1 when the store failed. */
int gb_engine__team_spent(gb_engine *e, const char *team, int64_t now,
                          double *out);
/* Hours pool p runs from now on this month: to the month's end, or to
 * its TTL when that comes first. */
double gb_engine__pool_hours_left(const gb_pool_row *p, int64_t now);
int gb_engine__check_scale(gb_engine *e, const gb_pool_spec *spec, int n,
                           char *msg, size_t cap);
int gb_engine__check_place(gb_engine *e, const gb_pool_spec *spec,
                           const gb_engine_have *have, int placed,
                           double placed_price, const gb_coffer *o, int ask,
                           char *msg, size_t cap);

/* 1 with why and *until_s (unix s) when the offer is cooling down after
 * a capacity or quota error (the store's failover marks); else 0. */
int gb_engine__cooling(gb_engine *e, const gb_coffer *o, char *why,
                       size_t cap, int64_t *until_s);

/* Pacing of a colocated pool's partial-capable creates (engine_pace.c,
 * whose header states the rules).  The rows are the caller's. */
typedef struct gb_pace {
	gb_partial_row *v;     /* the pool's partials in the window, newest
	                          first (gb_store_partials) */
	size_t n;
	int loaded;
	int64_t window_ms;     /* the failover cooldown */
	int budget;            /* instances that may be rolled back per window */
	int spent;             /* made and rolled back within the window */
	int64_t next_ms;       /* unix ms: no such attempt before (0 = now) */
	const gb_partial_row *best; /* the partial that made most, or NULL */
} gb_pace;

/* 1 when a create of `count` on `cloud` cannot come back partial: one
 * instance, or a driver with GB_DRV_CAP_ATOMIC_CREATE. */
int gb_engine__atomic_create(gb_engine *e, const char *cloud, int count);
/* Loads the pool's partials from the store (replacing what p held).
 * budget: the pool's size.  0, or -1 when the store failed (p then paces
 * nothing). */
int gb_engine__pace_load(gb_engine *e, const char *pool, int budget,
                         gb_pace *p);
/* 1 with *until_ms when a partial-capable create in (cloud, region) must
 * wait until then; 0 when it may go now. */
int gb_engine__pace_check(const gb_pace *p, const char *cloud,
                          const char *region, int64_t now_ms,
                          int64_t *until_ms);
void gb_engine__pace_free(gb_pace *p);

/* Replay an open create intent with its token (engine_create.c).  0 when
 * replayed, 1 when given up (GB_UNKNOWN_GIVE_UP_MS) and resolved by
 * describe, -1 with err when the store failed. */
int gb_engine__replay_create(gb_engine *e, const gb_pool_spec *spec,
                             const gb_intent_row *in, char *err, size_t cap);
/* Resolve an open create intent by describe: adopt what carries its
 * token, then close it (kept open when the describe fails). */
void gb_engine__resolve_by_describe(gb_engine *e, const gb_intent_row *in);
/* A create whose outcome stays unknown this long after it was journaled
 * (every replay ended throttled or transient) is resolved by describe,
 * so a zone that keeps failing does not hold its pool forever. */
#define GB_UNKNOWN_GIVE_UP_MS (10 * 60 * 1000)

/* Billing (engine_report.c, shared by cost and usage). */
/* The provider's minimum billed time per instance of `cloud`, in ms:
 * the loaded driver's billing_minimum_s.  No driver loaded for that
 * cloud (taken out of the config since, or none at all): we know of no
 * minimum and bill the lifetime alone (0). */
int64_t gb_engine__billing_min_ms(gb_engine *e, const char *cloud);
/* Where the billing of r ends, in unix ms (0: never billed): its end
 * (terminated_ms, or now while it lives) or, when it lived less than the
 * provider's minimum min_ms, launched_ms + min_ms: clouds bill
 * max(lifetime, minimum), a live one included. */
int64_t gb_engine__billed_end_ms(const gb_inst_row *r, int64_t now_ms,
                                 int64_t min_ms);

#endif
