/*
 * arm_render.c -- ARM resource shapes: the virtual machine (echoing what
 * was PUT, minus secrets, plus what ARM adds) and its instance view (the
 * network interfaces are in arm_nic.c).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "azure.h"

char *az_vm_key(const char *sub, const char *rg, const char *name)
{
	char *k = gb_xasprintf("azure|%s|%s|%s", sub, rg, name);
	for (char *p = k; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return k;
}

static const char *vm_rg(const sim_inst *in)
{
	return in->rg;
}

char *az_vm_id(const sim_inst *in)
{
	return gb_xasprintf("/subscriptions/%s/resourceGroups/%s/providers/"
	                    "Microsoft.Compute/virtualMachines/%s",
	                    sim_g.sc.az_sub, vm_rg(in), in->name);
}

const char *az_norm_location(const char *s, char *buf, size_t cap)
{
	size_t o = 0;
	for (; *s && o + 1 < cap; s++)
		if (*s != ' ')
			buf[o++] = (char)tolower((unsigned char)*s);
	buf[o] = '\0';
	return buf;
}

static const char *prov_state(const sim_inst *in, sim_phase ph)
{
	switch (ph) {
	case SIM_PH_PENDING: return "Creating";
	case SIM_PH_RUNNING: return "Succeeded";
	case SIM_PH_FAILED: return "Failed";
	case SIM_PH_STOPPING:
		return in->end_reason == SIM_END_SPOT && in->keep ? "Succeeded"
		                                                  : "Deleting";
	case SIM_PH_STOPPED: return "Succeeded";
	case SIM_PH_GONE: return "Deleting";
	}
	return "Succeeded";
}

static json_t *status(const char *code, const char *level,
                      const char *display, const char *time)
{
	json_t *s = json_pack("{s:s,s:s,s:s}", "code", code, "level", level,
	                      "displayStatus", display);
	if (time)
		json_object_set_new(s, "time", json_string(time));
	return s;
}

json_t *az_instance_view(const sim_inst *in, int64_t now)
{
	sim_phase ph = sim_inst_phase(in, now);
	json_t *st = json_array();
	char t[40];
	const json_t *osp = json_object_get(json_object_get(in->az_body,
	                                                    "properties"),
	                                    "osProfile");
	const char *cn = json_string_value(json_object_get(osp, "computerName"));
	json_t *v = json_object();
	sim_time_ms(ph == SIM_PH_PENDING ? in->t_create : in->t_running, t,
	            sizeof(t));
	switch (ph) {
	case SIM_PH_PENDING:
		json_array_append_new(st, status("ProvisioningState/creating",
		                                 "Info", "Creating", NULL));
		json_array_append_new(st, status("PowerState/starting", "Info",
		                                 "VM starting", NULL));
		break;
	case SIM_PH_RUNNING:
		json_array_append_new(st, status("ProvisioningState/succeeded",
		                                 "Info", "Provisioning succeeded",
		                                 t));
		json_array_append_new(st, status("PowerState/running", "Info",
		                                 "VM running", NULL));
		break;
	case SIM_PH_FAILED: {
		char *code = gb_xasprintf("ProvisioningState/failed/%s",
		                          in->fail_code ? in->fail_code
		                                        : "AllocationFailed");
		json_t *s = status(code, "Error", "Provisioning failed", t);
		json_object_set_new(s, "message",
		                    json_string(in->fail_msg ? in->fail_msg : ""));
		json_array_append_new(st, s);
		free(code);
		break;
	}
	case SIM_PH_STOPPING:
		if (in->end_reason == SIM_END_SPOT && in->keep) {
			json_array_append_new(
				st, status("ProvisioningState/succeeded", "Info",
				           "Provisioning succeeded", t));
			json_array_append_new(st, status("PowerState/deallocating",
			                                 "Info",
			                                 "VM deallocating", NULL));
		} else {
			json_array_append_new(st, status("ProvisioningState/deleting",
			                                 "Info", "Deleting", NULL));
			json_array_append_new(st, status("PowerState/stopping",
			                                 "Info", "VM stopping",
			                                 NULL));
		}
		break;
	case SIM_PH_STOPPED:
	case SIM_PH_GONE:
		json_array_append_new(st, status("ProvisioningState/succeeded",
		                                 "Info", "Provisioning succeeded",
		                                 t));
		json_array_append_new(st, status("PowerState/deallocated", "Info",
		                                 "VM deallocated", NULL));
		break;
	}
	json_object_set_new(v, "computerName", json_string(cn ? cn : in->name));
	json_object_set_new(v, "osName", json_string("ubuntu"));
	json_object_set_new(v, "statuses", st);
	return v;
}

json_t *az_vm_json(const sim_inst *in, int64_t now, int expand)
{
	json_t *body = in->az_body;
	json_t *props = json_deep_copy(json_object_get(body, "properties"));
	json_t *vm = json_object(), *v;
	char *id = az_vm_id(in);
	char t[40];
	sim_phase ph = sim_inst_phase(in, now);
	json_object_set_new(vm, "name", json_string(in->name));
	json_object_set_new(vm, "id", json_string(id));
	json_object_set_new(vm, "type",
	                    json_string("Microsoft.Compute/virtualMachines"));
	json_object_set_new(vm, "location", json_string(in->region));
	v = json_object_get(body, "tags");
	json_object_set_new(vm, "tags", v ? json_deep_copy(v) : json_object());
	if ((v = json_object_get(body, "zones")))
		json_object_set_new(vm, "zones", json_deep_copy(v));
	if (!json_is_object(props)) {
		json_decref(props);
		props = json_object();
	}
	/* secrets never come back */
	v = json_object_get(props, "osProfile");
	if (json_is_object(v)) {
		json_object_del(v, "customData");
		json_object_del(v, "adminPassword");
		if (!json_object_get(v, "computerName"))
			json_object_set_new(v, "computerName",
			                    json_string(in->name));
		json_object_set_new(v, "allowExtensionOperations",
		                    json_true());
		json_object_set_new(v, "requireGuestProvisionSignal",
		                    json_true());
	}
	v = json_object_get(props, "networkProfile");
	if (json_is_object(v) && in->az_nic)
		json_object_set_new(v, "networkInterfaces", az_vm_nic_refs(in));
	v = json_object_get(props, "storageProfile");
	if (json_is_object(v)) {
		json_t *od = json_object_get(v, "osDisk");
		if (json_is_object(od) && !json_object_get(od, "name")) {
			char *dn = gb_xasprintf("%s_OsDisk_1_%.32s", in->name,
			                        in->id);
			json_object_set_new(od, "name", json_string(dn));
			free(dn);
		}
		if (json_is_object(od))
			json_object_set_new(od, "osType", json_string("Linux"));
	}
	json_object_set_new(props, "vmId", json_string(in->id));
	json_object_set_new(props, "provisioningState",
	                    json_string(prov_state(in, ph)));
	json_object_set_new(props, "timeCreated",
	                    json_string(sim_time_ms(in->t_create, t, sizeof(t))));
	if (expand)
		json_object_set_new(props, "instanceView",
		                    az_instance_view(in, now));
	json_object_set_new(vm, "properties", props);
	free(id);
	return vm;
}
