/* drvc_catalog.c -- a driver's default offers file -> gb_offer stream. */
#include "drvc_catalog.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "drvc_util.h"

static int64_t parse_when(const char *s)
{
	struct tm tm;
	const char *end;
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(s, "%Y-%m-%d", &tm);
	}
	if (!end)
		return -1;
	return (int64_t)timegm(&tm);
}

static int get_num(json_t *o, const char *k, double *out)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return 0;
}

const char *drvc_catalog_path(const gb_host *host, const char *name,
                              char *buf, size_t cap)
{
	const char *p = host->option ? host->option(host->ctx, "catalog") : NULL;
	const char *dd;
	if (p && *p) {
		snprintf(buf, cap, "%s", p);
		return buf;
	}
	dd = host->option ? host->option(host->ctx, "data_dir") : NULL;
	if (!dd || !*dd)
		return NULL;
	snprintf(buf, cap, "%s/drivers/%s/data/offers.json", dd, name);
	return buf;
}

/* A price's provenance: the file's, or the entry's own where a price was
 * checked later than the rest ("on_demand_source" and
 * "on_demand_fetched_at", or "spot_..."). */
typedef struct dated {
	const char *source;
	int64_t at;
} dated;

/* 0, or -1 when the entry's own provenance for `what` is malformed. */
static int entry_dated(json_t *rv, const char *what, const char *source,
                       int64_t at, dated *out)
{
	char k[32];
	json_t *s, *w;
	snprintf(k, sizeof(k), "%s_source", what);
	s = json_object_get(rv, k);
	snprintf(k, sizeof(k), "%s_fetched_at", what);
	w = json_object_get(rv, k);
	out->source = source;
	out->at = at;
	if ((s && !json_is_string(s)) || (w && !json_is_string(w)))
		return -1;
	if (s)
		out->source = json_string_value(s);
	if (w && (out->at = parse_when(json_string_value(w))) < 0)
		return -1;
	return 0;
}

int drvc_catalog_emit(const char *path, const char *only_region,
                      gb_offer_cb emit, void *ud, gb_error *err)
{
	json_error_t je;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	json_t *types, *t;
	const char *source, *when;
	int64_t fetched_at;
	size_t i;
	int rc = 0;

	if (!root) {
		FILE *f = fopen(path, "r");
		if (!f) {
			drvc_err(err, GB_ERR_NOT_FOUND, 0, "CatalogMissing",
			         "offers file %s cannot be opened", path);
			return -1;
		}
		fclose(f);
		drvc_err(err, GB_ERR_INVALID, 0, "CatalogInvalid",
		         "%s:%d:%d: %s", path, je.line, je.column, je.text);
		return -1;
	}
	source = json_string_value(json_object_get(root, "source"));
	when = json_string_value(json_object_get(root, "fetched_at"));
	types = json_object_get(root, "types");
	if (!source || !when || !json_is_array(types) ||
	    (fetched_at = parse_when(when)) < 0) {
		drvc_err(err, GB_ERR_INVALID, 0, "CatalogInvalid",
		         "%s: needs \"source\" (string), \"fetched_at\" "
		         "(YYYY-MM-DD) and \"types\" (list)", path);
		json_decref(root);
		return -1;
	}
	json_array_foreach(types, i, t) {
		gb_offer o;
		double gpus, mem, vcpus, ram;
		json_t *regions, *rv;
		const char *rname;
		memset(&o, 0, sizeof(o));
		o.instance_type = json_string_value(json_object_get(t, "type"));
		o.gpu_model = json_string_value(json_object_get(t, "gpu"));
		regions = json_object_get(t, "regions");
		if (!o.instance_type || !o.gpu_model ||
		    get_num(t, "gpus", &gpus) || get_num(t, "gpu_memory_gb", &mem) ||
		    get_num(t, "vcpus", &vcpus) || get_num(t, "ram_gb", &ram) ||
		    !json_is_object(regions) || gpus < 1) {
			drvc_err(err, GB_ERR_INVALID, 0, "CatalogInvalid",
			         "%s: types[%zu] needs type, gpu, gpus, "
			         "gpu_memory_gb, vcpus, ram_gb and regions", path,
			         i);
			rc = -1;
			break;
		}
		o.gpu_count = (int)gpus;
		o.gpu_memory_gb = (int)mem;
		o.vcpus = (int)vcpus;
		o.ram_gb = ram;
		json_object_foreach(regions, rname, rv) {
			double od = -1, spot = -1;
			json_t *zones = json_object_get(rv, "zones");
			json_t *spot_zones = json_object_get(rv, "spot_zones");
			size_t nz = json_is_array(zones) ? json_array_size(zones) : 0;
			dated od_at, spot_at;
			if (only_region && strcmp(only_region, rname) != 0)
				continue;
			if (get_num(rv, "on_demand", &od) != 0)
				od = -1;
			if (get_num(rv, "spot", &spot) != 0)
				spot = -1;
			if (entry_dated(rv, "on_demand", source, fetched_at,
			                &od_at) != 0 ||
			    entry_dated(rv, "spot", source, fetched_at,
			                &spot_at) != 0) {
				drvc_err(err, GB_ERR_INVALID, 0, "CatalogInvalid",
				         "%s: %s %s: on_demand_source/spot_source "
				         "must be strings and on_demand_fetched_at/"
				         "spot_fetched_at dates (YYYY-MM-DD)", path,
				         o.instance_type, rname);
				rc = -1;
				goto out;
			}
			o.region = rname;
			for (size_t z = 0; z < (nz ? nz : 1); z++) {
				o.zone = nz ? json_string_value(json_array_get(zones, z))
				            : "";
				if (!o.zone) {
					drvc_err(err, GB_ERR_INVALID, 0,
					         "CatalogInvalid",
					         "%s: %s %s: zones must be strings",
					         path, o.instance_type, rname);
					rc = -1;
					goto out;
				}
				if (od > 0) {
					o.capacity = GB_CAPACITY_ON_DEMAND;
					o.price_per_hour = od;
					o.source = od_at.source;
					o.fetched_at = od_at.at;
					if (emit(ud, &o))
						goto out;
				}
				if (spot > 0) {
					double zs;
					json_t *zv = nz ? json_object_get(spot_zones, o.zone)
					                : NULL;
					o.capacity = GB_CAPACITY_SPOT;
					o.price_per_hour = spot;
					o.source = spot_at.source;
					o.fetched_at = spot_at.at;
					if (nz && get_num(spot_zones, o.zone, &zs) == 0)
						o.price_per_hour = zs;
					/* null = no spot market in this zone */
					if (!json_is_null(zv) && emit(ud, &o))
						goto out;
				}
			}
		}
	}
out:
	json_decref(root);
	return rc;
}

int drvc_catalog_list(const gb_host *host, const char *name,
                      gb_offer_cb emit, void *ud, gb_error *err)
{
	char path[4096];
	if (!drvc_catalog_path(host, name, path, sizeof(path))) {
		drvc_err(err, GB_ERR_NOT_FOUND, 0, "CatalogMissing",
		         "%s: no offers file: set driver option catalog or "
		         "data_dir", name);
		return -1;
	}
	return drvc_catalog_emit(path, NULL, emit, ud, err);
}
