/*
 * gcp_billing.c -- a Cloud Billing Catalog-like SKU list for Compute
 * Engine (service 6F81-5844-456A), priced from the GCP catalog.
 *
 * Simplification (documented in README.md): the real catalog prices a GPU
 * VM as separate vCPU, RAM and GPU SKUs; cloudsim publishes ONE SKU per
 * (catalog type, region, usage type) whose price is the whole VM's hourly
 * price.  Its description is
 *     "<TYPE> Instance running in <REGION>"              (OnDemand)
 *     "Spot Preemptible <TYPE> Instance running in <REGION>" (Preemptible)
 * where TYPE is the catalog type string (e.g. a3-highgpu-8g or
 * n1-standard-8/nvidia-tesla-t4:1); category.resourceGroup is "GPU" for
 * types with GPUs, serviceRegions holds the region.
 */
#include <stdlib.h>
#include <string.h>

#include "gce.h"

#define COMPUTE_SERVICE "6F81-5844-456A"

void gcp_billing_services(gce_ctx *c)
{
	sim_resp_json(c->resp, 200,
	              json_pack("{s:[{s:s,s:s,s:s,s:s}],s:s}", "services",
	                        "name", "services/" COMPUTE_SERVICE,
	                        "serviceId", COMPUTE_SERVICE, "displayName",
	                        "Compute Engine", "businessEntityName",
	                        "businessEntities/GCP", "nextPageToken", ""));
}

static json_t *sku(const sim_ctype *t, const sim_creg *r, int spot)
{
	char seed[256], h[65], id[16];
	double price = spot ? r->spot : r->on_demand;
	long long units = (long long)price;
	long long nanos = (long long)((price - (double)units) * 1e9 + 0.5);
	char *desc, *name, *u;
	json_t *o;
	if (nanos >= 1000000000LL) {
		units++;
		nanos -= 1000000000LL;
	}
	snprintf(seed, sizeof(seed), "%s|%s|%d", t->type, r->region, spot);
	gb_sha256_hex(seed, strlen(seed), h);
	snprintf(id, sizeof(id), "%.4s-%.4s-%.4s", h, h + 4, h + 8);
	for (char *p = id; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	desc = gb_xasprintf("%s%s Instance running in %s",
	                    spot ? "Spot Preemptible " : "", t->type, r->region);
	name = gb_xasprintf("services/" COMPUTE_SERVICE "/skus/%s", id);
	u = gb_xasprintf("%lld", units);
	o = json_pack(
		"{s:s,s:s,s:s,s:{s:s,s:s,s:s,s:s},s:[s],s:[{s:s,s:{s:s,s:s,"
		"s:i,s:[{s:i,s:{s:s,s:s,s:I}}],s:s,s:s,s:i},s:i,s:s}],s:s,"
		"s:{s:s,s:[s]}}",
		"name", name, "skuId", id, "description", desc, "category",
		"serviceDisplayName", "Compute Engine", "resourceFamily",
		"Compute", "resourceGroup", t->gpus > 0 ? "GPU" : "CPU",
		"usageType", spot ? "Preemptible" : "OnDemand", "serviceRegions",
		r->region, "pricingInfo", "summary", "", "pricingExpression",
		"usageUnit", "h", "usageUnitDescription", "hour",
		"displayQuantity", 1, "tieredRates", "startUsageAmount", 0,
		"unitPrice", "currencyCode", "USD", "units", u, "nanos",
		(json_int_t)nanos, "baseUnit", "s", "baseUnitDescription",
		"second", "baseUnitConversionFactor", 3600,
		"currencyConversionRate", 1, "effectiveTime",
		"2024-01-01T00:00:00Z", "serviceProviderName", "Google",
		"geoTaxonomy", "type", "REGIONAL", "regions", r->region);
	free(desc);
	free(name);
	free(u);
	return o;
}

void gcp_billing_skus(gce_ctx *c, const char *service)
{
	const char *ps = sim_req_qarg(c->req, "pageSize");
	const char *pt = sim_req_qarg(c->req, "pageToken");
	const sim_catalog *cat = &sim_g.cat[SIM_GCP];
	int64_t size = 5000, start = 0, idx = 0, shown = 0;
	json_t *arr, *out;
	int more = 0;
	if (strcmp(service, COMPUTE_SERVICE) != 0) {
		gce_error(c, 404, "notFound", "global",
		          "Service 'services/%s' not found.", service);
		return;
	}
	if (ps && (sim_parse_i64(ps, &size) != 0 || size < 1 || size > 5000)) {
		gce_error(c, 400, "badRequest", "global",
		          "Invalid pageSize '%s': 1 to 5000.", ps);
		return;
	}
	if (pt && *pt) {
		char *pos = gce_token_parse("sku", pt);
		if (!pos || sim_parse_i64(pos, &start) != 0) {
			free(pos);
			gce_error(c, 400, "badRequest", "global",
			          "Invalid pageToken.");
			return;
		}
		free(pos);
	}
	arr = json_array();
	for (size_t i = 0; i < cat->ntypes && !more; i++) {
		const sim_ctype *t = &cat->types[i];
		for (size_t j = 0; j < t->nregs && !more; j++) {
			for (int spot = 0; spot < 2; spot++) {
				double p = spot ? t->regs[j].spot
				                : t->regs[j].on_demand;
				if (p < 0)
					continue;
				if (idx++ < start)
					continue;
				if (shown == size) {
					more = 1;
					break;
				}
				json_array_append_new(arr,
				                      sku(t, &t->regs[j], spot));
				shown++;
			}
		}
	}
	out = json_pack("{s:o}", "skus", arr);
	if (more) {
		char p[32], *tok;
		snprintf(p, sizeof(p), "%lld", (long long)(start + shown));
		tok = gce_token_make("sku", p);
		json_object_set_new(out, "nextPageToken", json_string(tok));
		free(tok);
	} else {
		json_object_set_new(out, "nextPageToken", json_string(""));
	}
	sim_resp_json(c->resp, 200, out);
}
