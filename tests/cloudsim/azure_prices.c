/*
 * azure_prices.c -- the Azure Retail Prices API (GET /api/retail/prices),
 * public and unauthenticated like the real one, priced from the Azure
 * catalog.  Per (size, region) it lists a Linux Consumption row, a Linux
 * Spot row (skuName/meterName ending in " Spot") when the catalog has a
 * spot price, and a Windows Consumption row (productName ending in
 * " Windows"; its price is the Linux price plus 0.046 USD per vCPU, a
 * stand-in so clients must filter Windows out as with the real API).
 *
 * $filter: `FIELD eq 'VALUE'` comparisons combined with `and`, `or` and
 * parentheses (azure_filter.c); anything else is a 400 BadRequest.
 * Values are case-sensitive from api-version 2023-01-01-preview on.
 * Paging: $skip, NextPageLink; page size paging.azure_prices (default
 * 100).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "azure.h"

static const char *display_location(const char *region)
{
	static const char *const map[][2] = {
		{"eastus", "US East"},          {"eastus2", "US East 2"},
		{"westus", "US West"},          {"westus2", "US West 2"},
		{"westus3", "US West 3"},       {"centralus", "US Central"},
		{"southcentralus", "US South Central"},
		{"northcentralus", "US North Central"},
		{"westeurope", "EU West"},      {"northeurope", "EU North"},
		{"swedencentral", "SE Central"},
		{"francecentral", "FR Central"},
		{"germanywestcentral", "DE West Central"},
		{"uksouth", "UK South"},        {"japaneast", "JA East"},
		{"australiaeast", "AU East"},   {"canadacentral", "CA Central"},
		{"southeastasia", "AP Southeast"},
	};
	for (size_t i = 0; i < GB_ARRAY_LEN(map); i++)
		if (strcmp(map[i][0], region) == 0)
			return map[i][1];
	return region;
}

static char *sku_name(const char *arm)
{
	char *s = gb_xstrdup(strncmp(arm, "Standard_", 9) == 0 ? arm + 9 : arm);
	for (char *p = s; *p; p++)
		if (*p == '_')
			*p = ' ';
	return s;
}

static char *series(const char *arm)
{
	gb_buf b = GB_BUF_INIT;
	const char *p = strncmp(arm, "Standard_", 9) == 0 ? arm + 9 : arm;
	while (*p && isupper((unsigned char)*p))
		gb_buf_putc(&b, *p++);
	while (*p && isdigit((unsigned char)*p))
		p++;
	for (; *p; p++)
		if (*p != '_')
			gb_buf_putc(&b, *p);
	return gb_buf_take(&b);
}

static void det_uuid(const char *seed, char out[37])
{
	char h[65];
	gb_sha256_hex(seed, strlen(seed), h);
	snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12,
	         h + 16, h + 20);
}

static json_t *item(const sim_ctype *t, const sim_creg *r, int kind)
{
	/* kind 0 linux consumption, 1 linux spot, 2 windows consumption */
	char *sku = sku_name(t->type), *ser = series(t->type);
	char *skuname = kind == 1 ? gb_xasprintf("%s Spot", sku)
	                          : gb_xstrdup(sku);
	char *prod = gb_xasprintf("Virtual Machines %s Series%s", ser,
	                          kind == 2 ? " Windows" : "");
	char seed[256], meter[37], pid[16], skuid[40];
	double price = kind == 1 ? r->spot : r->on_demand;
	json_t *o;
	if (kind == 2)
		price += 0.046 * t->vcpus;
	price = (double)(int64_t)(price * 1e4 + 0.5) / 1e4;
	snprintf(seed, sizeof(seed), "%s|%s|%d", t->type, r->region, kind);
	det_uuid(seed, meter);
	snprintf(seed, sizeof(seed), "product|%s|%d", ser, kind == 2);
	{
		char h[65];
		gb_sha256_hex(seed, strlen(seed), h);
		snprintf(pid, sizeof(pid), "DZH318Z%.5s", h);
		for (char *p = pid; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		snprintf(skuid, sizeof(skuid), "%s/%.4s", pid, meter);
		for (char *p = skuid; *p; p++)
			*p = (char)toupper((unsigned char)*p);
	}
	o = json_pack("{s:s,s:f,s:f,s:f,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,"
	              "s:s,s:s,s:s,s:s,s:s,s:b,s:s}",
	              "currencyCode", "USD", "tierMinimumUnits", 0.0,
	              "retailPrice", price, "unitPrice", price,
	              "armRegionName", r->region, "location",
	              display_location(r->region), "effectiveStartDate",
	              "2024-01-01T00:00:00Z", "meterId", meter, "meterName",
	              skuname, "productId", pid, "skuId", skuid,
	              "productName", prod, "skuName", skuname, "serviceName",
	              "Virtual Machines", "serviceId", "DZH313Z7MMC8",
	              "serviceFamily", "Compute", "unitOfMeasure", "1 Hour",
	              "type", "Consumption", "isPrimaryMeterRegion", 1,
	              "armSkuName", t->type);
	free(sku);
	free(ser);
	free(skuname);
	free(prod);
	return o;
}

void az_prices(az_ctx *c)
{
	const char *api = sim_req_qarg(c->req, "api-version");
	const char *flt = sim_req_qarg(c->req, "$filter");
	const char *skip_s = sim_req_qarg(c->req, "$skip");
	const sim_catalog *cat = &sim_g.cat[SIM_AZURE];
	az_filter *flt_ast = NULL;
	size_t idx = 0, count = 0;
	int64_t skip = 0, page = sim_g.sc.az_price_page;
	int cs = api && strcmp(api, "2023-01-01-preview") >= 0;
	char why[256], msg[300];
	json_t *items = json_array(), *out;
	int more = 0;
	if (flt && az_filter_parse(flt, &flt_ast, why, sizeof(why)) != 0) {
		json_decref(items);
		snprintf(msg, sizeof(msg), "Invalid $filter: %s", why);
		sim_resp_json(c->resp, 400,
		              json_pack("{s:{s:s,s:s}}", "error", "code",
		                        "BadRequest", "message", msg));
		return;
	}
	if (skip_s && (gb_parse_int64(skip_s, &skip) != 0 || skip < 0)) {
		az_filter_free(flt_ast);
		json_decref(items);
		sim_resp_json(c->resp, 400,
		              json_pack("{s:{s:s,s:s}}", "error", "code",
		                        "BadRequest", "message",
		                        "$skip must be a non-negative integer"));
		return;
	}
	for (size_t i = 0; i < cat->ntypes && !more; i++) {
		const sim_ctype *t = &cat->types[i];
		for (size_t j = 0; j < t->nregs && !more; j++) {
			const sim_creg *r = &t->regs[j];
			for (int kind = 0; kind < 3 && !more; kind++) {
				json_t *it;
				if (kind != 1 && r->on_demand < 0)
					continue;
				if (kind == 1 && r->spot < 0)
					continue;
				it = item(t, r, kind);
				if (!az_filter_match(flt_ast, it, cs)) {
					json_decref(it);
					continue;
				}
				if ((int64_t)idx++ < skip) {
					json_decref(it);
					continue;
				}
				if ((int64_t)count == page) {
					json_decref(it);
					more = 1;
					break;
				}
				json_array_append_new(items, it);
				count++;
			}
		}
	}
	out = json_pack("{s:s,s:s,s:s,s:o}", "BillingCurrency", "USD",
	                "CustomerEntityId", "Default", "CustomerEntityType",
	                "Retail", "Items", items);
	if (more) {
		char *ef = flt ? sim_url_encode(flt) : NULL;
		char *av = sim_url_encode(api ? api : "2023-01-01-preview");
		char *link = gb_xasprintf("%s/api/retail/prices?api-version=%s"
		                          "%s%s&$skip=%lld", sim_g.url[1], av,
		                          ef ? "&$filter=" : "", ef ? ef : "",
		                          (long long)(skip + page));
		json_object_set_new(out, "NextPageLink", json_string(link));
		free(link);
		free(ef);
		free(av);
	} else {
		json_object_set_new(out, "NextPageLink", json_null());
	}
	json_object_set_new(out, "Count", json_integer((json_int_t)count));
	sim_resp_json(c->resp, 200, out);
	az_filter_free(flt_ast);
}
