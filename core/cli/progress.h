/*
 * progress.h -- what apply/destroy/scale print while they work: on a TTY
 * a live status line (requested / pending / running / failed) under the
 * event lines; plain event lines otherwise.  -q prints nothing.
 */
#ifndef GB_PROGRESS_H
#define GB_PROGRESS_H

#include "cli.h"

typedef struct gb_progress {
	const gb_cli *cli;
	int tty;
	int requested, running, failed, terminated, failovers;
	int line_shown;
} gb_progress;

void gb_progress_init(gb_progress *p, const gb_cli *cli);
/* A gb_engine_progress_fn: ud is the gb_progress. */
void gb_progress_event(void *ud, const char *pool, const char *instance,
                       const char *kind, const char *message);
/* The same for an event recorded at time_ms (unix ms), by a daemon:
 * the remote backend hands the pool's events over here. */
void gb_progress_event_at(gb_progress *p, int64_t time_ms, const char *pool,
                          const char *instance, const char *kind,
                          const char *message);
/* Clear the live line (call before printing results). */
void gb_progress_done(gb_progress *p);

#endif
