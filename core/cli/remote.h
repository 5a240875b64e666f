/*
 * remote.h -- the CLI talking to a gpubroker daemon (--server URL or
 * GPUBROKER_SERVER, --token or GPUBROKER_TOKEN).  Every function prints
 * the same output and returns the same exit codes as local mode.
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

int gb_remote_apply(gb_cli *cli, const gb_strv *files, int wait,
                    int64_t timeout_s, int yes);
int gb_remote_destroy(gb_cli *cli, const char *pool, int64_t timeout_s);
int gb_remote_scale(gb_cli *cli, const char *pool, int n);
int gb_remote_status(gb_cli *cli, const char *pool);
int gb_remote_events(gb_cli *cli, const char *pool, int follow,
                     int64_t since_ms);
int gb_remote_cost(gb_cli *cli, const char *by, int64_t since_s);
int gb_remote_gc(gb_cli *cli, int adopt);

#endif
