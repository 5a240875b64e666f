/*
 * drvc_catalog.h -- reads a driver's default offers file and emits one
 * gb_offer per (type, region, zone, capacity): the usual list_offers, fast
 * and offline (it runs on every CLI command).
 *
 * File format (JSON; in the source tree data/offers.json next to the
 * driver's code, installed as
 * <prefix>/share/gpubroker/drivers/<name>/data/offers.json):
 * {
 *   "format": 1,
 *   "cloud": "aws",
 *   "source": "where the prices come from (URL / document, and how)",
 *   "fetched_at": "2026-11-01",            (date or RFC 3339 time, UTC)
 *   "currency": "USD",
 *   "types": [
 *     {"type": "p5.48xlarge", "gpu": "H100", "gpus": 8,
 *      "gpu_memory_gb": 80, "vcpus": 192, "ram_gb": 2048,
 *      "regions": {
 *        "us-east-1": {"on_demand": 55.04, "spot": 31.5,
 *                      "zones": ["us-east-1a", "us-east-1b"],
 *                      "spot_zones": {"us-east-1a": 30.9}}   (optional)
 *      }}
 *   ]
 * }
 * Required: "source" (string), "fetched_at", "types"; per type "type",
 * "gpu" (a canonical model name, see gb_offer.gpu_model), "gpus",
 * "gpu_memory_gb", "vcpus", "ram_gb", "regions" (gpus >= 1).  Prices
 * are USD per instance-hour; "on_demand" and "spot" may each be absent or
 * null where that capacity is not sold.  "format", "cloud" and "currency"
 * document the file and are not read (prices are always USD).
 * "spot" may be absent or null where the type has no spot market there;
 * a null value in "spot_zones" means no spot market in that zone;
 * "zones" may be absent or [] for clouds or regions without zones (one
 * offer with zone "" is emitted per capacity then).
 * A region entry whose price was checked apart from the rest carries its
 * own provenance: "on_demand_source" / "on_demand_fetched_at" (strings,
 * the fetched_at a date or RFC 3339 time) for its on-demand price, and
 * "spot_source" / "spot_fetched_at" for its spot prices; each defaults
 * to the file's "source" / "fetched_at".  So `offers` shows each price's
 * own age.
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Thread-safety: reentrant (no shared state; each call reads the file
 * anew), so a driver may call these from list_offers on any thread.
 * Ownership: every gb_offer passed to emit, and its strings, are valid
 * for that callback only (the host copies what it keeps).
 */
#ifndef DRVC_CATALOG_H
#define DRVC_CATALOG_H

#include "gpubroker/driver.h"

/* Emits every offer in the file at path.  `region` non-NULL limits to that
 * region.  Returns 0, or -1 with err (INVALID for a malformed file,
 * NOT_FOUND when missing).  Every message names the file and the field. */
int drvc_catalog_emit(const char *path, const char *region, gb_offer_cb emit,
                      void *ud, gb_error *err);

/* The default path of a driver's offers file: host option "catalog" when
 * set, else <data_dir>/drivers/<name>/data/offers.json.  Writes into buf;
 * returns buf, or NULL when neither option is set. */
const char *drvc_catalog_path(const gb_host *host, const char *name,
                              char *buf, size_t cap);

/* A driver's list_offers: every offer of the file drvc_catalog_path
 * names, or -1 with err NOT_FOUND ("<name>: no offers file: ...") when
 * neither option is set. */
int drvc_catalog_list(const gb_host *host, const char *name,
                      gb_offer_cb emit, void *ud, gb_error *err);

#endif
