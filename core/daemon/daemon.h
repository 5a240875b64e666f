/*
 * daemon.h -- the daemon's insides (its entry point is serve.h): the HTTP
 * API, the job workers that converge pools in the background, and the
 * reconciler.
 *
 * Threads: the main thread waits for signals (SIGTERM/SIGINT stop,
 * SIGHUP reloads the config: tokens, teams, org policies, period);
 * the API's connection threads and handler threads (api_http.c); job
 * workers
 * run converge/destroy steps queued by the API; one reconciler thread
 * runs a pass every period or when kicked.
 *
 * Shutdown (SIGTERM): stop accepting connections, let in-flight requests
 * and driver calls finish (every cloud mutation is journaled, so an
 * interrupted operation is resolved at the next start), stop the workers
 * and the reconciler, close the store.
 */
#ifndef GB_DAEMON_H
#define GB_DAEMON_H

#include <jansson.h>
#include <pthread.h>
#include <signal.h>

#include "engine.h"
#include "http.h"
#include "session.h"
#include "store.h"

#define GB_API_LAT_BUCKETS 12
#define GB_API_POLL_BUCKETS 7

typedef struct gb_job {
	int kind;           /* GB_JOB_* */
	char *pool;
	char *reason;
	struct gb_job *next;
} gb_job;

/* A pool whose new instances are still pending, or whose destroy waits
 * for the clouds' confirmation: the reconciler thread looks at it at
 * due_ms, sooner than the next pass, until that is over. */
typedef struct gb_watch {
	char *pool;
	int64_t due_ms;     /* monotonic */
	int64_t delay_ms;   /* doubles while instances stay pending */
	struct gb_watch *next;
} gb_watch;

/* CONVERGE describes the pool first; CONVERGE_FRESH does not (queued by
 * the reconciler right after its batched describe of every pool). */
enum { GB_JOB_CONVERGE = 1, GB_JOB_DESTROY = 2, GB_JOB_CONVERGE_FRESH = 3 };

/* A preemption the admission decided (reconcile.c). */
typedef struct gb_preempt_rec {
	char *victim, *bene;
	int count;
	int64_t due;  /* unix s: the grace ends */
	int done;     /* its instances were asked to end */
	char *reason;
} gb_preempt_rec;

typedef struct gb_daemon {
	const char *config_path;  /* re-read on SIGHUP; NULL: none */
	char *file_listen;        /* the config file's listen as last read
	                             (gb_daemon_opts), owned; NULL: none */
	gb_config *cfg;           /* the caller's; swapped on reload */
	pthread_rwlock_t cfg_lock;
	gb_session app;           /* runtime, store and engine */
	gb_store *store;          /* == app.store */
	gb_engine *eng;           /* == app.eng */
	struct MHD_Daemon *mhd;
	struct gb_api_srv *srv;   /* the HTTP server's own state (api_http.c) */
	int port;
	int tls;
	volatile sig_atomic_t stop;

	pthread_mutex_t mu;       /* jobs, wakeups, event sequence */
	pthread_cond_t job_cv;
	pthread_cond_t recon_cv;
	gb_job *jobs, *jobs_tail;
	int kick;                 /* reconcile now */
	int recon_running;        /* a pass is running (under mu) */
	gb_watch *watches;        /* under mu */
	uint64_t event_gen;       /* bumped on every engine event */
	pthread_t *workers;
	int nworkers;
	pthread_t recon;
	int recon_started;
	pthread_t store_watch;    /* shared store: other replicas' changes */
	int watch_started;
	char *offers_version;     /* meta "offers_version" the catalog has
	                             (recon thread only) */
	int ready;                /* recovered and serving */

	/* metrics.  The API counters are written by every request without
	 * a lock (relaxed atomic adds: a mutex taken by every one of 50
	 * connection threads is where a preempted holder stalls the rest)
	 * and read atomically; the rest under mmu. */
	pthread_mutex_t mmu;
	uint64_t api_lat[GB_API_LAT_BUCKETS];
	uint64_t api_lat_sum_us;
	uint64_t api_count;
	uint64_t api_by_class[6]; /* 1xx..5xx by first digit */
	/* long polls that waited: their own histogram, out of api_lat
	 * (they last as long as they wait, not as the daemon takes) */
	uint64_t poll_lat[GB_API_POLL_BUCKETS];
	uint64_t poll_lat_sum_us;
	uint64_t poll_count;
	double recon_last_s, recon_sum_s;
	uint64_t recon_count;
	uint64_t ttl_destroys, idle_destroys;
	char *metrics_cache;      /* the store's part of /metrics (metrics.c) */
	int64_t metrics_at_ms;    /* its version last compared (metrics.c) */
	char *pools_cache;        /* the /v1/pools snapshot (api_pools.c) */
	uint64_t pools_gen;
	int64_t pools_at_ms;
	uint64_t pools_builds, metrics_builds; /* atomic: snapshot rebuilds */
	/* housekeeping (reconcile.c; under mmu) */
	int64_t state_bytes, state_free_bytes;
	uint64_t pruned_audit, pruned_events;
	int64_t prune_at_ms;      /* monotonic: the last retention pass */
	int64_t size_warned_ms;   /* monotonic: the last size warning */
	/* heartbeat samples past daemon.heartbeats_retention, deleted as
	 * heartbeats arrive (api_pools.c; under mmu) */
	uint64_t pruned_heartbeats;
	int64_t hb_prune_at_ms;   /* monotonic: the last such pass */
	/* replicas on a shared store (reconcile.c; under mmu) */
	size_t pools_held;        /* pools this replica reconciled last pass */
	size_t pools_skipped;     /* of those, steady and settled: converge
	                             skipped (reconcile.c) */
	int leader;               /* holds the "leader" lease (gc) */
	/* the shared-GPU admission (reconcile.c, issue 35; under mmu):
	 * the last pass's queue for GET /v1/queue, and the preemptions
	 * decided: told by events once, carried out when their grace ends */
	json_t *queue;
	struct gb_preempt_rec *preempts;
	size_t npreempts;
	/* elastic pools (autoscale.c; under mmu) */
	/* autoscale decisions, by the pool's purpose (gb_purpose) */
	uint64_t autoscale_up[3], autoscale_down[3], autoscale_refused[3];
	struct gb_oidc *oidc;     /* auth.oidc's issuers and their keys
	                             (api_auth.c) */
} gb_daemon;

/* The stop flag is written once, under mu, by the main thread; threads
 * that poll it without mu read it through this (an atomic load: a plain
 * read would be a data race). */
static inline int gb_daemon_stopping(gb_daemon *d)
{
	return __atomic_load_n(&d->stop, __ATOMIC_ACQUIRE);
}

/* autoscale.c: one autoscale decision for an active pool whose spec has
 * an autoscale block, applied through gb_engine_set_desired (refusals
 * become "autoscale-refused" events, once each); 1 when the desired
 * count changed (the caller converges the pool). */
int gb_daemon_autoscale(gb_daemon *d, const gb_pool_row *p,
                        const gb_pool_spec *s);
/* Stores a demand signal of n instances until `until` (unix s); n 0
 * withdraws it.  1 when that changes the signal in force (another n, or
 * none was in force), 0 when it only moves an identical signal's end,
 * -1 on a store error. */
int gb_daemon_set_demand(gb_daemon *d, const char *pool, int n,
                         int64_t until);
/* The pool's autoscale state for status (target, mean, reporting,
 * floor, demand, the latest reason, next action and its time); NULL
 * before its first decision.  Caller owns it. */
json_t *gb_daemon_autoscale_json(gb_daemon *d, const char *pool);

/* daemon.c */
void gb_daemon_enqueue(gb_daemon *d, int kind, const char *pool,
                       const char *reason);
/* Run a reconcile pass now (after a reload): always one more pass. */
void gb_daemon_kick(gb_daemon *d);
/* An on-demand pass (POST /v1/reconcile): requests coalesce.  Returns
 * GB_RECONCILE_QUEUED (a pass will start), _PENDING (one was already
 * requested and has not started) or _JOINED (a pass is running: it
 * serves this request). */
enum { GB_RECONCILE_QUEUED, GB_RECONCILE_PENDING, GB_RECONCILE_JOINED };
int gb_daemon_request_reconcile(gb_daemon *d);
/* Look at this pool again in delay_ms (and then back off) while it has
 * pending instances or is being destroyed, so new instances show as
 * running, and a destroy is confirmed, within seconds instead of at the
 * next pass. */
void gb_daemon_watch(gb_daemon *d, const char *pool, int64_t delay_ms);
/* reconcile.c: whether this replica runs the once-per-broker work (the
 * orphan gc): always on SQLite; on a shared store, while it holds the
 * "leader" lease (taken when free, kept while renewed). */
int gb_daemon_leader(gb_daemon *d);
/* The admission decided now (reconcile.c, issue 35): 1 when pool must
 * wait for a shared resource (its note then says its place), else 0. */
int gb_daemon_admission_holds(gb_daemon *d, const char *pool);
void gb_daemon_preempts_free(gb_preempt_rec *p, size_t n);
/* The budget-warning events due this pass (budget_warn.c; the leader
 * runs it). */
void gb_daemon_budget_warnings(gb_daemon *d);
/* api_targets.c: the pool's targets list as GET /v1/pools/NAME/targets
 * answers it (new reference; NULL when the pool is gone), its version
 * (that answer's ETag, quoted) into version, and (webhook non-NULL) the
 * spec's serve.webhook (caller frees; NULL when none). */
json_t *gb_daemon_pool_targets(gb_daemon *d, const char *pool,
                               int public_first, char *version, size_t cap,
                               char **webhook);
/* webhook.c: POST each held pool's targets list to its serve.webhook
 * when it changed since the last delivery (the reconciler, after its
 * pass; a failed delivery is retried on later passes, with a
 * "webhook-failed" event once). */
void gb_daemon_webhooks(gb_daemon *d, const gb_strv *pools);
/* Frees the webhooks' client and memory (at the daemon's end). */
void gb_daemon_webhooks_release(void);
/* reconcile.c: one pass; fills counts for metrics. */
void gb_daemon_reconcile(gb_daemon *d);
/* api.c */
int gb_api_start(gb_daemon *d, char *err, size_t cap);
void gb_api_quiesce(gb_daemon *d);
void gb_api_stop(gb_daemon *d);
/* metrics.c: the Prometheus text (new string, caller frees). */
char *gb_metrics_render(gb_daemon *d);
/* The same when it is ready without waiting for the store (the store's
 * part current, no version check due); else NULL. */
char *gb_metrics_render_now(gb_daemon *d);
/* metrics_team.c: the text for a token of `team` (NULL: everything,
 * text returned as is): other teams' series left out.  Takes text
 * (malloc'd), returns the caller's malloc'd text. */
char *gb_metrics_for_team(char *text, const char *team);
/* Frees the last whole text kept for reuse (at the daemon's end). */
void gb_metrics_release(void);
/* One API answer after secs: in the request latency histogram, or
 * (long_poll: a request that waited for an event) in the long polls'. */
void gb_metrics_api(gb_daemon *d, double secs, unsigned status,
                    int long_poll);

#endif
