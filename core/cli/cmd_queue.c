/* cmd_queue.c -- `queue`: the pools waiting for a shared resource (an
 * on-prem site's nodes), in the order the admission will serve them
 * (gb_engine_admission, locally or through a daemon's GET /v1/queue;
 * issue 35). */
#include <stdio.h>

#include "backend.h"
#include "output.h"

static const gb_flag *queue_flags(void)
{
	static const gb_flag f[] = {
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static void print_queue(const gb_cli *cli, json_t *a)
{
	static const gb_column cols[] = {
		{"pos", "position", 1},
		{"pool", "pool", 0},
		{"team", "team", 0},
		{"priority", "priority", 1},
		{"count", "count", 1},
		{"held", "held", 1},
		{"waits for", "waits_for", 0},
		{"reason", "reason", 0},
		{NULL, NULL, 0},
	};
	json_t *q = json_object_get(a, "queue"), *p;
	size_t i;
	if (cli->out != GB_OUT_TABLE) {
		gb_out_render(cli, stdout, a, NULL, NULL);
		return;
	}
	if (json_array_size(q) == 0)
		printf("no pool waits for a shared resource\n");
	else
		gb_out_table(stdout, q, cols);
	json_array_foreach(json_object_get(a, "preemptions"), i, p)
		printf("preempting: %s\n",
		       json_string_value(json_object_get(p, "reason")));
}

static int run_queue(gb_cli *cli)
{
	gb_backend *b;
	json_t *q = NULL;
	int rc;
	if (cli->args.n)
		return gb_cli_usage(cli, "unexpected argument \"%s\"",
		                    cli->args.v[0]);
	if ((rc = gb_backend_open(cli, 0, &b)))
		return rc;
	if (b->ops->queue(b, &q) == 0)
		print_queue(cli, q);
	else
		rc = GB_EXIT_FAIL;
	json_decref(q);
	gb_backend_close(b);
	return rc;
}

const gb_cmd gb_cmd_queue = {
	"queue", "the pools waiting for shared GPUs, in the order served",
	"",
	"The pools that wait for a shared resource (today: an on-prem site's\n"
	"nodes, for pools placed on one site only) in the order the admission\n"
	"serves them: priority class first (the config's priorities:), then\n"
	"the teams' weighted fair share (teams[].share), then arrival.  Each\n"
	"with its position, what it waits for and who is ahead; the\n"
	"preemptions under way below.  Through a daemon: the queue of its\n"
	"last reconcile pass (GET /v1/queue); a team's token sees the other\n"
	"teams' pools by team only.  -o json: {queue[].{position, pool, team,\n"
	"priority, count, held, waits_for, preempting, reason, ahead[]},\n"
	"resources[].{name, kind, capacity, used}, preemptions[].{victim,\n"
	"for, count, why, reason}}.",
	queue_flags, run_queue,
};
