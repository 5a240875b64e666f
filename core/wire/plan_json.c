/* plan_json.c -- a plan as the CLI and the daemon hand it out (JSON). */
#include "plan_json.h"

#include <stdlib.h>

json_t *gb_plan_report(const gb_plan *p, size_t limit, int explain)
{
	return gb_plan_report_n(p, limit, explain, 0);
}

json_t *gb_plan_report_n(const gb_plan *p, size_t limit, int explain,
                         size_t per_rule)
{
	json_t *j = gb_plan_to_json(p, limit, explain && !per_rule);
	json_t *refs;
	size_t seen[GB_REFUSE__COUNT] = {0}, k = 0;
	if (explain && per_rule) {
		/* the first per_rule offers each rule refused, and the
		 * policy log, as gb_plan_to_json's explain has them */
		json_t *logs = json_array();
		json_object_set_new(j, "refusals",
		                    gb_plan_refusals_json(p, per_rule));
		json_object_set_new(j, "refusals_per_rule",
		                    json_integer((json_int_t)per_rule));
		for (size_t i = 0; i < p->logs.n; i++)
			json_array_append_new(logs, json_string(p->logs.v[i]));
		json_object_set_new(j, "policy_log", logs);
	}
	/* the refusals are listed in p->refusals order, the first per_rule
	 * of each kind when per_rule is set (gb_plan_refusals_json) */
	refs = json_object_get(j, "refusals");
	for (size_t i = 0; refs && i < p->nrefusals; i++) {
		const gb_refusal *r = &p->refusals[i];
		if (per_rule && seen[r->kind]++ >= per_rule)
			continue;
		json_object_set_new(json_array_get(refs, k++), "kind",
		                    json_string(gb_refusal_kind_name(
		                            (gb_refusal_kind)r->kind)));
	}
	if (!p->ncands) {
		char *m = gb_plan_no_candidate_msg(p);
		json_object_set_new(j, "no_candidate", json_string(m));
		free(m);
	}
	return j;
}
