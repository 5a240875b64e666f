/* azure_delete.c -- DELETE virtualMachines/{name}: 200/202/204 accepted,
 * 404 already gone.  We do not wait for completion: describe shows the VM
 * as STOPPING (provisioningState Deleting) and then no more.  The NIC, its
 * public IP and the OS disk go with the VM (deleteOption Delete). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure.h"
#include "drvc_create.h"
#include "drvc_http.h"
#include "drvc_util.h"

int azure_delete_vm(azure_ctx *c, const char *name, gb_error *err)
{
	gb_http_resp resp;
	char what[160];
	char *url;
	int rc;

	if (azure_vm_name_ok(name, err) != 0)
		return -1;
	url = azure_vm_url(c, name, NULL);
	snprintf(what, sizeof(what), "DELETE VM %s", name);
	rc = azure_arm(c, "DELETE", url, NULL, "arm-delete", what, &resp, err);
	c->host->http_free(c->host->ctx, &resp);
	free(url);
	rc = drvc_gone_ok(rc, err);
	return rc;
}

int azure_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                    gb_error *err)
{
	azure_ctx *c = ctx;
	drvc_failures fails = DRVC_FAILURES_INIT;
	gb_error e;

	if (azure_require(c, 1, err) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!refs[i].id || !*refs[i].id)
			continue;
		if (azure_delete_vm(c, refs[i].id, &e) != 0)
			drvc_failures_note(&fails, c->host, "azure", refs[i].id,
			                   &e);
	}
	return drvc_failures_result(&fails, "VM", err);
}
