/*
 * catalog.c -- reads a price catalog (the drivers/common/drvc_catalog.h
 * file format) into instance types, regions, zones and prices.  This is
 * cloudsim's own reader, independent of the drivers' one.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static void creg_free(sim_creg *r)
{
	free(r->region);
	for (size_t i = 0; i < r->nzones; i++)
		free(r->zones[i]);
	free(r->zones);
	free(r->zone_spot);
}

static void ctype_free(sim_ctype *t)
{
	free(t->type);
	free(t->machine);
	free(t->accel);
	free(t->gpu);
	for (size_t i = 0; i < t->nregs; i++)
		creg_free(&t->regs[i]);
	free(t->regs);
}

void sim_catalog_free(sim_catalog *c)
{
	free(c->path);
	free(c->source);
	free(c->fetched_at);
	for (size_t i = 0; i < c->ntypes; i++)
		ctype_free(&c->types[i]);
	free(c->types);
	memset(c, 0, sizeof(*c));
}

const char *sim_azure_zone_norm(const char *region, const char *zone,
                                char *buf, size_t cap)
{
	size_t rl = strlen(region);
	if (strncmp(zone, region, rl) == 0 && zone[rl] == '-' && zone[rl + 1])
		zone += rl + 1;
	snprintf(buf, cap, "%s", zone);
	return buf;
}

static int num_field(json_t *o, const char *k, double *out)
{
	json_t *v = json_object_get(o, k);
	if (!v || json_is_null(v)) {
		*out = -1;
		return 0;
	}
	if (!json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return *out < 0 ? -1 : 0;
}

static int int_field(json_t *o, const char *k, int *out)
{
	json_t *v = json_object_get(o, k);
	if (!v) {
		*out = 0;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > 100000)
		return -1;
	*out = (int)json_integer_value(v);
	return 0;
}

/* GCP N1 entries: "n1-standard-8/nvidia-tesla-t4:1". */
static int split_gcp_type(sim_ctype *t)
{
	const char *slash = strchr(t->type, '/');
	const char *colon;
	int64_t n;
	if (!slash) {
		t->machine = gb_xstrdup(t->type);
		return 0;
	}
	t->machine = gb_xstrndup(t->type, (size_t)(slash - t->type));
	colon = strchr(slash + 1, ':');
	if (!colon || colon == slash + 1)
		return -1;
	t->accel = gb_xstrndup(slash + 1, (size_t)(colon - slash - 1));
	if (gb_parse_int64(colon + 1, &n) != 0 || n < 1 || n > 16)
		return -1;
	t->accel_count = (int)n;
	return 0;
}

static int load_region(sim_creg *r, int cloud, const char *name, json_t *o,
                       char *why, size_t cap)
{
	json_t *zones, *sz;
	r->region = gb_xstrdup(name);
	if (!json_is_object(o)) {
		snprintf(why, cap, "regions.%s: expected an object", name);
		return -1;
	}
	if (num_field(o, "on_demand", &r->on_demand) != 0 ||
	    num_field(o, "spot", &r->spot) != 0) {
		snprintf(why, cap,
		         "regions.%s: on_demand/spot must be numbers >= 0 "
		         "or null", name);
		return -1;
	}
	zones = json_object_get(o, "zones");
	if (zones && !json_is_null(zones)) {
		size_t i;
		json_t *z;
		if (!json_is_array(zones)) {
			snprintf(why, cap, "regions.%s.zones: expected a list",
			         name);
			return -1;
		}
		r->zones = gb_xcalloc(json_array_size(zones) + 1,
		                      sizeof(char *));
		r->zone_spot = gb_xcalloc(json_array_size(zones) + 1,
		                          sizeof(double));
		json_array_foreach(zones, i, z) {
			char buf[128];
			const char *zs = json_string_value(z);
			if (!zs || !*zs) {
				snprintf(why, cap,
				         "regions.%s.zones[%zu]: expected a "
				         "zone name", name, i);
				return -1;
			}
			if (cloud == SIM_AZURE)
				zs = sim_azure_zone_norm(name, zs, buf,
				                         sizeof(buf));
			r->zones[r->nzones] = gb_xstrdup(zs);
			r->zone_spot[r->nzones] = -1;
			r->nzones++;
		}
	}
	sz = json_object_get(o, "spot_zones");
	if (sz && json_is_object(sz)) {
		const char *k;
		json_t *v;
		json_object_foreach(sz, k, v) {
			char buf[128];
			const char *zn = k;
			if (cloud == SIM_AZURE)
				zn = sim_azure_zone_norm(name, k, buf,
				                         sizeof(buf));
			for (size_t i = 0; i < r->nzones; i++) {
				if (strcmp(r->zones[i], zn) != 0)
					continue;
				if (json_is_number(v))
					r->zone_spot[i] = json_number_value(v);
				else if (json_is_null(v))
					r->zone_spot[i] = SIM_NO_SPOT;
			}
		}
	}
	return 0;
}

static int load_type(sim_ctype *t, int cloud, json_t *o, size_t idx,
                     char *why, size_t cap)
{
	json_t *v, *regs;
	const char *k;
	v = json_object_get(o, "type");
	if (!json_is_string(v) || !*json_string_value(v)) {
		snprintf(why, cap, "types[%zu].type: expected a string", idx);
		return -1;
	}
	t->type = gb_xstrdup(json_string_value(v));
	if (cloud == SIM_GCP) {
		if (split_gcp_type(t) != 0) {
			snprintf(why, cap,
			         "types[%zu].type: \"%s\" is not "
			         "MACHINE/ACCELERATOR:COUNT", idx, t->type);
			return -1;
		}
	} else {
		t->machine = gb_xstrdup(t->type);
	}
	v = json_object_get(o, "gpu");
	t->gpu = gb_xstrdup(json_is_string(v) ? json_string_value(v) : "");
	if (int_field(o, "gpus", &t->gpus) || int_field(o, "vcpus", &t->vcpus) ||
	    int_field(o, "gpu_memory_gb", &t->gpu_mem_gb)) {
		snprintf(why, cap, "types[%zu] (%s): gpus, vcpus and "
		         "gpu_memory_gb must be integers", idx, t->type);
		return -1;
	}
	v = json_object_get(o, "ram_gb");
	t->ram_gb = json_is_number(v) ? json_number_value(v) : 0;
	regs = json_object_get(o, "regions");
	if (!json_is_object(regs)) {
		snprintf(why, cap, "types[%zu] (%s).regions: expected an "
		         "object", idx, t->type);
		return -1;
	}
	t->regs = gb_xcalloc(json_object_size(regs) + 1, sizeof(sim_creg));
	json_object_foreach(regs, k, v) {
		char sub[256];
		if (load_region(&t->regs[t->nregs++], cloud, k, v, sub,
		                sizeof(sub)) != 0) {
			snprintf(why, cap, "types[%zu] (%s).%s", idx, t->type,
			         sub);
			return -1;
		}
	}
	return 0;
}

int sim_catalog_load(sim_catalog *c, int cloud, const char *path,
                     gb_diags *d)
{
	json_error_t je;
	json_t *root, *types, *v;
	size_t i;
	char why[512];
	memset(c, 0, sizeof(*c));
	c->path = gb_xstrdup(path);
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		gb_diag_add(d, path, je.line > 0 ? je.line : 0,
		            je.column > 0 ? je.column : 0, "",
		            "cannot read the %s catalog: %s", sim_cloud_name(cloud),
		            je.text);
		return -1;
	}
	v = json_object_get(root, "cloud");
	if (json_is_string(v) &&
	    strcmp(json_string_value(v), sim_cloud_name(cloud)) != 0) {
		gb_diag_add(d, path, 0, 0, "cloud",
		            "this catalog is for \"%s\", but it is given for %s",
		            json_string_value(v), sim_cloud_name(cloud));
		json_decref(root);
		return -1;
	}
	v = json_object_get(root, "source");
	c->source = gb_xstrdup(json_is_string(v) ? json_string_value(v) : path);
	v = json_object_get(root, "fetched_at");
	c->fetched_at = gb_xstrdup(json_is_string(v) ? json_string_value(v) : "");
	types = json_object_get(root, "types");
	if (!json_is_array(types)) {
		gb_diag_add(d, path, 0, 0, "types", "expected a list of types");
		json_decref(root);
		return -1;
	}
	c->types = gb_xcalloc(json_array_size(types) + 1, sizeof(sim_ctype));
	json_array_foreach(types, i, v) {
		if (!json_is_object(v) ||
		    load_type(&c->types[c->ntypes++], cloud, v, i, why,
		              sizeof(why)) != 0) {
			if (!json_is_object(v))
				snprintf(why, sizeof(why),
				         "types[%zu]: expected an object", i);
			gb_diag_add(d, path, 0, 0, "", "%s", why);
			json_decref(root);
			return -1;
		}
	}
	json_decref(root);
	return 0;
}

const sim_ctype *sim_catalog_type(const sim_catalog *c, const char *type)
{
	for (size_t i = 0; i < c->ntypes; i++)
		if (strcmp(c->types[i].type, type) == 0)
			return &c->types[i];
	return NULL;
}

const sim_creg *sim_ctype_region(const sim_ctype *t, const char *region)
{
	for (size_t i = 0; i < t->nregs; i++)
		if (strcmp(t->regs[i].region, region) == 0)
			return &t->regs[i];
	return NULL;
}

int sim_creg_has_zone(const sim_creg *r, const char *zone)
{
	if (!zone || !*zone)
		return 1;
	for (size_t i = 0; i < r->nzones; i++)
		if (strcmp(r->zones[i], zone) == 0)
			return 1;
	return 0;
}

double sim_creg_price(const sim_creg *r, const char *zone, int spot)
{
	if (!spot)
		return r->on_demand;
	for (size_t i = 0; zone && i < r->nzones; i++) {
		if (strcmp(r->zones[i], zone) != 0)
			continue;
		if (r->zone_spot[i] == SIM_NO_SPOT)
			return -1;
		if (r->zone_spot[i] >= 0)
			return r->zone_spot[i];
	}
	return r->spot;
}
