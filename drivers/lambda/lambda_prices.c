/* lambda_prices.c -- refresh_prices: GET /instance-types (API.md,
 * "Instance types"): {"data": {"<type>": {"instance_type": {"name",
 * "description", "gpu_description", "price_cents_per_hour", "specs":
 * {"vcpus", "memory_gib", "storage_gib", "gpus"}},
 * "regions_with_capacity_available": [{"name", ...}]}}}.
 *
 * Lambda publishes one price per type.  The offers are the shipped
 * catalog's (type, region) pairs, priced from the answer, plus the
 * regions the answer says have capacity now for a type where the catalog
 * lacks them (the shape from "specs", the GPU model from the catalog or
 * read from the type's name and description).  A catalog type the answer
 * no longer lists is dropped. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drvc_catalog.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_shapes.h"
#include "drvc_util.h"
#include "lambda.h"


int lambda_parse_gpu(const char *type, const char *desc, char *model,
                     size_t cap, int *count, int *mem_gb)
{
	char part[32];
	const char *p, *e;
	size_t n = 0;
	*count = 0;
	*mem_gb = 0;
	/* gpu_<N>x_<model>[_<variant>] */
	if (!type || strncmp(type, "gpu_", 4) != 0)
		return -1;
	p = type + 4;
	while (isdigit((unsigned char)*p))
		*count = *count * 10 + (*p++ - '0');
	if (*count <= 0 || *p != 'x' || p[1] != '_')
		return -1;
	p += 2;
	e = strchr(p, '_');
	if (!e)
		e = p + strlen(p);
	while (p < e && n + 1 < sizeof(part))
		part[n++] = (char)toupper((unsigned char)*p++);
	part[n] = '\0';
	if (n == 0)
		return -1;
	/* "(80 GB" in the description */
	if (desc && (p = strchr(desc, '(')) != NULL)
		*mem_gb = atoi(p + 1);
	if (strcmp(part, "A100") == 0 && *mem_gb >= 80)
		snprintf(model, cap, "A100-80GB");
	else if (strcmp(part, "V100") == 0 && *mem_gb >= 32)
		snprintf(model, cap, "V100-32GB");
	else if (strcmp(part, "A6000") == 0)
		snprintf(model, cap, "RTX-A6000");
	else
		snprintf(model, cap, "%s", part);
	return 0;
}

typedef struct pctx {
	drvc_shapes shapes;
	const char *region;
} pctx;

static int cat_fn(void *ud, const gb_offer *o)
{
	pctx *p = ud;
	int is_new;
	drvc_shape *sh;
	if (o->capacity != GB_CAPACITY_ON_DEMAND)
		return 0;
	sh = drvc_shapes_add(&p->shapes, o, &is_new);
	sh->price[0] = 0; /* priced from the answer, or dropped */
	return 0;
}

/* The catalog's GPU model of type (any region), or NULL. */
static const drvc_shape *cat_type(const drvc_shapes *s, const char *type)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].type, type) == 0)
			return &s->v[i];
	return NULL;
}

static void price_type(pctx *p, const char *type, const json_t *entry)
{
	const json_t *it = json_object_get(entry, "instance_type");
	const json_t *specs = json_object_get(it, "specs");
	const json_t *regions = json_object_get(entry,
	                                        "regions_with_capacity_available");
	const json_t *v;
	int64_t cents, vcpus = 0, gpus = 0;
	double ram = 0;
	size_t i, nshapes = p->shapes.n;
	const drvc_shape *known;
	char model[32];
	int count, mem;

	if (drvc_jint(json_object_get(it, "price_cents_per_hour"), &cents) != 0 ||
	    cents <= 0)
		return;
	for (i = 0; i < nshapes; i++)
		if (strcmp(p->shapes.v[i].type, type) == 0)
			p->shapes.v[i].price[0] = (double)cents / 100.0;
	if (!json_is_array(regions))
		return;
	known = cat_type(&p->shapes, type);
	drvc_jint(json_object_get(specs, "vcpus"), &vcpus);
	drvc_jint(json_object_get(specs, "gpus"), &gpus);
	drvc_jnum(json_object_get(specs, "memory_gib"), &ram);
	if (lambda_parse_gpu(type, drvc_jstr(it, "gpu_description")
	                               ? drvc_jstr(it, "gpu_description")
	                               : drvc_jstr(it, "description"),
	                     model, sizeof(model), &count, &mem) != 0 && !known)
		return; /* not a GPU type we can describe */
	json_array_foreach(regions, i, v) {
		const char *r = drvc_jstr(v, "name");
		gb_offer o;
		int is_new;
		drvc_shape *sh;
		if (!r || drvc_shapes_find(&p->shapes, type, r))
			continue;
		memset(&o, 0, sizeof(o));
		o.region = r;
		o.zone = "";
		o.instance_type = type;
		o.gpu_model = known ? known->gpu : model;
		o.gpu_count = known ? known->gpus : (gpus > 0 ? (int)gpus : count);
		o.gpu_memory_gb = known ? known->gpu_mem : mem;
		o.vcpus = known ? known->vcpus : (int)vcpus;
		o.ram_gb = known ? known->ram : ram;
		sh = drvc_shapes_add(&p->shapes, &o, &is_new);
		sh->price[0] = (double)cents / 100.0;
		known = cat_type(&p->shapes, type);
	}
}

int lambda_refresh_prices(void *ctx, const char *region, gb_offer_cb emit,
                          void *ud, gb_error *err)
{
	lambda_ctx *c = ctx;
	char path[4096];
	pctx p;
	json_t *root, *data, *v;
	const char *type;
	int64_t now_s;
	char *source = NULL;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	p.region = region;
	if (lambda_require(c, err) != 0)
		return -1;
	if (drvc_catalog_path(c->host, "lambda", path, sizeof(path)) &&
	    drvc_catalog_emit(path, NULL, cat_fn, &p, err) != 0 &&
	    err->cls != GB_ERR_NOT_FOUND)
		goto out;
	if (lambda_get_data(c, "/instance-types", "instance types", &root, &data,
	                    err) != 0)
		goto out;
	if (!json_is_object(data)) {
		drvc_err(err, GB_ERR_TRANSIENT, 0, "MalformedResponse",
		         "Lambda instance types: \"data\" is not a map");
		json_decref(root);
		goto out;
	}
	json_object_foreach(data, type, v)
		price_type(&p, type, v);
	json_decref(root);
	now_s = c->host->now_ms(c->host->ctx) / 1000;
	/* where the prices came from, as the other drivers say it */
	source = drvc_xasprintf("lambda-instance-types %s/instance-types",
	                        c->endpoint);
	for (size_t i = 0; i < p.shapes.n; i++) {
		const drvc_shape *sh = &p.shapes.v[i];
		if (region && strcmp(sh->region, region) != 0)
			continue;
		if (drvc_shape_emit(sh, source, now_s, emit, ud))
			break;
	}
	rc = 0;
out:
	free(source);
	drvc_shapes_free(&p.shapes);
	return rc;
}
