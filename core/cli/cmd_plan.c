/* cmd_plan.c -- `gpubroker plan`: where would these pools go, what would
 * they cost, and why not elsewhere. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "engine.h"
#include "output.h"
#include "plan.h"
#include "plan_json.h"
#include "plan_output.h"
#include "cli_app.h"
#include "remote.h"
#include "store.h"

static gb_strv f_files;
static const char *f_policies, *f_limit;
static int f_explain, f_all, f_allow_partial;

static const gb_flag *plan_flags(void)
{
	static const gb_flag f[] = {
		{"file", 'f', "SPEC", "pool spec file (repeatable)", NULL, NULL,
		 &f_files},
		{"explain", 0, NULL, "show every refused offer with the rule and "
		 "reason", NULL, &f_explain, NULL},
		{"all", 0, NULL, "with --explain: also list offers refused for "
		 "GPU model/count/memory, cloud or capacity (counts otherwise)",
		 NULL, &f_all, NULL},
		{"policies", 0, "DIR", "look for policies in DIR first", &f_policies,
		 NULL, NULL},
		{"limit", 0, "N", "show the best N candidates (default 10)",
		 &f_limit, NULL, NULL},
		{"allow-partial", 0, NULL, "exit 0 when the known offers have "
		 "room for only part of a pool", NULL, &f_allow_partial, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

/* Prints (table) or collects (json/yaml) one pool's plan; takes j.
 * GB_EXIT_FAIL when no offer qualifies. */
static int emit(gb_cli *cli, const gb_pool_spec *s, json_t *j, json_t *all)
{
	const char *none = json_string_value(json_object_get(j, "no_candidate"));
	const char *refused = json_string_value(json_object_get(j,
	                                                        "apply_refused"));
	int rc = json_array_size(json_object_get(j, "candidates")) == 0 || refused
	                 ? GB_EXIT_FAIL
	                 : GB_EXIT_OK;
	char *msg = refused ? gb_xasprintf("apply would refuse it: %s", refused)
	            : rc ? gb_xstrdup(none ? none : "no offer qualifies") : NULL;
	json_int_t unplaced = json_integer_value(json_object_get(j, "unplaced"));
	size_t i;
	json_t *w;
	if (!rc && unplaced > 0 && !f_allow_partial) {
		/* the plan cannot place the whole pool: no green */
		rc = GB_EXIT_FAIL;
		msg = gb_xasprintf("pool %s: the known offers have room for "
		                   "only %lld of %d instance%s (no known room for "
		                   "%lld more); widen the spec (GPU models, "
		                   "clouds, capacity), or --allow-partial to "
		                   "accept that", s->name,
		                   (long long)(s->count - unplaced), s->count,
		                   s->count == 1 ? "" : "s", (long long)unplaced);
	}
	json_array_foreach(json_object_get(j, "warnings"), i, w)
		gb_cli_info(cli, "warning: %s", json_string_value(w));
	if (cli->out != GB_OUT_TABLE) {
		json_array_append_new(all, j);
	} else {
		gb_plan_print(s, j, f_explain, f_all);
		json_decref(j);
	}
	if (msg) {
		fflush(stdout);
		gb_cli_err(cli, "%s", msg);
		free(msg);
	}
	return rc;
}

/* --server: the daemon plans with its catalog, policies and cooldowns. */
static int plan_remote(gb_cli *cli, const gb_pool_spec *s, size_t limit,
                       json_t *all)
{
	char *js = gb_pool_spec_to_json(s), *path;
	json_t *body = json_loads(js, 0, NULL), *res = NULL, *plans;
	int rc;
	free(js);
	path = gb_xasprintf("/v1/plan?limit=%zu%s", limit,
	                    f_explain ? "&explain=1" : "");
	rc = gb_remote_call(cli, "POST", path, body, NULL, &res);
	free(path);
	json_decref(body);
	if (rc != 0)
		return rc;
	plans = json_object_get(res, "plans");
	if (json_array_size(plans) != 1) {
		gb_cli_err(cli, "pool %s: the daemon answered without a plan",
		           s->name);
		json_decref(res);
		return GB_EXIT_FAIL;
	}
	rc = emit(cli, s, json_incref(json_array_get(plans, 0)), all);
	json_decref(res);
	return rc;
}

/* eng: the engine on the state for apply's quota and budget checks
 * (NULL: no state, the pool alone counts); earlier: the pools planned
 * before this one, counted by those checks as apply counts them (s is
 * added) */
static int plan_one(gb_cli *cli, gb_runtime *rt, gb_store *st, gb_engine *eng,
                    gb_engine_batch *earlier, const gb_pool_spec *s,
                    size_t limit, json_t *all)
{
	gb_plan p;
	gb_plan_opts o;
	gb_engine_cool cool = {st, 0};
	char err[1024];
	int failed = 0, rc = GB_EXIT_OK;
	gb_policy_set *ps;

	ps = gb_plan_load_policies(&cli->cfg, s, f_policies, &failed, err,
	                           sizeof(err));
	if (failed) {
		gb_cli_err(cli, "pool %s: %s", s->name, err);
		return GB_EXIT_FAIL;
	}
	memset(&o, 0, sizeof(o));
	o.policies = ps;
	o.team = gb_config_team(&cli->cfg, s->team);
	if (st) {
		o.unavailable = gb_engine_unavailable;
		o.unavailable_ud = &cool;
	}
	if (gb_plan_pool(s, rt->cat, &o, &p, err, sizeof(err)) != 0) {
		gb_cli_err(cli, "pool %s: %s", s->name, err);
		gb_plan_free(&p);
		gb_policy_set_free(ps);
		return GB_EXIT_FAIL;
	}
	{
		json_t *rep = gb_plan_report(&p, limit, f_explain);
		char *refusal = gb_engine_check_plan(eng, &cli->cfg, s, &p,
		                                     earlier);
		char *cooling = st ? gb_engine_cooldown_msg(s, rt->cat, &o, &p,
		                                            &cool)
		                   : NULL;
		json_object_set_new(rep, "warnings",
		                    gb_spec_warnings(&rt->drivers, rt->cat, s, &p));
		json_object_set_new(rep, "apply_refused",
		                    refusal ? json_string(refusal) : json_null());
		if (cooling) /* when the pool would be tried again */
			json_object_set_new(rep, "no_candidate",
			                    json_string(cooling));
		free(refusal);
		free(cooling);
		gb_engine_batch_add(earlier, s, &p);
		rc = emit(cli, s, rep, all);
	}
	gb_plan_free(&p);
	gb_policy_set_free(ps);
	return rc;
}

static int run_plan(gb_cli *cli)
{
	gb_runtime rt;
	gb_store *st = NULL;
	gb_engine *eng = NULL;
	gb_engine_batch earlier = GB_ENGINE_BATCH_INIT;
	int64_t limit = 10;
	int rc = GB_EXIT_OK, r;
	json_t *all;
	gb_strv files = {0};

	for (size_t i = 0; i < f_files.n; i++)
		gb_strv_push(&files, f_files.v[i]);
	for (size_t i = 0; i < cli->args.n; i++)
		gb_strv_push(&files, cli->args.v[i]);
	gb_strv_free(&f_files);
	if (!files.n)
		return gb_cli_usage(cli, "give a pool spec with -f FILE");
	if (f_limit && (gb_parse_int64(f_limit, &limit) != 0 || limit < 1)) {
		gb_strv_free(&files);
		return gb_cli_usage(cli, "--limit: expected a positive integer");
	}
	if (cli->server && f_policies) {
		gb_strv_free(&files);
		return gb_cli_usage(cli, "--policies is for local plans; with "
		                         "--server the daemon uses its own "
		                         "policy path");
	}
	memset(&rt, 0, sizeof(rt));
	if (!cli->server && (r = gb_cli_config(cli)) != 0) {
		gb_strv_free(&files);
		return r;
	}
	/* the store (when there is one) is opened once: for the refreshed
	 * prices of the catalog and for the failover cooldowns */
	if (!cli->server && cli->cfg.state_path &&
	    (gb_store_is_url(cli->cfg.state_path) ||
	     access(cli->cfg.state_path, R_OK) == 0)) {
		char err[512];
		if (gb_store_open_cfg(&cli->cfg, &st, err, sizeof(err)) != 0)
			st = NULL;
	}
	if (!cli->server)
		gb_cli_runtime(cli, &rt, st, 1);
	if (st) {
		/* for apply's quota and budget checks: no cloud call */
		gb_engine_opts eo;
		memset(&eo, 0, sizeof(eo));
		eo.cfg = &cli->cfg;
		eo.store = st;
		eo.drivers = &rt.drivers;
		eo.cat = rt.cat;
		eng = gb_engine_new(&eo);
	}
	for (size_t i = 0; i < rt.problems.n; i++)
		gb_cli_info(cli, "warning: %s", rt.problems.v[i]);
	all = json_array();
	for (size_t fi = 0; fi < files.n; fi++) {
		gb_spec_set set;
		if (gb_cli_spec_load_in(cli, files.v[fi], rt.cat, &set) != 0) {
			rc = GB_EXIT_FAIL;
			continue;
		}
		for (size_t i = 0; i < set.n; i++)
			if ((cli->server ? plan_remote(cli, &set.pools[i],
			                               (size_t)limit, all)
			                 : plan_one(cli, &rt, st, eng, &earlier,
			                            &set.pools[i], (size_t)limit,
			                            all)) != GB_EXIT_OK)
				rc = GB_EXIT_FAIL;
		gb_spec_set_free(&set);
	}
	if (cli->out != GB_OUT_TABLE)
		gb_out_render(cli, stdout, all, NULL, NULL);
	json_decref(all);
	gb_strv_free(&files);
	gb_engine_batch_free(&earlier);
	gb_engine_free(eng);
	gb_store_close(st);
	if (!cli->server)
		gb_runtime_free(&rt);
	return rc;
}

const gb_cmd gb_cmd_plan = {
	"plan", "show where pools would go, their cost, and why",
	"-f SPEC [--explain [--all]] [--policies DIR] [--limit N] "
	"[--allow-partial]",
	"Plans every pool in SPEC against the offers of all loaded drivers:\n"
	"spec constraints first (GPU, clouds, regions, compliance, price),\n"
	"then the org-wide and the pool's Lua policies (filters must all pass,\n"
	"scores add), ranked by the capacity order, then score, then price;\n"
	"owned capacity (on-prem nodes, already paid for) ranks before every\n"
	"capacity kind.  Exit 1 when a pool has no candidate (the message\n"
	"lists the commonest refusal reasons, or, when only failover\n"
	"cooldowns stand in the way, when the first ends and a pool would be\n"
	"tried again), when apply's quota and budget checks (teams[]) would\n"
	"refuse it, or when the known offers have room for only part of it\n"
	"(unless --allow-partial).  With --server the daemon plans with its own\n"
	"catalog, policies and capacity cooldowns (POST /v1/plan).",
	plan_flags, run_plan,
};
