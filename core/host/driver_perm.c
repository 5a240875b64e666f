/* driver_perm.c -- drivers load only from files and folders that no one
 * but root or this user can change (driver_int.h). */
#include "driver_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* One file or folder: 0, or -1 with err. */
static int check_one(const char *path, const char *what, const char *at,
                     int is_dir, char *err, size_t cap)
{
	struct stat st;
	uid_t me = geteuid();
	if (lstat(at, &st) != 0) {
		snprintf(err, cap, "%s: cannot load: cannot examine %s: %s",
		         path, at, strerror(errno));
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != me) {
		snprintf(err, cap, "%s: refusing to load: %s %s is owned by uid "
		         "%u, neither root nor this user (uid %u), who could "
		         "replace the driver: install it where only root or "
		         "uid %u can write (e.g. chown root %s)", path, what, at,
		         (unsigned)st.st_uid, (unsigned)me, (unsigned)me, at);
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(is_dir && (st.st_mode & S_ISVTX))) {
		snprintf(err, cap, "%s: refusing to load: %s %s is writable by "
		         "%s (mode %04o), who could replace the driver: "
		         "chmod go-w %s", path, what, at,
		         (st.st_mode & S_IWOTH) ? "everyone" : "its group",
		         (unsigned)(st.st_mode & 07777), at);
		return -1;
	}
	return 0;
}

int gb_drv_check_perms(const char *path, char **resolved, char *err,
                       size_t cap)
{
	char *real = realpath(path, NULL);
	char *dir;
	*resolved = NULL;
	if (!real) {
		snprintf(err, cap, "%s: cannot load: cannot resolve the path: "
		         "%s", path, strerror(errno));
		return -1;
	}
	if (check_one(path, "the file", real, 0, err, cap) != 0) {
		free(real);
		return -1;
	}
	/* every folder above it, up to / */
	dir = gb_xstrdup(real);
	for (;;) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		if (slash == dir)
			slash[1] = '\0'; /* "/" itself */
		else
			*slash = '\0';
		if (check_one(path, "the folder", dir, 1, err, cap) != 0) {
			free(dir);
			free(real);
			return -1;
		}
		if (strcmp(dir, "/") == 0)
			break;
	}
	free(dir);
	*resolved = real;
	return 0;
}
