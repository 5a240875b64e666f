/* plan_report.h -- the state store's failover cooldowns for plans. */
#ifndef GB_PLAN_REPORT_H
#define GB_PLAN_REPORT_H

#include <jansson.h>

#include "plan.h"
#include "spec.h"

/* gb_unavailable_fn over the state store's failover cooldowns (ud: a
 * gb_store *), so plans skip what the engine would skip right now. */
int gb_plan_store_unavailable(void *ud, const gb_coffer *o, char *why,
                              size_t cap);

#endif
