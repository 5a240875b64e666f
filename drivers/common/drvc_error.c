/* drvc_error.c -- filling gb_error inside drivers. */
#include "drvc_util.h"

#include <stdarg.h>
#include <stdio.h>

void drvc_err(gb_error *err, gb_err_class cls, int http_status,
              const char *code, const char *fmt, ...)
{
	va_list ap;
	if (!err)
		return;
	err->cls = cls;
	err->http_status = http_status;
	err->retry_after_ms = 0;
	snprintf(err->code, sizeof(err->code), "%s", code ? code : "");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
}

int drvc_creds_ok(const char *problem, gb_error *err)
{
	if (!problem)
		return 0;
	drvc_err(err, GB_ERR_AUTH, 0, "CredentialsMissing", "%s", problem);
	return -1;
}

int drvc_host_ok(const gb_host *host, const char *name, gb_error *err)
{
	if (!host || host->abi_major != GB_DRIVER_ABI_MAJOR || !host->http ||
	    !host->http_free || !host->now_ms || !host->mono_ms ||
	    !host->sleep_ms || !host->secret) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "HostTooOld",
		         "%s driver: the host table lacks required methods", name);
		return -1;
	}
	return 0;
}
