/* cmd_policy.c -- `policy test [DIR]` and `policy check FILE...`. */
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "output.h"
#include "paths.h"
#include "policy.h"

static const char *run_glob;

static const gb_flag *policy_flags(void)
{
	static const gb_flag f[] = {
		{"run", 0, "GLOB", "policy test: only tests whose name matches",
		 &run_glob, NULL, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static json_t *strv_json(const gb_strv *sv)
{
	json_t *a = json_array();
	for (size_t i = 0; i < sv->n; i++)
		json_array_append_new(a, json_string(sv->v[i]));
	return a;
}

static int run_test(gb_cli *cli)
{
	const char *dir;
	gb_policy_test_report r;
	char err[1024];
	int rc;

	if (cli->args.n > 2)
		return gb_cli_usage(cli, "policy test takes at most one "
		                         "directory");
	if (cli->args.n == 2)
		dir = cli->args.v[1];
	else
		dir = is_dir("policies") ? "policies" : gb_policy_dir();
	if (gb_policy_test_dir(dir, run_glob, NULL, &r, err, sizeof(err))) {
		gb_cli_err(cli, "%s", err);
		return GB_EXIT_FAIL;
	}
	if (cli->out != GB_OUT_TABLE) {
		json_t *tests = json_array();
		json_t *v;
		for (size_t i = 0; i < r.n; i++) {
			gb_policy_test_case *c = &r.cases[i];
			json_t *o = json_pack("{s:s, s:s, s:b, s:f, s:o}",
			                      "file", c->file, "name", c->name,
			                      "passed", c->passed, "duration_ms",
			                      c->ms, "logs", strv_json(&c->logs));
			if (c->message)
				json_object_set_new(o, "message",
				                    json_string(c->message));
			json_array_append_new(tests, o);
		}
		v = json_pack("{s:s, s:I, s:I, s:o}", "dir", dir, "passed",
		              (json_int_t)r.passed, "failed",
		              (json_int_t)r.failed, "tests", tests);
		gb_out_render(cli, stdout, v, NULL, NULL);
		json_decref(v);
	} else {
		for (size_t i = 0; i < r.n; i++) {
			gb_policy_test_case *c = &r.cases[i];
			int show_logs = !c->passed || cli->verbose;
			if (c->passed && cli->quiet)
				continue;
			if (c->passed)
				printf("PASS  %s  %s (%.1f ms)\n", c->file,
				       c->name, c->ms);
			else
				printf("FAIL  %s  %s: %s\n", c->file, c->name,
				       c->message);
			for (size_t k = 0; show_logs && k < c->logs.n; k++)
				printf("        log: %s\n", c->logs.v[k]);
		}
		printf("--------------------------------------------------\n");
		printf("PASS: %zu/%zu\n", r.passed, r.passed + r.failed);
		if (r.failed)
			printf("FAIL: %zu/%zu\n", r.failed, r.passed + r.failed);
	}
	rc = r.failed ? GB_EXIT_FAIL : GB_EXIT_OK;
	gb_policy_test_report_free(&r);
	return rc;
}

static int run_check(gb_cli *cli)
{
	json_t *all = json_array();
	int failed = 0;

	if (cli->args.n < 2) {
		json_decref(all);
		return gb_cli_usage(cli, "policy check needs at least one FILE");
	}
	for (size_t i = 1; i < cli->args.n; i++) {
		const char *f = cli->args.v[i];
		size_t n = strlen(f);
		int is_test = n > 9 && strcmp(f + n - 9, "_test.lua") == 0;
		char err[1024];
		int has = 0;
		json_t *o;
		if (gb_policy_check_file(f, NULL, &has, err, sizeof(err)) != 0) {
			failed++;
			o = json_pack("{s:s, s:b, s:s}", "file", f, "ok", 0,
			              "error", err);
			if (cli->out == GB_OUT_TABLE)
				fprintf(stderr, "%s\n", err);
		} else if (is_test) {
			o = json_pack("{s:s, s:b, s:i}", "file", f, "ok", 1,
			              "tests", has);
			if (cli->out == GB_OUT_TABLE && !cli->quiet)
				printf("ok    %s: %d test%s\n", f, has,
				       has == 1 ? "" : "s");
		} else {
			o = json_pack("{s:s, s:b, s:b, s:b}", "file", f, "ok", 1,
			              "filter", (has & 1) != 0, "score",
			              (has & 2) != 0);
			if (cli->out == GB_OUT_TABLE && !cli->quiet)
				printf("ok    %s: %s\n", f,
				       has == 3 ? "filter, score"
				       : has == 1 ? "filter" : "score");
		}
		json_array_append_new(all, o);
	}
	if (cli->out != GB_OUT_TABLE)
		gb_out_render(cli, stdout, all, NULL, NULL);
	json_decref(all);
	return failed ? GB_EXIT_FAIL : GB_EXIT_OK;
}

static int run_policy(gb_cli *cli)
{
	if (cli->args.n == 0)
		return gb_cli_usage(cli, "expected a subcommand: test or check");
	if (strcmp(cli->args.v[0], "test") == 0)
		return run_test(cli);
	if (strcmp(cli->args.v[0], "check") == 0)
		return run_check(cli);
	return gb_cli_usage(cli, "unknown subcommand \"%s\" (use test or "
	                         "check)", cli->args.v[0]);
}

const gb_cmd gb_cmd_policy = {
	"policy", "test and check Lua placement policies",
	"test [DIR] [--run GLOB] | check FILE...",
	"  policy test [DIR]   run every test_* function of every *_test.lua\n"
	"                      in DIR (default ./policies, else the installed\n"
	"                      policies); prints PASS/FAIL per test and exits\n"
	"                      1 when any fails.  -v shows gb.log output.\n"
	"  policy check FILE   load each file in the sandbox and report\n"
	"                      syntax and shape errors as FILE:LINE: message.\n"
	"\n"
	"A policy file returns {filter = function(req, offer) ... end, score =\n"
	"function(req, offer) ... end} (either or both).  filter returns ok\n"
	"[, reason] (nil counts as no); score returns a finite number, lower\n"
	"is better; all filters must pass and scores add up.\n"
	"  offer: cloud region zone instance_type gpu_model gpu_count\n"
	"         gpu_memory_gb vcpus ram_gb capacity (spot|on-demand|\n"
	"         reserved) price (USD/h) price_per_gpu_hour source\n"
	"         fetched_at tags{} bench{} (on-prem measurements, else nil)\n"
	"  req:   name purpose (training|inference|dev) count min max\n"
	"         gpu{models{},count,memory_gb} capacity{} clouds{} regions{}\n"
	"         colocate data_region compliance{} max_price_per_hour ttl\n"
	"         idle_timeout labels{} policies{}\n"
	"         team{name,max_gpus,max_price_per_hour,monthly_budget}\n"
	"         (limits and data_region are nil when not set)\n"
	"  Reading a field offer or req does not have (offer.gpu_modle) is\n"
	"  an error naming it, with the nearest field.\n"
	"  gb.region(name[, cloud]) or gb.region(offer) -> {cloud name display\n"
	"         country jurisdiction lat lon tags{} carbon carbon_source}|nil\n"
	"  gb.distance_km(a, b) (region names or {lat=, lon=}), gb.has_tag(x,\n"
	"  tag), gb.glob(pattern, s), gb.log(...) (print is gb.log).\n"
	"Sandbox: base (no load/dofile/require/rawset/collectgarbage), table,\n"
	"string (no dump), math, utf8; req and offer are read-only; per call:\n"
	"1,000,000 instructions, 1 s; 64 MiB for all policies of a plan.\n"
	"Tests use load_policy(name), offer{...}, request{...} and\n"
	"assert_true/false/eq/near/match/error; see policies/*_test.lua.",
	policy_flags, run_policy,
};
