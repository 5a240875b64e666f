/*
 * runtime.h -- what most commands need: the config, the loaded drivers and
 * the catalog of their offers.
 */
#ifndef GB_RUNTIME_H
#define GB_RUNTIME_H

#include "catalog.h"
#include "cli.h"
#include "drivers.h"

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

#endif
