/*
 * azure_prices.c -- the Azure Retail Prices API (GET /api/retail/prices),
 * public and unauthenticated like the real one, priced from the Azure
 * catalog.  Per (size, region) it lists a Linux Consumption row, a Linux
 * Spot row (skuName/meterName ending in " Spot") when the catalog has a
 * spot price, and a Windows Consumption row (productName ending in
 * " Windows"; its price is the Linux price plus 0.046 USD per vCPU, a
 * stand-in so clients must filter Windows out as with the real API).
 *
 * $filter: clauses `FIELD eq 'VALUE'` joined with `and`; FIELD is one of
 * the item fields below (priceType means `type`).  Values are
 * case-sensitive from api-version 2023-01-01-preview on.  Paging: $skip,
 * NextPageLink; page size paging.azure_prices (default 100).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"

typedef struct clause {
	char *field;
	char *value;
} clause;

static const char *const fields[] = {
	"armRegionName", "armSkuName", "serviceName", "priceType", "type",
	"skuName", "meterName", "productName", "location", "serviceFamily",
	"currencyCode", "unitOfMeasure", "meterId", "skuId", "productId",
	"serviceId", NULL,
};

static void clauses_free(clause *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].field);
		free(c[i].value);
	}
	free(c);
}

static void skip_ws(const char **p)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
}

/* Parses the filter; -1 with why on a syntax error. */
static int parse_filter(const char *f, clause **out, size_t *n, char *why,
                        size_t cap)
{
	const char *p = f;
	clause *v = NULL;
	size_t k = 0;
	*out = NULL;
	*n = 0;
	skip_ws(&p);
	if (!*p)
		return 0;
	for (;;) {
		const char *s;
		gb_buf val = GB_BUF_INIT;
		int known = 0;
		skip_ws(&p);
		s = p;
		while (isalnum((unsigned char)*p))
			p++;
		if (p == s) {
			snprintf(why, cap, "expected a field name at '%s'", s);
			goto bad;
		}
		v = gb_xrealloc(v, (k + 1) * sizeof(*v));
		v[k].field = gb_xstrndup(s, (size_t)(p - s));
		v[k].value = NULL;
		k++;
		for (size_t i = 0; fields[i]; i++)
			if (strcasecmp(fields[i], v[k - 1].field) == 0)
				known = 1;
		if (!known) {
			snprintf(why, cap, "unknown field '%s'", v[k - 1].field);
			goto bad;
		}
		skip_ws(&p);
		if (strncasecmp(p, "eq", 2) != 0 || (p[2] != ' ' && p[2] != '\t')) {
			snprintf(why, cap, "only 'eq' comparisons are supported "
			         "(at '%s')", p);
			goto bad;
		}
		p += 2;
		skip_ws(&p);
		if (*p != '\'') {
			snprintf(why, cap, "expected a quoted value at '%s'", p);
			goto bad;
		}
		p++;
		for (;;) {
			if (!*p) {
				gb_buf_free(&val);
				snprintf(why, cap, "unterminated string");
				goto bad;
			}
			if (*p == '\'' && p[1] == '\'') {
				gb_buf_putc(&val, '\'');
				p += 2;
				continue;
			}
			if (*p == '\'')
				break;
			gb_buf_putc(&val, *p++);
		}
		p++;
		v[k - 1].value = gb_buf_take(&val);
		skip_ws(&p);
		if (!*p)
			break;
		if (strncasecmp(p, "and", 3) != 0 ||
		    (p[3] != ' ' && p[3] != '\t')) {
			snprintf(why, cap, "expected 'and' at '%s'", p);
			goto bad;
		}
		p += 3;
	}
	*out = v;
	*n = k;
	return 0;
bad:
	clauses_free(v, k);
	return -1;
}

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

static int matches(const json_t *it, const clause *cl, size_t n, int cs)
{
	for (size_t i = 0; i < n; i++) {
		const char *f = cl[i].field;
		const json_t *v;
		const char *s;
		if (strcasecmp(f, "priceType") == 0)
			f = "type";
		v = json_object_get(it, f);
		if (!v) {
			for (size_t k = 0; fields[k] && !v; k++)
				if (strcasecmp(fields[k], f) == 0)
					v = json_object_get(it, fields[k]);
		}
		s = json_string_value(v);
		if (!s)
			return 0;
		if (cs ? strcmp(s, cl[i].value) != 0
		       : strcasecmp(s, cl[i].value) != 0)
			return 0;
	}
	return 1;
}

void az_prices(az_ctx *c)
{
	const char *api = sim_req_qarg(c->req, "api-version");
	const char *flt = sim_req_qarg(c->req, "$filter");
	const char *skip_s = sim_req_qarg(c->req, "$skip");
	const sim_catalog *cat = &sim_g.cat[SIM_AZURE];
	clause *cl = NULL;
	size_t ncl = 0, idx = 0, count = 0;
	int64_t skip = 0, page = sim_g.sc.az_price_page;
	int cs = api && strcmp(api, "2023-01-01-preview") >= 0;
	char why[256];
	json_t *items = json_array(), *out;
	int more = 0;
	if (flt && parse_filter(flt, &cl, &ncl, why, sizeof(why)) != 0) {
		json_decref(items);
		sim_resp_json(c->resp, 400,
		              json_pack("{s:{s:s,s:s}}", "error", "code",
		                        "BadRequest", "message", why));
		return;
	}
	if (skip_s && (gb_parse_int64(skip_s, &skip) != 0 || skip < 0)) {
		clauses_free(cl, ncl);
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
				if (!matches(it, cl, ncl, cs)) {
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
	clauses_free(cl, ncl);
}
