/* cmd_plan.c -- `gpubroker plan`: where would these pools go, what would
 * they cost, and why not elsewhere. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "output.h"
#include "plan.h"
#include "runtime.h"
#include "store.h"

static gb_strv f_files;
static const char *f_policies, *f_limit;
static int f_explain, f_all;

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
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

/* Failover cooldowns recorded in the state store (shared by every pool
 * and process) also apply to plans, so `plan --explain` says why a zone
 * is being skipped right now. */
static int unavailable(void *ud, const gb_coffer *o, char *why, size_t cap)
{
	gb_store *st = ud;
	char reason[256], when[32];
	int64_t until = 0;
	if (!gb_store_unavailable_check(st, o->cloud, o->region, o->zone,
	                                o->instance_type,
	                                gb_capacity_name(o->capacity),
	                                gb_now_ms() / 1000, reason,
	                                sizeof(reason), &until))
		return 0;
	snprintf(why, cap, "%s, until %s", reason,
	         gb_format_time(until, when, sizeof(when)));
	return 1;
}

static int verbose_kind(int kind)
{
	return kind == GB_REFUSE_REGION || kind == GB_REFUSE_COMPLIANCE ||
	       kind == GB_REFUSE_PRICE || kind == GB_REFUSE_UNAVAILABLE ||
	       kind == GB_REFUSE_POLICY;
}

/* Refusals sorted so that zones of one (cloud, region, type, capacity)
 * with the same rule and reason print once. */
static const gb_plan *sort_plan;

static int refusal_cmp(const void *a, const void *b)
{
	const gb_refusal *x = &sort_plan->refusals[*(const size_t *)a];
	const gb_refusal *y = &sort_plan->refusals[*(const size_t *)b];
	int c;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	if ((c = strcmp(x->offer->cloud, y->offer->cloud)) ||
	    (c = strcmp(x->offer->region, y->offer->region)) ||
	    (c = strcmp(x->offer->instance_type, y->offer->instance_type)))
		return c;
	if (x->offer->capacity != y->offer->capacity)
		return (int)x->offer->capacity - (int)y->offer->capacity;
	if (x->policy != y->policy)
		return x->policy - y->policy;
	if (x->reason != y->reason)
		return x->reason && y->reason ? strcmp(x->reason, y->reason)
		                              : (x->reason ? 1 : -1);
	return strcmp(x->offer->zone, y->offer->zone);
}

static int same_line(const gb_refusal *x, const gb_refusal *y)
{
	return x->kind == y->kind && x->offer->cloud == y->offer->cloud &&
	       x->offer->region == y->offer->region &&
	       x->offer->instance_type == y->offer->instance_type &&
	       x->offer->capacity == y->offer->capacity &&
	       x->policy == y->policy &&
	       (x->reason == y->reason ||
	        (x->reason && y->reason && strcmp(x->reason, y->reason) == 0));
}

static void print_explain(const gb_plan *p)
{
	size_t *idx = gb_xmalloc((p->nrefusals ? p->nrefusals : 1) * sizeof(*idx));
	for (size_t i = 0; i < p->nrefusals; i++)
		idx[i] = i;
	sort_plan = p;
	qsort(idx, p->nrefusals, sizeof(*idx), refusal_cmp);
	printf("\nRefused %zu of %zu offers:\n", p->nrefusals, p->considered);
	for (size_t i = 0; i < p->nrefusals;) {
		int k = p->refusals[idx[i]].kind;
		size_t shown = 0;
		printf("  %-12s %6zu\n", gb_refusal_kind_name((gb_refusal_kind)k),
		       p->counts[k]);
		for (; i < p->nrefusals && p->refusals[idx[i]].kind == k;) {
			const gb_refusal *r = &p->refusals[idx[i]];
			size_t zones = 0;
			char *t;
			while (i < p->nrefusals && same_line(r, &p->refusals[idx[i]])) {
				zones++;
				i++;
			}
			if (!verbose_kind(k) && !f_all && shown >= 3) {
				if (shown == 3)
					printf("      ... (--all lists them all)\n");
				shown++;
				continue;
			}
			t = gb_plan_refusal_text(p, r);
			if (zones > 1)
				printf("      %s %s %s %s (%zu zones): %s\n",
				       r->offer->cloud, r->offer->region,
				       r->offer->instance_type,
				       gb_capacity_name(r->offer->capacity), zones, t);
			else
				printf("      %s %s%s%s %s %s: %s\n", r->offer->cloud,
				       r->offer->region, *r->offer->zone ? "/" : "",
				       r->offer->zone, r->offer->instance_type,
				       gb_capacity_name(r->offer->capacity), t);
			free(t);
			shown++;
		}
	}
	free(idx);
	for (size_t i = 0; i < p->logs.n; i++)
		printf("  policy log: %s\n", p->logs.v[i]);
	printf("  catalog sha256 %s\n", p->catalog_hash);
	for (size_t i = 0; i < p->policy_names.n; i++)
		printf("  policy %s sha256 %s\n", p->policy_names.v[i],
		       p->policy_hashes.v[i]);
}

static void print_header(const gb_pool_spec *s)
{
	char *models = gb_strv_join(&s->gpu_models, "|");
	printf("Pool %s (team %s, %s): %d x %d x %s, capacity ", s->name, s->team,
	       gb_purpose_name(s->purpose), s->count, s->gpu_count, models);
	for (int i = 0; i < s->ncapacity; i++)
		printf("%s%s", i ? " > " : "", gb_capacity_name(s->capacity[i]));
	printf(", colocate %s\n", gb_colocate_name(s->colocate));
	free(models);
}

static int plan_one(gb_cli *cli, gb_runtime *rt, gb_store *st,
                    const gb_pool_spec *s, size_t limit, json_t *all)
{
	gb_plan p;
	gb_plan_opts o;
	char err[1024];
	int failed = 0, rc = GB_EXIT_OK;
	gb_policy_set *ps;
	static const gb_column cols[] = {
		{"rank", "rank", 1},          {"cloud", "cloud", 0},
		{"region", "region", 0},      {"zone", "zone", 0},
		{"type", "instance_type", 0}, {"gpus", "gpus", 0},
		{"capacity", "capacity", 0},  {"$/h", "price_per_hour", 1},
		{"pool $/h", "pool_price_per_hour", 1}, {"score", "score", 1},
		{NULL, NULL, 0},
	};

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
		o.unavailable = unavailable;
		o.unavailable_ud = st;
	}
	if (gb_plan_pool(s, rt->cat, &o, &p, err, sizeof(err)) != 0) {
		gb_cli_err(cli, "pool %s: %s", s->name, err);
		gb_plan_free(&p);
		gb_policy_set_free(ps);
		return GB_EXIT_FAIL;
	}
	if (cli->out != GB_OUT_TABLE) {
		json_array_append_new(all, gb_plan_to_json(&p, limit, f_explain));
	} else {
		json_t *j = gb_plan_to_json(&p, limit, 0);
		json_t *rows = json_object_get(j, "candidates");
		size_t i;
		json_t *r;
		json_array_foreach(rows, i, r) {
			char g[48];
			snprintf(g, sizeof(g), "%lldx%s",
			         (long long)json_integer_value(json_object_get(r, "gpu_count")),
			         json_string_value(json_object_get(r, "gpu_model")));
			json_object_set_new(r, "gpus", json_string(g));
			if (!*json_string_value(json_object_get(r, "zone")))
				json_object_set_new(r, "zone", json_string("-"));
		}
		print_header(s);
		if (p.ncands) {
			gb_out_table(stdout, rows, cols);
			if (p.ncands > json_array_size(rows))
				printf("(%zu more candidates; --limit N shows more)\n",
				       p.ncands - json_array_size(rows));
			printf("Chosen: %s %s%s%s %s %s, $%.2f/h for the pool (%s)\n",
			       p.cands[0].offer->cloud, p.cands[0].offer->region,
			       *p.cands[0].offer->zone ? "/" : "",
			       p.cands[0].offer->zone, p.cands[0].offer->instance_type,
			       gb_capacity_name(p.cands[0].offer->capacity),
			       p.cands[0].pool_price,
			       p.scored_by_policy ? "ranked by policy score"
			                          : "ranked by price");
		}
		if (f_explain)
			print_explain(&p);
		printf("\n");
		json_decref(j);
	}
	if (!p.ncands) {
		char *m = gb_plan_no_candidate_msg(&p);
		gb_cli_err(cli, "%s", m);
		free(m);
		rc = GB_EXIT_FAIL;
	}
	gb_plan_free(&p);
	gb_policy_set_free(ps);
	return rc;
}

static int run_plan(gb_cli *cli)
{
	gb_runtime rt;
	gb_store *st = NULL;
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
	if ((r = gb_runtime_open(cli, &rt, 1)) != 0) {
		gb_strv_free(&files);
		return r;
	}
	for (size_t i = 0; i < rt.problems.n; i++)
		gb_cli_info(cli, "warning: %s", rt.problems.v[i]);
	if (cli->cfg.state_path && access(cli->cfg.state_path, R_OK) == 0) {
		char err[512];
		if (gb_store_open(cli->cfg.state_path, &st, err, sizeof(err)) != 0)
			st = NULL;
	}
	all = json_array();
	for (size_t fi = 0; fi < files.n; fi++) {
		gb_spec_set set;
		gb_diags d = GB_DIAGS_INIT;
		gb_spec_opts so;
		memset(&so, 0, sizeof(so));
		if (gb_spec_load_file(files.v[fi], &so, &set, &d) != 0) {
			gb_diags_print(&d, stderr);
			gb_diags_free(&d);
			rc = GB_EXIT_FAIL;
			continue;
		}
		gb_diags_free(&d);
		for (size_t i = 0; i < set.n; i++)
			if (plan_one(cli, &rt, st, &set.pools[i], (size_t)limit, all) !=
			    GB_EXIT_OK)
				rc = GB_EXIT_FAIL;
		gb_spec_set_free(&set);
	}
	if (cli->out != GB_OUT_TABLE)
		gb_out_render(cli, stdout, all, NULL, NULL);
	json_decref(all);
	gb_strv_free(&files);
	gb_store_close(st);
	gb_runtime_free(&rt);
	return rc;
}

const gb_cmd gb_cmd_plan = {
	"plan", "show where pools would go, their cost, and why",
	"-f SPEC [--explain [--all]] [--policies DIR] [--limit N]",
	"Plans every pool in SPEC against the offers of all loaded drivers:\n"
	"spec constraints first (GPU, clouds, regions, compliance, price),\n"
	"then the org-wide and the pool's Lua policies (filters must all pass,\n"
	"scores add), ranked by the capacity order, then score, then price.\n"
	"Exit 1 when a pool has no candidate (the message lists the commonest\n"
	"refusal reasons).",
	plan_flags, run_plan,
};
