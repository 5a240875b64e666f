/* engine_admission.c -- the admission decision (admission.h) over the
 * stored pools: which pools waiting for a shared resource may converge,
 * the queue for `gpubroker queue` / GET /v1/queue, and the preemption
 * events (issue 35).
 *
 * The shared resources it knows today: the on-prem sites, one node per
 * instance, their capacity the inventory's nodes there (from the node
 * driver's `nodes` answer).  A pool contends for a site when it can run
 * nowhere else: placement.clouds is [onprem] and placement.regions names
 * that site exactly, or the inventory has one site.  Each such pool is
 * one gang demand (the engine converges a pool whole): admitted, it
 * converges; not, it waits with its place in the queue as its note. */
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "engine_int.h"
#include "nodes.h"

typedef struct site {
	char *name;
	int nodes;
} site;

typedef struct cand {
	gb_pool_spec spec;
	gb_pool_row *row;
	size_t res;
	int held;
} cand;

/* The sites and their node counts from the node drivers; 0 when none. */
static size_t load_sites(gb_engine *e, site **out)
{
	json_t *doc = NULL, *n;
	char err[256];
	size_t i, ns = 0;
	*out = NULL;
	if (!e->o.drivers || !gb_nodes_driver(e->o.drivers) ||
	    gb_nodes_command(e->o.drivers, "nodes", 0, NULL, &doc, err,
	                     sizeof(err)) != 0)
		return 0;
	json_array_foreach(doc, i, n) {
		const char *s = json_string_value(json_object_get(n, "site"));
		size_t k;
		if (!s)
			continue;
		for (k = 0; k < ns; k++)
			if (strcmp((*out)[k].name, s) == 0)
				break;
		if (k == ns) {
			*out = gb_xrealloc(*out, (ns + 1) * sizeof(**out));
			(*out)[ns].name = gb_xstrdup(s);
			(*out)[ns].nodes = 0;
			ns++;
		}
		(*out)[k].nodes++;
	}
	json_decref(doc);
	return ns;
}

/* The site pool p waits for, or -1 when it is not bound to one. */
static long site_of(const gb_pool_spec *p, const site *s, size_t ns)
{
	if (p->clouds.n != 1 || strcmp(p->clouds.v[0], "onprem") != 0)
		return -1;
	if (p->regions.n == 0)
		return ns == 1 ? 0 : -1;
	if (p->regions.n != 1)
		return -1;
	for (size_t k = 0; k < ns; k++)
		if (strcmp(p->regions.v[0], s[k].name) == 0)
			return (long)k;
	return -1;
}

static int live_instances(gb_engine *e, const char *pool)
{
	gb_inst_row *rows;
	size_t n;
	int live = 0;
	if (gb_store_inst_list(e->o.store, pool, 1, &rows, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		live += strcmp(rows[i].state, "preempted") != 0 &&
		        strcmp(rows[i].state, "failed") != 0;
	gb_inst_list_free(rows, n);
	return live;
}

json_t *gb_engine_admission(gb_engine *e, int64_t now,
                            gb_engine_leaving_fn leaving, void *ud,
                            gb_strv *blocked)
{
	const gb_config *cfg = e->o.cfg;
	json_t *out = json_object(), *q = json_array(), *rs = json_array(),
	       *pre = json_array();
	site *sites;
	size_t ns = load_sites(e, &sites), np = 0, nc = 0;
	gb_pool_row *pools = NULL;
	cand *c = NULL;
	json_object_set_new(out, "queue", q);
	json_object_set_new(out, "resources", rs);
	json_object_set_new(out, "preemptions", pre);
	if (ns == 0 || gb_store_pool_list(e->o.store, NULL, 0, &pools, &np) != 0)
		goto done;
	c = gb_xcalloc(np + 1, sizeof(*c));
	for (size_t i = 0; i < np; i++) {
		gb_spec_set set;
		gb_diags dg = GB_DIAGS_INIT;
		gb_spec_opts so;
		long r;
		memset(&so, 0, sizeof(so));
		if (strcmp(pools[i].state, "active") != 0 || !pools[i].spec_json ||
		    gb_spec_load_json(pools[i].name, pools[i].spec_json,
		                      strlen(pools[i].spec_json), &so, &set,
		                      &dg) != 0) {
			gb_diags_free(&dg);
			continue;
		}
		gb_diags_free(&dg);
		if (set.n && (r = site_of(&set.pools[0], sites, ns)) >= 0) {
			gb_pool_spec_copy(&c[nc].spec, &set.pools[0]);
			c[nc].row = &pools[i];
			c[nc].res = (size_t)r;
			c[nc].held = live_instances(e, pools[i].name);
			nc++;
		}
		gb_spec_set_free(&set);
	}
	gb_adm_resource *res = gb_xcalloc(ns, sizeof(*res));
	char **rnames = gb_xcalloc(ns, sizeof(*rnames));
	for (size_t k = 0; k < ns; k++) {
		rnames[k] = gb_xasprintf("onprem:%s", sites[k].name);
		res[k].name = rnames[k];
		res[k].kind = GB_ADM_ONPREM;
		res[k].capacity = sites[k].nodes;
	}
	gb_adm_team *teams = gb_xcalloc(cfg->nteams + 1, sizeof(*teams));
	for (size_t t = 0; t < cfg->nteams; t++) {
		teams[t].name = cfg->teams[t].name;
		teams[t].share = cfg->teams[t].share;
	}
	gb_adm_demand *dem = gb_xcalloc(nc + 1, sizeof(*dem));
	int *per = gb_xcalloc((nc + 1) * ns, sizeof(*per));
	for (size_t i = 0; i < nc; i++) {
		const gb_pool_spec *sp = &c[i].spec;
		const gb_priority_cfg *pc = sp->priority
		        ? gb_config_priority(cfg, sp->priority)
		        : gb_config_priority_default(cfg,
		                  gb_purpose_name(sp->purpose));
		per[i * ns + c[i].res] = 1;
		dem[i].pool = c[i].row->name;
		dem[i].team = c[i].row->team;
		dem[i].priority = pc ? pc->value : 0;
		dem[i].count = c[i].row->desired;
		dem[i].held = c[i].held < c[i].row->desired ? c[i].held
		                                            : c[i].row->desired;
		dem[i].leaving = leaving ? leaving(ud, c[i].row->name) : 0;
		if (dem[i].leaving > dem[i].held)
			dem[i].leaving = dem[i].held;
		/* a fixed-size preemptible pool may be taken whole (it
		 * waits again); an elastic one keeps its min */
		dem[i].min = sp->preemptible && sp->min >= sp->max ? 0 : sp->min;
		dem[i].per = &per[i * ns];
		dem[i].gang = 1;
		dem[i].preemptible = sp->preemptible;
		dem[i].arrival = c[i].row->updated_at;
	}
	gb_adm_input in = {res, ns, dem, nc, teams, cfg->nteams, now};
	gb_adm_result r;
	gb_admission_decide(&in, &r);
	for (size_t k = 0; k < ns; k++)
		json_array_append_new(rs, json_pack("{s:s,s:s,s:i,s:i}", "name",
		        rnames[k], "kind", "onprem", "capacity", res[k].capacity,
		        "used", r.used[k]));
	for (size_t k = 0; k < r.nqueue; k++) {
		const gb_adm_wait *w = &r.queue[k];
		const gb_adm_demand *d = &dem[w->demand];
		json_t *ahead = json_array();
		for (size_t j = 0; j < k; j++)
			json_array_append_new(ahead, json_string(
			        dem[r.queue[j].demand].pool));
		json_array_append_new(q, json_pack(
		        "{s:i,s:s,s:s,s:i,s:i,s:i,s:s?,s:b,s:s,s:o}",
		        "position", w->position, "pool", d->pool, "team",
		        d->team ? d->team : "", "priority", d->priority, "count",
		        d->count, "held", d->held, "waits_for",
		        w->waits_for >= 0 ? res[w->waits_for].name : NULL,
		        "preempting", w->preempting, "reason", w->reason, "ahead",
		        ahead));
		if (blocked)
			gb_strv_push(blocked, d->pool);
	}
	for (size_t k = 0; k < r.npreempt; k++) {
		const gb_adm_preemption *p = &r.preempt[k];
		const gb_pool_spec *vs = &c[p->victim].spec;
		json_array_append_new(pre, json_pack("{s:s,s:s,s:i,s:s,s:s,s:I}",
		        "victim", dem[p->victim].pool, "for",
		        dem[p->beneficiary].pool, "count", p->count, "why",
		        p->why == GB_ADM_PRIORITY ? "priority" : "reclaim",
		        "reason", p->reason, "grace_s", (json_int_t)(
		                vs->preempt_grace_s > 0 ? vs->preempt_grace_s
		                                        : GB_PREEMPT_GRACE_S)));
	}
	gb_admission_free(&r);
	for (size_t k = 0; k < ns; k++)
		free(rnames[k]);
	free(rnames);
	free(res);
	free(teams);
	free(dem);
	free(per);
done:
	for (size_t i = 0; i < nc; i++)
		gb_pool_spec_free(&c[i].spec);
	free(c);
	if (pools)
		gb_pool_list_free(pools, np);
	for (size_t k = 0; k < ns; k++)
		free(sites[k].name);
	free(sites);
	return out;
}

static int newest_first(const void *a, const void *b)
{
	const gb_inst_row *x = *(gb_inst_row *const *)a;
	const gb_inst_row *y = *(gb_inst_row *const *)b;
	return x->launched_ms < y->launched_ms ? 1 : x->launched_ms > y->launched_ms
	                                               ? -1 : 0;
}

int gb_engine_preempt(gb_engine *e, const char *pool, int k,
                      const char *reason, gb_engine_result *res)
{
	gb_inst_row *rows;
	gb_inst_row **pick;
	size_t n, np = 0;
	if (gb_engine__begin(e, pool, res) != 0)
		return -1;
	if (gb_store_inst_list(e->o.store, pool, 1, &rows, &n) != 0) {
		snprintf(res->message, sizeof(res->message), "pool %s: %s", pool,
		         gb_store_errmsg(e->o.store));
		gb_engine__unlock_pool(e, pool);
		return -1;
	}
	pick = gb_xcalloc(n + 1, sizeof(*pick));
	for (size_t i = 0; i < n; i++)
		if ((strcmp(rows[i].state, "running") == 0 ||
		     strcmp(rows[i].state, "pending") == 0) &&
		    !rows[i].terminate_requested_ms)
			pick[np++] = &rows[i];
	qsort(pick, np, sizeof(*pick), newest_first);
	if ((size_t)k < np)
		np = (size_t)k;
	if (np) {
		gb_engine__event(e, pool, NULL, "preempted", "%zu instance(s) "
		                 "ended after the grace: %s", np, reason);
		gb_engine__terminate_rows(e, pick, np, "preempted");
	}
	free(pick);
	gb_inst_list_free(rows, n);
	gb_engine__unlock_pool(e, pool);
	return 0;
}
