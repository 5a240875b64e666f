/* store_serve.c -- the serving lock beside a SQLite state (store.h): a
 * flock on "<file>.serving", shared by daemons, exclusive for `state
 * migrate`.  flock locks are apart from SQLite's own (POSIX record locks
 * on the database file), so neither disturbs the other. */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* "<real path of the file>.serving" (the same for every spelling of
 * the path); caller frees. */
static char *lock_path(const char *path)
{
	char real[PATH_MAX];
	return gb_xasprintf("%s.serving", realpath(path, real) ? real : path);
}

/* Opens and locks; 0 with *fd, 1 held by another (LOCK_NB), -1. */
static int take(const char *path, int how, int *fd, char *err, size_t cap)
{
	char *lp = lock_path(path);
	int rc = 0;
	*fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (*fd < 0) {
		snprintf(err, cap, "cannot open the serving lock %s: %s (the "
		         "state's folder must be writable)", lp, strerror(errno));
		rc = -1;
	} else if (flock(*fd, how | LOCK_NB) != 0) {
		rc = errno == EWOULDBLOCK ? 1 : -1;
		if (rc < 0)
			snprintf(err, cap, "cannot lock %s: %s", lp,
			         strerror(errno));
		close(*fd);
		*fd = -1;
	}
	free(lp);
	return rc;
}

int gb_store_serve_hold(gb_store *s)
{
	char err[GB_STORE_ERR_CAP];
	int rc;
	if (s->be->shared || s->serve_fd >= 0)
		return 0;
	rc = take(s->path, LOCK_SH, &s->serve_fd, err, sizeof(err));
	if (rc == 1)
		return gb_store__failf(s, "`gpubroker state migrate` is copying "
		                       "%s: wait until it is done, then start "
		                       "the daemon on the state it copied to",
		                       s->path);
	if (rc < 0)
		return gb_store__failf(s, "%s", err);
	return 0;
}

int gb_store_serve_exclusive(const char *path, int *fd, char *err,
                             size_t cap)
{
	int rc = take(path, LOCK_EX, fd, err, cap);
	if (rc == 1)
		snprintf(err, cap, "a gpubroker daemon is serving from %s: stop "
		         "it (every daemon started on this state) first, then "
		         "retry; the copy would miss what it writes afterwards",
		         path);
	return rc;
}
