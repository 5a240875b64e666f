/* api_agent.c -- the instance agent's two endpoints (README, "The
 * instance agent"):
 *   POST /v1/agent/register {"instance": "<pool>-<N>", "bootstrap_token"}
 *     the one-time token the engine put in the instance's user data
 *     (engine_agent.c), exchanged once for an instance credential;
 *   POST /v1/agent/report {"instance", "gpus": [...]} with
 *     "Authorization: Bearer <credential>": the GPUs NVML sees.  A report
 *     is the instance's heartbeat, and makes it ready when the GPUs are
 *     the offer's (count, model, memory).
 * The credential reports for its own instance only, and only while that
 * instance is live: no other endpoint accepts it. */
#include "api.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

#define CRED_PREFIX "gba_"
/* register attempts and reports an instance may send a minute */
#define AGENT_PER_MINUTE 60
#define MAX_GPUS 16

/* 1 when admitted; else the 429 is set. */
static int admit(gb_api_req *r, const char *who)
{
	char key[200];
	int retry = 0;
	if (!r->d->srv)
		return 1;
	snprintf(key, sizeof(key), "agent:%s", who);
	if (gb_api_token_admit(gb_api_srv_limits(r->d), key, AGENT_PER_MINUTE,
	                       &retry))
		return 1;
	gb_api_error(r, 429, "RateLimited", "the agent of %s may send %d "
	             "requests a minute; retry in %d s", who, AGENT_PER_MINUTE,
	             retry);
	r->retry_after_s = retry;
	return 0;
}

/* "<pool>-<N>": the pool into pool[cap] and N; 0, or -1. */
static int split_name(const char *name, char *pool, size_t cap, int *index)
{
	const char *dash = strrchr(name, '-');
	char *end;
	long n;
	if (!dash || dash == name || (size_t)(dash - name) >= cap ||
	    !isdigit((unsigned char)dash[1]))
		return -1;
	n = strtol(dash + 1, &end, 10);
	if (*end || n < 0 || n > 1000000)
		return -1;
	memcpy(pool, name, (size_t)(dash - name));
	pool[dash - name] = '\0';
	*index = (int)n;
	return 0;
}

/* The live instance <pool>-<index>: 0 with *out, 1 none, -1 error. */
static int live_instance(gb_store *s, const char *pool, int index,
                         gb_inst_row *out)
{
	gb_inst_row *rows = NULL;
	size_t n = 0;
	int rc = 1;
	if (gb_store_inst_list(s, pool, 1, &rows, &n) != 0)
		return -1;
	for (size_t i = 0; i < n && rc; i++) {
		if (rows[i].name_index != index ||
		    strcmp(rows[i].state, "terminating") == 0 ||
		    strcmp(rows[i].state, "terminated") == 0 ||
		    rows[i].terminate_requested_ms)
			continue;
		*out = rows[i];
		memset(&rows[i], 0, sizeof(rows[i]));
		rc = 0;
	}
	gb_inst_list_free(rows, n);
	return rc;
}

/* Clouds whose metadata service the agent reads (agent config
 * "metadata", engine_agent.c): registration must name the instance. */
static int needs_identity(const char *cloud)
{
	return strcmp(cloud, "aws") == 0 || strcmp(cloud, "gcp") == 0 ||
	       strcmp(cloud, "azure") == 0;
}

static const char *str_field(json_t *j, const char *key, size_t max)
{
	const char *s = json_string_value(json_object_get(j, key));
	return s && *s && strlen(s) <= max ? s : NULL;
}

static void store_failed(gb_api_req *r)
{
	gb_api_error(r, 503, "StoreError", "%s; retry",
	             gb_store_errmsg(r->d->store));
	r->retry_after_s = 5;
}

static void refused(gb_api_req *r, const char *pool, int index)
{
	gb_api_error(r, 401, "Unauthenticated", "bootstrap token refused for "
	             "%s-%d: it is not this instance's, was already "
	             "exchanged, or expired (agent.bootstrap_ttl); a new "
	             "instance gets a new one", pool, index);
}

void gb_api_agent_register(gb_api_req *r)
{
	json_t *j;
	const char *name, *tok, *pid_s;
	char pool[160], boot[65], cred[80], sha[65], pid[200] = "";
	char minted[200];
	int index, rc;
	gb_inst_row inst;
	if (!(j = gb_api_body_json(r)))
		return;
	name = str_field(j, "instance", 150);
	tok = str_field(j, "bootstrap_token", 128);
	if (!name || !tok || split_name(name, pool, sizeof(pool), &index) != 0) {
		json_decref(j);
		gb_api_error(r, 400, "BadRequest", "body must be {\"instance\": "
		             "\"<pool>-<N>\", \"bootstrap_token\": \"...\"} as "
		             "the broker wrote them into the instance's agent "
		             "config");
		return;
	}
	snprintf(r->target, sizeof(r->target), "%s", name);
	if (!admit(r, name)) {
		json_decref(j);
		return;
	}
	gb_sha256_hex(tok, strlen(tok), boot);
	if ((pid_s = str_field(j, "provider_id", 190)))
		snprintf(pid, sizeof(pid), "%s", pid_s);
	json_decref(j); /* name and tok were its strings */
	/* the name the engine minted the token for (a driver may record
	 * another spelling: GCE lowercases); the token first: without one,
	 * nothing is said about which instances exist */
	snprintf(minted, sizeof(minted), "%s-%d", pool, index);
	rc = gb_store_agent_token_open(r->d->store, minted, boot, gb_now_ms());
	if (rc <= 0) {
		rc < 0 ? store_failed(r) : refused(r, pool, index);
		return;
	}
	rc = live_instance(r->d->store, pool, index, &inst);
	if (rc < 0) {
		store_failed(r);
		return;
	}
	if (rc == 1) {
		/* also while the create's answer is not recorded yet: the
		 * agent retries */
		gb_api_error(r, 404, "NotFound", "no live instance %s-%d (yet): "
		             "the agent retries until the broker has recorded "
		             "it", pool, index);
		return;
	}
	if (needs_identity(inst.cloud) &&
	    (!inst.provider_id || strcmp(pid, inst.provider_id) != 0)) {
		/* the token is good only inside the instance it was minted
		 * for: its metadata service names it */
		gb_api_error(r, 401, "Unauthenticated", "instance %s-%d: the "
		             "agent's metadata service names %s, not this "
		             "instance; a bootstrap token works only on its own "
		             "instance", pool, index,
		             *pid ? "another instance" : "no instance");
		gb_inst_row_free(&inst);
		return;
	}
	if (gb_random_hex(cred + strlen(CRED_PREFIX), 32) != 0) {
		gb_inst_row_free(&inst);
		gb_api_error(r, 500, "Internal", "no random bytes for a "
		             "credential; retry");
		return;
	}
	memcpy(cred, CRED_PREFIX, strlen(CRED_PREFIX));
	gb_sha256_hex(cred, strlen(cred), sha);
	rc = gb_store_agent_register(r->d->store, minted, boot, inst.id, sha,
	                             gb_now_ms());
	if (rc != 0) {
		gb_inst_row_free(&inst);
		memset(cred, 0, sizeof(cred));
		rc < 0 ? store_failed(r) : refused(r, pool, index);
		return;
	}
	if (gb_store_event(r->d->store, inst.pool, inst.name, "agent",
	                   "agent of %s registered",
	                   inst.name ? inst.name : "?") != 0)
		gb_log(GB_LOG_ERROR, "agent", "%s: event not recorded: %s",
		       inst.name ? inst.name : "?", gb_store_errmsg(r->d->store));
	r->resp = json_pack("{s:s, s:s, s:I}", "instance",
	                    inst.name ? inst.name : "", "credential", cred,
	                    "interval", (json_int_t)r->d->cfg->agent_interval_s);
	memset(cred, 0, sizeof(cred));
	r->status = 200;
	gb_inst_row_free(&inst);
}

/* One word of an NVML name equal to model (case aside): "NVIDIA H100
 * 80GB HBM3" and "NVIDIA A100-SXM4-80GB" are H100 and A100. */
static int model_matches(const char *nvml, const char *model)
{
	size_t m = strlen(model);
	const char *p = nvml;
	if (!m)
		return 1;
	while (*p) {
		size_t w = strcspn(p, " -_/");
		if (w == m && strncasecmp(p, model, m) == 0)
			return 1;
		p += w;
		p += strspn(p, " -_/");
	}
	return 0;
}

/* The offer's GPU memory per GPU in GiB, 0 unknown. */
static int offer_memory_gb(gb_daemon *d, const gb_inst_row *in)
{
	const gb_catalog *c = d->app.rt.cat;
	size_t n = c ? gb_catalog_count(c) : 0;
	for (size_t i = 0; i < n; i++) {
		const gb_coffer *o = gb_catalog_at(c, i);
		if (strcmp(o->cloud, in->cloud) == 0 &&
		    strcmp(o->region, in->region) == 0 &&
		    strcmp(o->instance_type, in->instance_type) == 0)
			return o->gpu_memory_gb;
	}
	return 0;
}

/* Checks the report's gpus against the offer: 1 ready, 0 not (why in
 * why[cap]), -1 malformed (why says what). *util: the busiest GPU. */
static int check_gpus(gb_daemon *d, const gb_inst_row *in, json_t *gpus,
                      double *util, char *why, size_t cap)
{
	size_t i, n = json_array_size(gpus);
	json_t *g;
	int mem_gb = offer_memory_gb(d, in), ok = 1;
	*util = 0;
	why[0] = '\0';
	if (!json_is_array(gpus) || n > MAX_GPUS) {
		snprintf(why, cap, "\"gpus\" must be an array of at most %d "
		         "GPUs", MAX_GPUS);
		return -1;
	}
	json_array_foreach(gpus, i, g) {
		const char *name = json_string_value(json_object_get(g, "name"));
		json_t *u = json_object_get(g, "util"),
		       *t = json_object_get(g, "memory_total"),
		       *used = json_object_get(g, "memory_used");
		if (!name || strlen(name) > 96 || !json_is_number(u) ||
		    json_number_value(u) < 0 || json_number_value(u) > 1 ||
		    !json_is_integer(t) || json_integer_value(t) < 0 ||
		    (used && (!json_is_integer(used) ||
		              json_integer_value(used) < 0))) {
			snprintf(why, cap, "gpus[%zu] must be {\"name\": S, "
			         "\"memory_total\": BYTES, \"memory_used\": "
			         "BYTES, \"util\": 0..1}", i);
			return -1;
		}
		if (json_number_value(u) > *util)
			*util = json_number_value(u);
		if (ok && !model_matches(name, in->gpu_model ? in->gpu_model
		                                             : "")) {
			snprintf(why, cap, "GPU %zu is %s, the offer's is %s", i,
			         name, in->gpu_model);
			ok = 0;
		}
		/* NVML counts a little less than the card's nominal size */
		if (ok && mem_gb &&
		    (double)json_integer_value(t) <
		            0.9 * (double)mem_gb * 1073741824.0) {
			snprintf(why, cap, "GPU %zu has %lld MiB, the offer's "
			         "%d GB", i,
			         (long long)(json_integer_value(t) >> 20), mem_gb);
			ok = 0;
		}
	}
	if (ok && (int)n != in->gpu_count) {
		snprintf(why, cap, "the agent sees %zu GPU%s, the offer has %d",
		         n, n == 1 ? "" : "s", in->gpu_count);
		ok = 0;
	}
	return ok;
}

void gb_api_agent_report(gb_api_req *r)
{
	const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                            "Authorization");
	char sha[65], name[160], why[300], who[40];
	int64_t inst_id = 0;
	gb_inst_row inst;
	json_t *j, *err, *rc_j;
	const char *claimed;
	double util;
	int rc, ready, before = 0;
	char *text;
	if (!h || strncasecmp(h, "Bearer " CRED_PREFIX, 7 + 4) != 0) {
		gb_api_error(r, 401, "Unauthenticated", "an agent report needs "
		             "'Authorization: Bearer <instance credential>' (from "
		             "POST /v1/agent/register)");
		return;
	}
	gb_sha256_hex(h + 7, strlen(h + 7), sha);
	rc = gb_store_agent_auth(r->d->store, sha, &inst_id, name, sizeof(name),
	                         &before);
	if (rc < 0) {
		store_failed(r);
		return;
	}
	if (rc == 1) {
		gb_api_error(r, 401, "Unauthenticated", "the instance credential "
		             "is not valid: revoked, or its instance is gone");
		return;
	}
	snprintf(who, sizeof(who), "instance %lld", (long long)inst_id);
	if (!admit(r, who))
		return;
	if (!(j = gb_api_body_json(r)))
		return;
	if (gb_store_inst_get(r->d->store, inst_id, &inst) != 0) {
		json_decref(j);
		gb_api_error(r, 401, "Unauthenticated", "the instance credential "
		             "is not valid: its instance is gone");
		return;
	}
	snprintf(r->target, sizeof(r->target), "%s", inst.name ? inst.name : "");
	claimed = json_string_value(json_object_get(j, "instance"));
	if (!claimed || (strcmp(claimed, name) != 0 &&
	                 (!inst.name || strcmp(claimed, inst.name) != 0))) {
		gb_api_error(r, 403, "Forbidden", "this credential reports for "
		             "instance %s only", inst.name ? inst.name : name);
		goto out;
	}
	err = json_object_get(j, "error");
	rc_j = json_object_get(j, "ready_command_exit");
	if ((err && (!json_is_string(err) ||
	             strlen(json_string_value(err)) > 1024)) ||
	    (rc_j && !json_is_integer(rc_j))) {
		gb_api_error(r, 400, "BadRequest", "\"error\" must be a string "
		             "of at most 1024 bytes and \"ready_command_exit\" an "
		             "integer");
		goto out;
	}
	ready = check_gpus(r->d, &inst, json_object_get(j, "gpus"), &util, why,
	                   sizeof(why));
	if (ready < 0) {
		gb_api_error(r, 400, "BadRequest", "%s", why);
		goto out;
	}
	if (ready && err) {
		snprintf(why, sizeof(why), "the agent says: %s",
		         json_string_value(err));
		ready = 0;
	}
	if (ready && rc_j && json_integer_value(rc_j) != 0) {
		snprintf(why, sizeof(why), "the readiness command exited %lld",
		         (long long)json_integer_value(rc_j));
		ready = 0;
	}
	text = json_dumps(j, JSON_COMPACT);
	if (gb_store_agent_report(r->d->store, inst.id, gb_now_ms(), text,
	                          ready) != 0) {
		free(text);
		store_failed(r);
		goto out;
	}
	free(text);
	if ((ready && !before &&
	     gb_store_event(r->d->store, inst.pool, inst.name, "ready",
	                    "instance %s is ready: its agent sees the offer's "
	                    "%d %s GPU%s", inst.name ? inst.name : "?",
	                    inst.gpu_count, inst.gpu_model ? inst.gpu_model : "",
	                    inst.gpu_count == 1 ? "" : "s") != 0) ||
	    (!ready && before &&
	     gb_store_event(r->d->store, inst.pool, inst.name, "not-ready",
	                    "instance %s is no longer ready: %s",
	                    inst.name ? inst.name : "?", why) != 0))
		gb_log(GB_LOG_ERROR, "agent", "%s: event not recorded: %s",
		       inst.name ? inst.name : "?", gb_store_errmsg(r->d->store));
	if (gb_api_keep_heartbeat(r, &inst, util) != 0)
		goto out;
	if (ready != before)
		gb_api_wake(r->d, inst.pool);
	r->resp = json_pack("{s:s, s:b, s:f}", "instance",
	                    inst.name ? inst.name : "", "ready", ready,
	                    "gpu_util", util);
	if (!ready)
		json_object_set_new(r->resp, "why", json_string(why));
	r->status = 200;
out:
	json_decref(j);
	gb_inst_row_free(&inst);
}

/* GET /v1/agent/package: agent.package as it is, for the bootstrap's
 * curl (its SHA-256 is pinned in the instance's user data, so it needs
 * no token); 404 when none is configured. */
void gb_api_agent_package(gb_api_req *r)
{
	const char *path = r->d->cfg->agent_package;
	char *data = NULL;
	size_t len = 0, n = path ? strlen(path) : 0;
	if (!path) {
		gb_api_error(r, 404, "NotFound", "this broker serves no agent "
		             "package (agent.package): the image carries the "
		             "agent");
		return;
	}
	if (gb_read_file(path, GB_AGENT_PACKAGE_MAX, &data, &len) != 0) {
		gb_log(GB_LOG_ERROR, "api", "agent.package %s: %s", path,
		       strerror(errno));
		gb_api_error(r, 503, "Unavailable", "the agent package cannot "
		             "be read (the daemon's log says why); retry");
		r->retry_after_s = 30;
		return;
	}
	r->text = data;
	r->text_len = len;
	r->content_type = n > 4 && strcmp(path + n - 4, ".deb") == 0
	                          ? "application/vnd.debian.binary-package"
	                          : "application/octet-stream";
	r->status = 200;
}
