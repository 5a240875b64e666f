/* pool_wait.h -- `--wait [--timeout]` of apply and scale: one flow over
 * the backend (backend.h), local or through a daemon. */
#ifndef GB_POOL_WAIT_H
#define GB_POOL_WAIT_H

#include "backend.h"

/* Whether a pool that could not be placed yet (its apply or scale
 * failed) is still waited for: its "waiting" note names the next
 * attempt, and that comes before timeout_s from now (0: no timeout). */
int gb_pool_waits(json_t *pool, int64_t timeout_s);
/* Waits until every desired instance of pool `name` runs, at most
 * timeout_s (0: no limit).  *pool (may hold the pool, or NULL) is
 * replaced by the pool as last seen, a new reference the caller
 * decrefs.  GB_EXIT_OK, GB_EXIT_TIMEOUT after saying so,
 * GB_EXIT_FAIL after printing why (also when the pool is destroyed
 * meanwhile), or 128 + the signal when SIGINT/SIGTERM ended it (nothing
 * printed: the command says so). */
int gb_pool_wait(gb_backend *b, const char *name, int64_t timeout_s,
                 json_t **pool);
/* Says on stderr that pool `name`, left short of its target, still
 * exists, who keeps trying to place it and how to destroy it. */
void gb_pool_still_exists(gb_backend *b, const char *name);
/* The same for a pool as the backend handed it out: a pool its clouds
 * refused for good (waiting.refused) is not tried again before its next
 * attempt, and the message says so. */
void gb_pool_left_short(gb_backend *b, const char *name, json_t *pool);

/* After SIGINT/SIGTERM ended a command: for each active pool of pools
 * (an array of pool JSON), says on stderr what is left running, who (if
 * anyone) goes on with it and enforces its TTL, and how to remove it. */
void gb_pool_interrupted(gb_backend *b, json_t *pools);

#endif
