/* drvc_opts.c -- strict reading of driver options (see drvc_opts.h). */
#include "drvc_opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drvc_mem.h"
#include "drvc_util.h"

const char *drvc_opt(const gb_host *h, const char *key)
{
	const char *v = h->option ? h->option(h->ctx, key) : NULL;
	return v && *v ? v : NULL; /* "" (an empty ${VAR}) is unset */
}

char *drvc_opt_env(const gb_host *h, const char *key, const char *env,
                   const char *def)
{
	const char *v = drvc_opt(h, key);
	if (!v && env) {
		v = getenv(env);
		if (v && !*v)
			v = NULL;
	}
	if (!v)
		v = def;
	return drvc_xstrdup(v);
}

const char *drvc_opt_region(const gb_host *h, const char *key,
                            const char *region)
{
	char k[160];
	snprintf(k, sizeof(k), "%s.%s", key, region ? region : "");
	return drvc_opt(h, k);
}

int drvc_opt_int(const gb_host *h, const char *key, int64_t def, int64_t lo,
                 int64_t hi, int64_t *out, gb_error *err)
{
	const char *v = drvc_opt(h, key);
	char *end;
	long long x;
	*out = def;
	if (!v)
		return 0;
	errno = 0;
	x = strtoll(v, &end, 10);
	if (end == v || *end || errno || x < lo || x > hi) {
		drvc_err(err, GB_ERR_INVALID, 0, "BadOption",
		         "option %s: expected a whole number from %lld to %lld, "
		         "found \"%s\"", key, (long long)lo, (long long)hi, v);
		return -1;
	}
	*out = (int64_t)x;
	return 0;
}

int drvc_opt_bool(const gb_host *h, const char *key, int def, int *out,
                  gb_error *err)
{
	const char *v = drvc_opt(h, key);
	*out = def;
	if (!v)
		return 0;
	if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcmp(v, "1")) {
		*out = 1;
		return 0;
	}
	if (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcmp(v, "0")) {
		*out = 0;
		return 0;
	}
	drvc_err(err, GB_ERR_INVALID, 0, "BadOption",
	         "option %s: expected true or false, found \"%s\"", key, v);
	return -1;
}
