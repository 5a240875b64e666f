/*
 * store.h -- gpubroker's state, in one of two backends behind this one
 * interface (store_int.h):
 *   - SQLite (the default): a file (WAL, foreign keys, busy timeout so a
 *     CLI and a daemon can share it; the file is 0600);
 *   - PostgreSQL, when the target is postgresql://USER@HOST:PORT/DB?...
 *     (or postgres://): several daemons (replicas) on several hosts share
 *     it.  The password never comes from the URL: libpq's PGPASSWORD,
 *     PGPASSFILE (~/.pgpass), or the caller's (gb_store_open_auth).
 * Both have the same tables and migrations.
 *
 * Tables: meta (schema version, broker id), pools, instances, intents
 * (the journal: written and committed BEFORE any create or terminate
 * call), events, audit, offers (refreshed prices with provenance),
 * decisions (plan records), unavailable (failover cooldowns shared by all
 * pools and processes), leases (who converges a pool; see "leases").
 *
 * Threading: one connection guarded by a recursive mutex; a transaction
 * (gb_store_begin .. commit/rollback) holds it, so statements of other
 * threads never slip into it.  Every function is one transaction unless
 * called inside an explicit one.  Threads may share one gb_store (the
 * daemon's API workers and reconciler do): error messages are kept per
 * thread, so each thread reads its own (see gb_store_errmsg).
 *
 * Ownership: row structs returned through out-parameters own their
 * strings; release them with the matching *_free.  Lists are arrays the
 * caller frees with the matching *_list_free.
 *
 * Return values: 0 ok, 1 not found (getters), -1 error (message via
 * gb_store_errmsg, from the thread that made the call).
 */
#ifndef GB_STORE_H
#define GB_STORE_H

#include <jansson.h>
#include <stdint.h>

#include "util.h"

typedef struct gb_store gb_store;

#define GB_STORE_SCHEMA_VERSION 10

/* Opens (creating and migrating) the state at `target`: a SQLite path,
 * or a postgresql:// URL.  password: NULL = libpq's own mechanisms; it is
 * registered for redaction and never shown.  Errors name the target as
 * gb_store_path shows it (no secret). */
GB_MUST_CHECK int gb_store_open_auth(const char *target, const char *password,
                       gb_store **out, char *err, size_t cap);
GB_MUST_CHECK int gb_store_open(const char *target, gb_store **out, char *err, size_t cap);
struct gb_config;
/* Opens cfg->state_path with the password from cfg->state_password (a
 * source: env:NAME or file:PATH) when it is set. */
GB_MUST_CHECK int gb_store_open_cfg(const struct gb_config *cfg, gb_store **out, char *err,
                      size_t cap);
void gb_store_close(gb_store *s);
/* Whether an open's error (err of gb_store_open*) says the database is
 * there but cannot take this connection now -- no free connection slot
 * (the server's, the database's or the role's), starting up, shutting
 * down, in recovery -- so a later try may work (a
 * daemon starting waits for it, as a running one reconnects). */
int gb_store_open_retryable(const char *err);
/* Whether target names a PostgreSQL database (postgresql:// or
 * postgres://) rather than a SQLite file. */
int gb_store_is_url(const char *target);
/* "sqlite" or "postgresql". */
const char *gb_store_backend_name(const gb_store *s);
/* 1 when several hosts may share this store (PostgreSQL): pools are then
 * converged under leases (below) instead of file locks. */
int gb_store_is_shared(const gb_store *s);
/* The calling thread's last store error: the message of the last call
 * on this thread that returned -1, whichever store it was on; other
 * threads' errors never show here.  A call that succeeds leaves it as it
 * was; "" when this thread had none.  `s` is not used (it stays for the
 * callers).  Borrowed: the string is this thread's buffer, valid until
 * this thread's next store call, and gone with the thread; it never
 * points into `s`, so it may be read after gb_store_close. */
const char *gb_store_errmsg(gb_store *s);
/* The file, or the URL without its password and options (borrowed). */
const char *gb_store_path(const gb_store *s);

/* Tells whether the database may have changed since an earlier call:
 * v[0] counts the rows written through this connection
 * (sqlite3_total_changes64), v[1] moves on every commit by any other
 * connection, other processes included (PRAGMA data_version).  Unequal
 * values mean "maybe changed"; equal ones mean unchanged.  Never waits
 * for a thread that holds the store: 1 = busy (try later), 0 = v filled,
 * -1 = error. */
GB_MUST_CHECK int gb_store_version_try(gb_store *s, int64_t v[2]);
/* A version read by gb_store_version_try; known = 0 when the store was
 * busy then (any later comparison says "moved"). */
typedef struct gb_store_ver {
	int64_t v[2];
	int known;
} gb_store_ver;
/* Fills *at with the version now (known = 0 when the store is busy). */
void gb_store_ver_read(gb_store *s, gb_store_ver *at);
/* Whether the store may have changed since *at: 1 moved (or *at unknown),
 * 0 unchanged, -1 busy or error (ask later).  Never waits. */
GB_MUST_CHECK int gb_store_ver_moved(gb_store *s, const gb_store_ver *at);

/* A round trip to the database (a lost PostgreSQL connection is made
 * again, with backoff): 0, or -1 with "the state store URL is
 * unreachable: ..." as the error. */
GB_MUST_CHECK int gb_store_ping(gb_store *s);

GB_MUST_CHECK int gb_store_begin(gb_store *s);
GB_MUST_CHECK int gb_store_commit(gb_store *s);
void gb_store_rollback(gb_store *s);

/* ---- pools ---- */
typedef struct gb_pool_row {
	char *name;
	char *team;
	char *spec_json;        /* canonical spec JSON */
	char *spec_hash;
	char *state;            /* "active" | "destroying" | "destroyed" */
	int desired;            /* instances wanted now (scale changes it) */
	int64_t created_at;     /* unix s, survives restarts: TTL counts from it */
	int64_t updated_at;
	int64_t ttl_s;          /* 0 = none */
	int64_t idle_timeout_s; /* 0 = none */
	int64_t last_heartbeat_at; /* 0 = never */
	int64_t last_gpu_use_at;   /* last heartbeat showing GPU use; 0 = never */
	char *destroy_reason;   /* why destroying/destroyed; may be NULL */
	int64_t generation;     /* bumped on every apply/scale */
	char *note;             /* why the pool is short of `desired` and
	                           what the engine does about it; NULL when
	                           nothing is pending (an apply or a scale
	                           clears it) */
	int64_t retry_at_ms;    /* unix ms before which placing more cannot
	                           succeed (every candidate cooling down or
	                           paced); 0 = now */
	int64_t incarnation;    /* 1, bumped each time the name is applied
	                           again after a destroy (gb_store_pool_put):
	                           instances, events and samples keep the
	                           incarnation and team they were made under */
} gb_pool_row;

void gb_pool_row_free(gb_pool_row *r);
/* Insert or update by name (keeps created_at of an existing pool unless
 * it was destroyed, in which case the pool starts over as a new
 * incarnation: r->incarnation is not read). */
GB_MUST_CHECK int gb_store_pool_put(gb_store *s, const gb_pool_row *r);
GB_MUST_CHECK int gb_store_pool_get(gb_store *s, const char *name, gb_pool_row *out);
/* team NULL = all; include_destroyed 0 = only active/destroying. */
GB_MUST_CHECK int gb_store_pool_list(gb_store *s, const char *team, int include_destroyed,
                       gb_pool_row **out, size_t *n);
void gb_pool_list_free(gb_pool_row *v, size_t n);
/* The steady pools, in one query: active, no open intent, every live
 * instance (state other than terminated) running, and exactly `desired`
 * of them.  Such a pool gives a converge nothing to replace (nothing
 * preempted, failed, pending, stopping or terminating), nothing to
 * create and nothing to scale down, unless its spec no longer fits its
 * instances: the caller compares `generation` (bumped by every apply and
 * scale) with the one it last converged.  *out: caller frees with
 * gb_pool_gen_list_free; order unspecified. */
typedef struct gb_pool_gen {
	char *name;
	int64_t generation;
} gb_pool_gen;
GB_MUST_CHECK int gb_store_pool_list_steady(gb_store *s, gb_pool_gen **out, size_t *n);
void gb_pool_gen_list_free(gb_pool_gen *v, size_t n);
GB_MUST_CHECK int gb_store_pool_set_state(gb_store *s, const char *name, const char *state,
                            const char *reason);
GB_MUST_CHECK int gb_store_pool_set_desired(gb_store *s, const char *name, int desired);
GB_MUST_CHECK int gb_store_pool_heartbeat(gb_store *s, const char *name, int64_t at,
                            int gpu_busy);
/* Sets the pool's note and retry time (note NULL clears both). */
GB_MUST_CHECK int gb_store_pool_set_note(gb_store *s, const char *name, const char *note,
                           int64_t retry_at_ms);

/* ---- instances ---- */
typedef struct gb_inst_row {
	int64_t id;             /* store row id */
	char *pool;
	char *cloud, *region, *zone, *instance_type, *capacity;
	char *provider_id;      /* may be NULL until known */
	char *name;
	char *token;            /* the create intent's token */
	char *state;            /* pending|running|stopping|preempted|failed|
	                           terminating|terminated */
	char *state_reason;
	char *private_ip, *public_ip;
	char *gpu_model;
	int gpu_count;
	double price_per_hour;  /* price at launch (spot price for spot) */
	/* times in unix milliseconds; 0 = not (yet) */
	int64_t launched_ms;    /* billing starts: when the create was issued */
	int64_t running_ms;
	int64_t terminate_requested_ms;
	int64_t terminated_ms;  /* billing ends: set only once the cloud
	                           confirmed termination (then it is the
	                           termination request time, when clouds stop
	                           billing) or a preemption was seen */
	int64_t last_seen_ms;
	int64_t last_heartbeat_at;
	double last_gpu_util;
	int64_t intent_id;
	int name_index;         /* the N in <pool>-<N> */
	char *team;             /* the pool's team and incarnation when the */
	int64_t pool_inc;       /* instance was recorded (not written by
	                           gb_store_inst_put: taken from the pool) */
} gb_inst_row;

void gb_inst_row_free(gb_inst_row *r);
/* Inserts, or updates the live row with the same (cloud, provider_id)
 * (a terminated row is never revived: ids such as on-prem node names may
 * be reused by a new instance).  Sets r->id. */
GB_MUST_CHECK int gb_store_inst_put(gb_store *s, gb_inst_row *r);
GB_MUST_CHECK int gb_store_inst_get(gb_store *s, int64_t id, gb_inst_row *out);
GB_MUST_CHECK int gb_store_inst_find(gb_store *s, const char *cloud,
                       const char *provider_id, gb_inst_row *out);
/* A live instance by provider id or name (any cloud): 0, 1 = none. */
GB_MUST_CHECK int gb_store_inst_lookup(gb_store *s, const char *id_or_name,
                         gb_inst_row *out);
/* pool NULL = every pool; live_only = not terminated. */
GB_MUST_CHECK int gb_store_inst_list(gb_store *s, const char *pool, int live_only,
                       gb_inst_row **out, size_t *n);
void gb_inst_list_free(gb_inst_row *v, size_t n);
/* The store ids of every instance made by a create whose intent was
 * closed 'failed' (a partial create the engine rolled back), ascending.
 * 0 with *out (caller frees with free(); NULL when *n is 0), or -1. */
GB_MUST_CHECK int gb_store_inst_rolled_back(gb_store *s, int64_t **out, size_t *n);
/* at: unix ms of the observation. */
GB_MUST_CHECK int gb_store_inst_set_state(gb_store *s, int64_t id, const char *state,
                            const char *reason, int64_t at);
/* The same, only while the row is still in state `from` (NULL: any): 1
 * when it moved, 0 when another process (or thread) moved it first --
 * then the caller does not announce the change again -- or -1. */
int gb_store_inst_move_state(gb_store *s, int64_t id, const char *from,
                             const char *state, const char *reason,
                             int64_t at);
/* The cloud accepted a terminate request sent at `at` (unix ms): billing
 * ends there once termination is confirmed.  Only the first accepted
 * request counts. */
GB_MUST_CHECK int gb_store_inst_term_accepted(gb_store *s, int64_t id, int64_t at);
GB_MUST_CHECK int gb_store_inst_heartbeat(gb_store *s, int64_t id, int64_t at,
                            double gpu_util);
/* Highest name index used by the pool's instances or journaled creates
 * (-1 when none), so a new create never reuses a name. */
GB_MUST_CHECK int gb_store_inst_max_index(gb_store *s, const char *pool, int *out);
/* The same, but a failed create on a cloud named in clean_clouds ("aws,
 * gcp"; NULL: none) that recorded no instance spent no name: there a
 * refused create made nothing that could hold one (driver.h's
 * GB_DRV_CAP_ATOMIC_CREATE), so a walk of refusals does not push the
 * pool's names up. */
GB_MUST_CHECK int gb_store_inst_max_spent(gb_store *s, const char *pool,
                            const char *clean_clouds, int *out);

/* ---- intents (the journal) ---- */
typedef struct gb_intent_row {
	int64_t id;
	char *kind;             /* "create" | "terminate" */
	char *pool;
	char *cloud, *region, *zone, *instance_type, *capacity;
	int count;
	char *token;
	char *name_prefix;
	int first_index;
	double price_per_hour;
	char *gpu_model;
	int gpu_count;
	char *state;            /* "open" | "done" | "failed" */
	char *error;
	char *detail;           /* JSON: terminate targets etc. */
	int64_t created_at, closed_at; /* unix ms */
} gb_intent_row;

void gb_intent_row_free(gb_intent_row *r);
/* Writes and COMMITS the intent (state open); sets r->id. */
GB_MUST_CHECK int gb_store_intent_open(gb_store *s, gb_intent_row *r);
GB_MUST_CHECK int gb_store_intent_close(gb_store *s, int64_t id, const char *state,
                          const char *error);
GB_MUST_CHECK int gb_store_intent_list_open(gb_store *s, gb_intent_row **out, size_t *n);

/* A create that made some of its instances and then failed (the engine
 * rolled them back to keep a colocated pool in one place): what the
 * engine paces its next such attempt by. */
typedef struct gb_partial_row {
	int64_t intent_id;
	int64_t at_ms;          /* when it was journaled (unix ms) */
	char *cloud, *region, *zone, *instance_type;
	int asked;              /* instances the create asked for */
	int made;               /* instances it made (and were rolled back) */
} gb_partial_row;

/* The pool's failed creates journaled at or after since_ms that made at
 * least one instance, newest first.  *out is the caller's: free it with
 * gb_partial_list_free.  0, or -1 with the error set. */
GB_MUST_CHECK int gb_store_partials(gb_store *s, const char *pool, int64_t since_ms,
                      gb_partial_row **out, size_t *n);
void gb_partial_list_free(gb_partial_row *v, size_t n);
void gb_intent_list_free(gb_intent_row *v, size_t n);

/* ---- events ---- */
typedef struct gb_event_row {
	int64_t id;
	int64_t time_ms;
	char *pool;       /* may be NULL */
	char *instance;   /* provider id or name; may be NULL */
	char *kind;       /* created, running, preempted, failover, ... */
	char *message;
	char *team;       /* the pool's team when written; NULL without pool */
	int64_t pool_inc; /* the pool's incarnation then; 0 without pool */
} gb_event_row;

GB_MUST_CHECK int gb_store_event(gb_store *s, const char *pool, const char *instance,
                   const char *kind, const char *fmt, ...) GB_PRINTF(5, 6);
/* Events with id > after_id (pool NULL = all, since_ms 0 = any), oldest
 * first, at most limit (0 = 1000). */
GB_MUST_CHECK int gb_store_event_list(gb_store *s, const char *pool, int64_t after_id,
                        int64_t since_ms, size_t limit, gb_event_row **out,
                        size_t *n);
void gb_event_list_free(gb_event_row *v, size_t n);
/* Frees one row's strings (the row itself is the caller's). */
void gb_event_row_free(gb_event_row *e);

/* ---- audit ---- */
typedef struct gb_audit_row {
	int64_t id;
	int64_t time_ms;
	char *actor, *role, *team, *action, *target, *result, *detail;
	char *pool;       /* the pool the row is about, or NULL */
	char *pool_team;  /* the team that owned it when written, or NULL */
	int64_t pool_inc; /* its incarnation then; 0 without one */
} gb_audit_row;

/* Writes r; pool_team and pool_inc are not read: they are the pool row's
 * (named by r->pool) at the time of writing. */
GB_MUST_CHECK int gb_store_audit(gb_store *s, const gb_audit_row *r);
/* Rows with id > after_id, oldest first, at most limit (0 = 1000); team
 * non-NULL: only rows whose actor's team or pool's team (then) it is. */
GB_MUST_CHECK int gb_store_audit_list(gb_store *s, int64_t after_id,
                        const char *team, size_t limit,
                        gb_audit_row **out, size_t *n);
void gb_audit_list_free(gb_audit_row *v, size_t n);

/* ---- decisions (plan records) ---- */
/* Records the pool's decision, unless it is the same record as the
 * pool's latest (one record per change, not per apply). */
GB_MUST_CHECK int gb_store_decision(gb_store *s, const char *pool, json_t *record);
/* The pool's latest decision record (the plan its placement walked):
 * 0 with *out = {"time": when it was recorded (RFC 3339), "plan": the
 * record}
 * (a new reference: caller json_decref's it); 1 when none is recorded
 * (or it does not parse); -1 on a store error. */
GB_MUST_CHECK int gb_store_decision_last(gb_store *s, const char *pool, json_t **out);

/* ---- refreshed offers ---- */
typedef struct gb_offer_row {
	char *cloud, *region, *zone, *instance_type, *capacity;
	char *gpu_model;
	int gpu_count, gpu_memory_gb, vcpus;
	double ram_gb, price;
	char *source;
	int64_t fetched_at;
} gb_offer_row;

/* Replaces every stored offer of `cloud` in `region` (NULL = all regions
 * of the cloud) with the given rows, in one transaction, and moves meta
 * "offers_version" (unix ms of the change): a process planning from the
 * stored offers reloads them when it moved. */
GB_MUST_CHECK int gb_store_offers_replace(gb_store *s, const char *cloud,
                            const char *region, const gb_offer_row *v,
                            size_t n);
GB_MUST_CHECK int gb_store_offers_list(gb_store *s, gb_offer_row **out, size_t *n);
void gb_offer_list_free(gb_offer_row *v, size_t n);

/* ---- failover cooldowns ---- */
GB_MUST_CHECK int gb_store_unavailable_mark(gb_store *s, const char *cloud,
                              const char *region, const char *zone,
                              const char *instance_type, const char *capacity,
                              int64_t until_s, const char *reason);
/* 1 and the reason/until when marked and not expired, else 0. */
GB_MUST_CHECK int gb_store_unavailable_check(gb_store *s, const char *cloud,
                               const char *region, const char *zone,
                               const char *instance_type, const char *capacity,
                               int64_t now_s, char *reason, size_t cap,
                               int64_t *until_s);

/* ---- heartbeat samples (store_usage.c) ---- */
typedef struct gb_hb_sample {
	int64_t instance_id;
	int64_t time_ms;  /* unix ms */
	double gpu_util;  /* 0..1 */
} gb_hb_sample;
/* Broker tokens exchanged for CI ID tokens (POST /v1/auth/oidc), kept
 * by the SHA-256 (hex) of the token, never the token (store_auth.c). */
typedef struct gb_xtoken_row {
	char *actor;        /* "oidc:" + the ID token's subject */
	char *role;         /* gb_role_name */
	char *team;
	char *labels;       /* JSON object: ci-repository, ci-ref, ci-run */
	int64_t created_ms; /* wall clock */
	int64_t expires_ms;
} gb_xtoken_row;
/* Records a token: 0, or -1 (also when the hash is there already). */
int gb_store_xtoken_add(gb_store *s, const char *sha256,
                        const gb_xtoken_row *row);
/* The token of sha256 unexpired at now_ms: 0 with *out
 * (gb_xtoken_row_free it), 1 none (unknown or expired), -1 error. */
int gb_store_xtoken_get(gb_store *s, const char *sha256, int64_t now_ms,
                        gb_xtoken_row *out);
void gb_xtoken_row_free(gb_xtoken_row *r);
/* Replay: records key (an ID token's hash, or its issuer and jti) until
 * expires_ms, first dropping every key expired at now_ms.  0 = first
 * time (recorded), 1 = seen before and not expired, -1 error. */
int gb_store_oidc_seen(gb_store *s, const char *key, int64_t expires_ms,
                       int64_t now_ms);
/* Deletes exchanged tokens expired at now_ms; *n (may be NULL) gets
 * how many.  0 / -1. */
int gb_store_xtoken_prune(gb_store *s, int64_t now_ms, int64_t *n);

/* ---- instance agents (store_agent.c) ----
 * Each agent pool's instance gets a one-time bootstrap token at create,
 * exchanged once for an instance credential; both kept by their SHA-256
 * (hex), never the token. */
/* Records the bootstrap token of instance `name` of `pool`, usable until
 * expires_ms.  0 / -1. */
int gb_store_agent_mint(gb_store *s, const char *pool, const char *name,
                        const char *boot_sha256, int64_t expires_ms);
/* Exchanges the bootstrap token boot_sha256 of instance `name` (live row
 * inst_id) for the credential cred_sha256, once: 0 done, 1 refused
 * (unknown, expired, used already, another instance's, revoked), -1
 * error. */
int gb_store_agent_register(gb_store *s, const char *name,
                            const char *boot_sha256, int64_t inst_id,
                            const char *cred_sha256, int64_t now_ms);
/* Whether boot_sha256 is a bootstrap token of instance `name` that may
 * still be exchanged at now_ms: 1 yes, 0 no, -1 error. */
int gb_store_agent_token_open(gb_store *s, const char *name,
                              const char *boot_sha256, int64_t now_ms);
/* The instance a credential reports for, while the credential is not
 * revoked and its instance is live (not terminating, terminated,
 * preempted or failed): 0 with *inst_id, name[cap] and *ready (whether
 * its agent made it ready; ready may be NULL), 1 none, -1 error. */
int gb_store_agent_auth(gb_store *s, const char *cred_sha256,
                        int64_t *inst_id, char *name, size_t cap,
                        int *ready);
/* Keeps the agent's report (JSON text) of instance inst_id at now_ms;
 * ready: its GPUs match the offer (ready_ms kept from the first such
 * report; 0 again when a report does not match).  0 / -1. */
int gb_store_agent_report(gb_store *s, int64_t inst_id, int64_t now_ms,
                          const char *report, int ready);
/* Revokes every credential and unused bootstrap token of instance
 * inst_id (gb_store_inst_term_accepted calls it).  0 / -1. */
int gb_store_agent_revoke(gb_store *s, int64_t inst_id, int64_t now_ms);
/* The last report (JSON text) the agent of instance inst_id sent: 0
 * with *report (caller frees), 1 none yet, -1 error. */
int gb_store_agent_last(gb_store *s, int64_t inst_id, char **report);
/* The live instances of pool whose agent made them ready: 0 with *ids
 * (caller frees) and *n, or -1. */
int gb_store_agent_ready(gb_store *s, const char *pool, int64_t **ids,
                         size_t *n);

/* Keeps one heartbeat of instance `id` (its pool read from the
 * instance's row; nothing when there is no such row) at `at_ms`, unless
 * the instance has a sample less than a second older (a flood of
 * heartbeats keeps one row a second). */
GB_MUST_CHECK int gb_store_hb_add(gb_store *s, int64_t id, int64_t at_ms, double gpu_util);
/* The samples with from_ms <= time_ms < to_ms, of `pool` only when it is
 * not NULL, ordered by instance then time.  0 with *out (caller frees
 * with free(); NULL when *n is 0), or -1. */
GB_MUST_CHECK int gb_store_hb_list(gb_store *s, const char *pool, int64_t from_ms,
                     int64_t to_ms, gb_hb_sample **out, size_t *n);
/* Deletes the samples taken before before_ms, in batches as
 * gb_store_prune.  0 with *n deleted, or -1. */
GB_MUST_CHECK int gb_store_hb_prune(gb_store *s, int64_t before_ms, int64_t *n);

/* ---- autoscale (store_autoscale.c) ----
 * An autoscaled pool's demand signal and the autoscaler's state, in the
 * store so that a signal sent to any replica reaches the one that
 * converges the pool, every replica shows the same state, and a restart
 * keeps the window clocks.  A row belongs to the pool's incarnation: a
 * name applied again after a destroy starts empty. */
typedef struct gb_as_row {
	int demand;            /* 0 = none */
	int64_t demand_until;  /* unix s */
	char *state;           /* the decision state (JSON text); may be NULL */
	char *last;            /* the latest decision as status shows it
	                          (JSON text); may be NULL */
	char *refused;         /* the last refusal reported; may be NULL */
} gb_as_row;
void gb_as_row_free(gb_as_row *r);
/* The pool's row: 0, 1 when none (*out zeroed), -1. */
int gb_store_as_get(gb_store *s, const char *pool, gb_as_row *out);
/* Sets the demand signal (n 0 withdraws it).  *changed: 1 when that
 * changes the signal in force at now_s (another n, or none was in
 * force), 0 when it only moves an identical signal's end.  0 or -1. */
int gb_store_as_demand(gb_store *s, const char *pool, int n, int64_t until,
                       int64_t now_s, int *changed);
/* Saves the decision state, the latest decision and the last refusal
 * (NULL clears it); the demand stays.  Writes nothing when they are
 * what is stored already.  0 or -1. */
int gb_store_as_save(gb_store *s, const char *pool, const char *state,
                     const char *last, const char *refused);

/* ---- retention and size (store_prune.c) ---- */
/* Deletes audit rows written before audit_before_ms and events before
 * events_before_ms (unix ms; 0 = keep them all), in transactions of at
 * most a few thousand rows so other writers are not held up.  0 with the
 * counts deleted, or -1. */
GB_MUST_CHECK int gb_store_prune(gb_store *s, int64_t audit_before_ms,
                   int64_t events_before_ms, int64_t *audit_n,
                   int64_t *events_n);
/* Deletes the decision records written before before_ms, except each
 * pool's latest (what `status` shows), in batches as gb_store_prune.
 * 0 with *n deleted, or -1. */
int gb_store_decisions_prune(gb_store *s, int64_t before_ms, int64_t *n);
/* The state's size on disk (the database and its -wal and -shm files,
 * bytes) and what the filesystem holding it has left for this user
 * (bytes; -1 unknown).  Never waits for the store. */
GB_MUST_CHECK int gb_store_size(gb_store *s, int64_t *bytes, int64_t *free_bytes);

/* ---- leases (store_lease.c) ----
 * A lease names something one process at a time may do ("pool:NAME":
 * converge that pool; "leader": orphan gc and price refresh).  Each has
 * an owner (this store's random owner id, one per gb_store), an expiry
 * on the DATABASE's clock, and a fencing token that grows every time the
 * lease changes hands.  While the store is fenced (gb_store_fence_on),
 * every journal write of a pool (intent opened, intent closed, instance
 * recorded) checks, in its own transaction, that this store still holds
 * the pool's lease with the token it was granted: a holder that was
 * paused past its expiry, partitioned or slow can open no intent, so
 * makes no cloud call, once another has taken over. */

/* Takes or renews `name` for ttl_ms.  0 = held (*token set; it moved on
 * when the lease changed hands), 1 = another owner holds it unexpired
 * (holder, when not NULL, gets its owner id), -1 = error. */
GB_MUST_CHECK int gb_store_lease_acquire(gb_store *s, const char *name, int64_t ttl_ms,
                           int64_t *token, char *holder, size_t cap);
/* Renews every lease this store holds; a lease found lost (taken over,
 * or expired and gone) is forgotten.  Returns how many were lost, or -1
 * (database unreachable: nothing is forgotten; the fencing check is what
 * keeps a stale holder from writing). */
GB_MUST_CHECK int gb_store_lease_renew_all(gb_store *s, int64_t ttl_ms);
/* Gives `name` up (expires it now, keeping its token); 0 or -1. */
GB_MUST_CHECK int gb_store_lease_release(gb_store *s, const char *name);
/* Shared store: the server ends a session that sits inside a transaction
 * for longer than ms (its process paused or cut off while it held the
 * writers' lock), so the other replicas are held up for less than that;
 * keep it under a third of the lease, so a paused replica never makes the
 * others miss their renewals.  Kept across reconnects.  0 or -1. */
GB_MUST_CHECK int gb_store_set_idle_tx(gb_store *s, int64_t ms);
/* Gives up every lease (on close and shutdown); errors are ignored. */
void gb_store_lease_release_all(gb_store *s);
/* Asks the holder of `name` to give it up when it can (the holder's
 * gb_store_lease_wanted sees it); 0 or -1. */
GB_MUST_CHECK int gb_store_lease_want(gb_store *s, const char *name);
/* Appends to *out the names of the leases this store holds that another
 * owner has asked for; 0 or -1. */
GB_MUST_CHECK int gb_store_lease_wanted(gb_store *s, gb_strv *out);
/* Appends to *out the names of the leases this store holds. */
GB_MUST_CHECK int gb_store_lease_list(gb_store *s, gb_strv *out);
/* Whether this store holds `name` (its own view; the database decides
 * at the next fenced write). */
int gb_store_lease_held(gb_store *s, const char *name);
/* The owner id of this store ("host:pid:random"); borrowed. */
const char *gb_store_lease_owner(gb_store *s);
/* The fencing check on its own, for the moment right before a cloud
 * call: 0 when this store holds `pool`'s lease unexpired with the token it
 * was granted (or is not fenced), else -1 with why. */
GB_MUST_CHECK int gb_store_lease_check(gb_store *s, const char *pool);
/* Journal writes of a pool check its lease from now on. */
void gb_store_fence_on(gb_store *s);
/* Sets the owner id at open (store.c). */
void gb_store_lease_owner_init(gb_store *s);

/* ---- the serving lock (store_serve.c) ----
 * A daemon serving from a SQLite state holds a shared lock on
 * "<file>.serving" for as long as it runs (released by gb_store_close or
 * its exit); `state migrate` takes it exclusive, without waiting, for as
 * long as it copies, so it never copies a state a daemon still writes to
 * and no daemon starts on a state being copied.  PostgreSQL states: no
 * lock (nothing is migrated from them). */
/* 0 held (or PostgreSQL), -1 with the error set: a migration holds it,
 * or the lock file cannot be made. */
int gb_store_serve_hold(gb_store *s);
/* For `state migrate` of the SQLite file `path`: 0 with *fd (close it
 * when done: that releases the lock), 1 when a daemon serves from it, -1
 * error; err says which. */
int gb_store_serve_exclusive(const char *path, int *fd, char *err,
                             size_t cap);

/* ---- copying a state (store_copy.c) ---- */
/* Copies every row of every table of `from` into `to` (another backend
 * is fine), ids kept, in one transaction of `to`.  Refuses (1) a target
 * that has any pool, instance, intent, event or audit row.  Then counts
 * the rows of each table on both sides; a difference is an error.
 * report (may be NULL) gets "table rows" lines.  0, 1 or -1 (error
 * set). */
GB_MUST_CHECK int gb_store_copy(gb_store *from, gb_store *to, char **report);

/* ---- meta ---- */
GB_MUST_CHECK int gb_store_meta_get(gb_store *s, const char *key, char **out);
GB_MUST_CHECK int gb_store_meta_set(gb_store *s, const char *key, const char *value);

#endif
