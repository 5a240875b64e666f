/*
 * drivers.h -- loading provider drivers (shared objects) and giving each
 * its host table.  See gpubroker/driver.h for the ABI itself.
 *
 * Loading refuses, naming the file and the reason: a file dlopen cannot
 * load, a missing gb_driver_entry symbol, an entry that returns NULL, an
 * ABI major mismatch, a descriptor shorter than the minor-0 layout, a
 * missing name, a name other than the configured one, and a NULL
 * mandatory method.  Optional methods are called only through
 * GB_DRV_HAS(), which checks the driver's minor version, the descriptor's
 * size and the pointer.
 */
#ifndef GB_DRIVERS_H
#define GB_DRIVERS_H

#include <jansson.h>

#include <stddef.h>

#include "catalog.h"
#include "config.h"
#include "gpubroker/driver.h"
#include "http.h"

typedef struct gb_drv {
	char *name;          /* configured name */
	char *path;          /* the .so */
	void *dl;
	const gb_driver *d;  /* NULL unless the descriptor was accepted */
	void *ctx;           /* from init; NULL unless ready */
	int ready;           /* init succeeded */
	char status[600];    /* "ready" or why not (load or init failure) */
	gb_kvs options;
	gb_host host;
	gb_http_client *http;
} gb_drv;

typedef struct gb_drivers {
	gb_drv **v;
	size_t n;
} gb_drivers;

/* Which minor version introduced each optional method. */
#define GB_DRV_MINOR_refresh_prices 0
#define GB_DRV_MINOR_quota 0
#define GB_DRV_MINOR_command 1
#define GB_DRV_MINOR_default_rates 2
#define GB_DRV_MINOR_options 4
/* 1 when drv's descriptor has a usable `method`. */
#define GB_DRV_HAS(drv, method)                                               \
	((drv)->d && (drv)->d->abi_minor + 1u > GB_DRV_MINOR_##method &&      \
	 (drv)->d->struct_size >= offsetof(gb_driver, method) + sizeof(void *) && \
	 (drv)->d->method != NULL)

/* Open and validate one driver file (no init).  expect_name may be NULL.
 * Returns 0, or -1 with a message naming the file and the reason.
 * Ownership: caller frees *out with gb_drv_close. */
int gb_drv_open(const char *path, const char *expect_name, gb_drv **out,
                char *err, size_t cap);
/* Build the host table and call init.  options are copied; "data_dir"
 * (shared data) and "bin_dir" (where gpubroker's executables are) are
 * added when absent.  0, or -1 with the driver's message in err. */
int gb_drv_init(gb_drv *drv, const gb_kvs *options, char *err, size_t cap);
void gb_drv_close(gb_drv *drv);

/* Load every driver in cfg (or the four shipped ones when cfg lists
 * none).  Drivers that fail to load or initialise stay in the list with
 * ready = 0 and a status saying why.  Returns how many are ready. */
size_t gb_drivers_load(gb_drivers *out, const gb_config *cfg);
gb_drv *gb_drivers_find(const gb_drivers *ds, const char *name);
void gb_drivers_free(gb_drivers *ds);
/* [{name, version, abi, capabilities, status, ready, path}] for
 * `gpubroker drivers` and GET /v1/drivers.  New reference. */
json_t *gb_drivers_json(const gb_drivers *ds);

/* list_offers of every ready driver into cat.  Problems (a driver whose
 * catalog cannot be read) are logged and listed in *problems (caller
 * frees with gb_strv_free); returns the number of offers added. */
size_t gb_drivers_offers(gb_drivers *ds, gb_catalog *cat, gb_strv *problems);

/* The host's secret lookup, shared with core code that needs a secret:
 * source "env:NAME", "file:/path" or a bare NAME (environment).  Copies
 * into buf and registers the value for redaction; length or -1. */
int gb_secret_lookup(const char *source, char *buf, size_t cap);

#endif
