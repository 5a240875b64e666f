/* runtime.c -- config + drivers + catalog for commands. */
#include "runtime.h"

#include <string.h>
#include <unistd.h>

#include "log.h"
#include "region_glob.h"
#include "store.h"

/* Offers refreshed by `offers refresh` live in the state store and replace
 * the shipped catalog's entry with the same key. */
static void load_offers(const gb_config *cfg, gb_store *st, gb_runtime *rt)
{
	gb_store *own = NULL;
	gb_offer_row *v = NULL;
	size_t n = 0;
	char err[512];
	gb_catalog *shipped = gb_catalog_new();
	gb_drivers_offers(&rt->drivers, shipped, &rt->problems);
	if (!st && cfg && cfg->state_path &&
	    (gb_store_is_url(cfg->state_path) ||
	     access(cfg->state_path, R_OK) == 0) &&
	    gb_store_open_cfg(cfg, &own, err, sizeof(err)) == 0)
		st = own;
	if (st && gb_store_offers_list(st, &v, &n) != 0)
		n = 0;
	if (own)
		gb_store_close(own);
	for (size_t i = 0; i < n; i++) {
		gb_offer o;
		gb_capacity cap;
		if (!gb_drivers_find(&rt->drivers, v[i].cloud) ||
		    gb_capacity_parse(v[i].capacity, &cap) != 0)
			continue;
		memset(&o, 0, sizeof(o));
		o.region = v[i].region;
		o.zone = v[i].zone;
		o.instance_type = v[i].instance_type;
		o.gpu_model = v[i].gpu_model;
		o.gpu_count = v[i].gpu_count;
		o.gpu_memory_gb = v[i].gpu_memory_gb;
		o.vcpus = v[i].vcpus;
		o.ram_gb = v[i].ram_gb;
		o.capacity = cap;
		o.price_per_hour = v[i].price;
		o.source = v[i].source;
		o.fetched_at = v[i].fetched_at;
		/* a stored price says nothing of what is free: available 0 */
		gb_catalog_add(rt->cat, v[i].cloud, &o);
	}
	for (size_t i = 0; i < gb_catalog_count(shipped); i++) {
		const gb_coffer *c = gb_catalog_at(shipped, i);
		int dup = 0;
		gb_offer o;
		for (size_t k = 0; k < n && !dup; k++)
			dup = strcmp(v[k].cloud, c->cloud) == 0 &&
			      strcmp(v[k].region, c->region) == 0 &&
			      strcmp(v[k].zone, c->zone) == 0 &&
			      strcmp(v[k].instance_type, c->instance_type) == 0 &&
			      strcmp(v[k].capacity, gb_capacity_name(c->capacity)) == 0;
		if (dup)
			continue;
		memset(&o, 0, sizeof(o));
		o.region = c->region;
		o.zone = c->zone;
		o.instance_type = c->instance_type;
		o.gpu_model = c->gpu_model;
		o.gpu_count = c->gpu_count;
		o.gpu_memory_gb = c->gpu_memory_gb;
		o.vcpus = c->vcpus;
		o.ram_gb = c->ram_gb;
		o.capacity = c->capacity;
		o.price_per_hour = c->price;
		o.source = c->source;
		o.fetched_at = c->fetched_at;
		o.bench_json = c->bench_json;
		o.tags = c->tags;
		o.available = c->available;
		gb_catalog_add(rt->cat, c->cloud, &o);
	}
	gb_offer_list_free(v, n);
	gb_catalog_free(shipped);
	/* a node driver's offers are machines you own: already paid for,
	 * so the planner ranks them first (core/plan/plan.c) */
	for (size_t i = 0; i < rt->drivers.n; i++)
		if (rt->drivers.v[i]->d &&
		    (rt->drivers.v[i]->d->caps & GB_DRV_CAP_PROBE))
			gb_catalog_mark_owned(rt->cat, rt->drivers.v[i]->name);
}

static void sites_out(void *ud, const char *json)
{
	json_t **out = ud;
	json_decref(*out);
	*out = json_loads(json, 0, NULL);
}

/* Drivers that know their places -- on-prem sites, or a cloud outside
 * the built-in region table -- describe them through the optional
 * command("sites") (driver.h); they become regions (cloud = the driver's
 * name) so policies and placement rules see their country,
 * jurisdiction, location, tags and carbon figure. */
static void register_sites(gb_runtime *rt)
{
	for (size_t i = 0; i < rt->drivers.n; i++) {
		gb_drv *d = rt->drivers.v[i];
		json_t *sites = NULL, *s;
		gb_error e;
		size_t k;
		if (!d->ready || !GB_DRV_HAS(d, command))
			continue;
		memset(&e, 0, sizeof(e));
		if (d->d->command(d->ctx, "sites", 0, NULL, sites_out, &sites, &e) != 0) {
			json_decref(sites);
			continue; /* drivers without sites refuse the verb */
		}
		json_array_foreach(sites, k, s) {
			gb_region_info ri;
			gb_buf tags = GB_BUF_INIT;
			char *src;
			size_t t;
			json_t *tag;
			memset(&ri, 0, sizeof(ri));
			ri.cloud = d->name;
			ri.name = json_string_value(json_object_get(s, "name"));
			if (!ri.name)
				continue;
			ri.display = json_string_value(json_object_get(s, "display"));
			ri.country = json_string_value(json_object_get(s, "country"));
			ri.jurisdiction =
				json_string_value(json_object_get(s, "jurisdiction"));
			ri.lat = json_number_value(json_object_get(s, "lat"));
			ri.lon = json_number_value(json_object_get(s, "lon"));
			ri.carbon_g_per_kwh =
				json_number_value(json_object_get(s, "carbon_g_per_kwh"));
			json_array_foreach(json_object_get(s, "tags"), t, tag) {
				/* the region tags' names (an older name such as
				 * hipaa-eligible counts as its tag: hipaa) */
				const char *name = gb_region_tag_canonical(
					json_string_value(tag));
				if (!name || (tags.len && gb_region_has_tag(
					&(gb_region_info){.tags = gb_buf_str(&tags)},
					name)))
					continue;
				if (tags.len)
					gb_buf_putc(&tags, ',');
				gb_buf_puts(&tags, name);
			}
			ri.tags = gb_buf_str(&tags);
			ri.carbon_source = json_string_value(
				json_object_get(s, "carbon_source"));
			src = ri.carbon_source ? NULL
			      : gb_xasprintf("driver %s (sites)", d->name);
			if (src)
				ri.carbon_source = src;
			gb_region_register(&ri);
			free(src);
			gb_buf_free(&tags);
		}
		json_decref(sites);
	}
}

void gb_runtime_open(const gb_config *cfg, gb_store *st, gb_runtime *rt,
                     int want_offers)
{
	memset(rt, 0, sizeof(*rt));
	gb_drivers_load(&rt->drivers, cfg);
	for (size_t i = 0; i < rt->drivers.n; i++) {
		gb_drv *d = rt->drivers.v[i];
		if (!d->ready)
			gb_strv_push_take(&rt->problems,
			                  gb_xasprintf("driver %s: %s", d->name,
			                               d->status));
	}
	register_sites(rt);
	rt->cat = gb_catalog_new();
	if (want_offers)
		load_offers(cfg, st, rt);
}

void gb_runtime_free(gb_runtime *rt)
{
	gb_catalog_free(rt->cat);
	gb_drivers_free(&rt->drivers);
	gb_strv_free(&rt->problems);
	memset(rt, 0, sizeof(*rt));
}

char *gb_runtime_region_problem(const gb_runtime *rt, const char *glob,
                                const char *cloud)
{
	const char *clouds[GB_MAX_CLOUDS];
	if (cloud) {
		clouds[0] = cloud;
		clouds[1] = NULL;
	} else {
		gb_drivers_names(&rt->drivers, clouds, GB_ARRAY_LEN(clouds));
	}
	return gb_region_glob_problem(glob, clouds, rt->cat);
}

typedef struct refresh_ctx {
	gb_offer_row *v;
	size_t n;
	const char *cloud;
} refresh_ctx;

static int refresh_cb(void *ud, const gb_offer *o)
{
	refresh_ctx *rc = ud;
	gb_offer_row *r;
	if (!o->instance_type || !o->gpu_model || !o->region ||
	    o->price_per_hour <= 0 || o->gpu_count <= 0)
		return 0;
	rc->v = gb_xrealloc(rc->v, (rc->n + 1) * sizeof(*rc->v));
	r = &rc->v[rc->n++];
	memset(r, 0, sizeof(*r));
	r->cloud = gb_xstrdup(rc->cloud);
	r->region = gb_xstrdup(o->region);
	r->zone = gb_xstrdup(o->zone ? o->zone : "");
	r->instance_type = gb_xstrdup(o->instance_type);
	r->capacity = gb_xstrdup(gb_capacity_name(o->capacity));
	r->gpu_model = gb_xstrdup(o->gpu_model);
	r->gpu_count = o->gpu_count;
	r->gpu_memory_gb = o->gpu_memory_gb;
	r->vcpus = o->vcpus;
	r->ram_gb = o->ram_gb;
	r->price = o->price_per_hour;
	r->source = gb_xstrdup(o->source ? o->source : "");
	r->fetched_at = o->fetched_at ? o->fetched_at : gb_now_ms() / 1000;
	return 0;
}

/* The source of the freshest offer: a driver may pass some prices
 * through from its shipped catalog (EC2 on-demand) next to live ones. */
static const char *newest_source(const refresh_ctx *rc)
{
	size_t best = 0;
	for (size_t i = 1; i < rc->n; i++)
		if (rc->v[i].fetched_at > rc->v[best].fetched_at)
			best = i;
	return rc->v[best].source;
}

/* A report row: {cloud, region, offers, source, result}. */
static json_t *refresh_row(const char *cloud, const char *region, size_t n,
                           const char *source, json_t *result)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:o}", "cloud", cloud, "region",
	                 region ? region : "all", "offers", (json_int_t)n,
	                 "source", source, "result", result);
}

/* One driver's refresh, all or nothing: its offers replace the stored
 * ones only when the source answered and priced something.  Appends the
 * report row; 1 stored (or nothing to store), 0 failed. */
static int refresh_driver(gb_drv *d, gb_store *st, const char *region,
                          json_t *report)
{
	refresh_ctx ctx = {NULL, 0, d->name};
	gb_error e;
	int ok = 1;
	memset(&e, 0, sizeof(e));
	if (d->d->refresh_prices(d->ctx, region, refresh_cb, &ctx, &e) != 0) {
		char *msg = gb_redact(e.message);
		const char *sep = e.code[0] ? ": " : "";
		json_array_append_new(report, refresh_row(
			d->name, region, 0, "",
			json_sprintf("failed: %s%s%s", e.code, sep, msg)));
		/* the whole reason, which a table cell may cut */
		gb_log(GB_LOG_WARN, "offers", "%s: price refresh failed, stored "
		       "prices kept: %s%s%s", d->name, e.code, sep, msg);
		free(msg);
		ok = 0;
	} else if (ctx.n == 0) {
		/* a source that prices nothing must not wipe what is stored */
		json_array_append_new(report, refresh_row(
			d->name, region, 0, "",
			json_string("no offers there (stored prices kept)")));
	} else if (gb_store_offers_replace(st, d->name, region, ctx.v,
	                                   ctx.n) != 0) {
		json_array_append_new(report, refresh_row(
			d->name, region, 0, "", json_string(gb_store_errmsg(st))));
		ok = 0;
	} else {
		json_array_append_new(report, refresh_row(
			d->name, region, ctx.n, newest_source(&ctx),
			json_string("stored")));
	}
	gb_offer_list_free(ctx.v, ctx.n);
	return ok;
}

int gb_offers_refresh(gb_drivers *ds, gb_store *st, const char *only,
                      const char *region, json_t *report, int *done)
{
	int failed = 0;
	*done = 0;
	for (size_t i = 0; i < ds->n; i++) {
		gb_drv *d = ds->v[i];
		if (only && strcmp(only, d->name) != 0)
			continue;
		if (d->ready && GB_DRV_HAS(d, refresh_prices)) {
			if (refresh_driver(d, st, region, report))
				(*done)++;
			else
				failed = 1;
		} else if (only) {
			json_array_append_new(report, refresh_row(
				d->name, region, 0, "",
				json_string(d->ready ? "no price source to refresh from"
				                     : d->status)));
			failed = 1;
		}
	}
	return failed ? -1 : 0;
}

gb_catalog *gb_runtime_reload_offers(gb_runtime *rt, gb_store *st)
{
	gb_catalog *old = rt->cat;
	rt->cat = gb_catalog_new();
	load_offers(NULL, st, rt);
	return old;
}
