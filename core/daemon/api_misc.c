/* api_misc.c -- offers, events, cost, drivers, audit, gc. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "engine.h"
#include "events_json.h"
#include "offers_view.h"

/* region= must name a region of the clouds asked for (cloud=, or every
 * driver of this daemon), as a spec's placement.regions: 1 after the
 * 400 that says why not. */
static int region_refused(gb_api_req *r, const char *region,
                          const char *cloud)
{
	char *msg = gb_runtime_region_problem(&r->d->app.rt, region, cloud);
	if (!msg)
		return 0;
	gb_api_error(r, 400, "BadQuery", "region: %s", msg);
	free(msg);
	return 1;
}

void gb_api_offers(gb_api_req *r)
{
	const char *gpu = gb_api_query(r, "gpu"), *cloud = gb_api_query(r, "cloud");
	const char *region = gb_api_query(r, "region");
	const char *cap = gb_api_query(r, "capacity");
	const char *canon = gpu ? gb_gpu_canonical(gpu) : NULL;
	json_t *a = json_array();
	size_t n = gb_catalog_count(r->d->app.rt.cat);
	int truncated = 0;
	if (gpu && !canon) {
		json_decref(a);
		gb_api_error(r, 400, "BadQuery", "unknown GPU model %s", gpu);
		return;
	}
	if (region && region_refused(r, region, cloud)) {
		json_decref(a);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const gb_coffer *o = gb_catalog_at(r->d->app.rt.cat, i);
		if ((canon && strcmp(o->gpu_model, canon) != 0) ||
		    (cloud && strcmp(o->cloud, cloud) != 0) ||
		    (region && !gb_glob(region, o->region)) ||
		    (cap && strcmp(gb_capacity_name(o->capacity), cap) != 0))
			continue;
		if (json_array_size(a) == GB_API_MAX_OFFERS) {
			truncated = 1;
			break;
		}
		json_array_append_new(a, gb_offer_record(o));
	}
	r->resp = json_pack("{s:o, s:b}", "offers", a, "truncated", truncated);
	r->status = 200;
}

/* Long poll: with wait=N (seconds, <= 60), an empty answer waits for the
 * next event, parked without a thread (gb_api_park); this runs again
 * when an event of the pool (or of any pool) is recorded, or at the
 * deadline.  Non-admins see only their team's pools' events. */
void gb_api_events(gb_api_req *r)
{
	const char *pool = gb_api_query(r, "pool");
	gb_event_row *rows;
	size_t n;
	json_t *a;
	if (!r->ev_started) {
		const char *after_s = gb_api_query(r, "after");
		const char *since_s = gb_api_query(r, "since_ms");
		const char *wait_s = gb_api_query(r, "wait");
		int64_t after = 0, since = 0, wait = 0;
		if ((after_s && gb_parse_int64(after_s, &after) != 0) ||
		    (since_s && gb_parse_int64(since_s, &since) != 0) ||
		    (wait_s && (gb_parse_int64(wait_s, &wait) != 0 || wait < 0 ||
		                wait > 60))) {
			gb_api_error(r, 400, "BadQuery",
			             "after and since_ms are integers, wait is 0..60");
			return;
		}
		r->ev_started = 1;
		r->ev_after = after;
		r->ev_since = since;
		r->park_until_ms = gb_mono_ms() + wait * 1000;
	}
	if (pool && !gb_api_pool_visible(r, pool))
		return;
	if (gb_store_event_list(r->d->store, pool, r->ev_after, r->ev_since, 1000,
	                        &rows, &n) != 0) {
		gb_api_error(r, 500, "StoreError", "%s",
		             gb_store_errmsg(r->d->store));
		return;
	}
	if (r->role != GB_ROLE_ADMIN && r->team) {
		/* keep only events of the caller's team's pools: the team
		 * that owned the pool when the event was written (a destroyed
		 * pool's name may be another team's now) */
		size_t w = 0;
		for (size_t i = 0; i < n; i++) {
			if (rows[i].pool && rows[i].team &&
			    strcmp(rows[i].team, r->team) == 0)
				rows[w++] = rows[i];
			else
				gb_event_row_free(&rows[i]);
		}
		if (n && !w)
			r->ev_after = rows[n - 1].id; /* nothing visible: move on */
		n = w;
	}
	if (n || gb_mono_ms() >= r->park_until_ms || gb_daemon_stopping(r->d)) {
		a = gb_events_json(rows, n);
		gb_event_list_free(rows, n);
		r->resp = json_pack("{s:o}", "events", a);
		r->status = 200;
		return;
	}
	gb_event_list_free(rows, n);
	gb_api_park(r, gb_api_events, pool, r->park_until_ms);
}

void gb_api_cost(gb_api_req *r)
{
	const char *by = gb_api_query(r, "by");
	const char *since_s = gb_api_query(r, "since");
	int64_t since = 0;
	json_t *c;
	if (since_s && gb_parse_int64(since_s, &since) != 0) {
		gb_api_error(r, 400, "BadQuery", "since is unix seconds");
		return;
	}
	if (by && strcmp(by, "team") && strcmp(by, "pool") && strcmp(by, "cloud") &&
	    strncmp(by, "label:", 6) != 0) {
		gb_api_error(r, 400, "BadQuery",
		             "by must be team, pool, cloud or label:KEY");
		return;
	}
	/* operators and viewers see their own team's pools only */
	c = gb_engine_cost(r->d->eng, by, since,
	                   r->role != GB_ROLE_ADMIN ? r->team : NULL);
	if (!c) {
		gb_api_store_failed(r);
		return;
	}
	{
		json_t *b = gb_engine_budgets(r->d->eng,
		                              r->role != GB_ROLE_ADMIN ? r->team
		                                                       : NULL);
		if (!b) {
			json_decref(c);
			gb_api_store_failed(r);
			return;
		}
		json_object_set_new(c, "budgets", b);
	}
	r->resp = c;
	r->status = 200;
}

/* GET /v1/usage?by=hour|weekday&pool=P&team=T&since=UNIX_S&until=UNIX_S:
 * gb_engine_usage (since: a week ago by default; until: now, to the
 * millisecond). */
void gb_api_usage(gb_api_req *r)
{
	const char *by = gb_api_query(r, "by"), *pool = gb_api_query(r, "pool");
	const char *team = gb_api_query(r, "team");
	const char *since_q = gb_api_query(r, "since");
	const char *until_q = gb_api_query(r, "until");
	int64_t now_ms = gb_now_ms(), since = now_ms / 1000 - 7 * 86400;
	int64_t until = 0;
	json_t *u;
	if ((since_q && gb_parse_int64(since_q, &since) != 0) ||
	    (until_q && gb_parse_int64(until_q, &until) != 0)) {
		gb_api_error(r, 400, "BadQuery", "since and until are unix seconds");
		return;
	}
	if (by && strcmp(by, "hour") && strcmp(by, "weekday")) {
		gb_api_error(r, 400, "BadQuery", "by must be hour or weekday, "
		             "not \"%s\"", by);
		return;
	}
	/* operators and viewers see their own team's pools only */
	if (team && !gb_api_sees_team(r, team)) {
		gb_api_error(r, 403, "Forbidden", "team %s is not yours; leave "
		             "team out for your own", team);
		return;
	}
	if (r->role != GB_ROLE_ADMIN && r->team)
		team = r->team;
	if (pool && !gb_api_pool_visible(r, pool))
		return; /* 404 set */
	u = gb_engine_usage(r->d->eng, by, pool, team, since * 1000,
	                    until_q ? until * 1000 : now_ms);
	if (!u) {
		gb_api_error(r, 500, "StoreError", "usage: %s",
		             gb_store_errmsg(r->d->store));
		return;
	}
	r->resp = u;
	r->status = 200;
}

/* Why a driver failed may quote the files it read (an inventory's
 * lines, a key file's fields): admins only; other tokens see that it is
 * not ready. */
void gb_api_drivers(gb_api_req *r)
{
	json_t *rows = gb_drivers_json(&r->d->app.rt.drivers), *row;
	size_t i;
	if (r->role != GB_ROLE_ADMIN)
		json_array_foreach(rows, i, row)
			if (!json_is_true(json_object_get(row, "ready")))
				json_object_set_new(row, "status", json_string(
					"not ready (the reason is shown to admin "
					"tokens and in the daemon's log)"));
	r->resp = json_pack("{s:o}", "drivers", rows);
	r->status = 200;
}

void gb_api_audit(gb_api_req *r)
{
	gb_audit_row *rows;
	size_t n;
	const char *after_s = gb_api_query(r, "after");
	int64_t after = 0;
	json_t *a;
	if (after_s && gb_parse_int64(after_s, &after) != 0) {
		gb_api_error(r, 400, "BadQuery", "after is an integer");
		return;
	}
	if (gb_store_audit_list(r->d->store, after, gb_api_query(r, "team"),
	                        1000, &rows, &n) != 0) {
		gb_api_error(r, 500, "StoreError", "%s",
		             gb_store_errmsg(r->d->store));
		return;
	}
	a = gb_audit_json(rows, n);
	gb_audit_list_free(rows, n);
	r->resp = json_pack("{s:o}", "audit", a);
	r->status = 200;
}

void gb_api_gc(gb_api_req *r)
{
	json_t *rep = NULL;
	int rc;
	rc = gb_engine_gc(r->d->eng, gb_api_query(r, "adopt") != NULL, &rep);
	if (rc < 0) {
		json_decref(rep);
		gb_api_error(r, 500, "GcFailed", "cannot read the state store: %s",
		             gb_store_errmsg(r->d->store));
		return;
	}
	/* incomplete: some region could not be listed ("unchecked" rows) */
	r->resp = json_pack("{s:o, s:b}", "orphans", rep, "incomplete", rc == 1);
	r->status = 200;
	snprintf(r->detail, sizeof(r->detail), "%zu orphans",
	         json_array_size(rep));
}

/* POST /v1/offers/refresh[?cloud=X&region=R] (admin): refresh prices
 * from the drivers' price sources into the store, then rebuild the
 * catalog the daemon plans from. */
void gb_api_offers_refresh(gb_api_req *r, const char *name)
{
	json_t *report;
	int done = 0, failed;
	(void)name; /* "refresh": the route's literal segment (api.c) */
	if (gb_store_is_shared(r->d->store)) {
		/* one replica at a time lists the clouds' prices */
		char holder[128];
		int64_t token;
		int64_t ms = (r->d->cfg->lease_s > 0 ? r->d->cfg->lease_s : 15) * 1000;
		int rc = gb_store_lease_acquire(r->d->store, "prices", ms, &token,
		                                holder, sizeof(holder));
		if (rc != 0) {
			r->retry_after_s = 10;
			if (rc > 0)
				gb_api_error(r, 409, "Conflict", "a price refresh is "
				             "running on replica %s; its prices reach "
				             "every replica when it ends: retry later",
				             holder);
			else
				gb_api_error(r, 503, "StoreUnavailable", "%s",
				             gb_store_errmsg(r->d->store));
			return;
		}
	}
	report = json_array();
	failed = gb_offers_refresh(&r->d->app.rt.drivers, r->d->store,
	                           gb_api_query(r, "cloud"),
	                           gb_api_query(r, "region"), report, &done) != 0;
	if (gb_store_is_shared(r->d->store))
		/* unreleased, it expires by itself */
		GB_IGNORE(gb_store_lease_release(r->d->store, "prices"));
	gb_api_reload_offers(r);
	r->resp = json_pack("{s:o, s:I}", "refreshed", report, "offers",
	                    (json_int_t)gb_catalog_count(r->d->app.rt.cat));
	r->status = failed && !done ? 502 : 200;
	snprintf(r->detail, sizeof(r->detail), "%d drivers refreshed", done);
}

/* POST /v1/reconcile: one pass soon.  Requests coalesce (one pass
 * pending at a time; a request while a pass runs joins it) and each
 * token may ask daemon.reconcile_per_minute times a minute (then 429
 * with Retry-After): the reconciler also runs every period on its own. */
void gb_api_reconcile(gb_api_req *r)
{
	int retry = 0, per_minute = r->d->cfg->reconcile_per_minute;
	const char *how;
	if (r->d->srv &&
	    !gb_api_token_admit(gb_api_srv_limits(r->d), r->actor, per_minute,
	                        &retry)) {
		gb_api_error(r, 429, "RateLimited",
		             "token '%s' may ask for %d reconciles a minute "
		             "(daemon.reconcile_per_minute); retry in %d s. The "
		             "reconciler also runs every %llds on its own.",
		             r->actor, per_minute, retry,
		             (long long)r->d->cfg->reconcile_period_s);
		r->retry_after_s = retry;
		return;
	}
	switch (gb_daemon_request_reconcile(r->d)) {
	case GB_RECONCILE_JOINED:
		how = "joined the pass that is running";
		break;
	case GB_RECONCILE_PENDING:
		how = "joined the pass already requested";
		break;
	default:
		how = "reconcile requested";
		break;
	}
	r->resp = json_pack("{s:s}", "status", how);
	r->status = 202;
	snprintf(r->detail, sizeof(r->detail), "%s", how);
}
