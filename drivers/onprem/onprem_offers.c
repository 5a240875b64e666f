/* onprem_offers.c -- what the on-prem driver sells: node views (health,
 * GPUs, shape, leases), the offers made of them (one per site, shape and
 * capacity with at least one free usable node, plus one per MIG profile),
 * and the JSON of the "nodes" and "sites" commands.  Each offer says how
 * many can be had now (gb_offer.available: free nodes, or free slices).  README.md documents
 * every figure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drvc_enc.h"
#include "drvc_mem.h"
#include "onprem.h"

#define MIG_SLICES 7

/* ---------------------------------------------------------------- views */

int onprem_views(const onprem_ctx *c, onprem_view **out, size_t *n,
                 onprem_leases *all, gb_error *err)
{
	const onprem_inventory *inv = &c->inv;
	onprem_view *v;
	*out = NULL;
	*n = 0;
	if (onprem_leases_list(c, NULL, all, err) != 0)
		return -1;
	v = drvc_xcalloc(inv->nnodes ? inv->nnodes : 1, sizeof(*v));
	for (size_t i = 0; i < inv->nnodes; i++) {
		onprem_view *w = &v[i];
		w->n = &inv->nodes[i];
		w->site = &inv->sites[w->n->site];
		onprem_health_get(c, w->n, &w->h);
		w->usable = onprem_node_usable(c, w->n, &w->h, w->why,
		                               sizeof(w->why));
		w->gpus_known = onprem_node_gpus(w->n, &w->h, &w->model,
		                                 &w->count, &w->mem) == 0;
		onprem_node_shape(w->n, &w->h, w->shape, sizeof(w->shape));
		for (size_t k = 0; k < all->n; k++) {
			if (strcmp(all->v[k].node, w->n->name) != 0)
				continue;
			w->leases.v = drvc_xrealloc(w->leases.v,
			                            (w->leases.n + 1) *
			                                    sizeof(onprem_lease));
			w->leases.v[w->leases.n++] = all->v[k];
			if (!all->v[k].mig)
				w->whole = 1;
		}
	}
	*out = v;
	*n = inv->nnodes;
	return 0;
}

void onprem_views_free(onprem_view *v, size_t n, onprem_leases *all)
{
	for (size_t i = 0; v && i < n; i++) {
		onprem_health_free(&v[i].h);
		free(v[i].leases.v);
	}
	free(v);
	onprem_leases_free(all);
}

const char *onprem_mig_type(const char *instance_type, char *shape,
                            size_t cap)
{
	const char *m = NULL, *p = instance_type;
	size_t len;
	while (p && (p = strstr(p, "-mig-"))) /* the last one */
		m = p++;
	if (!m || !onprem_mig_syntax(m + 5))
		return NULL;
	len = (size_t)(m - instance_type);
	if (len == 0 || len >= cap)
		return NULL;
	memcpy(shape, instance_type, len);
	shape[len] = '\0';
	return m + 5;
}

/* ---------------------------------------------------------------- offers */

typedef struct figs {
	double fp32, fp16, bf16, d2d, h2d, d2h;
} figs;

typedef struct group {
	size_t site;
	char shape[96];
	gb_capacity capacity;
	const onprem_mig_profile *mig;  /* NULL: whole nodes */
	const onprem_gpu_model *model;
	int count, mem, vcpus;
	double ram_gb, price_per_gpu_hour;
	int nodes_free, slices_free, measured;
	int64_t max_age;
	figs f;
	onprem_strv tags;
} group;

static void fmin_into(double *acc, double v)
{
	if (v < 0)
		return;
	if (*acc < 0 || v < *acc)
		*acc = v;
}

static group *find_group(group **gs, size_t *ng, const onprem_view *w,
                         const onprem_mig_profile *p)
{
	group *g;
	for (size_t i = 0; i < *ng; i++) {
		g = &(*gs)[i];
		if (g->site == w->n->site && !strcmp(g->shape, w->shape) &&
		    g->capacity == w->n->capacity && g->mig == p) {
			/* nodes of one shape must sell the same GPUs (the
			 * inventory checks declared ones; discovered ones
			 * may still differ) */
			if (g->model != w->model || g->count != w->count)
				return NULL;
			return g;
		}
	}
	*gs = drvc_xrealloc(*gs, (*ng + 1) * sizeof(group));
	g = &(*gs)[(*ng)++];
	memset(g, 0, sizeof(*g));
	g->site = w->n->site;
	snprintf(g->shape, sizeof(g->shape), "%s", w->shape);
	g->capacity = w->n->capacity;
	g->mig = p;
	g->model = w->model;
	g->count = w->count;
	g->mem = p ? p->memory_gb : w->mem;
	g->vcpus = w->n->vcpus;
	g->ram_gb = w->n->ram_gb;
	g->price_per_gpu_hour = w->n->price_per_gpu_hour;
	g->f.fp32 = g->f.fp16 = g->f.bf16 = -1;
	g->f.d2d = g->f.h2d = g->f.d2h = -1;
	return g;
}

static void add_node(const onprem_ctx *c, group *g, const onprem_view *w)
{
	g->nodes_free++;
	for (size_t t = 0; t < w->n->tags.n; t++)
		if (!onprem_strv_has(&g->tags, w->n->tags.v[t]))
			onprem_strv_push(&g->tags, w->n->tags.v[t]);
	if (w->h.state != ONPREM_H_HEALTHY)
		return;
	g->measured++;
	if (w->h.age_s > g->max_age)
		g->max_age = w->h.age_s;
	fmin_into(&g->f.fp32, w->h.fp32_tflops);
	fmin_into(&g->f.fp16, w->h.fp16_tflops);
	fmin_into(&g->f.bf16, w->h.bf16_tflops);
	fmin_into(&g->f.d2d, w->h.d2d_gbps);
	fmin_into(&g->f.h2d, w->h.h2d_gbps);
	fmin_into(&g->f.d2h, w->h.d2h_gbps);
	(void)c;
}

static void set_fig(json_t *o, const char *key, double v, double scale)
{
	if (v >= 0)
		json_object_set_new(o, key, json_real(round(v * scale * 100) / 100));
}

static char *bench_json(const group *g)
{
	json_t *o = json_object();
	double frac = g->mig ? (double)g->mig->slices / MIG_SLICES : 1.0;
	char *s;
	json_object_set_new(o, "source", json_string("gpuprobe"));
	json_object_set_new(o, "per", json_string("gpu"));
	json_object_set_new(o, "nodes_free", json_integer(g->nodes_free));
	json_object_set_new(o, "nodes_measured", json_integer(g->measured));
	if (g->measured)
		json_object_set_new(o, "probe_age_s", json_integer(g->max_age));
	set_fig(o, "fp32_tflops", g->f.fp32, frac);
	set_fig(o, "fp16_tflops", g->f.fp16, frac);
	set_fig(o, "bf16_tflops", g->f.bf16, frac);
	set_fig(o, "d2d_gbps", g->f.d2d, frac);
	set_fig(o, "h2d_gbps", g->f.h2d, 1.0);
	set_fig(o, "d2h_gbps", g->f.d2h, 1.0);
	if (g->mig) {
		json_object_set_new(o, "mig_profile", json_string(g->mig->name));
		json_object_set_new(o, "slice_fraction",
		                    json_real(round(frac * 10000) / 10000));
		json_object_set_new(o, "slices_free", json_integer(g->slices_free));
	}
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

int onprem_list_offers(void *ctx, gb_offer_cb emit, void *ud, gb_error *err)
{
	onprem_ctx *c = ctx;
	onprem_view *v;
	size_t nv, ng = 0;
	onprem_leases all;
	group *gs = NULL;
	char *source;
	int stop = 0;
	if (!c->have_inventory)
		return 0;
	if (onprem_views(c, &v, &nv, &all, err) != 0)
		return -1;
	for (size_t i = 0; i < nv; i++) {
		onprem_view *w = &v[i];
		group *g;
		if (!w->usable || !w->gpus_known || w->whole)
			continue;
		if (!w->leases.n) {
			if ((g = find_group(&gs, &ng, w, NULL)))
				add_node(c, g, w);
			else
				onprem_log(c, GB_LOG_WARN, "node %s: its GPUs differ "
				           "from other nodes of shape %s; not "
				           "offered (give it its own shape)",
				           w->n->name, w->shape);
		}
		if (!w->n->mig_enabled || !w->model->mig)
			continue;
		for (size_t k = 0; k < w->n->mig_profiles.n; k++) {
			const onprem_mig_profile *p =
				onprem_mig_find(w->model, w->n->mig_profiles.v[k]);
			int room;
			if (!p)
				continue;
			room = onprem_mig_room(&w->leases, p, w->count);
			if (room <= 0 || !(g = find_group(&gs, &ng, w, p)))
				continue;
			add_node(c, g, w);
			g->slices_free += room;
		}
	}
	source = drvc_xasprintf("inventory %s", c->inv.path);
	for (size_t i = 0; i < ng && !stop; i++) {
		group *g = &gs[i];
		gb_offer o;
		char itype[200], *bench = bench_json(g), *tags;
		drvc_buf tb = DRVC_BUF_INIT;
		for (size_t t = 0; t < g->tags.n; t++)
			drvc_buf_addf(&tb, "%s%s", t ? "," : "", g->tags.v[t]);
		if (g->mig)
			drvc_buf_addf(&tb, "%smig", g->tags.n ? "," : "");
		tags = drvc_buf_take(&tb);
		memset(&o, 0, sizeof(o));
		o.region = c->inv.sites[g->site].name;
		o.zone = "";
		if (g->mig)
			snprintf(itype, sizeof(itype), "%s-mig-%s", g->shape,
			         g->mig->name);
		else
			snprintf(itype, sizeof(itype), "%s", g->shape);
		o.instance_type = itype;
		o.gpu_model = g->model->name;
		o.gpu_count = g->mig ? 1 : g->count;
		o.gpu_memory_gb = g->mem;
		o.vcpus = g->mig ? 0 : g->vcpus;
		o.ram_gb = g->mig ? 0 : g->ram_gb;
		o.capacity = g->capacity;
		o.price_per_hour =
			g->mig ? g->price_per_gpu_hour * g->mig->slices / MIG_SLICES
			       : g->price_per_gpu_hour * g->count;
		o.source = source;
		o.fetched_at = c->inv.mtime;
		o.bench_json = bench;
		o.tags = *tags ? tags : NULL;
		/* what a create can have now: free usable nodes of the
		 * shape, or slices of the profile that still fit */
		o.available = g->mig ? g->slices_free : g->nodes_free;
		stop = emit(ud, &o) != 0;
		free(bench);
		free(tags);
	}
	for (size_t i = 0; i < ng; i++)
		onprem_strv_free(&gs[i].tags);
	free(gs);
	free(source);
	onprem_views_free(v, nv, &all);
	return 0;
}

/* ---------------------------------------------------------------- JSON */

static json_t *strv_json(const onprem_strv *s)
{
	json_t *a = json_array();
	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(a, json_string(s->v[i]));
	return a;
}

/* unix_s as gpubroker hands out every time in JSON: RFC 3339 UTC with
 * milliseconds ("2026-11-27T08:05:10.000Z"); 0 (never) as null. */
static json_t *time_json(int64_t unix_s)
{
	char buf[40];
	time_t t = (time_t)unix_s;
	struct tm tm;
	if (!unix_s)
		return json_null();
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S.000Z", &tm);
	return json_string(buf);
}

static json_t *fig(double v)
{
	return v >= 0 ? json_real(v) : json_null();
}

static const char *cap_name(gb_capacity k)
{
	return k == GB_CAPACITY_RESERVED ? "reserved" : k == GB_CAPACITY_SPOT
	                                                        ? "spot"
	                                                        : "on-demand";
}

json_t *onprem_view_json(const onprem_ctx *c, const onprem_view *w)
{
	json_t *o = json_object(), *slices = json_array();
	const onprem_node *n = w->n;
	const char *status;
	char idbuf[160];
	json_object_set_new(o, "name", json_string(n->name));
	json_object_set_new(o, "site", json_string(w->site->name));
	json_object_set_new(o, "shape", *w->shape ? json_string(w->shape)
	                                          : json_null());
	json_object_set_new(o, "transport", json_string(n->transport == ONPREM_SSH
	                                                        ? "ssh"
	                                                        : "local"));
	json_object_set_new(o, "address", json_string(n->address));
	json_object_set_new(o, "capacity", json_string(cap_name(n->capacity)));
	json_object_set_new(o, "gpu_model", w->gpus_known
	                                            ? json_string(w->model->name)
	                                            : json_null());
	json_object_set_new(o, "gpus", w->gpus_known ? json_integer(w->count)
	                                             : json_null());
	json_object_set_new(o, "gpu_memory_gb", w->gpus_known
	                                                ? json_integer(w->mem)
	                                                : json_null());
	json_object_set_new(o, "gpus_from", json_string(
		n->has_gpus ? "inventory" : w->gpus_known ? "probe" : "unknown"));
	json_object_set_new(o, "price_per_gpu_hour",
	                    json_real(n->price_per_gpu_hour));
	json_object_set_new(o, "tags", strv_json(&n->tags));
	if (n->mig_enabled) {
		json_t *m = json_object();
		json_object_set_new(m, "enabled", json_true());
		json_object_set_new(m, "profiles", strv_json(&n->mig_profiles));
		json_object_set_new(m, "slices", slices);
		json_object_set_new(o, "mig", m);
	} else {
		json_object_set_new(o, "mig", json_null());
	}
	json_object_set_new(o, "lease", json_null());
	for (size_t i = 0; i < w->leases.n; i++) {
		const onprem_lease *l = &w->leases.v[i];
		json_t *lj = json_object();
		json_object_set_new(lj, "id", json_string(onprem_lease_id(
			l, idbuf, sizeof(idbuf))));
		json_object_set_new(lj, "pool", l->pool ? json_string(l->pool)
		                                        : json_null());
		json_object_set_new(lj, "name", l->name ? json_string(l->name)
		                                        : json_null());
		json_object_set_new(lj, "since", time_json(l->leased_at));
		json_object_set_new(lj, "state", json_string(l->state));
		if (l->mig) {
			json_object_set_new(lj, "profile", l->profile
			                    ? json_string(l->profile) : json_null());
			json_object_set_new(lj, "gpu", json_integer(l->gpu));
			if (n->mig_enabled)
				json_array_append_new(slices, lj);
			else
				json_decref(lj);
		} else {
			json_object_set_new(o, "lease", lj);
		}
	}
	if (!n->mig_enabled)
		json_decref(slices);
	if (w->h.state == ONPREM_H_UNPROBED && !w->h.probed_at) {
		json_object_set_new(o, "health", json_null());
		json_object_set_new(o, "figures", json_null());
	} else {
		json_t *h = json_object(), *f = json_object();
		json_object_set_new(h, "state",
		                    json_string(onprem_hstate_name(w->h.state)));
		json_object_set_new(h, "healthy",
		                    json_boolean(w->h.state == ONPREM_H_HEALTHY));
		json_object_set_new(h, "reachable",
		                    json_boolean(w->h.state != ONPREM_H_UNREACHABLE));
		json_object_set_new(h, "failures", strv_json(&w->h.failures));
		json_object_set_new(h, "probed_at", time_json(w->h.probed_at));
		json_object_set_new(h, "age_s", w->h.probed_at
		                                        ? json_integer(w->h.age_s)
		                                        : json_null());
		json_object_set_new(h, "marked_at", time_json(w->h.marked_at));
		json_object_set_new(h, "stale", json_boolean(w->h.stale));
		json_object_set_new(o, "health", h);
		json_object_set_new(f, "d2d_gbps", fig(w->h.d2d_gbps));
		json_object_set_new(f, "h2d_gbps", fig(w->h.h2d_gbps));
		json_object_set_new(f, "d2h_gbps", fig(w->h.d2h_gbps));
		json_object_set_new(f, "fp32_tflops", fig(w->h.fp32_tflops));
		json_object_set_new(f, "fp16_tflops", fig(w->h.fp16_tflops));
		json_object_set_new(f, "bf16_tflops", fig(w->h.bf16_tflops));
		json_object_set_new(o, "figures", f);
	}
	if (w->h.state == ONPREM_H_UNREACHABLE)
		status = "unreachable";
	else if (w->h.state == ONPREM_H_UNHEALTHY)
		status = "unhealthy";
	else if (w->whole)
		status = "leased";
	else if (w->leases.n)
		status = "partly-leased";
	else if (!w->usable && w->h.state == ONPREM_H_HEALTHY && w->h.stale)
		status = "stale";
	else if (!w->usable && w->h.state == ONPREM_H_HEALTHY)
		status = "unknown-gpus";
	else if (!w->usable)
		status = "unprobed";
	else
		status = "free";
	json_object_set_new(o, "status", json_string(status));
	json_object_set_new(o, "offered",
	                    json_boolean(w->usable && w->gpus_known && !w->whole));
	json_object_set_new(o, "reason", w->usable ? json_null()
	                                           : json_string(w->why));
	(void)c;
	return o;
}

json_t *onprem_nodes_json(const onprem_ctx *c, gb_error *err)
{
	onprem_view *v;
	size_t nv;
	onprem_leases all;
	json_t *a;
	if (onprem_views(c, &v, &nv, &all, err) != 0)
		return NULL;
	a = json_array();
	for (size_t i = 0; i < nv; i++)
		json_array_append_new(a, onprem_view_json(c, &v[i]));
	onprem_views_free(v, nv, &all);
	return a;
}

json_t *onprem_sites_json(const onprem_ctx *c)
{
	json_t *a = json_array();
	for (size_t i = 0; c->have_inventory && i < c->inv.nsites; i++) {
		const onprem_site *s = &c->inv.sites[i];
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(s->name));
		json_object_set_new(o, "display", json_string(s->display));
		json_object_set_new(o, "country", json_string(s->country));
		json_object_set_new(o, "jurisdiction",
		                    json_string(s->jurisdiction));
		json_object_set_new(o, "lat", json_real(s->lat));
		json_object_set_new(o, "lon", json_real(s->lon));
		json_object_set_new(o, "tags", strv_json(&s->tags));
		json_object_set_new(o, "carbon_g_per_kwh",
		                    s->carbon >= 0 ? json_real(s->carbon)
		                                   : json_null());
		json_array_append_new(a, o);
	}
	return a;
}
