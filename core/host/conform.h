/*
 * conform.h -- the driver conformance suite behind `gpubroker drivers
 * test NAME`: it exercises one loaded driver through its own methods
 * only (no emulator control API), against whatever endpoint the driver's
 * config points at, and says which parts of gpubroker/driver.h it keeps.
 *
 * Cases, in order (each passes, fails or is skipped, with a detail):
 *   offers          list_offers emits >= 1 offer, each well formed
 *                   (region, type, canonical GPU model, counts, a
 *                   positive finite price, a capacity, a zone, no
 *                   duplicate (region, zone, type, capacity)); with
 *                   GB_DRV_CAP_PRICE_REFRESH refresh_prices too
 *   quota           with GB_DRV_CAP_QUOTA: quota() of the region emits
 *                   well-formed quotas (else skipped)
 *   create          count 2 of the cheapest matching offer with a fresh
 *                   token and pool "gbconf-<random>": 2 instances, each
 *                   with an id, the region, the type, names <pool>-0/-1
 *   tags            describe by pool shows both with the pool, broker
 *                   and token tags asked for
 *   replay          the same create again: the same ids, nothing new
 *   describe        by ids, by pool, by broker + token, ids over pool,
 *                   a foreign token, an unknown id (nothing, no error),
 *                   region NULL with GB_DRV_CAP_DESCRIBE_ALL_REGIONS
 *   all_or_nothing  a create of huge_count instances fails with CAPACITY,
 *                   QUOTA or INVALID and leaves nothing live under its
 *                   token (nothing at all with GB_DRV_CAP_ATOMIC_CREATE)
 *   errors          a type that does not exist: INVALID or NOT_FOUND
 *                   with a message; every error of the run has a class
 *                   that agrees with its HTTP status
 *   terminate       terminate, terminate again, an unknown id: all
 *                   succeed; describe then shows them gone or stopping
 *   secrets         no error message or code and no log line of the run
 *                   contains a registered secret (gb_redact_has_secret)
 *   cleanup         every instance the run made (the emitted ids and
 *                   whatever describe by the pool reports) is
 *                   terminated and seen leave, whatever failed before
 * A case that needs an earlier one that failed is skipped, saying so.
 *
 * Nothing here prints; the driver's log lines still go to the log (and
 * are captured through gb_log_set_tap while the suite runs).
 */
#ifndef GB_CONFORM_H
#define GB_CONFORM_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "drivers.h"

typedef struct gb_conform_opts {
	const char *broker_id;   /* tags the instances; NULL = "gpubroker" */
	const char *region;      /* NULL = the cheapest offer's */
	const char *type;        /* NULL = the cheapest offer's */
	int capacity;            /* a gb_capacity, or -1 = on-demand */
	unsigned huge_count;     /* all_or_nothing's count; 0 = 10000 */
	int64_t timeout_ms;      /* each bounded wait; 0 = 300000 */
	/* called as each case starts (may be NULL) */
	void (*progress)(void *ud, const char *case_name);
	void *progress_ud;
	/* set (by a signal handler) to stop: the wait in progress ends (its
	 * case fails), the cases left are skipped, cleanup still runs;
	 * may be NULL */
	volatile sig_atomic_t *stop;
} gb_conform_opts;

/* Runs every case against drv (which must be ready).  Returns a new
 * reference the caller owns:
 *   {"driver", "version", "capabilities": [...], "pool", "region",
 *    "instance_type", "capacity", "passed", "failed", "skipped",
 *    "interrupted" (opts->stop was set),
 *    "cases": [{"name", "status": "pass"|"fail"|"skip", "detail",
 *               "duration_ms"}]}
 * Every detail is redacted (gb_redact). */
json_t *gb_conform_run(gb_drv *drv, const gb_conform_opts *opts);

#endif
