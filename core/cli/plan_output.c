/* plan_output.c -- the text the CLI prints from a plan's JSON.  Local
 * `plan` and `plan --server` both print through gb_plan_print, so they
 * read alike. */
#include "plan_output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "plan.h"

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static int kind_index(const char *name)
{
	for (int k = 0; k < GB_REFUSE__COUNT; k++)
		if (strcmp(name, gb_refusal_kind_name((gb_refusal_kind)k)) == 0)
			return k;
	return GB_REFUSE__COUNT;
}

/* Kinds worth a line per offer; the others (wrong GPU, cloud, capacity
 * kind) are counted and sampled unless --all. */
static int verbose_kind(int k)
{
	return k == GB_REFUSE_REGION || k == GB_REFUSE_COMPLIANCE ||
	       k == GB_REFUSE_PRICE || k == GB_REFUSE_UNAVAILABLE ||
	       k == GB_REFUSE_POLICY || k == GB_REFUSE_ROOM;
}

typedef struct ref {
	int kind;
	const json_t *j;
} ref;

/* Everything but the zone, so that the zones of one offer group. */
static int ref_cmp_nozone(const ref *x, const ref *y)
{
	static const char *const keys[] = {"cloud", "region", "instance_type",
	                                   "capacity", "rule", "reason"};
	int c;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	for (size_t i = 0; i < GB_ARRAY_LEN(keys); i++)
		if ((c = strcmp(jstr(x->j, keys[i]), jstr(y->j, keys[i]))) != 0)
			return c;
	return 0;
}

static int ref_cmp(const void *a, const void *b)
{
	const ref *x = a, *y = b;
	int c = ref_cmp_nozone(x, y);
	return c ? c : strcmp(jstr(x->j, "zone"), jstr(y->j, "zone"));
}

static void print_explain(const json_t *plan, int all)
{
	const json_t *refs = json_object_get(plan, "refusals");
	const json_t *counts = json_object_get(plan, "refused");
	size_t n = json_array_size(refs), i;
	ref *v = gb_xcalloc(n ? n : 1, sizeof(*v));
	const json_t *x;

	for (i = 0; i < n; i++) {
		v[i].j = json_array_get(refs, i);
		v[i].kind = kind_index(jstr(v[i].j, "kind"));
	}
	qsort(v, n, sizeof(*v), ref_cmp);
	printf("\nRefused %zu of %lld offers:\n", n,
	       (long long)json_integer_value(
	               json_object_get(plan, "offers_considered")));
	for (i = 0; i < n;) {
		int k = v[i].kind;
		size_t shown = 0;
		printf("  %-12s %6lld\n", jstr(v[i].j, "kind"),
		       (long long)json_integer_value(
		               json_object_get(counts, jstr(v[i].j, "kind"))));
		while (i < n && v[i].kind == k) {
			const json_t *r = v[i].j;
			size_t zones = 0;
			while (i < n && ref_cmp_nozone(&v[i], &v[i - zones]) == 0 &&
			       v[i].kind == k) {
				zones++;
				i++;
			}
			if (!verbose_kind(k) && !all && shown >= 3) {
				if (shown == 3)
					printf("      ... (--all lists them all)\n");
				shown++;
				continue;
			}
			if (zones > 1)
				printf("      %s %s %s %s (%zu zones): %s\n",
				       jstr(r, "cloud"), jstr(r, "region"),
				       jstr(r, "instance_type"), jstr(r, "capacity"),
				       zones, jstr(r, "reason"));
			else
				printf("      %s %s%s%s %s %s: %s\n", jstr(r, "cloud"),
				       jstr(r, "region"), *jstr(r, "zone") ? "/" : "",
				       jstr(r, "zone"), jstr(r, "instance_type"),
				       jstr(r, "capacity"), jstr(r, "reason"));
			shown++;
		}
	}
	free(v);
	json_array_foreach(json_object_get(plan, "policy_log"), i, x)
		printf("  policy log: %s\n", json_string_value(x));
	printf("  catalog sha256 %s\n", jstr(plan, "catalog_sha256"));
	json_array_foreach(json_object_get(plan, "policies"), i, x)
		printf("  policy %s sha256 %s\n", jstr(x, "name"), jstr(x, "sha256"));
}

static void print_header(const gb_pool_spec *s)
{
	char *models = gb_strv_join(&s->gpu_models, "|");
	printf("Pool %s (team %s, %s): %d x %d x %s, capacity ", s->name, s->team,
	       gb_purpose_name(s->purpose), s->count, s->gpu_count, models);
	if (s->mix)
		printf("mix (on-demand base %d, spot %.0f%% of the rest)",
		       s->on_demand_base, s->spot_share * 100);
	else
		for (int i = 0; i < s->ncapacity; i++)
			printf("%s%s", i ? " > " : "",
			       gb_capacity_name(s->capacity[i]));
	printf(", colocate %s%s\n", gb_colocate_name(s->colocate),
	       s->spread_zone ? ", spread over zones" : "");
	free(models);
}

void gb_plan_print(const gb_pool_spec *s, const json_t *plan, int explain,
                   int all)
{
	static const gb_column cols[] = {
		{"rank", "rank", 1},          {"cloud", "cloud", 0},
		{"region", "region", 0},      {"zone", "zone", 0},
		{"type", "instance_type", 0}, {"gpus", "gpus", 0},
		{"capacity", "capacity", 0},  {"$/h", "price_per_hour", 1},
		{"pool $/h", "pool_price_per_hour", 1}, {"score", "score", 1},
		{NULL, NULL, 0},
	};
	json_t *rows = json_deep_copy(json_object_get(plan, "candidates"));
	json_int_t total = json_integer_value(json_object_get(plan,
	                                                      "candidate_count"));
	size_t i;
	json_t *r;

	json_array_foreach(rows, i, r) {
		char g[48];
		snprintf(g, sizeof(g), "%lldx%s",
		         (long long)json_integer_value(json_object_get(r, "gpu_count")),
		         jstr(r, "gpu_model"));
		json_object_set_new(r, "gpus", json_string(g));
		if (!*jstr(r, "zone"))
			json_object_set_new(r, "zone", json_string("-"));
	}
	print_header(s);
	if (json_array_size(rows)) {
		const json_t *c = json_array_get(json_object_get(plan, "candidates"), 0);
		gb_out_table(stdout, rows, cols);
		if ((size_t)total > json_array_size(rows))
			printf("(%zu more candidates; --limit N shows more)\n",
			       (size_t)total - json_array_size(rows));
		const json_t *parts = json_object_get(plan, "placement");
		const char *why = strcmp(jstr(plan, "scored_by"), "policies") == 0
		                          ? "ranked by policy score"
		                          : "ranked by price";
		/* apply's quota and budget checks refuse it: not chosen */
		const char *chosen = json_is_string(json_object_get(
		                             plan, "apply_refused"))
		                             ? "Refused by apply (below), else:"
		                             : "Chosen:";
		if (json_array_size(parts) > 1 || json_object_get(plan, "unplaced")) {
			/* no one offer has room for the whole pool: its parts */
			const json_t *pt;
			size_t k;
			printf("%s", chosen);
			json_array_foreach(parts, k, pt)
				printf("%s %lld x %s %s%s%s %s %s", k ? " +" : "",
				       (long long)json_integer_value(
				               json_object_get(pt, "count")),
				       jstr(pt, "cloud"), jstr(pt, "region"),
				       *jstr(pt, "zone") ? "/" : "", jstr(pt, "zone"),
				       jstr(pt, "instance_type"), jstr(pt, "capacity"));
			printf(", $%.2f/h for the pool (%s; each offer "
			       "takes what it has free, in rank order)\n",
			       json_number_value(json_object_get(
			               plan, "placement_price_per_hour")), why);
			if (json_object_get(plan, "unplaced"))
				printf("No known room for %lld more: every "
				       "candidate has fewer free\n",
				       (long long)json_integer_value(json_object_get(
				               plan, "unplaced")));
		} else {
			printf("%s %s %s%s%s %s %s, $%.2f/h for the pool (%s)\n",
			       chosen, jstr(c, "cloud"), jstr(c, "region"),
			       *jstr(c, "zone") ? "/" : "", jstr(c, "zone"),
			       jstr(c, "instance_type"), jstr(c, "capacity"),
			       json_number_value(json_object_get(c, "pool_price_per_hour")),
			       why);
		}
	}
	if (explain)
		print_explain(plan, all);
	printf("\n");
	json_decref(rows);
}
