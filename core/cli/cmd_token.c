/* cmd_token.c -- gpubroker token: the bearer token the CLI sends to
 * --server, printed for scripts that call the API themselves (a CI job's
 * heartbeats with curl): --token as given, or the one exchanged for the
 * CI job's OIDC ID token (remote_oidc.c). */
#include "cli.h"

#include <stdio.h>

#include "remote.h"

static int run_token(gb_cli *cli)
{
	const char *tok = NULL;
	int rc;
	if (cli->args.n) {
		gb_cli_err(cli, "takes no arguments");
		return GB_EXIT_USAGE;
	}
	if (!cli->server && cli->env_server_ignored) {
		gb_cli_err(cli, "needs --server URL: the daemon the token is "
		           "for (GPUBROKER_SERVER is not used because %s names "
		           "a local broker; drop it or give --server)",
		           cli->env_server_ignored);
		return GB_EXIT_USAGE;
	}
	if (!cli->server) {
		gb_cli_err(cli, "needs --server URL (or GPUBROKER_SERVER): the "
		           "daemon the token is for");
		return GB_EXIT_USAGE;
	}
	if ((rc = gb_remote_bearer(cli, &tok)) != 0)
		return rc;
	if (!tok) {
		gb_cli_err(cli, "no token: give --token, or in a CI job "
		           "--oidc-token-file FILE or GPUBROKER_OIDC_TOKEN (on "
		           "GitHub Actions: permissions: id-token: write)");
		return GB_EXIT_FAIL;
	}
	printf("%s\n", tok);
	return GB_EXIT_OK;
}

const gb_cmd gb_cmd_token = {
	"token", "print the bearer token for --server (exchanging a CI job's "
	"OIDC ID token)",
	"[--oidc-token-file FILE] [--oidc-audience AUD]",
	"Prints the token the CLI sends to the daemon: --token as given, or,\n"
	"in a CI job, the short-lived broker token the daemon gives for the\n"
	"job's OIDC ID token (POST /v1/auth/oidc; --oidc-token-file,\n"
	"GPUBROKER_OIDC_TOKEN, or GitHub Actions' runner).  For scripts that\n"
	"call the API with curl (heartbeats); it expires with the ID token or\n"
	"the broker's auth.oidc max_ttl, whichever is first.  Treat it as a\n"
	"secret (on GitHub: ::add-mask::).",
	NULL, run_token,
};
