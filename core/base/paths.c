/* paths.c -- locating drivers and data next to the executable. */
#include "paths.h"

#include <dirent.h>
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

static char **dir_names;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* NAME of NAME.so when NAME is a plausible driver name, else 0. */
static size_t driver_file_name(const char *f)
{
	size_t n = strlen(f);
	if (n < 4 || n > 35 || strcmp(f + n - 3, ".so") != 0)
		return 0;
	for (size_t i = 0; i < n - 3; i++)
		if (!((f[i] >= 'a' && f[i] <= 'z') ||
		      (f[i] >= '0' && f[i] <= '9') || f[i] == '_' || f[i] == '-'))
			return 0;
	return n - 3;
}

static void scan_names(void)
{
	DIR *d = opendir(gb_driver_dir());
	struct dirent *e;
	size_t n = 0;
	dir_names = gb_xcalloc(1, sizeof(*dir_names));
	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t len = driver_file_name(e->d_name);
		if (!len)
			continue;
		dir_names = gb_xrealloc(dir_names, (n + 2) * sizeof(*dir_names));
		dir_names[n++] = gb_xstrndup(e->d_name, len);
		dir_names[n] = NULL;
	}
	closedir(d);
	qsort(dir_names, n, sizeof(*dir_names), name_cmp);
}

const char *const *gb_driver_dir_names(void)
{
	pthread_once(&names_once, scan_names);
	return (const char *const *)dir_names;
}
