/* drvc_create.c -- see drvc_create.h. */
#include "drvc_create.h"

#include <stdio.h>
#include <string.h>

#include "drvc_util.h"

int drvc_create_req_ok(const gb_create_req *r, const char *who, int max,
                       gb_error *err)
{
	const char *missing = !r->region || !*r->region ? "region"
	                      : !r->instance_type || !*r->instance_type
	                              ? "instance_type"
	                      : !r->token || !*r->token ? "token"
	                      : !r->name_prefix || !*r->name_prefix
	                              ? "name_prefix"
	                      : !r->pool || !*r->pool ? "pool"
	                      : !r->broker_id || !*r->broker_id ? "broker_id"
	                                                        : NULL;
	if (missing) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidRequest",
		         "%s create: %s is required", who, missing);
		return -1;
	}
	if (r->count < 1 || r->count > (unsigned)max) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidRequest",
		         "%s create: count %u is outside 1..%d", who, r->count,
		         max);
		return -1;
	}
	return 0;
}

void drvc_create_failed(const drvc_cleanup *cl, const int *touched,
                        size_t n, gb_error *err)
{
	const gb_host *h = cl->host;
	size_t deleted = 0, failed = 0, m;
	char first[200] = "";
	if (err->cls == GB_ERR_NONE)
		err->cls = GB_ERR_INTERNAL;
	if (err->cls == GB_ERR_THROTTLED || err->cls == GB_ERR_TRANSIENT)
		return;
	for (size_t i = 0; i < n; i++) {
		gb_error e;
		if (!touched[i])
			continue;
		if (cl->del(cl->ud, i, &e) == 0) {
			deleted++;
			continue;
		}
		if (!failed++)
			snprintf(first, sizeof(first), "%.64s: %.120s",
			         cl->name(cl->ud, i), e.message);
		if (h->log)
			h->log(h->ctx, GB_LOG_ERROR,
			       "%s: cleanup of %s %s failed: %s", cl->log_prefix,
			       cl->noun, cl->name(cl->ud, i), e.message);
	}
	if (!deleted && !failed)
		return;
	m = strlen(err->message);
	if (failed)
		snprintf(err->message + m, sizeof(err->message) - m,
		         " [cleanup: %zu %s(s) deleted, %zu failed: %s]", deleted,
		         cl->noun, failed, first);
	else
		snprintf(err->message + m, sizeof(err->message) - m,
		         " [cleanup: deleted the %zu %s(s) of this request]",
		         deleted, cl->noun);
}

void drvc_failures_note(drvc_failures *f, const gb_host *h,
                        const char *log_prefix, const char *name,
                        const gb_error *e)
{
	if (!f->n++)
		f->first = *e;
	if (h->log)
		h->log(h->ctx, GB_LOG_WARN, "%s: terminate %s: %s", log_prefix,
		       name, e->message);
}

int drvc_failures_result(const drvc_failures *f, const char *noun,
                         gb_error *err)
{
	size_t m;
	if (!f->n)
		return 0;
	*err = f->first;
	if (f->n > 1) {
		m = strlen(err->message);
		snprintf(err->message + m, sizeof(err->message) - m,
		         " (and %zu more %s(s) failed)", f->n - 1, noun);
	}
	return -1;
}
