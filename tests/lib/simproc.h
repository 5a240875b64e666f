/*
 * simproc.h -- cloudsim as a child process, for C tests.
 *
 *   simproc *sp = simproc_start(NULL, scenario, err, sizeof(err));
 *   simproc_apply_env(sp);          the drivers now point at it
 *   simproc_scenario(sp, "{\"eventual_consistency_ms\": 500}");
 *   json_t *j = simproc_get_json(sp, "/_sim/instances?live=1&cloud=aws");
 *   ...
 *   rc = simproc_stop(sp);          0 = cloudsim exited cleanly
 *
 * simproc_start runs `cloudsim --scenario FILE --port 0` (the binary is
 * $GB_BUILD/bin/cloudsim unless a path is given), reads the first stdout
 * line (the JSON object with the URLs) and fetches GET /_sim/env.  The
 * child dies with the test (PR_SET_PDEATHSIG) and its stderr is the
 * test's stderr, so sanitizer reports of cloudsim land in the test log.
 * Every control call goes to 127.0.0.1 only, never through a proxy.
 */
#ifndef SIMPROC_H
#define SIMPROC_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

typedef struct simproc simproc;

/* Starts cloudsim on ephemeral ports.  cloudsim may be NULL (then
 * $GB_BUILD/bin/cloudsim, else build/bin/cloudsim).  Returns NULL with a
 * message in err when the binary is missing, the scenario is refused or
 * no URL line arrives within 20 s.  Ownership: simproc_stop frees. */
simproc *simproc_start(const char *cloudsim, const char *scenario, char *err,
                       size_t cap);

/* SIGTERM, wait up to 20 s (then SIGKILL), free.  Returns cloudsim's exit
 * status (0 = clean; non-zero when it crashed, was killed, or a sanitizer
 * reported at exit).  NULL is fine (returns 0). */
int simproc_stop(simproc *sp);

pid_t simproc_pid(const simproc *sp);

/* A URL from the first line: "aws", "azure", "azure_login", "gcp",
 * "gcp_token", "control", "workdir".  Borrowed until simproc_stop. */
const char *simproc_url(const simproc *sp, const char *which);

/* The value of one `export NAME=...` line of /_sim/env (unquoted), or
 * NULL.  Borrowed until simproc_stop. */
const char *simproc_env(const simproc *sp, const char *name);
/* setenv() every /_sim/env variable (overwriting).  Returns how many. */
size_t simproc_apply_env(const simproc *sp);

/* GET/POST on the control listener (path starts with "/_sim/").
 * Returns the HTTP status (0 on a transport failure); *body (may be NULL)
 * gets the answer, caller frees. */
long simproc_get(simproc *sp, const char *path, char **body);
long simproc_post(simproc *sp, const char *path, const char *json,
                  char **body);
/* GET parsed as JSON; NULL on failure.  Caller json_decref()s. */
json_t *simproc_get_json(simproc *sp, const char *path);
/* POST /_sim/scenario; 0 when cloudsim accepted the change, else -1
 * after printing cloudsim's answer to stderr. */
int simproc_scenario(simproc *sp, const char *json);
/* POST /_sim/reclaim {"ids":[id]}; 0 when cloudsim reclaimed it. */
int simproc_reclaim(simproc *sp, const char *id);
/* POST /_sim/reset; 0 or -1. */
int simproc_reset(simproc *sp);

/* /_sim/counters helpers: calls of one operation ("DescribeInstances",
 * "ListVMs", "instances.aggregatedList", ...) and faults of one kind
 * ("throttled", "error", "lost_response", "capacity", "quota",
 * "reclaimed", "auth_refused") for one cloud.  -1 when unreadable. */
long long simproc_calls(simproc *sp, const char *cloud, const char *op);
long long simproc_faults(simproc *sp, const char *cloud, const char *kind);

#endif
