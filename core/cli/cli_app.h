/*
 * cli_app.h -- the command line's doorway into the app layer: load the
 * config once (gb_cli_config), open the runtime or the session for it,
 * and print what went wrong the way every command does.
 */
#ifndef GB_CLI_APP_H
#define GB_CLI_APP_H

#include "cli.h"
#include "runtime.h"
#include "session.h"

/* gb_runtime_open over the command's config.  st: the caller's open
 * store, or NULL.  Returns 0, or GB_EXIT_FAIL after printing why (a bad
 * config).  Free rt with gb_runtime_free. */
int gb_cli_runtime(gb_cli *cli, gb_runtime *rt, gb_store *st,
                   int want_offers);
/* gb_session_open over the command's config; prints its error, or its
 * warning (the session is still usable).  Returns 0, or GB_EXIT_FAIL.
 * Close with gb_session_close. */
int gb_cli_session(gb_cli *cli, gb_session *s, gb_engine_progress_fn fn,
                   void *ud, volatile sig_atomic_t *stop);

/* Loads the pool specs of a file (`-f FILE`, ${VAR} expanded), printing
 * every diagnostic on stderr.  Returns 0, or -1 after printing (then *set
 * is empty).  Free *set with gb_spec_set_free. */
int gb_cli_spec_load(gb_cli *cli, const char *path, gb_spec_set *set);
/* The same, and locally (no --server) each placement.regions glob must
 * match a region of the pool's clouds in cat (the runtime's catalog;
 * borrowed; NULL = not checked). */
int gb_cli_spec_load_in(gb_cli *cli, const char *path, const gb_catalog *cat,
                        gb_spec_set *set);

#endif
