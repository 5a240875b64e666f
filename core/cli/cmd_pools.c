/* cmd_pools.c -- `destroy`, `scale` and `status`. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "pool_output.h"
#include "progress.h"
#include "remote.h"
#include "cli_app.h"


static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int d_yes;
static const char *d_timeout;

static const gb_flag *destroy_flags(void)
{
	static const gb_flag f[] = {
		{"auto-approve", 0, NULL, "do not ask (required without a "
		 "terminal)", NULL, &d_yes, NULL},
		{"timeout", 0, "DURATION", "wait at most this long for the cloud "
		 "to confirm (default 10m)", &d_timeout, NULL, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static int run_destroy(gb_cli *cli)
{
	gb_session s;
	gb_progress prog;
	gb_engine_result res;
	int64_t timeout = 0;
	int rc;
	const char *pool;
	if (cli->args.n != 1)
		return gb_cli_usage(cli, "give exactly one pool name");
	pool = cli->args.v[0];
	if (d_timeout && gb_parse_duration(d_timeout, &timeout) != 0)
		return gb_cli_usage(cli, "--timeout: expected a duration, found "
		                         "\"%s\"", d_timeout);
	if (!d_yes) {
		char q[256];
		if (!isatty(STDIN_FILENO)) {
			gb_cli_err(cli, "refusing to destroy without confirmation: "
			                "there is no terminal to ask on; pass "
			                "--auto-approve");
			return GB_EXIT_FAIL;
		}
		snprintf(q, sizeof(q), "Destroy pool %s and terminate every "
		                       "instance?", pool);
		if (!gb_cli_confirm(cli, q)) {
			gb_cli_err(cli, "not destroyed");
			return GB_EXIT_FAIL;
		}
	}
	if (cli->server)
		return gb_remote_destroy(cli, pool, timeout);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	gb_progress_init(&prog, cli);
	if ((rc = gb_cli_session(cli, &s, gb_progress_event, &prog, &stop_flag)))
		return rc;
	if (timeout > 0) {
		/* the engine reads its options at creation */
		gb_engine_opts eo;
		memset(&eo, 0, sizeof(eo));
		eo.cfg = &cli->cfg;
		eo.store = s.store;
		eo.drivers = &s.rt.drivers;
		eo.cat = s.rt.cat;
		eo.progress = gb_progress_event;
		eo.progress_ud = &prog;
		eo.stop = &stop_flag;
		eo.confirm_timeout_s = timeout;
		gb_engine_free(s.eng);
		s.eng = gb_engine_new(&eo);
	}
	rc = gb_engine_destroy(s.eng, pool, "user", &res);
	gb_progress_done(&prog);
	if (rc != 0)
		gb_cli_err(cli, "%s", res.message);
	else if (cli->out != GB_OUT_TABLE) {
		json_t *a = json_array();
		json_array_append(a, res.pool);
		gb_print_pools(cli, a, 0);
		json_decref(a);
	} else if (!cli->quiet) {
		printf("pool %s destroyed\n", pool);
	}
	gb_engine_result_free(&res);
	gb_session_close(&s);
	return rc ? GB_EXIT_FAIL : GB_EXIT_OK;
}

const gb_cmd gb_cmd_destroy = {
	"destroy", "terminate a pool's instances and forget the pool",
	"NAME [--auto-approve] [--timeout DURATION]",
	"Journals, terminates every instance, and waits until each cloud\n"
	"confirms (describe says terminated, or the instance is gone) before\n"
	"marking it terminated.  Safe to re-run after any crash.",
	destroy_flags, run_destroy,
};

static int run_scale(gb_cli *cli)
{
	gb_session s;
	gb_progress prog;
	gb_engine_result res;
	int64_t n;
	int rc;
	if (cli->args.n != 2)
		return gb_cli_usage(cli, "give a pool name and a size");
	if (gb_parse_int64(cli->args.v[1], &n) != 0 || n < 0 ||
	    n > GB_POOL_MAX_INSTANCES)
		return gb_cli_usage(cli, "size must be an integer from 0 to %d, "
		                         "found \"%s\"", GB_POOL_MAX_INSTANCES,
		                    cli->args.v[1]);
	if (cli->server)
		return gb_remote_scale(cli, cli->args.v[0], (int)n);
	gb_progress_init(&prog, cli);
	if ((rc = gb_cli_session(cli, &s, gb_progress_event, &prog, &stop_flag)))
		return rc;
	rc = gb_engine_scale(s.eng, cli->args.v[0], (int)n, &res);
	gb_progress_done(&prog);
	if (rc != 0)
		gb_cli_err(cli, "%s", res.message);
	if (res.pool) {
		json_t *a = json_array();
		json_array_append(a, res.pool);
		gb_print_pools(cli, a, 1);
		json_decref(a);
	}
	gb_engine_result_free(&res);
	gb_session_close(&s);
	return rc ? GB_EXIT_FAIL : GB_EXIT_OK;
}

const gb_cmd gb_cmd_scale = {
	"scale", "change the number of instances in a pool", "NAME N",
	"Scale-down order: instances not yet running go first, then the\n"
	"newest (highest index), so the longest-running ones stay.  Pools\n"
	"with min/max in their spec stay within them.",
	NULL, run_scale,
};

static int run_status(gb_cli *cli)
{
	gb_session s;
	json_t *pools;
	int rc;
	if (cli->args.n > 1)
		return gb_cli_usage(cli, "give at most one pool name");
	if (cli->server)
		return gb_remote_status(cli, cli->args.n ? cli->args.v[0] : NULL);
	if ((rc = gb_cli_session(cli, &s, NULL, NULL, NULL)))
		return rc;
	if (cli->args.n) {
		json_t *p;
		gb_engine_refresh(s.eng, cli->args.v[0]);
		p = gb_engine_pool_json(s.eng, cli->args.v[0]);
		if (!p) {
			gb_cli_err(cli, "no pool named %s", cli->args.v[0]);
			gb_session_close(&s);
			return GB_EXIT_FAIL;
		}
		pools = json_array();
		json_array_append_new(pools, p);
		if (cli->out != GB_OUT_TABLE)
			gb_out_render(cli, stdout, p, NULL, NULL);
		else
			gb_print_pools(cli, pools, 1);
	} else {
		gb_engine_refresh(s.eng, NULL);
		pools = gb_engine_pools_json(s.eng, NULL);
		if (!json_array_size(pools) && cli->out == GB_OUT_TABLE)
			gb_cli_info(cli, "no pools (apply one with 'gpubroker apply "
			                 "-f SPEC')");
		else
			gb_print_pools(cli, pools, 0);
	}
	json_decref(pools);
	gb_session_close(&s);
	return GB_EXIT_OK;
}

const gb_cmd gb_cmd_status = {
	"status", "show pools (or one pool with its instances)", "[NAME]",
	"Asks the clouds first (one describe per driver and region), so the\n"
	"states are current.",
	NULL, run_status,
};
