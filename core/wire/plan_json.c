/* plan_json.c -- a plan as the CLI and the daemon hand it out (JSON). */
#include "plan_json.h"

#include <stdlib.h>

json_t *gb_plan_report(const gb_plan *p, size_t limit, int explain)
{
	json_t *j = gb_plan_to_json(p, limit, explain);
	json_t *refs = json_object_get(j, "refusals");
	/* gb_plan_to_json lists the refusals in p->refusals order. */
	if (json_array_size(refs) == p->nrefusals)
		for (size_t i = 0; i < p->nrefusals; i++)
			json_object_set_new(json_array_get(refs, i), "kind",
			                    json_string(gb_refusal_kind_name(
			                            (gb_refusal_kind)p->refusals[i].kind)));
	if (!p->ncands) {
		char *m = gb_plan_no_candidate_msg(p);
		json_object_set_new(j, "no_candidate", json_string(m));
		free(m);
	}
	return j;
}
