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
/* Logs what a step of the pass on `pool` failed with (as the job
 * workers do): a store failure among them, which stopped that step. */
static void said(int rc, const gb_engine_result *res)
{
	if (rc < 0 && res->message[0] && !res->deferred && !res->repeated)
		gb_log(res->store_failed ? GB_LOG_ERROR : GB_LOG_WARN,
		       "reconcile", "%s", res->message);
}

static void converge_pool(gb_daemon *d, const char *pool,
                          gb_engine_result *res)
{
	if (d->nworkers > 0)
		gb_daemon_enqueue(d, GB_JOB_CONVERGE_FRESH, pool, NULL);
	else
		said(gb_engine_converge_fresh(d->eng, pool, res), res);
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
	if (gb_store_size(d->store, &bytes, &avail) != 0)
		bytes = 0, avail = -1; /* unknown this pass: no warning */
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

void gb_daemon_preempts_free(gb_preempt_rec *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].victim);
		free(p[i].bene);
		free(p[i].reason);
	}
	free(p);
}

/* Instances of pool under a preemption notice (the admission's
 * `leaving`); called with mmu held. */
static int leaving(void *ud, const char *pool)
{
	gb_daemon *d = ud;
	int n = 0;
	for (size_t i = 0; i < d->npreempts; i++)
		if (strcmp(d->preempts[i].victim, pool) == 0)
			n += d->preempts[i].count;
	return n;
}

static int leaving_locked(void *ud, const char *pool)
{
	gb_daemon *d = ud;
	int n;
	pthread_mutex_lock(&d->mmu);
	n = leaving(d, pool);
	pthread_mutex_unlock(&d->mmu);
	return n;
}

/* The admission pass (issue 35): every replica computes the same queue
 * from the shared state (the decision is pure); the pools it says must
 * wait are not converged, their note says their place.  A preemption
 * decided is told once by an event on both pools (the notice: when its
 * grace ends); with act (the reconcile pass), the leader ends the
 * victim's instances when the grace is over.  *blocked: the waiting
 * pools (caller frees). */
static void admission(gb_daemon *d, int64_t now, gb_strv *blocked, int act)
{
	json_t *a = gb_engine_admission(d->eng, now, leaving_locked, d,
	                                blocked), *p;
	json_t *pre = json_object_get(a, "preemptions");
	gb_preempt_rec *recs, *due = NULL;
	size_t i, n = 0, ndue = 0;
	int leader;
	pthread_mutex_lock(&d->mmu);
	recs = gb_xcalloc(json_array_size(pre) + d->npreempts + 1,
	                  sizeof(*recs));
	leader = d->leader || !gb_store_is_shared(d->store);
	json_array_foreach(pre, i, p) {
		gb_preempt_rec *r = &recs[n++], *old = NULL;
		r->victim = gb_xstrdup(json_string_value(json_object_get(p, "victim")));
		r->bene = gb_xstrdup(json_string_value(json_object_get(p, "for")));
		r->reason = gb_xstrdup(json_string_value(json_object_get(p, "reason")));
		r->count = (int)json_integer_value(json_object_get(p, "count"));
		for (size_t k = 0; k < d->npreempts && !old; k++)
			if (strcmp(d->preempts[k].victim, r->victim) == 0 &&
			    strcmp(d->preempts[k].bene, r->bene) == 0)
				old = &d->preempts[k];
		if (old) {
			r->due = old->due;
			r->done = old->done;
		} else {
			int64_t g = json_integer_value(json_object_get(p, "grace_s"));
			r->due = now + g;
			if (leader) {
				if (gb_store_event(d->store, r->victim, NULL, "preempt",
				                   "%s; notice: they end in %llds",
				                   r->reason, (long long)g) != 0 ||
				    gb_store_event(d->store, r->bene, NULL, "preempt",
				                   "%s", r->reason) != 0)
					gb_log(GB_LOG_ERROR, "reconcile", "preempt "
					       "event not recorded: %s",
					       gb_store_errmsg(d->store));
			}
		}
	}
	/* a preemption decided stands while its pool still waits: its
	 * instances count as leaving, so the decision is not made again */
	for (size_t k = 0; k < d->npreempts; k++) {
		gb_preempt_rec *o = &d->preempts[k];
		size_t j;
		if (!blocked || !gb_strv_contains(blocked, o->bene))
			continue;
		for (j = 0; j < n; j++)
			if (strcmp(recs[j].victim, o->victim) == 0 &&
			    strcmp(recs[j].bene, o->bene) == 0)
				break;
		if (j < n)
			continue;
		recs[n] = *o;
		memset(o, 0, sizeof(*o));
		n++;
	}
	gb_daemon_preempts_free(d->preempts, d->npreempts);
	d->preempts = recs;
	d->npreempts = n;
	json_decref(d->queue);
	d->queue = a;
	if (act && leader) {
		due = gb_xcalloc(n + 1, sizeof(*due));
		for (i = 0; i < n; i++)
			if (!recs[i].done && now >= recs[i].due) {
				recs[i].done = 1;
				due[ndue].victim = gb_xstrdup(recs[i].victim);
				due[ndue].bene = gb_xstrdup(recs[i].bene);
				due[ndue].reason = gb_xstrdup(recs[i].reason);
				due[ndue].count = recs[i].count;
				ndue++;
			}
	}
	pthread_mutex_unlock(&d->mmu);
	for (i = 0; i < ndue; i++) {
		gb_engine_result res;
		memset(&res, 0, sizeof(res));
		if (gb_engine_preempt(d->eng, due[i].victim, due[i].count,
		                      due[i].reason, &res) != 0) {
			/* (another replica holds the pool, the store
			 * failed): tried again next pass */
			gb_log(GB_LOG_WARN, "reconcile", "preempting %s: %s",
			       due[i].victim, res.message);
			pthread_mutex_lock(&d->mmu);
			for (size_t k = 0; k < d->npreempts; k++)
				if (!strcmp(d->preempts[k].victim, due[i].victim) &&
				    !strcmp(d->preempts[k].bene, due[i].bene))
					d->preempts[k].done = 0;
			pthread_mutex_unlock(&d->mmu);
		}
		gb_engine_result_free(&res);
	}
	gb_daemon_preempts_free(due, ndue);
}

/* A pool the admission holds back: its note says its place (and an
 * event when the place changes). */
static void queued(gb_daemon *d, const gb_pool_row *p)
{
	const char *reason = NULL;
	json_t *w;
	size_t i;
	char *note;
	pthread_mutex_lock(&d->mmu);
	json_array_foreach(json_object_get(d->queue, "queue"), i, w)
		if (strcmp(json_string_value(json_object_get(w, "pool")),
		           p->name) == 0)
			reason = json_string_value(json_object_get(w, "reason"));
	note = gb_xasprintf("queued: %s", reason ? reason : "waits its turn");
	pthread_mutex_unlock(&d->mmu);
	if (!p->note || strcmp(p->note, note) != 0) {
		if (gb_store_pool_set_note(d->store, p->name, note, 0) != 0 ||
		    gb_store_event(d->store, p->name, NULL, "queued", "%s",
		                   note) != 0)
			gb_log(GB_LOG_ERROR, "reconcile", "%s: queue note not "
			       "recorded: %s", p->name, gb_store_errmsg(d->store));
	}
	free(note);
}

int gb_daemon_admission_holds(gb_daemon *d, const char *pool)
{
	gb_strv blocked = {0};
	gb_pool_row row;
	int held;
	admission(d, gb_now_ms() / 1000, &blocked, 0);
	held = gb_strv_contains(&blocked, pool);
	if (held && gb_store_pool_get(d->store, pool, &row) == 0) {
		queued(d, &row);
		gb_pool_row_free(&row);
	}
	gb_strv_free(&blocked);
	return held;
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
	/* a failed describe leaves the rows as last seen; what it could
	 * not tell, the converges below do not act on */
	GB_IGNORE(gb_engine_refresh_all(d->eng, gc_due));
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
	gb_strv blocked = {0}, mine = {0};
	admission(d, now, &blocked, 1);
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
		gb_strv_push(&mine, p->name);
		/* agent pools: replace what never got ready */
		if (gb_engine_agent_overdue(d->eng, p) > 0)
			gb_daemon_kick(d);
		if (strcmp(p->state, "destroying") == 0) {
			said(gb_engine_destroy_step(d->eng, p->name,
			                            p->destroy_reason
			                                    ? p->destroy_reason
			                                    : "user", &res), &res);
		} else if (p->ttl_s > 0 && now >= p->created_at + p->ttl_s) {
			/* events here announce what follows: best effort */
			GB_IGNORE(gb_store_event(d->store, p->name, NULL, "ttl",
			               "TTL of %llds reached (created %llds ago); "
			               "destroying", (long long)p->ttl_s,
			               (long long)(now - p->created_at)));
			pthread_mutex_lock(&d->mmu);
			d->ttl_destroys++;
			pthread_mutex_unlock(&d->mmu);
			said(gb_engine_destroy_step(d->eng, p->name, "ttl", &res),
			     &res);
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
				GB_IGNORE(gb_store_event(d->store, p->name, NULL, "idle",
				               "no GPU use for %llds (idle_timeout "
				               "%llds); scaling to min %d",
				               (long long)(now - (p->last_gpu_use_at > p->created_at
				                                          ? p->last_gpu_use_at
				                                          : p->created_at)),
				               (long long)p->idle_timeout_s, min));
				said(gb_engine_scale(d->eng, p->name, min, &res),
				     &res);
			} else if (max <= min) {
				GB_IGNORE(gb_store_event(d->store, p->name, NULL, "idle",
				               "no GPU use for %llds (idle_timeout "
				               "%llds); destroying",
				               (long long)(now - (p->last_gpu_use_at > p->created_at
				                                          ? p->last_gpu_use_at
				                                          : p->created_at)),
				               (long long)p->idle_timeout_s));
				said(gb_engine_destroy_step(d->eng, p->name, "idle",
				                            &res), &res);
			} else {
				converge_unless_steady(d, p, steady, nsteady,
				                       &skipped, &res);
			}
		} else if (gb_strv_contains(&blocked, p->name)) {
			queued(d, p);
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
	gb_strv_free(&blocked);
	/* serve.webhook: the held pools' targets lists that changed */
	gb_daemon_webhooks(d, &mine);
	gb_strv_free(&mine);
	pthread_mutex_lock(&d->mmu);
	d->pools_held = held;
	d->pools_skipped = skipped;
	pthread_mutex_unlock(&d->mmu);
	/* orphans are looked for by one replica at a time (the leader), so
	 * listings are not multiplied by the number of replicas */
	if (!gb_daemon_leader(d))
		gc_due = 0;
	else if (!gb_daemon_stopping(d))
		gb_daemon_budget_warnings(d);
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
