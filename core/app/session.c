/* session.c -- runtime + store + engine for stateful commands. */
#include "session.h"

#include <string.h>

int gb_session_open(gb_cli *cli, gb_session *s, gb_engine_progress_fn fn,
                    void *ud, volatile sig_atomic_t *stop)
{
	gb_engine_opts eo;
	char err[1024];
	int rc;
	memset(s, 0, sizeof(*s));
	if ((rc = gb_runtime_open(cli, &s->rt, 1)) != 0)
		return rc;
	if (gb_store_open(cli->cfg.state_path, &s->store, err, sizeof(err)) != 0) {
		gb_cli_err(cli, "%s", err);
		gb_runtime_free(&s->rt);
		return GB_EXIT_FAIL;
	}
	memset(&eo, 0, sizeof(eo));
	eo.cfg = &cli->cfg;
	eo.store = s->store;
	eo.drivers = &s->rt.drivers;
	eo.cat = s->rt.cat;
	eo.progress = fn;
	eo.progress_ud = ud;
	eo.stop = stop;
	s->eng = gb_engine_new(&eo);
	if (gb_engine_recover(s->eng) < 0)
		gb_cli_err(cli, "warning: recovering interrupted operations "
		                "failed: %s", gb_store_errmsg(s->store));
	return 0;
}

void gb_session_close(gb_session *s)
{
	gb_engine_free(s->eng);
	gb_store_close(s->store);
	gb_runtime_free(&s->rt);
	memset(s, 0, sizeof(*s));
}
