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
