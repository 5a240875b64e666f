/* plan_output.h -- printing a plan (the JSON of plan_json.h). */
#ifndef GB_PLAN_OUTPUT_H
#define GB_PLAN_OUTPUT_H

#include <jansson.h>

#include "spec.h"

/* The table, the choice and (explain) the refusals, to stdout, from a
 * gb_plan_report object.  s is the pool's spec (for the header line);
 * all: list every refusal of the GPU/cloud/capacity kinds too. */
void gb_plan_print(const gb_pool_spec *s, const json_t *plan, int explain,
                   int all);

#endif
