/* gcp_compute.c -- the instances.bulkInsert body, Instance parsing and the
 * status mapping.  Builders and parsers are pure (no host calls): the
 * unit tests check them byte for byte and the fuzz target feeds them
 * garbage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drvc_enc.h"
#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_scan.h"
#include "drvc_util.h"
#include "gcp.h"

static int token_ok(const char *s, size_t n)
{
	if (n == 0 || n >= 64)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		      ch == '-'))
			return 0;
	}
	return 1;
}

int gcp_parse_type(const char *s, gcp_type *t, gb_error *err)
{
	const char *slash = strchr(s, '/'), *colon;
	size_t mlen = slash ? (size_t)(slash - s) : strlen(s);
	memset(t, 0, sizeof(*t));
	if (!token_ok(s, mlen))
		goto bad;
	memcpy(t->machine, s, mlen);
	if (!slash)
		return 0;
	colon = strchr(slash + 1, ':');
	if (!colon || !token_ok(slash + 1, (size_t)(colon - slash - 1)))
		goto bad;
	memcpy(t->accel, slash + 1, (size_t)(colon - slash - 1));
	{
		char *end;
		long n = strtol(colon + 1, &end, 10);
		if (*end || n < 1 || n > 16)
			goto bad;
		t->accel_count = (int)n;
	}
	if (strncmp(t->machine, "n1-", 3) != 0) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidMachineType",
		         "GCE type '%.100s': attachable GPUs (guestAccelerators) "
		         "exist only for N1 machine types; A2/A3/G2 come with "
		         "their GPUs built in", s);
		return -1;
	}
	return 0;
bad:
	drvc_err(err, GB_ERR_INVALID, 0, "InvalidMachineType",
	         "GCE type '%.100s' is neither a machine type (a2-highgpu-1g) "
	         "nor machine/accelerator:count (n1-standard-8/nvidia-tesla-t4:1)",
	         s);
	return -1;
}

static int is_cloud_init(const char *s)
{
	return strncmp(s, "#cloud-config", 13) == 0 ||
	       strncmp(s, "#include", 8) == 0 ||
	       strncmp(s, "#cloud-boothook", 15) == 0 ||
	       strncasecmp(s, "Content-Type:", 13) == 0;
}

char *gcp_bulk_body(const gb_create_req *req, const char *const *names,
                    size_t n, const gcp_params *p, gb_error *err)
{
	gcp_type t;
	json_t *root, *props, *per, *labels, *items, *nic, *sched, *disk;
	char k[64], v[64], *s;
	const char *name = n ? names[0] : "";
	size_t nlabels;

	if (!req->instance_type || !p->image || !*p->image || !p->network ||
	    !p->disk_type || !req->pool || !req->broker_id || !req->token) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidRequest",
		         "GCE instance %s: type, image, network, pool, broker id "
		         "and token are required", name);
		return NULL;
	}
	for (size_t i = 0; req->ssh_keys && i < req->nssh_keys; i++)
		if (!req->ssh_keys[i] || strchr(req->ssh_keys[i], '\n')) {
			drvc_err(err, GB_ERR_INVALID, 0, "InvalidSshKey",
			         "GCE instance %s: SSH key %zu is missing or spans "
			         "several lines", name, i);
			return NULL;
		}
	if (gcp_parse_type(req->instance_type, &t, err) != 0)
		return NULL;
	labels = json_object();
	for (size_t i = 0; i < req->ntags; i++) {
		if (!req->tags[i].key || !req->tags[i].value)
			continue;
		gcp_label_key(req->tags[i].key, k);
		gcp_label_value(req->tags[i].value, v);
		json_object_set_new(labels, k, json_string(v));
	}
	gcp_label_value(req->pool, v);
	json_object_set_new(labels, GB_TAG_POOL, json_string(v));
	gcp_label_value(req->broker_id, v);
	json_object_set_new(labels, GB_TAG_BROKER, json_string(v));
	gcp_label_value(req->token, v);
	json_object_set_new(labels, GB_TAG_TOKEN, json_string(v));
	if (req->team) {
		gcp_label_value(req->team, v);
		json_object_set_new(labels, GB_TAG_TEAM, json_string(v));
	}
	nlabels = json_object_size(labels);
	if (nlabels > 64) {
		drvc_err(err, GB_ERR_INVALID, 0, "TooManyLabels",
		         "GCE allows 64 labels per instance; this one would carry "
		         "%zu (4 gpubroker labels plus the spec's labels)", nlabels);
		json_decref(labels);
		return NULL;
	}

	items = json_array();
	if (req->nssh_keys) {
		drvc_buf b = DRVC_BUF_INIT;
		char *keys;
		for (size_t i = 0; i < req->nssh_keys; i++)
			drvc_buf_addf(&b, "%s" GCP_SSH_USER ":%s", i ? "\n" : "",
			              req->ssh_keys[i]);
		keys = drvc_buf_take(&b);
		if (!keys)
			abort();
		json_array_append_new(items, json_pack("{s:s,s:s}", "key",
		                                       "ssh-keys", "value", keys));
		free(keys);
	}
	if (req->user_data && *req->user_data)
		json_array_append_new(
			items, json_pack("{s:s,s:s}", "key",
			                 is_cloud_init(req->user_data)
			                         ? "user-data"
			                         : "startup-script",
			                 "value", req->user_data));

	nic = json_pack("{s:s}", "network", p->network);
	if (p->subnetwork && *p->subnetwork)
		json_object_set_new(nic, "subnetwork", json_string(p->subnetwork));
	if (p->public_ip)
		json_object_set_new(nic, "accessConfigs",
		                    json_pack("[{s:s,s:s}]", "name", "External NAT",
		                              "type", "ONE_TO_ONE_NAT"));

	if (req->capacity == GB_CAPACITY_SPOT)
		sched = json_pack("{s:b,s:s,s:s,s:s}", "automaticRestart", 0,
		                  "instanceTerminationAction", "STOP",
		                  "onHostMaintenance", "TERMINATE",
		                  "provisioningModel", "SPOT");
	else
		sched = json_pack("{s:b,s:s,s:s}", "automaticRestart", 1,
		                  "onHostMaintenance", "TERMINATE",
		                  "provisioningModel", "STANDARD");

	/* InstanceProperties name types by name, not by zonal URL */
	s = drvc_xasprintf("%d", p->disk_gb);
	disk = json_pack("{s:b,s:b,s:{s:s,s:s,s:s}}", "autoDelete", 1, "boot", 1,
	                 "initializeParams", "diskSizeGb", s, "diskType",
	                 p->disk_type, "sourceImage", p->image);
	free(s);
	props = json_pack("{s:s,s:[o],s:[o],s:o,s:o,s:{s:o}}", "machineType",
	                  t.machine, "disks", disk, "networkInterfaces", nic,
	                  "scheduling", sched, "labels", labels, "metadata",
	                  "items", items);
	if (!props) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "BodyBuildFailed",
		         "GCE bulkInsert body for %s could not be built", name);
		return NULL;
	}
	if (t.accel[0])
		json_object_set_new(props, "guestAccelerators",
		                    json_pack("[{s:s,s:i}]", "acceleratorType",
		                              t.accel, "acceleratorCount",
		                              t.accel_count));
	per = json_object();
	for (size_t i = 0; i < n; i++)
		json_object_set_new(per, names[i], json_object());
	/* int64 fields travel as decimal strings in Google's JSON */
	s = drvc_xasprintf("%zu", n);
	root = json_pack("{s:s,s:s,s:o,s:o}", "count", s, "minCount", s,
	                 "perInstanceProperties", per, "instanceProperties",
	                 props);
	free(s);
	s = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(root);
	if (!s)
		abort();
	return s;
}

/* The last path segment of a URL or partial URL. */
static const char *last_seg(const char *s)
{
	const char *p = s ? strrchr(s, '/') : NULL;
	return p ? p + 1 : s;
}

const char *const gcp_inst_members[GCP_INST_NMEMBERS] = {
	[GI_NAME] = "name",
	[GI_ZONE] = "zone",
	[GI_MACHINE] = "machineType",
	[GI_STATUS] = "status",
	[GI_CREATED] = "creationTimestamp",
	[GI_MODEL] = "scheduling.provisioningModel",
	[GI_PREEMPTIBLE] = "scheduling.preemptible",
	[GI_NETWORK_IP] = "networkInterfaces[0].networkIP",
	[GI_NAT_IP] = "networkInterfaces[0].accessConfigs[0].natIP",
	[GI_ACC_TYPE] = "guestAccelerators[0].acceleratorType",
	[GI_ACC_COUNT] = "guestAccelerators[0].acceleratorCount",
	[GI_LABELS] = "labels.*",
};

/* Builds inst from an Instance's members as text (v[GI_*], NULL when
 * absent; v[GI_LABELS] unused): the one place both readers share.  The
 * strings stay borrowed from v.  0, or -1 when it has no name. */
static int inst_fill(gcp_inst *inst, const char *const *v)
{
	const char *mt = last_seg(v[GI_MACHINE]);
	const char *model = v[GI_MODEL];
	const char *zone = last_seg(v[GI_ZONE]);
	const char *cnt = v[GI_ACC_COUNT];
	char *end = NULL;
	long long n = cnt ? strtoll(cnt, &end, 10) : 0;

	inst->name = v[GI_NAME] ? v[GI_NAME] : "";
	inst->zone = zone ? zone : "";
	/* A2/A3/G2 list their built-in GPUs in guestAccelerators too; only
	 * N1 carries them in its catalog type. */
	if (mt && strncmp(mt, "n1-", 3) == 0 && cnt && end != cnt && !*end &&
	    v[GI_ACC_TYPE])
		inst->type = inst->own_type = drvc_xasprintf(
			"%s/%s:%lld", mt, last_seg(v[GI_ACC_TYPE]), n);
	else
		inst->type = mt ? mt : "";
	inst->status = v[GI_STATUS] ? v[GI_STATUS] : "";
	inst->spot = (model && strcasecmp(model, "SPOT") == 0) ||
	             (v[GI_PREEMPTIBLE] && strcmp(v[GI_PREEMPTIBLE], "true") == 0);
	inst->network_ip = v[GI_NETWORK_IP];
	inst->nat_ip = v[GI_NAT_IP];
	inst->created_ms = drvc_rfc3339_ms(v[GI_CREATED]);
	if (inst->created_ms < 0)
		inst->created_ms = 0;
	return *inst->name ? 0 : -1;
}

/* The members read here are those the listing asks for (list_fields in
 * gcp_describe.c) and gcp_inst_members: keep all three in step. */
int gcp_inst_parse(const json_t *o, gcp_inst *inst)
{
	const json_t *acc = json_array_get(json_object_get(o, "guestAccelerators"), 0);
	const json_t *nic = json_array_get(json_object_get(o, "networkInterfaces"), 0);
	const json_t *sched = json_object_get(o, "scheduling");
	const char *v[GCP_INST_NMEMBERS] = { 0 };
	char cnt[24];
	int64_t c = 0;

	memset(inst, 0, sizeof(*inst));
	inst->obj = json_incref((json_t *)o);
	v[GI_NAME] = drvc_jstr(o, "name");
	v[GI_ZONE] = drvc_jstr(o, "zone");
	v[GI_MACHINE] = drvc_jstr(o, "machineType");
	v[GI_STATUS] = drvc_jstr(o, "status");
	v[GI_CREATED] = drvc_jstr(o, "creationTimestamp");
	v[GI_MODEL] = drvc_jstr(sched, "provisioningModel");
	v[GI_PREEMPTIBLE] = json_is_true(json_object_get(sched, "preemptible"))
	                            ? "true" : NULL;
	v[GI_NETWORK_IP] = drvc_jstr(nic, "networkIP");
	v[GI_NAT_IP] = drvc_jstr(json_array_get(
		json_object_get(nic, "accessConfigs"), 0), "natIP");
	v[GI_ACC_TYPE] = drvc_jstr(acc, "acceleratorType");
	if (drvc_jint(json_object_get(acc, "acceleratorCount"), &c) == 0) {
		snprintf(cnt, sizeof(cnt), "%lld", (long long)c);
		v[GI_ACC_COUNT] = cnt;
	}
	inst->labels = drvc_json_kv_borrow(json_object_get(o, "labels"),
	                                    &inst->nlabels);
	return inst_fill(inst, v);
}

int gcp_inst_scan(const drvc_scan_elem *e, gcp_inst *inst)
{
	const char *v[GCP_INST_NMEMBERS];
	const char *key;
	size_t n;

	memset(inst, 0, sizeof(*inst));
	for (size_t i = 0; i < GCP_INST_NMEMBERS; i++)
		v[i] = drvc_scan_str(e, i);
	v[GI_ACC_COUNT] = drvc_scan_num(e, GI_ACC_COUNT);
	v[GI_PREEMPTIBLE] = drvc_scan_true(e, GI_PREEMPTIBLE) ? "true" : NULL;
	inst->labels = (gb_kv *)drvc_scan_kv(e, GI_LABELS, &n);
	inst->nlabels = n;
	inst->labels_borrowed = 1;
	if (inst_fill(inst, v) != 0)
		return -1;
	/* the aggregated list's "zones/<z>" key when the VM has no zone */
	key = drvc_scan_elem_key(e);
	if (!inst->zone[0] && strncmp(key, "zones/", 6) == 0)
		inst->zone = key + 6;
	return 0;
}

void gcp_inst_free(gcp_inst *inst)
{
	json_decref(inst->obj);
	if (!inst->labels_borrowed)
		free(inst->labels);
	free(inst->own_type);
	free(inst->own_zone);
	memset(inst, 0, sizeof(*inst));
}

const char *gcp_inst_label(const gcp_inst *inst, const char *key)
{
	for (size_t i = 0; i < inst->nlabels; i++)
		if (strcmp(inst->labels[i].key, key) == 0)
			return inst->labels[i].value;
	return NULL;
}

gb_instance_state gcp_inst_state(const gcp_inst *inst, const char **reason)
{
	const char *s = inst->status;
	*reason = NULL;
	if (!strcmp(s, "PROVISIONING") || !strcmp(s, "STAGING") ||
	    !strcmp(s, "REPAIRING") || !strcmp(s, "PENDING"))
		return GB_INST_PENDING;
	if (!strcmp(s, "RUNNING"))
		return GB_INST_RUNNING;
	if (!strcmp(s, "STOPPING") || !strcmp(s, "SUSPENDING"))
		return GB_INST_STOPPING;
	if (!strcmp(s, "TERMINATED") || !strcmp(s, "STOPPED")) {
		/* The broker deletes, never stops: a stopped Spot VM was
		 * preempted (instanceTerminationAction STOP). */
		if (inst->spot) {
			*reason = "compute.instances.preempted";
			return GB_INST_PREEMPTED;
		}
		*reason = "GCE.Terminated";
		return GB_INST_FAILED;
	}
	if (!strcmp(s, "SUSPENDED")) {
		*reason = "GCE.Suspended";
		return GB_INST_FAILED;
	}
	return GB_INST_UNKNOWN;
}

int gcp_emit_inst(gcp_ctx *c, const gcp_inst *inst, gb_instance_cb emit,
                  void *ud)
{
	gb_instance g;
	char region[64];
	const char *dash = strrchr(inst->zone, '-');
	size_t n = dash ? (size_t)(dash - inst->zone) : strlen(inst->zone);
	(void)c;
	if (n >= sizeof(region))
		n = sizeof(region) - 1;
	memcpy(region, inst->zone, n);
	region[n] = '\0';
	memset(&g, 0, sizeof(g));
	g.id = inst->name;
	g.name = inst->name;
	g.region = region;
	g.zone = inst->zone;
	g.instance_type = inst->type;
	g.capacity = inst->spot ? GB_CAPACITY_SPOT : GB_CAPACITY_ON_DEMAND;
	g.state = gcp_inst_state(inst, &g.state_reason);
	g.private_ip = inst->network_ip;
	g.public_ip = inst->nat_ip;
	g.tags = inst->labels;
	g.ntags = inst->nlabels;
	g.created_at = inst->created_ms / 1000;
	g.created_ms = inst->created_ms;
	return emit(ud, &g);
}

int gcp_get_inst(gcp_ctx *c, const char *zone, const char *name,
                 gcp_inst *inst, gb_error *err)
{
	const gb_host *h = c->host;
	gb_http_resp resp;
	char what[200], *rest, *url;
	json_t *root;
	int rc;

	memset(inst, 0, sizeof(*inst));
	if (!token_ok(name, strlen(name)) || !token_ok(zone, strlen(zone)))
		return 0; /* not a GCE name: no such instance */
	rest = drvc_xasprintf("instances/%s", name);
	url = gcp_zone_url(c, zone, rest);
	free(rest);
	snprintf(what, sizeof(what), "GET instance %.63s in %.63s", name, zone);
	rc = gcp_api(c, "GET", url, NULL, "gce-read", what, &resp, err);
	free(url);
	rc = drvc_json_answer(h, rc, &resp, GCP_MAX_SMALL, what, &root, err);
	if (rc <= 0)
		return rc;
	if (gcp_inst_parse(root, inst) != 0) {
		gcp_inst_free(inst);
		json_decref(root);
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedResponse",
		         "GCP %s: the answer is not an Instance (no name)", what);
		return -1;
	}
	json_decref(root);
	return 1;
}
