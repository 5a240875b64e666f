/*
 * remote.h -- the CLI talking to a gpubroker daemon (--server URL or
 * GPUBROKER_SERVER, --token or GPUBROKER_TOKEN): the HTTP client.  The
 * pool commands use it through remote_backend.c (backend.h); plan,
 * offers, drivers, nodes and audit call it directly.
 */
#ifndef GB_REMOTE_H
#define GB_REMOTE_H

#include <jansson.h>

#include "cli.h"

/* One API call.  body may be NULL.  On success (2xx) returns 0 and the
 * decoded JSON in *out (new reference, may be NULL for empty bodies).
 * On failure prints why (the server's message, or the network error)
 * and returns GB_EXIT_FAIL. *status gets the HTTP status (0 = none). */
int gb_remote_call(const gb_cli *cli, const char *method, const char *path,
                   json_t *body, long *status, json_t **out);

#endif
