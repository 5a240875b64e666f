/*
 * plan_json.h -- a plan as handed out by `plan -o json` and POST
 * /v1/plan (the CLI prints its text from this JSON: plan_output.h).
 */
#ifndef GB_PLAN_JSON_H
#define GB_PLAN_JSON_H

#include <jansson.h>

#include "plan.h"

/* gb_plan_to_json plus, with explain, a "kind" per refusal, and when no
 * offer qualifies a "no_candidate" message (commonest refusals first).
 * New reference. */
json_t *gb_plan_report(const gb_plan *p, size_t limit, int explain);
/* The same, with explain listing only the first per_rule offers each
 * rule refused (0: every one), and then "refusals_per_rule": per_rule
 * (POST /v1/plan's refusals=N).  New reference. */
json_t *gb_plan_report_n(const gb_plan *p, size_t limit, int explain,
                         size_t per_rule);

#endif
