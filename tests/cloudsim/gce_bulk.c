/*
 * gce_bulk.c -- instances.bulkInsert in a zone: `count` instances of one
 * InstanceProperties in one request, named by perInstanceProperties keys
 * and/or a namePattern.  Checked up front against the zone's capacity,
 * the region's GPU quota and cloudsim's instance limit: when fewer than
 * minCount (default count) fit, nothing is made and the operation ends
 * DONE with the error a single insert would give
 * (ZONE_RESOURCE_POOL_EXHAUSTED or QUOTA_EXCEEDED); otherwise
 * min(count, what fits) instances are made.  A name that already exists
 * fails the whole request (409 alreadyExists), nothing made.  requestId
 * deduplicates as for insert.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gce.h"

/* "You can create up to 5,000 VMs with each call" (about-bulk-creation). */
#define GCE_BULK_MAX 5000

/* An int64 field as the API takes it: a JSON integer or a decimal string.
 * 0 (def when absent), -1 when malformed. */
static int int64_field(const json_t *o, const char *k, int64_t def,
                       int64_t *out)
{
	const json_t *v = json_object_get(o, k);
	*out = def;
	if (!v)
		return 0;
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_string(v))
		return sim_parse_i64(json_string_value(v), out);
	return -1;
}

/* namePattern: a prefix, one run of 1..18 '#', a suffix. */
typedef struct pattern {
	const char *s;
	size_t pre, run;
} pattern;

static int pattern_parse(const char *s, pattern *p)
{
	const char *h = strchr(s, '#');
	p->s = s;
	if (!h)
		return -1;
	p->pre = (size_t)(h - s);
	p->run = strspn(h, "#");
	return p->run <= 18 && !strchr(h + p->run, '#') ? 0 : -1;
}

/* The number a name carries in the pattern's place, or -1. */
static int64_t pattern_number(const pattern *p, const char *name)
{
	const char *suf = p->s + p->pre + p->run;
	size_t n = strlen(name);
	int64_t v = 0;
	if (n != strlen(p->s) || strncmp(name, p->s, p->pre) != 0 ||
	    strcmp(name + p->pre + p->run, suf) != 0)
		return -1;
	for (size_t i = 0; i < p->run; i++) {
		char ch = name[p->pre + i];
		if (ch < '0' || ch > '9')
			return -1;
		v = v * 10 + (ch - '0');
	}
	return v;
}

/* The pattern's name for number v; caller frees. */
static char *pattern_name(const pattern *p, int64_t v)
{
	return gb_xasprintf("%.*s%0*lld%s", (int)p->pre, p->s, (int)p->run,
	                    (long long)v, p->s + p->pre + p->run);
}

/* The biggest number of an instance in c's zone named by the pattern. */
static int64_t pattern_max(gce_ctx *c, const pattern *p)
{
	size_t n = 0;
	sim_inst **v = sim_inst_list(SIM_GCP, &n);
	int64_t best = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t k;
		if (sim_inst_phase(v[i], c->now) == SIM_PH_GONE ||
		    strcmp(v[i]->zone, c->zone) != 0)
			continue;
		k = pattern_number(p, v[i]->name);
		if (k > best)
			best = k;
	}
	free(v);
	return best;
}

/* The names to make, perInstanceProperties keys first, then the pattern's
 * next numbers up to count.  0, or -1 with the 400 answered. */
static int bulk_names(gce_ctx *c, const json_t *body, int64_t count,
                      gb_strv *names)
{
	const json_t *per = json_object_get(body, "perInstanceProperties");
	const char *pat = json_string_value(json_object_get(body,
	                                                    "namePattern"));
	const char *k;
	json_t *v;
	pattern p;
	if (per && !json_is_object(per)) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field "
		          "'bulkInsertInstanceResource.perInstanceProperties': "
		          "a map of instance name to properties.");
		return -1;
	}
	if (!pat && json_object_size(per) == 0) {
		gce_error(c, 400, "invalid", "global",
		          "Either namePattern or perInstanceProperties must be "
		          "set.");
		return -1;
	}
	if ((int64_t)json_object_size(per) > count ||
	    (!pat && (int64_t)json_object_size(per) != count)) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field "
		          "'bulkInsertInstanceResource.count': '%lld'. "
		          "perInstanceProperties names %zu instances%s.",
		          (long long)count, json_object_size(per),
		          pat ? ", more than count" : " and no namePattern "
		                                      "names the rest");
		return -1;
	}
	json_object_foreach((json_t *)per, k, v) {
		if (!gce_valid_name(k) || !json_is_object(v)) {
			gce_error(c, 400, "invalid", "global",
			          "Invalid value for field "
			          "'bulkInsertInstanceResource."
			          "perInstanceProperties': '%s'. Keys are "
			          "instance names matching regex '(?:[a-z]"
			          "(?:[-a-z0-9]{0,61}[a-z0-9])?)', values "
			          "objects.", k);
			return -1;
		}
		gb_strv_push(names, k);
	}
	if ((int64_t)names->n == count)
		return 0;
	if (pattern_parse(pat, &p) != 0) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field "
		          "'bulkInsertInstanceResource.namePattern': '%s'. It "
		          "holds one run of 1 to 18 '#'.", pat);
		return -1;
	}
	for (int64_t i = pattern_max(c, &p) + 1; (int64_t)names->n < count;
	     i++) {
		char *nm = pattern_name(&p, i);
		int dup = json_object_get(per, nm) != NULL;
		if (!dup && !gce_valid_name(nm)) {
			gce_error(c, 400, "invalid", "global",
			          "Invalid value for field "
			          "'bulkInsertInstanceResource.namePattern': "
			          "'%s' makes the invalid name '%s'.", pat, nm);
			free(nm);
			return -1;
		}
		if (!dup)
			gb_strv_push(names, nm);
		free(nm);
	}
	return 0;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

void gce_bulk_insert(gce_ctx *c)
{
	json_t *body;
	const json_t *props;
	const char *rid;
	gb_strv names = {0};
	int64_t count, min_count, qroom, room, cap, made;
	char *cap_key = NULL, *msg;
	char metric[96];
	double limit;
	gce_props p;
	sim_op *op;
	sim_quse q;
	memset(&q, 0, sizeof(q));
	if (gce_mutation_start(c, &rid) || !(body = gce_body_object(c)))
		return;
	props = json_object_get(body, "instanceProperties");
	if (json_object_get(body, "sourceInstanceTemplate") ||
	    !json_is_object(props)) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field "
		          "'bulkInsertInstanceResource.instanceProperties': "
		          "required (cloudsim does not implement "
		          "sourceInstanceTemplate).");
		goto out;
	}
	if (int64_field(body, "count", 0, &count) != 0 || count < 1 ||
	    count > GCE_BULK_MAX) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field "
		          "'bulkInsertInstanceResource.count': must be from 1 "
		          "to %d.", GCE_BULK_MAX);
		goto out;
	}
	if (int64_field(body, "minCount", count, &min_count) != 0 ||
	    min_count < 1 || min_count > count) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field "
		          "'bulkInsertInstanceResource.minCount': must be from "
		          "1 to count (%lld).", (long long)count);
		goto out;
	}
	if (bulk_names(c, body, count, &names) != 0 ||
	    gce_props_parse(c, props, 1, &p) != 0)
		goto out;
	for (size_t i = 0; i < names.n; i++)
		if (gce_inst_live(c, names.v[i])) {
			gce_error(c, 409, "alreadyExists", "global",
			          "The resource 'projects/%s/zones/%s/instances/"
			          "%s' already exists", c->project, c->zone,
			          names.v[i]);
			goto out;
		}
	/* Up front: what fits under the quota, cloudsim's limit and the
	 * zone's capacity. */
	qroom = gce_quota_room(c, p.t, p.spot, &q, metric, sizeof(metric),
	                       &limit);
	room = sim_g.sc.max_instances - (int64_t)sim_g.ninsts;
	cap = gce_capacity_left(c, &p, &cap_key);
	if (qroom < min_count || room < min_count) {
		sim_count_fault(SIM_GCP, SIM_F_QUOTA);
		msg = qroom < min_count
		              ? gb_xasprintf("Quota '%s' exceeded.  Limit: %.1f "
		                             "in region %s.", metric, limit,
		                             c->region)
		              : gb_xasprintf("cloudsim holds its maximum of %lld "
		                             "instances (limits.max_instances).",
		                             (long long)sim_g.sc.max_instances);
		op = gce_op_failed(c, "bulkInsert", "", "QUOTA_EXCEEDED", 403,
		                   msg);
		free(msg);
	} else if (cap < min_count) {
		sim_count_fault(SIM_GCP, SIM_F_CAPACITY);
		msg = gce_no_room_msg(c);
		op = gce_op_failed(c, "bulkInsert", "",
		                   "ZONE_RESOURCE_POOL_EXHAUSTED", 503, msg);
		free(msg);
	} else {
		made = min64(count, min64(qroom, min64(room, cap)));
		for (int64_t i = 0; i < made; i++)
			gce_inst_make(c, &p, names.v[i], props, cap_key, &q);
		op = gce_op_new(c, "bulkInsert", c->zone, "", "0",
		                c->now + sim_g.sc.pending_ms[SIM_GCP]);
	}
	gce_rid_remember(c, op, rid);
	sim_resp_json(c->resp, 200, gce_op_json(op, c->now));
out:
	free(q.key);
	free(cap_key);
	gb_strv_free(&names);
	json_decref(body);
}
