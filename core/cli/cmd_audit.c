/* cmd_audit.c -- `gpubroker audit`: who changed what, and how it went. */
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "events_json.h"
#include "output.h"
#include "remote.h"
#include "store.h"

static const char *a_team;

static const gb_flag *audit_flags(void)
{
	static const gb_flag f[] = {
		{"team", 0, "TEAM", "only rows of this team: its tokens' or its "
		 "pools' (the team that owned the pool then)", &a_team, NULL,
		 NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static int run_audit(gb_cli *cli)
{
	static const gb_column cols[] = {
		{"time", "time", 0},     {"actor", "actor", 0},
		{"role", "role", 0},     {"team", "team", 0},
		{"action", "action", 0}, {"target", "target", 0},
		{"result", "result", 0}, {"pool team", "pool_team", 0},
		{"inc", "pool_incarnation", 1}, {"detail", "detail", 0},
		{NULL, NULL, 0},
	};
	json_t *rows;
	if (cli->args.n)
		return gb_cli_usage(cli, "unexpected argument \"%s\"",
		                    cli->args.v[0]);
	if (cli->server) {
		json_t *res = NULL;
		char *enc = a_team ? curl_easy_escape(NULL, a_team, 0) : NULL;
		char *path = gb_xasprintf("/v1/audit%s%s", enc ? "?team=" : "",
		                          enc ? enc : "");
		int rc = gb_remote_call(cli, "GET", path, NULL, NULL, &res);
		curl_free(enc);
		free(path);
		if (rc != 0)
			return GB_EXIT_FAIL;
		rows = json_incref(json_object_get(res, "audit"));
		json_decref(res);
	} else {
		gb_store *st;
		gb_audit_row *v;
		size_t n;
		char err[512];
		if (gb_cli_config(cli))
			return GB_EXIT_FAIL;
		if (gb_store_open_cfg(&cli->cfg, &st, err, sizeof(err)) != 0) {
			gb_cli_err(cli, "%s", err);
			return GB_EXIT_FAIL;
		}
		if (gb_store_audit_list(st, 0, a_team, 100000, &v, &n) != 0) {
			gb_cli_err(cli, "%s", gb_store_errmsg(st));
			gb_store_close(st);
			return GB_EXIT_FAIL;
		}
		rows = gb_audit_json(v, n);
		gb_audit_list_free(v, n);
		gb_store_close(st);
	}
	if (!json_array_size(rows) && cli->out == GB_OUT_TABLE)
		gb_cli_info(cli, "no audit rows (mutations through the daemon's "
		                 "API are recorded here)");
	else
		gb_out_render(cli, stdout, rows, rows, cols);
	json_decref(rows);
	return GB_EXIT_OK;
}

const gb_cmd gb_cmd_audit = {
	"audit", "show every mutation made through the daemon's API",
	"[--team TEAM]",
	"One row per PUT/DELETE/POST that changes state (also refused ones):\n"
	"time, actor (token name), role, team (the token's), action, target,\n"
	"result (HTTP status) and detail.  A row about a pool also has the\n"
	"team that owned the pool then and its incarnation (inc): a name\n"
	"destroyed and applied again by another team is a new incarnation.\n"
	"Through --server this needs an admin token.",
	audit_flags, run_audit,
};
