/*
 * session.h -- everything a stateful command needs: the runtime (config,
 * drivers, catalog), the state store and the engine.  Opening a session
 * resolves open intents (recovery runs on every start).
 */
#ifndef GB_SESSION_H
#define GB_SESSION_H

#include "engine.h"
#include "runtime.h"
#include "store.h"

typedef struct gb_session {
	gb_runtime rt;
	gb_store *store;
	gb_engine *eng;
} gb_session;

/* Returns 0, or GB_EXIT_FAIL after printing why. */
int gb_session_open(gb_cli *cli, gb_session *s, gb_engine_progress_fn fn,
                    void *ud, volatile sig_atomic_t *stop);
void gb_session_close(gb_session *s);

#endif
