/* cmd_pools.c -- `destroy`, `scale` and `status`. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "output.h"
#include "pool_output.h"
#include "pool_wait.h"

static int d_yes, d_ignore_not_found;
static const char *d_timeout;

static const gb_flag *destroy_flags(void)
{
	static const gb_flag f[] = {
		{"auto-approve", 0, NULL, "do not ask (required without a "
		 "terminal)", NULL, &d_yes, NULL},
		{"timeout", 0, "DURATION", "wait at most this long for the cloud "
		 "to confirm (default 10m)", &d_timeout, NULL, NULL},
		{"ignore-not-found", 0, NULL, "a pool that does not exist is "
		 "not an error: say so and exit 0 (for scripts and CI clean-up)",
		 NULL, &d_ignore_not_found, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static int run_destroy(gb_cli *cli)
{
	gb_backend *b;
	json_t *p = NULL;
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
	if ((rc = gb_backend_open(cli, GB_BACKEND_PROGRESS | GB_BACKEND_SIGNALS,
	                          &b)))
		return rc;
	cli->quiet_not_found = d_ignore_not_found;
	rc = b->ops->destroy(b, pool, timeout, &p);
	if (rc == 1 && d_ignore_not_found) {
		gb_cli_info(cli, "no pool named %s; nothing to destroy", pool);
		gb_backend_close(b);
		return GB_EXIT_OK;
	}
	if (rc == 0 && cli->out != GB_OUT_TABLE) {
		json_t *a = json_array();
		json_array_append(a, p);
		gb_print_pools(cli, a, 0);
		json_decref(a);
	} else if (rc == 0 && !cli->quiet) {
		printf("pool %s destroyed\n", pool);
	}
	json_decref(p);
	if (rc && gb_backend_stopped(b)) {
		rc = gb_backend_stop_status(b);
		gb_backend_close(b);
		return rc;
	}
	gb_backend_close(b);
	if (rc == GB_BACKEND_LOST)
		return GB_EXIT_UNREACHABLE;
	return rc ? GB_EXIT_FAIL : GB_EXIT_OK;
}

const gb_cmd gb_cmd_destroy = {
	"destroy", "terminate a pool's instances and forget the pool",
	"NAME [--auto-approve] [--timeout DURATION] [--ignore-not-found]",
	"Journals, terminates every instance, and waits until each cloud\n"
	"confirms (describe says terminated, or the instance is gone) before\n"
	"marking it terminated.  Safe to re-run after any crash.  A destroyed\n"
	"pool is gone: 'status' no longer lists it ('status --all' and\n"
	"'events --pool NAME' keep its history), and destroying it again\n"
	"fails as for a pool that does not exist (exit 1; HTTP 404), unless\n"
	"--ignore-not-found is given.\n"
	"Through a daemon (--server) it rides out a daemon restart or\n"
	"failover until --timeout; exit 4 when the daemon does not come back\n"
	"in time.",
	destroy_flags, run_destroy,
};

static int s_wait;
static const char *s_timeout;

static const gb_flag *scale_flags(void)
{
	static const gb_flag f[] = {
		{"wait", 0, NULL, "wait until every instance runs, and the "
		 "removed ones are confirmed terminated (as apply --wait)",
		 NULL, &s_wait, NULL},
		{"timeout", 0, "DURATION", "with --wait: give up after this long "
		 "(exit 3), e.g. 15m", &s_timeout, NULL, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static int run_scale(gb_cli *cli)
{
	gb_backend *b;
	json_t *p = NULL;
	int64_t n, timeout = 0;
	int rc;
	if (cli->args.n != 2)
		return gb_cli_usage(cli, "give a pool name and a size");
	if (gb_parse_int64(cli->args.v[1], &n) != 0 || n < 0 ||
	    n > GB_POOL_MAX_INSTANCES)
		return gb_cli_usage(cli, "size must be an integer from 0 to %d, "
		                         "found \"%s\"", GB_POOL_MAX_INSTANCES,
		                    cli->args.v[1]);
	if (s_timeout && (gb_parse_duration(s_timeout, &timeout) != 0 ||
	                  timeout <= 0))
		return gb_cli_usage(cli, "--timeout: expected a duration like "
		                         "90s, 15m or 2h, found \"%s\"", s_timeout);
	if (s_timeout && !s_wait)
		return gb_cli_usage(cli, "--timeout is for --wait: give both");
	if ((rc = gb_backend_open(cli, GB_BACKEND_PROGRESS |
	                                       (s_wait ? GB_BACKEND_SIGNALS : 0),
	                          &b)))
		return rc;
	rc = b->ops->scale(b, cli->args.v[0], (int)n, &p) == 0
	             ? GB_EXIT_OK : GB_EXIT_FAIL;
	/* as apply --wait: a pool short of capacity that says when it
	 * tries again is waited for */
	if (s_wait && (rc == GB_EXIT_OK || gb_pool_waits(p, timeout)))
		rc = gb_pool_wait(b, cli->args.v[0], timeout, &p);
	if (s_wait && gb_backend_stopped(b)) {
		json_t *a = json_array();
		gb_cli_err(cli, "interrupted: the journal is consistent; the "
		                "pool converges on the next apply or scale (or "
		                "through the daemon)");
		if (p)
			json_array_append(a, p);
		gb_pool_interrupted(b, a);
		json_decref(a);
		rc = gb_backend_stop_status(b);
	}
	if (p) {
		json_t *a = json_array();
		json_array_append(a, p);
		gb_print_pools(cli, a, 1);
		json_decref(a);
	}
	json_decref(p);
	gb_backend_close(b);
	return rc;
}

const gb_cmd gb_cmd_scale = {
	"scale", "change the number of instances in a pool",
	"NAME N [--wait [--timeout DURATION]]",
	"Scale-down order: instances not yet running go first, then the\n"
	"dearest (price per hour: a cloud instance before a cheaper on-prem\n"
	"node), then the newest (highest index), so the cheapest and\n"
	"longest-running ones stay (autoscaled pools: least used first, then\n"
	"the dearest, then the newest).  Pools\n"
	"with min/max in their spec stay within them.  With --wait, waits\n"
	"as 'apply --wait' does until every instance runs and prints their\n"
	"addresses; a scale-down waits, as destroy does, until the clouds\n"
	"confirm that the removed instances terminated (billing stopped).\n"
	"Exit 3 when --timeout passes first; exit 1 at once when the pool's\n"
	"clouds or policies refused it for good, or when the pool is\n"
	"destroyed; SIGINT or SIGTERM ends it with exit 130 or 143; locally\n"
	"or through --server.",
	scale_flags, run_scale,
};

static int st_all;

static const gb_flag *status_flags(void)
{
	static const gb_flag f[] = {
		{"all", 0, NULL, "include destroyed pools (their history: state, "
		 "reason, the instances they had)", NULL, &st_all, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static int run_status(gb_cli *cli)
{
	gb_backend *b;
	const char *name = cli->args.n ? cli->args.v[0] : NULL;
	json_t *res = NULL;
	int rc;
	if (cli->args.n > 1)
		return gb_cli_usage(cli, "give at most one pool name");
	if ((rc = gb_backend_open(cli, 0, &b)))
		return rc;
	if (b->ops->status(b, name, st_all, &res) != 0) {
		gb_backend_close(b);
		return GB_EXIT_FAIL;
	}
	if (name) {
		json_t *pools = json_array();
		json_array_append(pools, res);
		if (cli->out != GB_OUT_TABLE) {
			gb_out_render(cli, stdout, res, NULL, NULL);
		} else {
			json_t *dec = NULL;
			gb_print_pools(cli, pools, 1);
			/* the placement decision, as the API and console
			 * show it (GET /v1/pools/NAME/plan) */
			if (b->ops->decision(b, name, &dec) == 0)
				gb_print_decision(dec);
			json_decref(dec);
		}
		json_decref(pools);
	} else if (!json_array_size(res) && cli->out == GB_OUT_TABLE) {
		gb_cli_info(cli, "no pools (apply one with 'gpubroker apply "
		                 "-f SPEC')");
	} else {
		gb_print_pools(cli, res, 0);
	}
	json_decref(res);
	gb_backend_close(b);
	return GB_EXIT_OK;
}

const gb_cmd gb_cmd_status = {
	"status", "show pools (or one pool with its instances)", "[NAME] [--all]",
	"Asks the clouds first (one describe per driver and region), so the\n"
	"states are current.  A pool short of its size says why, and when it\n"
	"tries again, on a line 'NAME: waiting: REASON' (JSON: its \"waiting\"\n"
	"object, {reason, next_attempt_at, refused}); 'waiting: refused: ...'\n"
	"is a refusal only a change can fix (a cloud's auth or invalid\n"
	"answer, a failing policy).  Destroyed pools are gone (as\n"
	"'kubectl get' after a delete): not listed, and 'status NAME' of one\n"
	"fails (exit 1); --all shows them too, with their state and reason.\n"
	"With NAME, the table ends with the pool's placement decision: the\n"
	"plan its last apply walked, its first choice and the first\n"
	"candidates (GET /v1/pools/NAME/plan).  An autoscaled pool (through\n"
	"a daemon) has a line 'NAME: autoscale: target, mean (reporting),\n"
	"floor, min, max; next: up|down|none [at TIME]; now: this pass's\n"
	"reason; last change: REASON at TIME'.  -o json: \"autoscale\"\n"
	"{target, mean, reporting, floor, min, max, next, next_at, reason,\n"
	"last, last_at}, and \"team_budget\", the team's month as `cost`\n"
	"shows it.",
	status_flags, run_status,
};
