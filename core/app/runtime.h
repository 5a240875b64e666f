/*
 * runtime.h -- what most commands need: the config, the loaded drivers and
 * the catalog of their offers.
 */
#ifndef GB_RUNTIME_H
#define GB_RUNTIME_H

#include "catalog.h"
#include "cli.h"
#include "drivers.h"
#include "store.h"

typedef struct gb_runtime {
	gb_drivers drivers;
	gb_catalog *cat;
	gb_strv problems;  /* drivers that failed, catalogs that failed */
} gb_runtime;

/* Loads the config (gb_cli_config), every driver and their offers.
 * Returns 0, or GB_EXIT_FAIL after printing why (bad config).  Drivers
 * that fail are not fatal: they are listed in rt->problems (and shown by
 * `gpubroker drivers`).  Ownership: free with gb_runtime_free. */
int gb_runtime_open(gb_cli *cli, gb_runtime *rt, int want_offers);
void gb_runtime_free(gb_runtime *rt);

/* Refresh prices from each ready driver's price source (all, or only the
 * driver named `only`; region NULL = all) into the store, appending one
 * JSON row per driver to report.  Returns 0, -1 when any failed; *done
 * counts the drivers stored. */
int gb_offers_refresh(gb_drivers *ds, gb_store *st, const char *only,
                      const char *region, json_t *report, int *done);
/* Rebuild rt->cat (shipped catalogs + stored prices); returns the old
 * catalog, which the caller frees once nothing borrows from it. */
gb_catalog *gb_runtime_reload_offers(gb_cli *cli, gb_runtime *rt);

#endif
