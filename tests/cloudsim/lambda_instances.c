/*
 * lambda_instances.c -- Lambda's instance endpoints: GET /instance-types
 * (regions_with_capacity_available computed live from the scenario's
 * capacity), POST /instance-operations/launch (quantity, partial launches,
 * capacity and quota refusals), GET /instances[/{id}] and POST
 * /instance-operations/terminate.  Lifecycle: booting for
 * lifecycle.lambda.pending_ms, active, terminating for stopping_ms,
 * terminated (still listed) for terminated_visible_ms, then gone.
 * Facts and sources: drivers/lambda/API.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lambda.h"

#define QUOTA_KEY "quota|lambda|instances"
#define MAX_TAGS 50

static const sim_catalog *cat(void)
{
	return &sim_g.cat[SIM_LAMBDA];
}

static json_t *region_json(const char *name)
{
	char desc[96];
	snprintf(desc, sizeof(desc), "cloudsim %s", name);
	return json_pack("{s:s,s:s}", "name", name, "description", desc);
}

/* price: the region's, or the type's first region's (Lambda prices are
 * the same everywhere, API.md). */
static json_t *type_json(const sim_ctype *t, const sim_creg *r)
{
	double price = r ? r->on_demand : t->nregs ? t->regs[0].on_demand : 0;
	char desc[96];
	snprintf(desc, sizeof(desc), "%dx %s (%d GB)", t->gpus, t->gpu,
	         t->gpu_mem_gb);
	/* storage_gib is not in the catalog: 512 GiB per GPU is cloudsim's */
	return json_pack("{s:s,s:s,s:I,s:{s:i,s:I,s:i,s:i}}", "name", t->type,
	                 "description", desc, "price_cents_per_hour",
	                 (json_int_t)llround(price * 100), "specs", "vcpus",
	                 t->vcpus, "memory_gib", (json_int_t)llround(t->ram_gb),
	                 "storage_gib", 512 * (t->gpus > 0 ? t->gpus : 1),
	                 "gpus", t->gpus);
}

/* The type's catalog entry for region when both exist and it is sold
 * there on demand; NULL otherwise. */
static const sim_creg *sold_in(const sim_ctype *t, const char *region)
{
	const sim_creg *r;
	if (!sim_region_find(SIM_LAMBDA, region))
		return NULL;
	r = sim_ctype_region(t, region);
	return r && r->on_demand >= 0 ? r : NULL;
}

static int64_t capacity_left(const char *region, const char *type,
                             char **key)
{
	return sim_capacity_left(SIM_LAMBDA, region, "", type, 0, key);
}

void lam_instance_types(lam_ctx *c)
{
	json_t *data = json_object();
	for (size_t i = 0; i < cat()->ntypes; i++) {
		const sim_ctype *t = &cat()->types[i];
		json_t *avail = json_array();
		for (size_t k = 0; k < t->nregs; k++) {
			char *key = NULL;
			if (sold_in(t, t->regs[k].region) &&
			    capacity_left(t->regs[k].region, t->type, &key) > 0)
				json_array_append_new(
					avail, region_json(t->regs[k].region));
			free(key);
		}
		json_object_set_new(data, t->type,
		                    json_pack("{s:o,s:o}", "instance_type",
		                              type_json(t, NULL),
		                              "regions_with_capacity_available",
		                              avail));
	}
	sim_resp_json(c->resp, 200, json_pack("{s:o}", "data", data));
}

static json_t *instance_json(const sim_inst *in, int64_t now)
{
	static const char *const status[] = {"booting", "active",
	                                     "terminating", "terminated",
	                                     "terminated", "unhealthy"};
	sim_phase ph = sim_inst_phase(in, now);
	const sim_ctype *t = sim_catalog_type(cat(), in->type);
	int up = now >= in->t_running &&
	         (ph == SIM_PH_RUNNING || ph == SIM_PH_STOPPING);
	json_t *tags = json_array(), *o;
	char host[96];
	for (size_t i = 0; i < in->tags.n; i++)
		json_array_append_new(tags,
		                      json_pack("{s:s,s:s}", "key",
		                                in->tags.keys[i], "value",
		                                in->tags.vals[i]));
	if (in->lambda_host) {
		snprintf(host, sizeof(host), "%s", in->lambda_host);
	} else {
		/* like Lambda's 10-0-8-196.cloud.lambdalabs.com */
		snprintf(host, sizeof(host), "%s.cloudsim.invalid", in->pub_ip);
		for (char *p = host; *p && strncmp(p, ".cloudsim", 9); p++)
			if (*p == '.')
				*p = '-';
	}
	o = json_pack("{s:s,s:o,s:o,s:o,s:s,s:[s],s:[],s:o,s:o,s:o,s:n,s:n,"
	              "s:b,s:o}",
	              "id", in->id, "name",
	              in->name ? json_string(in->name) : json_null(), "ip",
	              up ? json_string(in->pub_ip) : json_null(), "private_ip",
	              up ? json_string(in->priv_ip) : json_null(), "status",
	              status[ph], "ssh_key_names",
	              in->key_name ? in->key_name : "", "file_system_names",
	              "region", region_json(in->region), "instance_type",
	              t ? type_json(t, sim_ctype_region(t, in->region))
	                : json_pack("{s:s}", "name", in->type),
	              "hostname", up ? json_string(host) : json_null(),
	              "jupyter_token", "jupyter_url", "is_reserved", 0, "tags",
	              tags);
	return o;
}

static char *inst_key(const char *id)
{
	return gb_xasprintf("lambda|%s", id);
}

static void not_found(lam_ctx *c, const char *id)
{
	lam_error(c, 404, "global/object-does-not-exist",
	          "List your instances with GET /instances.",
	          "Specified instance does not exist: '%s'.", id);
}

void lam_list(lam_ctx *c)
{
	size_t n = 0;
	sim_inst **v = sim_inst_list(SIM_LAMBDA, &n);
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, instance_json(v[i], c->now));
	free(v);
	sim_resp_json(c->resp, 200, json_pack("{s:o}", "data", arr));
}

void lam_get(lam_ctx *c)
{
	char *key = inst_key(c->id);
	sim_inst *in = sim_inst_find(key);
	free(key);
	if (!in) {
		not_found(c, c->id);
		return;
	}
	sim_resp_json(c->resp, 200,
	              json_pack("{s:o}", "data", instance_json(in, c->now)));
}

/* ------------------------------------------------------------------ */
/* launch                                                              */

typedef struct launch_req {
	const char *region, *type, *key, *name, *host;
	const sim_ctype *t;
	const sim_creg *r;
	int64_t quantity;
	const json_t *tags;  /* array or NULL */
} launch_req;

/* An optional string member: absent or null -> *out NULL; else it must
 * be a string of lo..hi characters. */
static int opt_str(lam_ctx *c, const json_t *body, const char *k, size_t lo,
                   size_t hi, const char **out)
{
	const json_t *v = json_object_get(body, k);
	size_t len;
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	len = json_is_string(v) ? strlen(json_string_value(v)) : 0;
	if (!json_is_string(v) || len < lo || len > hi) {
		lam_bad(c, "Invalid request data: \"%s\" must be a string of "
		        "%zu to %zu characters.", k, lo, hi);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

static int valid_host(const char *h)
{
	for (const char *p = h; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      (*p == '-' && p != h && p[1])))
			return 0;
	return 1;
}

static int parse_tags(lam_ctx *c, const json_t *v, launch_req *lr)
{
	size_t i;
	const json_t *t;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > MAX_TAGS)
		goto bad;
	json_array_foreach(v, i, t) {
		const char *k = json_string_value(json_object_get(t, "key"));
		const char *val = json_string_value(json_object_get(t, "value"));
		if (!json_is_object(t) || json_object_size(t) != 2 || !k ||
		    !*k || strlen(k) > 128 || !val || strlen(val) > 256)
			goto bad;
	}
	lr->tags = v;
	return 0;
bad:
	lam_bad(c, "Invalid request data: \"tags\" must be a list of at most "
	        "%d {\"key\": 1..128 characters, \"value\": 0..256 "
	        "characters} objects.", MAX_TAGS);
	return -1;
}

static int parse_image(lam_ctx *c, const json_t *v)
{
	if (!v || json_is_null(v))
		return 0;
	if (json_is_object(v) && json_object_size(v) == 1 &&
	    (json_is_string(json_object_get(v, "id")) ||
	     json_is_string(json_object_get(v, "family"))))
		return 0;
	lam_bad(c, "Invalid request data: \"image\" must be {\"id\": ...} or "
	        "{\"family\": ...}.");
	return -1;
}

/* Validates the launch body into lr (pointers borrowed from body and the
 * catalog).  0, or -1 with the error answered. */
static int parse_launch(lam_ctx *c, const json_t *body, launch_req *lr)
{
	static const char *const allowed[] = {
		"region_name", "instance_type_name", "ssh_key_names",
		"file_system_names", "quantity", "name", "hostname",
		"user_data", "image", "tags", NULL};
	const json_t *keys = json_object_get(body, "ssh_key_names");
	const json_t *fs = json_object_get(body, "file_system_names");
	const json_t *q = json_object_get(body, "quantity");
	const char *ud;
	memset(lr, 0, sizeof(*lr));
	lr->quantity = 1;
	if (!lam_only_keys(c, body, "the launch request", allowed))
		return -1;
	lr->region = json_string_value(json_object_get(body, "region_name"));
	lr->type = json_string_value(json_object_get(body,
	                                             "instance_type_name"));
	if (!lr->region || !lr->type) {
		lam_bad(c, "Invalid request data: \"region_name\" and "
		        "\"instance_type_name\" are required strings.");
		return -1;
	}
	if (!json_is_array(keys) || json_array_size(keys) != 1 ||
	    !json_is_string(json_array_get(keys, 0))) {
		lam_bad(c, "Invalid request data: \"ssh_key_names\" must list "
		        "exactly one SSH key name.");
		return -1;
	}
	lr->key = json_string_value(json_array_get(keys, 0));
	if (q && (!json_is_integer(q) || json_integer_value(q) < 1 ||
	          json_integer_value(q) > sim_g.sc.lambda_max_quantity)) {
		lam_bad(c, "Invalid request data: \"quantity\" must be an "
		        "integer from 1 to %lld.",
		        (long long)sim_g.sc.lambda_max_quantity);
		return -1;
	}
	if (q)
		lr->quantity = json_integer_value(q);
	if (opt_str(c, body, "name", 1, 64, &lr->name) ||
	    opt_str(c, body, "hostname", 1, 63, &lr->host) ||
	    opt_str(c, body, "user_data", 0, 1 << 20, &ud) ||
	    parse_tags(c, json_object_get(body, "tags"), lr) ||
	    parse_image(c, json_object_get(body, "image")))
		return -1;
	if (lr->host && !valid_host(lr->host)) {
		lam_bad(c, "Invalid request data: \"hostname\" may hold only "
		        "a-z, 0-9 and inner '-'.");
		return -1;
	}
	if (fs && !json_is_null(fs) &&
	    (!json_is_array(fs) || json_array_size(fs) > 1)) {
		lam_bad(c, "Invalid request data: \"file_system_names\" may "
		        "name at most one file system.");
		return -1;
	}
	if (!(lr->t = sim_catalog_type(cat(), lr->type))) {
		lam_bad(c, "Invalid request data: unknown instance type '%s'; "
		        "GET /instance-types lists them.", lr->type);
		return -1;
	}
	if (!sim_region_find(SIM_LAMBDA, lr->region)) {
		lam_bad(c, "Invalid request data: unknown region '%s'.",
		        lr->region);
		return -1;
	}
	if (!(lr->r = sold_in(lr->t, lr->region))) {
		lam_bad(c, "Invalid request data: instance type '%s' is not "
		        "offered in region '%s'.", lr->type, lr->region);
		return -1;
	}
	if (!lam_key_exists(lr->key)) {
		lam_error(c, 404, "global/object-does-not-exist",
		          "Add the key with POST /ssh-keys, or name one that "
		          "GET /ssh-keys lists.",
		          "Specified SSH key '%s' does not exist.", lr->key);
		return -1;
	}
	if (fs && json_array_size(fs) == 1) {
		/* cloudsim has no file systems */
		lam_error(c, 404, "global/object-does-not-exist", NULL,
		          "Specified file system '%s' does not exist.",
		          json_string_value(json_array_get(fs, 0))
		                  ? json_string_value(json_array_get(fs, 0))
		                  : "?");
		return -1;
	}
	return 0;
}

static sim_inst *make_instance(lam_ctx *c, const launch_req *lr,
                               const char *cap_key)
{
	char id[33], *key;
	sim_inst *in;
	size_t i;
	const json_t *t;
	sim_hex_id(id, 32);
	key = inst_key(id);
	in = sim_inst_new(SIM_LAMBDA, key);
	free(key);
	in->id = gb_xstrdup(id);
	in->name = lr->name ? gb_xstrdup(lr->name) : NULL;
	in->region = gb_xstrdup(lr->region);
	in->zone = gb_xstrdup("");
	in->type = gb_xstrdup(lr->type);
	in->gpu = gb_xstrdup(lr->t->gpu);
	in->gpus = lr->t->gpus;
	in->vcpus = lr->t->vcpus;
	in->price = lr->r->on_demand;
	in->key_name = gb_xstrdup(lr->key);
	in->lambda_host = lr->host ? gb_xstrdup(lr->host) : NULL;
	if (lr->tags)
		json_array_foreach(lr->tags, i, t)
			gb_kvs_set(&in->tags,
			           json_string_value(json_object_get(t, "key")),
			           json_string_value(json_object_get(t, "value")));
	in->t_create = c->now;
	in->t_visible = c->now;
	in->t_running = c->now + sim_g.sc.pending_ms[SIM_LAMBDA];
	in->cap_key = gb_xstrdup(cap_key);
	in->quse[0].key = gb_xstrdup(QUOTA_KEY);
	in->quse[0].amount = 1;
	sim_inst_allocate(in, c->now);
	return in;
}

void lam_launch(lam_ctx *c)
{
	json_t *body = lam_body_object(c), *ids;
	launch_req lr;
	char *cap_key = NULL;
	int64_t cap, quota = INT64_MAX, slots, n;
	if (!body)
		return;
	if (parse_launch(c, body, &lr) != 0)
		goto out;
	cap = capacity_left(lr.region, lr.type, &cap_key);
	slots = sim_g.sc.max_instances - (int64_t)sim_g.ninsts;
	if (sim_g.sc.q_lambda_instances >= 0) {
		int64_t used = sim_count_get(&sim_g.usage, QUOTA_KEY);
		quota = sim_g.sc.q_lambda_instances > used
		                ? sim_g.sc.q_lambda_instances - used
		                : 0;
	}
	if (quota < 1) {
		sim_count_fault(SIM_LAMBDA, SIM_F_QUOTA);
		lam_error(c, 400, "global/quota-exceeded",
		          "Contact Support to increase your quota.",
		          "Quota exceeded: the account may run %lld instances "
		          "at once.",
		          (long long)sim_g.sc.q_lambda_instances);
		goto out;
	}
	if (cap < 1 || slots < 1) {
		sim_count_fault(SIM_LAMBDA, SIM_F_CAPACITY);
		lam_error(c, 400, "instance-operations/launch/insufficient-capacity",
		          "Try another region or instance type, or try again "
		          "later.",
		          "Not enough capacity to fulfill launch request.");
		goto out;
	}
	/* fewer than asked may be launched (API.md, "Partial launches") */
	n = lr.quantity;
	if (n > cap)
		n = cap;
	if (n > quota)
		n = quota;
	if (n > slots)
		n = slots;
	ids = json_array();
	for (int64_t i = 0; i < n; i++)
		json_array_append_new(ids,
		                      json_string(make_instance(c, &lr,
		                                                cap_key)->id));
	sim_resp_json(c->resp, 200,
	              json_pack("{s:{s:o}}", "data", "instance_ids", ids));
out:
	free(cap_key);
	json_decref(body);
}

/* ------------------------------------------------------------------ */
/* terminate                                                           */

#define MAX_TERMINATE 1000

void lam_terminate(lam_ctx *c)
{
	static const char *const allowed[] = {"instance_ids", NULL};
	json_t *body = lam_body_object(c), *ids, *done;
	sim_inst **found;
	size_t i, n;
	const json_t *v;
	if (!body)
		return;
	if (!lam_only_keys(c, body, "the terminate request", allowed))
		goto out;
	ids = json_object_get(body, "instance_ids");
	n = json_array_size(ids);
	if (!json_is_array(ids) || n == 0 || n > MAX_TERMINATE) {
		lam_bad(c, "Invalid request data: \"instance_ids\" must list 1 "
		        "to %d instance ids.", MAX_TERMINATE);
		goto out;
	}
	found = gb_xcalloc(n, sizeof(*found));
	json_array_foreach(ids, i, v) {
		char *key;
		if (!json_is_string(v)) {
			lam_bad(c, "Invalid request data: instance_ids[%zu] is "
			        "not a string.", i);
			free(found);
			goto out;
		}
		key = inst_key(json_string_value(v));
		found[i] = sim_inst_find(key);
		free(key);
		if (!found[i]) {
			not_found(c, json_string_value(v));
			free(found);
			goto out;
		}
	}
	done = json_array();
	for (i = 0; i < n; i++) {
		int dup = 0;
		for (size_t j = 0; j < i; j++)
			dup |= found[j] == found[i];
		if (dup)
			continue;
		if (!found[i]->t_stop)
			sim_inst_stop(found[i], c->now, SIM_END_USER, 0);
		json_array_append_new(done, instance_json(found[i], c->now));
	}
	free(found);
	sim_resp_json(c->resp, 200,
	              json_pack("{s:{s:o}}", "data", "terminated_instances",
	                        done));
out:
	json_decref(body);
}
