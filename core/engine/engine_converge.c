/* engine_converge.c -- diff, apply, converge and scale. */
#include "engine_int.h"
#include "autoscale.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>


/* Does a running instance still satisfy the spec? */
static int compatible(const gb_pool_spec *s, const gb_inst_row *r)
{
	gb_capacity cap;
	int ok = 0;
	const gb_region_info *ri;
	if (s->clouds.n && !gb_strv_contains(&s->clouds, r->cloud))
		return 0;
	if (!r->gpu_model || !gb_strv_contains(&s->gpu_models, r->gpu_model))
		return 0;
	if (r->gpu_count != s->gpu_count)
		return 0;
	if (gb_capacity_parse(r->capacity, &cap) != 0)
		return 0;
	for (int i = 0; i < s->ncapacity; i++)
		ok |= s->capacity[i] == cap;
	if (!ok)
		return 0;
	if (s->regions.n) {
		ok = 0;
		for (size_t i = 0; i < s->regions.n; i++)
			ok |= gb_glob(s->regions.v[i], r->region);
		if (!ok)
			return 0;
	}
	ri = gb_region_find(r->cloud, r->region);
	for (size_t i = 0; i < s->compliance.n; i++)
		if (!ri || !gb_region_has_tag(ri, s->compliance.v[i]))
			return 0;
	return 1;
}

static int is_healthy(const gb_inst_row *r)
{
	return strcmp(r->state, "pending") == 0 ||
	       strcmp(r->state, "running") == 0;
}

static int is_broken(const gb_inst_row *r)
{
	return strcmp(r->state, "preempted") == 0 ||
	       strcmp(r->state, "failed") == 0 ||
	       (strcmp(r->state, "stopping") == 0 && !r->terminate_requested_ms);
}

/* Keep preference: running before pending, then cheapest (a scale-down
 * releases the dearest first: a $27/h cloud instance before an on-prem
 * node), then oldest (lowest index: the newest goes first). */
static int keep_cmp(const void *a, const void *b)
{
	const gb_inst_row *x = *(const gb_inst_row *const *)a;
	const gb_inst_row *y = *(const gb_inst_row *const *)b;
	int rx = strcmp(x->state, "running") == 0, ry = strcmp(y->state, "running") == 0;
	if (rx != ry)
		return ry - rx;
	if (x->price_per_hour != y->price_per_hour)
		return x->price_per_hour < y->price_per_hour ? -1 : 1;
	return x->name_index - y->name_index;
}

/* Autoscaled pools keep their busiest running instances: ok[] (sorted
 * by keep_cmp, running first) is reordered so that its running part runs
 * from the last to the first that gb_autoscale_victims would remove
 * (least used first, then dearest, then newest; no recent heartbeat =
 * kept). */
static void keep_busiest(gb_inst_row **ok, size_t nok)
{
	size_t nrun = 0;
	gb_as_sample *sm;
	int64_t *order, now = gb_now_ms() / 1000;
	gb_inst_row **run;
	while (nrun < nok && strcmp(ok[nrun]->state, "running") == 0)
		nrun++;
	if (nrun < 2)
		return;
	sm = gb_xcalloc(nrun, sizeof(*sm));
	order = gb_xcalloc(nrun, sizeof(*order));
	run = gb_xcalloc(nrun, sizeof(*run));
	for (size_t i = 0; i < nrun; i++) {
		sm[i].id = (int64_t)i; /* index into ok */
		sm[i].util = ok[i]->last_gpu_util;
		sm[i].at = ok[i]->last_heartbeat_at;
		sm[i].created_at = ok[i]->name_index; /* newer = higher */
		sm[i].price = ok[i]->price_per_hour;
		run[i] = ok[i];
	}
	gb_autoscale_victims(sm, nrun, now, GB_AS_FRESH_S, nrun, order);
	for (size_t i = 0; i < nrun; i++)
		ok[i] = run[order[nrun - 1 - i]];
	free(sm);
	free(order);
	free(run);
}

typedef struct classified {
	gb_inst_row *rows;
	size_t n;
	gb_inst_row **keep, **extra, **broken, **incompat;
	size_t nkeep, nextra, nbroken, nincompat;
} classified;

/* A capacity mix and placement.spread: how many of the `need` new ones
 * go on-demand (the base, then what spot_share leaves of the rest,
 * less the on-demand ones kept), and the zones of those kept
 * (engine_create.c shares the walk out by them). */
static void shape(const gb_pool_spec *spec, int desired, const classified *c,
                  int need, gb_engine_have *have)
{
	int od_kept = 0, spot_target = 0, od_target;
	if (!spec->mix && !spec->spread_zone)
		return;
	have->shaped = 1;
	have->total = desired;
	have->keep = (const gb_inst_row *const *)c->keep;
	have->nkeep = c->nkeep;
	if (!spec->mix) {
		have->od_want = -1; /* the plan's order decides the kind */
		return;
	}
	if (desired > spec->on_demand_base)
		spot_target = (int)((desired - spec->on_demand_base) *
		                    spec->spot_share + 1e-9);
	od_target = desired - spot_target;
	for (size_t i = 0; i < c->nkeep; i++)
		if (!c->keep[i]->capacity ||
		    strcmp(c->keep[i]->capacity, "spot") != 0)
			od_kept++;
	have->od_want = od_target - od_kept;
	if (have->od_want < 0)
		have->od_want = 0;
	if (have->od_want > need)
		have->od_want = need;
}

static void classify(const gb_pool_spec *s, int desired, gb_inst_row *rows,
                     size_t n, classified *c)
{
	gb_inst_row **ok = gb_xcalloc(n + 1, sizeof(*ok));
	size_t nok = 0;
	memset(c, 0, sizeof(*c));
	c->rows = rows;
	c->n = n;
	c->keep = gb_xcalloc(n + 1, sizeof(*c->keep));
	c->extra = gb_xcalloc(n + 1, sizeof(*c->extra));
	c->broken = gb_xcalloc(n + 1, sizeof(*c->broken));
	c->incompat = gb_xcalloc(n + 1, sizeof(*c->incompat));
	for (size_t i = 0; i < n; i++) {
		gb_inst_row *r = &rows[i];
		if (strcmp(r->state, "terminated") == 0 ||
		    strcmp(r->state, "terminating") == 0)
			continue;
		if (is_broken(r))
			c->broken[c->nbroken++] = r;
		else if (is_healthy(r) && compatible(s, r))
			ok[nok++] = r;
		else if (is_healthy(r))
			c->incompat[c->nincompat++] = r;
	}
	qsort(ok, nok, sizeof(*ok), keep_cmp);
	/* colocate zone: keep only the zone holding most kept instances */
	if (s->colocate == GB_COLOCATE_ZONE && nok > 1) {
		size_t best = 0, bestn = 0;
		for (size_t i = 0; i < nok; i++) {
			size_t m = 0;
			for (size_t j = 0; j < nok; j++)
				m += strcmp(ok[i]->cloud, ok[j]->cloud) == 0 &&
				     strcmp(ok[i]->region, ok[j]->region) == 0 &&
				     strcmp(ok[i]->zone, ok[j]->zone) == 0;
			if (m > bestn) {
				bestn = m;
				best = i;
			}
		}
		gb_inst_row *anchor = ok[best];
		size_t w = 0;
		for (size_t i = 0; i < nok; i++) {
			if (strcmp(ok[i]->cloud, anchor->cloud) == 0 &&
			    strcmp(ok[i]->region, anchor->region) == 0 &&
			    strcmp(ok[i]->zone, anchor->zone) == 0)
				ok[w++] = ok[i];
			else
				c->incompat[c->nincompat++] = ok[i];
		}
		nok = w;
		qsort(ok, nok, sizeof(*ok), keep_cmp);
	}
	if (s->autoscale.enabled)
		keep_busiest(ok, nok);
	for (size_t i = 0; i < nok; i++) {
		if ((int)c->nkeep < desired)
			c->keep[c->nkeep++] = ok[i];
		else
			c->extra[c->nextra++] = ok[i];
	}
	free(ok);
}

static void classified_free(classified *c)
{
	free(c->keep);
	free(c->extra);
	free(c->broken);
	free(c->incompat);
}

/* Creates of this pool whose outcome is unknown (their intents are still
 * open: lost answers, an interrupted process) are replayed with their
 * token first, so what they made is known before anything new is made.
 * Returns how many instances those still open may yet produce (asked
 * for, not recorded): converge does not place them again elsewhere,
 * which would leave the pool over size once the lost ones appear.
 * -1 when the store failed (its error set). */
static int replay_open(gb_engine *e, const char *pool,
                       const gb_pool_spec *spec)
{
	gb_intent_row *v;
	size_t n;
	int outstanding = 0;
	if (gb_store_intent_list_open(e->o.store, &v, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char err[512];
		if (strcmp(v[i].kind, "create") != 0 || strcmp(v[i].pool, pool) != 0)
			continue;
		if (gb_engine__replay_create(e, spec, &v[i], err, sizeof(err)) < 0)
			gb_engine__event(e, pool, NULL, "error",
			                 "replaying create %lld failed: %s",
			                 (long long)v[i].id, err);
	}
	gb_intent_list_free(v, n);
	if (gb_store_intent_list_open(e->o.store, &v, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int all, mine;
		if (strcmp(v[i].kind, "create") != 0 || strcmp(v[i].pool, pool) != 0)
			continue;
		if (gb_engine__live(e, pool, v[i].id, &all, &mine) != 0) {
			gb_intent_list_free(v, n);
			return -1;
		}
		if (v[i].count > mine)
			outstanding += v[i].count - mine;
	}
	gb_intent_list_free(v, n);
	return outstanding;
}

/* Rows left "terminating" by a scale-down or a replacement whose
 * terminate call failed (a 5xx after the retries, a lost answer) or was
 * not confirmed within a minute: send it again, as destroy does.
 * Without this such an instance kept running (and billing) while the
 * store said terminating.  Rows marked by this pass have a fresh
 * terminate_requested_ms and are left alone. */
static void retry_terminating(gb_engine *e, gb_inst_row *rows, size_t n)
{
	gb_inst_row **todo = gb_xcalloc(n + 1, sizeof(*todo));
	size_t nt = 0;
	int64_t now = gb_now_ms();
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].state, "terminating") == 0 &&
		    (!rows[i].terminate_requested_ms ||
		     rows[i].terminate_requested_ms < now - 60000))
			todo[nt++] = &rows[i];
	if (nt)
		gb_engine__terminate_rows(e, todo, nt, "terminate retried");
	free(todo);
}

/* Keeps the pool's note (why it is short, and when the engine tries
 * again: `status` shows it) in step with the last placement walk.
 * note: one line, NULL when nothing is missing (or the shortfall is
 * not one a note explains: a refusal, an error).  retry_ms: when the
 * walk may place something again (0: not a matter of time; the pool
 * cannot be placed as it stands).  An event says it when the note's
 * reason changes (not every pass: the time in it moves).  Returns 1 when
 * the reason is the one the pool already had (said before). */
static int note_pool(gb_engine *e, const gb_pool_row *row, const char *note,
                     int64_t retry_ms)
{
	const char *old = row->note, *cut;
	size_t keep;
	if (!note) {
		/* a note left behind says too much until the next pass: no
		 * reason to stop the operation */
		if (old && gb_store_pool_set_note(e->o.store, row->name, NULL,
		                                  0) != 0)
			gb_log(GB_LOG_ERROR, "engine", "pool %s: clearing its "
			       "note: %s", row->name, gb_store_errmsg(e->o.store));
		return 0;
	}
	if (gb_store_pool_set_note(e->o.store, row->name, note, retry_ms) != 0)
		return 0;
	/* the reason: the note without its "; next attempt ..." */
	cut = strstr(note, "; next attempt");
	keep = cut ? (size_t)(cut - note) : strlen(note);
	if (old && strncmp(old, note, keep) == 0 &&
	    (old[keep] == '\0' || old[keep] == ';'))
		return 1;
	/* a refusal was told by its own event (engine_create.c) */
	if (!gb_engine__note_refused(note))
		gb_engine__event(e, row->name, NULL, "waiting", "%s", note);
	return 0;
}

/* The note for a walk that placed too few: its message's first line
 * (without "pool P: ") when the shortfall is capacity (retry_ms set), a
 * summary of the plan's refusals when no offer can match (the message
 * lists them on several lines); else NULL.  Caller frees. */
static char *walk_note(const gb_engine_plan *ep, const char *msg,
                       int64_t retry_ms)
{
	const char *p;
	if (!retry_ms)
		return ep->rc == 0 && ep->no_match ? gb_engine__no_match_note(ep)
		                                   : NULL;
	p = strncmp(msg, "pool ", 5) == 0 ? strstr(msg, ": ") : NULL;
	p = p ? p + 2 : msg;
	return gb_xasprintf("%.*s", (int)strcspn(p, "\n"), p);
}

/* Converge with the pool lock held and the spec loaded.  ep: the
 * operation's plan (an apply's), or NULL to plan here if anything must be
 * placed; a move walks the same plan again. */
static int converge_locked(gb_engine *e, const gb_pool_row *row,
                           const gb_pool_spec *spec, int refresh,
                           const gb_engine_plan *ep, gb_engine_result *res)
{
	gb_engine_plan own;
	gb_inst_row *rows = NULL;
	size_t n = 0;
	classified c;
	int need, placed = 0, rc = 0, outstanding, waiting = 0, unsent = 0;
	char msg[1024] = "";
	const char *cl = NULL, *rg = NULL, *zn = NULL;

	/* What converge acts on is one named, active pool as the store
	 * just gave it: a row it could not read (zeroed: no name, desired
	 * 0) would list every pool's instances and terminate them all. */
	if (!row->name || !*row->name || !row->state ||
	    strcmp(row->state, "active") != 0 || !spec->name ||
	    strcmp(spec->name, row->name) != 0) {
		snprintf(res->message, sizeof(res->message),
		         "internal error: converge refused a pool row that is "
		         "not an active pool named as its spec (%s); nothing "
		         "was done; please report it",
		         row->name ? row->name : "no name");
		gb_log(GB_LOG_ERROR, "engine", "%s", res->message);
		return -1;
	}
	outstanding = replay_open(e, row->name, spec);
	if (outstanding < 0)
		return gb_engine__store_failed(e, res);
	if (gb_engine__live_rows(e, row->name, refresh, &rows, &n) != 0)
		return gb_engine__store_failed(e, res);
	classify(spec, row->desired, rows, n, &c);
	need = row->desired - (int)c.nkeep;
	res->kept = (int)c.nkeep;
	if (need > 0 && outstanding > 0) {
		int wait = outstanding < need ? outstanding : need;
		need -= wait;
		waiting = 1;
		res->partial = 1;
		snprintf(res->message, sizeof(res->message),
		         "pool %s: %d instance%s of a create whose outcome is "
		         "still unknown (throttled or failing after retries) %s "
		         "not placed elsewhere; the create is replayed with its "
		         "token on the next pass", row->name, wait,
		         wait == 1 ? "" : "s", wait == 1 ? "is" : "are");
	}

	if (c.nbroken) {
		for (size_t i = 0; i < c.nbroken; i++)
			gb_engine__event(e, row->name, c.broken[i]->provider_id,
			                 "replace", "replacing %s (%s%s%s)",
			                 c.broken[i]->name, c.broken[i]->state,
			                 c.broken[i]->state_reason ? ": " : "",
			                 c.broken[i]->state_reason
			                         ? c.broken[i]->state_reason
			                         : "");
		if (gb_engine__terminate_rows(e, c.broken, c.nbroken,
		                              "replaced") == -2)
			unsent += (int)c.nbroken;
		res->replaced += (int)c.nbroken;
	}
	if (need > 0 && !ep && row->note && row->retry_at_ms > gb_now_ms()) {
		/* The last walk found no room anywhere, and nothing it skipped
		 * can be tried before retry_at: say so and walk nothing (an
		 * apply or a scale clears the note and walks at once). */
		rc = -1;
		res->partial = 1;
		res->deferred = 1;
		snprintf(res->message, sizeof(res->message), "pool %s: %s",
		         row->name, row->note);
	} else if (need > 0) {
		int64_t retry_ms = 0;
		if (!ep) {
			gb_engine__plan(e, spec, &own);
			ep = &own;
		}
		if (c.nkeep && spec->colocate == GB_COLOCATE_ZONE) {
			cl = c.keep[0]->cloud;
			rg = c.keep[0]->region;
			zn = c.keep[0]->zone;
		} else if (c.nkeep && spec->colocate == GB_COLOCATE_REGION) {
			cl = c.keep[0]->cloud;
			rg = c.keep[0]->region;
		}
		gb_engine_have have;
		memset(&have, 0, sizeof(have));
		have.count = (int)c.nkeep;
		for (size_t i = 0; i < c.nkeep; i++)
			have.price += c.keep[i]->price_per_hour;
		shape(spec, row->desired, &c, need, &have);
		rc = gb_engine__place(e, spec, ep, row->generation, need, cl, rg,
		                      zn, &have, &placed, msg, sizeof(msg),
		                      &retry_ms);
		res->created += placed;
		if (rc == -2) {
			/* no move, no note: the store failed, not the place */
			res->store_failed = 1;
		} else if (rc != 0 && cl && spec->colocate != GB_COLOCATE_NONE) {
			/* No room next to the others: move the whole pool. */
			int moved = 0;
			char msg2[1024];
			gb_engine__event(e, row->name, NULL, "move",
			                 "no room for %d more in %s%s%s; moving the "
			                 "whole pool (%d instance%s)", need, rg,
			                 zn && *zn ? "/" : "", zn ? zn : "",
			                 row->desired, gb_plural(row->desired));
			rc = gb_engine__place(e, spec, ep,
			                      row->generation + 1000000,
			                      row->desired, NULL, NULL, NULL, NULL,
			                      &moved, msg2, sizeof(msg2), &retry_ms);
			res->created += moved;
			res->store_failed = rc == -2;
			if (rc == 0) {
				/* the old ones become extra */
				for (size_t i = 0; i < c.nkeep; i++)
					c.extra[c.nextra++] = c.keep[i];
				res->kept = 0;
				msg[0] = '\0';
			} else {
				snprintf(msg, sizeof(msg), "%s", msg2);
			}
		}
		if (rc != 0 && res->store_failed) {
			res->partial = 1;
			snprintf(res->message, sizeof(res->message), "%s", msg);
		} else if (rc != 0) {
			char *note = walk_note(ep, msg, retry_ms);
			res->partial = 1;
			snprintf(res->message, sizeof(res->message), "%s", msg);
			res->repeated = note_pool(e, row, note, retry_ms);
			free(note);
		} else {
			note_pool(e, row, NULL, 0);
		}
	} else if (row->note) {
		note_pool(e, row, NULL, 0);
	}
	/* Make before break: incompatible instances go only once their
	 * replacements were placed. */
	if (c.nincompat && rc == 0 && !waiting) {
		if (gb_engine__terminate_rows(e, c.incompat, c.nincompat,
		                              "replaced (spec changed)") == -2)
			unsent += (int)c.nincompat;
		res->replaced += (int)c.nincompat;
	}
	if (c.nextra) {
		if (gb_engine__terminate_rows(e, c.extra, c.nextra,
		                              "scale down") == -2)
			unsent += (int)c.nextra;
		res->destroyed += (int)c.nextra;
	} else if (rc == 0 && !waiting && need <= 0 && !c.nbroken &&
	           !c.nincompat && (int)c.nkeep == row->desired) {
		/* at its size and steady: owned or cheaper capacity that
		 * freed up takes the dearest instance (make before break) */
		int moved = gb_engine__consolidate(e, spec, ep, row->generation,
		                                   c.keep, c.nkeep);
		res->created += moved;
		res->destroyed += moved;
	}
	if (unsent) {
		/* not done: say so (the next converge sends them) */
		size_t len;
		gb_engine__store_failed(e, res);
		len = strlen(res->message);
		snprintf(res->message + len, sizeof(res->message) - len,
		         "; pool %s: %d instance%s to terminate not sent", row->name,
		         unsent, gb_plural(unsent));
		rc = -1;
	}
	retry_terminating(e, rows, n);
	if (ep == &own)
		gb_engine__plan_free(&own);
	res->ok = rc == 0 && !waiting;
	classified_free(&c);
	gb_inst_list_free(rows, n);
	return rc != 0 || waiting ? -1 : 0;
}

/* refresh: describe the pool first; want_json: fill res->pool (the
 * reconciler's converges discard it, and it costs a store read of the
 * pool and its instances) */
static int converge(gb_engine *e, const char *pool, int refresh,
                    int want_json, gb_engine_result *res)
{
	gb_pool_row row;
	gb_pool_spec spec;
	int rc;
	memset(res, 0, sizeof(*res));
	if (gb_engine__begin(e, pool, res) != 0)
		return -1;
	rc = gb_store_pool_get(e->o.store, pool, &row);
	if (rc != 0) {
		if (rc == 1) {
			snprintf(res->message, sizeof(res->message),
			         "no pool named %s", pool);
			res->not_found = 1;
		} else {
			gb_engine__store_failed(e, res);
		}
		gb_engine__unlock_pool(e, pool);
		return -1;
	}
	if (strcmp(row.state, "active") != 0) {
		res->ok = 1;
		gb_pool_row_free(&row);
		gb_engine__unlock_pool(e, pool);
		return 0;
	}
	if (gb_engine__spec(&row, &spec, res->message, sizeof(res->message)) != 0) {
		gb_pool_row_free(&row);
		gb_engine__unlock_pool(e, pool);
		return -1;
	}
	{
		/* a submit's recorded plan, when it is still this pool's */
		gb_engine_plan kept;
		int have = gb_engine__take_plan(e, &row, &spec, &kept);
		rc = converge_locked(e, &row, &spec, refresh,
		                     have ? &kept : NULL, res);
		gb_engine__note_converge(e, row.name, row.generation, rc, res);
		if (have)
			gb_engine__plan_free(&kept);
	}
	gb_pool_spec_free(&spec);
	gb_pool_row_free(&row);
	gb_engine__unlock_pool(e, pool);
	if (want_json)
		res->pool = gb_engine_pool_json(e, pool);
	return rc;
}

int gb_engine_converge(gb_engine *e, const char *pool, gb_engine_result *res)
{
	return converge(e, pool, 1, 1, res);
}

int gb_engine_converge_fresh(gb_engine *e, const char *pool,
                             gb_engine_result *res)
{
	return converge(e, pool, 0, 0, res);
}

/* Store the spec (quota-checked against the price of ep's best
 * candidate) and ep as the decision record.  Called with the pool lock
 * held; fills *row with the stored pool. */
static int submit_locked(gb_engine *e, const gb_pool_spec *spec,
                         const gb_engine_plan *ep, gb_pool_row *row,
                         gb_engine_result *res)
{
	gb_pool_row old;
	char *json;
	int rc, existed;
	double price = -1;
	int64_t now = gb_now_ms() / 1000;

	if (ep->rc == 0 && ep->plan.ncands)
		price = ep->plan.cands[0].offer->price;
	if ((rc = gb_engine__check_team(e, spec, spec->count,
	                                price > 0 ? price * spec->count : 0,
	                                res->message,
	                                sizeof(res->message))) != 0) {
		res->store_failed = rc == -2;
		return -1;
	}
	if ((rc = gb_store_pool_get(e->o.store, spec->name, &old)) < 0)
		return gb_engine__store_failed(e, res);
	existed = rc == 0;
	if (existed && strcmp(old.team, spec->team) != 0 &&
	    strcmp(old.state, "destroyed") != 0) {
		snprintf(res->message, sizeof(res->message),
		         "pool %s already exists for team %s; pool names are "
		         "global: pick another name or destroy it first",
		         spec->name, old.team);
		gb_pool_row_free(&old);
		return -1;
	}
	json = gb_pool_spec_to_json(spec);
	memset(row, 0, sizeof(*row));
	row->name = spec->name;
	row->team = spec->team;
	row->spec_json = json;
	row->spec_hash = spec->source_hash ? spec->source_hash : (char *)"";
	row->state = (char *)"active";
	row->desired = spec->count;
	row->created_at = now;
	row->updated_at = now;
	row->ttl_s = spec->ttl_s;
	row->idle_timeout_s = spec->idle_timeout_s;
	rc = gb_store_pool_put(e->o.store, row);
	free(json);
	memset(row, 0, sizeof(*row));
	if (rc != 0) {
		if (existed)
			gb_pool_row_free(&old);
		return gb_engine__store_failed(e, res);
	}
	if (!existed || strcmp(old.state, "destroyed") == 0)
		gb_engine__event(e, spec->name, NULL, "applied",
		                 "pool created: %d x %d x %s for team %s",
		                 spec->count, spec->gpu_count,
		                 spec->gpu_models.n ? spec->gpu_models.v[0] : "?",
		                 spec->team);
	else if (strcmp(old.spec_hash, spec->source_hash ? spec->source_hash
	                                                 : "") != 0)
		gb_engine__event(e, spec->name, NULL, "applied",
		                 "spec changed; converging to %d instance%s",
		                 spec->count, gb_plural(spec->count));
	if (existed)
		gb_pool_row_free(&old);
	if ((rc = gb_store_pool_get(e->o.store, spec->name, row)) != 0) {
		memset(row, 0, sizeof(*row));
		return gb_engine__store_failed(e, res);
	}
	/* the decision record: the plan placement walks */
	if (ep->rc == 0) {
		json_t *rec = gb_plan_to_json(&ep->plan, 20, 0);
		/* and the first few offers each rule refused, with why
		 * (every one would be thousands of rows per apply) */
		json_object_set_new(rec, "refusals", gb_plan_refusals_json(
		                            &ep->plan, GB_DECISION_REFUSALS_PER_KIND));
		json_object_set_new(rec, "refusals_per_rule",
		                    json_integer(GB_DECISION_REFUSALS_PER_KIND));
		/* the record explains; the pool is stored without it */
		if (gb_store_decision(e->o.store, spec->name, rec) != 0)
			gb_log(GB_LOG_ERROR, "engine", "pool %s: recording the "
			       "placement decision: %s", spec->name,
			       gb_store_errmsg(e->o.store));
		json_decref(rec);
	}
	return 0;
}

/* An apply of a spec no offer can match (ep->no_match), for a pool
 * whose live instances do not already make it whole, is refused before
 * anything is stored: 1 with res->message (the plan's reasons); -1 when
 * the store failed (res says so).  Only
 * cooldowns in the way (offers exist, the clouds are out of room for
 * now) is no reason to refuse: the pool is stored and waits. */
static int refuse_no_match(gb_engine *e, const gb_pool_spec *spec,
                           const gb_engine_plan *ep, gb_engine_result *res)
{
	gb_inst_row *rows = NULL;
	size_t n = 0;
	classified c;
	int need;
	char *why;
	if (ep->rc != 0 || !ep->no_match)
		return 0;
	if (gb_store_inst_list(e->o.store, spec->name, 1, &rows, &n) != 0)
		return gb_engine__store_failed(e, res);
	classify(spec, spec->count, rows, n, &c);
	need = spec->count - (int)c.nkeep;
	classified_free(&c);
	gb_inst_list_free(rows, n);
	if (need <= 0)
		return 0;
	why = gb_plan_no_candidate_msg(&ep->plan);
	snprintf(res->message, sizeof(res->message),
	         "pool %s: not applied (nothing stored): no offer can match "
	         "this spec; change the spec or the policies ('gpubroker plan "
	         "--explain' lists every refusal):\n%s", spec->name, why);
	free(why);
	return 1;
}

/* An agent pool needs the address its instances reach the daemon at. */
static int refuse_agent(gb_engine *e, const gb_pool_spec *spec,
                        gb_engine_result *res)
{
	if (!spec->agent || (e->o.cfg && e->o.cfg->agent_broker_url))
		return 0;
	snprintf(res->message, sizeof(res->message),
	         "pool %s: not applied (nothing stored): it has agent: true, "
	         "but the broker config has no agent.broker_url (the address "
	         "its instances reach the daemon at): set it (docs/config.md), "
	         "or drop agent: true", spec->name);
	return 1;
}

int gb_engine_submit(gb_engine *e, const gb_pool_spec *spec,
                     gb_engine_result *res)
{
	gb_pool_row row;
	gb_engine_plan ep;
	int rc;
	memset(res, 0, sizeof(*res));
	if (gb_engine__begin(e, spec->name, res) != 0)
		return -1;
	if (refuse_agent(e, spec, res)) {
		gb_engine__unlock_pool(e, spec->name);
		return -1;
	}
	gb_engine__forget_refusals(e, spec->name); /* an apply asks again */
	gb_engine__plan(e, spec, &ep);
	rc = refuse_no_match(e, spec, &ep, res)
	             ? -1
	             : submit_locked(e, spec, &ep, &row, res);
	if (rc == 0) {
		/* the converge job places from the plan just recorded */
		if (ep.rc == 0)
			gb_engine__keep_plan(e, &row, &ep);
		gb_pool_row_free(&row);
	}
	gb_engine__plan_free(&ep);
	gb_engine__unlock_pool(e, spec->name);
	res->ok = rc == 0;
	res->pool = gb_engine_pool_json(e, spec->name);
	return rc;
}

int gb_engine_apply(gb_engine *e, const gb_pool_spec *spec,
                    gb_engine_result *res)
{
	gb_pool_row row;
	gb_engine_plan ep;
	int rc;
	memset(res, 0, sizeof(*res));
	if (gb_engine__begin(e, spec->name, res) != 0)
		return -1;
	if (refuse_agent(e, spec, res)) {
		gb_engine__unlock_pool(e, spec->name);
		return -1;
	}
	gb_engine__forget_refusals(e, spec->name); /* an apply asks again */
	/* one plan: the budget price, the decision record, the placement */
	gb_engine__plan(e, spec, &ep);
	rc = refuse_no_match(e, spec, &ep, res)
	             ? -1
	             : submit_locked(e, spec, &ep, &row, res);
	if (rc == 0) {
		rc = converge_locked(e, &row, spec, 1, &ep, res);
		gb_pool_row_free(&row);
	}
	gb_engine__plan_free(&ep);
	gb_engine__unlock_pool(e, spec->name);
	res->pool = gb_engine_pool_json(e, spec->name);
	return rc;
}

/* Validates n against the spec and quotas and stores it; with the pool
 * lock held.  Fills *row and *spec for the caller (freed by it on success). */
static int set_desired_locked(gb_engine *e, const char *pool, int n,
                              gb_pool_row *row, gb_pool_spec *spec,
                              gb_engine_result *res)
{
	int rc = gb_store_pool_get(e->o.store, pool, row);
	if (rc < 0)
		return gb_engine__store_failed(e, res);
	if (rc != 0 || strcmp(row->state, "active") != 0) {
		snprintf(res->message, sizeof(res->message),
		         "no active pool named %s", pool);
		res->not_found = 1;
		if (rc == 0)
			gb_pool_row_free(row);
		return -1;
	}
	if (gb_engine__spec(row, spec, res->message, sizeof(res->message)) != 0) {
		gb_pool_row_free(row);
		return -1;
	}
	if (spec->max > spec->min && (n < spec->min || n > spec->max)) {
		snprintf(res->message, sizeof(res->message),
		         "pool %s can be scaled between its min %d and max %d "
		         "(spec), not to %d", pool, spec->min, spec->max, n);
		goto fail;
	}
	if (n < 0 || n > GB_POOL_MAX_INSTANCES) {
		snprintf(res->message, sizeof(res->message),
		         "scale to %d: expected 0 to %d instances", n,
		         GB_POOL_MAX_INSTANCES);
		goto fail;
	}
	if (n > row->desired &&
	    (rc = gb_engine__check_scale(e, spec, n, res->message,
	                                 sizeof(res->message))) != 0) {
		res->store_failed = rc == -2;
		goto fail;
	}
	if (gb_store_pool_set_desired(e->o.store, pool, n) != 0) {
		gb_engine__store_failed(e, res);
		goto fail;
	}
	gb_engine__event(e, pool, NULL, "scaled", "desired %d -> %d",
	                 row->desired, n);
	gb_pool_row_free(row);
	/* the row converge acts on: when it cannot be read, stop here (a
	 * zeroed row is no pool, and desired 0 of every pool) */
	if ((rc = gb_store_pool_get(e->o.store, pool, row)) != 0) {
		memset(row, 0, sizeof(*row));
		if (rc == 1) {
			snprintf(res->message, sizeof(res->message),
			         "pool %s vanished from the store while it was "
			         "scaled; nothing was done", pool);
		} else {
			gb_engine__store_failed(e, res);
			snprintf(res->message + strlen(res->message),
			         sizeof(res->message) - strlen(res->message),
			         "; its new size %d is stored: 'gpubroker scale %s "
			         "%d' again converges it", n, pool, n);
		}
		gb_pool_spec_free(spec);
		return -1;
	}
	return 0;
fail:
	gb_pool_spec_free(spec);
	gb_pool_row_free(row);
	return -1;
}

int gb_engine_set_desired(gb_engine *e, const char *pool, int n,
                          gb_engine_result *res)
{
	gb_pool_row row;
	gb_pool_spec spec;
	int rc;
	memset(res, 0, sizeof(*res));
	if (gb_engine__begin(e, pool, res) != 0)
		return -1;
	rc = set_desired_locked(e, pool, n, &row, &spec, res);
	if (rc == 0) {
		gb_pool_spec_free(&spec);
		gb_pool_row_free(&row);
	}
	gb_engine__unlock_pool(e, pool);
	res->ok = rc == 0;
	res->pool = gb_engine_pool_json(e, pool);
	return rc;
}

int gb_engine_scale(gb_engine *e, const char *pool, int n,
                    gb_engine_result *res)
{
	gb_pool_row row;
	gb_pool_spec spec;
	int rc;
	memset(res, 0, sizeof(*res));
	if (gb_engine__begin(e, pool, res) != 0)
		return -1;
	rc = set_desired_locked(e, pool, n, &row, &spec, res);
	if (rc == 0) {
		rc = converge_locked(e, &row, &spec, 1, NULL, res);
		gb_pool_spec_free(&spec);
		gb_pool_row_free(&row);
	}
	gb_engine__unlock_pool(e, pool);
	res->pool = gb_engine_pool_json(e, pool);
	return rc;
}

json_t *gb_engine_diff(gb_engine *e, const gb_pool_spec *spec,
                       const gb_engine_batch *earlier, char *err, size_t cap)
{
	gb_inst_row *rows = NULL;
	size_t n = 0;
	classified c;
	gb_engine_plan ep;
	const gb_plan *pl = &ep.plan;
	json_t *out, *create, *keep, *destroy, *replace, *cands;
	double before = 0, after = 0;
	int need;

	if (gb_store_inst_list(e->o.store, spec->name, 1, &rows, &n) != 0) {
		snprintf(err, cap, "state store failed: %s",
		         gb_store_errmsg(e->o.store));
		return NULL;
	}
	/* Its own plan, not the apply's: it is made without the pool lock,
	 * before a confirmation that may wait for minutes (and, remotely, in
	 * another request than the PUT), so the apply plans again under the
	 * lock; the compiled policies come from the same process cache. */
	if (gb_engine__plan(e, spec, &ep) != 0) {
		snprintf(err, cap, "%s", ep.err);
		gb_engine__plan_free(&ep);
		gb_inst_list_free(rows, n);
		return NULL;
	}
	classify(spec, spec->count, rows, n, &c);
	need = spec->count - (int)c.nkeep;
	out = json_object();
	create = json_array();
	keep = json_array();
	destroy = json_array();
	replace = json_array();
	cands = json_array();
	for (size_t i = 0; i < c.nkeep; i++) {
		json_array_append_new(keep, json_pack("{s:s, s:s, s:s, s:s, s:s}",
		                                      "name", c.keep[i]->name, "cloud",
		                                      c.keep[i]->cloud, "zone",
		                                      c.keep[i]->zone, "instance_type",
		                                      c.keep[i]->instance_type, "state",
		                                      c.keep[i]->state));
		before += c.keep[i]->price_per_hour;
		after += c.keep[i]->price_per_hour;
	}
	for (size_t i = 0; i < c.nextra; i++) {
		json_array_append_new(destroy, json_pack("{s:s, s:s, s:s}", "name",
		                                         c.extra[i]->name, "reason",
		                                         "scale down", "state",
		                                         c.extra[i]->state));
		before += c.extra[i]->price_per_hour;
	}
	for (size_t i = 0; i < c.nbroken; i++)
		json_array_append_new(replace, json_pack("{s:s, s:s}", "name",
		                                         c.broken[i]->name, "reason",
		                                         c.broken[i]->state));
	for (size_t i = 0; i < c.nincompat; i++) {
		json_array_append_new(replace, json_pack("{s:s, s:s}", "name",
		                                         c.incompat[i]->name, "reason",
		                                         "no longer matches the spec"));
		before += c.incompat[i]->price_per_hour;
	}
	if (need > 0 && pl->ncands) {
		/* the first choice, in parts where an offer has fewer free
		 * than the pool needs (on-prem nodes, then a cloud) */
		int unplaced;
		double price;
		json_decref(create);
		create = gb_plan_parts_json(pl, need, &unplaced, &price);
		after += price;
		if (unplaced)
			json_object_set_new(out, "unplaced", json_integer(unplaced));
	}
	for (size_t i = 0; i < pl->ncands && i < 5; i++) {
		const gb_coffer *o = pl->cands[i].offer;
		json_array_append_new(cands, json_pack("{s:s, s:s, s:s, s:s, s:s, s:f}",
		                                       "cloud", o->cloud, "region", o->region,
		                                       "zone", o->zone, "instance_type",
		                                       o->instance_type, "capacity",
		                                       gb_capacity_name(o->capacity),
		                                       "price_per_hour", o->price));
	}
	json_object_set_new(out, "pool", json_string(spec->name));
	json_object_set_new(out, "create", create);
	json_object_set_new(out, "keep", keep);
	json_object_set_new(out, "destroy", destroy);
	json_object_set_new(out, "replace", replace);
	json_object_set_new(out, "candidates", cands);
	json_object_set_new(out, "candidate_count", json_integer((json_int_t)pl->ncands));
	json_object_set_new(out, "price_per_hour_before", json_real(before));
	json_object_set_new(out, "price_per_hour_after", json_real(after));
	if (need > 0 && !pl->ncands) {
		/* no offer can match, or cooldowns are all that stand in the
		 * way (then the pool waits for the first to end) */
		char *m = ep.no_match || !ep.cool_until_s
		                  ? gb_plan_no_candidate_msg(pl)
		                  : gb_engine__cooldown_note(&ep);
		json_object_set_new(out, "error", json_string(m));
		free(m);
	}
	json_object_set_new(out, "no_match",
	                    json_boolean(need > 0 && ep.no_match));
	{
		/* apply's quota and budget checks, on this plan */
		char *refusal = gb_engine_check_plan(e, e->o.cfg, spec, pl,
		                                     earlier);
		json_object_set_new(out, "apply_refused",
		                    refusal ? json_string(refusal) : json_null());
		free(refusal);
	}
	classified_free(&c);
	gb_engine__plan_free(&ep);
	gb_inst_list_free(rows, n);
	return out;
}
