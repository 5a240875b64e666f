/*
 * backend.h -- what the pool commands (apply, destroy, scale, status,
 * events, cost, gc) ask for, whoever answers: the engine on local state
 * (local_backend.c, through the app layer's session) or a daemon's HTTP
 * API (remote_backend.c, --server).  Each command's flow is written once
 * over this interface (cmd_apply.c, cmd_pools.c, cmd_events.c).
 *
 * Both backends return the same JSON shapes, the engine's (the daemon's
 * API answers with them): a pool is gb_engine_pool_json, a diff
 * gb_engine_diff, events gb_events_json, cost gb_engine_cost, usage
 * gb_engine_usage, gc's orphans gb_engine_gc's report.  Every JSON out-parameter is a new
 * reference the caller decrefs.  Operations that fail print why (with
 * gb_cli_err) unless they say otherwise.
 */
#ifndef GB_BACKEND_H
#define GB_BACKEND_H

#include <jansson.h>
#include <signal.h>

#include "catalog.h"
#include "cli.h"
#include "spec.h"

typedef struct gb_backend gb_backend;

typedef struct gb_backend_ops {
	/* What applying spec would change; NULL after printing why.  The
	 * quota and budget checks (the diff's apply_refused) count the
	 * nearlier pools of earlier (applied with it, before it) as if
	 * applied. */
	json_t *(*plan_diff)(gb_backend *b, const gb_pool_spec *spec,
	                     const gb_pool_spec *const *earlier,
	                     size_t nearlier);
	/* Creates or updates the pool (locally: converges it too).  0, or
	 * -1 after printing why; *pool: the pool afterwards, or NULL. */
	int (*apply)(gb_backend *b, const gb_pool_spec *spec, json_t **pool);
	/* Waits until every desired instance of pool runs, and no more
	 * (the ones a scale-down ends confirmed terminated): 1, 0 when
	 * timeout_s (0 = none) passed first (err says more, may be empty;
	 * nothing printed), -1 after printing why, GB_BACKEND_LOST (after
	 * printing why) when a daemon stopped answering and did not come
	 * back in time, GB_BACKEND_GONE (not printed) when the pool is
	 * destroyed meanwhile.  The pool's events are printed as they come (with
	 * GB_BACKEND_PROGRESS).  *out: the pool as last seen, or NULL. */
	int (*wait)(gb_backend *b, const char *pool, int64_t timeout_s,
	            char *err, size_t cap, json_t **out);
	/* Terminates every instance and waits (at most timeout_s, 0 = the
	 * default) until the clouds confirm.  0, or -1 after printing why,
	 * GB_BACKEND_LOST as wait, or 1 when there is no such pool (printed
	 * unless cli->quiet_not_found).  *out: the pool afterwards (may be
	 * NULL). */
	int (*destroy)(gb_backend *b, const char *pool, int64_t timeout_s,
	               json_t **out);
	/* 0, or -1 after printing why; *out: the pool afterwards (may be
	 * set on failure too, or NULL). */
	int (*scale)(gb_backend *b, const char *pool, int n, json_t **out);
	/* With pool: that pool with its instances (refreshed from the
	 * clouds); without: an array of every pool.  Destroyed pools are
	 * gone (a destroyed `pool` is not found) unless all.  0 or -1. */
	int (*status)(gb_backend *b, const char *pool, int all, json_t **out);
	/* Events of pool (NULL: all) after *after (an event id; moved to the
	 * last one returned) and not older than since_ms (unix ms, 0 = all).
	 * With wait, an empty answer may take a while (long poll).  0 or -1;
	 * *events: an array. */
	int (*events)(gb_backend *b, const char *pool, int64_t *after,
	              int64_t since_ms, int wait, json_t **events);
	/* by: team | pool | cloud | label:KEY (NULL = pool); since_s: unix s,
	 * 0 = all.  0 or -1. */
	int (*cost)(gb_backend *b, const char *by, int64_t since_s,
	            json_t **cost);
	/* gb_engine_usage: by hour | weekday (NULL = hour), pool and team
	 * NULL = all, over [since_s, until_s) (unix s; until_s 0 = now, to
	 * the millisecond).  0 or -1. */
	int (*usage)(gb_backend *b, const char *by, const char *pool,
	             const char *team, int64_t since_s, int64_t until_s,
	             json_t **usage);
	/* *orphans: gc's report; *incomplete: some region could not be
	 * listed.  0 or -1. */
	int (*gc)(gb_backend *b, int adopt, json_t **orphans, int *incomplete);
	/* The pool's placement decision (the plan its last apply walked):
	 * 0 with *out {time, plan} (new reference), 1 when none is
	 * recorded, -1 on an error (not printed). */
	int (*decision)(gb_backend *b, const char *pool, json_t **out);
	/* The shared-GPU queue, gb_engine_admission's shape (a daemon's:
	 * as its last reconcile pass decided).  0 or -1. */
	int (*queue)(gb_backend *b, json_t **queue);
	void (*close)(gb_backend *b);
} gb_backend_ops;

struct gb_backend {
	const gb_backend_ops *ops;
	gb_cli *cli;
	/* set by SIGINT/SIGTERM where the backend catches them, else NULL */
	volatile sig_atomic_t *stop;
	/* local: the session's catalog, which a spec's region globs must
	 * name a region of (gb_cli_spec_load_in); NULL through a daemon
	 * (it checks) or without a session.  Borrowed until close. */
	const gb_catalog *catalog;
	/* wait on an agent pool (its JSON's "agent": true): 0 until every
	 * desired instance is ready (its agent reported the offer's GPUs),
	 * 1 until they run (--wait-for running).  Only a daemon hears
	 * agents: locally a wait ends at running. */
	int wait_running;
};

/* wait and destroy through a daemon: it stopped answering (refused,
 * reset, HTTP 502/503/504) and did not come back before the timeout
 * (the remote backend tries again with a backoff until then). */
#define GB_BACKEND_LOST (-2)
/* wait: the pool is being (or has been) destroyed -- a TTL, an idle
 * teardown or a destroy -- so it will never run; nothing printed, *out
 * holds the pool (its "state" and "reason" say which). */
#define GB_BACKEND_GONE (-3)

/* What a command needs from a backend (the remote one: the daemon's
 * events of the pool printed while wait and destroy wait, and a signal
 * ends those waits; the daemon goes on): */
#define GB_BACKEND_PROGRESS 1u   /* progress lines of engine events */
#define GB_BACKEND_SIGNALS 2u    /* SIGINT/SIGTERM stop the engine cleanly */
#define GB_BACKEND_STORE_ONLY 4u /* events only: the store, no engine */

/* The backend for cli: remote with --server, else local.  Returns 0 and
 * *out (close it with gb_backend_close), or GB_EXIT_FAIL after printing
 * why. */
int gb_backend_open(gb_cli *cli, unsigned needs, gb_backend **out);
void gb_backend_close(gb_backend *b);
/* 1 once SIGINT/SIGTERM asked to stop (with GB_BACKEND_SIGNALS only). */
int gb_backend_stopped(const gb_backend *b);
/* The exit status of a command a signal stopped: 128 + the signal
 * (130 SIGINT, 143 SIGTERM), as shells report it; GB_EXIT_FAIL when
 * none did. */
int gb_backend_stop_status(const gb_backend *b);
/* For the backends' open: SIGINT/SIGTERM set b->stop. */
void gb_backend_catch_signals(gb_backend *b);

/* The two implementations (gb_backend_open picks one). */
int gb_local_backend_open(gb_cli *cli, unsigned needs, gb_backend **out);
int gb_remote_backend_open(gb_cli *cli, unsigned needs, gb_backend **out);

#endif
