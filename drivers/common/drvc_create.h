/*
 * drvc_create.h -- the parts of a driver's create method that do not
 * depend on the cloud: checking the request, and the all-or-nothing
 * cleanup of what a failed create made (one delete per instance, the
 * outcome noted in the error the caller returns); and the one error a
 * terminate of several instances returns when some deletes failed.
 *
 * For any driver whose create makes instances one request at a time
 * (a provider with a batch call that is all-or-nothing itself needs only
 * drvc_create_req_ok).
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Thread-safety: reentrant; a drvc_cleanup or drvc_failures belongs to
 * one create or terminate call.  Ownership: everything passed in is
 * borrowed for the call.
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

/* What a failed create does before it returns -1: a class of NONE
 * becomes INTERNAL; then, unless the class is THROTTLED or TRANSIENT (the
 * outcome is unknown to the host, which replays the create with the same
 * token and must find what this call made), every instance i < n with
 * touched[i] set is deleted, each failure logged at ERROR, and
 * err->message gets " [cleanup: deleted the <k> <noun>(s) of this
 * request]" or " [cleanup: <k> <noun>(s) deleted, <f> failed: <first
 * name>: <its error>]" (nothing when none was touched).  err's class and
 * code stay. */
void drvc_create_failed(const drvc_cleanup *cl, const int *touched,
                        size_t n, gb_error *err);

/* The failures of a terminate that deletes instance by instance. */
typedef struct drvc_failures {
	size_t n;
	gb_error first;
} drvc_failures;

#define DRVC_FAILURES_INIT {0, {0}}

/* Notes that deleting `name` failed with e: logs WARN "<log_prefix>:
 * terminate <name>: <message>" and keeps the first error. */
void drvc_failures_note(drvc_failures *f, const gb_host *h,
                        const char *log_prefix, const char *name,
                        const gb_error *e);
/* 0 when none failed; else -1 with *err the first failure, and " (and
 * <k> more <noun>(s) failed)" appended when there were more. */
int drvc_failures_result(const drvc_failures *f, const char *noun,
                         gb_error *err);

#endif
