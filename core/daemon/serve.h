/*
 * serve.h -- the daemon as a library call: `gpubroker serve` (a thin CLI
 * file, cli/cmd_serve.c) loads the config and hands it here.  The daemon
 * knows no command line: it logs through log.h and returns errors as
 * text.
 *
 * Threads: gb_daemon_serve blocks SIGTERM, SIGINT and SIGHUP in the
 * calling thread (call it before any other thread starts, so they inherit
 * the mask) and waits for them there: SIGTERM/SIGINT stop cleanly, SIGHUP
 * re-reads config_path.
 */
#ifndef GB_SERVE_H
#define GB_SERVE_H

#include <stddef.h>

#include "config.h"

typedef struct gb_daemon_opts {
	/* The loaded config (listen overrides already applied).  Borrowed;
	 * a SIGHUP reload replaces its contents, so the caller frees it with
	 * gb_config_free after gb_daemon_serve returns. */
	gb_config *cfg;
	const char *config_path; /* re-read on SIGHUP; NULL = no file */
	/* The config file's own listen, before an override (--listen);
	 * NULL: the file names none.  A SIGHUP warns only when the file's
	 * listen changed (the running address stays either way). */
	const char *file_listen;
	int reconcile_once;      /* one reconcile pass, then return */
	/* Called once the API listens, with its URL ("http://127.0.0.1:PORT"
	 * or https); may be NULL. */
	void (*listening)(void *ud, const char *url);
	void *listening_ud;
} gb_daemon_opts;

/* Recovers open intents, serves the API, converges pools and reconciles
 * until SIGTERM/SIGINT.  Returns 0 after a clean stop (or the one pass),
 * or -1 with why in err (a refused listen address, a store that cannot
 * be opened, a port in use...). */
int gb_daemon_serve(const gb_daemon_opts *o, char *err, size_t cap);

#endif
