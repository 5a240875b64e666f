/*
 * runtime.h -- what most commands and the daemon need: the loaded
 * drivers and the catalog of their offers, for a config the caller
 * loaded.  The app layer knows no command line: errors come back as
 * text, and nothing here prints.
 */
#ifndef GB_RUNTIME_H
#define GB_RUNTIME_H

#include "catalog.h"
#include "config.h"
#include "drivers.h"
#include "plan.h"
#include "store.h"

typedef struct gb_runtime {
	gb_drivers drivers;
	gb_catalog *cat;
	gb_strv problems;  /* drivers that failed, catalogs that failed */
} gb_runtime;

/* Loads every driver of cfg and, with want_offers, their offers plus the
 * prices refreshed into the state store: st when the caller has the
 * store open (so a process opens it once), else the store at
 * cfg->state_path when that file exists (opened and closed here).
 * Drivers that fail are not fatal: they are listed in rt->problems (and
 * shown by `gpubroker drivers`).  cfg is borrowed and must outlive rt (the
 * drivers keep pointers into it).  Ownership: free with gb_runtime_free. */
void gb_runtime_open(const gb_config *cfg, gb_store *st, gb_runtime *rt,
                     int want_offers);
void gb_runtime_free(gb_runtime *rt);

/* Warnings about what a candidate cloud needs that spec s lacks (an SSH
 * key: the drivers' "requirements" verb), as a JSON array of strings
 * (empty when none; caller owns it).  p: the spec's plan (its
 * candidates count), or NULL: the offers of cat for the spec's GPU
 * models and clouds. */
json_t *gb_spec_warnings(const gb_drivers *ds, const gb_catalog *cat,
                         const gb_pool_spec *s, const gb_plan *p);

/* A region glob (`offers --region`, GET /v1/offers?region=) against the
 * regions of cloud (NULL = every driver of rt): gb_region_glob_problem's
 * message, or NULL when it names one.  Caller frees. */
char *gb_runtime_region_problem(const gb_runtime *rt, const char *glob,
                                const char *cloud);

/* Refresh prices from each ready driver's price source (all, or only the
 * driver named `only`; region NULL = all) into the store, appending one
 * JSON row per driver to report.  Returns 0, -1 when any failed; *done
 * counts the drivers stored. */
int gb_offers_refresh(gb_drivers *ds, gb_store *st, const char *only,
                      const char *region, json_t *report, int *done);
/* Rebuild rt->cat (shipped catalogs + the prices stored in st, which
 * must be open); returns the old catalog, which the caller frees once
 * nothing borrows from it. */
gb_catalog *gb_runtime_reload_offers(gb_runtime *rt, gb_store *st);

#endif
