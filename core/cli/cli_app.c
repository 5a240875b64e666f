/* cli_app.c -- config, runtime and session for commands (cli_app.h). */
#include "cli_app.h"

#include <stdio.h>
#include <string.h>

int gb_cli_runtime(gb_cli *cli, gb_runtime *rt, gb_store *st,
                   int want_offers)
{
	int rc;
	if ((rc = gb_cli_config(cli)) != 0)
		return rc;
	gb_runtime_open(&cli->cfg, st, rt, want_offers);
	return 0;
}

int gb_cli_session(gb_cli *cli, gb_session *s, gb_engine_progress_fn fn,
                   void *ud, volatile sig_atomic_t *stop)
{
	char err[1024];
	int rc;
	if ((rc = gb_cli_config(cli)) != 0)
		return rc;
	if (gb_session_open(&cli->cfg, s, fn, ud, stop, 0, err, sizeof(err))) {
		gb_cli_err(cli, "%s", err);
		return GB_EXIT_FAIL;
	}
	if (s->warning)
		gb_cli_err(cli, "warning: %s", s->warning);
	return 0;
}

int gb_cli_spec_load(gb_cli *cli, const char *path, gb_spec_set *set)
{
	return gb_cli_spec_load_in(cli, path, NULL, set);
}

int gb_cli_spec_load_in(gb_cli *cli, const char *path, const gb_catalog *cat,
                        gb_spec_set *set)
{
	gb_diags d = GB_DIAGS_INIT;
	gb_spec_opts so;
	const char *clouds[GB_MAX_CLOUDS], *classes[64];
	int rc;
	memset(&so, 0, sizeof(so));
	/* Locally the broker config's drivers are the clouds; a daemon
	 * checks the names against its own. */
	if (!cli->server && gb_cli_config(cli) == 0) {
		gb_config_clouds(&cli->cfg, clouds, GB_ARRAY_LEN(clouds));
		so.clouds = clouds;
		so.catalog = cat;
		so.priorities = gb_config_priority_names(&cli->cfg, classes,
		                                         GB_ARRAY_LEN(classes));
	}
	rc = gb_spec_load_file(path, &so, set, &d);
	if (rc != 0)
		gb_diags_print(&d, stderr);
	gb_diags_free(&d);
	return rc != 0 ? -1 : 0;
}
