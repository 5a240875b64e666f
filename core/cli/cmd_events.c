/* cmd_events.c -- `events`, `cost` and `gc`. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "events_output.h"

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
	gb_backend *b;
	int64_t after = 0, since = 0, dur;
	int rc;
	if (cli->args.n)
		return gb_cli_usage(cli, "unexpected argument \"%s\"",
		                    cli->args.v[0]);
	if (e_since) {
		if (gb_parse_duration(e_since, &dur) != 0)
			return gb_cli_usage(cli, "--since: expected a duration like "
			                         "30m or 7d, found \"%s\"", e_since);
		since = gb_now_ms() - dur * 1000;
	}
	if ((rc = gb_backend_open(cli, GB_BACKEND_STORE_ONLY | GB_BACKEND_SIGNALS,
	                          &b)))
		return rc;
	do {
		json_t *a;
		if (b->ops->events(b, e_pool, &after, since, e_follow, &a) != 0) {
			rc = GB_EXIT_FAIL;
			break;
		}
		/* following, an empty answer says nothing new */
		if (json_array_size(a) || !e_follow)
			gb_print_events(cli, a, e_follow);
		json_decref(a);
	} while (e_follow && !gb_backend_stopped(b));
	gb_backend_close(b);
	return rc;
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
	gb_backend *b;
	json_t *c = NULL;
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
	if ((rc = gb_backend_open(cli, 0, &b)))
		return rc;
	if (b->ops->cost(b, c_by, since, &c) == 0)
		gb_print_cost(cli, c);
	else
		rc = GB_EXIT_FAIL;
	json_decref(c);
	gb_backend_close(b);
	return rc;
}

const gb_cmd gb_cmd_cost = {
	"cost", "what pools cost: seconds billed x price at launch",
	"[--by team|pool|cloud|label:KEY] [--since DURATION]",
	"Each instance costs (terminated or now - launched) x the price it was\n"
	"launched at (the spot price at that moment for spot), and at least\n"
	"its provider's minimum billed time x that price (the driver's\n"
	"billing minimum, in `gpubroker drivers`: 60 s on EC2 and Compute\n"
	"Engine).  Instances that are terminating still count until their\n"
	"cloud confirms.  \"rolled back\" counts the instances made by a\n"
	"create that then failed (a colocated pool that got fewer than it\n"
	"asked for: the broker deleted them again), \"rollback usd\" what\n"
	"they cost (included in \"cost usd\").  Then each configured team's\n"
	"month (UTC): spent so far, $/h now, the projection to the month's\n"
	"end (what runs now, until then or its pool's TTL), its\n"
	"teams[].monthly_budget, the share used, and ok | warning (at\n"
	"teams[].budget_warn_at) | over | no budget.  -o json: groups[].{key,\n"
	"cost, hours, instances, rolled_back, rolled_back_cost},\n"
	"budgets[].{team, spent, per_hour, projected, budget, warn_fraction,\n"
	"spent_fraction, projected_fraction, state, month_end}.",
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
	gb_backend *b;
	json_t *orphans = NULL;
	int rc, incomplete = 0;
	if (cli->args.n)
		return gb_cli_usage(cli, "unexpected argument \"%s\"",
		                    cli->args.v[0]);
	if ((rc = gb_backend_open(cli, 0, &b)))
		return rc;
	rc = b->ops->gc(b, g_adopt, &orphans, &incomplete);
	if (rc == 0)
		gb_print_gc(cli, orphans);
	json_decref(orphans);
	gb_backend_close(b);
	if (rc)
		return GB_EXIT_FAIL;
	return incomplete ? gb_gc_incomplete(cli) : GB_EXIT_OK;
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
