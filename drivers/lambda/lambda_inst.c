/* lambda_inst.c -- Instance objects (API.md, "Instances"): id, name,
 * status, region.name, instance_type.name, ip, private_ip, tags
 * [{key, value}]; the status mapping; GET /instances (every region in one
 * answer, not paged), read by the SDK's streaming scanner (drvc_scan.h):
 * each instance as its object closes, no tree built. */
#include <stdlib.h>
#include <string.h>

#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_scan.h"
#include "drvc_mem.h"
#include "drvc_util.h"
#include "lambda.h"

gb_instance_state lambda_state(const char *status)
{
	if (!status)
		return GB_INST_UNKNOWN;
	if (strcmp(status, "booting") == 0)
		return GB_INST_PENDING;
	if (strcmp(status, "active") == 0)
		return GB_INST_RUNNING;
	/* unhealthy: the instance is up but Lambda's health checks fail
	 * (API.md, "Statuses"); it will not recover by itself, so it is
	 * reported FAILED and replaced */
	if (strcmp(status, "unhealthy") == 0)
		return GB_INST_FAILED;
	if (strcmp(status, "terminating") == 0)
		return GB_INST_STOPPING;
	if (strcmp(status, "terminated") == 0)
		return GB_INST_TERMINATED;
	if (strcmp(status, "preempted") == 0)
		return GB_INST_PREEMPTED;
	return GB_INST_UNKNOWN;
}

static void add_tag(lambda_inst *inst, size_t *cap, const char *k,
                    const char *v)
{
	if (inst->ntags + 1 >= *cap) {
		*cap = *cap ? 2 * *cap : 8;
		inst->tags = drvc_xrealloc(inst->tags, *cap * sizeof(gb_kv));
	}
	inst->tags[inst->ntags].key = k;
	inst->tags[inst->ntags].value = v;
	inst->ntags++;
}

/* An Instance's members (API.md, "Instances") for the list scanner; the
 * region and the instance type are objects {name} (a bare string is
 * taken too). */
enum {
	LI_ID, LI_NAME, LI_STATUS, LI_REGION, LI_REGION_NAME, LI_TYPE,
	LI_TYPE_NAME, LI_IP, LI_PRIVATE_IP, LI_CREATED, LI_TAG_KEYS,
	LI_TAG_VALUES, LI_N
};
static const char *const inst_members[LI_N] = {
	[LI_ID] = "id",
	[LI_NAME] = "name",
	[LI_STATUS] = "status",
	[LI_REGION] = "region",
	[LI_REGION_NAME] = "region.name",
	[LI_TYPE] = "instance_type",
	[LI_TYPE_NAME] = "instance_type.name",
	[LI_IP] = "ip",
	[LI_PRIVATE_IP] = "private_ip",
	[LI_CREATED] = "created_at",
	[LI_TAG_KEYS] = "tags[].key",
	[LI_TAG_VALUES] = "tags[].value",
};

static const char *str_or_name(const drvc_scan_elem *e, size_t bare,
                               size_t name)
{
	const char *s = drvc_scan_str(e, bare);
	return s ? s : drvc_scan_str(e, name);
}

int lambda_inst_scan(const drvc_scan_elem *e, lambda_inst *inst)
{
	const gb_kv *keys, *vals;
	size_t nk, nv, j = 0, cap = 0;
	const char *s;

	memset(inst, 0, sizeof(*inst));
	inst->id = drvc_scan_str(e, LI_ID);
	if (!inst->id || !*inst->id)
		return -1;
	inst->name = drvc_scan_str(e, LI_NAME);
	inst->status = drvc_scan_str(e, LI_STATUS);
	inst->region = str_or_name(e, LI_REGION, LI_REGION_NAME);
	inst->type = str_or_name(e, LI_TYPE, LI_TYPE_NAME);
	inst->ip = drvc_scan_str(e, LI_IP);
	inst->private_ip = drvc_scan_str(e, LI_PRIVATE_IP);
	if ((s = drvc_scan_str(e, LI_CREATED)) && drvc_rfc3339_ms(s) > 0)
		inst->created_ms = drvc_rfc3339_ms(s);
	/* tags [{key, value}]: the two lists pair up by element index (the
	 * kv keys), both in document order; a tag without both is skipped */
	keys = drvc_scan_kv(e, LI_TAG_KEYS, &nk);
	vals = drvc_scan_kv(e, LI_TAG_VALUES, &nv);
	for (size_t i = 0; i < nk; i++) {
		long ki = strtol(keys[i].key, NULL, 10);
		while (j < nv && strtol(vals[j].key, NULL, 10) < ki)
			j++;
		if (j < nv && strtol(vals[j].key, NULL, 10) == ki && ki < 256)
			add_tag(inst, &cap, keys[i].value, vals[j].value);
	}
	/* the name stands in for tags the instance does not carry */
	if (lambda_name_decode(inst->name, inst->pool, inst->broker,
	                       inst->token)) {
		if (!lambda_inst_tag(inst, GB_TAG_POOL))
			add_tag(inst, &cap, GB_TAG_POOL, inst->pool);
		if (!lambda_inst_tag(inst, GB_TAG_BROKER))
			add_tag(inst, &cap, GB_TAG_BROKER, inst->broker);
		if (!lambda_inst_tag(inst, GB_TAG_TOKEN))
			add_tag(inst, &cap, GB_TAG_TOKEN, inst->token);
	}
	return 0;
}

void lambda_inst_free(lambda_inst *inst)
{
	free(inst->tags);
	inst->tags = NULL;
	inst->ntags = 0;
}

const char *lambda_inst_tag(const lambda_inst *inst, const char *key)
{
	for (size_t i = 0; i < inst->ntags; i++)
		if (strcmp(inst->tags[i].key, key) == 0)
			return inst->tags[i].value;
	return NULL;
}

int lambda_emit_inst(const lambda_inst *inst, const char *name,
                     gb_instance_cb emit, void *ud)
{
	gb_instance gi;
	memset(&gi, 0, sizeof(gi));
	gi.id = inst->id;
	gi.name = name ? name : inst->name;
	gi.region = inst->region ? inst->region : "";
	gi.zone = "";
	gi.instance_type = inst->type ? inst->type : "";
	gi.capacity = GB_CAPACITY_ON_DEMAND;
	gi.state = lambda_state(inst->status);
	gi.state_reason = inst->status;
	gi.private_ip = inst->private_ip;
	gi.public_ip = inst->ip;
	gi.tags = inst->tags;
	gi.ntags = inst->ntags;
	gi.created_ms = inst->created_ms;
	gi.created_at = inst->created_ms / 1000;
	return emit(ud, &gi);
}

typedef struct list_page {
	int (*fn)(void *ud, const lambda_inst *inst);
	void *ud;
} list_page;

static int list_elem(void *ud, const drvc_scan_elem *e)
{
	list_page *p = ud;
	lambda_inst inst;
	int stop = 0;
	if (lambda_inst_scan(e, &inst) == 0)
		stop = p->fn(p->ud, &inst);
	lambda_inst_free(&inst);
	return stop;
}

int lambda_parse_list(const char *body, size_t len,
                      int (*fn)(void *ud, const lambda_inst *inst), void *ud,
                      gb_error *err)
{
	static const char *const tops[] = { "data" };
	static const drvc_scan_spec spec = {
		"data[]", inst_members, LI_N, tops, 1, DRVC_MAX_BODY,
		"Lambda instance list",
	};
	list_page p = { fn, ud };
	drvc_scan *sc = drvc_scan_new(&spec, list_elem, &p);
	char kind;
	int rc;

	if (!sc)
		abort(); /* the spec above is well-formed */
	rc = drvc_scan_run(sc, body, len, err);
	kind = drvc_scan_top_kind(sc, 0);
	drvc_scan_free(sc);
	if (rc == 0 && kind != DRVC_SCAN_ARRAY) {
		drvc_err(err, GB_ERR_TRANSIENT, 0, "MalformedResponse",
		         kind ? "Lambda instance list: \"data\" is not a list"
		              : "Lambda instance list: the answer has no "
		                "\"data\" member");
		return -1;
	}
	return rc < 0 ? -1 : 0;
}

int lambda_list(lambda_ctx *c, int (*fn)(void *ud, const lambda_inst *inst),
                void *ud, gb_error *err)
{
	gb_http_resp resp;
	int rc = lambda_api(c, "GET", "/instances", NULL, LAMBDA_RATE_API, 0,
	                    "instance list", &resp, err);
	if (rc == 0)
		rc = drvc_json_ctype_ok(&resp, "Lambda instance list", err);
	if (rc == 0)
		rc = lambda_parse_list(resp.body, resp.body ? resp.body_len : 0,
		                       fn, ud, err);
	c->host->http_free(c->host->ctx, &resp);
	return rc;
}
