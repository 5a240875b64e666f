/* engine_plan.c -- the plan of one engine operation, and the failover
 * cooldowns the planner and the placement walk skip. */
#include "engine_int.h"

#include <stdio.h>
#include <string.h>

/* Failover cooldowns recorded in the state store (shared by every pool
 * and process) also apply to plans, so `plan --explain` says why a zone
 * is being skipped right now. */
int gb_engine_unavailable(void *ud, const gb_coffer *o, char *why,
                          size_t cap)
{
	gb_store *st = ud;
	char reason[256], when[32];
	int64_t until = 0;
	if (!gb_store_unavailable_check(st, o->cloud, o->region, o->zone,
	                                o->instance_type,
	                                gb_capacity_name(o->capacity),
	                                gb_now_ms() / 1000, reason,
	                                sizeof(reason), &until))
		return 0;
	snprintf(why, cap, "%s, until %s", reason,
	         gb_format_time(until, when, sizeof(when)));
	return 1;
}

int gb_engine__plan(gb_engine *e, const gb_pool_spec *spec,
                    gb_engine_plan *ep)
{
	gb_plan_opts po;
	int failed = 0;
	memset(ep, 0, sizeof(*ep));
	ep->ps = gb_plan_load_policies(e->o.cfg, spec, e->o.policy_dir,
	                               &failed, ep->err, sizeof(ep->err));
	if (failed) {
		ep->rc = -1;
		return -1;
	}
	memset(&po, 0, sizeof(po));
	po.policies = ep->ps;
	po.team = gb_config_team(e->o.cfg, spec->team);
	po.unavailable = gb_engine_unavailable;
	po.unavailable_ud = e->o.store;
	if (gb_plan_pool(spec, e->o.cat, &po, &ep->plan, ep->err,
	                 sizeof(ep->err)) != 0) {
		gb_plan_free(&ep->plan);
		gb_policy_set_free(ep->ps);
		ep->ps = NULL;
		ep->rc = -1;
		return -1;
	}
	return 0;
}

void gb_engine__plan_free(gb_engine_plan *ep)
{
	gb_plan_free(&ep->plan);
	gb_policy_set_free(ep->ps);
	memset(ep, 0, sizeof(*ep));
}
