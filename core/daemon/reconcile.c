/* reconcile.c -- one pass of the daemon's reconciler. */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "spec.h"

#define GB_GC_EVERY 4 /* passes */

/* A stored pool's spec (parsed by the spec loader): 0 with the set
 * filled (caller frees with gb_spec_set_free), -1 when it does not load. */
static int stored_spec(const gb_pool_row *p, gb_spec_set *set)
{
	gb_diags dg = GB_DIAGS_INIT;
	gb_spec_opts so;
	int rc;
	memset(&so, 0, sizeof(so));
	rc = gb_spec_load_json(p->name, p->spec_json, strlen(p->spec_json), &so,
	                       set, &dg);
	gb_diags_free(&dg);
	return rc == 0 ? 0 : -1;
}

/* min and max of a stored pool's spec. */
static int spec_min(gb_daemon *d, const gb_pool_row *p, int *min, int *max)
{
	gb_spec_set set;
	(void)d;
	*min = *max = 0;
	if (stored_spec(p, &set) != 0)
		return -1;
	if (set.n) {
		*min = set.pools[0].min;
		*max = set.pools[0].max;
	}
	gb_spec_set_free(&set);
	return 0;
}

/* The autoscale decision of an active pool (when its spec has the
 * block); 1 when it changed the pool's size. */
static int autoscale_pool(gb_daemon *d, const gb_pool_row *p)
{
	gb_spec_set set;
	int scaled = 0;
	if (strcmp(p->state, "active") != 0 || stored_spec(p, &set) != 0)
		return 0;
	if (set.n)
		scaled = gb_daemon_autoscale(d, p, &set.pools[0]);
	gb_spec_set_free(&set);
	return scaled;
}

/* Converge a pool the pass has just refreshed.  With job workers (serve)
 * the converge is queued to them, so one pool's slow create (an ARM
 * long-running operation, a GCE operation) does not hold back the
 * replacement of every pool after it in this pass; without workers
 * (--reconcile-once) it runs here. */
static void converge_pool(gb_daemon *d, const char *pool,
                          gb_engine_result *res)
{
	if (d->nworkers > 0)
		gb_daemon_enqueue(d, GB_JOB_CONVERGE_FRESH, pool, NULL);
	else
		gb_engine_converge_fresh(d->eng, pool, res);
}

static int gen_cmp(const void *a, const void *b)
{
	return strcmp(((const gb_pool_gen *)a)->name,
	              ((const gb_pool_gen *)b)->name);
}

/* Is pool p steady (one store query for every pool: `steady`, sorted by
 * name) and settled (its last converge here, at this generation, had
 * nothing to do)?  Then its converge is skipped: every live instance is
 * running, there are exactly `desired`, no intent is open, and nothing
 * (no apply, no scale) changed the pool since a converge found nothing
 * to do.  A refresh that saw an instance preempted, failed, stopping or
 * gone changed its row, so the pool is not steady and is converged (and
 * its instance replaced).  TTL and idle teardown are decided before this
 * (gb_daemon_reconcile), whatever this says. */
static int skippable(gb_daemon *d, const gb_pool_row *p,
                     const gb_pool_gen *steady, size_t nsteady)
{
	gb_pool_gen key;
	const gb_pool_gen *g;
	key.name = p->name;
	g = nsteady ? bsearch(&key, steady, nsteady, sizeof(*steady), gen_cmp)
	            : NULL;
	return g && g->generation == p->generation &&
	       gb_engine_settled(d->eng, p->name, p->generation);
}

/* converge_pool unless the pool is skippable; counts the skips. */
static void converge_unless_steady(gb_daemon *d, const gb_pool_row *p,
                                   const gb_pool_gen *steady,
                                   size_t nsteady, size_t *skipped,
                                   gb_engine_result *res)
{
	if (skippable(d, p, steady, nsteady))
		(*skipped)++;
	else
		converge_pool(d, p->name, res);
}

/* Retention and the state's size, once per pass.  Old audit and event
 * rows are deleted (daemon.audit_retention, daemon.events_retention;
 * checked every tenth of the shorter one, at most hourly, at least
 * every second), and the state's size is measured for /metrics and
 * compared with daemon.state_size_warning (a warning when over it, then
 * hourly while it stays over). */
static void housekeeping(gb_daemon *d)
{
	const gb_config *c = d->cfg;
	int64_t now = gb_mono_ms(), wall = gb_now_ms(), bytes = 0, avail = -1;
	int64_t shortest = 0, every;
	if (c->audit_retention_s > 0)
		shortest = c->audit_retention_s;
	if (c->events_retention_s > 0 &&
	    (!shortest || c->events_retention_s < shortest))
		shortest = c->events_retention_s;
	every = shortest * 100; /* a tenth of it, in ms */
	if (every > 3600000)
		every = 3600000;
	if (every < 1000)
		every = 1000;
	if (shortest && (!d->prune_at_ms || now - d->prune_at_ms >= every)) {
		int64_t na = 0, ne = 0, nd = 0;
		d->prune_at_ms = now;
		if (gb_store_prune(d->store,
		                   c->audit_retention_s > 0
		                           ? wall - c->audit_retention_s * 1000 : 0,
		                   c->events_retention_s > 0
		                           ? wall - c->events_retention_s * 1000 : 0,
		                   &na, &ne) != 0)
			gb_log(GB_LOG_ERROR, "reconcile", "retention: %s",
			       gb_store_errmsg(d->store));
		/* plan records go with the events (each pool's latest
		 * stays) */
		if (c->events_retention_s > 0 &&
		    gb_store_decisions_prune(d->store, wall -
		                             c->events_retention_s * 1000,
		                             &nd) != 0)
			gb_log(GB_LOG_ERROR, "reconcile", "retention: %s",
			       gb_store_errmsg(d->store));
		if (na || ne || nd)
			gb_log(GB_LOG_INFO, "reconcile", "retention: deleted %lld "
			       "audit rows, %lld events and %lld decision "
			       "records older than daemon.audit_retention / "
			       "daemon.events_retention", (long long)na,
			       (long long)ne, (long long)nd);
		if (c->noidc && gb_store_xtoken_prune(d->store, wall, NULL) != 0)
			gb_log(GB_LOG_ERROR, "reconcile", "expired CI tokens: %s",
			       gb_store_errmsg(d->store));
		pthread_mutex_lock(&d->mmu);
		d->pruned_audit += (uint64_t)na;
		d->pruned_events += (uint64_t)ne;
		pthread_mutex_unlock(&d->mmu);
	}
	gb_store_size(d->store, &bytes, &avail);
	pthread_mutex_lock(&d->mmu);
	d->state_bytes = bytes;
	d->state_free_bytes = avail;
	pthread_mutex_unlock(&d->mmu);
	if (c->state_size_warning > 0 && bytes > c->state_size_warning &&
	    (!d->size_warned_ms || now - d->size_warned_ms >= 3600000)) {
		d->size_warned_ms = now;
		gb_log(GB_LOG_WARN, "reconcile", "the state %s is %lld bytes, over "
		       "daemon.state_size_warning (%lld bytes; %lld bytes free "
		       "on its filesystem): shorten daemon.audit_retention or "
		       "daemon.events_retention, or give it more room",
		       gb_store_path(d->store), (long long)bytes,
		       (long long)c->state_size_warning, (long long)avail);
	} else if (bytes <= c->state_size_warning) {
		d->size_warned_ms = 0;
	}
}

int gb_daemon_leader(gb_daemon *d)
{
	int64_t token;
	int yes = 1;
	if (gb_store_is_shared(d->store)) {
		int64_t lease_ms = (d->cfg->lease_s > 0 ? d->cfg->lease_s : 15) * 1000;
		yes = gb_store_lease_acquire(d->store, "leader", lease_ms, &token,
		                             NULL, 0) == 0;
	}
	pthread_mutex_lock(&d->mmu);
	if (yes && !d->leader && gb_store_is_shared(d->store))
		gb_log(GB_LOG_INFO, "reconcile", "this replica (%s) is the "
		       "leader: it runs the orphan gc",
		       gb_store_lease_owner(d->store));
	d->leader = yes;
	pthread_mutex_unlock(&d->mmu);
	return yes;
}

void gb_daemon_reconcile(gb_daemon *d)
{
	static unsigned pass;
	int64_t t0 = gb_mono_ns(), now = gb_now_ms() / 1000;
	gb_pool_row *pools;
	gb_pool_gen *steady = NULL;
	size_t np, nsteady = 0, skipped = 0;
	double secs;
	int gc_due = ++pass % GB_GC_EVERY == 1;
	size_t held = 0;

	/* one describe per driver and region for every live instance (kept
	 * for the gc when this pass runs one) */
	gb_engine_refresh_all(d->eng, gc_due);
	if (gb_store_pool_list(d->store, NULL, 0, &pools, &np) != 0) {
		gb_log(GB_LOG_ERROR, "reconcile", "%s", gb_store_errmsg(d->store));
		return;
	}
	/* after the refresh: its changes make pools unsteady; on failure
	 * every pool is converged */
	if (gb_store_pool_list_steady(d->store, &steady, &nsteady) != 0) {
		gb_log(GB_LOG_WARN, "reconcile", "steady pools: %s",
		       gb_store_errmsg(d->store));
		steady = NULL;
		nsteady = 0;
	}
	if (nsteady)
		qsort(steady, nsteady, sizeof(*steady), gen_cmp);
	for (size_t i = 0; i < np && !gb_daemon_stopping(d); i++) {
		gb_pool_row *p = &pools[i];
		gb_engine_result res;
		char holder[128];
		int rc;
		memset(&res, 0, sizeof(res));
		/* on a shared store: only the pools this replica holds, or that
		 * nobody holds (a dead replica's, once its lease ran out) */
		rc = gb_engine_claim(d->eng, p->name, holder, sizeof(holder),
		                     NULL);
		if (rc != 0) {
			if (rc < 0)
				gb_log(GB_LOG_WARN, "reconcile", "pool %s: %s", p->name,
				       gb_store_errmsg(d->store));
			continue;
		}
		held++;
		/* agent pools: replace what never got ready */
		if (gb_engine_agent_overdue(d->eng, p) > 0)
			gb_daemon_kick(d);
		if (strcmp(p->state, "destroying") == 0) {
			gb_engine_destroy_step(d->eng, p->name,
			                       p->destroy_reason ? p->destroy_reason
			                                         : "user", &res);
		} else if (p->ttl_s > 0 && now >= p->created_at + p->ttl_s) {
			gb_store_event(d->store, p->name, NULL, "ttl",
			               "TTL of %llds reached (created %llds ago); "
			               "destroying", (long long)p->ttl_s,
			               (long long)(now - p->created_at));
			pthread_mutex_lock(&d->mmu);
			d->ttl_destroys++;
			pthread_mutex_unlock(&d->mmu);
			gb_engine_destroy_step(d->eng, p->name, "ttl", &res);
		} else if (p->idle_timeout_s > 0 &&
		           now - (p->last_gpu_use_at > p->created_at
		                          ? p->last_gpu_use_at
		                          : p->created_at) >= p->idle_timeout_s) {
			int min = 0, max = 0;
			spec_min(d, p, &min, &max);
			if (max <= min || p->desired > min) {
				pthread_mutex_lock(&d->mmu);
				d->idle_destroys++;
				pthread_mutex_unlock(&d->mmu);
			}
			if (max > min && p->desired > min) {
				gb_store_event(d->store, p->name, NULL, "idle",
				               "no GPU use for %llds (idle_timeout "
				               "%llds); scaling to min %d",
				               (long long)(now - (p->last_gpu_use_at > p->created_at
				                                          ? p->last_gpu_use_at
				                                          : p->created_at)),
				               (long long)p->idle_timeout_s, min);
				gb_engine_scale(d->eng, p->name, min, &res);
			} else if (max <= min) {
				gb_store_event(d->store, p->name, NULL, "idle",
				               "no GPU use for %llds (idle_timeout "
				               "%llds); destroying",
				               (long long)(now - (p->last_gpu_use_at > p->created_at
				                                          ? p->last_gpu_use_at
				                                          : p->created_at)),
				               (long long)p->idle_timeout_s);
				gb_engine_destroy_step(d->eng, p->name, "idle", &res);
			} else {
				converge_unless_steady(d, p, steady, nsteady,
				                       &skipped, &res);
			}
		} else if (autoscale_pool(d, p)) {
			converge_pool(d, p->name, &res);
		} else {
			converge_unless_steady(d, p, steady, nsteady, &skipped,
			                       &res);
		}
		gb_engine_result_free(&res);
	}
	gb_pool_list_free(pools, np);
	gb_pool_gen_list_free(steady, nsteady);
	pthread_mutex_lock(&d->mmu);
	d->pools_held = held;
	d->pools_skipped = skipped;
	pthread_mutex_unlock(&d->mmu);
	/* orphans are looked for by one replica at a time (the leader), so
	 * listings are not multiplied by the number of replicas */
	if (!gb_daemon_leader(d))
		gc_due = 0;
	if (gc_due && !gb_daemon_stopping(d)) {
		json_t *rep = NULL;
		if (gb_engine_gc(d->eng, 0, &rep) >= 0 && json_array_size(rep))
			gb_log(GB_LOG_WARN, "reconcile", "gc: %zu orphans or unchecked regions (see events)",
			       json_array_size(rep));
		json_decref(rep);
	}
	housekeeping(d);
	secs = (double)(gb_mono_ns() - t0) / 1e9;
	pthread_mutex_lock(&d->mmu);
	d->recon_last_s = secs;
	d->recon_sum_s += secs;
	d->recon_count++;
	pthread_mutex_unlock(&d->mmu);
}
