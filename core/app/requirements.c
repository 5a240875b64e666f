/* requirements.c -- what a pool's candidate clouds need that its spec
 * lacks (the drivers' "requirements" verb, driver.h), said before
 * anything is created: `validate` and `plan` (local and POST /v1/plan)
 * warn, since a create there would be refused (engine_refused.c). */
#include "runtime.h"

#include <string.h>

/* Candidates of cloud: in the plan, or (no plan) the catalog's offers of
 * the spec's GPU models on the spec's clouds. */
static size_t candidates(const gb_catalog *cat, const gb_pool_spec *s,
                         const gb_plan *p, const char *cloud)
{
	size_t n = 0;
	if (p) {
		for (size_t i = 0; i < p->ncands; i++)
			n += strcmp(p->cands[i].offer->cloud, cloud) == 0;
		return n;
	}
	if (s->clouds.n && !gb_strv_contains(&s->clouds, cloud))
		return 0;
	for (size_t i = 0; cat && i < gb_catalog_count(cat); i++) {
		const gb_coffer *o = gb_catalog_at(cat, i);
		n += strcmp(o->cloud, cloud) == 0 &&
		     gb_strv_contains(&s->gpu_models, o->gpu_model);
	}
	return n;
}

json_t *gb_spec_warnings(const gb_drivers *ds, const gb_catalog *cat,
                         const gb_pool_spec *s, const gb_plan *p)
{
	json_t *out = json_array();
	/* a cloud the pool names whose driver failed: nothing goes there,
	 * and that must not pass for a plan that simply prefers others */
	for (size_t i = 0; ds && i < s->clouds.n; i++) {
		const gb_drv *d = gb_drivers_find(ds, s->clouds.v[i]);
		if (d && !d->ready)
			json_array_append_new(out, json_sprintf(
				"pool %s names cloud %s, whose driver is not "
				"ready (%s): nothing is placed there until it "
				"is fixed (see 'gpubroker drivers')", s->name,
				d->name, d->status));
	}
	for (size_t i = 0; ds && i < ds->n; i++) {
		const gb_drv *d = ds->v[i];
		size_t n;
		if (!d->ready || !d->ssh_key_why[0] || s->ssh_keys.n)
			continue;
		n = candidates(cat, s, p, d->name);
		if (!n)
			continue;
		json_array_append_new(out, json_sprintf(
			"pool %s has no ssh_keys, and every create on %s needs "
			"one (%s): its %zu %s%s would be refused, and the pool "
			"placed on other clouds if it can; add ssh_keys (a "
			"public key) to the spec", s->name, d->name,
			d->ssh_key_why, n, p ? "candidate" : "offer",
			n == 1 ? "" : "s"));
	}
	return out;
}
