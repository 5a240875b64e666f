/* cmd_nodes.c -- `gpubroker nodes [probe [NODE...] | sites]`: the on-prem
 * nodes of the inventory with their health, GPUs, measured figures and
 * leases, through the on-prem driver's `command` method. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "log.h"
#include "nodes.h"
#include "remote.h"
#include "cli_app.h"

static const char *age_text(json_t *v, char *buf, size_t cap)
{
	char d[32];
	if (!json_is_integer(v))
		return "never";
	snprintf(buf, cap, "%s ago",
	         gb_format_duration(json_integer_value(v), d, sizeof(d)));
	return buf;
}

/* One table row per node (the JSON keeps everything). */
static json_t *node_rows(json_t *nodes, gb_strv *notes)
{
	json_t *rows = json_array();
	size_t i;
	json_t *n;
	json_array_foreach(nodes, i, n) {
		json_t *r = json_object(), *h = json_object_get(n, "health");
		json_t *f = json_object_get(n, "figures");
		json_t *lease = json_object_get(n, "lease");
		json_t *mig = json_object_get(n, "mig");
		const char *name = json_string_value(json_object_get(n, "name"));
		const char *reason = json_string_value(json_object_get(n, "reason"));
		const char *status = json_string_value(json_object_get(n, "status"));
		char buf[128], age[48];
		json_object_set_new(r, "node", json_string(name ? name : "?"));
		json_object_set(r, "site", json_object_get(n, "site"));
		json_object_set(r, "shape", json_object_get(n, "shape"));
		json_object_set(r, "gpus", json_object_get(n, "gpus"));
		if (json_is_object(h)) {
			const char *st = json_string_value(json_object_get(h, "state"));
			snprintf(buf, sizeof(buf), "%s%s", st ? st : "?",
			         json_is_true(json_object_get(h, "stale"))
			                 ? " (stale)" : "");
			json_object_set_new(r, "health", json_string(buf));
			json_object_set_new(r, "probed",
			                    json_string(age_text(json_object_get(h,
			                                                         "age_s"),
			                                         age, sizeof(age))));
		} else {
			json_object_set_new(r, "health", json_string("unprobed"));
			json_object_set_new(r, "probed", json_string("never"));
		}
		if (json_is_object(f)) {
			json_object_set(r, "d2d", json_object_get(f, "d2d_gbps"));
			json_object_set(r, "fp32", json_object_get(f, "fp32_tflops"));
			json_object_set(r, "bf16", json_object_get(f, "bf16_tflops"));
		}
		if (json_is_object(lease)) {
			json_object_set(r, "lease", json_object_get(lease, "pool"));
		} else if (json_is_object(mig) &&
		           json_array_size(json_object_get(mig, "slices"))) {
			snprintf(buf, sizeof(buf), "%zu MIG slice%s",
			         json_array_size(json_object_get(mig, "slices")),
			         json_array_size(json_object_get(mig, "slices")) == 1
			                 ? "" : "s");
			json_object_set_new(r, "lease", json_string(buf));
		}
		if (reason && status && strcmp(status, "free") != 0)
			gb_strv_push_take(notes, gb_xasprintf("%s: %s", name ? name
			                                                      : "?",
			                                      reason));
		json_array_append_new(rows, r);
	}
	return rows;
}

/* --server: GET /v1/nodes or /v1/sites, POST /v1/probe {"nodes": [...]};
 * the daemon answers with the driver's document under "nodes"/"sites". */
static int nodes_remote(gb_cli *cli, const char *verb, int argc,
                        const char *const *argv, json_t **doc)
{
	json_t *res = NULL, *body = NULL;
	const char *key = strcmp(verb, "sites") == 0 ? "sites" : "nodes";
	int rc;
	*doc = NULL;
	if (strcmp(verb, "clear") == 0) {
		/* one call per node: POST /v1/nodes/NODE/clear */
		json_t *all = json_array();
		for (int i = 0; i < argc; i++) {
			char *path = gb_xasprintf("/v1/nodes/%s/clear", argv[i]);
			rc = gb_remote_call(cli, "POST", path, NULL, NULL, &res);
			free(path);
			if (rc != 0) {
				json_decref(all);
				return rc;
			}
			json_array_extend(all, json_object_get(res, "nodes"));
			json_decref(res);
		}
		*doc = all;
		return 0;
	} else if (strcmp(verb, "probe") == 0) {
		json_t *names = json_array();
		for (int i = 0; i < argc; i++)
			json_array_append_new(names, json_string(argv[i]));
		body = json_pack("{s:o}", "nodes", names);
		rc = gb_remote_call(cli, "POST", "/v1/probe", body, NULL, &res);
		json_decref(body);
	} else {
		rc = gb_remote_call(cli, "GET", strcmp(verb, "sites") == 0
		                                        ? "/v1/sites"
		                                        : "/v1/nodes",
		                    NULL, NULL, &res);
	}
	if (rc != 0)
		return rc;
	*doc = json_incref(json_object_get(res, key));
	json_decref(res);
	if (!*doc) {
		gb_cli_err(cli, "the daemon answered without \"%s\"", key);
		return GB_EXIT_FAIL;
	}
	return 0;
}

static int run_nodes(gb_cli *cli)
{
	static const gb_column node_cols[] = {
		{"node", "node", 0},          {"site", "site", 0},
		{"shape", "shape", 0},        {"gpus", "gpus", 1},
		{"health", "health", 0},      {"d2d gb/s", "d2d", 1},
		{"fp32 tflop/s", "fp32", 1},  {"bf16 tflop/s", "bf16", 1},
		{"lease", "lease", 0},        {"probed", "probed", 0},
		{NULL, NULL, 0},
	};
	static const gb_column site_cols[] = {
		{"site", "name", 0},         {"country", "country", 0},
		{"jurisdiction", "jurisdiction", 0},
		{"lat", "lat", 1},           {"lon", "lon", 1},
		{"tags", "tags", 0},         {"gco2/kwh", "carbon_g_per_kwh", 1},
		{NULL, NULL, 0},
	};
	gb_runtime rt;
	const char *verb = "nodes";
	const char *const *argv = NULL;
	int argc = 0, rc;
	json_t *doc;
	char err[1024];

	if (cli->args.n) {
		if (!strcmp(cli->args.v[0], "probe")) {
			verb = "probe";
		} else if (!strcmp(cli->args.v[0], "clear")) {
			verb = "clear";
			if (cli->args.n < 2)
				return gb_cli_usage(cli, "'nodes clear' needs the "
				                         "node(s) to clear");
		} else if (!strcmp(cli->args.v[0], "sites")) {
			verb = "sites";
			if (cli->args.n > 1)
				return gb_cli_usage(cli, "'nodes sites' takes no "
				                         "arguments");
		} else {
			return gb_cli_usage(cli, "unknown subcommand \"%s\" "
			                         "(probe, clear, sites)",
			                    cli->args.v[0]);
		}
		argv = (const char *const *)cli->args.v + 1;
		argc = (int)cli->args.n - 1;
	}
	if (!strcmp(verb, "probe"))
		gb_cli_info(cli, "probing %s ...",
		            argc ? "the named nodes" : "every node");
	if (cli->server) {
		if ((rc = nodes_remote(cli, verb, argc, argv, &doc)) != 0)
			return rc;
	} else {
		if ((rc = gb_cli_runtime(cli, &rt, NULL, 0)) != 0)
			return rc;
		rc = gb_nodes_command(&rt.drivers, verb, argc, argv, &doc, err,
		                      sizeof(err));
		gb_runtime_free(&rt);
		if (rc != 0) {
			gb_cli_err(cli, "%s", err);
			return GB_EXIT_FAIL;
		}
	}
	if (!strcmp(verb, "sites")) {
		gb_out_render(cli, stdout, doc, doc, site_cols);
	} else if (cli->out != GB_OUT_TABLE) {
		gb_out_render(cli, stdout, doc, doc, node_cols);
	} else {
		gb_strv notes = {0};
		json_t *rows = node_rows(doc, &notes);
		if (json_array_size(rows) == 0)
			gb_cli_info(cli, "the inventory has no nodes");
		else
			gb_out_table(stdout, rows, node_cols);
		for (size_t i = 0; i < notes.n; i++)
			gb_cli_info(cli, "%s", notes.v[i]);
		gb_strv_free(&notes);
		json_decref(rows);
	}
	rc = GB_EXIT_OK;
	if (!strcmp(verb, "probe")) {
		/* a probe that found a node failing is a failure: scripts
		 * and CI see it (the table still lists every node) */
		size_t i, bad = 0;
		json_t *n;
		json_array_foreach(doc, i, n) {
			const char *st = json_string_value(json_object_get(
				json_object_get(n, "health"), "state"));
			if (st && (!strcmp(st, "unhealthy") ||
			           !strcmp(st, "unreachable")))
				bad++;
		}
		if (bad) {
			gb_cli_err(cli, "%zu of %zu probed node%s failed (see "
			           "above); fix them, then probe again or 'gpubroker "
			           "nodes clear NODE'", bad, json_array_size(doc),
			           json_array_size(doc) == 1 ? "" : "s");
			rc = GB_EXIT_FAIL;
		}
	}
	json_decref(doc);
	return rc;
}

const gb_cmd gb_cmd_nodes = {
	"nodes", "on-prem nodes: health, GPUs, measured figures, leases",
	"[probe [NODE...] | clear NODE... | sites]",
	"Lists the nodes of the on-prem inventory (broker config: onprem:\n"
	"{inventory: PATH}) with their health, GPUs, the bandwidth and TFLOP/s\n"
	"the probe measured, their lease and the age of the last probe.\n"
	"'nodes probe [NODE...]' copies gpuprobe to the nodes when needed,\n"
	"runs it and stores the results; unreachable or unhealthy nodes are\n"
	"not offered, and the command exits 1 when a probed node failed.\n"
	"A node whose setup failed, or that could not be reached while a\n"
	"pool was given it, is marked unhealthy (or unreachable) with the\n"
	"reason and is not offered until a probe finds it healthy or\n"
	"'nodes clear NODE...' says it is fixed (which also forgets a\n"
	"failing probe report).  'nodes sites' lists the inventory's sites.\n"
	"With --server: the daemon's inventory (GET /v1/nodes, GET /v1/sites,\n"
	"and, with an admin token, POST /v1/probe and POST\n"
	"/v1/nodes/NODE/clear).",
	NULL, run_nodes,
};
