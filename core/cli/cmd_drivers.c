/* cmd_drivers.c -- `gpubroker drivers`: what is loaded and in what state;
 * `gpubroker drivers test NAME`: the conformance suite (core/host/
 * conform.c) against one configured driver. */
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "output.h"
#include "remote.h"
#include "cli_app.h"

static const char *o_region, *o_type, *o_capacity, *o_huge, *o_timeout;

static const gb_flag *drivers_flags(void)
{
	static const gb_flag f[] = {
		{"region", 0, "REGION", "test: create in this region (default: "
		 "the cheapest offer's)", &o_region, NULL, NULL},
		{"type", 0, "TYPE", "test: create this instance type (default: "
		 "the cheapest offer's)", &o_type, NULL, NULL},
		{"capacity", 0, "KIND", "test: spot | on-demand | reserved "
		 "(default on-demand)", &o_capacity, NULL, NULL},
		{"huge-count", 0, "N", "test: the count of the create that must "
		 "be refused whole (default 10000)", &o_huge, NULL, NULL},
		{"timeout", 0, "DURATION", "test: each wait for the provider "
		 "(default 300s)", &o_timeout, NULL, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static volatile sig_atomic_t stop_flag;

/* The first SIGINT/SIGTERM stops the suite, which still cleans up; a
 * second one ends the process as usual. */
static void on_signal(int sig)
{
	stop_flag = 1;
	signal(sig, SIG_DFL);
}

static void progress(void *ud, const char *name)
{
	gb_cli_info(ud, "%s ...", name);
}

/* Fills o from the flags; 0, or GB_EXIT_USAGE after saying why. */
static int test_opts(gb_cli *cli, gb_conform_opts *o)
{
	int64_t v;
	memset(o, 0, sizeof(*o));
	o->capacity = -1;
	o->region = o_region;
	o->type = o_type;
	if (o_capacity) {
		gb_capacity cap;
		if (gb_capacity_parse(o_capacity, &cap) != 0)
			return gb_cli_usage(cli, "--capacity: expected spot, "
			                         "on-demand or reserved, found "
			                         "\"%s\"", o_capacity);
		o->capacity = (int)cap;
	}
	if (o_huge) {
		if (gb_parse_int64(o_huge, &v) != 0 || v < 3 || v > 1000000)
			return gb_cli_usage(cli, "--huge-count: expected a whole "
			                         "number from 3 to 1000000 (more "
			                         "than the account may have), "
			                         "found \"%s\"", o_huge);
		o->huge_count = (unsigned)v;
	}
	if (o_timeout) {
		if (gb_parse_duration(o_timeout, &v) != 0 || v < 1 ||
		    v > 86400)
			return gb_cli_usage(cli, "--timeout: expected a duration "
			                         "from 1s to 24h (e.g. 300s, 5m), "
			                         "found \"%s\"", o_timeout);
		o->timeout_ms = v * 1000;
	}
	o->progress = progress;
	o->progress_ud = cli;
	o->stop = &stop_flag;
	return 0;
}

static int run_test(gb_cli *cli)
{
	static const gb_column cols[] = {
		{"case", "name", 0}, {"result", "status", 0},
		{"detail", "detail", 0}, {NULL, NULL, 0},
	};
	gb_conform_opts o;
	gb_runtime rt;
	gb_drv *drv;
	json_t *doc, *rows, *c;
	const char *name;
	size_t i;
	int rc;
	if (cli->args.n != 2)
		return gb_cli_usage(cli, "'drivers test' takes one driver name "
		                         "(as in the config's drivers list)");
	name = cli->args.v[1];
	if (cli->server)
		return gb_cli_usage(cli, "'drivers test' runs the driver in this "
		                         "process: drop --server (and unset "
		                         "GPUBROKER_SERVER)");
	if ((rc = test_opts(cli, &o)) != 0)
		return rc;
	if ((rc = gb_cli_runtime(cli, &rt, NULL, 0)) != 0)
		return rc;
	drv = gb_drivers_find(&rt.drivers, name);
	if (!drv || !drv->ready) {
		if (!drv) {
			gb_strv names = {0};
			char *list;
			for (i = 0; i < rt.drivers.n; i++)
				gb_strv_push(&names, rt.drivers.v[i]->name);
			list = gb_strv_join(&names, ", ");
			gb_cli_err(cli, "no driver named \"%s\" in the config "
			           "(configured: %s); add it under drivers:",
			           name, names.n ? list : "none");
			free(list);
			gb_strv_free(&names);
		} else {
			gb_cli_err(cli, "driver \"%s\" is not ready: %s", name,
			           drv->status);
		}
		gb_runtime_free(&rt);
		return GB_EXIT_FAIL;
	}
	o.broker_id = cli->cfg.broker_id;
	gb_cli_info(cli, "testing driver %s (instances are created and "
	            "terminated) ...", name);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	doc = gb_conform_run(drv, &o);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	gb_runtime_free(&rt);
	rows = json_object_get(doc, "cases");
	gb_out_render(cli, stdout, doc, rows, cols);
	rc = GB_EXIT_OK;
	/* the table cuts long details: a failure's whole text on stderr */
	json_array_foreach(rows, i, c) {
		if (strcmp(json_string_value(json_object_get(c, "status")),
		           "fail") != 0)
			continue;
		rc = GB_EXIT_FAIL;
		if (cli->out == GB_OUT_TABLE)
			gb_cli_err(cli, "%s failed: %s",
			           json_string_value(json_object_get(c, "name")),
			           json_string_value(json_object_get(c,
			                                             "detail")));
	}
	if (json_is_true(json_object_get(doc, "interrupted"))) {
		gb_cli_err(cli, "interrupted: the cases left were skipped; "
		           "cleanup ran");
		rc = GB_EXIT_FAIL;
	}
	gb_cli_info(cli, "%lld passed, %lld failed, %lld skipped",
	            (long long)json_integer_value(json_object_get(doc, "passed")),
	            (long long)json_integer_value(json_object_get(doc, "failed")),
	            (long long)json_integer_value(json_object_get(doc,
	                                                          "skipped")));
	json_decref(doc);
	return rc;
}

/* The table cuts long cells: below it, the whole status of each driver
 * that is not plainly "ready" (why it failed, where it looked for
 * credentials). */
static void status_notes(gb_cli *cli, json_t *rows)
{
	size_t i;
	json_t *r;
	if (cli->out != GB_OUT_TABLE)
		return;
	json_array_foreach(rows, i, r) {
		const char *st = json_string_value(json_object_get(r, "status"));
		if (st && strcmp(st, "ready") != 0)
			gb_cli_info(cli, "%s: %s",
			            json_string_value(json_object_get(r, "name")),
			            st);
	}
}

/* A driver that failed to load or initialise is a failure (exit 1),
 * named on stderr: scripts and CI must not take it for a green. */
static int not_ready(gb_cli *cli, json_t *rows)
{
	gb_buf names = GB_BUF_INIT;
	size_t i, bad = 0;
	json_t *r;
	json_array_foreach(rows, i, r) {
		if (json_is_false(json_object_get(r, "ready"))) {
			const char *n = json_string_value(json_object_get(r,
			                                                  "name"));
			gb_buf_printf(&names, "%s%s", bad ? ", " : "",
			              n ? n : "?");
			bad++;
		}
	}
	if (bad)
		gb_cli_err(cli, "%zu of %zu drivers not ready (%s): their pools "
		           "cannot be placed there; fix what the status says",
		           bad, json_array_size(rows), gb_buf_str(&names));
	gb_buf_free(&names);
	return bad ? GB_EXIT_FAIL : GB_EXIT_OK;
}

static int run_drivers(gb_cli *cli)
{
	gb_runtime rt;
	json_t *rows;
	int rc;
	static const gb_column cols[] = {
		{"name", "name", 0},       {"version", "version", 0},
		{"abi", "abi", 0},         {"capabilities", "capabilities", 0},
		{"min_billed_s", "billing_minimum_s", 0},
		{"status", "status", 0},   {"path", "path", 0},
		{NULL, NULL, 0},
	};
	if (cli->args.n && strcmp(cli->args.v[0], "test") == 0)
		return run_test(cli);
	if (cli->args.n)
		return gb_cli_usage(cli, "unknown subcommand \"%s\" (test)",
		                    cli->args.v[0]);
	if (o_region || o_type || o_capacity || o_huge || o_timeout)
		return gb_cli_usage(cli, "--region, --type, --capacity, "
		                         "--huge-count and --timeout are for "
		                         "'drivers test NAME'");
	if (cli->server) {
		json_t *res = NULL;
		if ((rc = gb_remote_call(cli, "GET", "/v1/drivers", NULL, NULL,
		                         &res)) != 0)
			return rc;
		rows = json_object_get(res, "drivers");
		gb_out_render(cli, stdout, rows, rows, cols);
		status_notes(cli, rows);
		rc = not_ready(cli, rows);
		json_decref(res);
		return rc;
	}
	if ((rc = gb_cli_runtime(cli, &rt, NULL, 0)) != 0)
		return rc;
	rows = gb_drivers_json(&rt.drivers);
	gb_out_render(cli, stdout, rows, rows, cols);
	status_notes(cli, rows);
	rc = not_ready(cli, rows);
	json_decref(rows);
	gb_runtime_free(&rt);
	return rc;
}

const gb_cmd gb_cmd_drivers = {
	"drivers", "list provider drivers; 'drivers test NAME' checks one",
	"[test NAME [--region R] [--type T] [--capacity KIND] [--huge-count N]"
	" [--timeout DURATION]]",
	"Loads every driver named in the config (or, when it names none,\n"
	"every driver installed in the driver directory) and shows whether\n"
	"it loaded and initialised, and why not.  A driver that loaded but\n"
	"found no credentials shows \"no credentials found (looked in ...)\"\n"
	"instead of \"ready\" (its offers work; creating fails until they\n"
	"are set); -o json has \"credentials\": true/false for drivers that\n"
	"need them.  Below the table, on stderr, the whole status of each\n"
	"driver that is not ready.  With --server: the daemon's drivers\n"
	"(GET /v1/drivers).  Exit 1 when a driver is not ready (failed to\n"
	"load or initialise: a pool naming it cannot be placed there).\n"
	"\n"
	"'drivers test NAME' runs the conformance suite against the configured\n"
	"driver NAME and whatever endpoint its options point at (a real cloud\n"
	"or an emulator), through the driver's own methods only.  It CREATES\n"
	"2 instances of the cheapest matching offer in a pool named\n"
	"gbconf-<random> and terminates everything it made before it ends.\n"
	"Cases (gpubroker/driver.h is the spec): offers (well formed; also\n"
	"refresh_prices with the price-refresh capability), quota (with the\n"
	"quota capability), create (2 instances, names POOL-0/-1), tags\n"
	"(pool, broker and token tags), replay (the same token: the same ids,\n"
	"nothing new), describe (by ids, pool, broker+token; an unknown id is\n"
	"no error), all_or_nothing (--huge-count instances: CAPACITY, QUOTA or\n"
	"INVALID, nothing left live), errors (a bad type: INVALID or\n"
	"NOT_FOUND; classes agree with HTTP statuses), terminate (twice, and\n"
	"an unknown id), secrets (no registered secret in any error or log\n"
	"line), cleanup.  Prints CASE, RESULT (pass/fail/skip), DETAIL, or\n"
	"-o json with each case's duration_ms.  Runs locally only (not with\n"
	"--server).  Exit 0 when every case passed or was skipped, 1 when\n"
	"any failed (or the driver is missing or not ready, or SIGINT or\n"
	"SIGTERM stopped it: the cases left are skipped, cleanup still runs;\n"
	"a second signal ends it at once), 2 on usage errors.",
	drivers_flags, run_drivers,
};
