/*
 * gce_instances.c -- Compute Engine instances: insert (requestId
 * deduplication; QUOTA_EXCEEDED synchronously; a capacity shortage
 * surfaces as ZONE_RESOURCE_POOL_EXHAUSTED in the operation), get,
 * delete, list / aggregatedList with label filters and page tokens, and
 * regions.get with GPU quotas.
 *
 * Machine types come from the GCP catalog: A2/A3/G2... by machine type
 * alone (their GPUs are built in), N1 by machine type plus
 * guestAccelerators (catalog type "n1-standard-8/nvidia-tesla-t4:1").  An
 * N1 type without accelerators and without a catalog entry is accepted
 * as a CPU-only VM priced at 0.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gce.h"

const char *gce_accel_for(const char *gpu)
{
	static const char *const map[][2] = {
		{"H100", "nvidia-h100-80gb"},  {"H100-MEGA", "nvidia-h100-mega-80gb"},
		{"H200", "nvidia-h200-141gb"}, {"A100", "nvidia-tesla-a100"},
		{"A100-80GB", "nvidia-a100-80gb"}, {"L4", "nvidia-l4"},
		{"T4", "nvidia-tesla-t4"},     {"V100", "nvidia-tesla-v100"},
		{"P100", "nvidia-tesla-p100"}, {"P4", "nvidia-tesla-p4"},
		{"B200", "nvidia-b200"},
	};
	for (size_t i = 0; i < GB_ARRAY_LEN(map); i++)
		if (strcmp(map[i][0], gpu) == 0)
			return map[i][1];
	return NULL;
}

/* Last path segment of a URL or partial URL ("zones/z/machineTypes/x"). */
static const char *last_seg(const char *s)
{
	const char *sl = strrchr(s, '/');
	return sl ? sl + 1 : s;
}

/* Zone named in a partial URL ".../zones/Z/...", or NULL. */
static char *url_zone(const char *s)
{
	const char *z = strstr(s, "zones/");
	const char *e;
	if (!z)
		return NULL;
	z += 6;
	e = strchr(z, '/');
	return e ? gb_xstrndup(z, (size_t)(e - z)) : NULL;
}

int gce_valid_name(const char *n)
{
	size_t len = strlen(n);
	if (len < 1 || len > 63 || !islower((unsigned char)n[0]))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!islower((unsigned char)n[i]) &&
		    !isdigit((unsigned char)n[i]) && n[i] != '-')
			return 0;
	return n[len - 1] != '-';
}

static int valid_label(const char *s, int key)
{
	size_t len = strlen(s);
	if (len > 63 || (key && (len < 1 || !islower((unsigned char)s[0]))))
		return 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (!(islower(*p) || isdigit(*p) || *p == '_' || *p == '-' ||
		      *p >= 0x80))
			return 0;
	return 1;
}

/* Finds the catalog entry for (machine type, accelerators) in the zone's
 * region. */
static const sim_ctype *match_type(const char *region, const char *zone,
                                   const char *mt, const char *accel,
                                   int64_t count)
{
	const sim_catalog *cat = &sim_g.cat[SIM_GCP];
	int n1 = strncmp(mt, "n1-", 3) == 0;
	for (size_t i = 0; i < cat->ntypes; i++) {
		const sim_ctype *t = &cat->types[i];
		const sim_creg *r;
		if (strcmp(t->machine, mt) != 0)
			continue;
		if (n1) {
			if (!accel != !t->accel)
				continue;
			if (accel && (strcmp(accel, t->accel) != 0 ||
			              count != t->accel_count))
				continue;
		}
		r = sim_ctype_region(t, region);
		if (r && sim_creg_has_zone(r, zone))
			return t;
	}
	return NULL;
}

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* ------------------------------------------------------------------ */

static sim_op *gce_rid_find(gce_ctx *c, const char *rid)
{
	char *k = gb_xasprintf("%s|%s", c->project, rid);
	sim_op *op = sim_map_get(&sim_g.gce_rids, k);
	free(k);
	return op;
}

static int gce_rid_check(gce_ctx *c, const char **rid)
{
	*rid = sim_req_qarg(c->req, "requestId");
	if (!*rid)
		return 0;
	if (!sim_is_uuid(*rid) ||
	    strcmp(*rid, "00000000-0000-0000-0000-000000000000") == 0) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field 'requestId': '%s'. The "
		          "requestId must be a valid UUID with the exception "
		          "that zero UUID is not supported.", *rid);
		return -1;
	}
	return 0;
}

void gce_rid_remember(gce_ctx *c, sim_op *op, const char *rid)
{
	char *k;
	if (!rid)
		return;
	k = gb_xasprintf("%s|%s", c->project, rid);
	op->request_id = gb_xstrdup(k);
	sim_map_put(&sim_g.gce_rids, k, op);
	free(k);
}

static int gce_check_zone(gce_ctx *c)
{
	const sim_region *r = sim_zone_region(SIM_GCP, c->zone);
	if (!r) {
		gce_error(c, 404, "notFound", "global",
		          "The resource 'projects/%s/zones/%s' was not found",
		          c->project, c->zone);
		return -1;
	}
	c->region = r->name;
	return 0;
}

int gce_mutation_start(gce_ctx *c, const char **rid)
{
	sim_op *op;
	if (gce_rid_check(c, rid) != 0)
		return 1;
	if (*rid && (op = gce_rid_find(c, *rid))) {
		sim_resp_json(c->resp, 200, gce_op_json(op, c->now));
		return 1;
	}
	return gce_check_zone(c) != 0;
}

json_t *gce_body_object(gce_ctx *c)
{
	json_error_t je;
	json_t *body = json_loadb(c->req->body, c->req->body_len, 0, &je);
	if (json_is_object(body))
		return body;
	gce_error(c, 400, "parseError", "global",
	          "Invalid JSON payload received. %s",
	          body ? "Expected an object." : je.text);
	json_decref(body);
	return NULL;
}

int64_t gce_quota_room(gce_ctx *c, const sim_ctype *t, int spot,
                       sim_quse *q, char *metric, size_t cap, double *limit)
{
	const sim_opval *lim;
	int64_t used;
	memset(q, 0, sizeof(*q));
	metric[0] = '\0';
	*limit = 0;
	if (!t || t->gpus <= 0)
		return INT64_MAX;
	sim_gcp_gpu_metric(t->gpu, spot, metric, cap);
	q->key = gb_xasprintf("q|gcp|%s|%s", c->region, metric);
	q->amount = t->gpus;
	lim = sim_optab_find(&sim_g.sc.q_gcp_gpus, metric);
	if (!lim || strcmp(lim->op, "*") == 0)
		return INT64_MAX;
	*limit = lim->a;
	used = sim_count_get(&sim_g.usage, q->key);
	if ((double)used >= lim->a)
		return 0;
	return (int64_t)((lim->a - (double)used) / (double)t->gpus);
}

int gce_props_parse(gce_ctx *c, const json_t *body, int bulk, gce_props *p)
{
	const char *f = bulk ? "instanceProperties" : "resource";
	const char *mt_url, *prov, *action, *ohm, *accel = NULL;
	const json_t *sched, *accs, *labels;
	int64_t count = 0;
	char *mzone = NULL;
	int rc = -1;

	memset(p, 0, sizeof(*p));
	mt_url = jstr(body, "machineType");
	if (bulk) {
		/* InstanceProperties take the machine type's name only */
		if (!mt_url || !*mt_url || strchr(mt_url, '/')) {
			gce_error(c, 400, "invalid", "global",
			          "Invalid value for field '%s.machineType': "
			          "'%s'. Give the machine type's name (for "
			          "example n2-standard-4), not a URL.", f,
			          mt_url ? mt_url : "");
			goto out;
		}
	} else {
		if (!mt_url || !strstr(mt_url, "machineTypes/")) {
			gce_error(c, 400, "invalid", "global",
			          "Invalid value for field '%s.machineType': "
			          "'%s'. Must be a URL to a valid Compute "
			          "resource of the correct type.", f,
			          mt_url ? mt_url : "");
			goto out;
		}
		mzone = url_zone(mt_url);
		if (mzone && strcmp(mzone, c->zone) != 0) {
			gce_error(c, 400, "invalid", "global",
			          "Invalid value for field '%s.machineType': "
			          "'%s'. Machine type zone '%s' does not match "
			          "the instance zone '%s'.", f, mt_url, mzone,
			          c->zone);
			goto out;
		}
	}
	p->mt = last_seg(mt_url);
	accs = json_object_get(body, "guestAccelerators");
	if (json_is_array(accs) && json_array_size(accs) > 0) {
		const json_t *a0 = json_array_get(accs, 0);
		const char *at = jstr(a0, "acceleratorType");
		const json_t *cnt = json_object_get(a0, "acceleratorCount");
		if (!at || !json_is_integer(cnt) ||
		    json_integer_value(cnt) < 1 || json_array_size(accs) > 1) {
			gce_error(c, 400, "invalid", "global",
			          "Invalid value for field "
			          "'%s.guestAccelerators': give one "
			          "{acceleratorType, acceleratorCount >= 1}.", f);
			goto out;
		}
		accel = last_seg(at);
		count = json_integer_value(cnt);
	}
	if (strncmp(p->mt, "n1-", 3) != 0)
		accel = NULL; /* A2/A3/G2 have their GPUs built in */
	p->t = match_type(c->region, c->zone, p->mt, accel, count);
	if (!p->t && (strncmp(p->mt, "n1-", 3) != 0 || accel)) {
		if (accel)
			gce_error(c, 400, "invalid", "global",
			          "Invalid value for field "
			          "'%s.guestAccelerators[0].acceleratorType'"
			          ": '%s'. Accelerator type '%s' with count %lld "
			          "is not available for machine type '%s' in "
			          "zone '%s'.", f, accel, accel, (long long)count,
			          p->mt, c->zone);
		else
			gce_error(c, 400, "invalid", "global",
			          "Invalid value for field '%s.machineType'"
			          ": '%s'. Machine type with name '%s' does not "
			          "exist in zone '%s'.", f, mt_url, p->mt, c->zone);
		goto out;
	}
	if (p->t)
		p->r = sim_ctype_region(p->t, c->region);
	sched = json_object_get(body, "scheduling");
	prov = jstr(sched, "provisioningModel");
	p->spot = (prov && strcmp(prov, "SPOT") == 0) ||
	          json_is_true(json_object_get(sched, "preemptible"));
	if (prov && strcmp(prov, "SPOT") != 0 && strcmp(prov, "STANDARD") != 0) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field "
		          "'%s.scheduling.provisioningModel': '%s'.", f, prov);
		goto out;
	}
	action = jstr(sched, "instanceTerminationAction");
	if (action) {
		if (!p->spot || (strcmp(action, "STOP") != 0 &&
		                 strcmp(action, "DELETE") != 0)) {
			gce_error(c, 400, "invalid", "global",
			          "Invalid value for field "
			          "'%s.scheduling.instanceTerminationAction'"
			          ": '%s'. It is STOP or DELETE, for SPOT "
			          "instances only.", f, action);
			goto out;
		}
		p->term_delete = strcmp(action, "DELETE") == 0;
	}
	ohm = jstr(sched, "onHostMaintenance");
	if (p->t && p->t->gpus > 0 && !p->spot &&
	    (!ohm || strcmp(ohm, "TERMINATE") != 0)) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field "
		          "'%s.scheduling.onHostMaintenance': '%s'. "
		          "Instances with guest accelerators do not support live "
		          "migration.", f, ohm ? ohm : "MIGRATE");
		goto out;
	}
	labels = json_object_get(body, "labels");
	if (labels) {
		const char *k;
		json_t *v;
		if (!json_is_object(labels) || json_object_size(labels) > 64) {
			gce_error(c, 400, "invalid", "global",
			          "Invalid value for field '%s.labels': at "
			          "most 64 labels, as an object.", f);
			goto out;
		}
		json_object_foreach((json_t *)labels, k, v) {
			if (!json_is_string(v) || !valid_label(k, 1) ||
			    !valid_label(json_string_value(v), 0)) {
				gce_error(c, 400, "invalid", "global",
				          "Invalid value for field "
				          "'%s.labels': ''. Label '%s' "
				          "violates format constraints. Keys and "
				          "values can only contain lowercase "
				          "letters, numeric characters, underscores "
				          "and dashes, at most 63 characters; keys "
				          "start with a lowercase letter.", f, k);
				goto out;
			}
		}
		p->labels = labels;
	}
	rc = 0;
out:
	free(mzone);
	return rc;
}

int64_t gce_capacity_left(gce_ctx *c, const gce_props *p, char **cap_key)
{
	int64_t left = sim_capacity_left(SIM_GCP, c->region, c->zone,
	                                 p->t ? p->t->type : p->mt, p->spot,
	                                 cap_key);
	if (p->r && sim_creg_price(p->r, c->zone, p->spot) < 0)
		left = 0; /* no spot market for this type here */
	return left;
}

sim_op *gce_op_failed(gce_ctx *c, const char *kind, const char *target,
                      const char *code, int http, const char *msg)
{
	sim_op *op = gce_op_new(c, kind, c->zone, target, "0",
	                        c->now + sim_g.sc.pending_ms[SIM_GCP] / 2);
	op->err_code = gb_xstrdup(code);
	op->err_msg = gb_xstrdup(msg);
	op->http_err = http;
	return op;
}

char *gce_no_room_msg(gce_ctx *c)
{
	return gb_xasprintf("The zone 'projects/%s/zones/%s' does not have "
	                    "enough resources available to fulfill the "
	                    "request.  Try a different zone, or try again "
	                    "later.", c->project, c->zone);
}

sim_inst *gce_inst_live(gce_ctx *c, const char *name)
{
	char *key = gce_key(c->project, c->zone, name);
	sim_inst *in = sim_inst_find(key);
	free(key);
	if (in && sim_inst_phase(in, c->now) == SIM_PH_GONE) {
		sim_inst_purge(in);
		in = NULL;
	}
	return in;
}

sim_inst *gce_inst_make(gce_ctx *c, const gce_props *p, const char *name,
                        const json_t *body, const char *cap_key,
                        const sim_quse *q)
{
	const sim_ctype *t = p->t;
	char *key = gce_key(c->project, c->zone, name);
	sim_inst *in = sim_inst_new(SIM_GCP, key);
	char id[24];
	free(key);
	snprintf(id, sizeof(id), "%llu",
	         (unsigned long long)(sim_rand_u64() % 9000000000000000000ull +
	                              1000000000000000000ull));
	in->id = gb_xstrdup(id);
	in->name = gb_xstrdup(name);
	in->region = gb_xstrdup(c->region);
	in->zone = gb_xstrdup(c->zone);
	in->type = gb_xstrdup(t ? t->type : p->mt);
	in->gce_machine = gb_xstrdup(p->mt);
	if (t && t->gpus > 0) {
		const char *a = t->accel ? t->accel : gce_accel_for(t->gpu);
		in->gce_accel = gb_xstrdup(a ? a : t->gpu);
	}
	in->gce_accel_count = t ? t->gpus : 0;
	in->gpu = gb_xstrdup(t ? t->gpu : "");
	in->gpus = t ? t->gpus : 0;
	in->vcpus = t ? t->vcpus : 0;
	in->spot = p->spot;
	in->gce_term_delete = p->term_delete;
	in->price = p->r ? sim_creg_price(p->r, c->zone, p->spot) : 0;
	in->gce_body = json_incref((json_t *)body);
	if (p->labels) {
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)p->labels, k, v)
			gb_kvs_set(&in->tags, k, json_string_value(v));
	}
	in->t_create = c->now;
	in->t_visible = c->now;
	in->t_running = c->now + sim_g.sc.pending_ms[SIM_GCP];
	in->cap_key = cap_key ? gb_xstrdup(cap_key) : NULL;
	if (q && q->key) {
		in->quse[0].key = gb_xstrdup(q->key);
		in->quse[0].amount = q->amount;
	}
	sim_inst_allocate(in, c->now);
	return in;
}

void gce_insert(gce_ctx *c)
{
	json_t *body;
	const char *rid, *name;
	char *cap_key = NULL, *msg;
	char metric[96];
	double limit;
	gce_props p;
	sim_inst *in;
	sim_op *op;
	sim_quse q;
	memset(&q, 0, sizeof(q));
	if (gce_mutation_start(c, &rid) || !(body = gce_body_object(c)))
		return;
	name = jstr(body, "name");
	if (!name || !gce_valid_name(name)) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field 'resource.name': '%s'. Must "
		          "be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}"
		          "[a-z0-9])?)'", name ? name : "");
		goto out;
	}
	if (gce_props_parse(c, body, 0, &p) != 0)
		goto out;
	if (gce_inst_live(c, name)) {
		gce_error(c, 409, "alreadyExists", "global",
		          "The resource 'projects/%s/zones/%s/instances/%s' "
		          "already exists", c->project, c->zone, name);
		goto out;
	}
	if (gce_quota_room(c, p.t, p.spot, &q, metric, sizeof(metric),
	                   &limit) < 1) {
		sim_count_fault(SIM_GCP, SIM_F_QUOTA);
		gce_error(c, 403, "QUOTA_EXCEEDED", "usageLimits",
		          "Quota '%s' exceeded.  Limit: %.1f in region %s.",
		          metric, limit, c->region);
		goto out;
	}
	if (sim_state_full()) {
		gce_error(c, 403, "QUOTA_EXCEEDED", "usageLimits",
		          "cloudsim holds its maximum of %lld instances "
		          "(limits.max_instances).",
		          (long long)sim_g.sc.max_instances);
		goto out;
	}
	if (gce_capacity_left(c, &p, &cap_key) < 1) {
		sim_count_fault(SIM_GCP, SIM_F_CAPACITY);
		msg = gce_no_room_msg(c);
		op = gce_op_failed(c, "insert", name,
		                   "ZONE_RESOURCE_POOL_EXHAUSTED", 503, msg);
		free(msg);
		gce_rid_remember(c, op, rid);
		sim_resp_json(c->resp, 200, gce_op_json(op, c->now));
		goto out;
	}
	in = gce_inst_make(c, &p, name, body, cap_key, &q);
	op = gce_op_new(c, "insert", c->zone, name, in->id, in->t_running);
	gce_rid_remember(c, op, rid);
	sim_resp_json(c->resp, 200, gce_op_json(op, c->now));
out:
	free(q.key);
	free(cap_key);
	json_decref(body);
}

static sim_inst *find_inst(gce_ctx *c)
{
	char *key = gce_key(c->project, c->zone, c->name);
	sim_inst *in = sim_inst_find(key);
	free(key);
	if (in && sim_inst_phase(in, c->now) == SIM_PH_GONE)
		return NULL;
	return in;
}

static void not_found(gce_ctx *c)
{
	gce_error(c, 404, "notFound", "global",
	          "The resource 'projects/%s/zones/%s/instances/%s' was not "
	          "found", c->project, c->zone, c->name);
}

void gce_get(gce_ctx *c)
{
	sim_inst *in;
	if (gce_check_zone(c) != 0)
		return;
	in = find_inst(c);
	if (!in) {
		not_found(c);
		return;
	}
	gce_reply(c, gce_instance_json(in, c->now));
}

void gce_delete(gce_ctx *c)
{
	const char *rid;
	sim_inst *in;
	sim_op *op;
	if (gce_mutation_start(c, &rid))
		return;
	in = find_inst(c);
	if (!in) {
		not_found(c);
		return;
	}
	if (!(in->t_stop && !in->keep))
		sim_inst_stop(in, c->now, SIM_END_USER, 0);
	op = gce_op_new(c, "delete", c->zone, in->name, in->id, in->t_gone);
	gce_rid_remember(c, op, rid);
	sim_resp_json(c->resp, 200, gce_op_json(op, c->now));
}

static const char *status_of(const sim_inst *in, int64_t now)
{
	switch (sim_inst_phase(in, now)) {
	case SIM_PH_PENDING:
		return now < in->t_create + (in->t_running - in->t_create) / 2
		               ? "PROVISIONING"
		               : "STAGING";
	case SIM_PH_RUNNING: return "RUNNING";
	case SIM_PH_STOPPING: return "STOPPING";
	case SIM_PH_STOPPED: return "TERMINATED";
	default: return "TERMINATED";
	}
}

json_t *gce_instance_json(const sim_inst *in, int64_t now)
{
	const char *p = sim_g.sc.gcp_project;
	const char *st = status_of(in, now);
	json_t *o = json_object(), *nic, *ac, *sched, *disks, *v;
	const json_t *b = in->gce_body;
	const json_t *bn = json_array_get(json_object_get(b,
	                                                  "networkInterfaces"),
	                                  0);
	char ts[40];
	char *u;
	int running = strcmp(st, "RUNNING") == 0;
	json_object_set_new(o, "kind", json_string("compute#instance"));
	json_object_set_new(o, "id", json_string(in->id));
	json_object_set_new(o, "creationTimestamp",
	                    json_string(sim_time_ms(in->t_create, ts,
	                                            sizeof(ts))));
	json_object_set_new(o, "name", json_string(in->name));
	v = json_object_get(b, "description");
	json_object_set_new(o, "description",
	                    json_string(json_is_string(v) ? json_string_value(v)
	                                                  : ""));
	json_object_set_new(o, "tags",
	                    json_pack("{s:s}", "fingerprint", "42WmSpB8rSM="));
	u = gce_url("projects/%s/zones/%s/machineTypes/%s", p, in->zone,
	            in->gce_machine);
	json_object_set_new(o, "machineType", json_string(u));
	free(u);
	json_object_set_new(o, "status", json_string(st));
	if (in->t_stop && in->end_reason == SIM_END_SPOT)
		json_object_set_new(o, "statusMessage",
		                    json_string("Instance was preempted."));
	u = gce_url("projects/%s/zones/%s", p, in->zone);
	json_object_set_new(o, "zone", json_string(u));
	free(u);
	json_object_set_new(o, "canIpForward", json_false());
	nic = json_object();
	json_object_set_new(nic, "kind", json_string("compute#networkInterface"));
	v = json_object_get(bn, "network");
	u = json_is_string(v) && strncmp(json_string_value(v), "http", 4) == 0
	            ? gb_xstrdup(json_string_value(v))
	            : gce_url("projects/%s/global/networks/%s", p,
	                      json_is_string(v) ? last_seg(json_string_value(v))
	                                        : "default");
	json_object_set_new(nic, "network", json_string(u));
	free(u);
	u = gce_url("projects/%s/regions/%s/subnetworks/default", p, in->region);
	json_object_set_new(nic, "subnetwork", json_string(u));
	free(u);
	json_object_set_new(nic, "networkIP", json_string(in->priv_ip));
	json_object_set_new(nic, "name", json_string("nic0"));
	json_object_set_new(nic, "stackType", json_string("IPV4_ONLY"));
	if (json_array_size(json_object_get(bn, "accessConfigs")) > 0) {
		ac = json_pack("{s:s,s:s,s:s,s:s}", "kind",
		               "compute#accessConfig", "type", "ONE_TO_ONE_NAT",
		               "name", "External NAT", "networkTier", "PREMIUM");
		if (running || strcmp(st, "STAGING") == 0)
			json_object_set_new(ac, "natIP", json_string(in->pub_ip));
		json_object_set_new(nic, "accessConfigs", json_pack("[o]", ac));
	}
	json_object_set_new(o, "networkInterfaces", json_pack("[o]", nic));
	disks = json_array();
	{
		const json_t *d0 = json_array_get(json_object_get(b, "disks"), 0);
		const json_t *ip = json_object_get(d0, "initializeParams");
		const char *sz = jstr(ip, "diskSizeGb");
		char *src = gce_url("projects/%s/zones/%s/disks/%s", p, in->zone,
		                    in->name);
		json_array_append_new(
			disks,
			json_pack("{s:s,s:s,s:s,s:s,s:s,s:i,s:b,s:b,s:s,s:s}",
			          "kind", "compute#attachedDisk", "type",
			          "PERSISTENT", "mode", "READ_WRITE", "source", src,
			          "deviceName", "persistent-disk-0", "index", 0,
			          "boot", 1, "autoDelete", 1, "interface", "SCSI",
			          "diskSizeGb", sz ? sz : "10"));
		free(src);
	}
	json_object_set_new(o, "disks", disks);
	if (in->gce_accel && in->gce_accel_count > 0) {
		u = gce_url("projects/%s/zones/%s/acceleratorTypes/%s", p,
		            in->zone, in->gce_accel);
		json_object_set_new(o, "guestAccelerators",
		                    json_pack("[{s:s,s:i}]", "acceleratorType", u,
		                              "acceleratorCount",
		                              in->gce_accel_count));
		free(u);
	}
	sched = json_pack("{s:s,s:b,s:b,s:s}", "onHostMaintenance",
	                  in->spot || in->gpus > 0 ? "TERMINATE" : "MIGRATE",
	                  "automaticRestart", !in->spot && in->gpus == 0,
	                  "preemptible", in->spot, "provisioningModel",
	                  in->spot ? "SPOT" : "STANDARD");
	if (in->spot)
		json_object_set_new(sched, "instanceTerminationAction",
		                    json_string(in->gce_term_delete ? "DELETE"
		                                                    : "STOP"));
	json_object_set_new(o, "scheduling", sched);
	u = gce_url("projects/%s/zones/%s/instances/%s", p, in->zone,
	            in->name);
	json_object_set_new(o, "selfLink", json_string(u));
	free(u);
	json_object_set_new(o, "cpuPlatform",
	                    json_string(running ? "Intel Sapphire Rapids"
	                                        : "Unknown CPU Platform"));
	{
		json_t *l = json_object();
		for (size_t i = 0; i < in->tags.n; i++)
			json_object_set_new(l, in->tags.keys[i],
			                    json_string(in->tags.vals[i]));
		json_object_set_new(o, "labels", l);
	}
	json_object_set_new(o, "labelFingerprint", json_string("vezUS-42LLM="));
	json_object_set_new(o, "startRestricted", json_false());
	json_object_set_new(o, "deletionProtection", json_false());
	if (running)
		json_object_set_new(o, "lastStartTimestamp",
		                    json_string(sim_time_ms(in->t_running, ts,
		                                            sizeof(ts))));
	if (in->t_stop)
		json_object_set_new(o, "lastStopTimestamp",
		                    json_string(sim_time_ms(in->t_stop, ts,
		                                            sizeof(ts))));
	json_object_set_new(o, "fingerprint", json_string("MdvV4BX5Bbo="));
	return o;
}

static const char *inst_field(const void *obj, const char *field, char *buf,
                              size_t cap)
{
	const sim_inst *in = obj;
	(void)buf;
	(void)cap;
	if (strncmp(field, "labels.", 7) == 0)
		return gb_kvs_get(&in->tags, field + 7);
	if (strcmp(field, "name") == 0)
		return in->name;
	if (strcmp(field, "status") == 0)
		return status_of(in, sim_now());
	if (strcmp(field, "zone") == 0)
		return in->zone;
	if (strcmp(field, "id") == 0)
		return in->id;
	if (strcmp(field, "scheduling.provisioningModel") == 0)
		return in->spot ? "SPOT" : "STANDARD";
	return NULL;
}

static int by_zone_name(const void *a, const void *b)
{
	const sim_inst *x = *(sim_inst *const *)a, *y = *(sim_inst *const *)b;
	int c = strcmp(x->zone, y->zone);
	return c ? c : strcmp(x->name, y->name);
}

void gce_list(gce_ctx *c, int aggregated)
{
	const char *flt = sim_req_qarg(c->req, "filter");
	const char *mr = sim_req_qarg(c->req, "maxResults");
	const char *pt = sim_req_qarg(c->req, "pageToken");
	gce_clause *cl = NULL;
	size_t ncl = 0, n = 0, k = 0, shown = 0;
	sim_inst **v = NULL;
	int64_t maxr = 500;
	char *after = NULL;
	json_t *out = NULL, *items;
	const sim_inst *last = NULL;
	if (!aggregated && gce_check_zone(c) != 0)
		return;
	if (flt && *flt && gce_filter_parse(flt, &cl, &ncl) != 0) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field 'filter': '%s'. Invalid list "
		          "filter expression.", flt);
		return;
	}
	if (mr && (sim_parse_i64(mr, &maxr) != 0 || maxr < 0 || maxr > 500)) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field 'maxResults': '%s'. Must be "
		          "less than or equal to 500", mr);
		goto out;
	}
	if (maxr == 0)
		maxr = 500;
	if (pt && *pt && !(after = gce_token_parse("inst", pt))) {
		gce_error(c, 400, "invalid", "global",
		          "Invalid value for field 'pageToken': '%s'. Invalid "
		          "page token.", pt);
		goto out;
	}
	v = sim_inst_list(SIM_GCP, &n);
	for (size_t i = 0; i < n; i++) {
		if (sim_inst_phase(v[i], c->now) == SIM_PH_GONE)
			continue;
		if (!aggregated && strcmp(v[i]->zone, c->zone) != 0)
			continue;
		if (!gce_filter_match(cl, ncl, inst_field, v[i]))
			continue;
		v[k++] = v[i];
	}
	qsort(v, k, sizeof(*v), by_zone_name);
	out = json_object();
	items = aggregated ? json_object() : json_array();
	for (size_t i = 0; i < k; i++) {
		char pos[256];
		snprintf(pos, sizeof(pos), "%s/%s", v[i]->zone, v[i]->name);
		if (after && strcmp(pos, after) <= 0)
			continue;
		if ((int64_t)shown == maxr) {
			char lp[256];
			char *tok;
			snprintf(lp, sizeof(lp), "%s/%s", last->zone, last->name);
			tok = gce_token_make("inst", lp);
			json_object_set_new(out, "nextPageToken",
			                    json_string(tok));
			free(tok);
			break;
		}
		if (aggregated) {
			char scope[160];
			json_t *z, *arr;
			snprintf(scope, sizeof(scope), "zones/%s", v[i]->zone);
			z = json_object_get(items, scope);
			if (!z) {
				z = json_pack("{s:[]}", "instances");
				json_object_set_new(items, scope, z);
			}
			arr = json_object_get(z, "instances");
			json_array_append_new(arr,
			                      gce_instance_json(v[i], c->now));
		} else {
			json_array_append_new(items,
			                      gce_instance_json(v[i], c->now));
		}
		last = v[i];
		shown++;
	}
	if (aggregated) {
		/* every zone appears; empty ones carry the warning */
		const sim_regions *rs = &sim_g.regions[SIM_GCP];
		for (size_t i = 0; i < rs->n; i++) {
			for (size_t z = 0; z < rs->v[i].zones.n; z++) {
				char scope[160];
				char *msg;
				snprintf(scope, sizeof(scope), "zones/%s",
				         rs->v[i].zones.v[z]);
				if (json_object_get(items, scope))
					continue;
				msg = gb_xasprintf("There are no results for "
				                   "scope '%s' on this page.",
				                   scope);
				json_object_set_new(
					items, scope,
					json_pack("{s:{s:s,s:s,s:[{s:s,s:s}]}}",
					          "warning", "code",
					          "NO_RESULTS_ON_PAGE", "message",
					          msg, "data", "key", "scope",
					          "value", scope));
				free(msg);
			}
		}
		json_object_set_new(out, "kind",
		                    json_string("compute#instanceAggregatedList"));
		{
			char *id = gb_xasprintf("projects/%s/aggregated/instances",
			                        c->project);
			char *sl = gce_url("%s", id);
			json_object_set_new(out, "id", json_string(id));
			json_object_set_new(out, "selfLink", json_string(sl));
			free(id);
			free(sl);
		}
	} else {
		char *sl = gce_url("projects/%s/zones/%s/instances", c->project,
		                   c->zone);
		json_object_set_new(out, "kind",
		                    json_string("compute#instanceList"));
		json_object_set_new(out, "id", json_string(sl));
		json_object_set_new(out, "selfLink", json_string(sl));
		free(sl);
	}
	json_object_set_new(out, "items", items);
	gce_reply(c, out);
	out = NULL;
out:
	json_decref(out);
	free(after);
	free(v);
	gce_filter_free(cl, ncl);
}

void gce_region_get(gce_ctx *c)
{
	const sim_region *r = sim_region_find(SIM_GCP, c->region);
	json_t *zones = json_array(), *quotas = json_array();
	char *u;
	if (!r) {
		json_decref(zones);
		json_decref(quotas);
		gce_error(c, 404, "notFound", "global",
		          "The resource 'projects/%s/regions/%s' was not found",
		          c->project, c->region);
		return;
	}
	for (size_t i = 0; i < r->zones.n; i++) {
		u = gce_url("projects/%s/zones/%s", c->project, r->zones.v[i]);
		json_array_append_new(zones, json_string(u));
		free(u);
	}
	for (size_t i = 0; i < sim_g.sc.q_gcp_gpus.n; i++) {
		const sim_opval *q = &sim_g.sc.q_gcp_gpus.v[i];
		char *k;
		if (strcmp(q->op, "*") == 0)
			continue;
		k = gb_xasprintf("q|gcp|%s|%s", r->name, q->op);
		json_array_append_new(
			quotas, json_pack("{s:s,s:f,s:f}", "metric", q->op,
			                  "limit", q->a, "usage",
			                  (double)sim_count_get(&sim_g.usage, k)));
		free(k);
	}
	u = gce_url("projects/%s/regions/%s", c->project, r->name);
	sim_resp_json(c->resp, 200,
	              json_pack("{s:s,s:s,s:s,s:o,s:o,s:s}", "kind",
	                        "compute#region", "name", r->name, "status",
	                        "UP", "zones", zones, "quotas", quotas,
	                        "selfLink", u));
	free(u);
}
