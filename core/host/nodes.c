/* nodes.c -- node commands of the on-prem driver, as JSON. */
#include "nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

gb_drv *gb_nodes_driver(const gb_drivers *ds)
{
	gb_drv *d = gb_drivers_find(ds, "onprem");
	if (d)
		return d;
	for (size_t i = 0; i < ds->n; i++)
		if (ds->v[i]->d && (ds->v[i]->d->caps & GB_DRV_CAP_PROBE))
			return ds->v[i];
	return NULL;
}

static void collect(void *ud, const char *json)
{
	gb_buf_puts(ud, json);
}

int gb_nodes_command(const gb_drivers *ds, const char *verb, int argc,
                     const char *const *argv, json_t **doc, char *err,
                     size_t cap)
{
	gb_drv *drv = gb_nodes_driver(ds);
	gb_buf out = GB_BUF_INIT;
	gb_error e;
	json_error_t je;

	*doc = NULL;
	if (!drv) {
		snprintf(err, cap, "no on-prem driver is configured: add '- name: "
		                   "onprem' to drivers and 'onprem: {inventory: "
		                   "PATH}' to the broker config");
		return -1;
	}
	if (!drv->ready) {
		snprintf(err, cap, "the on-prem driver is not ready: %s",
		         drv->status);
		return -1;
	}
	if (!GB_DRV_HAS(drv, command)) {
		snprintf(err, cap, "driver %s (%s) has no command method (it "
		                   "needs driver ABI 1.1 or later)",
		         drv->name, drv->path);
		return -1;
	}
	memset(&e, 0, sizeof(e));
	if (drv->d->command(drv->ctx, verb, argc, argv, collect, &out, &e) != 0) {
		char *msg = gb_redact(e.message);
		snprintf(err, cap, "%s", msg);
		free(msg);
		gb_buf_free(&out);
		return -1;
	}
	*doc = json_loads(gb_buf_str(&out), 0, &je);
	gb_buf_free(&out);
	if (!*doc) {
		snprintf(err, cap, "driver %s answered with malformed JSON: %s",
		         drv->name, je.text);
		return -1;
	}
	return 0;
}
