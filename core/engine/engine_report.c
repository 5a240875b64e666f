/* engine_report.c -- pools as JSON, cost reports, team quota checks. */
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timejson.h"

int64_t gb_engine__billing_min_ms(gb_engine *e, const char *cloud)
{
	if (!e->o.drivers)
		return 0;
	return gb_drv_billing_minimum_s(gb_drivers_find(e->o.drivers, cloud)) *
	       1000;
}

int64_t gb_engine__billed_end_ms(const gb_inst_row *r, int64_t now_ms,
                                 int64_t min_ms)
{
	int64_t end = r->terminated_ms ? r->terminated_ms : now_ms;
	if (!r->launched_ms)
		return 0;
	if (end < r->launched_ms)
		end = r->launched_ms;
	return end - r->launched_ms < min_ms ? r->launched_ms + min_ms : end;
}

static json_t *inst_json(gb_engine *e, const gb_inst_row *r, int64_t now_ms,
                         int ready)
{
	int64_t end = gb_engine__billed_end_ms(r, now_ms, gb_engine__billing_min_ms(e, r->cloud));
	double hours = end > r->launched_ms
	                       ? (double)(end - r->launched_ms) / 3600000.0
	                       : 0;
	json_t *j = json_object();
	json_object_set_new(j, "name", json_string(r->name ? r->name : ""));
	json_object_set_new(j, "id", r->provider_id ? json_string(r->provider_id)
	                                            : json_null());
	json_object_set_new(j, "cloud", json_string(r->cloud));
	json_object_set_new(j, "region", json_string(r->region));
	json_object_set_new(j, "zone", json_string(r->zone ? r->zone : ""));
	json_object_set_new(j, "instance_type", json_string(r->instance_type));
	json_object_set_new(j, "capacity", json_string(r->capacity));
	/* ready: running, and its agent reported the GPUs of the offer */
	json_object_set_new(j, "state", json_string(
	        ready && strcmp(r->state, "running") == 0 ? "ready" : r->state));
	if (r->state_reason)
		json_object_set_new(j, "state_reason", json_string(r->state_reason));
	json_object_set_new(j, "private_ip", r->private_ip
	                                             ? json_string(r->private_ip)
	                                             : json_null());
	json_object_set_new(j, "public_ip", r->public_ip ? json_string(r->public_ip)
	                                                 : json_null());
	json_object_set_new(j, "gpu_model", json_string(r->gpu_model ? r->gpu_model : ""));
	json_object_set_new(j, "gpu_count", json_integer(r->gpu_count));
	json_object_set_new(j, "price_per_hour", json_real(r->price_per_hour));
	json_object_set_new(j, "launched_at", gb_json_time(r->launched_ms));
	if (r->terminated_ms)
		json_object_set_new(j, "terminated_at",
		                    gb_json_time(r->terminated_ms));
	json_object_set_new(j, "cost", json_real(hours * r->price_per_hour));
	return j;
}


/* The pool as JSON; rows are its live instances (borrowed). */
static json_t *pool_json(gb_engine *e, const gb_pool_row *p,
                         const gb_inst_row *rows, size_t n)
{
	int64_t now = gb_now_ms() / 1000, *ready_ids = NULL;
	int running = 0, pending = 0, other = 0, nready = 0, active;
	size_t nready_ids = 0;
	double per_hour = 0;
	json_t *j = json_object(), *insts = json_array(), *clouds = json_array();
	json_t *spec = json_loads(p->spec_json ? p->spec_json : "{}", 0, NULL);
	int agent = json_is_true(json_object_get(json_object_get(spec, "pool"),
	                                         "agent"));
	if (agent &&
	    gb_store_agent_ready(e->o.store, p->name, &ready_ids,
	                         &nready_ids) != 0)
		nready_ids = 0; /* shown as running: the store's error is
		                   the next call's */

	for (size_t i = 0; i < n; i++) {
		int seen = 0, ready = 0;
		size_t k;
		json_t *c;
		for (k = 0; k < nready_ids && !ready; k++)
			ready = ready_ids[k] == rows[i].id;
		if (strcmp(rows[i].state, "running") == 0) {
			running++;
			nready += ready;
		}
		else if (strcmp(rows[i].state, "pending") == 0)
			pending++;
		else
			other++;
		if (!rows[i].terminated_ms) /* billing stopped: preempted */
			per_hour += rows[i].price_per_hour;
		json_array_append_new(insts, inst_json(e, &rows[i], now * 1000,
		                                       ready));
		json_array_foreach(clouds, k, c)
			seen |= strcmp(json_string_value(c), rows[i].cloud) == 0;
		if (!seen)
			json_array_append_new(clouds, json_string(rows[i].cloud));
	}
	json_object_set_new(j, "name", json_string(p->name));
	json_object_set_new(j, "team", json_string(p->team));
	json_object_set_new(j, "purpose", json_string(gb_engine__spec_purpose(p)));
	json_object_set_new(j, "state", json_string(p->state));
	if (p->destroy_reason)
		json_object_set_new(j, "reason", json_string(p->destroy_reason));
	json_object_set_new(j, "desired", json_integer(p->desired));
	json_object_set_new(j, "running", json_integer(running));
	/* agent pools: running instances whose agent reported the GPUs of
	 * the offer (also counted in running) */
	json_object_set_new(j, "agent", json_boolean(agent));
	if (agent)
		json_object_set_new(j, "ready", json_integer(nready));
	free(ready_ids);
	json_object_set_new(j, "pending", json_integer(pending));
	json_object_set_new(j, "other", json_integer(other));
	json_object_set_new(j, "clouds", clouds);
	json_object_set_new(j, "price_per_hour", json_real(per_hour));
	json_object_set_new(j, "created_at", gb_json_time(p->created_at * 1000));
	json_object_set_new(j, "age_s", json_integer(now - p->created_at));
	/* a pool being destroyed (or gone) has no TTL left and waits for
	 * nothing */
	active = strcmp(p->state, "active") == 0;
	if (p->ttl_s && active)
		json_object_set_new(j, "ttl_left_s",
		                    json_integer(p->created_at + p->ttl_s - now));
	else
		json_object_set_new(j, "ttl_left_s", json_null());
	json_object_set_new(j, "idle_timeout_s", json_integer(p->idle_timeout_s));
	json_object_set_new(j, "last_heartbeat_at",
	                    gb_json_time(p->last_heartbeat_at * 1000));
	if (p->note && active) {
		json_t *w = json_object();
		json_object_set_new(w, "reason", json_string(p->note));
		json_object_set_new(w, "next_attempt_at",
		                    gb_json_time(p->retry_at_ms));
		/* a permanent refusal: the waits end at once */
		json_object_set_new(w, "refused", json_boolean(
		                            gb_engine__note_refused(p->note)));
		json_object_set_new(j, "waiting", w);
	} else {
		json_object_set_new(j, "waiting", json_null());
	}
	{
		/* the spec's labels: cost --by label:KEY groups by them, and a
		 * CI job's pool carries ci-repository, ci-ref, ci-run */
		json_t *l = json_object_get(json_object_get(spec, "pool"),
		                            "labels"); /* {"pool": {...}} */
		json_object_set_new(j, "labels", json_is_object(l) ? json_incref(l)
		                                                   : json_object());
		json_decref(spec);
	}
	json_object_set_new(j, "instances", insts);
	return j;
}

json_t *gb_engine_pool_json(gb_engine *e, const char *pool)
{
	gb_pool_row p;
	gb_inst_row *rows = NULL;
	size_t n = 0;
	json_t *j;
	if (gb_store_pool_get(e->o.store, pool, &p) != 0)
		return NULL;
	if (gb_store_inst_list(e->o.store, p.name, 1, &rows, &n) != 0) {
		gb_pool_row_free(&p);
		return NULL; /* not a pool without instances */
	}
	j = pool_json(e, &p, rows, n);
	gb_inst_list_free(rows, n);
	gb_pool_row_free(&p);
	return j;
}

json_t *gb_engine_pools_json(gb_engine *e, const char *team,
                             int include_destroyed)
{
	gb_pool_row *v;
	gb_inst_row *rows = NULL;
	size_t n, nrows = 0, k = 0;
	json_t *a;
	if (gb_store_pool_list(e->o.store, team, include_destroyed, &v,
	                       &n) != 0)
		return NULL;
	/* Every live instance in one read instead of one per pool: both
	 * lists come sorted by pool name (byte order), so walk them side by
	 * side. */
	if (n && gb_store_inst_list(e->o.store, NULL, 1, &rows, &nrows) != 0) {
		gb_pool_list_free(v, n);
		return NULL;
	}
	a = json_array();
	for (size_t i = 0; i < n; i++) {
		size_t start;
		if (strcmp(v[i].name, GB_ORPHAN_POOL) == 0)
			continue; /* the gc's, never a user's */
		while (k < nrows && strcmp(rows[k].pool, v[i].name) < 0)
			k++;
		start = k;
		while (k < nrows && strcmp(rows[k].pool, v[i].name) == 0)
			k++;
		json_array_append_new(a, pool_json(e, &v[i], rows + start,
		                                   k - start));
	}
	gb_inst_list_free(rows, nrows);
	gb_pool_list_free(v, n);
	return a;
}

/* Label value of a pool from its stored spec JSON. */
static const char *label_of(json_t *specs, const char *pool, const char *key)
{
	/* stored specs are {"pool": {...}} (gb_pool_spec_to_json) */
	json_t *spec = json_object_get(json_object_get(specs, pool), "pool");
	json_t *labels = json_object_get(spec, "labels");
	const char *v = json_string_value(json_object_get(labels, key));
	return v ? v : "(none)";
}

/* Whether store row `id` is in the ascending list ids[n]. */
static int has_id(const int64_t *ids, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ids[mid] == id)
			return 1;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static void add_real(json_t *g, const char *key, double v)
{
	json_object_set_new(g, key, json_real(json_real_value(
	                                    json_object_get(g, key)) + v));
}

static void add_int(json_t *g, const char *key, json_int_t v)
{
	json_object_set_new(g, key, json_integer(json_integer_value(
	                                    json_object_get(g, key)) + v));
}

/* The group key of instance r under `by` (borrowed from r, specs or
 * incs).  The team is the one that owned the pool when the instance was
 * made (a destroyed pool's name may be another team's now); labels are
 * the pool's spec when it is still the instance's incarnation. */
static const char *group_key(const char *by, const gb_inst_row *r,
                             json_t *specs, json_t *incs)
{
	const char *key;
	if (!by || strcmp(by, "pool") == 0)
		key = r->pool;
	else if (strcmp(by, "team") == 0)
		key = r->team;
	else if (strcmp(by, "cloud") == 0)
		key = r->cloud;
	else if (strncmp(by, "label:", 6) == 0)
		key = json_integer_value(json_object_get(incs, r->pool)) ==
		                      r->pool_inc
		              ? label_of(specs, r->pool, by + 6)
		              : "(none)";
	else
		key = r->pool;
	return key ? key : "(unknown)";
}

json_t *gb_engine_cost(gb_engine *e, const char *by, int64_t since_s,
                       const char *team_filter)
{
	gb_inst_row *rows = NULL;
	gb_pool_row *pools = NULL;
	int64_t *rolled = NULL;
	size_t n = 0, np = 0, nrolled = 0;
	int64_t now = gb_now_ms() / 1000;
	json_t *groups = json_object(), *specs = json_object(), *out, *arr;
	json_t *incs = json_object();
	double total = 0;
	const char *k;
	json_t *g;

	/* a store error is no report: never a total of $0 */
	if (gb_store_pool_list(e->o.store, NULL, 1, &pools, &np) != 0 ||
	    gb_store_inst_list(e->o.store, NULL, 0, &rows, &n) != 0 ||
	    gb_store_inst_rolled_back(e->o.store, &rolled, &nrolled) != 0) {
		gb_inst_list_free(rows, n);
		gb_pool_list_free(pools, np);
		json_decref(groups);
		json_decref(specs);
		json_decref(incs);
		return NULL;
	}
	for (size_t i = 0; i < np; i++) {
		json_t *s = json_loads(pools[i].spec_json, 0, NULL);
		if (s)
			json_object_set_new(specs, pools[i].name, s);
		json_object_set_new(incs, pools[i].name,
		                    json_integer(pools[i].incarnation));
	}
	for (size_t i = 0; i < n; i++) {
		const gb_inst_row *r = &rows[i];
		int64_t start = r->launched_ms,
		        end = gb_engine__billed_end_ms(r, now * 1000, gb_engine__billing_min_ms(e, r->cloud));
		int rb;
		double hours, cost;
		const char *key;
		if (team_filter && (!r->team || strcmp(r->team, team_filter) != 0))
			continue;
		if (!start)
			continue;
		if (since_s * 1000 > start)
			start = since_s * 1000;
		if (end <= start)
			continue;
		hours = (double)(end - start) / 3600000.0;
		cost = hours * r->price_per_hour;
		rb = has_id(rolled, nrolled, r->id);
		key = group_key(by, r, specs, incs);
		g = json_object_get(groups, key);
		if (!g) {
			g = json_pack("{s:s, s:f, s:f, s:i, s:i, s:f}", "key", key,
			              "cost", 0.0, "hours", 0.0, "instances", 0,
			              "rolled_back", 0, "rolled_back_cost", 0.0);
			json_object_set_new(groups, key, g);
		}
		add_real(g, "cost", cost);
		add_real(g, "hours", hours);
		add_int(g, "instances", 1);
		if (rb) {
			add_int(g, "rolled_back", 1);
			add_real(g, "rolled_back_cost", cost);
		}
		total += cost;
	}
	arr = json_array();
	json_object_foreach(groups, k, g)
		json_array_append(arr, g);
	out = json_pack("{s:f, s:s, s:s, s:o, s:o}", "total", total, "currency",
	                "USD", "by", by ? by : "pool", "since",
	                gb_json_time(since_s * 1000), "groups", arr);
	json_decref(groups);
	json_decref(specs);
	json_decref(incs);
	free(rolled);
	gb_inst_list_free(rows, n);
	gb_pool_list_free(pools, np);
	return out;
}

int64_t gb_engine__month_start(int64_t now)
{
	time_t t = (time_t)now;
	struct tm tm;
	gmtime_r(&t, &tm);
	tm.tm_mday = 1;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	return (int64_t)timegm(&tm);
}

/* The team's use could not be read: the check cannot pass.  -2. */
static int store_failed(gb_engine *e, char *msg, size_t cap)
{
	snprintf(msg, cap, "state store failed: %s (the team's quota could "
	         "not be checked; nothing was done)",
	         gb_store_errmsg(e->o.store));
	return -2;
}

int64_t gb_engine__month_end(int64_t now)
{
	return gb_engine__month_start(gb_engine__month_start(now) + 32 * 86400);
}

int gb_engine__team_spent(gb_engine *e, const char *team, int64_t now,
                          double *out)
{
	json_t *c;
	size_t i;
	json_t *g;
	*out = 0;
	if (!e)
		return 0; /* no state: nothing spent */
	c = gb_engine_cost(e, "team", gb_engine__month_start(now), team);
	if (!c)
		return -1;
	json_array_foreach(json_object_get(c, "groups"), i, g)
		if (strcmp(json_string_value(json_object_get(g, "key")),
		           team) == 0)
			*out = json_real_value(json_object_get(g, "cost"));
	json_decref(c);
	return 0;
}

double gb_engine__pool_hours_left(const gb_pool_row *p, int64_t now)
{
	int64_t end = gb_engine__month_end(now);
	if (p->ttl_s > 0 && p->created_at + p->ttl_s < end)
		end = p->created_at + p->ttl_s;
	return end > now ? (double)(end - now) / 3600.0 : 0;
}

void gb_engine_batch_add(gb_engine_batch *bt, const gb_pool_spec *spec,
                         const gb_plan *p)
{
	gb_engine_batch_pool *bp;
	double price = p && p->ncands ? p->cands[0].offer->price : 0;
	bt->v = gb_xrealloc(bt->v, (bt->n + 1) * sizeof(*bt->v));
	bp = &bt->v[bt->n++];
	bp->name = gb_xstrdup(spec->name);
	bp->team = gb_xstrdup(spec->team ? spec->team : "");
	bp->gpus = spec->count * spec->gpu_count;
	bp->per_hour = price > 0 ? price * spec->count : 0;
	bp->ttl_s = spec->ttl_s;
}

void gb_engine_batch_free(gb_engine_batch *bt)
{
	for (size_t i = 0; i < bt->n; i++) {
		free(bt->v[i].name);
		free(bt->v[i].team);
	}
	free(bt->v);
	bt->v = NULL;
	bt->n = 0;
}

/* The batch's pools counted for spec (its team's, not spec itself). */
static int batch_counts(const gb_engine_batch *bt, const gb_pool_spec *spec,
                        size_t i)
{
	return strcmp(bt->v[i].team, spec->team ? spec->team : "") == 0 &&
	       strcmp(bt->v[i].name, spec->name) != 0;
}

static int in_batch(const gb_engine_batch *bt, const char *name)
{
	for (size_t i = 0; bt && i < bt->n; i++)
		if (strcmp(bt->v[i].name, name) == 0)
			return 1;
	return 0;
}

/* Refuses, before any cloud call, what the team's quota or budget does
 * not allow: GPUs, $/h across the team's pools, and the monthly budget:
 * spent this month + what the team's other pools run now until the
 * month's end (or their TTL) + this pool's price for its TTL or the
 * rest of the month.  0 allowed, -1 refused, -2 the store failed. */
/* e: NULL without a state (no other pools, nothing spent); earlier: the
 * pools before spec in its file, as if applied (or NULL) */
static int check_team(gb_engine *e, const gb_config *cfg,
                      const gb_pool_spec *spec, int desired,
                      double pool_price, const gb_engine_batch *earlier,
                      char *msg, size_t cap)
{
	const gb_team_cfg *t = gb_config_team(cfg, spec->team);
	gb_pool_row *pools = NULL;
	size_t np = 0;
	int gpus = desired * spec->gpu_count;
	double per_hour = pool_price, others = 0;
	int64_t now = gb_now_ms() / 1000;
	/* the earlier pools of the file: GPUs, $/h, and what they would
	 * spend (their TTL, or the rest of the month) */
	double batch_spend = 0;
	size_t nbatch = 0;
	const int64_t rest_s = gb_engine__month_end(now) - now;
	if (!t || (t->max_gpus <= 0 && t->max_price_per_hour <= 0 &&
	           t->monthly_budget <= 0))
		return 0; /* nothing to check: no store reads */
	for (size_t i = 0; earlier && i < earlier->n; i++)
		if (batch_counts(earlier, spec, i)) {
			gpus += earlier->v[i].gpus;
			per_hour += earlier->v[i].per_hour;
			batch_spend += earlier->v[i].per_hour *
			               (double)(earlier->v[i].ttl_s
			                                ? earlier->v[i].ttl_s
			                                : rest_s) / 3600.0;
			nbatch++;
		}
	if (e && gb_store_pool_list(e->o.store, spec->team, 0, &pools, &np) != 0)
		return store_failed(e, msg, cap);
	for (size_t i = 0; i < np; i++) {
		gb_inst_row *rows;
		size_t n;
		double hours = gb_engine__pool_hours_left(&pools[i], now);
		if (strcmp(pools[i].name, spec->name) == 0 ||
		    strcmp(pools[i].state, "active") != 0 ||
		    in_batch(earlier, pools[i].name))
			continue;
		if (gb_store_inst_list(e->o.store, pools[i].name, 1, &rows,
		                       &n) != 0) {
			gb_pool_list_free(pools, np);
			return store_failed(e, msg, cap);
		}
		for (size_t k = 0; k < n; k++) {
			gpus += rows[k].gpu_count;
			per_hour += rows[k].price_per_hour;
			if (strcmp(rows[k].state, "running") == 0 ||
			    strcmp(rows[k].state, "pending") == 0)
				others += rows[k].price_per_hour * hours;
		}
		gb_inst_list_free(rows, n);
	}
	gb_pool_list_free(pools, np);
	if (t->max_gpus > 0 && gpus > t->max_gpus) {
		snprintf(msg, cap,
		         "pool %s would bring team %s to %d GPUs%s, over its "
		         "quota of %d (teams[].max_gpus in the broker config): "
		         "shrink the pool or raise the quota", spec->name,
		         t->name, gpus, nbatch ? " with the pools before it in "
		                                 "the file" : "", t->max_gpus);
		return -1;
	}
	if (t->max_price_per_hour > 0 && per_hour > t->max_price_per_hour) {
		snprintf(msg, cap,
		         "pool %s would bring team %s to $%.2f/h%s, over its "
		         "limit of $%.2f/h (teams[].max_price_per_hour)",
		         spec->name, t->name, per_hour,
		         nbatch ? " with the pools before it in the file" : "",
		         t->max_price_per_hour);
		return -1;
	}
	if (t->monthly_budget > 0 && pool_price > 0) {
		double spent, hours, projected;
		int64_t end = gb_engine__month_end(now);
		if (gb_engine__team_spent(e, t->name, now, &spent) != 0)
			return store_failed(e, msg, cap);
		hours = spec->ttl_s ? (double)spec->ttl_s / 3600.0
		                    : (double)(end - now) / 3600.0;
		projected = spent + others + batch_spend + pool_price * hours;
		if (projected > t->monthly_budget) {
			char with[96] = "";
			if (nbatch)
				snprintf(with, sizeof(with), ", $%.2f of it for the "
				         "pools before it in the file", batch_spend);
			snprintf(msg, cap,
			         "pool %s ($%.2f/h for %.1f h%s) would bring team %s "
			         "to $%.2f this month%s, over its budget of $%.2f "
			         "(spent so far: $%.2f, the team's other pools to "
			         "the month's end: $%.2f); set a shorter "
			         "lifecycle.ttl, shrink the pool or raise "
			         "teams[].monthly_budget (gpubroker cost shows the "
			         "month)", spec->name, pool_price, hours,
			         spec->ttl_s ? "" : ", no TTL: rest of the month",
			         t->name, projected, with, t->monthly_budget, spent,
			         others);
			return -1;
		}
	}
	return 0;
}

int gb_engine__check_team(gb_engine *e, const gb_pool_spec *spec, int desired,
                          double pool_price, char *msg, size_t cap)
{
	return check_team(e, e->o.cfg, spec, desired, pool_price, NULL, msg,
	                  cap);
}

int gb_engine_batch_plan(gb_engine *e, gb_engine_batch *bt,
                         const gb_pool_spec *spec, char *err, size_t cap)
{
	gb_engine_plan ep;
	int rc = gb_engine__plan(e, spec, &ep);
	if (rc != 0)
		snprintf(err, cap, "%s", ep.err);
	else
		gb_engine_batch_add(bt, spec, &ep.plan);
	gb_engine__plan_free(&ep);
	return rc;
}

char *gb_engine_check_plan(gb_engine *e, const gb_config *cfg,
                           const gb_pool_spec *spec, const gb_plan *p,
                           const gb_engine_batch *earlier)
{
	char msg[1024];
	/* priced as apply prices it: its first candidate */
	double price = p->ncands ? p->cands[0].offer->price : -1;
	if (check_team(e, cfg, spec, spec->count,
	               price > 0 ? price * spec->count : 0, earlier, msg,
	               sizeof(msg)) == 0)
		return NULL;
	return gb_xstrdup(msg);
}
