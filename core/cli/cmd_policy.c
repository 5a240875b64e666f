/* cmd_policy.c -- `policy test [DIR]` and `policy check FILE...`. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "output.h"
#include "paths.h"
#include "policy.h"
#include "regions.h"

static const char *run_glob;
static int sample;

static const gb_flag *policy_flags(void)
{
	static const gb_flag f[] = {
		{"run", 0, "GLOB", "policy test: only tests whose name matches",
		 &run_glob, NULL, NULL},
		{"sample", 0, NULL, "policy check: also run each policy on the "
		 "sample offers and show what it keeps, refuses and scores",
		 NULL, &sample, NULL},
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
	const char *dir, *where;
	char *abs;
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
	/* which folder ran, whole: without DIR it is a guess */
	abs = realpath(dir, NULL);
	where = abs ? abs : dir;
	if (gb_policy_test_dir(dir, run_glob, NULL, &r, err, sizeof(err))) {
		gb_cli_err(cli, "%s", err);
		free(abs);
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
		v = json_pack("{s:s, s:I, s:I, s:o}", "dir", where, "passed",
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
		printf("ran %zu test%s in %s\n", r.n, r.n == 1 ? "" : "s",
		       where);
	}
	rc = r.failed ? GB_EXIT_FAIL : GB_EXIT_OK;
	gb_policy_test_report_free(&r);
	free(abs);
	return rc;
}

/* `policy check --sample`: the policy at f on every sample offer, as a
 * table (or into o["sample"]).  0, or -1 when it failed on one. */
static int check_sample(gb_cli *cli, const char *f, json_t *o)
{
	static const gb_column cols[] = {
		{"offer", "offer", 0}, {"$/h", "price", 0},
		{"result", "result", 0}, {"score", "score", 0},
		{"reason", "reason", 0}, {NULL, NULL, 0},
	};
	gb_policy_sample_report r;
	char err[1024];
	json_t *rows;
	int failed = 0;
	if (gb_policy_sample_run(f, NULL, &r, err, sizeof(err)) != 0) {
		json_object_set_new(o, "sample_error", json_string(err));
		if (cli->out == GB_OUT_TABLE)
			fprintf(stderr, "%s\n", err);
		return -1;
	}
	rows = json_array();
	for (size_t i = 0; i < r.n; i++) {
		gb_policy_sample_row *row = &r.rows[i];
		json_t *x;
		x = json_pack("{s:s, s:f, s:s}", "offer", row->label, "price",
		              row->offer->price, "result",
		              row->error ? "error"
		              : row->refused ? "refuse" : "keep");
		if (!row->error && !row->refused && (r.has & 2))
			json_object_set_new(x, "score", json_real(row->score));
		if (row->reason)
			json_object_set_new(x, "reason",
			                    json_string(row->reason));
		json_object_set_new(x, "logs", strv_json(&row->logs));
		json_array_append_new(rows, x);
		failed |= row->error;
	}
	if (cli->out == GB_OUT_TABLE) {
		gb_out_render(cli, stdout, rows, rows, cols);
		/* the table cuts long cells: errors whole, and -v the logs */
		for (size_t i = 0; i < r.n; i++) {
			if (r.rows[i].error)
				fprintf(stderr, "%s\n", r.rows[i].reason);
			for (size_t k = 0; cli->verbose &&
			                   k < r.rows[i].logs.n; k++)
				printf("        log: %s\n", r.rows[i].logs.v[k]);
		}
	}
	json_object_set_new(o, "sample", rows);
	gb_policy_sample_report_free(&r);
	return failed ? -1 : 0;
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
			if (sample) {
				failed++;
				snprintf(err, sizeof(err), "%s: --sample runs "
				         "policies, and this is a test file (run "
				         "it with 'policy test DIR')", f);
				json_object_set_new(o, "sample_error",
				                    json_string(err));
				if (cli->out == GB_OUT_TABLE)
					fprintf(stderr, "%s\n", err);
			}
		} else {
			o = json_pack("{s:s, s:b, s:b, s:b}", "file", f, "ok", 1,
			              "filter", (has & 1) != 0, "score",
			              (has & 2) != 0);
			if (cli->out == GB_OUT_TABLE && !cli->quiet)
				printf("ok    %s: %s\n", f,
				       has == 3 ? "filter, score"
				       : has == 1 ? "filter" : "score");
			if (sample && check_sample(cli, f, o) != 0)
				failed++;
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
	if (strcmp(cli->args.v[0], "test") == 0) {
		if (sample)
			return gb_cli_usage(cli, "--sample is for 'policy check "
			                         "FILE...' (policy tests get the "
			                         "sample offers as "
			                         "sample_offers())");
		return run_test(cli);
	}
	if (strcmp(cli->args.v[0], "check") == 0)
		return run_check(cli);
	return gb_cli_usage(cli, "unknown subcommand \"%s\" (use test or "
	                         "check)", cli->args.v[0]);
}

/* Word-wraps text into lines of at most width columns (a longer word
 * stands alone), the first after what the caller printed, the rest
 * indented by indent spaces. */
static void print_wrapped(FILE *f, const char *text, int indent, int width)
{
	int col = 0;
	while (*text) {
		int len = (int)strcspn(text, " ");
		if (col && col + 1 + len > width) {
			fprintf(f, "\n%*s", indent, "");
			col = 0;
		} else if (col) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", len, text);
		col += len;
		text += len;
		while (*text == ' ')
			text++;
	}
	fputc('\n', f);
}

/* "region tags:": every tag region.tags (and placement.compliance) can
 * hold, from the region table, with how many built-in regions carry it. */
static void region_tags_help(FILE *f)
{
	size_t n, w = 0;
	const gb_region_tag *t = gb_region_tags(&n);
	for (size_t i = 0; i < n; i++)
		if (strlen(t[i].name) > w)
			w = strlen(t[i].name);
	fprintf(f, "\nregion tags (region.tags, gb.has_tag, "
	        "placement.compliance):\n");
	for (size_t i = 0; i < n; i++) {
		size_t count = 0;
		char *m;
		for (size_t r = 0; r < gb_builtin_region_count; r++)
			count += (size_t)gb_region_has_tag(&gb_builtin_regions[r],
			                                   t[i].name);
		m = gb_xasprintf("%s; %zu built-in region%s", t[i].meaning,
		                 count, count == 1 ? "" : "s");
		fprintf(f, "  %-*s  ", (int)w, t[i].name);
		print_wrapped(f, m, (int)w + 4, 79 - ((int)w + 4));
		free(m);
	}
}

void gb_cmd_policy_fields_help(FILE *f)
{
	size_t n, wn = 0, wt = 0;
	const gb_policy_field *fl = gb_policy_fields(&n);
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(fl[i].object) + 1 + strlen(fl[i].name);
		if (l > wn)
			wn = l;
		if (strlen(fl[i].type) > wt)
			wt = strlen(fl[i].type);
	}
	fprintf(f, "\nfields:\n");
	for (size_t i = 0; i < n; i++) {
		int pad = (int)(wn - strlen(fl[i].object) - 1 -
		                strlen(fl[i].name));
		fprintf(f, "  %s.%s%*s  %-*s  ", fl[i].object, fl[i].name, pad,
		        "", (int)wt, fl[i].type);
		print_wrapped(f, fl[i].meaning, (int)(wn + wt + 6),
		              79 - (int)(wn + wt + 6));
	}
	region_tags_help(f);
}

const gb_cmd gb_cmd_policy = {
	"policy", "test and check Lua placement policies",
	"test [DIR] [--run GLOB] | check [--sample] FILE...",
	"  policy test [DIR]   run every test_* function of every *_test.lua\n"
	"                      in DIR (default ./policies, else the installed\n"
	"                      policies); prints PASS/FAIL per test, then\n"
	"                      which folder ran, and exits 1 when any fails.\n"
	"                      -v shows gb.log output.\n"
	"  policy check FILE   load each file in the sandbox and report\n"
	"                      syntax and shape errors as FILE:LINE: message.\n"
	"    --sample          also run each policy, as a plan does, on the\n"
	"                      sample offers (tests' sample_offers(): aws,\n"
	"                      gcp, azure and on-prem, spot and on-demand, a\n"
	"                      MIG slice) with the req of a minimal pool\n"
	"                      (name sample, gpu H100): OFFER, $/H, RESULT\n"
	"                      (keep, refuse, error), SCORE, REASON; -v adds\n"
	"                      gb.log output.  Exits 1 when the policy fails\n"
	"                      on one (as it would fail a plan).\n"
	"\n"
	"A policy file returns {filter = function(req, offer, args) ... end,\n"
	"score = function(req, offer, args) ... end} (either or both).  filter\n"
	"returns true to keep the offer or false[, reason] (or nil, reason) to\n"
	"refuse it; a bare nil (a missing `return true`) is an error naming\n"
	"the policy.  score returns a finite number, lower is better; all\n"
	"filters must pass and scores add up.\n"
	"Parameters: the table may declare params = {NAME = {type = \"number\"\n"
	"(or integer, string, boolean), default = VALUE, doc = \"...\"}}; a\n"
	"pool sets them with policy: [{name: budget, args: {max_per_gpu_hour:\n"
	"3}}] (a plain name keeps the defaults), validate refuses undeclared or\n"
	"mistyped args where they are written, and args (read-only; every\n"
	"declared name, nil without a default) is their values.\n"
	"The fields of offer, req and region are listed below (a list is a\n"
	"table of strings; optional values not set are nil).  Reading a\n"
	"field offer, req, req.gpu, req.team or a region does not have\n"
	"(offer.gpu_modle, r.carbonn) is an error naming it, with the\n"
	"nearest field; so is a near miss of filter, score or params in the\n"
	"returned table (fitler).\n"
	"  gb.region(name[, cloud]) or gb.region(offer) -> region | nil\n"
	"  gb.distance_km(a, b) (region names or {lat=, lon=}), gb.has_tag(x,\n"
	"  tag) (x: region, offer, region name or list; the region tags are\n"
	"  below), gb.glob(pattern, s), gb.log(...) (print is gb.log).\n"
	"Sandbox: base (no load/dofile/require/rawset/collectgarbage), table,\n"
	"string (no dump), math, utf8; reading os, io, debug, require, ... is\n"
	"an error listing what is available; req and offer are read-only; per\n"
	"call: 1,000,000 instructions, 1 s; 64 MiB for all policies of a\n"
	"plan.\n"
	"Tests use load_policy(name), offer{...}, request{...},\n"
	"sample_offers() and assert_true/false/eq/near/match/error; see\n"
	"policies/*_test.lua.",
	policy_flags, run_policy,
};
