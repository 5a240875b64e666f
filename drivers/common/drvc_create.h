/*
 * drvc_create.h -- the parts of a driver's create method that do not
 * depend on the cloud: checking the request, and the all-or-nothing
 * cleanup of what a failed create made (one delete per instance, the
 * outcome noted in the error the caller returns).
 *
 * Owned by drivers/common; used by the azure and gcp drivers (they
 * create instances one by one; aws creates in one batch call).
 */
#ifndef DRVC_CREATE_H
#define DRVC_CREATE_H

#include <stddef.h>

#include "gpubroker/driver.h"

/* 0 when region, instance_type, token, name_prefix, pool and broker_id are
 * set and non-empty and count is in 1..max; else -1 with err INVALID,
 * code InvalidRequest, message "<who> create: <field> is required" or
 * "<who> create: count <n> is outside 1..<max>". */
int drvc_create_req_ok(const gb_create_req *r, const char *who, int max,
                       gb_error *err);

/* How drvc_create_cleanup deletes instance i and names it. */
typedef struct drvc_cleanup {
	const gb_host *host;
	const char *log_prefix;  /* "azure": log lines start "azure: " */
	const char *noun;        /* "VM": "VM(s)" in the note */
	/* 0 when instance i is deleted, -1 with err otherwise */
	int (*del)(void *ud, size_t i, gb_error *err);
	/* the name of instance i (borrowed) */
	const char *(*name)(void *ud, size_t i);
	void *ud;
} drvc_cleanup;

/* Deletes every instance i < n with touched[i] set, logs each failure at
 * ERROR, and appends to err->message " [cleanup: deleted the <k>
 * <noun>(s) of this request]" or " [cleanup: <k> <noun>(s) deleted, <f>
 * failed: <first name>: <its error>]" (nothing when none was touched).
 * err's class and code are left as they are. */
void drvc_create_cleanup(const drvc_cleanup *cl, const int *touched,
                         size_t n, gb_error *err);

#endif
