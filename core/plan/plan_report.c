/* plan_report.c -- failover cooldowns from the state store as a
 * gb_unavailable_fn. */
#include "plan_report.h"

#include <stdio.h>

#include "store.h"

/* Failover cooldowns recorded in the state store (shared by every pool
 * and process) also apply to plans, so `plan --explain` says why a zone
 * is being skipped right now. */
int gb_plan_store_unavailable(void *ud, const gb_coffer *o, char *why, size_t cap)
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
