/* drvc_opts.h -- reading a driver's options (the broker config's
 * drivers[].options, through host->option) strictly: a value that is set
 * but cannot be used is an INVALID error naming the option, what it
 * accepts and what was found -- never a silent fall back to the default. */
#ifndef DRVC_OPTS_H
#define DRVC_OPTS_H

#include <stdint.h>

#include "gpubroker/driver.h"

/* The option's value (borrowed from the host), or NULL when unset or
 * empty. */
const char *drvc_opt(const gb_host *h, const char *key);

/* A whole number in [lo, hi]; *out = def when unset.  0, or -1 with err
 * (code BadOption). */
int drvc_opt_int(const gb_host *h, const char *key, int64_t def, int64_t lo,
                 int64_t hi, int64_t *out, gb_error *err);

/* true/yes/1 or false/no/0 (case-insensitive); *out = def when unset.
 * 0, or -1 with err (code BadOption). */
int drvc_opt_bool(const gb_host *h, const char *key, int def, int *out,
                  gb_error *err);

#endif
