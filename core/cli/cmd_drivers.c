/* cmd_drivers.c -- `gpubroker drivers`: what is loaded and in what state. */
#include <jansson.h>
#include <string.h>

#include "output.h"
#include "remote.h"
#include "cli_app.h"

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
	if (cli->args.n)
		return gb_cli_usage(cli, "takes no arguments");
	if (cli->server) {
		json_t *res = NULL;
		if ((rc = gb_remote_call(cli, "GET", "/v1/drivers", NULL, NULL,
		                         &res)) != 0)
			return rc;
		rows = json_object_get(res, "drivers");
		gb_out_render(cli, stdout, rows, rows, cols);
		json_decref(res);
		return GB_EXIT_OK;
	}
	if ((rc = gb_cli_runtime(cli, &rt, NULL, 0)) != 0)
		return rc;
	rows = gb_drivers_json(&rt.drivers);
	gb_out_render(cli, stdout, rows, rows, cols);
	json_decref(rows);
	gb_runtime_free(&rt);
	return GB_EXIT_OK;
}

const gb_cmd gb_cmd_drivers = {
	"drivers", "list provider drivers with version, capabilities, status",
	"", "Loads every driver named in the config (or, when it names none, every\n"
	"driver installed in the driver directory)\n"
	    "and shows whether it loaded and initialised, and why not.  With\n"
	    "--server: the daemon's drivers (GET /v1/drivers).",
	NULL, run_drivers,
};
