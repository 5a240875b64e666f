/* events_output.h -- printing events, cost reports and gc results, the
 * same in local and --server mode. */
#ifndef GB_EVENTS_OUTPUT_H
#define GB_EVENTS_OUTPUT_H

#include <jansson.h>

#include "cli.h"

/* events: array of {id, time_ms, pool, instance, kind, message}.  In
 * follow mode JSON output is one object per line. */
void gb_print_events(const gb_cli *cli, json_t *events, int follow);
void gb_print_cost(const gb_cli *cli, json_t *cost);
/* The table of cost's budgets (gb_engine_budgets); nothing when empty. */
void gb_print_budgets(json_t *budgets);
void gb_print_gc(const gb_cli *cli, json_t *orphans);
/* Says on stderr that gc could not list some regions; returns the exit
 * code for it (GB_EXIT_FAIL). */
int gb_gc_incomplete(const gb_cli *cli);

#endif
