/*
 * gcp_billing.c -- a Cloud Billing Catalog-like SKU list for Compute
 * Engine (service 6F81-5844-456A), priced from the GCP catalog.
 *
 * As in the real catalog, a GPU VM is priced as separate SKUs (rates from
 * gcp_rates.c), each for one region, OnDemand or Preemptible:
 *     "<Family> Instance Core running in <Location>"   per vCPU-hour
 *     "<Family> Instance Ram running in <Location>"    per GiB-hour
 *     "<GPU> running in <Location>"                    per GPU-hour
 * Family is "N1 Predefined", "A2", "A3", "A3 Mega", "A3 Ultra", "G2"; GPU
 * is e.g. "Nvidia L4 GPU", "Nvidia Tesla T4 GPU", "Nvidia H100 80GB GPU";
 * Preemptible (Spot) descriptions start with "Spot Preemptible ".
 * Location is the region's city ("Iowa" for us-central1, the region name
 * when not in the table); serviceRegions and geoTaxonomy.regions hold the
 * region.  category.resourceGroup is CPU, RAM or GPU.
 */
#include <math.h>
#include <stdio.h>
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

static const char *location(const char *region)
{
	static const char *const map[][2] = {
		{"asia-east1", "Taiwan"},           {"asia-east2", "Hong Kong"},
		{"asia-northeast1", "Tokyo"},       {"asia-northeast3", "Seoul"},
		{"asia-south1", "Mumbai"},          {"asia-southeast1", "Singapore"},
		{"asia-southeast2", "Jakarta"},
		{"australia-southeast1", "Sydney"},
		{"europe-central2", "Warsaw"},      {"europe-north1", "Finland"},
		{"europe-west1", "Belgium"},        {"europe-west2", "London"},
		{"europe-west3", "Frankfurt"},      {"europe-west4", "Netherlands"},
		{"europe-west6", "Zurich"},         {"me-central2", "Dammam"},
		{"me-west1", "Tel Aviv"},
		{"northamerica-northeast1", "Montreal"},
		{"northamerica-northeast2", "Toronto"},
		{"southamerica-east1", "Sao Paulo"},
		{"us-central1", "Iowa"},            {"us-east1", "South Carolina"},
		{"us-east4", "Northern Virginia"},  {"us-east5", "Columbus"},
		{"us-west1", "Oregon"},             {"us-west2", "Los Angeles"},
		{"us-west3", "Salt Lake City"},     {"us-west4", "Las Vegas"},
	};
	for (size_t i = 0; i < GB_ARRAY_LEN(map); i++)
		if (strcmp(map[i][0], region) == 0)
			return map[i][1];
	return region;
}

static char *description(const gcp_rate *r)
{
	static const char *const what[] = {" Instance Core", " Instance Ram",
	                                   ""};
	return gb_xasprintf("%s%s%s running in %s",
	                    r->spot ? "Spot Preemptible " : "", r->name,
	                    what[r->kind], location(r->region));
}

/* The pricing expression's units: per hour, or per GiB-hour for RAM. */
static json_t *expression(const gcp_rate *r, long long units,
                          long long nanos)
{
	int ram = r->kind == GCP_RATE_RAM;
	char u[32];
	snprintf(u, sizeof(u), "%lld", units);
	return json_pack(
		"{s:s,s:s,s:s,s:s,s:I,s:i,s:[{s:i,s:{s:s,s:s,s:I}}]}",
		"usageUnit", ram ? "GiBy.h" : "h", "usageUnitDescription",
		ram ? "gibibyte hour" : "hour", "baseUnit", ram ? "By.s" : "s",
		"baseUnitDescription", ram ? "byte second" : "second",
		"baseUnitConversionFactor",
		(json_int_t)(ram ? 3600LL * 1024 * 1024 * 1024 : 3600),
		"displayQuantity", 1, "tieredRates", "startUsageAmount", 0,
		"unitPrice", "currencyCode", "USD", "units", u, "nanos",
		(json_int_t)nanos);
}

static json_t *sku(const gcp_rate *r)
{
	static const char *const group[] = {"CPU", "RAM", "GPU"};
	char h[65], id[16];
	long long units = (long long)r->price;
	long long nanos = llround((r->price - (double)units) * 1e9);
	char *desc = description(r), *seed, *name;
	json_t *o;
	if (nanos >= 1000000000LL) {
		units++;
		nanos -= 1000000000LL;
	}
	seed = gb_xasprintf("%s|%s", desc, r->region);
	gb_sha256_hex(seed, strlen(seed), h);
	free(seed);
	snprintf(id, sizeof(id), "%.4s-%.4s-%.4s", h, h + 4, h + 8);
	for (char *p = id; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	name = gb_xasprintf("services/" COMPUTE_SERVICE "/skus/%s", id);
	o = json_pack(
		"{s:s,s:s,s:s,s:{s:s,s:s,s:s,s:s},s:[s],s:[{s:s,s:o,s:i,s:s}],"
		"s:s,s:{s:s,s:[s]}}",
		"name", name, "skuId", id, "description", desc, "category",
		"serviceDisplayName", "Compute Engine", "resourceFamily",
		"Compute", "resourceGroup", group[r->kind], "usageType",
		r->spot ? "Preemptible" : "OnDemand", "serviceRegions",
		r->region, "pricingInfo", "summary", "", "pricingExpression",
		expression(r, units, nanos), "currencyConversionRate", 1,
		"effectiveTime", "2024-01-01T00:00:00Z", "serviceProviderName",
		"Google", "geoTaxonomy", "type", "REGIONAL", "regions", r->region);
	free(desc);
	free(name);
	return o;
}

void gcp_billing_skus(gce_ctx *c, const char *service)
{
	const char *ps = sim_req_qarg(c->req, "pageSize");
	const char *pt = sim_req_qarg(c->req, "pageToken");
	const sim_catalog *cat = &sim_g.cat[SIM_GCP];
	int64_t size = 5000, start = 0, idx = 0, shown = 0;
	gcp_rate *rates = NULL;
	size_t n;
	json_t *arr, *out;
	int more;
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
		if (!pos || sim_parse_i64(pos, &start) != 0 || start < 0) {
			free(pos);
			gce_error(c, 400, "badRequest", "global",
			          "Invalid pageToken.");
			return;
		}
		free(pos);
	}
	n = gcp_rates_build(cat, &rates);
	arr = json_array();
	for (idx = start; idx < (int64_t)n && shown < size; idx++, shown++)
		json_array_append_new(arr, sku(&rates[idx]));
	more = idx < (int64_t)n;
	free(rates);
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
