/*
 * nodes.h -- the on-prem driver's `command` verbs (nodes, probe, sites)
 * as JSON, for `gpubroker nodes` and the daemon's /v1/nodes, /v1/sites
 * and /v1/probe.
 */
#ifndef GB_NODES_H
#define GB_NODES_H

#include <jansson.h>

#include "drivers.h"

/* The driver that answers node commands: "onprem", else the first with
 * the probe capability.  Borrowed; NULL when none is loaded. */
gb_drv *gb_nodes_driver(const gb_drivers *ds);

/* Runs verb with argv on that driver.  Returns 0 and the answer in *doc
 * (new reference), or -1 with a message a person can act on in err
 * (secrets redacted) and *doc NULL. */
int gb_nodes_command(const gb_drivers *ds, const char *verb, int argc,
                     const char *const *argv, json_t **doc, char *err,
                     size_t cap);

#endif
