/* nodes.c -- node commands of the on-prem driver, as JSON. */
#include "nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

gb_drv *gb_nodes_driver(const gb_drivers *ds)
{
	for (size_t i = 0; i < ds->n; i++)
		if (ds->v[i]->d && (ds->v[i]->d->caps & GB_DRV_CAP_PROBE))
			return ds->v[i];
	return NULL;
}

static void collect(void *ud, const char *json)
{
	gb_buf_puts(ud, json);
}

/* verb on one driver: 0 and *doc, or -1 with err (and *cls). */
static int run_one(gb_drv *drv, const char *verb, int argc,
                   const char *const *argv, json_t **doc, gb_err_class *cls,
                   char *err, size_t cap)
{
	gb_buf out = GB_BUF_INIT;
	gb_error e;
	json_error_t je;
	*doc = NULL;
	*cls = GB_ERR_INTERNAL;
	if (!drv->ready) {
		snprintf(err, cap, "the %s driver is not ready: %s", drv->name,
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
		*cls = e.cls;
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

/* Appends the elements of a (an array) to all, each object marked with
 * the driver that answered. */
static void merge(json_t *all, json_t *a, const char *driver)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) {
		if (json_is_object(v) && !json_object_get(v, "driver"))
			json_object_set_new(v, "driver", json_string(driver));
		json_array_append(all, v);
	}
}

int gb_nodes_command(const gb_drivers *ds, const char *verb, int argc,
                     const char *const *argv, json_t **doc, char *err,
                     size_t cap)
{
	json_t *all = NULL, *single = NULL;
	size_t asked = 0, answered = 0;
	char first[1024] = "";
	int hard = 0;

	*doc = NULL;
	for (size_t i = 0; i < ds->n; i++) {
		gb_drv *drv = ds->v[i];
		json_t *d;
		gb_err_class cls;
		char e[1024];
		if (!drv->d || !(drv->d->caps & GB_DRV_CAP_PROBE))
			continue;
		asked++;
		if (run_one(drv, verb, argc, argv, &d, &cls, e, sizeof(e)) != 0) {
			/* with named nodes, a driver that does not know them
			 * says so (NOT_FOUND / INVALID); another may */
			if (!(argc > 0 && (cls == GB_ERR_NOT_FOUND ||
			                   cls == GB_ERR_INVALID)))
				hard = 1;
			if (!first[0])
				snprintf(first, sizeof(first), "%s", e);
			continue;
		}
		answered++;
		if (json_is_array(d)) {
			if (!all)
				all = json_array();
			merge(all, d, drv->name);
			json_decref(d);
		} else if (!single) {
			single = d;
		} else {
			json_decref(d);
		}
	}
	if (!asked) {
		snprintf(err, cap, "no driver that manages nodes is loaded (one "
		                   "with the probe capability, such as onprem): "
		                   "add '- name: onprem' to drivers and 'onprem: "
		                   "{inventory: PATH}' to the broker config");
		return -1;
	}
	if (!answered || hard) {
		snprintf(err, cap, "%s", first);
		json_decref(all);
		json_decref(single);
		return -1;
	}
	if (all) {
		json_decref(single);
		*doc = all;
	} else {
		*doc = single;
	}
	return 0;
}

int gb_nodes_check_inventory(const char *driver_path, const char *file,
                             json_t **doc, char *err, size_t cap)
{
	gb_drv *drv = NULL;
	gb_kvs opts;
	gb_err_class cls;
	const char *argv[1];
	int rc;
	*doc = NULL;
	memset(&opts, 0, sizeof(opts));
	if (gb_drv_open(driver_path, NULL, &drv, err, cap) != 0)
		return -1;
	if (gb_drv_init(drv, &opts, err, cap) != 0) {
		gb_drv_close(drv);
		return -1;
	}
	argv[0] = file;
	rc = run_one(drv, "check-inventory", 1, argv, doc, &cls, err, cap);
	gb_drv_close(drv);
	return rc;
}
