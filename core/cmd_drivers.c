/* cmd_drivers.c -- `gpubroker drivers`: what is loaded and in what state. */
#include <jansson.h>
#include <string.h>

#include "output.h"
#include "runtime.h"

static json_t *caps_json(uint64_t caps)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} names[] = {
		{GB_DRV_CAP_SPOT, "spot"},
		{GB_DRV_CAP_BATCH_CREATE, "batch-create"},
		{GB_DRV_CAP_QUOTA, "quota"},
		{GB_DRV_CAP_PRICE_REFRESH, "price-refresh"},
		{GB_DRV_CAP_PROBE, "probe"},
		{GB_DRV_CAP_ZONES, "zones"},
	};
	json_t *a = json_array();
	for (size_t i = 0; i < GB_ARRAY_LEN(names); i++)
		if (caps & names[i].bit)
			json_array_append_new(a, json_string(names[i].name));
	return a;
}

static int run_drivers(gb_cli *cli)
{
	gb_runtime rt;
	json_t *rows;
	int rc = gb_runtime_open(cli, &rt, 0);
	static const gb_column cols[] = {
		{"name", "name", 0},       {"version", "version", 0},
		{"abi", "abi", 0},         {"capabilities", "capabilities", 0},
		{"status", "status", 0},   {"path", "path", 0},
		{NULL, NULL, 0},
	};
	if (rc)
		return rc;
	if (cli->args.n)
		return gb_cli_usage(cli, "takes no arguments");
	rows = json_array();
	for (size_t i = 0; i < rt.drivers.n; i++) {
		gb_drv *d = rt.drivers.v[i];
		json_t *r = json_object();
		char abi[32] = "-";
		if (d->d)
			snprintf(abi, sizeof(abi), "%u.%u", d->d->abi_major,
			         d->d->abi_minor);
		json_object_set_new(r, "name", json_string(d->name));
		json_object_set_new(r, "version",
		                    d->d ? json_string(d->d->version ? d->d->version : "")
		                         : json_null());
		json_object_set_new(r, "abi", json_string(abi));
		json_object_set_new(r, "capabilities",
		                    d->d ? caps_json(d->d->caps) : json_array());
		json_object_set_new(r, "status", json_string(d->status));
		json_object_set_new(r, "ready", json_boolean(d->ready));
		json_object_set_new(r, "path", json_string(d->path));
		json_array_append_new(rows, r);
	}
	gb_out_render(cli, stdout, rows, rows, cols);
	json_decref(rows);
	gb_runtime_free(&rt);
	return GB_EXIT_OK;
}

const gb_cmd gb_cmd_drivers = {
	"drivers", "list provider drivers with version, capabilities, status",
	"", "Loads every driver named in the config (or the four shipped ones)\n"
	    "and shows whether it loaded and initialised, and why not.",
	NULL, run_drivers,
};
