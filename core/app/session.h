/*
 * session.h -- everything a stateful command or the daemon needs: the
 * runtime (drivers, catalog), the state store (opened once, here) and the
 * engine.  Opening a session resolves open intents (recovery runs on
 * every start).  The app layer knows no command line and prints nothing:
 * the caller shows err and s->warning.
 */
#ifndef GB_SESSION_H
#define GB_SESSION_H

#include <signal.h>

#include "engine.h"
#include "runtime.h"
#include "store.h"

typedef struct gb_session {
	gb_runtime rt;
	gb_store *store;
	gb_engine *eng;
	/* set when recovering interrupted operations failed: a message to
	 * show as a warning (the session is usable).  Owned; freed by
	 * gb_session_close. */
	char *warning;
	int recovered;      /* open intents resolved at the start */
} gb_session;

/* cfg is borrowed and must outlive the session.  fn/ud receive the
 * engine's progress events (may be NULL); stop, when set, asks long
 * operations to give up.  replica: a daemon, which keeps the pools it
 * converges leased between operations on a shared (PostgreSQL) store;
 * 0 for the CLI, which gives them back at once (engine.h).  Returns 0, or
 * -1 with why in err (the session is then empty: nothing to close). */
int gb_session_open(const gb_config *cfg, gb_session *s,
                    gb_engine_progress_fn fn, void *ud,
                    volatile sig_atomic_t *stop, int replica, char *err,
                    size_t cap);
void gb_session_close(gb_session *s);

#endif
