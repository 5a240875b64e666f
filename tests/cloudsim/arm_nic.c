/*
 * arm_nic.c -- Microsoft.Network/networkInterfaces as resources of their
 * own: PUT (201 new, 200 update), GET, DELETE (200, 204 when absent; 400
 * NicInUse while a VM uses it), list; the public IP a VM-managed NIC
 * carries (GET publicIPAddresses/{name}); and the VM side: a VM PUT with
 * networkProfile.networkInterfaceConfigurations creates one NIC per
 * configuration, named "<vm>-<configuration name>", a VM PUT with
 * networkInterfaces[{id}] must name existing NICs (400
 * InvalidResourceReference otherwise), and each NIC's deleteOption
 * (Delete, or Detach -- the default) decides whether it goes when its VM
 * is gone.
 *
 * Attachment is settled lazily, as every state in cloudsim is a function
 * of time: a NIC remembers its VM's map key and vmId; once that VM is
 * gone (deleted, or evicted with evictionPolicy Delete) the NIC is
 * removed (deleteOption Delete) or detached (Detach) the next time anyone
 * looks.  Everything here runs under sim_g.mu.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"

typedef struct az_nic {
	char *key;          /* "sub|rg|name", lowercase */
	char *name;
	char *rg;
	char *region;
	char *ipc_name;     /* the (first) IP configuration's name */
	json_t *subnet;     /* {"id": ...} (owned) */
	json_t *tags;       /* owned; NULL = none */
	char priv_ip[16], pub_ip[16];
	char *pip_name;     /* public IP created with it, or NULL */
	char *vm_key;       /* attached VM: sim_g.insts key, or NULL */
	char *vm_id;        /* its vmId */
	char *vm_name;
	int primary;
	int delete_with_vm; /* deleteOption Delete */
	int64_t seq;
} az_nic;

static sim_map nics;    /* key -> az_nic */

static void nic_free(void *p)
{
	az_nic *n = p;
	if (!n)
		return;
	free(n->key);
	free(n->name);
	free(n->rg);
	free(n->region);
	free(n->ipc_name);
	json_decref(n->subnet);
	json_decref(n->tags);
	free(n->pip_name);
	free(n->vm_key);
	free(n->vm_id);
	free(n->vm_name);
	free(n);
}

void sim_azure_nics_free(void)
{
	sim_map_free(&nics, nic_free);
}

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static char *nic_key(const char *rg, const char *name)
{
	char *k = gb_xasprintf("%s|%s|%s", sim_g.sc.az_sub, rg, name);
	for (char *p = k; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return k;
}

static char *nic_id(const az_nic *n)
{
	return gb_xasprintf("/subscriptions/%s/resourceGroups/%s/providers/"
	                    "Microsoft.Network/networkInterfaces/%s",
	                    sim_g.sc.az_sub, n->rg, n->name);
}

static char *pip_id(const az_nic *n)
{
	return gb_xasprintf("/subscriptions/%s/resourceGroups/%s/providers/"
	                    "Microsoft.Network/publicIPAddresses/%s",
	                    sim_g.sc.az_sub, n->rg, n->pip_name);
}

static char *vm_id_of(const az_ctx *c, const char *rg, const char *name)
{
	(void)c;
	return gb_xasprintf("/subscriptions/%s/resourceGroups/%s/providers/"
	                    "Microsoft.Compute/virtualMachines/%s",
	                    sim_g.sc.az_sub, rg, name);
}

char *az_managed_nic_name(const char *vm, const char *config)
{
	return gb_xasprintf("%s-%s", vm, config);
}

int az_subnet_ok(const char *id)
{
	char *pre = gb_xasprintf("/subscriptions/%s/resourceGroups/",
	                         sim_g.sc.az_sub);
	int ok = strncasecmp(id, pre, strlen(pre)) == 0 &&
	         strstr(id, "/providers/Microsoft.Network/virtualNetworks/") &&
	         strstr(id, "/subnets/");
	free(pre);
	return ok;
}

static void detach(az_nic *n)
{
	free(n->vm_key);
	free(n->vm_id);
	free(n->vm_name);
	n->vm_key = n->vm_id = n->vm_name = NULL;
}

static void nic_remove(az_nic *n)
{
	sim_map_del(&nics, n->key);
	nic_free(n);
}

/* The VM the NIC is attached to, when it still exists; otherwise the NIC
 * is detached or (deleteOption Delete) removed: returns NULL and sets
 * *gone when removed. */
static sim_inst *settle(az_nic *n, int64_t now, int *gone)
{
	sim_inst *in;
	*gone = 0;
	if (!n->vm_key)
		return NULL;
	in = sim_inst_find(n->vm_key);
	if (in && in->id && strcmp(in->id, n->vm_id) == 0 &&
	    sim_inst_phase(in, now) != SIM_PH_GONE)
		return in;
	if (n->delete_with_vm) {
		nic_remove(n);
		*gone = 1;
		return NULL;
	}
	detach(n);
	return NULL;
}

/* The VM a settled NIC is attached to (NULL when detached); changes
 * nothing, so n stays valid. */
static sim_inst *attached_vm(const az_nic *n, int64_t now)
{
	sim_inst *in;
	if (!n->vm_key)
		return NULL;
	in = sim_map_get(&sim_g.insts, n->vm_key);
	if (in && in->id && strcmp(in->id, n->vm_id) == 0 &&
	    sim_inst_phase(in, now) != SIM_PH_GONE)
		return in;
	return NULL;
}

/* Settled NIC by (rg, name), or NULL. */
static az_nic *nic_find(const char *rg, const char *name, int64_t now)
{
	char *k = nic_key(rg, name);
	az_nic *n = sim_map_get(&nics, k);
	int gone = 0;
	free(k);
	if (n)
		settle(n, now, &gone);
	return gone ? NULL : n;
}

/* Settles every NIC (drops those that went with their VM). */
static void settle_all(int64_t now)
{
	gb_strv keys = {NULL, 0};
	for (size_t i = 0; i < nics.cap; i++) {
		const char *k;
		if (sim_map_slot(&nics, i, &k))
			gb_strv_push(&keys, k);
	}
	for (size_t i = 0; i < keys.n; i++) {
		az_nic *n = sim_map_get(&nics, keys.v[i]);
		int gone;
		if (n)
			settle(n, now, &gone);
	}
	gb_strv_free(&keys);
}

static az_nic *nic_new(const char *rg, const char *name, const char *region,
                       const sim_inst *first_of)
{
	az_nic *n = gb_xcalloc(1, sizeof(*n));
	n->key = nic_key(rg, name);
	n->name = gb_xstrdup(name);
	n->rg = gb_xstrdup(rg);
	n->region = gb_xstrdup(region);
	n->seq = ++sim_g.next_seq;
	if (first_of) {
		/* a VM's primary NIC carries the addresses /_sim shows */
		memcpy(n->priv_ip, first_of->priv_ip, sizeof(n->priv_ip));
		memcpy(n->pub_ip, first_of->pub_ip, sizeof(n->pub_ip));
	} else {
		sim_ips(n->seq, n->priv_ip, n->pub_ip);
	}
	sim_map_put(&nics, n->key, n);
	return n;
}

/* ------------------------------------------------------------------ */
/* shapes                                                              */

static json_t *nic_json(const az_nic *n, const sim_inst *vm)
{
	char *id = nic_id(n);
	char *ipc_id = gb_xasprintf("%s/ipConfigurations/%s", id,
	                            n->ipc_name ? n->ipc_name : "ipconfig1");
	char mac[24];
	json_t *ipprops = json_pack("{s:s,s:s,s:s,s:o,s:b,s:s}",
	                            "provisioningState", "Succeeded",
	                            "privateIPAddress", n->priv_ip,
	                            "privateIPAllocationMethod", "Dynamic",
	                            "subnet",
	                            n->subnet ? json_deep_copy(n->subnet)
	                                      : json_object(),
	                            "primary", 1,
	                            "privateIPAddressVersion", "IPv4");
	json_t *props, *o;
	if (n->pip_name) {
		char *p = pip_id(n);
		json_object_set_new(ipprops, "publicIPAddress",
		                    json_pack("{s:s}", "id", p));
		free(p);
	}
	snprintf(mac, sizeof(mac), "00-0D-3A-%02X-%02X-%02X",
	         (unsigned)((n->seq >> 16) & 0xff),
	         (unsigned)((n->seq >> 8) & 0xff), (unsigned)(n->seq & 0xff));
	props = json_pack("{s:s,s:[{s:s,s:s,s:s,s:o}],s:s,s:s,s:b}",
	                  "provisioningState", "Succeeded", "ipConfigurations",
	                  "name", n->ipc_name ? n->ipc_name : "ipconfig1", "id",
	                  ipc_id, "type",
	                  "Microsoft.Network/networkInterfaces/"
	                  "ipConfigurations",
	                  "properties", ipprops, "macAddress", mac, "nicType",
	                  "Standard", "enableAcceleratedNetworking", 0);
	if (vm) {
		char *v = vm_id_of(NULL, vm->rg, vm->name);
		json_object_set_new(props, "virtualMachine",
		                    json_pack("{s:s}", "id", v));
		json_object_set_new(props, "primary", json_boolean(n->primary));
		free(v);
	}
	o = json_pack("{s:s,s:s,s:s,s:s,s:o,s:o}", "name", n->name, "id", id,
	              "type", "Microsoft.Network/networkInterfaces",
	              "location", n->region, "tags",
	              n->tags ? json_deep_copy(n->tags) : json_object(),
	              "properties", props);
	free(id);
	free(ipc_id);
	return o;
}

static json_t *pip_json(const az_nic *n)
{
	char *id = pip_id(n), *nic = nic_id(n);
	char *ipc = gb_xasprintf("%s/ipConfigurations/%s", nic,
	                         n->ipc_name ? n->ipc_name : "ipconfig1");
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,"
	                      "s:s,s:{s:s}}}",
	                      "name", n->pip_name, "id", id, "type",
	                      "Microsoft.Network/publicIPAddresses", "location",
	                      n->region, "sku", "name", "Standard", "tier",
	                      "Regional", "properties", "provisioningState",
	                      "Succeeded", "publicIPAddressVersion", "IPv4",
	                      "publicIPAllocationMethod", "Static", "ipAddress",
	                      n->pub_ip, "ipConfiguration", "id", ipc);
	free(id);
	free(nic);
	free(ipc);
	return o;
}

/* ------------------------------------------------------------------ */
/* errors                                                              */

/* Network RP's 400 for a reference to something missing (or in another
 * region), with the NotFound detail. */
static void bad_reference(az_ctx *c, const char *ref, const char *by)
{
	char *msg = gb_xasprintf("Resource %s referenced by resource %s was "
	                         "not found. Please make sure that the "
	                         "referenced resource exists, and that both "
	                         "resources are in the same region.", ref, by);
	char *det = gb_xasprintf("Resource %s not found.", ref);
	sim_resp_json(c->resp, 400,
	              json_pack("{s:{s:s,s:s,s:[{s:s,s:s}]}}", "error", "code",
	                        "InvalidResourceReference", "message", msg,
	                        "details", "code", "NotFound", "message",
	                        det));
	free(msg);
	free(det);
}

static void nic_in_use(az_ctx *c, const az_nic *n, const sim_inst *vm)
{
	char *id = nic_id(n), *v = vm_id_of(c, vm->rg, vm->name);
	az_error(c, 400, "NicInUse",
	         "Network Interface %s is used by existing resource %s. In "
	         "order to delete the network interface, it must be "
	         "dissociated from the resource. To learn more, see "
	         "aka.ms/deletenic.", id, v);
	free(id);
	free(v);
}

static int too_many(az_ctx *c, size_t more)
{
	if ((int64_t)(nics.n + more) <= sim_g.sc.max_instances)
		return 0;
	az_error(c, 409, "OperationNotAllowed",
	         "cloudsim holds its maximum of %lld network interfaces "
	         "(limits.max_instances).",
	         (long long)sim_g.sc.max_instances);
	return -1;
}

/* ------------------------------------------------------------------ */
/* the VM side                                                         */

/* "/subscriptions/S/resourceGroups/RG/providers/Microsoft.Network/
 * networkInterfaces/NAME" -> rg, name (caller frees); -1 when not such an
 * id of this subscription. */
static int parse_nic_id(const char *id, char **rg, char **name)
{
	static const char mid[] = "/providers/Microsoft.Network/"
	                          "networkInterfaces/";
	char *pre = gb_xasprintf("/subscriptions/%s/resourceGroups/",
	                         sim_g.sc.az_sub);
	size_t pl = strlen(pre);
	const char *r, *slash, *nm;
	int ok = strncasecmp(id, pre, pl) == 0;
	free(pre);
	if (!ok)
		return -1;
	r = id + pl;
	slash = strchr(r, '/');
	if (!slash || slash == r ||
	    strncasecmp(slash, mid, sizeof(mid) - 1) != 0)
		return -1;
	nm = slash + sizeof(mid) - 1;
	if (!*nm || strchr(nm, '/'))
		return -1;
	*rg = gb_xstrndup(r, (size_t)(slash - r));
	*name = gb_xstrdup(nm);
	return 0;
}

static const json_t *net_profile(const json_t *body)
{
	return json_object_get(json_object_get(body, "properties"),
	                       "networkProfile");
}

static int uses_configs(const json_t *np)
{
	const json_t *v = json_object_get(np, "networkInterfaceConfigurations");
	return json_is_array(v) && json_array_size(v) > 0;
}

/* A NIC that another live VM holds refuses to be taken. */
static int held_elsewhere(az_ctx *c, az_nic *n, const char *vm_key)
{
	sim_inst *vm = attached_vm(n, c->now);
	if (!vm || strcmp(n->vm_key, vm_key) == 0)
		return 0;
	nic_in_use(c, n, vm);
	return 1;
}

int arm_vm_nics_check(az_ctx *c, const json_t *body, const char *vm_key,
                      const char *loc)
{
	const json_t *np = net_profile(body), *v;
	size_t i, fresh = 0;
	if (uses_configs(np)) {
		json_array_foreach(json_object_get(np,
		                                   "networkInterfaceConfigurations"),
		                   i, v) {
			char *nm = az_managed_nic_name(c->name, jstr(v, "name"));
			az_nic *n = nic_find(c->rg, nm, c->now);
			free(nm);
			if (!n)
				fresh++;
			else if (held_elsewhere(c, n, vm_key))
				return -1;
		}
		return too_many(c, fresh);
	}
	json_array_foreach(json_object_get(np, "networkInterfaces"), i, v) {
		const char *id = jstr(v, "id");
		char *rg = NULL, *name = NULL;
		az_nic *n = NULL;
		if (id && parse_nic_id(id, &rg, &name) == 0 &&
		    strcasecmp(rg, sim_g.sc.az_rg) == 0)
			n = nic_find(rg, name, c->now);
		free(rg);
		free(name);
		if (!n || strcmp(n->region, loc) != 0) {
			char *by = vm_id_of(c, c->rg, c->name);
			bad_reference(c, id ? id : "(no id)", by);
			free(by);
			return -1;
		}
		if (held_elsewhere(c, n, vm_key))
			return -1;
	}
	return 0;
}

static void attach(az_nic *n, const sim_inst *in, int primary,
                   const char *delete_option)
{
	detach(n);
	n->vm_key = gb_xstrdup(in->key);
	n->vm_id = gb_xstrdup(in->id);
	n->vm_name = gb_xstrdup(in->name);
	n->primary = primary;
	n->delete_with_vm = delete_option &&
	                    strcasecmp(delete_option, "Delete") == 0;
}

void arm_vm_nics_bind(az_ctx *c, const sim_inst *in, const json_t *body)
{
	const json_t *np = net_profile(body), *v;
	size_t i;
	int any_primary = 0;
	if (uses_configs(np)) {
		const json_t *cfgs =
			json_object_get(np, "networkInterfaceConfigurations");
		json_array_foreach(cfgs, i, v)
			any_primary |= json_is_true(json_object_get(
				json_object_get(v, "properties"), "primary"));
		json_array_foreach(cfgs, i, v) {
			const json_t *cp = json_object_get(v, "properties");
			const json_t *ipc = json_array_get(
				json_object_get(cp, "ipConfigurations"), 0);
			const json_t *ipp = json_object_get(ipc, "properties");
			const char *pipc = jstr(json_object_get(
				ipp, "publicIPAddressConfiguration"), "name");
			char *nm = az_managed_nic_name(in->name, jstr(v, "name"));
			az_nic *n = nic_find(in->rg, nm, c->now);
			int primary = any_primary
			                      ? json_is_true(json_object_get(
			                                cp, "primary"))
			                      : i == 0;
			if (!n)
				n = nic_new(in->rg, nm, in->region,
				            primary ? in : NULL);
			free(nm);
			free(n->ipc_name);
			n->ipc_name = gb_xstrdup(jstr(ipc, "name"));
			json_decref(n->subnet);
			n->subnet = json_deep_copy(json_object_get(ipp,
			                                           "subnet"));
			free(n->pip_name);
			n->pip_name = pipc ? az_managed_nic_name(in->name, pipc)
			                   : NULL;
			attach(n, in, primary, jstr(cp, "deleteOption"));
		}
		return;
	}
	json_array_foreach(json_object_get(np, "networkInterfaces"), i, v) {
		const json_t *p = json_object_get(v, "properties");
		const char *id = jstr(v, "id");
		char *rg = NULL, *name = NULL;
		az_nic *n = NULL;
		if (id && parse_nic_id(id, &rg, &name) == 0)
			n = nic_find(rg, name, c->now);
		free(rg);
		free(name);
		if (n)
			attach(n, in,
			       json_is_true(json_object_get(p, "primary")) ||
			               i == 0,
			       jstr(p, "deleteOption"));
	}
}

json_t *az_vm_nic_refs(const sim_inst *in)
{
	const json_t *np = net_profile(in->az_body), *v;
	json_t *out = json_array();
	size_t i;
	int any_primary = 0;
	if (!uses_configs(np))
		return out;
	json_array_foreach(json_object_get(np,
	                                   "networkInterfaceConfigurations"),
	                   i, v)
		any_primary |= json_is_true(json_object_get(
			json_object_get(v, "properties"), "primary"));
	json_array_foreach(json_object_get(np,
	                                   "networkInterfaceConfigurations"),
	                   i, v) {
		const json_t *cp = json_object_get(v, "properties");
		char *nm = az_managed_nic_name(in->name, jstr(v, "name"));
		char *id = gb_xasprintf("/subscriptions/%s/resourceGroups/%s/"
		                        "providers/Microsoft.Network/"
		                        "networkInterfaces/%s",
		                        sim_g.sc.az_sub, in->rg, nm);
		const char *del = jstr(cp, "deleteOption");
		int primary = any_primary
		                      ? json_is_true(json_object_get(cp,
		                                                     "primary"))
		                      : i == 0;
		json_array_append_new(
			out, json_pack("{s:s,s:{s:b,s:s}}", "id", id,
			               "properties", "primary", primary,
			               "deleteOption", del ? del : "Detach"));
		free(nm);
		free(id);
	}
	return out;
}

/* ------------------------------------------------------------------ */
/* the NIC resource                                                    */

static int nic_name_ok(const char *n)
{
	size_t len = strlen(n);
	if (len < 1 || len > 80 || !isalnum((unsigned char)n[0]) ||
	    !(isalnum((unsigned char)n[len - 1]) || n[len - 1] == '_'))
		return 0;
	for (const char *p = n; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' &&
		    *p != '.')
			return 0;
	return 1;
}

void arm_nic_put(az_ctx *c)
{
	json_t *body;
	const json_t *ipcs, *ipc, *tags;
	const char *loc;
	char region[64];
	az_nic *n;
	int created = 0;
	if (!nic_name_ok(c->name)) {
		az_error(c, 400, "InvalidResourceName",
		         "Resource name %s is invalid. The name can be up to 80 "
		         "characters long. It must begin with a word character, "
		         "and it must end with a word character or with '_'. "
		         "The name may contain word characters or '.', '-', "
		         "'_'.", c->name);
		return;
	}
	body = az_body_object(c);
	if (!body)
		return;
	loc = jstr(body, "location");
	if (!loc || !*loc) {
		az_error(c, 400, "LocationRequired",
		         "The location property is required for this "
		         "definition.");
		goto out;
	}
	az_norm_location(loc, region, sizeof(region));
	if (!sim_region_find(SIM_AZURE, region)) {
		az_error(c, 400, "LocationNotAvailableForResourceType",
		         "The provided location '%s' is not available for "
		         "resource type 'Microsoft.Network/networkInterfaces'.",
		         loc);
		goto out;
	}
	ipcs = json_object_get(json_object_get(body, "properties"),
	                       "ipConfigurations");
	ipc = json_array_get(ipcs, 0);
	if (!json_is_array(ipcs) || !json_is_object(ipc) || !jstr(ipc, "name")) {
		az_error(c, 400, "InvalidRequestFormat",
		         "Cannot parse the request: a network interface needs "
		         "properties.ipConfigurations, an array of at least one "
		         "IP configuration with a name.");
		goto out;
	}
	{
		const char *sub = jstr(json_object_get(json_object_get(ipc,
		                                                       "properties"),
		                                       "subnet"),
		                       "id");
		if (!sub || !az_subnet_ok(sub)) {
			char *by = gb_xasprintf(
				"/subscriptions/%s/resourceGroups/%s/providers/"
				"Microsoft.Network/networkInterfaces/%s",
				sim_g.sc.az_sub, c->rg, c->name);
			bad_reference(c, sub ? sub : "(no subnet id)", by);
			free(by);
			goto out;
		}
	}
	tags = json_object_get(body, "tags");
	if (tags && (!json_is_object(tags) || json_object_size(tags) > 50)) {
		az_error(c, 400, "InvalidTag",
		         "Tags must be an object of at most 50 string values.");
		goto out;
	}
	n = nic_find(c->rg, c->name, c->now);
	if (n && strcmp(n->region, region) != 0) {
		az_error(c, 400, "InvalidResourceLocation",
		         "The resource '%s' already exists in location '%s' in "
		         "resource group '%s'. A resource with the same name "
		         "cannot be created in location '%s'.", c->name,
		         n->region, c->rg, region);
		goto out;
	}
	if (!n) {
		if (too_many(c, 1) != 0)
			goto out;
		n = nic_new(sim_g.sc.az_rg, c->name, region, NULL);
		created = 1;
	}
	free(n->ipc_name);
	n->ipc_name = gb_xstrdup(jstr(ipc, "name"));
	json_decref(n->subnet);
	n->subnet = json_deep_copy(json_object_get(
		json_object_get(ipc, "properties"), "subnet"));
	json_decref(n->tags);
	n->tags = tags ? json_deep_copy(tags) : NULL;
	sim_resp_json(c->resp, created ? 201 : 200,
	              nic_json(n, attached_vm(n, c->now)));
out:
	json_decref(body);
}

void arm_nic_get(az_ctx *c, const char *name)
{
	az_nic *n = nic_find(c->rg, name, c->now);
	if (!n) {
		az_not_found(c, "Microsoft.Network/networkInterfaces", name);
		return;
	}
	sim_resp_json(c->resp, 200, nic_json(n, attached_vm(n, c->now)));
}

void arm_nic_delete(az_ctx *c)
{
	az_nic *n = nic_find(c->rg, c->name, c->now);
	sim_inst *vm;
	if (!n) {
		sim_resp_empty(c->resp, 204);
		return;
	}
	vm = attached_vm(n, c->now);
	if (vm) {
		nic_in_use(c, n, vm);
		return;
	}
	nic_remove(n);
	sim_resp_empty(c->resp, 200);
}

static int by_name(const void *a, const void *b)
{
	const az_nic *x = *(az_nic *const *)a, *y = *(az_nic *const *)b;
	return strcasecmp(x->name, y->name);
}

void arm_nic_list(az_ctx *c)
{
	az_nic **v;
	size_t k = 0;
	json_t *arr = json_array();
	settle_all(c->now);
	v = gb_xcalloc(nics.n + 1, sizeof(*v));
	for (size_t i = 0; i < nics.cap; i++) {
		az_nic *n = sim_map_slot(&nics, i, NULL);
		if (n && strcasecmp(n->rg, c->rg) == 0)
			v[k++] = n;
	}
	qsort(v, k, sizeof(*v), by_name);
	for (size_t i = 0; i < k; i++)
		json_array_append_new(arr,
		                      nic_json(v[i], attached_vm(v[i], c->now)));
	free(v);
	sim_resp_json(c->resp, 200, json_pack("{s:o}", "value", arr));
}

void arm_pip_get(az_ctx *c, const char *name)
{
	settle_all(c->now);
	for (size_t i = 0; i < nics.cap; i++) {
		az_nic *n = sim_map_slot(&nics, i, NULL);
		if (n && n->pip_name && strcasecmp(n->rg, c->rg) == 0 &&
		    strcasecmp(n->pip_name, name) == 0) {
			sim_resp_json(c->resp, 200, pip_json(n));
			return;
		}
	}
	az_not_found(c, "Microsoft.Network/publicIPAddresses", name);
}

json_t *sim_azure_nics_json(void)
{
	int64_t now = sim_now();
	json_t *arr = json_array();
	size_t detached = 0;
	settle_all(now);
	for (size_t i = 0; i < nics.cap; i++) {
		az_nic *n = sim_map_slot(&nics, i, NULL);
		sim_inst *vm;
		if (!n)
			continue;
		vm = attached_vm(n, now);
		detached += vm == NULL;
		json_array_append_new(
			arr, json_pack("{s:s,s:s,s:s,s:s?,s:s}", "name", n->name,
			               "resource_group", n->rg, "region",
			               n->region, "vm", vm ? vm->name : NULL,
			               "delete_option",
			               n->delete_with_vm ? "Delete" : "Detach"));
	}
	return json_pack("{s:I,s:I,s:o}", "count", (json_int_t)json_array_size(arr),
	                 "detached", (json_int_t)detached, "nics", arr);
}
