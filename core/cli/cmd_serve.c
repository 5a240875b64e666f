/* cmd_serve.c -- `gpubroker serve`: flags and config, then the daemon
 * (serve.h) does the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "serve.h"

static const char *s_listen;
static int s_once;

static const gb_flag *serve_flags(void)
{
	static const gb_flag f[] = {
		{"listen", 0, "HOST:PORT", "override the config's listen address "
		 "(port 0 = any free port)", &s_listen, NULL, NULL},
		{"reconcile-once", 0, NULL, "run one reconcile pass and exit "
		 "(for cron-style use and tests)", NULL, &s_once, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

/* The first stdout line says where to reach the daemon (tests and
 * scripts read it). */
static void on_listening(void *ud, const char *url)
{
	(void)ud;
	printf("{\"listen\": \"%s\", \"pid\": %d}\n", url, (int)getpid());
	fflush(stdout);
}

static int run_serve(gb_cli *cli)
{
	gb_daemon_opts o = {0};
	char err[1024], *file_listen;
	int rc;
	if (cli->args.n)
		return gb_cli_usage(cli, "unexpected argument \"%s\"",
		                    cli->args.v[0]);
	if ((rc = gb_cli_config(cli)))
		return rc;
	file_listen = cli->cfg.listen ? gb_xstrdup(cli->cfg.listen) : NULL;
	if (s_listen) {
		free(cli->cfg.listen);
		cli->cfg.listen = gb_xstrdup(s_listen);
	}
	o.cfg = &cli->cfg;
	o.config_path = cli->config_path;
	o.file_listen = file_listen;
	o.reconcile_once = s_once;
	o.listening = on_listening;
	rc = gb_daemon_serve(&o, err, sizeof(err));
	free(file_listen);
	if (rc != 0) {
		gb_cli_err(cli, "%s", err);
		return GB_EXIT_FAIL;
	}
	return GB_EXIT_OK;
}

const gb_cmd gb_cmd_serve = {
	"serve", "run the daemon: HTTP API, reconciler, TTL/idle teardown",
	"[--listen HOST:PORT] [--reconcile-once]",
	"Serves the JSON API on the config's listen address (127.0.0.1:7878\n"
	"by default; TLS when tls.cert/tls.key are set), converges pools in\n"
	"the background, and every daemon.reconcile_period (15s): describes\n"
	"all live instances (one call per driver and region), replaces\n"
	"preempted or failed ones, destroys pools past their TTL or idle past\n"
	"idle_timeout, and garbage-collects orphans.  The first stdout line is\n"
	"JSON with the URL.  SIGTERM stops cleanly; SIGHUP reloads the config.",
	serve_flags, run_serve,
};
