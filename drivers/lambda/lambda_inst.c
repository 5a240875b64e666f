/* lambda_inst.c -- Instance objects (API.md, "Instances"): id, name,
 * status, region.name, instance_type.name, ip, private_ip, tags
 * [{key, value}]; the status mapping; GET /instances (every region in one
 * answer, not paged). */
#include <stdlib.h>
#include <string.h>

#include "drvc_json.h"
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

static const char *obj_name(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	if (json_is_string(v))
		return json_string_value(v);
	return drvc_jstr(v, "name");
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

int lambda_inst_parse(const json_t *o, lambda_inst *inst)
{
	const json_t *tags, *t;
	const char *s;
	size_t i, cap = 0;

	memset(inst, 0, sizeof(*inst));
	inst->id = drvc_jstr(o, "id");
	if (!inst->id || !*inst->id)
		return -1;
	inst->name = drvc_jstr(o, "name");
	inst->status = drvc_jstr(o, "status");
	inst->region = obj_name(o, "region");
	inst->type = obj_name(o, "instance_type");
	inst->ip = drvc_jstr(o, "ip");
	inst->private_ip = drvc_jstr(o, "private_ip");
	if ((s = drvc_jstr(o, "created_at")) && drvc_rfc3339_ms(s) > 0)
		inst->created_ms = drvc_rfc3339_ms(s);
	tags = json_object_get(o, "tags");
	if (json_is_array(tags)) {
		json_array_foreach(tags, i, t) {
			const char *k = drvc_jstr(t, "key"), *v = drvc_jstr(t, "value");
			if (k && v && i < 256)
				add_tag(inst, &cap, k, v);
		}
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

int lambda_list(lambda_ctx *c, int (*fn)(void *ud, const lambda_inst *inst),
                void *ud, gb_error *err)
{
	json_t *root, *data, *v;
	size_t i;
	if (lambda_get_data(c, "/instances", "instance list", &root, &data,
	                    err) != 0)
		return -1;
	if (!json_is_array(data)) {
		drvc_err(err, GB_ERR_TRANSIENT, 0, "MalformedResponse",
		         "Lambda instance list: \"data\" is not a list");
		json_decref(root);
		return -1;
	}
	json_array_foreach(data, i, v) {
		lambda_inst inst;
		int stop = 0;
		if (lambda_inst_parse(v, &inst) == 0)
			stop = fn(ud, &inst);
		lambda_inst_free(&inst);
		if (stop)
			break;
	}
	json_decref(root);
	return 0;
}
