/* gcp_prices.c -- refresh_prices from the Cloud Billing Catalog:
 * GET {billing}/services/6F81-5844-456A/skus?currencyCode=USD&pageSize=5000
 * &pageToken=..., price = units + nanos/1e9 of the first tiered rate.
 *
 * A GCE GPU VM is priced as separate SKUs: vCPU x "<F> Instance Core",
 * GB x "<F> Instance Ram" and GPUs x "Nvidia ... GPU", each "running in
 * <region group>" with serviceRegions listing the regions; usageType
 * OnDemand is the on-demand price, Preemptible the Spot price ("Spot
 * Preemptible ..." descriptions).  N1 uses "N1 Predefined Instance
 * Core/Ram".  Offers are emitted for the shipped catalog's types with its
 * shape (GPUs, vCPUs, RAM, zones).  A type with any component missing is
 * skipped (logged).  Approximations are listed in README.md. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drvc_catalog.h"
#include "drvc_enc.h"
#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_shapes.h"
#include "drvc_util.h"
#include "gcp.h"

/* ------------------------------------------------------------- parsing */

static int tier_price(const json_t *sku, double *out)
{
	const json_t *info = json_array_get(json_object_get(sku, "pricingInfo"), 0);
	const json_t *tiers = drvc_jpath(info, "pricingExpression.tieredRates");
	const json_t *t, *best = NULL;
	size_t i;
	int64_t units = 0, nanos = 0;
	if (!json_is_array(tiers))
		return -1;
	json_array_foreach(tiers, i, t) {
		double start = 0;
		drvc_jnum(json_object_get(t, "startUsageAmount"), &start);
		if (!best || start == 0)
			best = t;
		if (start == 0)
			break;
	}
	t = json_object_get(best, "unitPrice");
	if (!json_is_object(t))
		return -1;
	{
		const char *cur = drvc_jstr(t, "currencyCode");
		if (cur && strcasecmp(cur, "USD") != 0)
			return -1;
	}
	if (json_object_get(t, "units") &&
	    drvc_jint(json_object_get(t, "units"), &units) != 0)
		return -1;
	if (json_object_get(t, "nanos") &&
	    drvc_jint(json_object_get(t, "nanos"), &nanos) != 0)
		return -1;
	if (units < 0 || units > 1000000 || nanos < -999999999 ||
	    nanos > 999999999)
		return -1;
	*out = (double)units + (double)nanos / 1e9;
	return 0;
}

int gcp_parse_sku_page(const char *body, size_t len,
                       void (*fn)(void *ud, const gcp_sku *sku), void *ud,
                       char **next, gb_error *err)
{
	json_t *root = drvc_json_buf(body, len, DRVC_MAX_BODY,
	                             "GCP billing SKU page", err);
	const json_t *skus, *s;
	const char *tok;
	size_t i;

	*next = NULL;
	if (!root)
		return -1;
	skus = json_object_get(root, "skus");
	if (skus && !json_is_array(skus)) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedResponse",
		         "GCP billing SKU page: \"skus\" is not a list");
		json_decref(root);
		return -1;
	}
	json_array_foreach(skus, i, s) {
		gcp_sku k;
		memset(&k, 0, sizeof(k));
		k.description = drvc_jstr(s, "description");
		k.usage = drvc_jpath_str(s, "category.usageType");
		k.group = drvc_jpath_str(s, "category.resourceGroup");
		k.regions = json_object_get(s, "serviceRegions");
		if (!k.description || !k.usage || !json_is_array(k.regions) ||
		    tier_price(s, &k.price) != 0 || k.price <= 0)
			continue;
		fn(ud, &k);
	}
	tok = drvc_jstr(root, "nextPageToken");
	if (tok && *tok)
		*next = drvc_xstrdup(tok);
	json_decref(root);
	return 0;
}

/* ------------------------------------------------------------ mapping */

typedef struct part {
	char prefix[80];    /* lower case, e.g. "a2 instance core" */
	char region[64];
	int spot;
	double price;       /* 0 = not found */
} part;

/* Per shape (drvc_shape.ext): the SKU description prefixes that price
 * it, lower case. */
typedef struct skus {
	char core[80], ram_p[80], gpu_p[80];
	int ngpu;           /* GPUs priced */
} skus;

typedef struct state {
	drvc_shapes sh;
	part *parts;
	size_t nparts;
} state;

/* Description prefixes of the SKUs that price a machine type. */
static int prefixes(const char *type, int catalog_gpus, skus *sh)
{
	gcp_type t;
	gb_error e;
	const char *fam, *gpu = NULL;
	char famu[40];
	if (gcp_parse_type(type, &t, &e) != 0)
		return -1;
	sh->ngpu = catalog_gpus;
	if (strncmp(t.machine, "n1-", 3) == 0) {
		fam = "N1 Predefined";
		sh->ngpu = t.accel_count;
		if (!strcmp(t.accel, "nvidia-tesla-t4"))
			gpu = "Nvidia Tesla T4 GPU";
		else if (!strcmp(t.accel, "nvidia-tesla-v100"))
			gpu = "Nvidia Tesla V100 GPU";
		else if (!strcmp(t.accel, "nvidia-tesla-p100"))
			gpu = "Nvidia Tesla P100 GPU";
		else if (!strcmp(t.accel, "nvidia-tesla-p4"))
			gpu = "Nvidia Tesla P4 GPU";
		else if (!strcmp(t.accel, "nvidia-l4"))
			gpu = "Nvidia L4 GPU";
	} else if (strncmp(t.machine, "a2-ultragpu", 11) == 0) {
		fam = "A2";
		gpu = "Nvidia Tesla A100 80GB GPU";
	} else if (strncmp(t.machine, "a2-", 3) == 0) {
		fam = "A2";
		gpu = "Nvidia Tesla A100 GPU";
	} else if (strncmp(t.machine, "a3-megagpu", 10) == 0) {
		fam = "A3 Mega";
		gpu = "Nvidia H100 80GB Mega GPU";
	} else if (strncmp(t.machine, "a3-ultragpu", 11) == 0) {
		fam = "A3 Ultra";
		gpu = "Nvidia H200 141GB GPU";
	} else if (strncmp(t.machine, "a3-", 3) == 0) {
		fam = "A3";
		gpu = "Nvidia H100 80GB GPU";
	} else if (strncmp(t.machine, "g2-", 3) == 0) {
		fam = "G2";
		gpu = "Nvidia L4 GPU";
	} else {
		return -1;
	}
	if (!gpu)
		return -1;
	snprintf(famu, sizeof(famu), "%s", fam);
	snprintf(sh->core, sizeof(sh->core), "%s Instance Core", famu);
	snprintf(sh->ram_p, sizeof(sh->ram_p), "%s Instance Ram", famu);
	snprintf(sh->gpu_p, sizeof(sh->gpu_p), "%s", gpu);
	for (char *p = sh->core; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	for (char *p = sh->ram_p; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	for (char *p = sh->gpu_p; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return 0;
}

static void need(state *s, const char *prefix, const char *region)
{
	for (int spot = 0; spot < 2; spot++) {
		int have = 0;
		for (size_t i = 0; i < s->nparts; i++)
			if (!strcmp(s->parts[i].prefix, prefix) &&
			    !strcmp(s->parts[i].region, region) &&
			    s->parts[i].spot == spot)
				have = 1;
		if (have)
			continue;
		s->parts = drvc_xrealloc(s->parts, (s->nparts + 1) * sizeof(part));
		memset(&s->parts[s->nparts], 0, sizeof(part));
		snprintf(s->parts[s->nparts].prefix, 80, "%s", prefix);
		snprintf(s->parts[s->nparts].region, 64, "%s", region);
		s->parts[s->nparts].spot = spot;
		s->nparts++;
	}
}

static double part_price(state *s, const char *prefix, const char *region,
                         int spot)
{
	for (size_t i = 0; i < s->nparts; i++)
		if (!strcmp(s->parts[i].prefix, prefix) &&
		    !strcmp(s->parts[i].region, region) && s->parts[i].spot == spot)
			return s->parts[i].price;
	return 0;
}

static int add_offer(void *ud, const gb_offer *o)
{
	state *s = ud;
	int is_new;
	drvc_shape *sh = drvc_shapes_add(&s->sh, o, &is_new);
	skus *k = sh->ext;
	if (is_new && prefixes(o->instance_type, o->gpu_count, k) == 0) {
		need(s, k->core, sh->region);
		need(s, k->ram_p, sh->region);
		need(s, k->gpu_p, sh->region);
	}
	return 0;
}

/* "Spot Preemptible Nvidia L4 GPU attached to Spot VMs running in X" ->
 * "nvidia l4 gpu running in x". */
static void normalize(const char *d, char *out, size_t cap)
{
	static const char *const drop_prefix[] = {"spot preemptible ",
	                                          "preemptible ", NULL};
	static const char *const drop_mid[] = {
		" attached to spot preemptible vms", " attached to spot vms",
		" attached to preemptible vms", NULL};
	size_t o = 0;
	char *p;
	for (size_t i = 0; d[i] && o + 1 < cap; i++)
		out[o++] = (char)tolower((unsigned char)d[i]);
	out[o] = '\0';
	for (int i = 0; drop_prefix[i]; i++) {
		size_t n = strlen(drop_prefix[i]);
		if (strncmp(out, drop_prefix[i], n) == 0) {
			memmove(out, out + n, strlen(out + n) + 1);
			break;
		}
	}
	for (int i = 0; drop_mid[i]; i++)
		if ((p = strstr(out, drop_mid[i])) != NULL) {
			size_t n = strlen(drop_mid[i]);
			memmove(p, p + n, strlen(p + n) + 1);
		}
}

static void take_sku(void *ud, const gcp_sku *k)
{
	state *s = ud;
	char norm[256];
	int spot;
	if (!strcasecmp(k->usage, "OnDemand"))
		spot = 0;
	else if (!strcasecmp(k->usage, "Preemptible"))
		spot = 1;
	else
		return;
	normalize(k->description, norm, sizeof(norm));
	for (size_t i = 0; i < s->nparts; i++) {
		part *p = &s->parts[i];
		size_t n = strlen(p->prefix);
		json_t *r;
		size_t j;
		if (p->spot != spot || p->price > 0 ||
		    strncmp(norm, p->prefix, n) != 0 ||
		    strncmp(norm + n, " running in ", 12) != 0)
			continue;
		json_array_foreach(k->regions, j, r)
			if (json_is_string(r) &&
			    !strcmp(json_string_value(r), p->region)) {
				p->price = k->price;
				break;
			}
	}
}

static void free_state(state *s)
{
	drvc_shapes_free(&s->sh);
	free(s->parts);
}

static int fetch_skus(gcp_ctx *c, state *s, gb_error *err)
{
	const gb_host *h = c->host;
	char *token = NULL;
	const char *what = "billing catalog SKUs of Compute Engine";
	int pages = 0, rc = 0;
	for (;;) {
		gb_http_resp resp;
		char *url, *next = NULL;
		if (++pages > GCP_MAX_PAGES) {
			drvc_err(err, GB_ERR_INTERNAL, 0, "TooManyPages",
			         "GCP %s: more than %d pages", what, GCP_MAX_PAGES);
			rc = -1;
			break;
		}
		if (token) {
			char *tenc = drvc_pct_encode_str(token);
			url = drvc_xasprintf("%s/services/%s/skus?currencyCode=USD&"
			                     "pageSize=5000&pageToken=%s",
			                     c->billing, GCP_COMPUTE_SERVICE, tenc);
			free(tenc);
		} else {
			url = drvc_xasprintf("%s/services/%s/skus?currencyCode=USD&"
			                     "pageSize=5000",
			                     c->billing, GCP_COMPUTE_SERVICE);
		}
		rc = gcp_api(c, "GET", url, NULL, "billing", what, &resp, err);
		free(url);
		if (rc == 0)
			rc = drvc_json_ctype_ok(&resp, what, err);
		if (rc == 0)
			rc = gcp_parse_sku_page(resp.body, resp.body_len, take_sku, s,
			                        &next, err);
		h->http_free(h->ctx, &resp);
		free(token);
		token = next;
		if (rc != 0 || !token)
			break;
	}
	free(token);
	return rc;
}

int gcp_refresh_prices(void *ctx, const char *region, gb_offer_cb emit,
                       void *ud, gb_error *err)
{
	gcp_ctx *c = ctx;
	const gb_host *h = c->host;
	char path[4096], source[600];
	state s;
	int64_t now = h->now_ms(h->ctx) / 1000;
	int rc;

	memset(&s, 0, sizeof(s));
	s.sh.ext_size = sizeof(skus);
	if (drvc_creds_ok(c->auth_problem, err) != 0)
		return -1;
	if (!drvc_catalog_path(h, "gcp", path, sizeof(path))) {
		drvc_err(err, GB_ERR_NOT_FOUND, 0, "CatalogMissing",
		         "GCP refresh_prices needs the shipped catalog for the "
		         "machine shapes: set option catalog or data_dir");
		return -1;
	}
	if (drvc_catalog_emit(path, region, add_offer, &s, err) != 0) {
		free_state(&s);
		return -1;
	}
	rc = s.nparts ? fetch_skus(c, &s, err) : 0;
	snprintf(source, sizeof(source), "gcp-billing-catalog %s", c->billing);
	for (size_t i = 0; i < s.sh.n && rc == 0; i++) {
		drvc_shape *sh = &s.sh.v[i];
		const skus *k = sh->ext;
		for (int spot = 0; spot < 2 && k->core[0]; spot++) {
			double core = part_price(&s, k->core, sh->region, spot);
			double ram = part_price(&s, k->ram_p, sh->region, spot);
			double gpu = part_price(&s, k->gpu_p, sh->region, spot);
			if (core > 0 && ram > 0 && gpu > 0)
				sh->price[spot] = core * sh->vcpus + ram * sh->ram +
				                  gpu * k->ngpu;
		}
		if (sh->price[0] <= 0 && sh->price[1] <= 0) {
			if (h->log)
				h->log(h->ctx, GB_LOG_WARN,
				       "gcp: no complete billing-catalog price for %s "
				       "in %s", sh->type, sh->region);
			continue;
		}
		if (drvc_shape_emit(sh, source, now, emit, ud))
			break;
	}
	free_state(&s);
	return rc;
}
