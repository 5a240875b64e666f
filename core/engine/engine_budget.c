/* engine_budget.c -- the team's limits (GPU quota, $/h limit, monthly
 * budget: gb_engine__check_team in engine_report.c) on every path that
 * adds capacity, with the price of what is added:
 *   - apply: the spec's count at its best candidate's price
 *     (submit_locked);
 *   - scale, autoscale and demand signals (gb_engine_set_desired): the
 *     live instances the pool keeps at their prices, plus the new ones at
 *     the best candidate's (gb_engine__check_scale);
 *   - the placement walk (replacements, failover to a dearer candidate,
 *     whatever converge places): each candidate before it is asked, at
 *     its own price (gb_engine__check_place). */
#include "engine_int.h"

#include <string.h>

#include "timejson.h"

int gb_engine__check_scale(gb_engine *e, const gb_pool_spec *spec, int n,
                           char *msg, size_t cap)
{
	gb_inst_row *rows = NULL;
	size_t nr = 0;
	int kept = 0;
	double kept_price = 0, each = 0;
	gb_engine_plan ep;
	if (gb_store_inst_list(e->o.store, spec->name, 1, &rows, &nr) != 0) {
		/* what the pool keeps is unknown: the check cannot pass */
		snprintf(msg, cap, "state store failed: %s (the team's quota "
		         "could not be checked; nothing was done)",
		         gb_store_errmsg(e->o.store));
		return -2;
	}
	for (size_t i = 0; i < nr && kept < n; i++)
		if ((strcmp(rows[i].state, "running") == 0 ||
		     strcmp(rows[i].state, "pending") == 0) &&
		    !rows[i].terminate_requested_ms) {
			kept++;
			kept_price += rows[i].price_per_hour;
		}
	gb_inst_list_free(rows, nr);
	if (kept < n) {
		/* the new ones go where an apply would put them */
		if (gb_engine__plan(e, spec, &ep) == 0 && ep.plan.ncands)
			each = ep.plan.cands[0].offer->price;
		gb_engine__plan_free(&ep);
	}
	return gb_engine__check_team(e, spec, n,
	                             kept_price + each * (n - kept), msg, cap);
}

int gb_engine__check_place(gb_engine *e, const gb_pool_spec *spec,
                           const gb_engine_have *have, int placed,
                           double placed_price, const gb_coffer *o, int ask,
                           char *msg, size_t cap)
{
	int n = placed + ask;
	double price = placed_price + o->price * ask;
	if (have) {
		n += have->count;
		price += have->price;
	}
	return gb_engine__check_team(e, spec, n, price, msg, cap);
}

/* One team's month (see gb_engine_budgets); NULL when the store
 * failed. */
static json_t *team_budget(gb_engine *e, const gb_team_cfg *t, int64_t now)
{
	gb_pool_row *pools = NULL;
	size_t np = 0;
	double spent;
	double rate = 0, ahead = 0;
	const char *state = "no budget";
	json_t *o;
	/* a store error is no report: never a month of $0 */
	if (gb_engine__team_spent(e, t->name, now, &spent) != 0 ||
	    gb_store_pool_list(e->o.store, t->name, 0, &pools, &np) != 0)
		return NULL;
	for (size_t i = 0; i < np; i++) {
		gb_inst_row *rows;
		size_t n;
		double hours = gb_engine__pool_hours_left(&pools[i], now);
		if (strcmp(pools[i].state, "active") != 0)
			continue;
		if (gb_store_inst_list(e->o.store, pools[i].name, 1, &rows,
		                       &n) != 0) {
			gb_pool_list_free(pools, np);
			return NULL;
		}
		for (size_t k = 0; k < n; k++)
			if (strcmp(rows[k].state, "running") == 0 ||
			    strcmp(rows[k].state, "pending") == 0) {
				rate += rows[k].price_per_hour;
				ahead += rows[k].price_per_hour * hours;
			}
		gb_inst_list_free(rows, n);
	}
	gb_pool_list_free(pools, np);
	if (t->monthly_budget > 0)
		state = spent >= t->monthly_budget ? "over"
		        : spent >= t->budget_warn_at * t->monthly_budget
		                ? "warning" : "ok";
	o = json_pack("{s:s, s:f, s:f, s:f, s:f, s:s, s:o}", "team", t->name,
	              "warn_fraction", t->budget_warn_at, "spent", spent, "per_hour",
	              rate, "projected", spent + ahead, "state", state,
	              "month_end",
	              gb_json_time(gb_engine__month_end(now) * 1000));
	if (t->monthly_budget > 0) {
		json_object_set_new(o, "budget", json_real(t->monthly_budget));
		json_object_set_new(o, "spent_fraction",
		                    json_real(spent / t->monthly_budget));
		json_object_set_new(o, "projected_fraction",
		                    json_real((spent + ahead) / t->monthly_budget));
	} else {
		json_object_set_new(o, "budget", json_null());
		json_object_set_new(o, "spent_fraction", json_null());
		json_object_set_new(o, "projected_fraction", json_null());
	}
	return o;
}

json_t *gb_engine_budgets(gb_engine *e, const char *team)
{
	json_t *a = json_array();
	int64_t now = gb_now_ms() / 1000;
	for (size_t i = 0; i < e->o.cfg->nteams; i++) {
		const gb_team_cfg *t = &e->o.cfg->teams[i];
		json_t *b;
		if (team && strcmp(team, t->name) != 0)
			continue;
		if (!(b = team_budget(e, t, now))) {
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, b);
	}
	return a;
}

void gb_engine_budget_attach(json_t *pools, json_t *budgets)
{
	size_t i, k;
	json_t *p, *b;
	if (json_is_object(pools)) {
		const char *team = json_string_value(json_object_get(pools,
		                                                     "team"));
		json_array_foreach(budgets, k, b)
			if (team && strcmp(team, json_string_value(json_object_get(
			                                 b, "team"))) == 0) {
				json_object_set(pools, "team_budget", b);
				return;
			}
		return;
	}
	json_array_foreach(pools, i, p)
		gb_engine_budget_attach(p, budgets);
}
