/*
 * nodes.h -- the node drivers' `command` verbs (nodes, probe, sites)
 * as JSON, for `gpubroker nodes` and the daemon's /v1/nodes, /v1/sites
 * and /v1/probe.
 */
#ifndef GB_NODES_H
#define GB_NODES_H

#include <jansson.h>

#include "drivers.h"

/* The first driver with the probe capability (GB_DRV_CAP_PROBE), ready
 * or not.  Borrowed; NULL when none is loaded. */
gb_drv *gb_nodes_driver(const gb_drivers *ds);

/* Runs verb with argv on every driver with the probe capability (nodes
 * are whatever those drivers manage, whatever their names).  Their array
 * answers are concatenated, each object element marked "driver": NAME;
 * an object answer (one node's) is returned as it is.  With named nodes
 * (argc > 0) a driver that does not know them (NOT_FOUND, INVALID) is
 * passed over when another answers.  Returns 0 and the answer in *doc
 * (new reference), or -1 with a message a person can act on in err
 * (secrets redacted) and *doc NULL. */
int gb_nodes_command(const gb_drivers *ds, const char *verb, int argc,
                     const char *const *argv, json_t **doc, char *err,
                     size_t cap);

/* Checks an on-prem inventory file with the node driver at driver_path
 * (a private instance, initialised without an inventory, so a broken
 * configured inventory does not stand in the way): its
 * "check-inventory" verb.  0 and *doc ({file, sites, nodes, errors:
 * ["FILE:LINE:COL: error: KEY: message", ...]}, new reference), or -1
 * with err (the driver could not be loaded, or has no such verb). */
int gb_nodes_check_inventory(const char *driver_path, const char *file,
                             json_t **doc, char *err, size_t cap);

#endif
