/* drvc_util.h -- the error helpers every driver uses: filling a
 * gb_error, and the checks of credentials and of the host table at init.
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Thread-safety: reentrant.  Ownership: err is the caller's; nothing is
 * allocated. */
#ifndef DRVC_UTIL_H
#define DRVC_UTIL_H

#include "gpubroker/driver.h"

/* Fill err (printf-style message, truncated to fit). */
void drvc_err(gb_error *err, gb_err_class cls, int http_status,
              const char *code, const char *fmt, ...) GB_PRINTF(5, 6);

/* 0 when problem is NULL (the driver's credentials are usable); else -1
 * with err AUTH, code CredentialsMissing and problem as the message. */
int drvc_creds_ok(const char *problem, gb_error *err);

/* 0 when host has this ABI major and the methods a cloud driver needs
 * (http, http_free, now_ms, mono_ms, sleep_ms, secret); else -1 with err
 * INTERNAL, code HostTooOld, "<name> driver: the host table lacks
 * required methods". */
int drvc_host_ok(const gb_host *host, const char *name, gb_error *err);

#endif
