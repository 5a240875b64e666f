/*
 * cancel.h -- when a driver call should give up: the process is stopping
 * (the daemon's or the CLI's stop flag), or the calling thread's deadline
 * has passed.  Drivers see it as host->cancelled (driver.h, minor 5);
 * the host's own HTTP transport stops retrying and its waits end early.
 *
 * Threading: gb_cancel_set_stop is called once per engine, before any
 * driver call; gb_cancel_deadline affects the calling thread only.
 */
#ifndef GB_CANCEL_H
#define GB_CANCEL_H

#include <signal.h>
#include <stdint.h>

/* The process-wide stop flag (borrowed; NULL = none), e.g. the engine's
 * gb_engine_opts.stop.  gb_cancel_clear_stop(flag) forgets it when it is
 * still the one set. */
void gb_cancel_set_stop(volatile sig_atomic_t *flag);
void gb_cancel_clear_stop(volatile sig_atomic_t *flag);
/* Sets the calling thread's deadline (monotonic ms, 0 = none) and
 * returns the previous one, to restore. */
int64_t gb_cancel_deadline(int64_t mono_ms);
/* 1 when the stop flag is set or this thread's deadline has passed. */
int gb_cancelled(void);
/* Sleeps up to ms, in short slices, returning early (with 1) once
 * gb_cancelled(); 0 after the full sleep. */
int gb_cancel_sleep_ms(int64_t ms);

#endif
