/* drvc_util.h -- small helpers shared by the shipped drivers. */
#ifndef DRVC_UTIL_H
#define DRVC_UTIL_H

#include "gpubroker/driver.h"

/* Fill err (printf-style message, truncated to fit). */
void drvc_err(gb_error *err, gb_err_class cls, int http_status,
              const char *code, const char *fmt, ...) GB_PRINTF(5, 6);

#endif
