/* azure_vm.c -- the VM PUT body, VM/NIC parsing and the state mapping.
 * Pure functions (no host calls): the unit tests check their output
 * byte for byte and the fuzz target feeds them garbage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"
#include "drvc_enc.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_util.h"

/* Azure VM names: 1-64 chars of letters, digits, '-', '_' and '.',
 * starting with a letter or digit and ending with a letter, digit or '_'.
 * (Linux computer names are the same name with '_' turned into '-'.) */
int azure_vm_name_ok(const char *name, gb_error *err)
{
	size_t n = strlen(name);
	int ok = n >= 1 && n <= 64;
	for (size_t i = 0; ok && i < n; i++) {
		char ch = name[i];
		int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		            (ch >= '0' && ch <= '9');
		if (!alnum && ch != '-' && ch != '_' && ch != '.')
			ok = 0;
		if (i == 0 && !alnum)
			ok = 0;
		if (i == n - 1 && !alnum && ch != '_')
			ok = 0;
	}
	if (!ok)
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidResourceName",
		         "Azure VM name '%.80s' is not valid: 1-64 letters, digits, "
		         "'-', '_' or '.', starting with a letter or digit (it is "
		         "the pool's name prefix plus an index)", name);
	return ok ? 0 : -1;
}

/* Tag names may not contain < > % & \ ? / ; at most 512 chars; values
 * at most 256.  Map deterministically. */
static char *tag_clean(const char *s, size_t max, int is_key)
{
	size_t n = strlen(s);
	char *o;
	if (n > max)
		n = max;
	o = drvc_xstrndup(s, n);
	for (char *p = o; is_key && *p; p++)
		if (strchr("<>%&\\?/", *p))
			*p = '_';
	return o;
}

static void tag_set(json_t *tags, const char *k, const char *v)
{
	char *ck, *cv;
	if (!k || !*k || !v)
		return;
	ck = tag_clean(k, 512, 1);
	cv = tag_clean(v, 256, 0);
	json_object_set_new(tags, ck, json_string(cv));
	free(ck);
	free(cv);
}

static json_t *image_ref(const char *img, gb_error *err)
{
	const char *p[4];
	size_t len[4];
	const char *s = img;
	json_t *o;
	if (img[0] == '/')
		return json_pack("{s:s}", "id", img);
	for (int i = 0; i < 4; i++) {
		const char *c = strchr(s, ':');
		if ((i < 3 && !c) || (i == 3 && c)) {
			drvc_err(err, GB_ERR_INVALID, 0, "InvalidImage",
			         "Azure image '%.200s' is neither "
			         "publisher:offer:sku:version nor a resource id "
			         "(/subscriptions/...)", img);
			return NULL;
		}
		p[i] = s;
		len[i] = c ? (size_t)(c - s) : strlen(s);
		if (len[i] == 0) {
			drvc_err(err, GB_ERR_INVALID, 0, "InvalidImage",
			         "Azure image '%.200s' has an empty URN part", img);
			return NULL;
		}
		s = c ? c + 1 : s;
	}
	o = json_object();
	json_object_set_new(o, "publisher", json_stringn(p[0], len[0]));
	json_object_set_new(o, "offer", json_stringn(p[1], len[1]));
	json_object_set_new(o, "sku", json_stringn(p[2], len[2]));
	json_object_set_new(o, "version", json_stringn(p[3], len[3]));
	return o;
}

static const char *zone_of(const gb_create_req *req)
{
	const char *z = req->zone;
	size_t rl = strlen(req->region);
	/* Accept "eastus-2" as well as Azure's own "2". */
	if (z && strncmp(z, req->region, rl) == 0 && z[rl] == '-')
		z += rl + 1;
	return z;
}

char *azure_vm_body(const gb_create_req *req, const char *name,
                    const azure_vm_params *p, gb_error *err)
{
	json_t *root, *props, *tags, *keys, *os, *lin, *ipcfg, *nic, *img;
	const char *zone = zone_of(req);
	char computer[65], *s, *nicname, *pipname;
	size_t ntags;

	if (azure_vm_name_ok(name, err) != 0)
		return NULL;
	if (!req->region || !*req->region || !req->instance_type ||
	    !*req->instance_type || !p->image || !*p->image) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidRequest",
		         "Azure VM %s: region, instance type and image are "
		         "required", name);
		return NULL;
	}
	for (size_t i = 0; req->ssh_keys && i < req->nssh_keys; i++)
		if (!req->ssh_keys[i] || !*req->ssh_keys[i]) {
			drvc_err(err, GB_ERR_INVALID, 0, "InvalidSshKey",
			         "Azure VM %s: SSH key %zu is empty", name, i);
			return NULL;
		}
	if (!req->ssh_keys || req->nssh_keys == 0) {
		drvc_err(err, GB_ERR_INVALID, 0, "SshKeyRequired",
		         "Azure Linux VMs are created with password login "
		         "disabled, so at least one SSH public key is required "
		         "(ssh_keys in the spec or the broker config)");
		return NULL;
	}
	if (!p->subnet || !*p->subnet) {
		drvc_err(err, GB_ERR_INVALID, 0, "SubnetMissing",
		         "Azure subnet for %.60s not set: set option subnet_id "
		         "(or subnet_id.%.60s, or env AZURE_SUBNET_ID) to the "
		         "resource id of a pre-created subnet in that region "
		         "(/subscriptions/<sub>/resourceGroups/<rg>/providers/"
		         "Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>)",
		         req->region, req->region);
		return NULL;
	}
	if (req->user_data && strlen(req->user_data) > 65535) {
		drvc_err(err, GB_ERR_INVALID, 0, "CustomDataTooLarge",
		         "user_data is %zu bytes; Azure customData takes at most "
		         "65535", strlen(req->user_data));
		return NULL;
	}
	img = image_ref(p->image, err);
	if (!img)
		return NULL;

	tags = json_object();
	for (size_t i = 0; i < req->ntags; i++)
		tag_set(tags, req->tags[i].key, req->tags[i].value);
	tag_set(tags, GB_TAG_POOL, req->pool);
	tag_set(tags, GB_TAG_BROKER, req->broker_id);
	tag_set(tags, GB_TAG_TOKEN, req->token);
	tag_set(tags, GB_TAG_TEAM, req->team);
	ntags = json_object_size(tags);
	if (ntags > 50) {
		drvc_err(err, GB_ERR_INVALID, 0, "TooManyTags",
		         "Azure allows 50 tags per resource; this VM would carry "
		         "%zu (4 gpubroker tags plus the spec's labels)", ntags);
		json_decref(tags);
		json_decref(img);
		return NULL;
	}

	snprintf(computer, sizeof(computer), "%s", name);
	for (char *c = computer; *c; c++)
		if (*c == '_')
			*c = '-';

	keys = json_array();
	for (size_t i = 0; i < req->nssh_keys; i++)
		json_array_append_new(
			keys, json_pack("{s:s,s:s}", "path",
			                "/home/" AZURE_ADMIN_USER
			                "/.ssh/authorized_keys",
			                "keyData", req->ssh_keys[i]));
	lin = json_pack("{s:b,s:{s:o}}", "disablePasswordAuthentication", 1,
	                "ssh", "publicKeys", keys);
	os = json_pack("{s:s,s:s,s:o}", "computerName", computer,
	               "adminUsername", AZURE_ADMIN_USER, "linuxConfiguration",
	               lin);
	if (req->user_data && *req->user_data) {
		char *b64 = drvc_b64(req->user_data, strlen(req->user_data));
		if (!b64)
			abort();
		json_object_set_new(os, "customData", json_string(b64));
		free(b64);
	}

	nicname = drvc_xasprintf("%s-nic", name);
	pipname = drvc_xasprintf("%s-pip", name);
	ipcfg = json_pack("{s:s,s:{s:b,s:{s:s}}}", "name", "ipconfig1",
	                  "properties", "primary", 1, "subnet", "id", p->subnet);
	if (p->public_ip)
		json_object_set_new(
			json_object_get(ipcfg, "properties"),
			"publicIPAddressConfiguration",
			json_pack("{s:s,s:{s:s},s:{s:s,s:s}}", "name", pipname, "sku",
			          "name", "Standard", "properties", "deleteOption",
			          "Delete", "publicIPAllocationMethod", "Static"));
	nic = json_pack("{s:s,s:{s:b,s:s,s:[o]}}", "name", nicname,
	                "properties", "primary", 1, "deleteOption", "Delete",
	                "ipConfigurations", ipcfg);
	free(nicname);
	free(pipname);

	props = json_pack(
		"{s:{s:s},s:{s:o,s:{s:s,s:s,s:{s:s}}},s:o,"
		"s:{s:s,s:[o]}}",
		"hardwareProfile", "vmSize", req->instance_type,
		"storageProfile", "imageReference", img, "osDisk", "createOption",
		"FromImage", "deleteOption", "Delete", "managedDisk",
		"storageAccountType", p->os_disk_type ? p->os_disk_type
		                                      : "StandardSSD_LRS",
		"osProfile", os,
		"networkProfile", "networkApiVersion", "2020-11-01",
		"networkInterfaceConfigurations", nic);
	if (p->os_disk_gb > 0)
		json_object_set_new(
			json_object_get(json_object_get(props, "storageProfile"),
			                "osDisk"),
			"diskSizeGB", json_integer(p->os_disk_gb));
	if (req->capacity == GB_CAPACITY_SPOT) {
		json_object_set_new(props, "priority", json_string("Spot"));
		json_object_set_new(props, "evictionPolicy",
		                    json_string("Deallocate"));
		json_object_set_new(props, "billingProfile",
		                    req->max_price > 0
		                            ? json_pack("{s:f}", "maxPrice",
		                                        req->max_price)
		                            : json_pack("{s:i}", "maxPrice", -1));
	}
	if (p->security_type && *p->security_type)
		json_object_set_new(props, "securityProfile",
		                    json_pack("{s:s}", "securityType",
		                              p->security_type));

	if (!props) {
		json_decref(tags);
		drvc_err(err, GB_ERR_INTERNAL, 0, "BodyBuildFailed",
		         "Azure VM %s: the PUT body could not be built", name);
		return NULL;
	}
	root = json_pack("{s:s,s:o,s:o}", "location", req->region, "tags", tags,
	                 "properties", props);
	if (zone && *zone)
		json_object_set_new(root, "zones", json_pack("[s]", zone));
	s = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(root);
	if (!s)
		abort();
	return s;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

const char *const azure_vm_members[AZURE_VM_NMEMBERS] = {
	[AV_NAME] = "name",
	[AV_VM_ID] = "properties.vmId",
	[AV_LOCATION] = "location",
	[AV_ZONE] = "zones[0]",
	[AV_SIZE] = "properties.hardwareProfile.vmSize",
	[AV_PRIORITY] = "properties.priority",
	[AV_PROV_STATE] = "properties.provisioningState",
	[AV_CREATED] = "properties.timeCreated",
	[AV_NIC] = "properties.networkProfile.networkInterfaces[0].id",
	[AV_STATUSES] = "properties.instanceView.statuses",
	[AV_CODES] = "properties.instanceView.statuses[].code",
	[AV_TAGS] = "tags.*",
};

/* The power state a status code names ("PowerState/running" ->
 * "running"), or cur when it names none. */
static const char *power_of(const char *code, const char *cur)
{
	return code && strncasecmp(code, "PowerState/", 11) == 0 ? code + 11
	                                                         : cur;
}

/* Builds vm from a VM's members as text (v[AV_*], NULL when absent;
 * AV_STATUSES, AV_CODES and AV_TAGS unused): the one place both readers
 * share.  0, or -1 when it has no name. */
static int vm_fill(azure_vm *vm, const char *const *v)
{
	vm->name = or_empty(v[AV_NAME]);
	vm->vm_id = or_empty(v[AV_VM_ID]);
	vm->location = or_empty(v[AV_LOCATION]);
	vm->zone = or_empty(v[AV_ZONE]);
	vm->size = or_empty(v[AV_SIZE]);
	vm->priority = or_empty(v[AV_PRIORITY]);
	vm->prov_state = or_empty(v[AV_PROV_STATE]);
	vm->created_ms = drvc_rfc3339_ms(v[AV_CREATED]);
	if (vm->created_ms < 0)
		vm->created_ms = 0;
	vm->nic_id = or_empty(v[AV_NIC]);
	if (!vm->power)
		vm->power = "";
	return *vm->name ? 0 : -1;
}

int azure_vm_parse(const json_t *o, azure_vm *vm)
{
	const json_t *props = json_object_get(o, "properties");
	const json_t *zones = json_object_get(o, "zones");
	const json_t *statuses, *nics;
	const char *v[AZURE_VM_NMEMBERS] = { 0 };
	json_t *st;
	size_t i;

	memset(vm, 0, sizeof(*vm));
	vm->obj = json_incref((json_t *)o);
	v[AV_NAME] = drvc_jstr(o, "name");
	v[AV_VM_ID] = drvc_jstr(props, "vmId");
	v[AV_LOCATION] = drvc_jstr(o, "location");
	v[AV_ZONE] = json_is_array(zones)
	                     ? json_string_value(json_array_get(zones, 0))
	                     : NULL;
	v[AV_SIZE] = drvc_jpath_str(props, "hardwareProfile.vmSize");
	v[AV_PRIORITY] = drvc_jstr(props, "priority");
	v[AV_PROV_STATE] = drvc_jstr(props, "provisioningState");
	v[AV_CREATED] = drvc_jstr(props, "timeCreated");
	nics = drvc_jpath(props, "networkProfile.networkInterfaces");
	v[AV_NIC] = json_is_array(nics) ? drvc_jstr(json_array_get(nics, 0), "id")
	                                : NULL;
	statuses = drvc_jpath(props, "instanceView.statuses");
	if (json_is_array(statuses)) {
		vm->has_view = 1;
		json_array_foreach(statuses, i, st)
			vm->power = power_of(drvc_jstr(st, "code"), vm->power);
	}
	vm->tags = drvc_json_kv_borrow(json_object_get(o, "tags"), &vm->ntags);
	return vm_fill(vm, v);
}

int azure_vm_scan(const drvc_scan_elem *e, azure_vm *vm)
{
	const char *v[AZURE_VM_NMEMBERS];
	const gb_kv *codes;
	size_t n;

	memset(vm, 0, sizeof(*vm));
	for (size_t i = 0; i < AZURE_VM_NMEMBERS; i++)
		v[i] = drvc_scan_str(e, i);
	if (drvc_scan_kind(e, AV_STATUSES) == DRVC_SCAN_ARRAY) {
		vm->has_view = 1;
		codes = drvc_scan_kv(e, AV_CODES, &n);
		for (size_t i = 0; i < n; i++)
			vm->power = power_of(codes[i].value, vm->power);
	}
	vm->tags = (gb_kv *)drvc_scan_kv(e, AV_TAGS, &vm->ntags);
	vm->tags_borrowed = 1;
	return vm_fill(vm, v);
}

void azure_vm_free(azure_vm *vm)
{
	json_decref(vm->obj);
	if (!vm->tags_borrowed)
		free(vm->tags);
	free(vm->own_name);
	memset(vm, 0, sizeof(*vm));
}

const char *azure_vm_tag(const azure_vm *vm, const char *key)
{
	/* Azure tag names are case-insensitive. */
	for (size_t i = 0; i < vm->ntags; i++)
		if (strcasecmp(vm->tags[i].key, key) == 0)
			return vm->tags[i].value;
	return NULL;
}

/* provisioningState x PowerState -> gb state (README.md has the table). */
gb_instance_state azure_vm_state(const azure_vm *vm, const char **reason)
{
	const char *ps = vm->prov_state, *pw = vm->power;
	int spot = strcasecmp(vm->priority, "Spot") == 0;
	*reason = NULL;
	if (strcasecmp(ps, "Deleting") == 0)
		return GB_INST_STOPPING;
	if (strcasecmp(ps, "Failed") == 0) {
		*reason = "Azure.ProvisioningFailed";
		return GB_INST_FAILED;
	}
	if (strcasecmp(pw, "deallocated") == 0 ||
	    strcasecmp(pw, "deallocating") == 0) {
		if (spot) {
			*reason = "Azure.SpotEviction";
			return GB_INST_PREEMPTED;
		}
		*reason = "Azure.Deallocated";
		return GB_INST_FAILED;
	}
	if (strcasecmp(pw, "stopped") == 0 || strcasecmp(pw, "stopping") == 0) {
		*reason = "Azure.Stopped";
		return GB_INST_FAILED;
	}
	if (strcasecmp(ps, "Creating") == 0 || strcasecmp(ps, "Updating") == 0 ||
	    strcasecmp(ps, "Migrating") == 0)
		return GB_INST_PENDING;
	if (strcasecmp(pw, "running") == 0)
		return GB_INST_RUNNING;
	if (strcasecmp(pw, "starting") == 0)
		return GB_INST_PENDING;
	/* No power state yet: pending only when ARM says the VM exists and
	 * showed its instance view; otherwise we cannot tell. */
	if (pw[0] == '\0')
		return strcasecmp(ps, "Succeeded") == 0 && vm->has_view
		               ? GB_INST_PENDING
		               : GB_INST_UNKNOWN;
	return GB_INST_UNKNOWN;
}

int azure_parse_nic(const json_t *o, char **priv, char **pub_id)
{
	const json_t *cfgs = drvc_jpath(o, "properties.ipConfigurations");
	const json_t *cfg = NULL, *v;
	size_t i;
	*priv = NULL;
	*pub_id = NULL;
	if (!json_is_array(cfgs))
		return -1;
	json_array_foreach(cfgs, i, v) {
		json_t *pr = drvc_jpath(v, "properties.primary");
		if (!cfg || json_is_true(pr))
			cfg = v;
		if (json_is_true(pr))
			break;
	}
	if (!cfg)
		return -1;
	*priv = drvc_xstrdup(drvc_jpath_str(cfg, "properties.privateIPAddress"));
	*pub_id = drvc_xstrdup(
		drvc_jpath_str(cfg, "properties.publicIPAddress.id"));
	return *priv ? 0 : -1;
}
