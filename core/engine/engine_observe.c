/* engine_observe.c -- what the clouds say: refresh, wait, recovery of open
 * intents, and garbage collection of orphans. */
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "workers.h"

/* A new instance may be invisible to describe for a while (EC2 eventual
 * consistency); until then "not found" does not mean gone. */
#define GB_VISIBILITY_GRACE_S 300
/* instances.last_seen_ms is kept to this resolution: an unchanged row is
 * rewritten only when its last-seen is older (a refresh of 10,000
 * unchanged instances then writes nothing) */
#define GB_LAST_SEEN_RESOLUTION_MS 60000

/* Open-addressing index from a string key to a position (small tables:
 * (cloud, region) groups, and the ids one describe reported). */
typedef struct strindex {
	uint32_t *slots;  /* position + 1; 0 = empty */
	size_t mask;
} strindex;

static uint64_t key_hash(const char *a, const char *b)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a over a, '\x1f', b */
	for (; *a; a++)
		h = (h ^ (unsigned char)*a) * 1099511628211ULL;
	h = (h ^ 0x1f) * 1099511628211ULL;
	for (; b && *b; b++)
		h = (h ^ (unsigned char)*b) * 1099511628211ULL;
	return h ^ (h >> 29);
}

static void strindex_init(strindex *x, size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	x->slots = gb_xcalloc(cap, sizeof(*x->slots));
	x->mask = cap - 1;
}

static void strindex_free(strindex *x)
{
	free(x->slots);
	x->slots = NULL;
}

typedef struct dgroup {
	gb_engine *e;
	gb_drv *drv;
	char *cloud, *region;
	const char *pool;        /* NULL = by broker id */
	gb_seen_list seen;
	strindex ids;            /* seen.v by provider id (after describe) */
	gb_error err;
	int rc;
	int reused;              /* seen was taken from the kept listings */
} dgroup;

static void run_dgroup(void *ud, size_t i)
{
	dgroup *g = &((dgroup *)ud)[i];
	gb_describe_req req;
	if (g->reused)
		return;
	memset(&req, 0, sizeof(req));
	memset(&g->err, 0, sizeof(g->err));
	if (!g->drv) {
		g->rc = -1;
		gb_error_set(&g->err, GB_ERR_INTERNAL, 0, "DriverNotReady",
		             "driver %s is not loaded", g->cloud);
		return;
	}
	req.region = *g->region ? g->region : NULL; /* "": every region */
	req.pool = g->pool;
	req.broker_id = g->e->broker_id;
	req.include_terminated = 1;
	g->seen.drv_minor = g->drv->d->abi_minor;
	g->seen.want = &req;
	g->rc = g->drv->d->describe(g->drv->ctx, &req, gb_engine__collect,
	                            &g->seen, &g->err);
	g->seen.want = NULL; /* req ends here */
	/* index what was seen, here on the worker: the first report of an
	 * id wins, as the linear search it replaces found the first */
	strindex_init(&g->ids, g->seen.n);
	for (size_t k = 0; k < g->seen.n; k++) {
		size_t h = key_hash(g->seen.v[k].id, NULL) & g->ids.mask;
		int dup = 0;
		while (g->ids.slots[h]) {
			if (strcmp(g->seen.v[g->ids.slots[h] - 1].id,
			           g->seen.v[k].id) == 0) {
				dup = 1;
				break;
			}
			h = (h + 1) & g->ids.mask;
		}
		if (!dup)
			g->ids.slots[h] = (uint32_t)k + 1;
	}
}

/* The group of (cloud, region) in gx, or -1. */
static long group_find(const dgroup *g, const strindex *gx, const char *cloud,
                       const char *region)
{
	size_t h = key_hash(cloud, region) & gx->mask;
	while (gx->slots[h]) {
		const dgroup *c = &g[gx->slots[h] - 1];
		if (strcmp(c->cloud, cloud) == 0 && strcmp(c->region, region) == 0)
			return (long)gx->slots[h] - 1;
		h = (h + 1) & gx->mask;
	}
	return -1;
}

/* The region a describe of this cloud is asked for: "" (every region, in
 * one listing) when the driver can, else the region itself. */
static const char *describe_region(gb_engine *e, const char *cloud,
                                   const char *region)
{
	gb_drv *d = gb_engine__drv(e, cloud);
	return d && d->d && (d->d->caps & GB_DRV_CAP_DESCRIBE_ALL_REGIONS)
	               ? ""
	               : region;
}

/* One group per distinct (cloud, region) of rows, in order of first
 * appearance; grp[i] is row i's group.  gx indexes the groups. */
static dgroup *group_rows(gb_engine *e, const char *pool, gb_inst_row *rows,
                          size_t n, size_t *ng, size_t *grp, strindex *gx)
{
	dgroup *g = NULL;
	size_t cap = 0;
	*ng = 0;
	if (pool && strcmp(pool, GB_ORPHAN_POOL) == 0)
		pool = NULL; /* its instances carry other pool tags */
	strindex_init(gx, n);
	for (size_t i = 0; i < n; i++) {
		const char *region = describe_region(e, rows[i].cloud,
		                                     rows[i].region);
		long k = group_find(g, gx, rows[i].cloud, region);
		size_t h;
		if (k >= 0) {
			grp[i] = (size_t)k;
			continue;
		}
		if (*ng == cap) {
			cap = cap ? cap * 2 : 8;
			g = gb_xrealloc(g, cap * sizeof(*g));
		}
		memset(&g[*ng], 0, sizeof(*g));
		g[*ng].e = e;
		g[*ng].cloud = gb_xstrdup(rows[i].cloud);
		g[*ng].region = gb_xstrdup(region);
		g[*ng].drv = gb_engine__drv(e, rows[i].cloud);
		g[*ng].pool = pool;
		h = key_hash(rows[i].cloud, region) & gx->mask;
		while (gx->slots[h])
			h = (h + 1) & gx->mask;
		gx->slots[h] = (uint32_t)*ng + 1;
		grp[i] = (*ng)++;
	}
	return g;
}

static void groups_free(dgroup *g, size_t ng)
{
	for (size_t k = 0; k < ng; k++) {
		free(g[k].cloud);
		free(g[k].region);
		gb_seen_list_free(&g[k].seen);
		strindex_free(&g[k].ids);
	}
	free(g);
}

static const gb_seen *find_seen(const dgroup *g, const char *id)
{
	size_t h;
	if (!id || !g->ids.slots)
		return NULL;
	h = key_hash(id, NULL) & g->ids.mask;
	while (g->ids.slots[h]) {
		const gb_seen *s = &g->seen.v[g->ids.slots[h] - 1];
		if (strcmp(s->id, id) == 0)
			return s;
		h = (h + 1) & g->ids.mask;
	}
	return NULL;
}

/* An address the cloud reported equals the stored one; an unreported
 * one (NULL) keeps the stored value, as the store's COALESCE does. */
static int same_addr(const char *seen, const char *stored)
{
	return !seen || (stored && strcmp(seen, stored) == 0);
}

/* A reclaim not recorded yet: the cloud says preempted, or shows a
 * Spot instance stopping that gpubroker did not ask to end (GCE shows a
 * preempted VM STOPPING before TERMINATED or gone; the broker deletes,
 * it never stops).  The row is not "terminating" (the caller's case) and
 * not "preempted" already: once per instance. */
static int reclaimed_unseen(const gb_inst_row *r, gb_instance_state st)
{
	if (strcmp(r->state, "preempted") == 0 ||
	    strcmp(r->state, "terminating") == 0 ||
	    strcmp(r->state, "terminated") == 0)
		return 0;
	if (st == GB_INST_PREEMPTED)
		return 1;
	return st == GB_INST_STOPPING && r->capacity &&
	       strcmp(r->capacity, "spot") == 0;
}

/* The row as stored now is not being ended by gpubroker: the rows a
 * refresh looks at were read before its describe calls, and a terminate
 * journaled meanwhile (the row "terminating" before its call is sent)
 * makes the cloud show STOPPING too. */
static int not_ending_now(gb_engine *e, const gb_inst_row *r)
{
	gb_inst_row cur;
	int ok;
	if (gb_store_inst_get(e->o.store, r->id, &cur) != 0)
		return 0;
	ok = strcmp(cur.state, "terminating") != 0 &&
	     strcmp(cur.state, "terminated") != 0 &&
	     strcmp(cur.state, "preempted") != 0;
	gb_inst_row_free(&cur);
	return ok;
}

/* The event and the counter of a reclaim (once per instance). */
static void record_reclaim(gb_engine *e, const gb_inst_row *r,
                           const char *why)
{
	gb_pool_row p;
	gb_pool_spec spec;
	char err[256];
	gb_engine__stat(e, &e->stats.preemptions, 1);
	gb_engine__event(e, r->pool, r->provider_id, "preempted",
	                 "%s was reclaimed by %s (%s)", r->name, r->cloud, why);
	/* placement.spread: zone -- the zone that reclaimed cools down, so
	 * the replacements go elsewhere (the failover cooldown's marks) */
	if (gb_store_pool_get(e->o.store, r->pool, &p) != 0)
		return;
	if (gb_engine__spec(&p, &spec, err, sizeof(err)) == 0) {
		if (spec.spread_zone && r->instance_type &&
		    gb_store_unavailable_mark(
			    e->o.store, r->cloud, r->region,
			    r->zone ? r->zone : "", r->instance_type,
			    r->capacity ? r->capacity : "spot",
			    gb_now_ms() / 1000 + e->cooldown_s, "reclaimed") != 0)
			gb_log(GB_LOG_ERROR, "engine", "%s: the reclaimed zone's "
			       "cooldown not recorded: %s", r->name,
			       gb_store_errmsg(e->o.store));
		gb_pool_spec_free(&spec);
	}
	gb_pool_row_free(&p);
}

/* Records what a describe saw of row r: 0, or -1 when the store refused
 * it (logged; the row stays as it was, no event claims otherwise, and
 * the next describe tries again). */
static int seen_state(gb_engine *e, const gb_inst_row *r, const char *state,
                      const char *reason, int64_t now)
{
	if (gb_store_inst_set_state(e->o.store, r->id, state, reason, now) == 0)
		return 0;
	gb_log(GB_LOG_ERROR, "engine", "%s: %s not recorded: %s", r->name,
	       state, gb_store_errmsg(e->o.store));
	return -1;
}

static void apply_seen(gb_engine *e, gb_inst_row *r, const gb_seen *s,
                       int64_t now)
{
	const char *cur = r->state;
	const char *nxt = gb_engine__state_str(s->state);
	int terminating = strcmp(cur, "terminating") == 0;
	int moved;
	gb_inst_row upd;

	/* addresses and last-seen, without touching the state; a row whose
	 * addresses did not change and whose last-seen is recent is not
	 * rewritten (most rows of most passes) */
	if (!same_addr(s->private_ip, r->private_ip) ||
	    !same_addr(s->public_ip, r->public_ip) ||
	    r->last_seen_ms <= now - GB_LAST_SEEN_RESOLUTION_MS) {
		memset(&upd, 0, sizeof(upd));
		upd.id = r->id;
		upd.state = r->state;
		upd.state_reason = r->state_reason;
		upd.private_ip = s->private_ip;
		upd.public_ip = s->public_ip;
		upd.last_seen_ms = now;
		/* addresses and last-seen only: the next pass writes them */
		if (gb_store_inst_put(e->o.store, &upd) != 0)
			gb_log(GB_LOG_ERROR, "engine", "%s: addresses not "
			       "recorded: %s", r->name, gb_store_errmsg(e->o.store));
	}

	if (terminating) {
		/* only the end matters now */
		if ((s->state == GB_INST_TERMINATED ||
		     s->state == GB_INST_PREEMPTED) &&
		    seen_state(e, r, "terminated", NULL, now) == 0) {
			gb_engine__event(e, r->pool, r->provider_id, "terminated",
			                 "%s terminated (confirmed by %s)", r->name,
			                 r->cloud);
		}
		return;
	}
	if (reclaimed_unseen(r, s->state)) {
		if (!not_ending_now(e, r))
			return; /* ended meanwhile: the next refresh confirms it */
		/* A reclaim, whatever state the cloud shows it in first (GCE's
		 * STOPPING, EC2's shutting-down with its reason, a PREEMPTED):
		 * recorded and counted once, here, as the row becomes
		 * "preempted". */
		if (seen_state(e, r, "preempted",
		               s->state_reason ? s->state_reason
		                               : "stopping: reclaimed",
		               now) == 0)
			record_reclaim(e, r, s->state_reason ? s->state_reason
			                                     : "spot");
		return;
	}
	if (strcmp(cur, "preempted") == 0 && s->state == GB_INST_STOPPING)
		return; /* on its way out: it stays "preempted" */
	if (strcmp(cur, nxt) == 0)
		return;
	if (s->state == GB_INST_TERMINATED && strcmp(cur, "preempted") == 0)
		nxt = "terminated";
	/* from the state this refresh read: a concurrent refresh (another
	 * thread, a replica taking over, a CLI wait) that moved it first
	 * has announced it, and the event is not written twice */
	moved = gb_store_inst_move_state(e->o.store, r->id, cur, nxt,
	                                 s->state_reason, now);
	if (moved < 0)
		gb_log(GB_LOG_ERROR, "engine", "%s: %s not recorded: %s",
		       r->name, nxt, gb_store_errmsg(e->o.store));
	if (moved != 1)
		return;
	if (s->state == GB_INST_RUNNING)
		gb_engine__event(e, r->pool, r->provider_id, "running",
		                 "%s is running%s%s", r->name,
		                 s->public_ip ? " at " : "",
		                 s->public_ip ? s->public_ip : "");
	else if (s->state == GB_INST_FAILED)
		gb_engine__event(e, r->pool, r->provider_id, "failed",
		                 "%s failed (%s)", r->name,
		                 s->state_reason ? s->state_reason : "unknown");
	else if (s->state == GB_INST_TERMINATED)
		gb_engine__event(e, r->pool, r->provider_id, "terminated",
		                 "%s terminated outside gpubroker (%s)", r->name,
		                 s->state_reason ? s->state_reason : "no reason given");
}

void gb_engine__drop_kept(gb_engine *e)
{
	pthread_mutex_lock(&e->kept_mu);
	groups_free(e->kept, e->nkept);
	e->kept = NULL;
	e->nkept = 0;
	pthread_mutex_unlock(&e->kept_mu);
}

/* Hands this refresh's listings to the next gc (see gb_engine_refresh_all). */
static void keep_groups(gb_engine *e, dgroup *g, size_t ng)
{
	void *old;
	size_t nold;
	pthread_mutex_lock(&e->kept_mu);
	old = e->kept;
	nold = e->nkept;
	e->kept = g;
	e->nkept = ng;
	e->kept_ms = gb_mono_ms();
	pthread_mutex_unlock(&e->kept_mu);
	groups_free(old, nold);
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int refresh_rows(gb_engine *e, const char *pool, gb_inst_row *rows,
                        size_t n, int keep)
{
	size_t ng, *grp, npend;
	strindex gx;
	dgroup *g;
	int64_t now, *pend;
	int rc = 0, tx;
	char err[1024];
	/* Terminate outcomes the store refused go first: a row seen gone
	 * here must end at the time the cloud accepted its terminate, not
	 * now.  While the store refuses them, nothing is described (its
	 * writes would be refused too). */
	if (gb_engine__settle(e, err, sizeof(err)) != 0)
		return -1;
	grp = gb_xmalloc((n ? n : 1) * sizeof(*grp));
	g = group_rows(e, pool, rows, n, &ng, grp, &gx);
	now = gb_now_ms();
	gb_parallel_for(ng, e->workers, run_dgroup, g);
	/* and one refused meanwhile (another pool's terminate, on another
	 * thread) leaves its rows alone until it is written */
	pend = gb_engine__pending_rows(e, &npend);
	/* Every write of this refresh in one transaction: one commit instead
	 * of one per instance.  When it cannot begin (another process holds
	 * the database past the busy timeout) each write is its own
	 * transaction, as they would be anyway. */
	tx = gb_store_begin(e->o.store) == 0;
	for (size_t i = 0; i < n; i++) {
		gb_inst_row *r = &rows[i];
		dgroup *gr = &g[grp[i]];
		const gb_seen *s;
		if (gr->rc != 0)
			continue; /* cannot tell: leave as is */
		if (npend && bsearch(&r->id, pend, npend, sizeof(*pend), cmp_id))
			continue; /* its terminate's outcome is not recorded yet */
		s = find_seen(gr, r->provider_id);
		if (s) {
			apply_seen(e, r, s, now);
			continue;
		}
		/* not found */
		if (strcmp(r->state, "terminating") == 0) {
			if (seen_state(e, r, "terminated", NULL, now) == 0)
				gb_engine__event(e, r->pool, r->provider_id, "terminated",
			                 "%s terminated (gone from %s)", r->name,
			                 r->cloud);
		} else if (strcmp(r->state, "pending") == 0 &&
		           r->launched_ms > now - GB_VISIBILITY_GRACE_S * 1000) {
			/* eventual consistency: give it time */
		} else if (r->provider_id) {
			/* a Spot instance gone before it was seen reclaimed (GCE
			 * deletes one whose termination action is DELETE), and
			 * not ended by gpubroker meanwhile */
			int reclaimed = strcmp(r->state, "preempted") != 0 &&
			                r->capacity &&
			                strcmp(r->capacity, "spot") == 0 &&
			                not_ending_now(e, r);
			if (seen_state(e, r, "terminated", "vanished", now) != 0)
				continue; /* logged; the next describe tries again */
			if (reclaimed)
				record_reclaim(e, r, "gone from the listing");
			gb_engine__event(e, r->pool, r->provider_id, "vanished",
			                 "%s is no longer known to %s; counted as "
			                 "gone", r->name, r->cloud);
		}
	}
	for (size_t k = 0; k < ng; k++)
		if (g[k].rc != 0) {
			rc = -1;
			gb_engine__event(e, pool, NULL, "error",
			                 "describe in %s/%s failed (%s%s%s): %s",
			                 g[k].cloud,
			                 *g[k].region ? g[k].region : "(all regions)",
			                 gb_err_class_name(g[k].err.cls),
			                 g[k].err.code[0] ? " " : "", g[k].err.code,
			                 g[k].err.message);
		}
	if (tx && gb_store_commit(e->o.store) != 0) {
		gb_log(GB_LOG_ERROR, "engine", "refresh: %s",
		       gb_store_errmsg(e->o.store));
		rc = -1;
	}
	if (keep && !pool)
		keep_groups(e, g, ng);
	else
		groups_free(g, ng);
	strindex_free(&gx);
	free(grp);
	free(pend);
	return rc;
}

int gb_engine__refresh_rows(gb_engine *e, const char *pool, gb_inst_row *rows,
                            size_t n)
{
	return refresh_rows(e, pool, rows, n, 0);
}

static int refresh(gb_engine *e, const char *pool, int keep)
{
	gb_inst_row *rows;
	size_t n;
	int rc;
	char err[1024];
	if (keep)
		gb_engine__drop_kept(e); /* never a listing older than this */
	/* before the rows are read: their recorded outcomes included */
	if (gb_engine__settle(e, err, sizeof(err)) != 0)
		return -1;
	if (gb_store_inst_list(e->o.store, pool, 1, &rows, &n) != 0)
		return -1;
	rc = n ? refresh_rows(e, pool, rows, n, keep) : 0;
	gb_inst_list_free(rows, n);
	return rc;
}

int gb_engine_refresh(gb_engine *e, const char *pool)
{
	return refresh(e, pool, 0);
}

int gb_engine_refresh_all(gb_engine *e, int keep_for_gc)
{
	return refresh(e, NULL, keep_for_gc);
}

int gb_engine_wait(gb_engine *e, const char *pool, int64_t timeout_s,
                   char *err, size_t cap)
{
	int64_t deadline = gb_mono_ms() + timeout_s * 1000;
	for (;;) {
		gb_pool_row row;
		gb_inst_row *rows;
		size_t n, running = 0, ending = 0;
		int desired;
		int rc = gb_store_pool_get(e->o.store, pool, &row);
		if (rc != 0) {
			snprintf(err, cap, rc == 1 ? "no pool named %s"
			                           : "state store failed: %s",
			         rc == 1 ? pool : gb_store_errmsg(e->o.store));
			return -1;
		}
		if (strcmp(row.state, "active") != 0) {
			snprintf(err, cap, "the pool is %s (%s)", row.state,
			         row.destroy_reason ? row.destroy_reason : "user");
			gb_pool_row_free(&row);
			return GB_ENGINE_WAIT_GONE;
		}
		/* a failed describe: the rows read below are the last seen */
		GB_IGNORE(gb_engine_refresh(e, pool));
		if (gb_store_inst_list(e->o.store, pool, 1, &rows, &n) != 0) {
			gb_pool_row_free(&row);
			snprintf(err, cap, "state store failed: %s",
			         gb_store_errmsg(e->o.store));
			return -1;
		}
		for (size_t i = 0; i < n; i++) {
			if (strcmp(rows[i].state, "running") == 0)
				running++;
			else if (strcmp(rows[i].state, "terminating") == 0)
				ending++;
			else if (strcmp(rows[i].state, "failed") == 0) {
				snprintf(err, cap, "instance %s failed: %s", rows[i].name,
				         rows[i].state_reason ? rows[i].state_reason
				                              : "no reason given");
				gb_inst_list_free(rows, n);
				gb_pool_row_free(&row);
				return -1;
			}
		}
		gb_inst_list_free(rows, n);
		/* as asked: every desired instance runs, and the clouds
		 * confirmed that the ones it ended (a scale-down) are gone */
		desired = row.desired;
		if ((int)running == desired && !ending) {
			gb_pool_row_free(&row);
			return 1;
		}
		if (gb_engine__note_refused(row.note)) {
			/* refused for good: waiting cannot change it */
			snprintf(err, cap, "%s", row.note);
			gb_pool_row_free(&row);
			return -1;
		}
		if (row.note && row.retry_at_ms && row.retry_at_ms <= gb_now_ms()) {
			/* The pool is short, waiting for its next attempt, and
			 * that moment has come: try, as the daemon's reconciler
			 * would (an apply --wait without a daemon rides out the
			 * backoff instead of giving up). */
			gb_engine_result res;
			if (gb_engine_converge(e, pool, &res) != 0 &&
			    res.store_failed) {
				snprintf(err, cap, "%s", res.message);
				gb_engine_result_free(&res);
				gb_pool_row_free(&row);
				return -1;
			}
			gb_engine_result_free(&res);
		}
		gb_pool_row_free(&row);
		if ((timeout_s > 0 && gb_mono_ms() > deadline) ||
		    (e->o.stop && *e->o.stop)) {
			if ((int)running >= desired)
				snprintf(err, cap, "%zu instance%s still terminating "
				         "(not yet confirmed by the cloud) when the wait "
				         "ended", running - (size_t)desired + ending,
				         running - (size_t)desired + ending == 1 ? "" : "s");
			else
				snprintf(err, cap, "%zu of the pool's instances running "
				         "when the wait ended", running);
			return 0;
		}
		gb_sleep_ms(e->poll_ms);
	}
}

static int token_matches(const char *tag, const char *token)
{
	size_t n = strlen(token);
	return tag && strncmp(tag, token, n) == 0 &&
	       (tag[n] == '\0' || tag[n] == '-');
}

/* A programming error that would have the engine act on instances of
 * pools the operation is not about: stop the process rather than
 * terminate a fleet. */
static _Noreturn void misuse(const char *pool, const char *what)
{
	gb_log(GB_LOG_ERROR, "engine", "internal error: %s (pool %s); "
	       "stopped before acting on it", what, pool ? pool : "(none)");
	abort();
}

int gb_engine__live_rows(gb_engine *e, const char *pool, int refresh,
                         gb_inst_row **rows, size_t *n)
{
	*rows = NULL;
	*n = 0;
	if (!pool || !*pool) /* NULL lists every pool's instances */
		misuse(pool, "live rows asked for no pool");
	if (gb_store_inst_list(e->o.store, pool, 1, rows, n) != 0)
		return -1;
	if (*n && refresh) {
		/* a failed describe leaves the rows as they were: read again */
		GB_IGNORE(gb_engine__refresh_rows(e, pool, *rows, *n));
		gb_inst_list_free(*rows, *n);
		if (gb_store_inst_list(e->o.store, pool, 1, rows, n) != 0)
			return -1;
	}
	for (size_t i = 0; i < *n; i++) {
		if (!(*rows)[i].pool || strcmp((*rows)[i].pool, pool) != 0) {
			misuse(pool, "the store listed a row of another pool");
		}
	}
	return 0;
}

int gb_engine__live(gb_engine *e, const char *pool, int64_t intent_id,
                    int *all, int *of_intent)
{
	gb_inst_row *rows;
	size_t n;
	*all = *of_intent = 0;
	if (gb_store_inst_list(e->o.store, pool, 1, &rows, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int live = strcmp(rows[i].state, "pending") == 0 ||
		           strcmp(rows[i].state, "running") == 0;
		*all += live;
		*of_intent += live && intent_id && rows[i].intent_id == intent_id;
	}
	gb_inst_list_free(rows, n);
	return 0;
}

/* An open create intent (a crash mid-call, or an unknown outcome).  For
 * an active pool that still wants what it asked for, the create is
 * replayed with the same token (see engine_create.c): providers
 * deduplicate, so it returns what the interrupted call made and makes
 * the rest.  Otherwise (the pool is being destroyed, or was scaled down
 * meanwhile) replaying would make more than the pool wants: the
 * instances carrying the token are adopted, by describe, and the intent
 * closed; destroy or the next converge releases any surplus. */
static void recover_create(gb_engine *e, const gb_intent_row *in)
{
	gb_pool_row prow;
	int got = gb_store_pool_get(e->o.store, in->pool, &prow);
	if (got < 0) {
		/* what the pool wants is unknown: leave the intent open for
		 * the next start or converge */
		gb_log(GB_LOG_ERROR, "engine", "cannot resolve create intent "
		       "%lld: state store failed: %s", (long long)in->id,
		       gb_store_errmsg(e->o.store));
		return;
	}
	if (got == 0) {
		int all, mine;
		int active;
		gb_pool_spec spec;
		char err[1024];
		if (gb_engine__live(e, in->pool, in->id, &all, &mine) != 0) {
			gb_log(GB_LOG_ERROR, "engine", "cannot resolve create "
			       "intent %lld: state store failed: %s",
			       (long long)in->id, gb_store_errmsg(e->o.store));
			gb_pool_row_free(&prow);
			return;
		}
		active = strcmp(prow.state, "active") == 0 &&
		         all - mine + in->count <= prow.desired;
		if (active && gb_engine__spec(&prow, &spec, err, sizeof(err)) == 0) {
			int r;
			if (gb_engine__lock_pool(e, in->pool, err, sizeof(err)) != 0) {
				/* another process may be changing the pool: its
				 * intent stays open for the next start (or the
				 * pool's next converge, which replays it) */
				gb_engine__event(e, in->pool, NULL, "error",
				                 "cannot resolve create intent %lld: "
				                 "%s", (long long)in->id, err);
				gb_pool_spec_free(&spec);
				gb_pool_row_free(&prow);
				return;
			}
			r = gb_engine__replay_create(e, &spec, in, err, sizeof(err));
			if (r == 0)
				gb_engine__event(e, in->pool, NULL, "recovered",
				                 "replayed interrupted create %lld "
				                 "(token %s) in %s/%s%s%s", (long long)in->id,
				                 in->token, in->cloud, in->region,
				                 in->zone && *in->zone ? "/" : "",
				                 in->zone ? in->zone : "");
			else if (r < 0)
				gb_engine__event(e, in->pool, NULL, "error",
				                 "cannot resolve create intent %lld: %s; "
				                 "will retry on the next start",
				                 (long long)in->id, err);
			gb_engine__unlock_pool(e, in->pool);
			gb_pool_spec_free(&spec);
			gb_pool_row_free(&prow);
			return;
		}
		gb_pool_row_free(&prow);
	}
	gb_engine__resolve_by_describe(e, in);
}

void gb_engine__resolve_by_describe(gb_engine *e, const gb_intent_row *in)
{
	gb_drv *drv = gb_engine__drv(e, in->cloud);
	gb_describe_req req;
	gb_seen_list seen = {0};
	gb_error err;
	gb_pool_row pool;
	int adopted = 0, unrecorded = 0, active;
	int64_t now = gb_now_ms();
	int idx = in->first_index;
	if (!drv) {
		gb_engine__event(e, in->pool, NULL, "error",
		                 "cannot resolve create intent %lld: driver %s not "
		                 "ready; will retry on the next start",
		                 (long long)in->id, in->cloud);
		return;
	}
	memset(&req, 0, sizeof(req));
	memset(&err, 0, sizeof(err));
	req.region = in->region;
	req.pool = in->pool;
	req.broker_id = e->broker_id;
	req.include_terminated = 0;
	seen.drv_minor = drv->d->abi_minor;
	seen.want = &req;
	if (drv->d->describe(drv->ctx, &req, gb_engine__collect, &seen, &err) != 0) {
		gb_engine__event(e, in->pool, NULL, "error",
		                 "cannot resolve create intent %lld: %s; will retry",
		                 (long long)in->id, err.message);
		gb_seen_list_free(&seen);
		return;
	}
	active = 0;
	switch (gb_store_pool_get(e->o.store, in->pool, &pool)) {
	case 0:
		active = strcmp(pool.state, "active") == 0;
		gb_pool_row_free(&pool);
		break;
	case 1:
		break;
	default:
		gb_engine__event(e, in->pool, NULL, "error",
		                 "cannot resolve create intent %lld: state store "
		                 "failed: %s; will retry", (long long)in->id,
		                 gb_store_errmsg(e->o.store));
		gb_seen_list_free(&seen);
		return;
	}
	for (size_t i = 0; i < seen.n; i++) {
		gb_seen *s = &seen.v[i];
		gb_inst_row r, old;
		char name[160];
		if (!token_matches(s->token, in->token))
			continue;
		if (gb_store_inst_find(e->o.store, in->cloud, s->id, &old) == 0) {
			gb_inst_row_free(&old);
			continue; /* already recorded */
		}
		snprintf(name, sizeof(name), "%s-%d", in->pool, idx);
		memset(&r, 0, sizeof(r));
		r.pool = in->pool;
		r.cloud = in->cloud;
		r.region = s->region && *s->region ? s->region : in->region;
		r.zone = s->zone && *s->zone ? s->zone : in->zone;
		r.instance_type = in->instance_type;
		r.capacity = in->capacity;
		r.provider_id = s->id;
		r.name = s->name && *s->name ? s->name : name;
		r.token = s->token;
		r.state = (char *)gb_engine__state_str(s->state);
		r.private_ip = s->private_ip;
		r.public_ip = s->public_ip;
		r.gpu_model = in->gpu_model;
		r.gpu_count = in->gpu_count;
		r.price_per_hour = in->price_per_hour;
		r.launched_ms = s->created_ms > 0   ? s->created_ms
		                : s->created_at > 0 ? s->created_at * 1000
		                                    : in->created_at;
		r.last_seen_ms = now;
		r.intent_id = in->id;
		r.name_index = idx++;
		if (gb_store_inst_put(e->o.store, &r) != 0) {
			unrecorded++;
		} else {
			adopted++;
			gb_engine__event(e, in->pool, s->id, "recovered",
			                 "adopted %s from an interrupted create%s",
			                 r.name, active ? "" : " (pool no longer "
			                                       "active: it will be "
			                                       "terminated)");
		}
	}
	if (unrecorded) {
		/* closed, the intent would no longer explain them: gc would
		 * take them for orphans.  Open, the next start adopts them. */
		gb_log(GB_LOG_ERROR, "engine", "create intent %lld: %d "
		       "instance%s not recorded (state store failed: %s); the "
		       "intent stays open", (long long)in->id, unrecorded,
		       gb_plural(unrecorded), gb_store_errmsg(e->o.store));
		gb_seen_list_free(&seen);
		return;
	}
	if (gb_store_intent_close(e->o.store, in->id, "done",
	                          adopted ? NULL
	                                  : "recovered: nothing was created") != 0)
		gb_log(GB_LOG_ERROR, "engine", "create intent %lld stays open "
		       "(state store failed: %s); the next recovery closes it",
		       (long long)in->id, gb_store_errmsg(e->o.store));
	else if (!adopted)
		gb_engine__event(e, in->pool, NULL, "recovered",
		                 "interrupted create %lld made nothing; closed",
		                 (long long)in->id);
	gb_seen_list_free(&seen);
}

/* A terminate cut off by a crash.  Its intent was journaled right before
 * the call, so an instance the cloud already shows stopping or gone got
 * that call: its billing ended at the journal time.  The others (still
 * pending, running or failed, not listed, or in a region whose describe
 * failed) are terminated again, as a new journaled terminate whose
 * request time ends their billing unless it was recorded here. */
static void recover_terminate(gb_engine *e, const gb_intent_row *in)
{
	json_t *d = in->detail ? json_loads(in->detail, 0, NULL) : NULL;
	json_t *ids = json_object_get(d, "ids");
	size_t n = json_array_size(ids), nr = 0, ng = 0, nagain = 0;
	gb_inst_row *rows = gb_xcalloc(n ? n : 1, sizeof(*rows));
	gb_inst_row **again = gb_xcalloc(n ? n : 1, sizeof(*again));
	size_t *grp = gb_xcalloc(n ? n : 1, sizeof(*grp));
	strindex gx;
	dgroup *g;

	for (size_t i = 0; i < n; i++) {
		const char *id = json_string_value(json_array_get(ids, i));
		int found = id ? gb_store_inst_find(e->o.store, in->cloud, id,
		                                    &rows[nr])
		               : 1;
		if (found < 0) {
			/* the intent stays open for the next recovery */
			gb_log(GB_LOG_ERROR, "engine", "terminate intent %lld not "
			       "recovered: state store failed: %s",
			       (long long)in->id, gb_store_errmsg(e->o.store));
			free(again);
			free(grp);
			gb_inst_list_free(rows, nr);
			json_decref(d);
			return;
		}
		if (found != 0)
			continue;
		if (strcmp(rows[nr].state, "terminated") == 0) {
			gb_inst_row_free(&rows[nr]); /* confirmed already */
			continue;
		}
		nr++;
	}
	g = group_rows(e, in->pool, rows, nr, &ng, grp, &gx);
	gb_parallel_for(ng, e->workers, run_dgroup, g);
	for (size_t i = 0; i < nr; i++) {
		const dgroup *gr = &g[grp[i]];
		const gb_seen *s = gr->rc == 0 ? find_seen(gr, rows[i].provider_id)
		                               : NULL;
		int stopped = s && (s->state == GB_INST_STOPPING ||
		                    s->state == GB_INST_TERMINATED ||
		                    s->state == GB_INST_PREEMPTED);
		/* not listed: gone (GCE and Azure drop deleted instances) or
		 * not yet visible (EC2 eventual consistency): counted as
		 * ended at the journal time, but sent again to be sure */
		if ((stopped || (gr->rc == 0 && !s)) &&
		    gb_store_inst_term_accepted(e->o.store, rows[i].id,
		                                in->created_at) != 0)
			gb_log(GB_LOG_ERROR, "engine", "%s: the end of its billing "
			       "not recorded: %s", rows[i].name,
			       gb_store_errmsg(e->o.store));
		if (!stopped)
			again[nagain++] = &rows[i];
	}
	if (nagain)
		gb_engine__terminate_rows(e, again, nagain,
		                          "interrupted terminate sent again");
	/* handed over: the rows are terminating (with their end recorded)
	 * or in a new intent; a failed new call is retried by converge */
	if (gb_store_intent_close(e->o.store, in->id, "done", NULL) != 0)
		gb_log(GB_LOG_ERROR, "engine", "terminate intent %lld stays "
		       "open (state store failed: %s); the next recovery "
		       "closes it", (long long)in->id,
		       gb_store_errmsg(e->o.store));
	groups_free(g, ng);
	strindex_free(&gx);
	free(grp);
	free(again);
	gb_inst_list_free(rows, nr);
	json_decref(d);
}

/* pool NULL: every open intent, except, on a shared store, those of pools
 * another process holds (their holder resolves them; a dead holder's
 * are resolved by whoever takes the pool over: gb_engine_claim). */
static int recover_some(gb_engine *e, const char *pool)
{
	gb_intent_row *v;
	size_t n;
	int done = 0, shared = gb_store_is_shared(e->o.store);
	char err[1024];
	/* this engine's own refused outcomes are exact: written first, and
	 * their intents not "recovered" by the journal time */
	if (gb_engine__settle(e, err, sizeof(err)) != 0)
		return -1;
	if (gb_store_intent_list_open(e->o.store, &v, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (pool && strcmp(v[i].pool, pool) != 0)
			continue;
		if (!pool && shared) {
			char lname[300];
			int64_t token;
			snprintf(lname, sizeof(lname), "pool:%s", v[i].pool);
			if (gb_store_lease_acquire(e->o.store, lname, e->lease_ms,
			                           &token, NULL, 0) != 0)
				continue;
		}
		if (strcmp(v[i].kind, "create") == 0)
			recover_create(e, &v[i]);
		else if (!gb_engine__pending_intent(e, v[i].id))
			recover_terminate(e, &v[i]);
		done++;
	}
	gb_intent_list_free(v, n);
	return done;
}

int gb_engine_recover(gb_engine *e)
{
	return recover_some(e, NULL);
}

int gb_engine__recover_pool(gb_engine *e, const char *pool)
{
	return recover_some(e, pool);
}

/* ---- garbage collection ---- */

typedef struct known {
	gb_strv ids;     /* "cloud\x1fid" */
	strindex idx;    /* ids by hash */
	gb_strv tokens;  /* open intents */
} known;

static int known_has(const known *k, const char *cloud, const char *id)
{
	char *key = gb_xasprintf("%s\x1f%s", cloud, id);
	size_t h = key_hash(key, NULL) & k->idx.mask;
	int found = 0;
	while (k->idx.slots[h] && !found) {
		found = strcmp(k->ids.v[k->idx.slots[h] - 1], key) == 0;
		h = (h + 1) & k->idx.mask;
	}
	free(key);
	return found;
}

/* An instance gc leaves alone because the store could not say what it
 * is: a report row {cloud, region, id, pool, action "unchecked", error}
 * and an error event.  Returns 1 (counted as unchecked). */
static int gc_unread(gb_engine *e, json_t *rep, const char *cloud,
                     const char *region, const gb_seen *s)
{
	char why[600];
	snprintf(why, sizeof(why), "state store failed: %s",
	         gb_store_errmsg(e->o.store));
	gb_engine__event(e, NULL, s->id, "error", "gc: %s/%s %s left alone: "
	                 "%s; the next gc looks at it again", cloud, region,
	                 s->id, why);
	json_array_append_new(rep, json_pack("{s:s, s:s, s:s, s:s?, s:s, s:s}",
	                                     "cloud", cloud, "region", region,
	                                     "id", s->id, "pool", s->pool,
	                                     "action", "unchecked", "error",
	                                     why));
	return 1;
}

static int load_known(gb_engine *e, known *k)
{
	gb_intent_row *in;
	gb_inst_row *rows;
	size_t nin, nrows;
	memset(k, 0, sizeof(*k));
	/* one read transaction: a consistent snapshot, so an instance being
	 * recorded right now is either in the intents or in the rows */
	if (gb_store_begin(e->o.store) != 0)
		return -1;
	if (gb_store_intent_list_open(e->o.store, &in, &nin) != 0) {
		gb_store_rollback(e->o.store);
		return -1;
	}
	if (gb_store_inst_list(e->o.store, NULL, 0, &rows, &nrows) != 0) {
		gb_intent_list_free(in, nin);
		gb_store_rollback(e->o.store);
		return -1;
	}
	if (gb_store_commit(e->o.store) != 0) {
		/* a snapshot that may not be one: no gc on it */
		gb_intent_list_free(in, nin);
		gb_inst_list_free(rows, nrows);
		return -1;
	}
	for (size_t i = 0; i < nin; i++)
		if (strcmp(in[i].kind, "create") == 0)
			gb_strv_push(&k->tokens, in[i].token);
	for (size_t i = 0; i < nrows; i++)
		if (rows[i].provider_id)
			gb_strv_push_take(&k->ids, gb_xasprintf("%s\x1f%s", rows[i].cloud,
			                                        rows[i].provider_id));
	gb_intent_list_free(in, nin);
	gb_inst_list_free(rows, nrows);
	strindex_init(&k->idx, k->ids.n);
	for (size_t i = 0; i < k->ids.n; i++) {
		size_t h = key_hash(k->ids.v[i], NULL) & k->idx.mask;
		while (k->idx.slots[h])
			h = (h + 1) & k->idx.mask;
		k->idx.slots[h] = (uint32_t)i + 1;
	}
	return 0;
}

/* Moves the kept listings of a recent full refresh into the gc's groups
 * of the same (cloud, region); those are not listed again.  A listing a
 * little older than the gc's own is as good for finding orphans: an
 * instance it shows was created before it, so it is known by now (in
 * the rows, live or not, or as an open intent's token) unless it is an
 * orphan. */
static void reuse_kept(gb_engine *e, dgroup *g, size_t ng)
{
	dgroup *kept;
	size_t nkept, usable;
	pthread_mutex_lock(&e->kept_mu);
	kept = e->kept;
	nkept = usable = e->nkept;
	if (kept && gb_mono_ms() - e->kept_ms > GB_GC_REUSE_MS)
		usable = 0; /* too old: listed again (and freed below) */
	e->kept = NULL;
	e->nkept = 0;
	pthread_mutex_unlock(&e->kept_mu);
	for (size_t j = 0; j < ng; j++)
		for (size_t k = 0; k < usable; k++) {
			dgroup *s = &kept[k];
			if (s->rc != 0 || s->reused || strcmp(s->cloud, g[j].cloud) ||
			    strcmp(s->region, g[j].region))
				continue;
			g[j].seen = s->seen;
			memset(&s->seen, 0, sizeof(s->seen));
			g[j].rc = 0;
			g[j].reused = s->reused = 1;
			break;
		}
	groups_free(kept, nkept);
}

/* The catalog price of what s is (0 when the catalog has no such offer). */
static double seen_price(gb_engine *e, const char *cloud, const char *region,
                         const gb_seen *s)
{
	size_t ncat = gb_catalog_count(e->o.cat);
	for (size_t c = 0; c < ncat; c++) {
		const gb_coffer *o = gb_catalog_at(e->o.cat, c);
		if (strcmp(o->cloud, cloud) == 0 && strcmp(o->region, region) == 0 &&
		    s->instance_type &&
		    strcmp(o->instance_type, s->instance_type) == 0 &&
		    o->capacity == s->capacity)
			return o->price;
	}
	return 0;
}

/* A store row for an instance the gc found (adopted into pool, or
 * recorded in GB_ORPHAN_POOL to be terminated): its fields borrow from
 * s, cloud, region and name, except state (malloc'd: the caller frees
 * it, or gb_engine__terminate_rows replaces it). */
static void seen_row(gb_engine *e, const gb_seen *s, const char *pool,
                     const char *cloud, const char *region, const char *name,
                     int64_t now, gb_inst_row *r)
{
	memset(r, 0, sizeof(*r));
	r->pool = (char *)pool;
	r->cloud = (char *)cloud;
	r->region = (char *)region;
	r->zone = s->zone;
	r->instance_type = s->instance_type ? s->instance_type : (char *)"unknown";
	r->capacity = (char *)gb_capacity_name(s->capacity);
	r->provider_id = s->id;
	r->name = s->name && *s->name ? s->name : (char *)name;
	r->token = s->token;
	r->state = gb_xstrdup(gb_engine__state_str(s->state));
	r->private_ip = s->private_ip;
	r->public_ip = s->public_ip;
	r->price_per_hour = seen_price(e, cloud, region, s);
	/* billing starts when the cloud says the instance was made */
	r->launched_ms = s->created_ms > 0   ? s->created_ms
	                 : s->created_at > 0 ? s->created_at * 1000
	                                     : now;
	r->last_seen_ms = now;
}

/* Makes GB_ORPHAN_POOL exist (destroyed: seen by no pool list).  0, or
 * -1 when the store refuses (gb_store_errmsg). */
static int orphan_pool(gb_engine *e)
{
	gb_pool_row p;
	int rc = gb_store_pool_get(e->o.store, GB_ORPHAN_POOL, &p);
	if (rc == 0)
		gb_pool_row_free(&p);
	if (rc <= 0)
		return rc;
	memset(&p, 0, sizeof(p));
	p.name = (char *)GB_ORPHAN_POOL;
	p.team = (char *)GB_ORPHAN_POOL;
	p.spec_json = (char *)"{}";
	p.spec_hash = (char *)"";
	p.state = (char *)"destroyed";
	p.created_at = gb_now_ms() / 1000;
	return gb_store_pool_put(e->o.store, &p);
}

/* The row of prev (indexed by px) for this cloud's instance id, or NULL. */
static gb_inst_row *prev_find(gb_inst_row *prev, const strindex *px,
                              const char *cloud, const char *id)
{
	size_t h = key_hash(cloud, id) & px->mask;
	for (; px->slots[h]; h = (h + 1) & px->mask) {
		gb_inst_row *p = &prev[px->slots[h] - 1];
		if (p->provider_id && strcmp(p->cloud, cloud) == 0 &&
		    strcmp(p->provider_id, id) == 0)
			return p;
	}
	return NULL;
}

/* One instance the gc terminates: an orphan (own: its new row), or one
 * an earlier gc recorded whose terminate the cloud has not accepted (or
 * accepted over a minute ago, and it still runs): row, in prev. */
typedef struct gcterm {
	const gb_seen *s;
	const char *cloud, *region;
	gb_inst_row own;
	gb_inst_row *row;
	json_t *rep;      /* its report row (borrowed from the report) */
} gcterm;

/* The orphans to terminate, through the journaled terminate path of
 * every other terminate (engine_destroy.c): recorded in GB_ORPHAN_POOL
 * with their intent, then batched per driver call where the driver can;
 * each report row's action says whether the cloud accepted. */
static void gc_terminate(gb_engine *e, gcterm *t, size_t n)
{
	gb_inst_row **rows;
	int pool_ok;
	char why[512] = "";
	if (!n)
		return; /* no orphan: no write */
	rows = gb_xcalloc(n, sizeof(*rows));
	pool_ok = orphan_pool(e) == 0;
	if (!pool_ok)
		snprintf(why, sizeof(why), ": the state database refused the "
		         "orphans' pool (%s); run gc again",
		         gb_store_errmsg(e->o.store));
	for (size_t i = 0; i < n; i++) {
		if (!t[i].row)
			t[i].row = &t[i].own;
		t[i].row->terminate_requested_ms = 0; /* set if accepted now */
		rows[i] = t[i].row;
	}
	if (pool_ok)
		gb_engine__terminate_rows(e, rows, n, "orphan: carries this "
		                          "broker's id, unknown to the store");
	for (size_t i = 0; i < n; i++) {
		const gb_seen *s = t[i].s;
		int ok = t[i].row->terminate_requested_ms != 0;
		const char *action = ok ? "terminated" : "terminate-failed";
		if (ok)
			gb_engine__stat(e, &e->stats.gc_terminated, 1);
		gb_engine__event(e, s->pool, s->id, "gc",
		                 "orphan %s in %s/%s (pool tag %s) carries this "
		                 "broker's id but is unknown to the store%s: %s%s",
		                 s->id, t[i].cloud, t[i].region,
		                 s->pool ? s->pool : "none",
		                 t[i].row == &t[i].own ? ""
		                         : " (recorded by an earlier gc, still "
		                           "there)",
		                 action, ok ? "" : *why ? why : " (see the error "
		                                               "event)");
		json_object_set_new(t[i].rep, "action", json_string(action));
		if (t[i].row == &t[i].own)
			free(t[i].own.state);
	}
	free(rows);
}

static int gc_run(gb_engine *e, int adopt, json_t **report);

int gb_engine_gc(gb_engine *e, int adopt, json_t **report)
{
	char err[1024];
	int rc;
	/* On a shared store the orphans' terminate intents are journaled
	 * under the lease of GB_ORPHAN_POOL, like any pool's. */
	if (!gb_store_is_shared(e->o.store))
		return gc_run(e, adopt, report);
	if (gb_engine__lock_pool(e, GB_ORPHAN_POOL, err, sizeof(err)) != 0) {
		*report = json_array();
		gb_log(GB_LOG_WARN, "engine", "gc: %s", err);
		return -1;
	}
	rc = gc_run(e, adopt, report);
	gb_engine__unlock_pool(e, GB_ORPHAN_POOL);
	return rc;
}

static int gc_run(gb_engine *e, int adopt, json_t **report)
{
	size_t unchecked = 0;
	dgroup *g = NULL;
	size_t ng = 0, ncat = gb_catalog_count(e->o.cat);
	known k;
	json_t *rep = json_array();
	int64_t now = gb_now_ms();
	gb_inst_row *prev = NULL; /* live rows of GB_ORPHAN_POOL */
	size_t nprev = 0, nt = 0;
	strindex px;
	gcterm *t = NULL;

	*report = rep;
	{
		char err[1024];
		if (gb_engine__settle(e, err, sizeof(err)) != 0)
			return -1; /* the store refuses writes */
	}
	/* every (driver, region) of the catalog -- one listing per driver
	 * where the driver can describe every region at once */
	for (size_t i = 0; i < ncat; i++) {
		const gb_coffer *o = gb_catalog_at(e->o.cat, i);
		const char *region = describe_region(e, o->cloud, o->region);
		size_t j;
		for (j = 0; j < ng; j++)
			if (strcmp(g[j].cloud, o->cloud) == 0 &&
			    strcmp(g[j].region, region) == 0)
				break;
		if (j < ng)
			continue;
		g = gb_xrealloc(g, (ng + 1) * sizeof(*g));
		memset(&g[ng], 0, sizeof(*g));
		g[ng].e = e;
		g[ng].cloud = gb_xstrdup(o->cloud);
		g[ng].region = gb_xstrdup(region);
		g[ng].drv = gb_engine__drv(e, o->cloud);
		ng++;
	}
	reuse_kept(e, g, ng);
	{
		uint64_t reused = 0;
		for (size_t j = 0; j < ng; j++)
			reused += (uint64_t)g[j].reused;
		gb_engine__stat(e, &e->stats.gc_reused, reused);
		gb_engine__stat(e, &e->stats.gc_listed, ng - reused);
	}
	gb_parallel_for(ng, e->workers, run_dgroup, g);
	if (load_known(e, &k) != 0) {
		groups_free(g, ng);
		return -1;
	}
	if (gb_store_inst_list(e->o.store, GB_ORPHAN_POOL, 1, &prev,
	                       &nprev) != 0) {
		gb_strv_free(&k.ids);
		strindex_free(&k.idx);
		gb_strv_free(&k.tokens);
		groups_free(g, ng);
		return -1;
	}
	strindex_init(&px, nprev);
	for (size_t i = 0; i < nprev; i++) {
		size_t h = key_hash(prev[i].cloud, prev[i].provider_id) & px.mask;
		while (px.slots[h])
			h = (h + 1) & px.mask;
		px.slots[h] = (uint32_t)i + 1;
	}
	for (size_t j = 0; j < ng; j++) {
		for (size_t i = 0; g[j].rc == 0 && i < g[j].seen.n; i++) {
			gb_seen *s = &g[j].seen.v[i];
			const char *region = *g[j].region ? g[j].region
			                                  : (s->region ? s->region : "");
			int skip = 0;
			gb_pool_row pool;
			gb_inst_row *again = NULL;
			if (s->state == GB_INST_TERMINATED)
				continue;
			if (known_has(&k, g[j].cloud, s->id)) {
				/* known; but an orphan an earlier gc recorded is
				 * sent again while the cloud has not accepted its
				 * terminate (or did over a minute ago, and it
				 * still runs) */
				again = prev_find(prev, &px, g[j].cloud, s->id);
				if (!again || (again->terminate_requested_ms &&
				               again->terminate_requested_ms >= now - 60000))
					continue;
			}
			for (size_t tk = 0; !again && !skip && tk < k.tokens.n; tk++)
				skip = token_matches(s->token, k.tokens.v[tk]);
			if (skip)
				continue;
			if (!again && adopt && s->pool) {
				int got = gb_store_pool_get(e->o.store, s->pool,
				                            &pool);
				int active = got == 0 &&
				             strcmp(pool.state, "active") == 0;
				if (got == 0)
					gb_pool_row_free(&pool);
				if (got < 0) {
					/* it may be an active pool's: adopted, or
					 * looked at again, by the next gc */
					unchecked += gc_unread(e, rep, g[j].cloud,
					                       region, s);
					continue;
				}
				if (active) {
					gb_inst_row r;
					int maxi = -1;
					char name[160];
					if (gb_store_inst_max_index(e->o.store, s->pool,
					                            &maxi) != 0) {
						unchecked += gc_unread(e, rep,
						                       g[j].cloud,
						                       region, s);
						continue;
					}
					snprintf(name, sizeof(name), "%s-%d", s->pool, maxi + 1);
					seen_row(e, s, s->pool, g[j].cloud, region, name,
					         now, &r);
					r.name_index = maxi + 1;
					if (gb_store_inst_put(e->o.store, &r) == 0) {
						free(r.state);
						gb_engine__stat(e, &e->stats.gc_adopted, 1);
						gb_engine__event(e, s->pool, s->id, "adopted",
						                 "adopted orphan %s in %s/%s",
						                 s->id, g[j].cloud, region);
						json_array_append_new(rep, json_pack(
							"{s:s, s:s, s:s, s:s?, s:s}", "cloud", g[j].cloud,
							"region", region, "id", s->id, "pool",
							s->pool, "action", "adopted"));
						continue;
					}
					free(r.state);
					/* not recorded: not an orphan to end */
					unchecked += gc_unread(e, rep, g[j].cloud,
					                       region, s);
					continue;
				}
			}
			/* terminated below, all in one journaled terminate; the
			 * report row keeps its place, its action set then */
			t = gb_xrealloc(t, (nt + 1) * sizeof(*t));
			memset(&t[nt], 0, sizeof(*t));
			t[nt].s = s;
			t[nt].cloud = g[j].cloud;
			t[nt].region = region;
			t[nt].row = again;
			if (!again)
				seen_row(e, s, GB_ORPHAN_POOL, g[j].cloud, region, s->id,
				         now, &t[nt].own);
			t[nt].rep = json_pack("{s:s, s:s, s:s, s:s?, s:s}", "cloud",
			                      g[j].cloud, "region", region, "id",
			                      s->id, "pool", s->pool, "action", "");
			json_array_append_new(rep, t[nt].rep);
			nt++;
		}
	}
	gc_terminate(e, t, nt);
	free(t);
	strindex_free(&px);
	gb_inst_list_free(prev, nprev);
	for (size_t j = 0; j < ng; j++) {
		if (g[j].rc == 0)
			continue;
		unchecked++;
		gb_engine__event(e, NULL, NULL, "error",
		                 "gc: cannot list %s/%s (%s%s%s): %s; orphans there "
		                 "were not looked for", g[j].cloud,
		                 *g[j].region ? g[j].region : "(all regions)",
		                 gb_err_class_name(g[j].err.cls),
		                 g[j].err.code[0] ? " " : "", g[j].err.code,
		                 g[j].err.message);
		json_array_append_new(rep, json_pack(
			"{s:s, s:s, s:n, s:s, s:s}", "cloud", g[j].cloud, "region",
			*g[j].region ? g[j].region : "(all)", "id", "action",
			"unchecked", "error", g[j].err.message));
	}
	gb_strv_free(&k.ids);
	strindex_free(&k.idx);
	gb_strv_free(&k.tokens);
	groups_free(g, ng);
	return unchecked ? 1 : 0;
}
