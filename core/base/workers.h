/*
 * workers.h -- run n independent jobs on at most `threads` threads and wait
 * for all of them.  Used by the engine to call drivers in parallel.
 */
#ifndef GB_WORKERS_H
#define GB_WORKERS_H

#include <stddef.h>

/* Calls fn(ud, i) for every i in [0, n), from up to `threads` threads
 * (the caller's thread is one of them).  Returns when all are done. */
void gb_parallel_for(size_t n, int threads, void (*fn)(void *ud, size_t i),
                     void *ud);

#endif
