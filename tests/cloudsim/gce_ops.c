/*
 * gce_ops.c -- zone operations: the Operation resource (PENDING, RUNNING,
 * DONE -- which may carry an error), zoneOperations.get, .wait (returns at
 * DONE or after limits.gcp_wait_max_ms, 2 minutes by default) and .list
 * (filterable by operationType, status, targetId, name).
 */
#include <stdlib.h>
#include <string.h>

#include "gce.h"

sim_op *gce_op_new(gce_ctx *c, const char *kind, const char *zone,
                   const char *target, const char *target_id, int64_t done)
{
	char name[96], a[13], b[9], d[9], nid[24];
	sim_op *op;
	sim_hex_id(a, 12);
	sim_hex_id(b, 8);
	sim_hex_id(d, 8);
	snprintf(name, sizeof(name), "operation-%lld-%s-%s-%s",
	         (long long)c->now, a, b, d);
	op = sim_op_new(SIM_GCP, name);
	snprintf(nid, sizeof(nid), "%llu",
	         (unsigned long long)(sim_rand_u64() % 9000000000000000000ull +
	                              1000000000000000000ull));
	op->numeric_id = gb_xstrdup(nid);
	op->kind = gb_xstrdup(kind);
	op->project = gb_xstrdup(c->project);
	op->zone = gb_xstrdup(zone);
	op->target = gb_xstrdup(target);
	op->target_id = gb_xstrdup(target_id);
	op->user = gb_xstrdup(sim_g.sc.gcp_email);
	op->t_start = c->now;
	op->t_done = done > c->now ? done : c->now;
	op->t_purge = op->t_done + 3600 * 1000;
	return op;
}

static const char *op_status(const sim_op *op, int64_t now)
{
	if (now >= op->t_done)
		return "DONE";
	if (now < op->t_start + (op->t_done - op->t_start) / 5)
		return "PENDING";
	return "RUNNING";
}

json_t *gce_op_json(const sim_op *op, int64_t now)
{
	const char *st = op_status(op, now);
	json_t *o = json_object();
	char ts[40];
	char *u;
	json_object_set_new(o, "kind", json_string("compute#operation"));
	json_object_set_new(o, "id", json_string(op->numeric_id));
	json_object_set_new(o, "name", json_string(op->id));
	u = gce_url("projects/%s/zones/%s", op->project, op->zone);
	json_object_set_new(o, "zone", json_string(u));
	free(u);
	json_object_set_new(o, "operationType", json_string(op->kind));
	if (*op->target) { /* a bulkInsert has no single target */
		u = gce_url("projects/%s/zones/%s/instances/%s", op->project,
		            op->zone, op->target);
		json_object_set_new(o, "targetLink", json_string(u));
		free(u);
		json_object_set_new(o, "targetId", json_string(op->target_id));
	}
	json_object_set_new(o, "status", json_string(st));
	if (strcmp(op->kind, "compute.instances.preempted") == 0)
		json_object_set_new(o, "statusMessage",
		                    json_string("Instance was preempted."));
	json_object_set_new(o, "user", json_string(op->user));
	json_object_set_new(o, "progress",
	                    json_integer(strcmp(st, "DONE") == 0 ? 100 : 0));
	json_object_set_new(o, "insertTime",
	                    json_string(sim_time_ms(op->t_start, ts, sizeof(ts))));
	if (strcmp(st, "PENDING") != 0)
		json_object_set_new(o, "startTime",
		                    json_string(sim_time_ms(op->t_start, ts,
		                                            sizeof(ts))));
	if (strcmp(st, "DONE") == 0) {
		json_object_set_new(o, "endTime",
		                    json_string(sim_time_ms(op->t_done, ts,
		                                            sizeof(ts))));
		if (op->err_code) {
			json_object_set_new(
				o, "error",
				json_pack("{s:[{s:s,s:s}]}", "errors", "code",
				          op->err_code, "message", op->err_msg));
			json_object_set_new(o, "httpErrorStatusCode",
			                    json_integer(op->http_err));
			json_object_set_new(o, "httpErrorMessage",
			                    json_string(op->http_err == 503
			                                        ? "SERVICE UNAVAILABLE"
			                                        : "FORBIDDEN"));
		}
	}
	u = gce_url("projects/%s/zones/%s/operations/%s", op->project,
	            op->zone, op->id);
	json_object_set_new(o, "selfLink", json_string(u));
	free(u);
	return o;
}

static sim_op *find_op(gce_ctx *c)
{
	sim_op *op = sim_op_find(c->opname);
	if (!op || op->cloud != SIM_GCP || strcmp(op->zone, c->zone) != 0 ||
	    strcmp(op->project, c->project) != 0) {
		gce_error(c, 404, "notFound", "global",
		          "The resource 'projects/%s/zones/%s/operations/%s' was "
		          "not found", c->project, c->zone, c->opname);
		return NULL;
	}
	return op;
}

void gce_op_get(gce_ctx *c)
{
	sim_op *op = find_op(c);
	if (op)
		sim_resp_json(c->resp, 200, gce_op_json(op, c->now));
}

void gce_op_wait(gce_ctx *c)
{
	sim_op *op = find_op(c);
	int64_t until = c->now + sim_g.sc.gcp_wait_max_ms;
	char *name;
	if (!op)
		return;
	name = gb_xstrdup(op->id);
	/* Wait without the lock; the operation is looked up again each time
	 * because the ticker may purge it meanwhile. */
	while (!sim_g.stopping) {
		int64_t now = sim_now(), step;
		op = sim_op_find(name);
		if (!op || now >= op->t_done || now >= until)
			break;
		step = op->t_done - now;
		if (until - now < step)
			step = until - now;
		if (step > 50)
			step = 50;
		sim_unlock();
		gb_sleep_ms(step);
		sim_lock();
	}
	c->now = sim_now();
	op = sim_op_find(name);
	free(name);
	if (!op) {
		gce_error(c, 404, "notFound", "global",
		          "The resource 'projects/%s/zones/%s/operations/%s' was "
		          "not found", c->project, c->zone, c->opname);
		return;
	}
	sim_resp_json(c->resp, 200, gce_op_json(op, c->now));
}

static const char *op_field(const void *obj, const char *field, char *buf,
                            size_t cap)
{
	const sim_op *op = obj;
	(void)buf;
	(void)cap;
	if (strcmp(field, "operationType") == 0)
		return op->kind;
	if (strcmp(field, "status") == 0)
		return op_status(op, sim_now());
	if (strcmp(field, "targetId") == 0)
		return op->target_id;
	if (strcmp(field, "name") == 0)
		return op->id;
	return NULL;
}

static int by_seq(const void *a, const void *b)
{
	const sim_op *x = *(sim_op *const *)a, *y = *(sim_op *const *)b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void gce_op_list(gce_ctx *c)
{
	const char *flt = sim_req_qarg(c->req, "filter");
	const char *mr = sim_req_qarg(c->req, "maxResults");
	const char *pt = sim_req_qarg(c->req, "pageToken");
	gce_clause *cl = NULL;
	size_t ncl = 0, k = 0;
	sim_op **v;
	int64_t maxr = 500, start = 0, shown = 0;
	char *pos = NULL;
	json_t *items, *out;
	if (flt && *flt && gce_filter_parse(flt, &cl, &ncl) != 0) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field 'filter': '%s'. Invalid list "
		          "filter expression.", flt);
		return;
	}
	if (mr && (sim_parse_i64(mr, &maxr) != 0 || maxr < 0 || maxr > 500)) {
		gce_filter_free(cl, ncl);
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field 'maxResults': '%s'.", mr);
		return;
	}
	if (maxr == 0)
		maxr = 500;
	if (pt && *pt) {
		pos = gce_token_parse("op", pt);
		if (!pos || sim_parse_i64(pos, &start) != 0) {
			free(pos);
			gce_filter_free(cl, ncl);
			gce_error(c, 400, "invalid", "global",
			          "Invalid value for field 'pageToken': '%s'.",
			          pt);
			return;
		}
		free(pos);
	}
	v = gb_xcalloc(sim_g.ops.n + 1, sizeof(*v));
	for (size_t i = 0; i < sim_g.ops.cap; i++) {
		sim_op *op = sim_map_slot(&sim_g.ops, i, NULL);
		if (op && op->cloud == SIM_GCP &&
		    strcmp(op->zone, c->zone) == 0 &&
		    strcmp(op->project, c->project) == 0 && op->seq > start &&
		    gce_filter_match(cl, ncl, op_field, op))
			v[k++] = op;
	}
	qsort(v, k, sizeof(*v), by_seq);
	items = json_array();
	out = json_object();
	for (size_t i = 0; i < k; i++) {
		if (shown == maxr) {
			char p[32], *tok;
			snprintf(p, sizeof(p), "%lld", (long long)v[i - 1]->seq);
			tok = gce_token_make("op", p);
			json_object_set_new(out, "nextPageToken",
			                    json_string(tok));
			free(tok);
			break;
		}
		json_array_append_new(items, gce_op_json(v[i], c->now));
		shown++;
	}
	json_object_set_new(out, "kind", json_string("compute#operationList"));
	json_object_set_new(out, "items", items);
	sim_resp_json(c->resp, 200, out);
	free(v);
	gce_filter_free(cl, ncl);
}
