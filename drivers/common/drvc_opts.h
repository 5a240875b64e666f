/* drvc_opts.h -- reading a driver's options (the broker config's
 * drivers[].options, through host->option) strictly: a value that is set
 * but cannot be used is an INVALID error naming the option, what it
 * accepts and what was found -- never a silent fall back to the default.
 * Also the plain string settings most drivers have: option, else
 * environment, else default; and per-region variants "<key>.<region>".
 * List every key you read in gb_driver.options so the host can warn
 * about a typo (keys the host injects or reads itself need no entry).
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Thread-safety: reentrant (host->option is thread-safe).  Ownership:
 * as each function says: borrowed from the host until fini, or a
 * malloc'd copy. */
#ifndef DRVC_OPTS_H
#define DRVC_OPTS_H

#include <stdint.h>

#include "gpubroker/driver.h"

/* The option's value (borrowed from the host), or NULL when unset or
 * empty. */
const char *drvc_opt(const gb_host *h, const char *key);

/* The option key, else the environment variable env (when env is
 * non-NULL and the variable is set and non-empty), else def; a malloc'd
 * copy the caller frees, or NULL when all three are unset/NULL. */
char *drvc_opt_env(const gb_host *h, const char *key, const char *env,
                   const char *def);

/* Option "<key>.<region>" (region NULL counts as ""), borrowed from the
 * host, or NULL when unset or empty. */
const char *drvc_opt_region(const gb_host *h, const char *key,
                            const char *region);

/* A whole number in [lo, hi]; *out = def when unset.  0, or -1 with err
 * (code BadOption). */
int drvc_opt_int(const gb_host *h, const char *key, int64_t def, int64_t lo,
                 int64_t hi, int64_t *out, gb_error *err);

/* true/yes/1 or false/no/0 (case-insensitive); *out = def when unset.
 * 0, or -1 with err (code BadOption). */
int drvc_opt_bool(const gb_host *h, const char *key, int def, int *out,
                  gb_error *err);

#endif
