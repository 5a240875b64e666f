/* engine_int.h -- shared internals of engine*.c (not public). */
#ifndef GB_ENGINE_INT_H
#define GB_ENGINE_INT_H

#include <pthread.h>

#include "engine.h"

typedef struct pool_lock {
	char *name;
	pthread_mutex_t mu;
	int users;
	int fd;          /* flock'ed file while held, else -1 */
	struct pool_lock *next;
} pool_lock;

struct gb_engine {
	gb_engine_opts o;
	int workers;
	int64_t cooldown_s;
	int64_t confirm_timeout_s;
	int64_t poll_ms;
	char *broker_id;        /* owned copy: a SIGHUP reload frees the
	                           config the engine was started with */
	pthread_mutex_t locks_mu;
	pool_lock *locks;
	pthread_mutex_t stats_mu;
	gb_engine_stats stats;
	/* The listings of the last gb_engine_refresh_all(e, 1), kept for the
	 * gc that follows it in the same reconcile pass (engine_observe.c's
	 * dgroup array; taken, or dropped by the next refresh). */
	pthread_mutex_t kept_mu;
	void *kept;
	size_t nkept;
	int64_t kept_ms;  /* mono ms of its describes */
};

/* Frees the kept listings (engine_observe.c). */
void gb_engine__drop_kept(gb_engine *e);

/* A copy of what a driver reported about one instance. */
typedef struct gb_seen {
	char *id, *name, *region, *zone, *instance_type, *state_reason;
	char *private_ip, *public_ip, *token, *pool;
	gb_capacity capacity;
	gb_instance_state state;
	int64_t created_at;
	int64_t created_ms;  /* 0 = unknown (or a driver older than minor 3) */
} gb_seen;

typedef struct gb_seen_list {
	gb_seen *v;
	size_t n;
	pthread_mutex_t *mu; /* optional, for concurrent emitters */
	uint32_t drv_minor;  /* the emitting driver's abi_minor: fields of
	                        gb_instance newer than it are not read */
} gb_seen_list;

/* Instance callback collecting into a gb_seen_list. */
int gb_engine__collect(void *ud, const gb_instance *inst);
void gb_seen_list_free(gb_seen_list *l);

void gb_engine__event(gb_engine *e, const char *pool, const char *instance,
                      const char *kind, const char *fmt, ...) GB_PRINTF(5, 6);
gb_drv *gb_engine__drv(gb_engine *e, const char *cloud);
void gb_engine__lock_pool(gb_engine *e, const char *name);
void gb_engine__unlock_pool(gb_engine *e, const char *name);
/* Parse a stored pool's spec JSON (engine_spec.c: once per name and
 * text, copied out; free out with gb_pool_spec_free).  0 or -1 with err. */
int gb_engine__spec(const gb_pool_row *row, gb_pool_spec *out, char *err,
                    size_t cap);
/* Its purpose name (static), "unknown" when the spec does not load. */
const char *gb_engine__spec_purpose(const gb_pool_row *row);
/* The store state string for a driver state. */
const char *gb_engine__state_str(gb_instance_state st);
/* Ask the driver to terminate rows (journaled), marking them
 * terminating.  Returns 0 when the driver accepted. */
int gb_engine__terminate_rows(gb_engine *e, gb_inst_row **rows, size_t n,
                              const char *reason);
void gb_engine__stat(gb_engine *e, uint64_t *field, uint64_t by);
/* Instances of a pool grouped for describe: fills regions (unique
 * cloud/region pairs). */
int gb_engine__refresh_rows(gb_engine *e, const char *pool, gb_inst_row *rows,
                            size_t n);
/* Live (pending or running) instances of a pool in the store: *all of
 * them, and *of_intent those a create intent recorded (intent_id; 0 for
 * none).  A store error counts as none. */
void gb_engine__live(gb_engine *e, const char *pool, int64_t intent_id,
                     int *all, int *of_intent);
/* Replay an open create intent with its token (engine_create.c).  0 when
 * replayed, 1 when given up (GB_UNKNOWN_GIVE_UP_MS) and resolved by
 * describe, -1 with err when the store failed. */
int gb_engine__replay_create(gb_engine *e, const gb_pool_spec *spec,
                             const gb_intent_row *in, char *err, size_t cap);
/* Resolve an open create intent by describe: adopt what carries its
 * token, then close it (kept open when the describe fails). */
void gb_engine__resolve_by_describe(gb_engine *e, const gb_intent_row *in);
/* A create whose outcome stays unknown this long after it was journaled
 * (every replay ended throttled or transient) is resolved by describe,
 * so a zone that keeps failing does not hold its pool forever. */
#define GB_UNKNOWN_GIVE_UP_MS (10 * 60 * 1000)

#endif
