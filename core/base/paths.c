/* paths.c -- locating drivers and data next to the executable. */
#include "paths.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static char *driver_dir, *data_dir, *policy_dir, *bin_dir;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void resolve(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *env;
	char *base = NULL;
	if (n > 0) {
		char *slash;
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			char up[PATH_MAX + 4], real[PATH_MAX];
			*slash = '\0';
			bin_dir = gb_xstrdup(exe);
			snprintf(up, sizeof(up), "%s/..", exe);
			base = gb_xstrdup(realpath(up, real) ? real : up);
		}
	}
	if ((env = getenv("GPUBROKER_DRIVER_DIR")) && *env)
		driver_dir = gb_xstrdup(env);
	else if (base) {
		char *cand = gb_xasprintf("%s/lib/gpubroker/drivers", base);
		if (is_dir(cand))
			driver_dir = cand;
		else
			free(cand);
	}
	if (!driver_dir)
		driver_dir = gb_xstrdup(GB_PREFIX "/lib/gpubroker/drivers");

	if ((env = getenv("GPUBROKER_DATA_DIR")) && *env)
		data_dir = gb_xstrdup(env);
	else if (base) {
		char *cand = gb_xasprintf("%s/share/gpubroker", base);
		if (is_dir(cand))
			data_dir = cand;
		else
			free(cand);
	}
	if (!data_dir)
		data_dir = gb_xstrdup(GB_PREFIX "/share/gpubroker");
	policy_dir = gb_xasprintf("%s/policies", data_dir);
	if (!bin_dir)
		bin_dir = gb_xstrdup(GB_PREFIX "/bin");
	free(base);
}

const char *gb_driver_dir(void)
{
	pthread_once(&once, resolve);
	return driver_dir;
}

const char *gb_data_dir(void)
{
	pthread_once(&once, resolve);
	return data_dir;
}

const char *gb_policy_dir(void)
{
	pthread_once(&once, resolve);
	return policy_dir;
}

const char *gb_bin_dir(void)
{
	pthread_once(&once, resolve);
	return bin_dir;
}
