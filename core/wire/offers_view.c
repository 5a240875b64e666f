/* offers_view.c -- offers as flat JSON records (GET /v1/offers) and the
 * rows `gpubroker offers` prints from them, locally or through a daemon. */
#include "offers_view.h"

#include <stdlib.h>
#include <string.h>

#include "timejson.h"
#include "util.h"

json_t *gb_offer_record(const gb_coffer *o)
{
	json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:f, "
	                      "s:s, s:f, s:s, s:o}",
	                      "cloud", o->cloud, "region", o->region, "zone",
	                      o->zone, "instance_type", o->instance_type, "gpu",
	                      o->gpu_model, "gpu_count", o->gpu_count,
	                      "gpu_memory_gb", o->gpu_memory_gb, "vcpus", o->vcpus,
	                      "ram_gb", o->ram_gb, "capacity",
	                      gb_capacity_name(o->capacity), "price_per_hour",
	                      o->price, "source", o->source, "fetched_at",
	                      gb_json_time(o->fetched_at * 1000));
	if (o->rinfo) {
		json_object_set_new(r, "jurisdiction",
		                    json_string(o->rinfo->jurisdiction));
		json_object_set_new(r, "carbon_g_per_kwh",
		                    json_real(o->rinfo->carbon_g_per_kwh));
	}
	if (o->bench_json) {
		json_t *b = json_loads(o->bench_json, 0, NULL);
		if (b)
			json_object_set_new(r, "bench", b);
	}
	return r;
}

/* ---------------------------------------------------------------- view */

typedef struct rec {
	const json_t *j;
	const char *cloud, *region, *type, *zone;
	gb_capacity cap;
	double price;
	int gpus;
} rec;

static int key_cmp(const rec *x, const rec *y)
{
	int c;
	if ((c = strcmp(x->cloud, y->cloud)) || (c = strcmp(x->region, y->region)) ||
	    (c = strcmp(x->type, y->type)))
		return c;
	return x->cap == y->cap ? 0 : (x->cap < y->cap ? -1 : 1);
}

static int rec_cmp(const void *a, const void *b)
{
	const rec *x = a, *y = b;
	int c = key_cmp(x, y);
	return c ? c : strcmp(x->zone, y->zone);
}

typedef struct row {
	const rec *first;
	double min_price, max_price;
	int zones;
} row;

static int row_cmp(const void *a, const void *b)
{
	const row *x = a, *y = b;
	double px = x->min_price / x->first->gpus;
	double py = y->min_price / y->first->gpus;
	if (px != py)
		return px < py ? -1 : 1;
	return rec_cmp(x->first, y->first);
}

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static json_t *row_json(const row *w, int per_zone)
{
	const json_t *o = w->first->j;
	int64_t fetched = 0, age;
	char buf[32];
	json_t *r = json_object();
	static const char *const copy[] = {"instance_type", "gpu", "gpu_count",
	                                   "gpu_memory_gb", "vcpus", "ram_gb",
	                                   "capacity"};
	if (gb_json_time_get(json_object_get(o, "fetched_at"), &fetched) == 0)
		fetched /= 1000;
	age = gb_now_ms() / 1000 - fetched;
	json_object_set_new(r, "cloud", json_string(w->first->cloud));
	json_object_set_new(r, "region", json_string(w->first->region));
	if (per_zone)
		json_object_set_new(r, "zones", json_string(*w->first->zone
		                                                    ? w->first->zone
		                                                    : "-"));
	else if (w->zones)
		json_object_set_new(r, "zones", json_integer(w->zones));
	else
		json_object_set_new(r, "zones", json_string("-"));
	for (size_t i = 0; i < GB_ARRAY_LEN(copy); i++)
		json_object_set(r, copy[i], json_object_get(o, copy[i]));
	json_object_set_new(r, "price_per_hour", json_real(w->min_price));
	if (w->max_price != w->min_price)
		json_object_set_new(r, "max_price_per_hour", json_real(w->max_price));
	json_object_set_new(r, "price_per_gpu_hour",
	                    json_real(w->min_price / w->first->gpus));
	if (fetched <= 0)
		json_object_set_new(r, "price_age", json_string("unknown"));
	else
		json_object_set_new(r, "price_age",
		                    json_string(gb_format_duration(age < 0 ? 0 : age,
		                                                   buf, sizeof(buf))));
	json_object_set_new(r, "fetched_at", gb_json_time(fetched * 1000));
	json_object_set_new(r, "source", json_string(jstr(o, "source")));
	if (json_object_get(o, "jurisdiction")) {
		json_object_set(r, "jurisdiction", json_object_get(o, "jurisdiction"));
		json_object_set(r, "carbon_g_per_kwh",
		                json_object_get(o, "carbon_g_per_kwh"));
	}
	if (json_object_get(o, "bench"))
		json_object_set(r, "bench", json_object_get(o, "bench"));
	return r;
}

json_t *gb_offers_view(const json_t *records, int per_zone, size_t limit)
{
	size_t n = json_array_size(records), nr = 0, k = 0;
	rec *v = gb_xcalloc(n ? n : 1, sizeof(*v));
	row *rows = gb_xcalloc(n ? n : 1, sizeof(*rows));
	json_t *out = json_array();

	for (size_t i = 0; i < n; i++) {
		const json_t *j = json_array_get(records, i);
		rec *r = &v[k];
		r->j = j;
		r->cloud = jstr(j, "cloud");
		r->region = jstr(j, "region");
		r->type = jstr(j, "instance_type");
		r->zone = jstr(j, "zone");
		r->price = json_number_value(json_object_get(j, "price_per_hour"));
		r->gpus = (int)json_integer_value(json_object_get(j, "gpu_count"));
		if (r->gpus <= 0 ||
		    gb_capacity_parse(jstr(j, "capacity"), &r->cap) != 0)
			continue; /* not an offer anyone could plan with */
		k++;
	}
	/* group: sorted by (cloud, region, type, capacity, zone) */
	qsort(v, k, sizeof(*v), rec_cmp);
	for (size_t i = 0; i < k; i++) {
		if (per_zone || nr == 0 || key_cmp(rows[nr - 1].first, &v[i]) != 0) {
			rows[nr].first = &v[i];
			rows[nr].min_price = rows[nr].max_price = v[i].price;
			rows[nr].zones = *v[i].zone != '\0';
			nr++;
			continue;
		}
		rows[nr - 1].zones += *v[i].zone != '\0';
		if (v[i].price < rows[nr - 1].min_price)
			rows[nr - 1].min_price = v[i].price;
		if (v[i].price > rows[nr - 1].max_price)
			rows[nr - 1].max_price = v[i].price;
	}
	qsort(rows, nr, sizeof(*rows), row_cmp);
	if (limit && limit < nr)
		nr = limit;
	for (size_t i = 0; i < nr; i++)
		json_array_append_new(out, row_json(&rows[i], per_zone));
	free(rows);
	free(v);
	return out;
}
