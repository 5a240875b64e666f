/* gcp_describe.c -- describe by name (GET in the remembered zone, else an
 * aggregatedList filtered by name) or by labels: GET
 * projects/{p}/aggregated/instances?filter=labels.gpubroker-pool = "x" AND
 * ...&maxResults=500, following nextPageToken; items is a map
 * "zones/<z>" -> {instances: [...]} or {warning: NO_RESULTS_ON_PAGE}.
 * Each instance is emitted from the page it came on as the streaming
 * scanner (drvc_scan.h) closes its object, its strings borrowed from the
 * scanner (gcp_inst_scan): no tree is built and nothing is kept past it.  An error on a later page fails the describe after earlier pages
 * were emitted, as the EC2 driver's paging does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drvc_enc.h"
#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_util.h"
#include "gcp.h"

static const char *const agg_tops[] = { "nextPageToken", "items" };

typedef struct agg_page {
	int (*fn)(void *ud, gcp_inst *inst);
	void *ud;
} agg_page;

static int agg_elem(void *ud, const drvc_scan_elem *e)
{
	agg_page *p = ud;
	gcp_inst inst;
	int stop = 0;
	if (gcp_inst_scan(e, &inst) == 0)
		stop = p->fn(p->ud, &inst);
	gcp_inst_free(&inst);
	return stop;
}

int gcp_parse_agg_page(const char *body, size_t len,
                       int (*fn)(void *ud, gcp_inst *inst), void *ud,
                       char **next, gb_error *err)
{
	/* items is a map "zones/<z>" -> {instances: [...]} or {warning:
	 * NO_RESULTS_ON_PAGE}: each instance is scanned as its object
	 * closes, no tree built (drvc_scan.h) */
	static const drvc_scan_spec spec = {
		"items.*.instances[]", gcp_inst_members, GCP_INST_NMEMBERS,
		agg_tops, 2, DRVC_MAX_BODY, "GCE aggregated instance list",
	};
	agg_page p = { fn, ud };
	drvc_scan *sc;
	const char *tok;
	char items;
	int rc;

	*next = NULL;
	sc = drvc_scan_new(&spec, agg_elem, &p);
	if (!sc)
		abort(); /* the spec above is well-formed */
	rc = drvc_scan_run(sc, body, len, err);
	items = drvc_scan_top_kind(sc, 1);
	if (rc == 0 && items && items != DRVC_SCAN_OBJECT) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedResponse",
		         "GCE aggregated instance list: \"items\" is not a map");
		rc = -1;
	}
	tok = drvc_scan_top(sc, 0);
	if (rc == 0 && tok && *tok)
		*next = drvc_xstrdup(tok);
	drvc_scan_free(sc);
	return rc;
}

/* The partial response the listing asks for (the `fields` system
 * parameter, https://cloud.google.com/compute/docs/api/how-tos/performance
 * #partial-response): the members gcp_inst_members names and the page
 * token, about half the bytes of whole Instance objects. Keep it in step
 * with gcp_inst_parse. */
static const char list_fields[] =
	"items/*/instances(name,zone,machineType,status,creationTimestamp,"
	"labels,scheduling(provisioningModel,preemptible),"
	"networkInterfaces(networkIP,accessConfigs/natIP),"
	"guestAccelerators(acceleratorType,acceleratorCount)),nextPageToken";

int gcp_agg_list(gcp_ctx *c, const char *filter,
                 int (*fn)(void *ud, gcp_inst *inst), void *ud,
                 gb_error *err)
{
	const gb_host *h = c->host;
	char *token = NULL, *fenc = drvc_pct_encode_str(filter);
	char *penc = drvc_pct_encode_str(c->project);
	char *flds = drvc_pct_encode_str(list_fields);
	char what[] = "aggregated instance list";
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
			url = drvc_xasprintf("%sprojects/%s/aggregated/instances?"
			                     "filter=%s&maxResults=500&fields=%s"
			                     "&pageToken=%s", c->compute, penc,
			                     fenc, flds, tenc);
			free(tenc);
		} else {
			url = drvc_xasprintf("%sprojects/%s/aggregated/instances?"
			                     "filter=%s&maxResults=500&fields=%s",
			                     c->compute, penc, fenc, flds);
		}
		rc = gcp_api(c, "GET", url, NULL, "gce-list", what, &resp, err);
		free(url);
		if (rc == 0)
			rc = drvc_json_ctype_ok(&resp, "GCP aggregated instance list",
			                        err);
		if (rc == 0)
			rc = gcp_parse_agg_page(resp.body, resp.body_len, fn, ud,
			                        &next, err);
		h->http_free(h->ctx, &resp);
		free(token);
		token = next;
		if (rc != 0 || !token)
			break;
	}
	free(token);
	free(fenc);
	free(penc);
	free(flds);
	return rc < 0 ? -1 : 0;
}

typedef struct collect {
	gcp_ctx *c;
	const gb_describe_req *req;
	const char *want_name;   /* by-name lookups */
	char pool[64], broker[64], token[64];
	gb_instance_cb emit;
	void *ud;
	int stopped;             /* the caller's emit asked to stop */
} collect;

static int label_is(const gcp_inst *inst, const char *key, const char *want)
{
	const char *v;
	if (!want || !*want)
		return 1;
	v = gcp_inst_label(inst, key);
	return v && strcmp(v, want) == 0;
}

static int collect_fn(void *ud, gcp_inst *inst)
{
	collect *col = ud;
	if (col->want_name) {
		if (strcmp(inst->name, col->want_name) != 0)
			return 0;
	} else if (!label_is(inst, GB_TAG_POOL, col->pool) ||
	           !label_is(inst, GB_TAG_BROKER, col->broker) ||
	           !label_is(inst, GB_TAG_TOKEN, col->token) ||
	           !gcp_zone_in_region(inst->zone, col->req->region)) {
		return 0;
	}
	/* emitted from the page it came on: nothing kept past it */
	gcp_zone_remember(col->c, inst->name, inst->zone);
	if (gcp_emit_inst(col->c, inst, col->emit, col->ud)) {
		col->stopped = 1;
		return 1;
	}
	return 0;
}

static int name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 63)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '-'))
			return 0;
	return 1;
}

/* Finds one instance by name: in the remembered zone, else by listing. */
static int by_name(gcp_ctx *c, collect *col, const char *name, gb_error *err)
{
	char *zone = gcp_zone_lookup(c, name);
	if (!name_ok(name)) {
		free(zone);
		return 0;
	}
	if (zone) {
		gcp_inst inst;
		int r = gcp_get_inst(c, zone, name, &inst, err);
		free(zone);
		if (r < 0)
			return -1;
		if (r == 1)
			collect_fn(col, &inst);
		else
			gcp_zone_forget(c, name);
		gcp_inst_free(&inst);
		return 0;
	} else {
		char *filter = drvc_xasprintf("name = \"%s\"", name);
		int r;
		col->want_name = name;
		r = gcp_agg_list(c, filter, collect_fn, col, err);
		col->want_name = NULL;
		free(filter);
		return r;
	}
}

int gcp_describe(void *ctx, const gb_describe_req *req, gb_instance_cb emit,
                 void *ud, gb_error *err)
{
	gcp_ctx *c = ctx;
	collect col;
	int rc = 0;

	if (gcp_require(c, err) != 0)
		return -1;
	memset(&col, 0, sizeof(col));
	col.c = c;
	col.req = req;
	col.emit = emit;
	col.ud = ud;
	if (req->pool && *req->pool)
		gcp_label_value(req->pool, col.pool);
	if (req->broker_id && *req->broker_id)
		gcp_label_value(req->broker_id, col.broker);
	if (req->token && *req->token)
		gcp_label_value(req->token, col.token);

	if (req->nids) {
		for (size_t i = 0; i < req->nids && rc == 0 && !col.stopped; i++)
			if (req->ids[i])
				rc = by_name(c, &col, req->ids[i], err);
	} else if (!col.pool[0] && !col.broker[0]) {
		drvc_err(err, GB_ERR_INVALID, 0, "DescribeFilterMissing",
		         "GCP describe needs ids, a pool or a broker id");
		return -1;
	} else {
		drvc_buf f = DRVC_BUF_INIT;
		char *filter;
		const char *and = "";
		if (col.pool[0]) {
			drvc_buf_addf(&f, "labels.%s = \"%s\"", GB_TAG_POOL, col.pool);
			and = " AND ";
		}
		if (col.broker[0]) {
			drvc_buf_addf(&f, "%slabels.%s = \"%s\"", and, GB_TAG_BROKER,
			              col.broker);
			and = " AND ";
		}
		if (col.token[0])
			drvc_buf_addf(&f, "%slabels.%s = \"%s\"", and, GB_TAG_TOKEN,
			              col.token);
		filter = drvc_buf_take(&f);
		if (!filter)
			abort();
		rc = gcp_agg_list(c, filter, collect_fn, &col, err);
		free(filter);
	}
	return rc;
}
