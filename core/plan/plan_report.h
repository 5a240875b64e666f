/*
 * plan_report.h -- a plan as handed out by `plan -o json` and POST
 * /v1/plan, and printed by `plan` (local or --server alike).
 */
#ifndef GB_PLAN_REPORT_H
#define GB_PLAN_REPORT_H

#include <jansson.h>

#include "plan.h"
#include "spec.h"

/* gb_plan_to_json plus, with explain, a "kind" per refusal, and when no
 * offer qualifies a "no_candidate" message (commonest refusals first).
 * New reference. */
json_t *gb_plan_report(const gb_plan *p, size_t limit, int explain);

/* The table, the choice and (explain) the refusals, to stdout, from a
 * gb_plan_report object.  s is the pool's spec (for the header line);
 * all: list every refusal of the GPU/cloud/capacity kinds too. */
void gb_plan_print(const gb_pool_spec *s, const json_t *plan, int explain,
                   int all);

#endif
