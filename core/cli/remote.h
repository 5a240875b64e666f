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

/* gb_remote_try: the daemon could not be reached, or answered what a
 * restart or a failover answers (HTTP 502, 503, 504). */
#define GB_REMOTE_UNREACHABLE (-2)

/* The bearer token for the daemon (remote_oidc.c): --token, else one
 * exchanged (once per process) for the CI job's OIDC ID token
 * (--oidc-token-file, GPUBROKER_OIDC_TOKEN, or GitHub Actions' runner
 * when ACTIONS_ID_TOKEN_REQUEST_URL is set), else NULL.  0, or
 * GB_EXIT_FAIL after printing why.  *out is borrowed (process lifetime). */
int gb_remote_bearer(const gb_cli *cli, const char **out);

/* One API call.  body may be NULL.  On success (2xx) returns 0 and the
 * decoded JSON in *out (new reference, may be NULL for empty bodies).
 * On failure prints why (the server's message, or the network error)
 * and returns GB_EXIT_FAIL. *status gets the HTTP status (0 = none). */
int gb_remote_call(const gb_cli *cli, const char *method, const char *path,
                   json_t *body, long *status, json_t **out);
/* The same, for callers that ride out a daemon that restarts or fails
 * over: with why (cap bytes) set, a failure that trying again may cure
 * (connection refused, reset or timed out; HTTP 502, 503, 504) is not
 * printed: it returns GB_REMOTE_UNREACHABLE with the cause in why.
 * timeout_s bounds the whole call (0: the default, 120 s). */
int gb_remote_try(const gb_cli *cli, const char *method, const char *path,
                  json_t *body, long timeout_s, long *status, json_t **out,
                  char *why, size_t cap);

#endif
