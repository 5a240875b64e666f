/* engine_consolidate.c -- moving a pool onto capacity that frees up:
 * owned nodes (already paid for) or an offer with free room that is
 * clearly cheaper than the pool's dearest instance.  Make before break:
 * the new instance is placed first, and only then is the dearest one
 * terminated.  Bounded: one check per pool per GB_CONSOLIDATE_CHECK_MS,
 * at most GB_CONSOLIDATE_PER_HOUR moves per pool in any hour (counted
 * from its "consolidate" events, so the bound holds across processes),
 * one move per converge.  Pools with lifecycle.consolidate: false, and
 * co-located pools (a move would split them), never move.  Only offers
 * that say how many are free (gb_coffer.available > 0: on-prem nodes)
 * are moved onto: a cloud's unbounded offers do not "free up". */
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

/* 1 when the catalog has any offer with known free room (on-prem
 * nodes): without one nothing can free up, and pools are not converged
 * again just to look. */
static int any_room(const gb_engine *e)
{
	const gb_catalog *cat = e->o.cat;
	for (size_t i = 0; cat && i < gb_catalog_count(cat); i++)
		if (gb_catalog_at(cat, i)->available > 0)
			return 1;
	return 0;
}

/* 1 when the pool's check is due now; sets the next one. */
static int check_due(gb_engine *e, const char *pool)
{
	int64_t now = gb_now_ms();
	json_t *g;
	int due;
	pthread_mutex_lock(&e->settled_mu);
	if (!e->consol)
		e->consol = json_object();
	g = json_object_get(e->consol, pool);
	due = !g || json_integer_value(g) <= now;
	if (due)
		json_object_set_new(e->consol, pool,
		                    json_integer(now + GB_CONSOLIDATE_CHECK_MS));
	pthread_mutex_unlock(&e->settled_mu);
	return due;
}

static int owned_cloud(gb_engine *e, const char *cloud)
{
	gb_drv *d = gb_engine__drv(e, cloud);
	return d && d->d && (d->d->caps & GB_DRV_CAP_PROBE);
}

/* Moves of the pool in the last hour (its "consolidate" events). */
static int moves_last_hour(gb_engine *e, const char *pool)
{
	gb_event_row *v;
	size_t n;
	int moves = 0;
	if (gb_store_event_list(e->o.store, pool, 0,
	                        gb_now_ms() - 3600 * 1000, 1000, &v, &n) != 0)
		return GB_CONSOLIDATE_PER_HOUR; /* unknown: do not move */
	for (size_t i = 0; i < n; i++)
		moves += v[i].kind && strcmp(v[i].kind, "consolidate") == 0;
	gb_event_list_free(v, n);
	return moves;
}

/* A candidate worth moving the instance r onto: free room, another
 * place, and owned (r is not) or GB_CONSOLIDATE_SAVING cheaper. */
static int better(gb_engine *e, const gb_coffer *o, const gb_inst_row *r,
                  int r_owned)
{
	if (o->available <= 0)
		return 0;
	if (strcmp(o->cloud, r->cloud) == 0 &&
	    strcmp(o->region, r->region) == 0 &&
	    strcmp(o->instance_type, r->instance_type) == 0)
		return 0;
	if (o->owned && !r_owned && owned_cloud(e, o->cloud))
		return 1;
	return o->price <= r->price_per_hour * (1.0 - GB_CONSOLIDATE_SAVING);
}

int gb_engine__consolidate(gb_engine *e, const gb_pool_spec *spec,
                           const gb_engine_plan *ep, int64_t generation,
                           gb_inst_row **keep, size_t nkeep)
{
	gb_engine_plan own;
	const gb_engine_plan *pl = ep;
	const gb_coffer *to = NULL;
	gb_inst_row *dear = NULL;
	gb_engine_have have = {.count = (int)nkeep};
	int dear_owned, placed = 0, rc;
	char msg[1024] = "";
	int64_t retry_ms = 0;

	if (spec->no_consolidate || spec->colocate != GB_COLOCATE_NONE ||
	    !nkeep)
		return 0;
	for (size_t i = 0; i < nkeep; i++) {
		if (strcmp(keep[i]->state, "running") != 0)
			return 0; /* settle first */
		have.price += keep[i]->price_per_hour;
		if (!dear || keep[i]->price_per_hour > dear->price_per_hour ||
		    (keep[i]->price_per_hour == dear->price_per_hour &&
		     keep[i]->name_index > dear->name_index))
			dear = keep[i];
	}
	if (!check_due(e, spec->name) || !any_room(e))
		return 0;
	dear_owned = owned_cloud(e, dear->cloud);
	if (!pl) {
		gb_engine__plan(e, spec, &own);
		pl = &own;
	}
	for (size_t i = 0; pl->rc == 0 && i < pl->plan.ncands && !to; i++)
		if (better(e, pl->plan.cands[i].offer, dear, dear_owned))
			to = pl->plan.cands[i].offer;
	if (!to || moves_last_hour(e, spec->name) >= GB_CONSOLIDATE_PER_HOUR)
		goto out;
	gb_engine__event(e, spec->name, dear->provider_id, "consolidate",
	                 "moving %s (%s/%s %s, $%.4f/h) onto %s/%s %s %s "
	                 "($%.4f/h, %s) that has room now: the new one first, "
	                 "then %s goes", dear->name, dear->cloud, dear->region,
	                 dear->instance_type, dear->price_per_hour, to->cloud,
	                 to->region, to->instance_type,
	                 gb_capacity_name(to->capacity), to->price,
	                 to->owned && !dear_owned ? "owned capacity"
	                                          : "cheaper",
	                 dear->name);
	rc = gb_engine__place(e, spec, pl, generation, 1, to->cloud,
	                      to->region, to->zone, &have, &placed, msg,
	                      sizeof(msg), &retry_ms);
	if (rc != 0 || placed < 1) {
		gb_engine__event(e, spec->name, dear->provider_id, "consolidate",
		                 "%s stays: the move made nothing (%s)",
		                 dear->name, msg[0] ? msg : "no room after all");
		goto out;
	}
	gb_engine__terminate_rows(e, &dear, 1, "consolidated");
out:
	if (pl == &own)
		gb_engine__plan_free(&own);
	return placed;
}
