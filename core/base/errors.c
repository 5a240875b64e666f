/* errors.c -- gb_error helpers and enum names. */
#include "util.h"

#include <string.h>
#include <strings.h>

void gb_error_set(gb_error *err, gb_err_class cls, int http_status,
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

const char *gb_err_class_name(gb_err_class cls)
{
	switch (cls) {
	case GB_ERR_NONE: return "none";
	case GB_ERR_CAPACITY: return "capacity";
	case GB_ERR_QUOTA: return "quota";
	case GB_ERR_THROTTLED: return "throttled";
	case GB_ERR_TRANSIENT: return "transient";
	case GB_ERR_AUTH: return "auth";
	case GB_ERR_INVALID: return "invalid";
	case GB_ERR_NOT_FOUND: return "not_found";
	case GB_ERR_CONFLICT: return "conflict";
	case GB_ERR_INTERNAL: return "internal";
	}
	return "unknown";
}

const char *gb_capacity_name(gb_capacity c)
{
	switch (c) {
	case GB_CAPACITY_ON_DEMAND: return "on-demand";
	case GB_CAPACITY_SPOT: return "spot";
	case GB_CAPACITY_RESERVED: return "reserved";
	}
	return "unknown";
}

int gb_capacity_parse(const char *s, gb_capacity *out)
{
	if (strcmp(s, "on-demand") == 0 || strcmp(s, "ondemand") == 0)
		*out = GB_CAPACITY_ON_DEMAND;
	else if (strcmp(s, "spot") == 0)
		*out = GB_CAPACITY_SPOT;
	else if (strcmp(s, "reserved") == 0)
		*out = GB_CAPACITY_RESERVED;
	else
		return -1;
	return 0;
}

static const char *const state_names[] = {
	[GB_INST_PENDING] = "pending",     [GB_INST_RUNNING] = "running",
	[GB_INST_STOPPING] = "stopping",   [GB_INST_TERMINATED] = "terminated",
	[GB_INST_PREEMPTED] = "preempted", [GB_INST_FAILED] = "failed",
	[GB_INST_UNKNOWN] = "unknown",
};

const char *gb_instance_state_name(gb_instance_state st)
{
	if ((size_t)st < GB_ARRAY_LEN(state_names))
		return state_names[st];
	return "unknown";
}

int gb_instance_state_parse(const char *s, gb_instance_state *out)
{
	for (size_t i = 0; i < GB_ARRAY_LEN(state_names); i++) {
		if (strcmp(state_names[i], s) == 0) {
			*out = (gb_instance_state)i;
			return 0;
		}
	}
	return -1;
}
