/* cmd_events.c -- `events`, `cost` and `gc`. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "events_json.h"
#include "events_output.h"
#include "remote.h"
#include "cli_app.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static const char *e_pool, *e_since;
static int e_follow;

static const gb_flag *events_flags(void)
{
	static const gb_flag f[] = {
		{"pool", 0, "NAME", "only this pool's events", &e_pool, NULL, NULL},
		{"follow", 'F', NULL, "keep printing new events (Ctrl-C stops)",
		 NULL, &e_follow, NULL},
		{"since", 0, "DURATION", "only events newer than this, e.g. 1h",
		 &e_since, NULL, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static int run_events(gb_cli *cli)
{
	gb_store *st;
	char err[512];
	int64_t after = 0, since = 0, dur;
	if (cli->args.n)
		return gb_cli_usage(cli, "unexpected argument \"%s\"",
		                    cli->args.v[0]);
	if (e_since) {
		if (gb_parse_duration(e_since, &dur) != 0)
			return gb_cli_usage(cli, "--since: expected a duration like "
			                         "30m or 7d, found \"%s\"", e_since);
		since = gb_now_ms() - dur * 1000;
	}
	if (cli->server)
		return gb_remote_events(cli, e_pool, e_follow, since);
	if (gb_cli_config(cli))
		return GB_EXIT_FAIL;
	if (gb_store_open(cli->cfg.state_path, &st, err, sizeof(err)) != 0) {
		gb_cli_err(cli, "%s", err);
		return GB_EXIT_FAIL;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	do {
		gb_event_row *rows;
		size_t n;
		json_t *a;
		if (gb_store_event_list(st, e_pool, after, since, 1000, &rows, &n)) {
			gb_cli_err(cli, "%s", gb_store_errmsg(st));
			gb_store_close(st);
			return GB_EXIT_FAIL;
		}
		if (n)
			after = rows[n - 1].id;
		a = gb_events_json(rows, n);
		if (n || !e_follow)
			gb_print_events(cli, a, e_follow);
		json_decref(a);
		gb_event_list_free(rows, n);
		if (e_follow && !n)
			gb_sleep_ms(500);
	} while (e_follow && !stop_flag);
	gb_store_close(st);
	return GB_EXIT_OK;
}

const gb_cmd gb_cmd_events = {
	"events", "show what happened, and why", "[--pool NAME] [--follow] "
	"[--since DURATION]",
	"Every state change is an event: created, running, failover (with the\n"
	"provider's error code and where it failed over to), preempted,\n"
	"replace, terminating, terminated, gc, recovered, ...",
	events_flags, run_events,
};

static const char *c_by, *c_since;

static const gb_flag *cost_flags(void)
{
	static const gb_flag f[] = {
		{"by", 0, "KEY", "team | pool | cloud | label:KEY (default pool)",
		 &c_by, NULL, NULL},
		{"since", 0, "DURATION", "only time after now - DURATION, e.g. 7d",
		 &c_since, NULL, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static int run_cost(gb_cli *cli)
{
	gb_session s;
	json_t *c;
	int64_t since = 0, dur;
	int rc;
	if (c_by && strcmp(c_by, "team") && strcmp(c_by, "pool") &&
	    strcmp(c_by, "cloud") &&
	    (strncmp(c_by, "label:", 6) != 0 || !c_by[6]))
		return gb_cli_usage(cli, "--by: expected team, pool, cloud or "
		                         "label:KEY, found \"%s\"", c_by);
	if (c_since) {
		if (gb_parse_duration(c_since, &dur) != 0)
			return gb_cli_usage(cli, "--since: expected a duration like "
			                         "7d, found \"%s\"", c_since);
		since = gb_now_ms() / 1000 - dur;
	}
	if (cli->server)
		return gb_remote_cost(cli, c_by, since);
	if ((rc = gb_cli_session(cli, &s, NULL, NULL, NULL)))
		return rc;
	gb_engine_refresh(s.eng, NULL);
	c = gb_engine_cost(s.eng, c_by, since, NULL);
	gb_print_cost(cli, c);
	json_decref(c);
	gb_session_close(&s);
	return GB_EXIT_OK;
}

const gb_cmd gb_cmd_cost = {
	"cost", "what pools cost: seconds alive x price at launch",
	"[--by team|pool|cloud|label:KEY] [--since DURATION]",
	"Each instance costs (terminated or now - launched) x the price it was\n"
	"launched at (the spot price at that moment for spot).  Instances that\n"
	"are terminating still count until their cloud confirms.",
	cost_flags, run_cost,
};

static int g_adopt;

static const gb_flag *gc_flags(void)
{
	static const gb_flag f[] = {
		{"adopt", 0, NULL, "adopt orphans whose pool tag names an active "
		 "pool instead of terminating them", NULL, &g_adopt, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static int run_gc(gb_cli *cli)
{
	gb_session s;
	json_t *rep = NULL;
	int rc;
	if (cli->args.n)
		return gb_cli_usage(cli, "unexpected argument \"%s\"",
		                    cli->args.v[0]);
	if (cli->server)
		return gb_remote_gc(cli, g_adopt);
	if ((rc = gb_cli_session(cli, &s, NULL, NULL, NULL)))
		return rc;
	rc = gb_engine_gc(s.eng, g_adopt, &rep);
	if (rc < 0)
		gb_cli_err(cli, "gc failed: cannot read the state store: %s",
		           gb_store_errmsg(s.store));
	else
		gb_print_gc(cli, rep);
	json_decref(rep);
	gb_session_close(&s);
	if (rc == 1)
		return gb_gc_incomplete(cli);
	return rc ? GB_EXIT_FAIL : GB_EXIT_OK;
}

const gb_cmd gb_cmd_gc = {
	"gc", "find and terminate (or adopt) leaked instances", "[--adopt]",
	"Lists every instance carrying this broker's id (tag gpubroker-broker)\n"
	"in every region of every driver, and terminates those the state\n"
	"store does not know and no open intent explains.  A region that\n"
	"cannot be listed is shown as 'unchecked' with its error, and gc\n"
	"then exits 1.",
	gc_flags, run_gc,
};
