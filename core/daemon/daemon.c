/* daemon.c -- the daemon: lifecycle, signals, jobs, reload (serve.h). */
#include "daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "log.h"
#include "oidc.h"
#include "serve.h"

/* first look at a pool's new instances, then twice the wait each time */
#define GB_WATCH_FIRST_MS 1500

static void on_event(void *ud, const char *pool, const char *instance,
                     const char *kind, const char *message)
{
	gb_daemon *d = ud;
	(void)instance;
	(void)kind;
	(void)message;
	/* atomic: api_pools.c reads it without mu */
	__atomic_fetch_add(&d->event_gen, 1, __ATOMIC_RELEASE);
	/* the event is stored: long polls waiting for it look again */
	gb_api_wake(d, pool);
}

/* On a shared store, changes made through other replicas: the store's
 * version is compared every 250 ms and, when it moved, the long polls
 * (events, pool waits) look again, so an event another replica recorded
 * reaches them within a second.  (Snapshots compare the version
 * themselves: api_pools.c, metrics.c.) */
static void *store_watch_main(void *arg)
{
	gb_daemon *d = arg;
	gb_store_ver at;
	gb_store_ver_read(d->store, &at);
	while (!gb_daemon_stopping(d)) {
		usleep(250 * 1000);
		if (gb_store_ver_moved(d->store, &at) == 1) {
			gb_store_ver_read(d->store, &at);
			__atomic_fetch_add(&d->event_gen, 1, __ATOMIC_RELEASE);
			gb_api_wake_all(d);
		}
	}
	return NULL;
}

void gb_daemon_enqueue(gb_daemon *d, int kind, const char *pool,
                       const char *reason)
{
	gb_job *j;
	pthread_mutex_lock(&d->mu);
	/* coalesce: one pending job of a kind per pool is enough */
	for (j = d->jobs; j; j = j->next)
		if (j->kind == kind && strcmp(j->pool, pool) == 0) {
			pthread_mutex_unlock(&d->mu);
			return;
		}
	j = gb_xcalloc(1, sizeof(*j));
	j->kind = kind;
	j->pool = gb_xstrdup(pool);
	j->reason = gb_xstrdup(reason ? reason : "user");
	if (d->jobs_tail)
		d->jobs_tail->next = j;
	else
		d->jobs = j;
	d->jobs_tail = j;
	pthread_cond_signal(&d->job_cv);
	pthread_mutex_unlock(&d->mu);
}

void gb_daemon_kick(gb_daemon *d)
{
	pthread_mutex_lock(&d->mu);
	d->kick = 1;
	pthread_cond_signal(&d->recon_cv);
	pthread_mutex_unlock(&d->mu);
}

int gb_daemon_request_reconcile(gb_daemon *d)
{
	int how;
	pthread_mutex_lock(&d->mu);
	if (d->recon_running) {
		how = GB_RECONCILE_JOINED;
	} else if (d->kick) {
		how = GB_RECONCILE_PENDING;
	} else {
		how = GB_RECONCILE_QUEUED;
		d->kick = 1;
		pthread_cond_signal(&d->recon_cv);
	}
	pthread_mutex_unlock(&d->mu);
	return how;
}

void gb_daemon_watch(gb_daemon *d, const char *pool, int64_t delay_ms)
{
	gb_watch *w;
	int64_t due = gb_mono_ms() + delay_ms;
	pthread_mutex_lock(&d->mu);
	for (w = d->watches; w; w = w->next)
		if (strcmp(w->pool, pool) == 0)
			break;
	if (!w) {
		w = gb_xcalloc(1, sizeof(*w));
		w->pool = gb_xstrdup(pool);
		w->due_ms = due;
		w->next = d->watches;
		d->watches = w;
	} else if (due < w->due_ms) {
		w->due_ms = due;
	}
	w->delay_ms = delay_ms;
	pthread_cond_signal(&d->recon_cv);
	pthread_mutex_unlock(&d->mu);
}

/* Takes the first watch due at now (caller holds mu); NULL when none. */
static gb_watch *watch_take_due(gb_daemon *d, int64_t now)
{
	for (gb_watch **pp = &d->watches; *pp; pp = &(*pp)->next)
		if ((*pp)->due_ms <= now) {
			gb_watch *w = *pp;
			*pp = w->next;
			return w;
		}
	return NULL;
}

/* The earliest due time of the watches (caller holds mu); 0 = none. */
static int64_t watch_next_due(const gb_daemon *d)
{
	int64_t t = 0;
	for (const gb_watch *w = d->watches; w; w = w->next)
		if (!t || w->due_ms < t)
			t = w->due_ms;
	return t;
}

/* One watched pool.  Active: describe it, and watch again (backing off)
 * while some instance is still pending or terminating.  Destroying: one destroy step
 * (describe, confirm, send what is missing), again until it is done. */
static void watch_run(gb_daemon *d, gb_watch *w, int64_t period_ms)
{
	gb_pool_row row;
	int again = 0;
	pthread_rwlock_rdlock(&d->cfg_lock);
	if (gb_store_pool_get(d->store, w->pool, &row) == 0) {
		if (strcmp(row.state, "destroying") == 0) {
			gb_engine_result res;
			again = gb_engine_destroy_step(d->eng, w->pool,
			                               row.destroy_reason
			                                       ? row.destroy_reason
			                                       : "user",
			                               &res) == 0;
			gb_engine_result_free(&res);
		} else if (strcmp(row.state, "active") == 0) {
			gb_inst_row *rows = NULL;
			size_t n = 0;
			/* a failed describe: pending rows say "look again" */
			GB_IGNORE(gb_engine_refresh(d->eng, w->pool));
			if (gb_store_inst_list(d->store, w->pool, 1, &rows, &n) == 0) {
				for (size_t i = 0; i < n; i++)
					again |= strcmp(rows[i].state, "pending") == 0 ||
					         strcmp(rows[i].state, "terminating") == 0;
				gb_inst_list_free(rows, n);
			}
		}
		gb_pool_row_free(&row);
	}
	pthread_rwlock_unlock(&d->cfg_lock);
	if (again && w->delay_ms * 2 < period_ms)
		gb_daemon_watch(d, w->pool, w->delay_ms * 2);
	free(w->pool);
	free(w);
}

static void *worker_main(void *arg)
{
	gb_daemon *d = arg;
	for (;;) {
		gb_job *j;
		gb_engine_result res;
		pthread_mutex_lock(&d->mu);
		while (!d->jobs && !d->stop)
			pthread_cond_wait(&d->job_cv, &d->mu);
		if (d->stop) {
			pthread_mutex_unlock(&d->mu);
			break;
		}
		j = d->jobs;
		d->jobs = j->next;
		if (!d->jobs)
			d->jobs_tail = NULL;
		pthread_mutex_unlock(&d->mu);

		pthread_rwlock_rdlock(&d->cfg_lock);
		if (j->kind == GB_JOB_CONVERGE &&
		    gb_daemon_admission_holds(d, j->pool)) {
			/* it waits its turn for a shared resource: no create
			 * that the site would refuse (reconcile.c) */
			memset(&res, 0, sizeof(res));
		} else if (j->kind == GB_JOB_CONVERGE ||
		           j->kind == GB_JOB_CONVERGE_FRESH) {
			int crc = j->kind == GB_JOB_CONVERGE
			                  ? gb_engine_converge(d->eng, j->pool, &res)
			                  : gb_engine_converge_fresh(d->eng, j->pool,
			                                             &res);
			/* a deferred converge, or one that failed for the
			 * reason the pool's note already gives, repeats what
			 * was logged when that reason came up */
			if (crc != 0 && res.message[0] && !res.deferred &&
			    !res.repeated)
				gb_log(GB_LOG_WARN, "daemon", "%s", res.message);
			/* boots, and the terminations of a scale-down,
			 * confirmed within seconds (a scale --wait waits for
			 * them), not at the next pass */
			if (res.created || res.replaced || res.destroyed)
				gb_daemon_watch(d, j->pool, GB_WATCH_FIRST_MS);
		} else {
			int drc = gb_engine_destroy_step(d->eng, j->pool,
			                                 j->reason, &res);
			if (drc == 0)
				/* confirm within seconds, not at the next pass */
				gb_daemon_watch(d, j->pool, GB_WATCH_FIRST_MS);
			else if (drc < 0 && res.message[0])
				gb_log(GB_LOG_WARN, "daemon", "%s", res.message);
		}
		pthread_rwlock_unlock(&d->cfg_lock);
		gb_engine_result_free(&res);
		free(j->pool);
		free(j->reason);
		free(j);
	}
	return NULL;
}

/* Prices refreshed by another process (another replica's POST
 * /v1/offers/refresh, a CLI's `offers refresh`) moved meta
 * "offers_version": plan from them too, from the next pass on. */
static void reload_offers_if_moved(gb_daemon *d)
{
	char *v = NULL;
	int rc = gb_store_meta_get(d->store, "offers_version", &v);
	if (rc < 0)
		return;
	if (rc == 1)
		v = gb_xstrdup(""); /* never refreshed */
	if (!d->offers_version) {
		d->offers_version = v; /* the catalog was loaded at start */
		return;
	}
	if (strcmp(v, d->offers_version) == 0) {
		free(v);
		return;
	}
	free(d->offers_version);
	d->offers_version = v;
	pthread_rwlock_wrlock(&d->cfg_lock);
	{
		gb_catalog *old = gb_runtime_reload_offers(&d->app.rt, d->store);
		gb_engine_set_catalog(d->eng, d->app.rt.cat);
		gb_catalog_free(old);
	}
	pthread_rwlock_unlock(&d->cfg_lock);
	gb_log(GB_LOG_INFO, "daemon", "prices were refreshed in the state "
	       "store: the catalog is reloaded (%zu offer%s)",
	       gb_catalog_count(d->app.rt.cat),
	       gb_plural((long long)gb_catalog_count(d->app.rt.cat)));
}

static void *recon_main(void *arg)
{
	gb_daemon *d = arg;
	while (!gb_daemon_stopping(d)) {
		struct timespec ts;
		int64_t period, pass_at;
		pthread_mutex_lock(&d->mu);
		d->recon_running = 1;
		d->kick = 0; /* this pass serves every request made so far */
		pthread_mutex_unlock(&d->mu);
		reload_offers_if_moved(d);
		pthread_rwlock_rdlock(&d->cfg_lock);
		period = d->cfg->reconcile_period_s > 0 ? d->cfg->reconcile_period_s
		                                        : 15;
		gb_daemon_reconcile(d);
		pthread_rwlock_unlock(&d->cfg_lock);
		pthread_mutex_lock(&d->mu);
		d->recon_running = 0;
		pthread_mutex_unlock(&d->mu);
		pass_at = gb_mono_ms() + period * 1000;
		pthread_mutex_lock(&d->mu);
		while (!d->kick && !d->stop) {
			int64_t now = gb_mono_ms(), due = watch_next_due(d);
			int64_t until = due && due < pass_at ? due : pass_at;
			gb_watch *w;
			if (now >= pass_at)
				break;
			if ((w = watch_take_due(d, now)) != NULL) {
				pthread_mutex_unlock(&d->mu);
				watch_run(d, w, period * 1000);
				pthread_mutex_lock(&d->mu);
				continue;
			}
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += (until - now) / 1000;
			ts.tv_nsec += ((until - now) % 1000) * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&d->recon_cv, &d->mu, &ts);
		}
		pthread_mutex_unlock(&d->mu);
	}
	return NULL;
}

/* SIGHUP: reload the config file.  Tokens, teams, org policies, policy
 * path, reconcile period and log format take effect at once; drivers,
 * listen address, TLS and the state path need a restart (said in the
 * log when they differ). */
static void reload(gb_daemon *d)
{
	gb_config nc;
	gb_diags dg = GB_DIAGS_INIT;
	if (!d->config_path) {
		gb_log(GB_LOG_INFO, "daemon", "SIGHUP: no config file; nothing "
		                              "to reload (a changed policy file is "
		                              "read again at the next plan)");
		return;
	}
	if (gb_config_load(d->config_path, &nc, &dg) != 0) {
		char *m = gb_diags_str(&dg);
		gb_log(GB_LOG_ERROR, "daemon", "SIGHUP: config %s has errors; "
		       "keeping the running config:\n%s", d->config_path, m);
		free(m);
		gb_diags_free(&dg);
		return;
	}
	gb_diags_free(&dg);
	pthread_rwlock_wrlock(&d->cfg_lock);
	/* the file's listen against the file's as last read: a --listen
	 * override is no change */
	if (nc.ndrivers != d->cfg->ndrivers ||
	    strcmp(nc.listen ? nc.listen : "",
	           d->file_listen ? d->file_listen : "") != 0)
		gb_log(GB_LOG_WARN, "daemon", "SIGHUP: driver or listen changes "
		                              "need a restart to take effect");
	free(d->file_listen);
	d->file_listen = nc.listen ? gb_xstrdup(nc.listen) : NULL;
	/* keep what cannot change while running */
	free(nc.listen);
	nc.listen = d->cfg->listen ? gb_xstrdup(d->cfg->listen) : NULL;
	free(nc.state_path);
	nc.state_path = gb_xstrdup(d->cfg->state_path);
	free(nc.state_password);
	nc.state_password = d->cfg->state_password
	                            ? gb_xstrdup(d->cfg->state_password) : NULL;
	{
		gb_config old = *d->cfg;
		gb_driver_cfg *keep_drivers = old.drivers;
		size_t keep_n = old.ndrivers;
		/* drivers stay loaded as they are: swap their configs back */
		old.drivers = nc.drivers;
		old.ndrivers = nc.ndrivers;
		nc.drivers = keep_drivers;
		nc.ndrivers = keep_n;
		*d->cfg = nc;
		gb_config_free(&old);
	}
	gb_log_set_json(d->cfg->log_json);
	pthread_rwlock_unlock(&d->cfg_lock);
	gb_log(GB_LOG_INFO, "daemon", "SIGHUP: reloaded %s", d->config_path);
	gb_daemon_kick(d);
}

/* Shutdown is bounded whatever a thread is doing: after the first
 * SIGTERM/SIGINT, in-flight work has GB_SHUTDOWN_GRACE_S seconds to end
 * (driver calls see the stop flag, policy calls their own limits); a
 * second signal, or the grace running out, ends the process at once --
 * as safe as a kill, the journal resolves open intents at the next
 * start.  GB_SHUTDOWN_GRACE_MS (tests only) shortens the grace. */
#define GB_SHUTDOWN_GRACE_S 20

static void *shutdown_watchdog(void *arg)
{
	const sigset_t *set = arg;
	const char *env = getenv("GB_SHUTDOWN_GRACE_MS");
	long ms = env && *env ? strtol(env, NULL, 10)
	                      : GB_SHUTDOWN_GRACE_S * 1000L;
	struct timespec ts;
	int sig;

	if (ms <= 0)
		ms = GB_SHUTDOWN_GRACE_S * 1000L;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	do {
		sig = sigtimedwait(set, NULL, &ts);
	} while (sig == SIGHUP || (sig < 0 && errno == EINTR));
	if (sig > 0)
		gb_log(GB_LOG_WARN, "daemon", "signal %d again: exiting now, "
		       "without waiting for in-flight work (open intents are "
		       "resolved at the next start)", sig);
	else
		gb_log(GB_LOG_ERROR, "daemon", "still busy %ld ms after the "
		       "shutdown signal (a request or job did not end): "
		       "exiting anyway (open intents are resolved at the next "
		       "start)", ms);
	_exit(sig > 0 ? 130 : 1);
	return NULL;
}

/* The state database holds the audit trail, pools and the drivers'
 * bookkeeping: warned about when others may read it (its -wal/-shm
 * files get the same mode from SQLite). */
static void state_mode_warn(const char *path)
{
	struct stat st;
	if (!path || gb_config_state_is_url(path) || stat(path, &st) != 0 ||
	    !(st.st_mode & (S_IRWXG | S_IRWXO)))
		return;
	gb_log(GB_LOG_WARN, "daemon", "state database %s is readable by %s "
	       "(mode %04o): chmod 600 %s (and its -wal and -shm files)", path,
	       (st.st_mode & S_IRWXO) ? "everyone" : "its group",
	       (unsigned)(st.st_mode & 07777), path);
}

static int listen_is_loopback(const char *listen)
{
	return !listen || strncmp(listen, "127.", 4) == 0 ||
	       strncmp(listen, "localhost:", 10) == 0 ||
	       strncmp(listen, "[::1]", 5) == 0 || listen[0] == ':';
}

/* Opens the session; a state database that is there but cannot take
 * the connection now (no free connection slot, starting up) is waited
 * for with a backoff (0.25 s doubling to 5 s), as a running replica
 * reconnects, saying so in the log, until it answers or SIGTERM/SIGINT
 * arrives (blocked in `set`: seen as pending). */
static int open_session(gb_daemon *d, const sigset_t *set, char *err,
                        size_t cap)
{
	int64_t backoff = 250;
	for (;;) {
		sigset_t pending;
		if (gb_session_open(d->cfg, &d->app, on_event, d, &d->stop, 1, err,
		                    cap) == 0)
			return 0;
		if (!gb_store_open_retryable(err))
			return -1;
		sigemptyset(&pending);
		sigpending(&pending);
		if ((sigismember(set, SIGTERM) && sigismember(&pending, SIGTERM)) ||
		    (sigismember(set, SIGINT) && sigismember(&pending, SIGINT)))
			return -1; /* err: the last cause */
		gb_log(GB_LOG_WARN, "daemon", "%s; trying again in %lld ms (the "
		       "daemon starts once the state database takes its "
		       "connection)", err, (long long)backoff);
		gb_sleep_ms(backoff);
		backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
	}
}

int gb_daemon_serve(const gb_daemon_opts *o, char *err, size_t cap)
{
	gb_daemon d;
	gb_config *cfg = o->cfg;
	sigset_t set;
	pthread_t watchdog;
	int rc, watchdog_started;

	memset(&d, 0, sizeof(d));
	if (!cfg->ntokens && !cfg->noidc && !listen_is_loopback(cfg->listen)) {
		snprintf(err, cap, "refusing to listen on %s without API tokens: "
		                   "anyone who can reach it could create and "
		                   "destroy pools. Add tokens to the config (see "
		                   "README, 'API tokens') or listen on 127.0.0.1.",
		         cfg->listen);
		return -1;
	}
	gb_mem_limit_arenas(); /* before the first thread starts */
	gb_log_set_json(cfg->log_json);
	if (gb_log_get_level() < GB_LOG_INFO)
		gb_log_set_level(GB_LOG_INFO);
	d.config_path = o->config_path;
	d.file_listen = o->file_listen ? gb_xstrdup(o->file_listen) : NULL;
	d.cfg = cfg;
	pthread_rwlock_init(&d.cfg_lock, NULL);
	pthread_mutex_init(&d.mu, NULL);
	pthread_mutex_init(&d.mmu, NULL);
	pthread_cond_init(&d.job_cv, NULL);
	pthread_cond_init(&d.recon_cv, NULL);

	/* Signals go to the main thread only (sigwait below). */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (open_session(&d, &set, err, cap) != 0) {
		pthread_rwlock_destroy(&d.cfg_lock);
		free(d.file_listen);
		return -1;
	}
	d.store = d.app.store;
	d.eng = d.app.eng;
	state_mode_warn(gb_store_path(d.store));
	/* held until the store closes: `state migrate` refuses meanwhile */
	if (gb_store_serve_hold(d.store) != 0) {
		snprintf(err, cap, "%s", gb_store_errmsg(d.store));
		rc = -1;
		goto out_engine;
	}
	for (size_t i = 0; i < d.app.rt.problems.n; i++)
		gb_log(GB_LOG_WARN, "daemon", "%s", d.app.rt.problems.v[i]);
	if (d.app.warning)
		gb_log(GB_LOG_WARN, "daemon", "%s", d.app.warning);
	if (d.app.recovered > 0)
		gb_log(GB_LOG_INFO, "daemon", "resolved %d open intents",
		       d.app.recovered);

	if (o->reconcile_once) {
		gb_daemon_reconcile(&d);
		rc = 0;
		goto out_engine;
	}
	d.oidc = gb_oidc_new(NULL, NULL);
	if (gb_api_start(&d, err, cap) != 0) {
		rc = -1;
		goto out_engine;
	}
	d.nworkers = d.cfg->jobs > 0 ? d.cfg->jobs : 8;
	d.workers = gb_xcalloc((size_t)d.nworkers, sizeof(pthread_t));
	for (int i = 0; i < d.nworkers; i++)
		pthread_create(&d.workers[i], NULL, worker_main, &d);
	d.recon_started = pthread_create(&d.recon, NULL, recon_main, &d) == 0;
	if (gb_store_is_shared(d.store))
		d.watch_started = pthread_create(&d.store_watch, NULL,
		                                 store_watch_main, &d) == 0;
	d.ready = 1;
	if (o->listening) {
		char url[96];
		snprintf(url, sizeof(url), "%s://127.0.0.1:%d",
		         d.tls ? "https" : "http", d.port);
		o->listening(o->listening_ud, url);
	}
	{
		/* listen is HOST:PORT (PORT may be 0: d.port is the real one) */
		const char *l = cfg->listen ? cfg->listen : "";
		const char *colon = strrchr(l, ':');
		int hl = colon ? (int)(colon - l) : (int)strlen(l);
		gb_log(GB_LOG_INFO, "daemon", "serving on %.*s:%d (%s), state %s",
		       hl ? hl : 9, hl ? l : "127.0.0.1", d.port,
		       d.tls ? "TLS" : "plain HTTP", gb_store_path(d.store));
		gb_log(GB_LOG_INFO, "daemon", "web console: %s://%.*s:%d/ "
		       "(sign in with an API token of this config)",
		       d.tls ? "https" : "http", hl ? hl : 9,
		       hl ? l : "127.0.0.1", d.port);
	}

	for (;;) {
		int sig = 0;
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			reload(&d);
			continue;
		}
		gb_log(GB_LOG_INFO, "daemon", "signal %d: shutting down", sig);
		break;
	}
	/* stop accepting, finish in-flight work, within a bound */
	watchdog_started = pthread_create(&watchdog, NULL, shutdown_watchdog,
	                                  &set) == 0;
	gb_api_quiesce(&d);
	pthread_mutex_lock(&d.mu);
	__atomic_store_n(&d.stop, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&d.job_cv);
	pthread_cond_broadcast(&d.recon_cv);
	pthread_mutex_unlock(&d.mu);
	gb_api_wake_all(&d); /* long polls answer now, not at the end */
	for (int i = 0; i < d.nworkers; i++)
		pthread_join(d.workers[i], NULL);
	if (d.recon_started)
		pthread_join(d.recon, NULL);
	if (d.watch_started)
		pthread_join(d.store_watch, NULL);
	gb_api_stop(&d);
	if (watchdog_started) {
		pthread_cancel(watchdog); /* sigtimedwait: a cancellation point */
		pthread_join(watchdog, NULL);
	}
	free(d.workers);
	free(d.offers_version);
	while (d.watches) {
		gb_watch *w = d.watches;
		d.watches = w->next;
		free(w->pool);
		free(w);
	}
	while (d.jobs) {
		gb_job *j = d.jobs;
		d.jobs = j->next;
		free(j->pool);
		free(j->reason);
		free(j);
	}
	gb_log(GB_LOG_INFO, "daemon", "stopped; the journal is consistent");
	rc = 0;
out_engine:
	gb_session_close(&d.app);
	free(d.metrics_cache);
	gb_metrics_release();
	gb_daemon_webhooks_release();
	free(d.pools_cache);
	json_decref(d.queue);
	gb_daemon_preempts_free(d.preempts, d.npreempts);
	gb_oidc_free(d.oidc);
	free(d.file_listen);
	pthread_rwlock_destroy(&d.cfg_lock);
	return rc;
}
