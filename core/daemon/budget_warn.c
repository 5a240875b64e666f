/* budget_warn.c -- the budget-warning event: once a month per team,
 * when the team's spend this month reaches teams[].budget_warn_at of its
 * teams[].monthly_budget (gb_engine_budgets), written on each of the
 * team's active pools so that the team's viewers and `events --pool`
 * see it.  A restarted daemon looks in the store for this month's
 * warning before writing another. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "log.h"

#define WARNED_MAX 256

/* the teams warned, and the month (its first unix second) */
static struct {
	char team[64];
	int64_t month;
} warned[WARNED_MAX];
static size_t nwarned;

/* The month (UTC) of unix second now, as a number. */
static int64_t month_of(int64_t now)
{
	struct tm tm;
	time_t t = (time_t)now;
	gmtime_r(&t, &tm);
	return (int64_t)(tm.tm_year * 12 + tm.tm_mon);
}

static int seen(const char *team, int64_t month)
{
	for (size_t i = 0; i < nwarned; i++)
		if (warned[i].month == month && strcmp(warned[i].team, team) == 0)
			return 1;
	return 0;
}

static void mark(const char *team, int64_t month)
{
	size_t i;
	for (i = 0; i < nwarned; i++)
		if (strcmp(warned[i].team, team) == 0)
			break;
	if (i == nwarned) {
		if (nwarned == WARNED_MAX || strlen(team) >= sizeof(warned[i].team))
			return;
		nwarned++;
	}
	snprintf(warned[i].team, sizeof(warned[i].team), "%s", team);
	warned[i].month = month;
}

/* 1 when one of pools already has this month's warning (since_ms: the
 * month's first millisecond). */
static int stored(gb_daemon *d, const gb_pool_row *pools, size_t np,
                  int64_t since_ms)
{
	for (size_t i = 0; i < np; i++) {
		gb_event_row *ev;
		size_t n;
		int found = 0;
		if (gb_store_event_list(d->store, pools[i].name, 0, since_ms, 0,
		                        &ev, &n) != 0)
			continue;
		for (size_t k = 0; k < n && !found; k++)
			found = strcmp(ev[k].kind, "budget-warning") == 0;
		gb_event_list_free(ev, n);
		if (found)
			return 1;
	}
	return 0;
}

void gb_daemon_budget_warnings(gb_daemon *d)
{
	json_t *a = gb_engine_budgets(d->eng, NULL), *t;
	int64_t now = gb_now_ms() / 1000;
	size_t i;
	json_array_foreach(a, i, t) {
		const char *team = json_string_value(json_object_get(t, "team"));
		const char *state = json_string_value(json_object_get(t, "state"));
		int64_t month = month_of(now), since_ms;
		gb_pool_row *pools;
		size_t np;
		struct tm tm;
		time_t tt = (time_t)now;
		if (strcmp(state, "warning") != 0 && strcmp(state, "over") != 0)
			continue;
		if (seen(team, month))
			continue;
		if (gb_store_pool_list(d->store, team, 0, &pools, &np) != 0)
			continue;
		gmtime_r(&tt, &tm);
		tm.tm_mday = 1;
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		since_ms = (int64_t)timegm(&tm) * 1000;
		if (!stored(d, pools, np, since_ms)) {
			double spent = json_number_value(json_object_get(t, "spent"));
			double budget = json_number_value(json_object_get(t, "budget"));
			double warn = json_number_value(json_object_get(t, "warn_fraction"));
			double proj = json_number_value(json_object_get(t, "projected"));
			for (size_t k = 0; k < np; k++)
				if (strcmp(pools[k].state, "active") == 0 &&
				    gb_store_event(d->store, pools[k].name, NULL,
					               "budget-warning",
					               "team %s has spent $%.2f of its "
					               "monthly budget $%.2f (%.0f%%, "
					               "warning at %.0f%%); projected $%.2f "
					               "by the month's end; at 100%% "
					               "scale-ups and new pools are refused "
					               "(teams[].monthly_budget)",
					               team, spent, budget,
					               spent / budget * 100, warn * 100,
					               proj) != 0)
					gb_log(GB_LOG_ERROR, "budget", "%s: the "
					       "budget-warning event not recorded: %s",
					       pools[k].name, gb_store_errmsg(d->store));
			gb_log(GB_LOG_WARN, "budget", "team %s has spent $%.2f of its "
			       "monthly budget $%.2f (warning at %.0f%%); projected "
			       "$%.2f by the month's end", team, spent, budget,
			       warn * 100, proj);
		}
		/* a team without an active pool is warned when it has one */
		for (size_t k = 0; k < np; k++)
			if (strcmp(pools[k].state, "active") == 0) {
				mark(team, month);
				break;
			}
		gb_pool_list_free(pools, np);
	}
	json_decref(a);
}
