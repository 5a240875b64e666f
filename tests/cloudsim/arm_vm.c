/*
 * arm_vm.c -- Microsoft.Compute/virtualMachines: PUT by name (201 for a
 * new VM, 200 for a repeat, 412 for a repeat with If-None-Match: *; 409
 * PropertyChangeNotAllowed when an immutable property changes), GET (optionally $expand=instanceView),
 * DELETE (202, or 204 when already gone), list with nextLink paging, and
 * the long-running operations behind Azure-AsyncOperation / Location.
 *
 * Quota is checked synchronously (409 OperationNotAllowed); a capacity
 * shortage surfaces later: the operation ends Failed (AllocationFailed,
 * ZonalAllocationFailed, or SkuNotAvailable for Spot) and the VM is left
 * with provisioningState Failed until it is deleted.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"

char *az_op_url(const az_ctx *c, const sim_op *op, int monitor)
{
	return gb_xasprintf("%s/subscriptions/%s/providers/Microsoft.Compute/"
	                    "locations/%s/operations/%s?%sapi-version=%s",
	                    sim_g.url[1], sim_g.sc.az_sub, op->zone, op->id,
	                    monitor ? "monitor=true&" : "", c->api);
}

static void op_headers(az_ctx *c, const sim_op *op)
{
	char *a = az_op_url(c, op, 0), *l = az_op_url(c, op, 1);
	int64_t left = op->t_done - c->now;
	sim_resp_header(c->resp, "Azure-AsyncOperation", a);
	sim_resp_header(c->resp, "Location", l);
	if (left >= 1000) {
		char ra[24];
		int64_t s = (left + 999) / 1000;
		snprintf(ra, sizeof(ra), "%lld", (long long)(s > 10 ? 10 : s));
		sim_resp_header(c->resp, "Retry-After", ra);
	}
	free(a);
	free(l);
}

static sim_op *new_op(az_ctx *c, const char *kind, const sim_inst *in,
                      int64_t done)
{
	char id[37];
	sim_op *op;
	sim_uuid(id);
	op = sim_op_new(SIM_AZURE, id);
	op->kind = gb_xstrdup(kind);
	op->project = gb_xstrdup(sim_g.sc.az_sub);
	op->zone = gb_xstrdup(in->region);
	op->target = gb_xstrdup(in->key);
	op->target_id = gb_xstrdup(in->id);
	op->t_start = c->now;
	op->t_done = done > c->now ? done : c->now;
	op->t_purge = op->t_done + 3600 * 1000;
	return op;
}

static int valid_name(const char *n)
{
	size_t len = strlen(n);
	if (len < 1 || len > 64 || n[0] == '_' || n[len - 1] == '.' ||
	    n[len - 1] == '-')
		return 0;
	for (const char *p = n; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' &&
		    *p != '.')
			return 0;
	return 1;
}

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* If-None-Match: * -- create only, never update. */
static int if_none_match_any(const az_ctx *c)
{
	const char *v = sim_req_header(c->req, "If-None-Match");
	return v && strcmp(v, "*") == 0;
}

/* The properties a re-PUT may not change. */
static const char *immutable_diff(const json_t *a, const json_t *b)
{
	static const char *const paths[][3] = {
		{"location", NULL, NULL},
		{"properties", "hardwareProfile", "vmSize"},
		{"properties", "priority", NULL},
		{"properties", "evictionPolicy", NULL},
		{"properties", "osProfile", "computerName"},
		{"properties", "osProfile", "adminUsername"},
	};
	static const char *const names[] = {
		"location", "hardwareProfile.vmSize", "priority",
		"evictionPolicy", "osProfile.computerName",
		"osProfile.adminUsername",
	};
	for (size_t i = 0; i < GB_ARRAY_LEN(paths); i++) {
		const json_t *x = a, *y = b;
		for (int k = 0; k < 3 && paths[i][k]; k++) {
			x = json_object_get(x, paths[i][k]);
			y = json_object_get(y, paths[i][k]);
		}
		if (x && y && json_is_string(x) && json_is_string(y)) {
			if (strcasecmp(json_string_value(x),
			               json_string_value(y)) != 0)
				return names[i];
		} else if (!json_equal((json_t *)x, (json_t *)y) && (x || y)) {
			return names[i];
		}
	}
	{
		const json_t *x = json_object_get(a, "zones");
		const json_t *y = json_object_get(b, "zones");
		if ((x || y) && !json_equal((json_t *)x, (json_t *)y))
			return "zones";
		x = json_object_get(json_object_get(json_object_get(a,
		                                                    "properties"),
		                                    "storageProfile"),
		                    "imageReference");
		y = json_object_get(json_object_get(json_object_get(b,
		                                                    "properties"),
		                                    "storageProfile"),
		                    "imageReference");
		if ((x || y) && !json_equal((json_t *)x, (json_t *)y))
			return "imageReference";
	}
	return NULL;
}

typedef struct vm_spec {
	const char *size;
	char loc[64];
	const char *zone;   /* NULL = regional */
	int spot;
	int evict_delete;
	int use_configs;    /* networkInterfaceConfigurations */
	int want_pip;
} vm_spec;

/* Validates the body; 0 ok, else the error response is set. */
static int check_body(az_ctx *c, const json_t *body, vm_spec *s)
{
	const json_t *props, *hw, *sp, *osp, *np, *v;
	const char *loc, *prio, *ev;
	const sim_region *reg;
	memset(s, 0, sizeof(*s));
	loc = jstr(body, "location");
	if (!loc || !*loc) {
		az_error(c, 400, "LocationRequired",
		         "The location property is required for this "
		         "definition.");
		return -1;
	}
	az_norm_location(loc, s->loc, sizeof(s->loc));
	reg = sim_region_find(SIM_AZURE, s->loc);
	if (!reg) {
		gb_buf l = GB_BUF_INIT;
		for (size_t i = 0; i < sim_g.regions[SIM_AZURE].n; i++) {
			if (i)
				gb_buf_puts(&l, ",");
			gb_buf_puts(&l, sim_g.regions[SIM_AZURE].v[i].name);
		}
		az_error(c, 400, "LocationNotAvailableForResourceType",
		         "The provided location '%s' is not available for "
		         "resource type 'Microsoft.Compute/virtualMachines'. "
		         "List of available regions for the resource type is "
		         "'%s'.", loc, gb_buf_str(&l));
		gb_buf_free(&l);
		return -1;
	}
	props = json_object_get(body, "properties");
	if (!json_is_object(props)) {
		az_error(c, 400, "InvalidRequestContent",
		         "The request content was invalid and could not be "
		         "deserialized: 'Required property 'properties' not "
		         "found in JSON.'");
		return -1;
	}
	hw = json_object_get(props, "hardwareProfile");
	s->size = jstr(hw, "vmSize");
	if (!s->size || !*s->size) {
		az_error_target(c, 400, "InvalidParameter", "vmSize",
		                "Required parameter 'hardwareProfile.vmSize' "
		                "is missing (null).");
		return -1;
	}
	sp = json_object_get(props, "storageProfile");
	if (!json_is_object(sp) ||
	    (!json_is_object(json_object_get(sp, "imageReference")) &&
	     !(jstr(json_object_get(sp, "osDisk"), "createOption") &&
	       strcasecmp(jstr(json_object_get(sp, "osDisk"), "createOption"),
	                  "Attach") == 0))) {
		az_error_target(c, 400, "InvalidParameter", "imageReference",
		                "Required parameter "
		                "'storageProfile.imageReference' is missing "
		                "(null).");
		return -1;
	}
	osp = json_object_get(props, "osProfile");
	if (json_is_object(json_object_get(sp, "imageReference")) &&
	    (!json_is_object(osp) || !jstr(osp, "adminUsername"))) {
		az_error_target(c, 400, "InvalidParameter", "adminUsername",
		                "Required parameter 'osProfile.adminUsername' "
		                "is missing (null).");
		return -1;
	}
	np = json_object_get(props, "networkProfile");
	v = json_object_get(np, "networkInterfaceConfigurations");
	if (json_is_array(v) && json_array_size(v) > 0) {
		const json_t *cfg;
		size_t i;
		if (!jstr(np, "networkApiVersion")) {
			az_error_target(c, 400, "InvalidParameter",
			                "networkProfile.networkApiVersion",
			                "The property "
			                "'networkProfile.networkApiVersion' must "
			                "be specified when "
			                "'networkInterfaceConfigurations' is "
			                "specified.");
			return -1;
		}
		json_array_foreach(v, i, cfg) {
			const json_t *ipc = json_array_get(
				json_object_get(json_object_get(cfg, "properties"),
				                "ipConfigurations"),
				0);
			const json_t *ipp = json_object_get(ipc, "properties");
			const json_t *pipc = json_object_get(
				ipp, "publicIPAddressConfiguration");
			const char *subnet =
				jstr(json_object_get(ipp, "subnet"), "id");
			if (!jstr(cfg, "name") || !ipc || !jstr(ipc, "name") ||
			    (pipc && !jstr(pipc, "name"))) {
				az_error_target(c, 400, "InvalidParameter",
				                "networkInterfaceConfigurations",
				                "Each network interface "
				                "configuration, IP configuration "
				                "and public IP address "
				                "configuration needs a 'name'.");
				return -1;
			}
			if (!subnet || !az_subnet_ok(subnet)) {
				az_error(c, 400, "InvalidResourceReference",
				         "Resource %s referenced by resource %s "
				         "was not found. Please make sure that "
				         "the referenced resource exists, and "
				         "that both resources are in the same "
				         "region.",
				         subnet ? subnet : "(no subnet id)",
				         c->req->path);
				return -1;
			}
			if (pipc)
				s->want_pip = 1;
		}
		s->use_configs = 1;
	} else {
		const json_t *nics = json_object_get(np, "networkInterfaces");
		if (!json_is_array(nics) || json_array_size(nics) == 0 ||
		    !jstr(json_array_get(nics, 0), "id")) {
			az_error_target(c, 400, "InvalidParameter",
			                "networkProfile",
			                "Required parameter 'networkProfile' is "
			                "missing (null): give networkInterfaces "
			                "[{id}] or networkApiVersion + "
			                "networkInterfaceConfigurations.");
			return -1;
		}
	}
	prio = jstr(props, "priority");
	if (prio && strcasecmp(prio, "Regular") != 0 &&
	    strcasecmp(prio, "Spot") != 0 && strcasecmp(prio, "Low") != 0) {
		az_error_target(c, 400, "InvalidParameter", "priority",
		                "The value '%s' of parameter 'priority' is not "
		                "valid. Allowed values: Regular, Low, Spot.",
		                prio);
		return -1;
	}
	s->spot = prio && strcasecmp(prio, "Regular") != 0;
	ev = jstr(props, "evictionPolicy");
	if (ev && !s->spot) {
		az_error_target(c, 400, "InvalidParameter", "evictionPolicy",
		                "Eviction policy can be set only on Azure Spot "
		                "Virtual Machines.");
		return -1;
	}
	if (ev && strcasecmp(ev, "Deallocate") != 0 &&
	    strcasecmp(ev, "Delete") != 0) {
		az_error_target(c, 400, "InvalidParameter", "evictionPolicy",
		                "The value '%s' of parameter 'evictionPolicy' "
		                "is not valid. Allowed values: Deallocate, "
		                "Delete.", ev);
		return -1;
	}
	s->evict_delete = ev && strcasecmp(ev, "Delete") == 0;
	if (s->spot && !az_api_at_least(c->api, "2019-03-01")) {
		az_error_target(c, 400, "InvalidParameter", "priority",
		                "Azure Spot requires api-version 2019-03-01 or "
		                "later.");
		return -1;
	}
	v = json_object_get(json_object_get(props, "billingProfile"),
	                    "maxPrice");
	if (v) {
		double mp = json_number_value(v);
		if (!s->spot) {
			az_error_target(c, 400, "InvalidParameter",
			                "billingProfile",
			                "Billing profile can be set only on Azure "
			                "Spot Virtual Machines.");
			return -1;
		}
		if (!json_is_number(v) || (mp != -1 && mp <= 0)) {
			az_error_target(c, 400, "MaxPriceValueInvalid",
			                "billingProfile.maxPrice",
			                "Max price value is invalid. It must be "
			                "-1 or greater than 0.");
			return -1;
		}
	}
	v = json_object_get(body, "tags");
	if (v && (!json_is_object(v) || json_object_size(v) > 50)) {
		az_error(c, 400, "InvalidTag",
		         "Tags must be an object of at most 50 string values.");
		return -1;
	}
	if (v) {
		const char *k;
		json_t *tv;
		json_object_foreach((json_t *)v, k, tv) {
			if (!json_is_string(tv) || strlen(k) > 512 ||
			    strlen(json_string_value(tv)) > 256) {
				az_error(c, 400, "InvalidTag",
				         "The tag '%s' is invalid: names are at "
				         "most 512 characters, values at most 256 "
				         "characters, both strings.", k);
				return -1;
			}
		}
	}
	v = json_object_get(body, "zones");
	if (v) {
		if (!json_is_array(v) || json_array_size(v) != 1 ||
		    !json_is_string(json_array_get(v, 0))) {
			az_error_target(c, 400, "InvalidParameter", "zones",
			                "A virtual machine can be pinned to exactly "
			                "one zone.");
			return -1;
		}
		s->zone = json_string_value(json_array_get(v, 0));
		if (!gb_strv_contains(&reg->zones, s->zone)) {
			az_error_target(c, 400, "InvalidParameter", "zones",
			                "The value '%s' of parameter 'zones' is "
			                "invalid: location '%s' has zones %s%s.",
			                s->zone, s->loc,
			                reg->zones.n ? reg->zones.v[0] : "(none)",
			                reg->zones.n > 1 ? ".." : "");
			return -1;
		}
	}
	return 0;
}

static void sku_unavailable(az_ctx *c, const vm_spec *s)
{
	az_error(c, 409, "SkuNotAvailable",
	         "The requested VM size %s is currently not available in "
	         "location '%s'%s%s%s for subscription '%s'. Please try "
	         "another size or deploy to a different location or zones. "
	         "See https://aka.ms/azureskunotavailable for details.",
	         s->size, s->loc, s->zone ? " zones '" : "",
	         s->zone ? s->zone : "", s->zone ? "'" : "", sim_g.sc.az_sub);
}

/* Quota keys into out[] (owned by the caller) when the VM fits; else the
 * 409 response is set and -1 returned. */
static int check_quota(az_ctx *c, const vm_spec *s, int cores,
                       sim_quse out[3])
{
	char fam[96];
	const char *names[2];
	char *keys[2];
	double limits[2];
	int n = 0;
	sim_azure_family(s->size, fam, sizeof(fam));
	if (s->spot) {
		keys[n] = gb_xasprintf("q|azure|%s|lowpri", s->loc);
		names[n] = "LowPriorityCores";
		limits[n++] = sim_g.sc.q_az_lowpri;
	} else {
		const sim_opval *q = sim_optab_find(&sim_g.sc.q_az_cores, fam);
		keys[n] = gb_xasprintf("q|azure|%s|cores|%s", s->loc, fam);
		names[n] = fam;
		limits[n++] = q && strcmp(q->op, "*") != 0 ? q->a : -1;
		q = sim_optab_find(&sim_g.sc.q_az_cores, "total");
		keys[n] = gb_xasprintf("q|azure|%s|cores|total", s->loc);
		names[n] = "Total Regional Cores";
		limits[n++] = q && strcmp(q->op, "*") != 0 ? q->a : -1;
	}
	for (int i = 0; i < n; i++) {
		int64_t used = sim_count_get(&sim_g.usage, keys[i]);
		if (limits[i] >= 0 && used + cores > (int64_t)limits[i]) {
			sim_count_fault(SIM_AZURE, SIM_F_QUOTA);
			az_error(c, 409, "OperationNotAllowed",
			         "Operation could not be completed as it results "
			         "in exceeding approved %s%s quota. Additional "
			         "details - Deployment Model: Resource Manager, "
			         "Location: %s, Current Limit: %lld, Current "
			         "Usage: %lld, Additional Required: %d, (Minimum) "
			         "New Limit Required: %lld. Submit a request for "
			         "Quota increase at https://aka.ms/"
			         "ProdportalCRP/#blade/Microsoft_Azure_Capacity/"
			         "UsageAndQuota.ReactView by specifying parameters "
			         "listed in the 'Details' section for deployment "
			         "to succeed.", names[i],
			         strcmp(names[i], "Total Regional Cores") == 0
			                 ? ""
			                 : " Cores",
			         s->loc, (long long)limits[i], (long long)used,
			         cores, (long long)(used + cores));
			for (int k = 0; k < n; k++)
				free(keys[k]);
			return -1;
		}
	}
	memset(out, 0, 3 * sizeof(*out));
	for (int i = 0; i < n; i++) {
		out[i].key = keys[i];
		out[i].amount = cores;
	}
	return 0;
}

static void set_quse(sim_inst *in, sim_quse q[3])
{
	for (int i = 0; i < 3; i++) {
		free(in->quse[i].key);
		in->quse[i] = q[i];
	}
}

/* Allocates (or fails) in; returns the operation. */
static sim_op *allocate(az_ctx *c, sim_inst *in, const vm_spec *s,
                        const sim_ctype *t, const sim_creg *r)
{
	char *cap_key = NULL;
	int64_t left = sim_capacity_left(SIM_AZURE, s->loc,
	                                 s->zone ? s->zone : "", s->size,
	                                 s->spot, &cap_key);
	sim_op *op;
	free(in->cap_key);
	in->cap_key = cap_key;
	in->t_create = c->now;
	in->t_running = c->now + sim_g.sc.pending_ms[SIM_AZURE];
	in->t_visible = c->now;
	in->price = sim_creg_price(r, s->zone, s->spot);
	in->vcpus = t->vcpus;
	in->gpus = t->gpus;
	free(in->fail_code);
	free(in->fail_msg);
	in->fail_code = in->fail_msg = NULL;
	in->failed = 0;
	op = new_op(c, "put", in, in->t_running);
	if (left < 1) {
		in->failed = 1;
		sim_count_fault(SIM_AZURE, SIM_F_CAPACITY);
		if (s->spot) {
			in->fail_code = gb_xstrdup("SkuNotAvailable");
			in->fail_msg = gb_xasprintf(
				"The requested VM size %s is currently not "
				"available in location '%s'%s%s%s for "
				"subscription '%s': there is no Spot capacity. "
				"Please try another size or deploy to a "
				"different location or zones. See "
				"https://aka.ms/azureskunotavailable for "
				"details.", s->size, s->loc,
				s->zone ? " zones '" : "", s->zone ? s->zone : "",
				s->zone ? "'" : "", sim_g.sc.az_sub);
		} else if (s->zone) {
			in->fail_code = gb_xstrdup("ZonalAllocationFailed");
			in->fail_msg = gb_xstrdup(
				"Allocation failed. We do not have sufficient "
				"capacity for the requested VM size in this zone. "
				"Read more about improving likelihood of "
				"allocation success at "
				"http://aka.ms/allocation-guidance");
		} else {
			in->fail_code = gb_xstrdup("AllocationFailed");
			in->fail_msg = gb_xstrdup(
				"Allocation failed. We do not have sufficient "
				"capacity for the requested VM size in this "
				"region. Read more about improving likelihood of "
				"allocation success at "
				"http://aka.ms/allocation-guidance");
		}
		op->err_code = gb_xstrdup(in->fail_code);
		op->err_msg = gb_xstrdup(in->fail_msg);
		op->http_err = 409;
		return op;
	}
	sim_inst_allocate(in, c->now);
	return op;
}

json_t *az_body_object(az_ctx *c)
{
	json_error_t je;
	json_t *body = json_loadb(c->req->body, c->req->body_len,
	                          JSON_REJECT_DUPLICATES, &je);
	if (json_is_object(body))
		return body;
	az_error(c, 400, "InvalidRequestContent",
	         "The request content was invalid and could not be "
	         "deserialized: '%s'.",
	         body ? "expected a JSON object" : je.text);
	json_decref(body);
	return NULL;
}

void arm_vm_put(az_ctx *c)
{
	json_t *body;
	vm_spec s;
	const sim_ctype *t;
	const sim_creg *r;
	char *key;
	sim_inst *in;
	sim_op *op;
	sim_quse q[3];
	if (!valid_name(c->name)) {
		az_error(c, 400, "InvalidResourceName",
		         "Resource name %s is invalid. The name can be up to 64 "
		         "characters long. It can contain only letters, "
		         "numbers, periods, underscores and hyphens, must not "
		         "start with an underscore and must not end with a "
		         "period or a hyphen.", c->name);
		return;
	}
	body = az_body_object(c);
	if (!body)
		return;
	if (check_body(c, body, &s) != 0) {
		json_decref(body);
		return;
	}
	key = az_vm_key(sim_g.sc.az_sub, c->rg, c->name);
	in = sim_inst_find(key);
	if (in && sim_inst_phase(in, c->now) == SIM_PH_GONE) {
		in = NULL; /* deleted; purge happens lazily */
	}
	if (in && if_none_match_any(c)) {
		az_error(c, 412, "PreconditionFailed",
		         "The condition specified using HTTP conditional header(s) "
		         "is not met: VM '%s' already exists (If-None-Match: *).",
		         c->name);
		goto out;
	}
	if (in) {
		sim_phase ph = sim_inst_phase(in, c->now);
		const char *diff = immutable_diff(in->az_body, body);
		if (ph == SIM_PH_STOPPING && !in->keep) {
			az_error(c, 409, "OperationNotAllowed",
			         "Operation 'PUT' is not allowed on VM '%s' "
			         "since the VM is marked for deletion. You can "
			         "only retry the Delete operation (or wait for "
			         "an ongoing one to complete).", c->name);
			goto out;
		}
		if (diff) {
			char *msg = gb_xasprintf("Changing property '%s' is not "
			                         "allowed.", diff);
			az_error_target(c, 409, "PropertyChangeNotAllowed", diff,
			                "%s", msg);
			free(msg);
			goto out;
		}
		if (arm_vm_nics_check(c, body, key, s.loc) != 0)
			goto out;
		/* tags (and other mutable properties) follow the new body */
		json_decref(in->az_body);
		in->az_body = json_incref(body);
		gb_kvs_free(&in->tags);
		{
			const char *k;
			json_t *v;
			json_object_foreach(json_object_get(body, "tags"), k, v)
				gb_kvs_set(&in->tags, k, json_string_value(v));
		}
		if (ph == SIM_PH_FAILED) {
			/* a re-PUT retries the allocation */
			t = sim_catalog_type(&sim_g.cat[SIM_AZURE], s.size);
			r = t ? sim_ctype_region(t, s.loc) : NULL;
			if (!r) {
				sku_unavailable(c, &s);
				goto out;
			}
			if (check_quota(c, &s, t->vcpus, q) != 0)
				goto out;
			set_quse(in, q);
			op = allocate(c, in, &s, t, r);
		} else {
			op = new_op(c, "put", in, in->t_running);
		}
		in->az_nic = s.use_configs;
		arm_vm_nics_bind(c, in, body);
		sim_resp_json(c->resp, 200, az_vm_json(in, c->now, 0));
		op_headers(c, op);
		goto out;
	}
	t = sim_catalog_type(&sim_g.cat[SIM_AZURE], s.size);
	r = t ? sim_ctype_region(t, s.loc) : NULL;
	if (!r || sim_creg_price(r, s.zone, s.spot) < 0 ||
	    !sim_creg_has_zone(r, s.zone)) {
		sku_unavailable(c, &s);
		goto out;
	}
	if (sim_state_full()) {
		az_error(c, 409, "OperationNotAllowed",
		         "cloudsim holds its maximum of %lld instances "
		         "(limits.max_instances).",
		         (long long)sim_g.sc.max_instances);
		goto out;
	}
	if (arm_vm_nics_check(c, body, key, s.loc) != 0)
		goto out;
	if (check_quota(c, &s, t->vcpus, q) != 0)
		goto out;
	in = sim_map_get(&sim_g.insts, key);
	if (in) /* a deleted VM whose record is still here */
		sim_inst_purge(in);
	in = sim_inst_new(SIM_AZURE, key);
	set_quse(in, q);
	{
		char vmid[37];
		const char *k;
		json_t *v;
		sim_uuid(vmid);
		in->id = gb_xstrdup(vmid);
		in->name = gb_xstrdup(c->name);
		in->rg = gb_xstrdup(sim_g.sc.az_rg);
		in->region = gb_xstrdup(s.loc);
		in->location = gb_xstrdup(jstr(body, "location"));
		in->zone = gb_xstrdup(s.zone ? s.zone : "");
		in->type = gb_xstrdup(s.size);
		in->gpu = gb_xstrdup(t->gpu);
		in->spot = s.spot;
		in->az_evict_delete = s.evict_delete;
		in->az_nic = s.use_configs;
		in->az_pip = s.use_configs && s.want_pip;
		in->az_body = json_incref(body);
		json_object_foreach(json_object_get(body, "tags"), k, v)
			gb_kvs_set(&in->tags, k, json_string_value(v));
	}
	op = allocate(c, in, &s, t, r);
	arm_vm_nics_bind(c, in, body);
	sim_resp_json(c->resp, 201, az_vm_json(in, c->now, 0));
	op_headers(c, op);
out:
	free(key);
	json_decref(body);
}

static sim_inst *find_vm(az_ctx *c)
{
	char *key = az_vm_key(sim_g.sc.az_sub, c->rg, c->name);
	sim_inst *in = sim_inst_find(key);
	free(key);
	if (in && sim_inst_phase(in, c->now) == SIM_PH_GONE)
		return NULL;
	return in;
}

void az_not_found(az_ctx *c, const char *type, const char *name)
{
	az_error(c, 404, "ResourceNotFound",
	         "The Resource '%s/%s' under resource group '%s' was not "
	         "found. For more details please go to "
	         "https://aka.ms/ARMResourceNotFoundFix", type, name, c->rg);
}

static int want_expand(const az_ctx *c)
{
	const char *e = sim_req_qarg(c->req, "$expand");
	return e && strcasecmp(e, "instanceView") == 0;
}

void arm_vm_get(az_ctx *c, int view_only)
{
	sim_inst *in = find_vm(c);
	if (!in) {
		az_not_found(c, "Microsoft.Compute/virtualMachines", c->name);
		return;
	}
	if (view_only)
		sim_resp_json(c->resp, 200, az_instance_view(in, c->now));
	else
		sim_resp_json(c->resp, 200,
		              az_vm_json(in, c->now, want_expand(c)));
}

void arm_vm_delete(az_ctx *c)
{
	sim_inst *in = find_vm(c);
	sim_op *op;
	if (!in) {
		sim_resp_empty(c->resp, 204);
		return;
	}
	if (!(in->t_stop && !in->keep))
		sim_inst_stop(in, c->now, SIM_END_USER, 0);
	op = new_op(c, "delete", in, in->t_gone);
	sim_resp_empty(c->resp, 202);
	op_headers(c, op);
}

static int by_name(const void *a, const void *b)
{
	const sim_inst *x = *(sim_inst *const *)a, *y = *(sim_inst *const *)b;
	return strcasecmp(x->name, y->name);
}

void arm_vm_list(az_ctx *c, int whole_sub)
{
	size_t n = 0, k = 0, shown = 0;
	sim_inst **v = sim_inst_list(SIM_AZURE, &n);
	const char *skip = sim_req_qarg(c->req, "$skiptoken");
	char *after = NULL;
	json_t *arr = json_array(), *out;
	int expand = want_expand(c);
	int64_t page = sim_g.sc.az_vm_page;
	if (skip && *skip) {
		size_t len = 0;
		unsigned char *d = sim_b64url_decode(skip, strlen(skip), &len);
		if (!d || len == 0) {
			free(d);
			json_decref(arr);
			free(v);
			az_error(c, 400, "InvalidSkipToken",
			         "The $skiptoken '%s' is invalid.", skip);
			return;
		}
		after = (char *)d;
	}
	for (size_t i = 0; i < n; i++) {
		sim_phase ph = sim_inst_phase(v[i], c->now);
		if (ph == SIM_PH_GONE)
			continue;
		if (!whole_sub && strcasecmp(v[i]->rg, c->rg) != 0)
			continue;
		v[k++] = v[i];
	}
	qsort(v, k, sizeof(*v), by_name);
	out = json_object();
	for (size_t i = 0; i < k; i++) {
		if (after && strcasecmp(v[i]->name, after) <= 0)
			continue;
		if ((int64_t)shown == page) {
			char *tok = sim_b64url_encode(v[i - 1]->name,
			                              strlen(v[i - 1]->name));
			char *link = gb_xasprintf("%s%s?api-version=%s%s&"
			                          "$skiptoken=%s",
			                          sim_g.url[1], c->req->path,
			                          c->api,
			                          expand ? "&$expand=instanceView"
			                                 : "",
			                          tok);
			json_object_set_new(out, "nextLink", json_string(link));
			free(link);
			free(tok);
			break;
		}
		json_array_append_new(arr, az_vm_json(v[i], c->now, expand));
		shown++;
	}
	json_object_set_new(out, "value", arr);
	sim_resp_json(c->resp, 200, out);
	free(after);
	free(v);
}

void arm_op_get(az_ctx *c, const char *id)
{
	sim_op *op = sim_op_find(id);
	const char *mon = sim_req_qarg(c->req, "monitor");
	int monitor = mon && strcmp(mon, "true") == 0;
	char st[40], en[40];
	json_t *o;
	int done;
	if (!op || op->cloud != SIM_AZURE) {
		az_error(c, 404, "ResourceNotFound",
		         "The operation '%s' was not found.", id);
		return;
	}
	done = c->now >= op->t_done;
	if (monitor) {
		if (!done) {
			sim_resp_empty(c->resp, 202);
			op_headers(c, op);
			return;
		}
		if (op->err_code) {
			az_error(c, op->http_err ? op->http_err : 500,
			         op->err_code, "%s", op->err_msg);
			return;
		}
		if (strcmp(op->kind, "put") == 0) {
			sim_inst *in = sim_inst_find(op->target);
			if (in && sim_inst_phase(in, c->now) != SIM_PH_GONE) {
				sim_resp_json(c->resp, 200,
				              az_vm_json(in, c->now, 0));
				return;
			}
		}
		sim_resp_empty(c->resp, 200);
		return;
	}
	o = json_object();
	json_object_set_new(o, "startTime",
	                    json_string(sim_time_ms(op->t_start, st,
	                                            sizeof(st))));
	if (!done) {
		json_object_set_new(o, "status", json_string("InProgress"));
	} else {
		json_object_set_new(o, "endTime",
		                    json_string(sim_time_ms(op->t_done, en,
		                                            sizeof(en))));
		json_object_set_new(o, "status",
		                    json_string(op->err_code ? "Failed"
		                                             : "Succeeded"));
		if (op->err_code)
			json_object_set_new(o, "error",
			                    json_pack("{s:s,s:s}", "code",
			                              op->err_code, "message",
			                              op->err_msg));
	}
	json_object_set_new(o, "name", json_string(op->id));
	sim_resp_json(c->resp, 200, o);
	if (!done)
		op_headers(c, op);
}

void arm_usages(az_ctx *c)
{
	char loc[64];
	json_t *arr = json_array();
	const sim_optab *q = &sim_g.sc.q_az_cores;
	az_norm_location(c->loc, loc, sizeof(loc));
	for (size_t i = 0; i < q->n; i++) {
		char *k;
		int tot = strcmp(q->v[i].op, "total") == 0;
		char *loc_name;
		if (strcmp(q->v[i].op, "*") == 0)
			continue;
		k = gb_xasprintf("q|azure|%s|cores|%s", loc, q->v[i].op);
		loc_name = tot ? gb_xstrdup("Total Regional vCPUs")
		               : gb_xasprintf("%s vCPUs", q->v[i].op);
		json_array_append_new(
			arr, json_pack("{s:s,s:I,s:I,s:{s:s,s:s}}", "unit",
			               "Count", "currentValue",
			               (json_int_t)sim_count_get(&sim_g.usage, k),
			               "limit", (json_int_t)q->v[i].a, "name",
			               "value", tot ? "cores" : q->v[i].op,
			               "localizedValue", loc_name));
		free(k);
		free(loc_name);
	}
	if (sim_g.sc.q_az_lowpri >= 0) {
		char *k = gb_xasprintf("q|azure|%s|lowpri", loc);
		json_array_append_new(
			arr, json_pack("{s:s,s:I,s:I,s:{s:s,s:s}}", "unit",
			               "Count", "currentValue",
			               (json_int_t)sim_count_get(&sim_g.usage, k),
			               "limit", (json_int_t)sim_g.sc.q_az_lowpri,
			               "name", "value", "lowPriorityCores",
			               "localizedValue",
			               "Total Regional Low-priority vCPUs"));
		free(k);
	}
	sim_resp_json(c->resp, 200, json_pack("{s:o}", "value", arr));
}
