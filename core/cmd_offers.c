/* cmd_offers.c -- `gpubroker offers`: what can be bought, where, for how
 * much, and how old the price is. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "remote.h"
#include "runtime.h"
#include "spec.h"
#include "store.h"

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

static const char *age_text(int64_t fetched_at, char *buf, size_t cap)
{
	int64_t age = gb_now_ms() / 1000 - fetched_at;
	if (fetched_at <= 0)
		return "unknown";
	if (age < 0)
		age = 0;
	return gb_format_duration(age, buf, cap);
}

typedef struct row {
	const gb_coffer *o;
	double min_price, max_price;
	int zones;
} row;

static int row_cmp(const void *a, const void *b)
{
	const row *x = a, *y = b;
	double px = x->min_price / x->o->gpu_count, py = y->min_price / y->o->gpu_count;
	int c;
	if (px != py)
		return px < py ? -1 : 1;
	if ((c = strcmp(x->o->cloud, y->o->cloud)))
		return c;
	if ((c = strcmp(x->o->region, y->o->region)))
		return c;
	if ((c = strcmp(x->o->instance_type, y->o->instance_type)))
		return c;
	if (x->o->capacity != y->o->capacity)
		return x->o->capacity < y->o->capacity ? -1 : 1;
	return strcmp(x->o->zone, y->o->zone);
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
	if ((rc = gb_runtime_open(cli, &rt, 0)) != 0) {
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
	if (gb_store_open(cli->cfg.state_path, &st, err, sizeof(err)) != 0) {
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

static int run_offers(gb_cli *cli)
{
	gb_runtime rt;
	const char *gpu = NULL;
	gb_capacity cap = GB_CAPACITY_ON_DEMAND;
	int64_t limit = 0;
	row *rows;
	size_t nrows = 0, n;
	json_t *out;
	int rc;
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
	if ((rc = gb_runtime_open(cli, &rt, 1)) != 0)
		return rc;
	for (size_t i = 0; i < rt.problems.n; i++)
		gb_cli_info(cli, "warning: %s", rt.problems.v[i]);
	if (o_cloud && !gb_drivers_find(&rt.drivers, o_cloud)) {
		gb_cli_err(cli, "--cloud: no driver named \"%s\" is loaded (see "
		                "'gpubroker drivers')", o_cloud);
		gb_runtime_free(&rt);
		return GB_EXIT_FAIL;
	}

	n = gb_catalog_count(rt.cat);
	rows = gb_xcalloc(n ? n : 1, sizeof(row));
	for (size_t i = 0; i < n; i++) {
		const gb_coffer *o = gb_catalog_at(rt.cat, i);
		size_t j;
		if (gpu && strcmp(o->gpu_model, gpu) != 0)
			continue;
		if (o_cloud && strcmp(o->cloud, o_cloud) != 0)
			continue;
		if (o_region && !gb_glob(o_region, o->region))
			continue;
		if (o_capacity && o->capacity != cap)
			continue;
		/* aggregate zones of the same region/type/capacity */
		for (j = 0; !o_zones && j < nrows; j++) {
			const gb_coffer *r = rows[j].o;
			if (r->cloud == o->cloud && r->region == o->region &&
			    r->instance_type == o->instance_type &&
			    r->capacity == o->capacity)
				break;
		}
		if (!o_zones && j < nrows) {
			rows[j].zones += *o->zone != '\0';
			if (o->price < rows[j].min_price)
				rows[j].min_price = o->price;
			if (o->price > rows[j].max_price)
				rows[j].max_price = o->price;
			continue;
		}
		rows[nrows].o = o;
		rows[nrows].min_price = rows[nrows].max_price = o->price;
		rows[nrows].zones = *o->zone != '\0';
		nrows++;
	}
	qsort(rows, nrows, sizeof(row), row_cmp);
	if (limit && (size_t)limit < nrows)
		nrows = (size_t)limit;
	out = json_array();
	for (size_t i = 0; i < nrows; i++) {
		const gb_coffer *o = rows[i].o;
		char age[32], when[32];
		json_t *r = json_object();
		json_object_set_new(r, "cloud", json_string(o->cloud));
		json_object_set_new(r, "region", json_string(o->region));
		if (o_zones)
			json_object_set_new(r, "zones", json_string(*o->zone ? o->zone : "-"));
		else if (rows[i].zones)
			json_object_set_new(r, "zones", json_integer(rows[i].zones));
		else
			json_object_set_new(r, "zones", json_string("-"));
		json_object_set_new(r, "instance_type", json_string(o->instance_type));
		json_object_set_new(r, "gpu", json_string(o->gpu_model));
		json_object_set_new(r, "gpu_count", json_integer(o->gpu_count));
		json_object_set_new(r, "gpu_memory_gb", json_integer(o->gpu_memory_gb));
		json_object_set_new(r, "vcpus", json_integer(o->vcpus));
		json_object_set_new(r, "ram_gb", json_real(o->ram_gb));
		json_object_set_new(r, "capacity", json_string(gb_capacity_name(o->capacity)));
		json_object_set_new(r, "price_per_hour", json_real(rows[i].min_price));
		if (rows[i].max_price != rows[i].min_price)
			json_object_set_new(r, "max_price_per_hour",
			                    json_real(rows[i].max_price));
		json_object_set_new(r, "price_per_gpu_hour",
		                    json_real(rows[i].min_price / o->gpu_count));
		json_object_set_new(r, "price_age",
		                    json_string(age_text(o->fetched_at, age, sizeof(age))));
		json_object_set_new(r, "fetched_at",
		                    json_string(gb_format_time(o->fetched_at, when,
		                                               sizeof(when))));
		json_object_set_new(r, "source", json_string(o->source));
		if (o->rinfo) {
			json_object_set_new(r, "jurisdiction",
			                    json_string(o->rinfo->jurisdiction));
			json_object_set_new(r, "carbon_g_per_kwh",
			                    json_real(o->rinfo->carbon_g_per_kwh));
		}
		json_array_append_new(out, r);
	}
	if (nrows == 0 && cli->out == GB_OUT_TABLE)
		gb_cli_info(cli, "no offers match (%zu offers loaded)", n);
	else
		gb_out_render(cli, stdout, out, out, cols);
	json_decref(out);
	free(rows);
	gb_runtime_free(&rt);
	return GB_EXIT_OK;
}

const gb_cmd gb_cmd_offers = {
	"offers", "list GPU offers with prices and their age",
	"[--gpu MODEL] [--cloud NAME] [--region GLOB] [--capacity KIND] [--zones]\n"
	"       gpubroker offers refresh [CLOUD] [--region REGION]",
	"Offers come from every loaded driver's catalog.  Rows are grouped by\n"
	"region (ZONES counts the zones; $/h is the cheapest zone) unless\n"
	"--zones is given, and sorted by price per GPU-hour.  PRICE AGE tells\n"
	"how old each price is.\n\n"
	"'offers refresh' asks each driver's price source (EC2 spot price\n"
	"history and instance types, the Azure Retail Prices API, the Cloud\n"
	"Billing catalog) and stores the prices with their source and time in\n"
	"the state database; plans then use them instead of the shipped\n"
	"catalog's.  --region limits the refresh to one region.",
	offers_flags, run_offers,
};
