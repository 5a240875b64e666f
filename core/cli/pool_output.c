/* pool_output.c -- printing pools and plans of change. */
#include "pool_output.h"

#include <string.h>

#include "output.h"

void gb_print_diff(FILE *f, json_t *diff)
{
	size_t i, nc = 0, nd = 0, nr = 0, nk;
	json_t *it;
	const char *pool = json_string_value(json_object_get(diff, "pool"));
	fprintf(f, "Pool %s:\n", pool ? pool : "?");
	json_array_foreach(json_object_get(diff, "create"), i, it) {
		json_int_t n = json_integer_value(json_object_get(it, "count"));
		const char *zone = json_string_value(json_object_get(it, "zone"));
		fprintf(f, "  + create  %lld x %s (%s %s%s%s, %s, $%.2f/h each)\n",
		        (long long)n,
		        json_string_value(json_object_get(it, "instance_type")),
		        json_string_value(json_object_get(it, "cloud")),
		        json_string_value(json_object_get(it, "region")),
		        zone && *zone ? "/" : "", zone ? zone : "",
		        json_string_value(json_object_get(it, "capacity")),
		        json_real_value(json_object_get(it, "price_per_hour")));
		nc += (size_t)n;
	}
	json_array_foreach(json_object_get(diff, "replace"), i, it) {
		fprintf(f, "  ~ replace %s (%s)\n",
		        json_string_value(json_object_get(it, "name")),
		        json_string_value(json_object_get(it, "reason")));
		nr++;
	}
	json_array_foreach(json_object_get(diff, "destroy"), i, it) {
		fprintf(f, "  - destroy %s (%s)\n",
		        json_string_value(json_object_get(it, "name")),
		        json_string_value(json_object_get(it, "reason")));
		nd++;
	}
	nk = json_array_size(json_object_get(diff, "keep"));
	if (nk)
		fprintf(f, "  = keep    %zu instance%s\n", nk,
		        gb_plural((long long)nk));
	if (json_object_get(diff, "unplaced"))
		fprintf(f, "  ! no known room for %lld more: every candidate "
		           "has fewer free\n",
		        (long long)json_integer_value(json_object_get(diff,
		                                                      "unplaced")));
	if (json_object_get(diff, "error"))
		fprintf(f, "  ! %s\n",
		        json_string_value(json_object_get(diff, "error")));
	fprintf(f, "Plan: %zu to create, %zu to replace, %zu to destroy; "
	           "$%.2f/h -> $%.2f/h (first-choice placement; failover may "
	           "differ)\n",
	        nc, nr, nd,
	        json_real_value(json_object_get(diff, "price_per_hour_before")),
	        json_real_value(json_object_get(diff, "price_per_hour_after")));
}

/* An autoscaled pool's state (from the daemon): bounds, target, mean,
 * floor, what may come next, this pass's reason and the last change. */
static void print_autoscale(json_t *p)
{
	json_t *a = json_object_get(p, "autoscale"), *m;
	const char *next, *at, *last, *last_at;
	if (!json_is_object(a))
		return;
	m = json_object_get(a, "mean");
	next = json_string_value(json_object_get(a, "next"));
	at = json_string_value(json_object_get(a, "next_at"));
	last = json_string_value(json_object_get(a, "last"));
	last_at = json_string_value(json_object_get(a, "last_at"));
	printf("%s: autoscale: target %.2f, mean ",
	       json_string_value(json_object_get(p, "name")),
	       json_number_value(json_object_get(a, "target")));
	if (json_is_number(m))
		printf("%.2f", json_number_value(m));
	else
		printf("unknown");
	printf(" (%lld reporting), floor %lld", (long long)json_integer_value(
	                                 json_object_get(a, "reporting")),
	       (long long)json_integer_value(json_object_get(a, "floor")));
	if (json_is_integer(json_object_get(a, "max")))
		printf(", min %lld, max %lld",
		       (long long)json_integer_value(json_object_get(a, "min")),
		       (long long)json_integer_value(json_object_get(a, "max")));
	printf("; next: %s%s%s; now: %s; last change: %s%s%s\n",
	       next ? next : "none", at ? " at " : "", at ? at : "",
	       json_string_value(json_object_get(a, "reason")),
	       last ? last : "none yet", last_at ? " at " : "",
	       last_at ? last_at : "");
}

void gb_print_pools(const gb_cli *cli, json_t *pools, int instances)
{
	static const gb_column pcols[] = {
		{"pool", "name", 0},          {"team", "team", 0},
		{"purpose", "purpose", 0},    {"state", "state", 0},
		{"desired", "desired", 1},    {"running", "running", 1},
		{"clouds", "clouds", 0},      {"$/h", "price_per_hour", 1},
		{"age", "age", 0},            {"ttl left", "ttl_left", 0},
		{NULL, NULL, 0},
	};
	static const gb_column icols[] = {
		{"instance", "name", 0},      {"id", "id", 0},
		{"cloud", "cloud", 0},        {"zone", "where", 0},
		{"type", "instance_type", 0}, {"capacity", "capacity", 0},
		{"state", "state", 0},        {"private ip", "private_ip", 0},
		{"public ip", "public_ip", 0}, {"$/h", "price_per_hour", 1},
		{NULL, NULL, 0},
	};
	size_t i;
	json_t *p;
	if (cli->out != GB_OUT_TABLE) {
		gb_out_render(cli, stdout, pools, NULL, NULL);
		return;
	}
	if (!json_array_size(pools))
		return;
	json_array_foreach(pools, i, p) {
		char buf[32];
		json_t *ttl = json_object_get(p, "ttl_left_s");
		json_object_set_new(p, "age",
		                    json_string(gb_format_duration(
		                            json_integer_value(json_object_get(p, "age_s")),
		                            buf, sizeof(buf))));
		if (json_is_integer(ttl))
			json_object_set_new(p, "ttl_left",
			                    json_string(json_integer_value(ttl) > 0
			                                        ? gb_format_duration(json_integer_value(ttl),
			                                                             buf, sizeof(buf))
			                                        : "expired"));
	}
	gb_out_table(stdout, pools, pcols);
	/* a pool short of its size says why and when it tries again */
	json_array_foreach(pools, i, p) {
		json_t *w = json_object_get(p, "waiting");
		if (json_is_object(w))
			printf("%s: waiting: %s\n",
			       json_string_value(json_object_get(p, "name")),
			       json_string_value(json_object_get(w, "reason")));
	}
	json_array_foreach(pools, i, p)
		print_autoscale(p);
	/* a CI job's pool (made with a token exchanged for its OIDC ID
	 * token) says which repository, ref and run */
	json_array_foreach(pools, i, p) {
		json_t *l = json_object_get(p, "labels");
		const char *keys[] = {"ci-repository", "ci-ref", "ci-run"};
		int any = 0;
		for (size_t k = 0; k < 3; k++) {
			const char *v = json_string_value(json_object_get(l, keys[k]));
			if (!v)
				continue;
			if (!any++)
				printf("%s: CI", json_string_value(json_object_get(p,
				                                                   "name")));
			printf(" %s=%s", keys[k], v);
		}
		if (any)
			printf("\n");
	}
	if (!instances)
		return;
	json_array_foreach(pools, i, p) {
		json_t *insts = json_object_get(p, "instances");
		size_t k;
		json_t *in;
		if (!json_array_size(insts))
			continue;
		json_array_foreach(insts, k, in) {
			const char *z = json_string_value(json_object_get(in, "zone"));
			json_object_set_new(in, "where",
			                    json_string(z && *z ? z
			                                        : json_string_value(json_object_get(in, "region"))));
		}
		printf("\n%s:\n", json_string_value(json_object_get(p, "name")));
		gb_out_table(stdout, insts, icols);
	}
}

void gb_print_decision(json_t *dec)
{
	json_t *plan = json_object_get(dec, "plan");
	json_t *parts = json_object_get(plan, "placement");
	json_t *cands = json_object_get(plan, "candidates");
	json_t *pt;
	size_t k;
	if (!json_is_object(plan))
		return;
	printf("\nplacement decision (last apply, %s):",
	       json_string_value(json_object_get(dec, "time"))
	               ? json_string_value(json_object_get(dec, "time"))
	               : "?");
	json_array_foreach(parts, k, pt) {
		const char *z = json_string_value(json_object_get(pt, "zone"));
		printf("%s %lld x %s %s%s%s %s %s", k ? " +" : "",
		       (long long)json_integer_value(json_object_get(pt, "count")),
		       json_string_value(json_object_get(pt, "cloud")),
		       json_string_value(json_object_get(pt, "region")),
		       z && *z ? "/" : "", z ? z : "",
		       json_string_value(json_object_get(pt, "instance_type")),
		       json_string_value(json_object_get(pt, "capacity")));
	}
	if (json_integer_value(json_object_get(plan, "unplaced")) > 0)
		printf("; no known room for %lld more",
		       (long long)json_integer_value(
			       json_object_get(plan, "unplaced")));
	printf("\n  %lld candidates, ranked by %s; the first:",
	       (long long)json_integer_value(json_object_get(plan,
	                                                     "candidate_count")),
	       json_string_value(json_object_get(plan, "scored_by"))
	               ? json_string_value(json_object_get(plan, "scored_by"))
	               : "price");
	json_array_foreach(cands, k, pt) {
		const char *z = json_string_value(json_object_get(pt, "zone"));
		if (k >= 3)
			break;
		printf("%s %s/%s %s %s $%.4f/h", k ? "," : "",
		       json_string_value(json_object_get(pt, "cloud")),
		       z && *z ? z : json_string_value(json_object_get(pt,
		                                                      "region")),
		       json_string_value(json_object_get(pt, "instance_type")),
		       json_string_value(json_object_get(pt, "capacity")),
		       json_number_value(json_object_get(pt, "price_per_hour")));
	}
	printf("\n");
}
