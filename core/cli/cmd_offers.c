/* cmd_offers.c -- `gpubroker offers`: what can be bought, where, for how
 * much, and how old the price is. */
#include <curl/curl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "offers_view.h"
#include "output.h"
#include "remote.h"
#include "cli_app.h"
#include "spec.h"
#include "store.h"
#include "timejson.h"

static const char *o_gpu, *o_cloud, *o_region, *o_capacity, *o_limit;
static int o_zones;

static const gb_flag *offers_flags(void)
{
	static const gb_flag f[] = {
		{"gpu", 0, "MODEL", "only this GPU model (H100, A100-80GB, L4, ...)",
		 &o_gpu, NULL, NULL},
		{"cloud", 0, "NAME", "only this cloud/driver", &o_cloud, NULL, NULL},
		{"region", 0, "GLOB", "only regions matching the glob, e.g. 'eu-*'",
		 &o_region, NULL, NULL},
		{"capacity", 0, "KIND", "spot | on-demand | reserved", &o_capacity,
		 NULL, NULL},
		{"zones", 0, NULL, "one row per zone (default: per region)", NULL,
		 &o_zones, NULL},
		{"limit", 0, "N", "at most N rows (cheapest per GPU-hour first)",
		 &o_limit, NULL, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

/* `offers refresh [CLOUD] [--region R]`: each driver's price source ->
 * the state store, with provenance; later plans and `offers` use these
 * prices instead of the shipped catalog's for the same offer. */
static int run_refresh(gb_cli *cli)
{
	gb_runtime rt;
	gb_store *st;
	char err[1024];
	int rc, failed = 0, done = 0;
	const char *only = cli->args.n > 1 ? cli->args.v[1] : NULL;
	json_t *out = json_array();
	static const gb_column cols[] = {
		{"cloud", "cloud", 0},     {"region", "region", 0},
		{"offers", "offers", 1},   {"source", "source", 0},
		{"result", "result", 0},   {NULL, NULL, 0},
	};
	if (cli->args.n > 2) {
		json_decref(out);
		return gb_cli_usage(cli, "offers refresh takes at most one cloud");
	}
	if (cli->server) {
		json_t *res = NULL;
		char *path = gb_xasprintf("/v1/offers/refresh%s%s%s%s",
		                          only || o_region ? "?" : "",
		                          only ? "cloud=" : "", only ? only : "",
		                          o_region ? (only ? "&region=" : "region=")
		                                   : "");
		if (o_region) {
			char *p2 = gb_xasprintf("%s%s", path, o_region);
			free(path);
			path = p2;
		}
		rc = gb_remote_call(cli, "POST", path, NULL, NULL, &res);
		free(path);
		json_decref(out);
		if (rc == 0)
			gb_out_render(cli, stdout, json_object_get(res, "refreshed"),
			              json_object_get(res, "refreshed"), cols);
		json_decref(res);
		return rc;
	}
	if ((rc = gb_cli_runtime(cli, &rt, NULL, 0)) != 0) {
		json_decref(out);
		return rc;
	}
	if (only && !gb_drivers_find(&rt.drivers, only)) {
		gb_cli_err(cli, "no driver named \"%s\" is loaded (see 'gpubroker "
		                "drivers')", only);
		gb_runtime_free(&rt);
		json_decref(out);
		return GB_EXIT_FAIL;
	}
	if (gb_store_open_cfg(&cli->cfg, &st, err, sizeof(err)) != 0) {
		gb_cli_err(cli, "%s", err);
		gb_runtime_free(&rt);
		json_decref(out);
		return GB_EXIT_FAIL;
	}
	failed = gb_offers_refresh(&rt.drivers, st, only, o_region, out, &done) != 0;
	gb_out_render(cli, stdout, out, out, cols);
	if (!done && !failed && cli->out == GB_OUT_TABLE)
		gb_cli_info(cli, "no loaded driver has a price source");
	json_decref(out);
	gb_store_close(st);
	gb_runtime_free(&rt);
	return failed ? GB_EXIT_FAIL : GB_EXIT_OK;
}

/* --server: the daemon's offers (GET /v1/offers with the same filters). */
static json_t *remote_records(gb_cli *cli, const char *gpu, int *rc)
{
	static const char *const keys[] = {"gpu", "cloud", "region", "capacity"};
	const char *vals[4];
	gb_buf path = GB_BUF_INIT;
	json_t *res = NULL, *recs;
	vals[0] = gpu;
	vals[1] = o_cloud;
	vals[2] = o_region;
	vals[3] = o_capacity;
	gb_buf_puts(&path, "/v1/offers");
	for (size_t i = 0, n = 0; i < GB_ARRAY_LEN(keys); i++) {
		char *enc;
		if (!vals[i])
			continue;
		enc = curl_easy_escape(NULL, vals[i], 0);
		gb_buf_printf(&path, "%c%s=%s", n++ ? '&' : '?', keys[i],
		              enc ? enc : "");
		curl_free(enc);
	}
	*rc = gb_remote_call(cli, "GET", gb_buf_str(&path), NULL, NULL, &res);
	gb_buf_free(&path);
	if (*rc != 0)
		return NULL;
	if (json_is_true(json_object_get(res, "truncated")))
		gb_cli_info(cli, "warning: the daemon listed only the first %zu "
		                 "matching offers; narrow the filters",
		            json_array_size(json_object_get(res, "offers")));
	recs = json_incref(json_object_get(res, "offers"));
	json_decref(res);
	return recs ? recs : json_array();
}

static json_t *local_records(gb_cli *cli, gb_runtime *rt, const char *gpu,
                             gb_capacity cap)
{
	json_t *recs = json_array();
	size_t n = gb_catalog_count(rt->cat);
	(void)cli;
	for (size_t i = 0; i < n; i++) {
		const gb_coffer *o = gb_catalog_at(rt->cat, i);
		if ((gpu && strcmp(o->gpu_model, gpu) != 0) ||
		    (o_cloud && strcmp(o->cloud, o_cloud) != 0) ||
		    (o_region && !gb_glob(o_region, o->region)) ||
		    (o_capacity && o->capacity != cap))
			continue;
		json_array_append_new(recs, gb_offer_record(o));
	}
	return recs;
}

/* A price older than this is worth a word under the table. */
#define STALE_DAYS 30

/* Under the table: how many of the offers carry a price older than
 * STALE_DAYS (the shipped catalogs' prices age from the day they were
 * published; `offers refresh` replaces them with the providers'). */
static void stale_note(const gb_cli *cli, const json_t *recs)
{
	int64_t now = gb_now_ms() / 1000, oldest = 0;
	size_t n = 0, old = 0, i;
	json_t *r;
	json_array_foreach(recs, i, r) {
		int64_t age, at_ms;
		if (gb_json_time_get(json_object_get(r, "fetched_at"), &at_ms) != 0 ||
		    at_ms == 0)
			continue;
		n++;
		age = now - at_ms / 1000;
		if (age > STALE_DAYS * 86400) {
			old++;
			if (age > oldest)
				oldest = age;
		}
	}
	if (old)
		gb_cli_info(cli, "note: %zu of %zu offer%s priced more than %d "
		            "days ago (the oldest %lld days): shipped prices "
		            "are a starting point until 'gpubroker offers "
		            "refresh' asks the providers (see PRICE AGE)",
		            old, n, n == 1 ? " is" : "s are", STALE_DAYS,
		            (long long)(oldest / 86400));
}

/* --region must name a region of the clouds listed (--cloud, or every
 * loaded driver): 1 after saying why not. */
static int region_refused(gb_cli *cli, gb_runtime *rt)
{
	char *msg = gb_runtime_region_problem(rt, o_region, o_cloud);
	if (!msg)
		return 0;
	gb_cli_err(cli, "--region: %s", msg);
	free(msg);
	return 1;
}

static int run_offers(gb_cli *cli)
{
	gb_runtime rt;
	const char *gpu = NULL;
	gb_capacity cap = GB_CAPACITY_ON_DEMAND;
	int64_t limit = 0;
	json_t *recs, *out;
	int rc = 0;
	static const gb_column cols[] = {
		{"cloud", "cloud", 0},         {"region", "region", 0},
		{"zones", "zones", 0},         {"type", "instance_type", 0},
		{"gpu", "gpu", 0},             {"gpus", "gpu_count", 1},
		{"mem/gpu", "gpu_memory_gb", 1}, {"capacity", "capacity", 0},
		{"$/h", "price_per_hour", 1},  {"$/gpu-h", "price_per_gpu_hour", 1},
		{"price age", "price_age", 0},
		{NULL, NULL, 0},
	};

	if (cli->args.n && strcmp(cli->args.v[0], "refresh") == 0)
		return run_refresh(cli);
	if (cli->args.n)
		return gb_cli_usage(cli, "unexpected argument \"%s\"",
		                    cli->args.v[0]);
	if (o_gpu && !(gpu = gb_gpu_canonical(o_gpu)))
		return gb_cli_usage(cli, "--gpu: unknown GPU model \"%s\"", o_gpu);
	if (o_capacity && gb_capacity_parse(o_capacity, &cap) != 0)
		return gb_cli_usage(cli, "--capacity: expected spot, on-demand or "
		                         "reserved, found \"%s\"", o_capacity);
	if (o_limit && (gb_parse_int64(o_limit, &limit) != 0 || limit < 1))
		return gb_cli_usage(cli, "--limit: expected a positive integer");
	if (cli->server) {
		if (!(recs = remote_records(cli, gpu, &rc)))
			return rc;
	} else {
		if ((rc = gb_cli_runtime(cli, &rt, NULL, 1)) != 0)
			return rc;
		for (size_t i = 0; i < rt.problems.n; i++)
			gb_cli_info(cli, "warning: %s", rt.problems.v[i]);
		if (o_cloud && !gb_drivers_find(&rt.drivers, o_cloud)) {
			gb_cli_err(cli, "--cloud: no driver named \"%s\" is loaded "
			                "(see 'gpubroker drivers')", o_cloud);
			gb_runtime_free(&rt);
			return GB_EXIT_FAIL;
		}
		if (o_region && region_refused(cli, &rt)) {
			gb_runtime_free(&rt);
			return GB_EXIT_FAIL;
		}
		recs = local_records(cli, &rt, gpu, cap);
		if (!json_array_size(recs) && cli->out == GB_OUT_TABLE)
			gb_cli_info(cli, "no offers match (%zu offer%s loaded)",
			            gb_catalog_count(rt.cat),
			            gb_plural((long long)gb_catalog_count(rt.cat)));
		gb_runtime_free(&rt);
	}
	out = gb_offers_view(recs, o_zones, (size_t)limit);
	if (json_array_size(out) || cli->out != GB_OUT_TABLE)
		gb_out_render(cli, stdout, out, out, cols);
	else if (cli->server)
		gb_cli_info(cli, "no offers match");
	if (json_array_size(out) && cli->out == GB_OUT_TABLE) {
		fflush(stdout);
		stale_note(cli, recs);
	}
	json_decref(out);
	json_decref(recs);
	return GB_EXIT_OK;
}

const gb_cmd gb_cmd_offers = {
	"offers", "list GPU offers with prices and their age",
	"[--gpu MODEL] [--cloud NAME] [--region GLOB] [--capacity KIND] [--zones]\n"
	"       gpubroker offers refresh [CLOUD] [--region REGION]",
	"Offers come from every loaded driver's catalog.  Rows are grouped by\n"
	"region (ZONES counts the zones; $/h is the cheapest zone) unless\n"
	"--zones is given, and sorted by price per GPU-hour.  PRICE AGE tells\n"
	"how old each price is; a note under the table counts the offers priced\n"
	"more than 30 days ago: the shipped catalogs' prices (dated per price in\n"
	"drivers/<cloud>/data/SOURCES.md) are a starting point until 'offers\n"
	"refresh'.  --region must match a region of the clouds listed (--cloud,\n"
	"or every loaded driver): region names differ per cloud.\n\n"
	"'offers refresh' asks each driver's price source (EC2 spot price\n"
	"history and instance types, the Azure Retail Prices API, the Cloud\n"
	"Billing catalog) and stores the prices with their source and time in\n"
	"the state database; plans then use them instead of the shipped\n"
	"catalog's.  --region limits the refresh to one region.",
	offers_flags, run_offers,
};
