/* session.c -- store + runtime + engine, assembled once for the CLI's
 * stateful commands and for the daemon. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

int gb_session_open(const gb_config *cfg, gb_session *s,
                    gb_engine_progress_fn fn, void *ud,
                    volatile sig_atomic_t *stop, int replica, char *err,
                    size_t cap)
{
	gb_engine_opts eo;
	memset(s, 0, sizeof(*s));
	if (gb_store_open_cfg(cfg, &s->store, err, cap) != 0)
		return -1;
	gb_runtime_open(cfg, s->store, &s->rt, 1);
	memset(&eo, 0, sizeof(eo));
	eo.cfg = cfg;
	eo.store = s->store;
	eo.drivers = &s->rt.drivers;
	eo.cat = s->rt.cat;
	eo.progress = fn;
	eo.progress_ud = ud;
	eo.stop = stop;
	eo.sticky_leases = replica;
	s->eng = gb_engine_new(&eo);
	s->recovered = gb_engine_recover(s->eng);
	if (s->recovered < 0)
		s->warning = gb_xasprintf("recovering interrupted operations "
		                          "failed: %s",
		                          gb_store_errmsg(s->store));
	return 0;
}

void gb_session_close(gb_session *s)
{
	gb_engine_free(s->eng);
	gb_store_close(s->store);
	gb_runtime_free(&s->rt);
	free(s->warning);
	memset(s, 0, sizeof(*s));
}
