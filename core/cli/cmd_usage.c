/* cmd_usage.c -- `usage`: GPU-hours bought, their mean utilisation and
 * the idle GPU-hours per hour of day or day of week (gb_engine_usage,
 * locally or through a daemon's GET /v1/usage). */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "output.h"

static const char *u_by, *u_pool, *u_team, *u_since;

static const gb_flag *usage_flags(void)
{
	static const gb_flag f[] = {
		{"by", 0, "hour|weekday", "buckets: hour of day (default) or "
		 "day of week, UTC", &u_by, NULL, NULL},
		{"pool", 0, "POOL", "this pool only", &u_pool, NULL, NULL},
		{"team", 0, "TEAM", "this team's pools only", &u_team, NULL, NULL},
		{"since", 0, "DURATION", "the period: now - DURATION .. now "
		 "(default 7d)", &u_since, NULL, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static void print_usage(const gb_cli *cli, json_t *u)
{
	static const gb_column cols[] = {
		{"bucket", "bucket", 0},
		{"gpu hours", "gpu_hours", 1},
		{"measured", "measured_gpu_hours", 1},
		{"gpu util", "gpu_util", 1},
		{"idle gpu hours", "idle_gpu_hours", 1},
		{NULL, NULL, 0},
	};
	json_t *util = json_object_get(u, "gpu_util");
	json_int_t unmeasured = json_integer_value(
		json_object_get(u, "unmeasured_instances"));
	if (cli->out != GB_OUT_TABLE) {
		gb_out_render(cli, stdout, u, NULL, NULL);
		return;
	}
	gb_out_table(stdout, json_object_get(u, "buckets"), cols);
	printf("TOTAL  %.2f GPU-hours bought, %.2f measured", json_number_value(
	               json_object_get(u, "gpu_hours")),
	       json_number_value(json_object_get(u, "measured_gpu_hours")));
	if (json_is_number(util))
		printf(" at %.0f%% mean utilisation: %.2f idle GPU-hours\n",
		       json_number_value(util) * 100,
		       json_number_value(json_object_get(u, "idle_gpu_hours")));
	else
		printf(" (no heartbeats in the period)\n");
	if (unmeasured)
		printf("%lld instance(s) sent no heartbeat in the period: their "
		       "%.2f GPU-hours are unmeasured, not counted as idle\n",
		       (long long)unmeasured, json_number_value(json_object_get(
		               u, "unmeasured_gpu_hours")));
}

static int run_usage(gb_cli *cli)
{
	gb_backend *b;
	json_t *u = NULL;
	int64_t now = gb_now_ms() / 1000, dur = 7 * 86400;
	int rc;
	if (cli->args.n)
		return gb_cli_usage(cli, "unexpected argument \"%s\"",
		                    cli->args.v[0]);
	if (u_by && strcmp(u_by, "hour") && strcmp(u_by, "weekday"))
		return gb_cli_usage(cli, "--by: expected hour or weekday, found "
		                         "\"%s\"", u_by);
	if (u_since && (gb_parse_duration(u_since, &dur) != 0 || dur <= 0))
		return gb_cli_usage(cli, "--since: expected a duration like 7d, "
		                         "found \"%s\"", u_since);
	if ((rc = gb_backend_open(cli, 0, &b)))
		return rc;
	if (b->ops->usage(b, u_by, u_pool, u_team, now - dur, 0, &u) == 0)
		print_usage(cli, u);
	else
		rc = GB_EXIT_FAIL;
	json_decref(u);
	gb_backend_close(b);
	return rc;
}

const gb_cmd gb_cmd_usage = {
	"usage", "GPU-hours bought, their utilisation and the idle ones",
	"[--by hour|weekday] [--pool POOL] [--team TEAM] [--since DURATION]",
	"Per hour of day or day of week (UTC) over the period: the GPU-hours\n"
	"bought (each instance's billed lifetime x its GPUs, as `cost` bills\n"
	"it), the part heartbeats measured, their mean utilisation (weighted\n"
	"by time: a heartbeat's gpu_util stands until the next one, 10 minutes\n"
	"at most) and the idle GPU-hours (measured x (1 - utilisation)).\n"
	"Time no heartbeat covers (an instance that sends none, before its\n"
	"first) is unmeasured, never idle.  Heartbeats are kept for\n"
	"daemon.heartbeats_retention (30d).  -o json: {by, since, until, pool,\n"
	"team, gpu_hours, measured_gpu_hours, unmeasured_gpu_hours, gpu_util,\n"
	"idle_gpu_hours, unmeasured_instances, buckets[].{bucket, ...},\n"
	"pools[].{pool, team, instances, unmeasured_instances, ...}}.",
	usage_flags, run_usage,
};
