/*
 * control.c -- the control API under /_sim/ on the control listener
 * (loopback, no auth):
 *   GET  /_sim/health        {"ok":true}
 *   GET  /_sim/credentials   test credentials per cloud
 *   GET  /_sim/env           shell `export` lines for gpubroker's drivers
 *   GET  /_sim/instances     every instance ([?live=1] [&cloud=aws])
 *   GET  /_sim/azure/nics    Azure network interfaces (leftovers show)
 *   GET  /_sim/bill          instance-seconds x price, per instance + total
 *   GET  /_sim/counters      calls per cloud/operation, faults per kind
 *   GET  /_sim/scenario      the effective runtime settings
 *   POST /_sim/scenario      change runtime keys (JSON object)
 *   POST /_sim/reclaim       {"ids":[...]} | {"cloud","pool","fraction"}
 *   POST /_sim/reset         drop instances, operations, counters, bill
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* Single-quotes v when it has characters the shell would interpret. */
static void shell_value(gb_buf *b, const char *v)
{
	int plain = *v != '\0';
	for (const char *p = v; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || strchr("_./:@%+=,-", c)))
			plain = 0;
	}
	if (plain) {
		gb_buf_puts(b, v);
		return;
	}
	gb_buf_putc(b, '\'');
	for (const char *p = v; *p; p++) {
		if (*p == '\'')
			gb_buf_puts(b, "'\\''");
		else
			gb_buf_putc(b, *p);
	}
	gb_buf_putc(b, '\'');
}

static void export(gb_buf *b, const char *name, const char *v)
{
	gb_buf_printf(b, "export %s=", name);
	shell_value(b, v);
	gb_buf_putc(b, '\n');
}

static const char *aws_region(void)
{
	if (sim_region_find(SIM_AWS, "us-east-1") || !sim_g.regions[SIM_AWS].n)
		return "us-east-1";
	return sim_g.regions[SIM_AWS].v[0].name;
}

static char *subnet_id(void)
{
	return gb_xasprintf("/subscriptions/%s/resourceGroups/%s/providers/"
	                    "Microsoft.Network/virtualNetworks/sim-vnet/"
	                    "subnets/default", sim_g.sc.az_sub, sim_g.sc.az_rg);
}

static void env(sim_resp *resp)
{
	gb_buf b = GB_BUF_INIT;
	char *s;
	export(&b, "AWS_ENDPOINT_URL_EC2", sim_g.url[0]);
	export(&b, "AWS_ACCESS_KEY_ID", sim_g.sc.aws_key_id);
	export(&b, "AWS_SECRET_ACCESS_KEY", sim_g.sc.aws_secret);
	export(&b, "AWS_REGION", aws_region());
	export(&b, "AZURE_AUTHORITY_HOST", sim_g.url[1]);
	export(&b, "AZURE_ARM_ENDPOINT", sim_g.url[1]);
	export(&b, "AZURE_TENANT_ID", sim_g.sc.az_tenant);
	export(&b, "AZURE_CLIENT_ID", sim_g.sc.az_client);
	export(&b, "AZURE_CLIENT_SECRET", sim_g.sc.az_secret);
	export(&b, "AZURE_SUBSCRIPTION_ID", sim_g.sc.az_sub);
	export(&b, "AZURE_RESOURCE_GROUP", sim_g.sc.az_rg);
	s = subnet_id();
	export(&b, "AZURE_SUBNET_ID", s);
	free(s);
	s = gb_xasprintf("%s/api/retail/prices", sim_g.url[1]);
	export(&b, "AZURE_PRICES_ENDPOINT", s);
	free(s);
	export(&b, "GOOGLE_APPLICATION_CREDENTIALS", sim_g.gcp_key_path);
	export(&b, "GOOGLE_CLOUD_PROJECT", sim_g.sc.gcp_project);
	s = gb_xasprintf("%s/compute/v1/", sim_g.url[2]);
	export(&b, "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", s);
	free(s);
	s = gb_xasprintf("%s/cloudbilling/v1", sim_g.url[2]);
	export(&b, "GCP_BILLING_ENDPOINT", s);
	free(s);
	s = gb_xasprintf("%s/api/v1", sim_g.url[5]);
	export(&b, "LAMBDA_ENDPOINT_URL", s);
	free(s);
	export(&b, "LAMBDA_API_KEY", sim_g.sc.lambda_key);
	export(&b, "LAMBDA_SSH_KEY_NAME", sim_g.sc.lambda_ssh_keys.v[0]);
	export(&b, "GPUBROKER_CLOUDSIM", sim_g.url[3]);
	sim_resp_text(resp, 200, "text/plain; charset=utf-8", gb_buf_str(&b));
	gb_buf_free(&b);
}

static void credentials(sim_resp *resp)
{
	json_t *key = json_loads(sim_g.gcp_key_json, 0, NULL);
	char *s = subnet_id();
	json_t *o = json_pack(
		"{s:{s:s,s:s,s:s,s:s},s:{s:s,s:s,s:s,s:s,s:s,s:s},s:o,s:s}",
		"aws", "access_key_id", sim_g.sc.aws_key_id, "secret_access_key",
		sim_g.sc.aws_secret, "account_id", sim_g.sc.aws_account,
		"region", aws_region(), "azure", "tenant_id", sim_g.sc.az_tenant,
		"client_id", sim_g.sc.az_client, "client_secret",
		sim_g.sc.az_secret, "subscription_id", sim_g.sc.az_sub,
		"resource_group", sim_g.sc.az_rg, "subnet_id", s, "gcp",
		key ? key : json_object(), "gcp_key_file", sim_g.gcp_key_path);
	json_object_set_new(o, "lambda",
	                    json_pack("{s:s,s:s}", "api_key", sim_g.sc.lambda_key,
	                              "ssh_key_name",
	                              sim_g.sc.lambda_ssh_keys.v[0]));
	free(s);
	sim_resp_json(resp, 200, o);
}

static const char *provider_state(const sim_inst *in, sim_phase ph,
                                  char *buf, size_t cap)
{
	switch (in->cloud) {
	case SIM_AWS: {
		static const char *const n[] = {"pending", "running",
		                                "shutting-down", "stopped",
		                                "terminated", "terminated"};
		return n[ph];
	}
	case SIM_AZURE: {
		static const char *const n[] = {
			"Creating/PowerState/starting",
			"Succeeded/PowerState/running",
			"Deleting/PowerState/stopping",
			"Succeeded/PowerState/deallocated", "Deleted",
			"Failed"};
		if (ph == SIM_PH_STOPPING && in->keep)
			return "Succeeded/PowerState/deallocating";
		return n[ph];
	}
	case SIM_LAMBDA: {
		static const char *const n[] = {"booting", "active",
		                                "terminating", "terminated",
		                                "terminated", "unhealthy"};
		return n[ph];
	}
	default: {
		static const char *const n[] = {"PROVISIONING", "RUNNING",
		                                "STOPPING", "TERMINATED",
		                                "DELETED", "FAILED"};
		snprintf(buf, cap, "%s", n[ph]);
		return buf;
	}
	}
}

/* The user data a GCE instance was created with (its metadata item
 * user-data or startup-script, in an insert body or a bulkInsert's
 * instanceProperties), or NULL: borrowed from the body. */
const char *sim_gce_user_data(const json_t *body)
{
	const json_t *md = json_object_get(body, "metadata"), *it;
	size_t i;
	if (!md)
		md = json_object_get(json_object_get(body, "instanceProperties"),
		                     "metadata");
	json_array_foreach(json_object_get(md, "items"), i, it) {
		const char *k = json_string_value(json_object_get(it, "key"));
		if (k && (strcmp(k, "user-data") == 0 ||
		          strcmp(k, "startup-script") == 0))
			return json_string_value(json_object_get(it, "value"));
	}
	return NULL;
}

static void instances(sim_req *req, sim_resp *resp)
{
	const char *live_s = sim_req_qarg(req, "live");
	const char *cloud_s = sim_req_qarg(req, "cloud");
	int live = live_s && (strcmp(live_s, "1") == 0 ||
	                      strcmp(live_s, "true") == 0);
	int cloud = cloud_s ? sim_cloud_parse(cloud_s) : -1;
	size_t n = 0;
	sim_inst **v;
	json_t *arr = json_array();
	int64_t now;
	if (cloud_s && cloud < 0) {
		json_decref(arr);
		sim_resp_json(resp, 400,
		              json_pack("{s:s}", "error",
		                        "cloud must be aws, azure, gcp or "
		                        "lambda"));
		return;
	}
	now = sim_now();
	v = sim_inst_list(cloud, &n);
	for (size_t i = 0; i < n; i++) {
		const sim_inst *in = v[i];
		sim_phase ph = sim_inst_phase(in, now);
		json_t *o, *tags;
		char ts[40], buf[32];
		if (live && ph == SIM_PH_GONE)
			continue;
		tags = json_object();
		for (size_t t = 0; t < in->tags.n; t++)
			json_object_set_new(tags, in->tags.keys[t],
			                    json_string(in->tags.vals[t]));
		o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:f}",
		              "cloud", sim_cloud_name(in->cloud), "id",
		              in->cloud == SIM_AWS || in->cloud == SIM_LAMBDA
		                      ? in->id
		                      : in->name,
		              "name", in->name ? in->name : "", "region", in->region, "zone",
		              in->zone ? in->zone : "", "type", in->type,
		              "capacity", in->spot ? "spot" : "on-demand",
		              "state", sim_phase_name(ph), "provider_state",
		              provider_state(in, ph, buf, sizeof(buf)), "tags",
		              tags, "price_per_hour", in->price);
		if (in->cloud == SIM_AZURE || in->cloud == SIM_GCP)
			json_object_set_new(o, "resource_id", json_string(in->id));
		if (in->cloud == SIM_GCP && sim_gce_user_data(in->gce_body))
			/* what the instance would boot with (an agent pool's
			 * bootstrap: tests/integration/agent.sh) */
			json_object_set_new(o, "user_data", json_string(
			        sim_gce_user_data(in->gce_body)));
		json_object_set_new(o, "created",
		                    json_string(sim_time_ms(in->t_create, ts,
		                                            sizeof(ts))));
		json_object_set_new(o, "terminated",
		                    in->t_stop ? json_string(sim_time_ms(
		                                     in->t_stop, ts, sizeof(ts)))
		                               : json_null());
		json_object_set_new(o, "reclaimed",
		                    json_boolean(in->end_reason == SIM_END_SPOT));
		json_array_append_new(arr, o);
	}
	free(v);
	sim_resp_json(resp, 200,
	              json_pack("{s:I,s:o}", "count",
	                        (json_int_t)json_array_size(arr), "instances",
	                        arr));
}

static void counters(sim_resp *resp)
{
	json_t *calls = json_object(), *faults = json_object(),
	       *byc = json_object();
	for (int c = 0; c < SIM_NCLOUD; c++)
		json_object_set_new(calls, sim_cloud_name(c), json_object());
	for (size_t i = 0; i < sim_g.calls.cap; i++) {
		const char *k;
		int64_t *v = sim_map_slot(&sim_g.calls, i, &k);
		const char *bar;
		char cloud[16];
		if (!v || !(bar = strchr(k, '|')))
			continue;
		snprintf(cloud, sizeof(cloud), "%.*s", (int)(bar - k), k);
		json_object_set_new(json_object_get(calls, cloud), bar + 1,
		                    json_integer(*v));
	}
	for (int f = 0; f < SIM_F_N; f++) {
		int64_t t = 0;
		for (int c = 0; c < SIM_NCLOUD; c++)
			t += sim_g.faults[c][f];
		json_object_set_new(faults, sim_fault_names[f], json_integer(t));
	}
	for (int c = 0; c < SIM_NCLOUD; c++) {
		json_t *o = json_object();
		for (int f = 0; f < SIM_F_N; f++)
			json_object_set_new(o, sim_fault_names[f],
			                    json_integer(sim_g.faults[c][f]));
		json_object_set_new(byc, sim_cloud_name(c), o);
	}
	sim_resp_json(resp, 200,
	              json_pack("{s:o,s:o,s:o}", "calls", calls, "faults",
	                        faults, "faults_by_cloud", byc));
}

static json_t *optab_json(const sim_optab *t, const char *a, const char *b)
{
	json_t *o = json_object();
	for (size_t i = 0; i < t->n; i++) {
		if (b)
			json_object_set_new(o, t->v[i].op,
			                    json_pack("{s:f,s:f}", a, t->v[i].a, b,
			                              t->v[i].b));
		else
			json_object_set_new(o, t->v[i].op, json_real(t->v[i].a));
	}
	return o;
}

static void scenario_get(sim_resp *resp)
{
	const sim_scenario *sc = &sim_g.sc;
	json_t *o = json_object(), *x, *caps = json_array();
	json_object_set_new(o, "file", json_string(sc->file));
	json_object_set_new(o, "seed", json_integer((json_int_t)sc->seed));
	x = json_object();
	for (int c = 0; c < SIM_NCLOUD; c++) {
		json_t *r = json_object();
		for (size_t i = 0; i < sim_g.regions[c].n; i++) {
			json_t *z = json_array();
			for (size_t k = 0; k < sim_g.regions[c].v[i].zones.n; k++)
				json_array_append_new(
					z, json_string(
						   sim_g.regions[c].v[i].zones.v[k]));
			json_object_set_new(r, sim_g.regions[c].v[i].name, z);
		}
		json_object_set_new(x, sim_cloud_name(c), r);
	}
	json_object_set_new(o, "regions", x);
	for (size_t i = 0; i < sc->ncaps; i++) {
		static const char *const mk[] = {"any", "on-demand", "spot"};
		const sim_caprule *r = &sc->caps[i];
		json_array_append_new(
			caps, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "cloud",
			                sim_cloud_name(r->cloud), "region", r->region,
			                "zone", r->zone, "type", r->type, "market",
			                mk[r->market], "count",
			                (json_int_t)r->count));
	}
	json_object_set_new(o, "capacity", caps);
#define PERCLOUD(key, tabs, a, b)                                            \
	x = json_object();                                                   \
	for (int c = 0; c < SIM_NCLOUD; c++)                                 \
		json_object_set_new(x, sim_cloud_name(c),                    \
		                    optab_json(&sc->tabs[c], a, b));         \
	json_object_set_new(o, key, x);
	PERCLOUD("latency", latency, "base_ms", "jitter_ms")
	PERCLOUD("error_rates", errors, "rate", NULL)
	PERCLOUD("lost_response", lost, "rate", NULL)
	PERCLOUD("throttling", throttle, "capacity_or_per_minute",
	         "refill_per_s_or_window_s")
#undef PERCLOUD
	x = json_object();
	for (int c = 0; c < SIM_NCLOUD; c++)
		json_object_set_new(x, sim_cloud_name(c),
		                    json_pack("{s:I,s:I}", "pending_ms",
		                              (json_int_t)sc->pending_ms[c],
		                              "stopping_ms",
		                              (json_int_t)sc->stopping_ms[c]));
	json_object_set_new(json_object_get(x, "aws"), "terminated_visible_ms",
	                    json_integer(sc->aws_terminated_visible_ms));
	json_object_set_new(json_object_get(x, "lambda"),
	                    "terminated_visible_ms",
	                    json_integer(sc->lambda_terminated_visible_ms));
	json_object_set_new(o, "lifecycle", x);
	json_object_set_new(o, "eventual_consistency_ms",
	                    json_integer(sc->eventual_ms));
	json_object_set_new(o, "billing", sim_billing_json());
	json_object_set_new(o, "spot",
	                    json_pack("{s:f,s:I}", "reclaim_rate_per_hour",
	                              sc->spot_rate_per_hour, "schedule_entries",
	                              (json_int_t)sc->nsched));
	sim_resp_json(resp, 200, o);
}

static void scenario_post(sim_req *req, sim_resp *resp)
{
	gb_diags d = GB_DIAGS_INIT;
	if (sim_scenario_update(&sim_g.sc, req->body, req->body_len, &d) != 0) {
		char *msg = gb_diags_str(&d);
		sim_resp_json(resp, 400, json_pack("{s:s}", "error", msg));
		free(msg);
	} else {
		sim_resp_json(resp, 200, json_pack("{s:b}", "ok", 1));
	}
	gb_diags_free(&d);
}

sim_inst *sim_inst_find_any(const char *id)
{
	for (size_t i = 0; i < sim_g.insts.cap; i++) {
		sim_inst *in = sim_map_slot(&sim_g.insts, i, NULL);
		if (in && (strcmp(in->id, id) == 0 ||
		           (in->name && strcmp(in->name, id) == 0)))
			return in;
	}
	return NULL;
}

static void reclaim(sim_req *req, sim_resp *resp)
{
	json_error_t je;
	json_t *body = json_loadb(req->body, req->body_len, 0, &je);
	json_t *ids, *done = json_array(), *skipped = json_array();
	int64_t now = sim_now();
	if (!json_is_object(body)) {
		json_decref(body);
		json_decref(done);
		json_decref(skipped);
		sim_resp_json(resp, 400,
		              json_pack("{s:s}", "error",
		                        "expected a JSON object {\"ids\":[...]} "
		                        "or {\"cloud\",\"pool\",\"fraction\"}"));
		return;
	}
	ids = json_object_get(body, "ids");
	if (json_is_array(ids)) {
		size_t i;
		json_t *v;
		json_array_foreach(ids, i, v) {
			const char *id = json_string_value(v);
			sim_inst *in = id ? sim_inst_find_any(id) : NULL;
			if (in && sim_reclaim(in, now) == 0)
				json_array_append_new(done, json_string(id));
			else
				json_array_append(skipped, v);
		}
	} else {
		const char *cs = json_string_value(json_object_get(body, "cloud"));
		const char *pool = json_string_value(json_object_get(body, "pool"));
		json_t *fr = json_object_get(body, "fraction");
		int cloud = cs ? sim_cloud_parse(cs) : -1;
		gb_strv out = {NULL, 0};
		double f = json_is_number(fr) ? json_number_value(fr) : 1.0;
		if ((cs && cloud < 0 && strcmp(cs, "any") != 0) || f < 0 ||
		    f > 1) {
			json_decref(body);
			json_decref(done);
			json_decref(skipped);
			sim_resp_json(resp, 400,
			              json_pack("{s:s}", "error",
			                        "cloud is aws|azure|gcp|lambda|any and "
			                        "fraction is 0..1"));
			return;
		}
		sim_reclaim_fraction(cloud, pool, f, now, &out);
		for (size_t i = 0; i < out.n; i++)
			json_array_append_new(done, json_string(out.v[i]));
		gb_strv_free(&out);
	}
	json_decref(body);
	sim_resp_json(resp, 200,
	              json_pack("{s:o,s:o}", "reclaimed", done, "skipped",
	                        skipped));
}

void sim_control_handle(sim_req *req, sim_resp *resp)
{
	const char *p = req->path;
	int get = strcmp(req->method, "GET") == 0;
	int post = strcmp(req->method, "POST") == 0;
	req->op = "control";
	if (req->body_too_large) {
		sim_resp_json(resp, 413,
		              json_pack("{s:s}", "error", "body too large"));
		return;
	}
	sim_lock();
	if (get && strcmp(p, "/_sim/health") == 0)
		sim_resp_json(resp, 200, json_pack("{s:b}", "ok", 1));
	else if (get && strcmp(p, "/_sim/env") == 0)
		env(resp);
	else if (get && strcmp(p, "/_sim/credentials") == 0)
		credentials(resp);
	else if (get && strcmp(p, "/_sim/instances") == 0)
		instances(req, resp);
	else if (get && strcmp(p, "/_sim/azure/nics") == 0)
		sim_resp_json(resp, 200, sim_azure_nics_json());
	else if (get && strcmp(p, "/_sim/bill") == 0)
		sim_resp_json(resp, 200, sim_bill_json(sim_now()));
	else if (get && strcmp(p, "/_sim/counters") == 0)
		counters(resp);
	else if (get && strcmp(p, "/_sim/scenario") == 0)
		scenario_get(resp);
	else if (post && strcmp(p, "/_sim/scenario") == 0)
		scenario_post(req, resp);
	else if (post && strcmp(p, "/_sim/reclaim") == 0)
		reclaim(req, resp);
	else if (post && strcmp(p, "/_sim/agents") == 0)
		sim_agents_configure(req, resp);
	else if (strncmp(p, "/_sim/meta/", 11) == 0)
		sim_metadata(req, resp, p + 11);
	else if (post && strcmp(p, "/_sim/reset") == 0) {
		sim_state_reset();
		sim_resp_json(resp, 200, json_pack("{s:b}", "ok", 1));
	} else
		sim_resp_json(resp, 404,
		              json_pack("{s:s}", "error",
		                        "unknown control endpoint; see "
		                        "tests/cloudsim/README.md"));
	sim_unlock();
}
