/* azure_prices.c -- refresh_prices from the public Retail Prices API:
 * GET {prices}?api-version=2023-01-01-preview&$filter=serviceName eq
 * 'Virtual Machines' and armRegionName eq '<r>' and priceType eq
 * 'Consumption' and (armSkuName eq '<t1>' or ...), following
 * NextPageLink.  Windows rows (productName) and Low Priority rows are
 * skipped; rows whose skuName/meterName ends in " Spot" are spot prices.
 * Offers are emitted for the types of the shipped catalog, with the
 * catalog's shape (GPUs, vCPUs, RAM, zones) and the fresh prices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"
#include "drvc_bearer.h"
#include "drvc_catalog.h"
#include "drvc_enc.h"
#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_shapes.h"
#include "drvc_util.h"

#define TYPES_PER_QUERY 15

/* ------------------------------------------------------------- parsing */

static int ends_with(const char *s, const char *suf)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suf);
	return a >= b && strcasecmp(s + a - b, suf) == 0;
}

int azure_parse_price_page(const char *body, size_t len,
                           void (*fn)(void *ud, const azure_price_row *row),
                           void *ud, char **next, gb_error *err)
{
	json_t *root = drvc_json_buf(body, len, DRVC_MAX_BODY,
	                             "Azure Retail Prices page", err);
	const json_t *items, *it;
	const char *nl;
	size_t i;

	*next = NULL;
	if (!root)
		return -1;
	items = json_object_get(root, "Items");
	if (!json_is_array(items)) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedResponse",
		         "Azure Retail Prices page has no \"Items\" array");
		json_decref(root);
		return -1;
	}
	json_array_foreach(items, i, it) {
		azure_price_row row;
		const char *type = drvc_jstr(it, "type");
		const char *product = drvc_jstr(it, "productName");
		const char *skuname = drvc_jstr(it, "skuName");
		const char *meter = drvc_jstr(it, "meterName");
		const char *cur = drvc_jstr(it, "currencyCode");
		const char *unit = drvc_jstr(it, "unitOfMeasure");
		memset(&row, 0, sizeof(row));
		row.sku = drvc_jstr(it, "armSkuName");
		row.region = drvc_jstr(it, "armRegionName");
		row.start = drvc_jstr(it, "effectiveStartDate");
		if (!row.sku || !row.region ||
		    drvc_jnum(json_object_get(it, "retailPrice"), &row.price) ||
		    row.price <= 0 || row.price > 1e6)
			continue;
		if (type && strcasecmp(type, "Consumption") != 0)
			continue;
		if (cur && strcasecmp(cur, "USD") != 0)
			continue;
		if (unit && strcasecmp(unit, "1 Hour") != 0)
			continue;
		if (product && strcasestr(product, "Windows"))
			continue;
		if ((skuname && strcasestr(skuname, "Low Priority")) ||
		    (meter && strcasestr(meter, "Low Priority")))
			continue;
		row.spot = ends_with(skuname, " Spot") || ends_with(meter, " Spot");
		fn(ud, &row);
	}
	nl = drvc_jstr(root, "NextPageLink");
	if (nl && *nl)
		*next = drvc_xstrdup(nl);
	json_decref(root);
	return 0;
}

/* ---------------------------------------------------- catalog shapes */

/* Per shape (drvc_shape.ext): the effectiveStartDate of each price. */
typedef struct starts {
	char od[40], spot[40];
} starts;

typedef drvc_shapes shapes;

static int add_offer(void *ud, const gb_offer *o)
{
	int is_new;
	drvc_shapes_add(ud, o, &is_new);
	return 0;
}

static void take_row(void *ud, const azure_price_row *row)
{
	shapes *s = ud;
	drvc_shape *sh = drvc_shapes_find(s, row->sku, row->region);
	const char *start = row->start ? row->start : "";
	double *price;
	char *best;
	if (!sh)
		return;
	price = &sh->price[row->spot ? 1 : 0];
	best = row->spot ? ((starts *)sh->ext)->spot : ((starts *)sh->ext)->od;
	/* The newest effectiveStartDate wins (ISO dates sort as text). */
	if (*price > 0 && strcmp(start, best) < 0)
		return;
	*price = row->price;
	snprintf(best, 40, "%s", start);
}

/* ---------------------------------------------------------- fetching */

static int fetch_region(azure_ctx *c, shapes *s, const char *region,
                        gb_error *err)
{
	const gb_host *h = c->host;
	size_t idx = 0;
	for (;;) {
		drvc_buf f = DRVC_BUF_INIT;
		char *filter, *enc, *url, what[160];
		size_t k = 0;
		int pages = 0;
		/* The next chunk of this region's types. */
		drvc_buf_addf(&f, "serviceName eq 'Virtual Machines' and "
		                  "armRegionName eq '%s' and priceType eq "
		                  "'Consumption' and (", region);
		for (; idx < s->n && k < TYPES_PER_QUERY; idx++) {
			if (strcasecmp(s->v[idx].region, region) != 0 ||
			    strchr(s->v[idx].type, '\''))
				continue;
			drvc_buf_addf(&f, "%sarmSkuName eq '%s'", k ? " or " : "",
			              s->v[idx].type);
			k++;
		}
		drvc_buf_adds(&f, ")");
		filter = drvc_buf_take(&f);
		if (!filter)
			abort();
		if (k == 0) {
			free(filter);
			return 0;
		}
		enc = drvc_pct_encode_str(filter);
		url = drvc_xasprintf("%s?api-version=%s&currencyCode=USD&$filter=%s",
		                     c->prices, AZURE_API_PRICES, enc);
		free(enc);
		free(filter);
		snprintf(what, sizeof(what), "Retail Prices for %s", region);
		while (url) {
			gb_http_resp resp;
			azure_what w = {c, what};
			/* public API: no token */
			drvc_call call = drvc_call_make(h, NULL, 0, NULL, NULL,
			                                azure_classify, &w);
			char *next = NULL;
			int rc;
			if (++pages > AZURE_MAX_PAGES) {
				drvc_err(err, GB_ERR_INTERNAL, 0, "TooManyPages",
				         "Azure %s: more than %d pages", what,
				         AZURE_MAX_PAGES);
				free(url);
				return -1;
			}
			rc = drvc_call_json(&call, "GET", url, NULL, NULL,
			                    "retail-prices", &resp, err);
			if (rc == 0)
				rc = drvc_json_ctype_ok(&resp, what, err);
			if (rc == 0)
				rc = azure_parse_price_page(resp.body, resp.body_len,
				                            take_row, s, &next, err);
			h->http_free(h->ctx, &resp);
			free(url);
			url = NULL;
			if (rc != 0) {
				free(next);
				return -1;
			}
			if (next && strncasecmp(next, "https://", 8) != 0 &&
			    !drvc_same_origin(next, c->prices)) {
				drvc_err(err, GB_ERR_INVALID, 0, "UntrustedNextLink",
				         "Azure %s: NextPageLink is neither https nor on "
				         "the prices endpoint", what);
				free(next);
				return -1;
			}
			url = next;
		}
	}
}

int azure_refresh_prices(void *ctx, const char *region, gb_offer_cb emit,
                         void *ud, gb_error *err)
{
	azure_ctx *c = ctx;
	const gb_host *h = c->host;
	char path[4096], source[600];
	shapes s = {NULL, 0, sizeof(starts), 1};
	int64_t now = h->now_ms(h->ctx) / 1000;
	int rc = 0;

	if (!drvc_catalog_path(h, "azure", path, sizeof(path))) {
		drvc_err(err, GB_ERR_NOT_FOUND, 0, "CatalogMissing",
		         "Azure refresh_prices needs the shipped catalog for the "
		         "VM shapes: set option catalog or data_dir");
		return -1;
	}
	if (drvc_catalog_emit(path, region, add_offer, &s, err) != 0) {
		drvc_shapes_free(&s);
		return -1;
	}
	snprintf(source, sizeof(source), "azure-retail-prices %s", c->prices);
	/* One round of queries per region (types in chunks). */
	for (size_t i = 0; i < s.n && rc == 0; i++) {
		int seen = 0;
		for (size_t j = 0; j < i; j++)
			if (strcasecmp(s.v[j].region, s.v[i].region) == 0)
				seen = 1;
		if (!seen)
			rc = fetch_region(c, &s, s.v[i].region, err);
	}
	for (size_t i = 0; i < s.n && rc == 0; i++) {
		drvc_shape *sh = &s.v[i];
		if (sh->price[0] <= 0 && sh->price[1] <= 0) {
			if (h->log)
				h->log(h->ctx, GB_LOG_WARN,
				       "azure: no retail price for %s in %s", sh->type,
				       sh->region);
			continue;
		}
		if (drvc_shape_emit(sh, source, now, emit, ud))
			break;
	}
	drvc_shapes_free(&s);
	return rc;
}
