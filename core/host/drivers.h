/*
 * drivers.h -- loading provider drivers (shared objects) and giving each
 * its host table.  See gpubroker/driver.h for the ABI itself.
 *
 * Each driver is named in the log ("loading driver NAME from PATH",
 * "initialising driver NAME", info level, flushed) before its code runs.
 * Loading refuses, naming the file and the reason: a file that is not a
 * complete ELF shared object for this machine (checked before dlopen, so
 * a truncated copy is refused instead of killing the process with
 * SIGBUS), a file dlopen cannot load, a missing gb_driver_entry symbol,
 * an entry that returns NULL, an ABI major mismatch, a descriptor
 * shorter than the minor-0 layout, a missing name, a name other than the
 * configured one, and a NULL mandatory method.  Optional methods are called only through
 * GB_DRV_HAS(), which checks the driver's minor version, the descriptor's
 * size and the pointer.
 *
 * While a driver loads (dlopen, its constructors, the entry, init), a
 * crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT), SIGTERM/SIGINT, or
 * exit() ends the process with a line on stderr naming the driver and
 * its file, and a non-zero status: the signal, or 1 for exit().  init
 * runs in its own thread with a deadline, the host option
 * init_timeout_ms (default 30000): past it the driver is refused and
 * its init thread abandoned (see gb_drv_init).
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
	char status[600];    /* "ready" or why not (load or init failure),
	                        or "no credentials found (looked in ...)" */
	int credentials;     /* what the driver said to the "credentials"
	                        verb (driver.h): 1 found, 0 none found, -1
	                        it did not say (needs none, or older) */
	char ssh_key_why[256]; /* the "requirements" verb (driver.h): why
	                        every create needs an SSH key; "" = it
	                        does not (or did not say) */
	gb_kvs options;
	gb_host host;
	gb_http_client *http;
	/* set when init missed its deadline: that thread still owns this
	 * gb_drv until init returns (gb_drv_close hands it over) */
	struct gb_drv_init_job *job;
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
/* Build the host table and call init; then ask the driver the
 * "credentials" verb (driver.h): none found sets drv->status to "no
 * credentials found (looked in ...)" (ready stays 1: offers work, cloud
 * calls will fail).  options are copied; "data_dir"
 * (shared data) and "bin_dir" (where gpubroker's executables are) are
 * added when absent.  init runs in a thread of its own, waited for up to
 * the option init_timeout_ms (1..3600000, default 30000); past it the
 * driver is refused ("init did not return within N ms") and the thread
 * abandoned: it keeps drv alive until init returns, then calls fini on
 * what a late successful init made.  0, or -1 with the driver's message
 * (or the bad option, or the deadline) in err and drv->status. */
int gb_drv_init(gb_drv *drv, const gb_kvs *options, char *err, size_t cap);
/* Calls fini when ready, unloads and frees drv -- or, while an abandoned
 * init still runs, leaves that to its thread. */
void gb_drv_close(gb_drv *drv);
/* How many abandoned init threads are still running. */
size_t gb_drv_abandoned_inits(void);

/* Load every driver in cfg (or the four shipped ones when cfg lists
 * none).  Drivers that fail to load or initialise stay in the list with
 * ready = 0 and a status saying why.  Returns how many are ready. */
size_t gb_drivers_load(gb_drivers *out, const gb_config *cfg);
/* The names of every driver in ds (ready or not), in load order, into
 * out (at most cap-1, then NULL; borrowed from ds).  Returns the count.
 * These are the clouds a spec may name (gb_spec_opts.clouds). */
size_t gb_drivers_names(const gb_drivers *ds, const char **out, size_t cap);
gb_drv *gb_drivers_find(const gb_drivers *ds, const char *name);
/* The provider's minimum billed seconds per instance (descriptor minor
 * 5): 0 when drv is NULL, not loaded, or its descriptor is older. */
int64_t gb_drv_billing_minimum_s(const gb_drv *drv);
void gb_drivers_free(gb_drivers *ds);
/* [{name, version, abi, capabilities, billing_minimum_s, status, ready,
 * credentials (true/false; absent when the driver does not say), path}]
 * for `gpubroker drivers` and GET /v1/drivers.  New reference. */
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
