/* events_output.c -- printing events, cost reports and gc results. */
#include "events_output.h"

#include <string.h>

#include "output.h"

void gb_print_events(const gb_cli *cli, json_t *events, int follow)
{
	size_t i;
	json_t *e;
	if (cli->out == GB_OUT_JSON && follow) {
		json_array_foreach(events, i, e) {
			char *s = json_dumps(
			    e, JSON_COMPACT |
			           JSON_REAL_PRECISION(GB_JSON_DIGITS));
			if (s)
				puts(s);
			free(s);
		}
		fflush(stdout);
		return;
	}
	if (cli->out != GB_OUT_TABLE) {
		gb_out_render(cli, stdout, events, NULL, NULL);
		return;
	}
	json_array_foreach(events, i, e) {
		const char *pool = json_string_value(json_object_get(e, "pool"));
		/* the instance (an on-prem node's name, a cloud's id), as
		 * the console shows it */
		const char *inst = json_string_value(json_object_get(e,
		                                                     "instance"));
		printf("%s  %-20s %-11s %s%s%s%s\n",
		       json_string_value(json_object_get(e, "time")),
		       pool ? pool : "-",
		       json_string_value(json_object_get(e, "kind")),
		       json_string_value(json_object_get(e, "message")),
		       inst && *inst ? " [" : "", inst && *inst ? inst : "",
		       inst && *inst ? "]" : "");
	}
	fflush(stdout);
}

void gb_print_cost(const gb_cli *cli, json_t *cost)
{
	static const gb_column cols[] = {
		{"group", "key", 0},
		{"instances", "instances", 1},
		{"hours", "hours", 1},
		{"cost usd", "cost", 1},
		{"rolled back", "rolled_back", 1},
		{"rollback usd", "rolled_back_cost", 1},
		{NULL, NULL, 0},
	};
	if (cli->out != GB_OUT_TABLE) {
		gb_out_render(cli, stdout, cost, NULL, NULL);
		return;
	}
	gb_out_table(stdout, json_object_get(cost, "groups"), cols);
	printf("TOTAL  $%.2f (%s)\n",
	       json_real_value(json_object_get(cost, "total")),
	       json_string_value(json_object_get(cost, "by")));
	gb_print_budgets(json_object_get(cost, "budgets"));
}

void gb_print_budgets(json_t *budgets)
{
	static const gb_column cols[] = {
		{"team", "team", 0},
		{"spent this month", "spent", 1},
		{"$/h now", "per_hour", 1},
		{"projected", "projected", 1},
		{"budget", "budget", 1},
		{"used", "spent_fraction", 1},
		{"used at month end", "projected_fraction", 1},
		{"state", "state", 0},
		{NULL, NULL, 0},
	};
	if (!json_array_size(budgets))
		return;
	printf("\nthis month (UTC, to %s): spend, projection to the month's "
	       "end, and budget per team\n",
	       json_string_value(json_object_get(json_array_get(budgets, 0),
	                                         "month_end")));
	gb_out_table(stdout, budgets, cols);
}

int gb_gc_incomplete(const gb_cli *cli)
{
	gb_cli_err(cli, "incomplete: the regions marked 'unchecked' could "
	                "not be listed (see the error column and 'gpubroker "
	                "events'); fix the driver's credentials or endpoint and "
	                "run gc again");
	return GB_EXIT_FAIL;
}

void gb_print_gc(const gb_cli *cli, json_t *orphans)
{
	static const gb_column cols[] = {
		{"cloud", "cloud", 0}, {"region", "region", 0}, {"id", "id", 0},
		{"pool tag", "pool", 0}, {"action", "action", 0},
		{"error", "error", 0}, {NULL, NULL, 0},
	};
	if (cli->out != GB_OUT_TABLE) {
		gb_out_render(cli, stdout, orphans, NULL, NULL);
		return;
	}
	if (!json_array_size(orphans)) {
		if (!cli->quiet)
			printf("no orphans: every instance tagged with this broker's "
			       "id is known to the store\n");
		return;
	}
	gb_out_table(stdout, orphans, cols);
}
