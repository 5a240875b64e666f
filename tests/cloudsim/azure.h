/*
 * azure.h -- internals of cloudsim's Azure listener: the login token
 * endpoint (azure_login.c), ARM routing/auth/throttling (azure_api.c),
 * virtual machines and their async operations (arm_vm.c), the VM
 * resource shapes (arm_render.c), network interfaces and their public IPs
 * (arm_nic.c) and the Retail Prices API
 * (azure_prices.c, its $filter in azure_filter.c).
 */
#ifndef SIM_AZURE_H
#define SIM_AZURE_H

#include "sim.h"

typedef struct az_ctx {
	sim_req *req;
	sim_resp *resp;
	int64_t now;
	char **segs;        /* decoded path segments */
	size_t nseg;
	const char *sub, *rg, *name, *loc;
	const char *api;    /* api-version */
	const char *op;
} az_ctx;

/* {"error":{"code","message"}} with status. */
void az_error(az_ctx *c, int status, const char *code, const char *fmt, ...)
	GB_PRINTF(4, 5);
/* The same with a "target". */
void az_error_target(az_ctx *c, int status, const char *code,
                     const char *target, const char *fmt, ...)
	GB_PRINTF(5, 6);

/* The request body as a JSON object (new reference), or NULL after a 400
 * InvalidRequestContent. */
json_t *az_body_object(az_ctx *c);
/* 404 ResourceNotFound for type/name in the request's resource group. */
void az_not_found(az_ctx *c, const char *type, const char *name);

/* Map key of a VM: "azure|sub|rg|name" (lowercase rg and name). */
char *az_vm_key(const char *sub, const char *rg, const char *name);
/* Resource ids. Caller frees. */
char *az_vm_id(const sim_inst *in);
/* Operation URLs (Azure-AsyncOperation / Location). Caller frees. */
char *az_op_url(const az_ctx *c, const sim_op *op, int monitor);

/* Resource JSON. */
json_t *az_vm_json(const sim_inst *in, int64_t now, int expand);
json_t *az_instance_view(const sim_inst *in, int64_t now);
/* "eastus" from "East US" / "eastus"; writes into buf. */
const char *az_norm_location(const char *s, char *buf, size_t cap);

/* The Retail Prices API's $filter (azure_filter.c): eq, and, or and
 * parentheses.  An empty filter gives NULL (matches everything); -1 with
 * why on a syntax error or something unsupported. */
typedef struct az_filter az_filter;
int az_filter_parse(const char *text, az_filter **out, char *why,
                    size_t cap);
/* 1 when the item matches; values compared case-sensitively when cs. */
int az_filter_match(const az_filter *f, const json_t *item, int cs);
void az_filter_free(az_filter *f);

void az_login(az_ctx *c);
void az_prices(az_ctx *c);
void arm_vm_put(az_ctx *c);
void arm_vm_get(az_ctx *c, int view_only);
void arm_vm_delete(az_ctx *c);
void arm_vm_list(az_ctx *c, int whole_subscription);
void arm_op_get(az_ctx *c, const char *id);
void arm_usages(az_ctx *c);

/* Network interfaces (arm_nic.c), all under the lock. */
/* 1 when id is a subnet id under this subscription. */
int az_subnet_ok(const char *id);
/* Name of the NIC (or public IP) a VM creates from a configuration:
 * "<vm>-<config>".  Caller frees. */
char *az_managed_nic_name(const char *vm, const char *config);
/* Before a VM PUT changes anything: the NICs its networkProfile names
 * must exist in its location (400 InvalidResourceReference) and not be
 * another VM's (400 NicInUse); -1 after the error response. */
int arm_vm_nics_check(az_ctx *c, const json_t *body, const char *vm_key,
                      const char *loc);
/* After it: creates the configurations' NICs and attaches every NIC the
 * VM names (deleteOption as given, Detach by default). */
void arm_vm_nics_bind(az_ctx *c, const sim_inst *in, const json_t *body);
/* networkProfile.networkInterfaces of a VM built from configurations:
 * [{id, properties{primary, deleteOption}}].  New reference. */
json_t *az_vm_nic_refs(const sim_inst *in);
void arm_nic_put(az_ctx *c);
void arm_nic_get(az_ctx *c, const char *name);
void arm_nic_delete(az_ctx *c);
void arm_nic_list(az_ctx *c);
void arm_pip_get(az_ctx *c, const char *name);

/* 1 when the api-version is at least `min` ("2019-03-01"). */
int az_api_at_least(const char *api, const char *min);

#endif
