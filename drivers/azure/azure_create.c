/* azure_create.c -- create req->count VMs, all or nothing.
 *
 * ARM has no batch create for plain VMs: one PUT per VM, deterministic
 * names "<prefix>-<index>", the same body on every retry (so ARM answers
 * 200, not 409), the idempotency token in tag gpubroker-token.  The first
 * PUT carries If-None-Match: * (create only); on 412 the VM is read: a
 * name taken by a VM without our token is a CONFLICT, ours is PUT again
 * only when it ended Failed (otherwise it is waited for).  Then each VM is
 * read until its provisioningState is terminal (azure_lro.c); if any VM
 * fails, every VM this call made is deleted and the failure's class
 * (CAPACITY for allocation failures) is returned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"
#include "drvc_create.h"
#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_util.h"

#define AZURE_MAX_COUNT 1000

typedef struct gone {
	azure_ctx *c;
	char **names;
} gone;

static int gone_del(void *ud, size_t i, gb_error *err)
{
	gone *g = ud;
	return azure_delete_vm(g->c, g->names[i], err);
}

static const char *gone_name(void *ud, size_t i)
{
	return ((gone *)ud)->names[i];
}

/* Deletes every touched VM unless the failure is throttled or transient;
 * notes the outcome in err->message. */
static void failed(azure_ctx *c, char **names, const int *touched, size_t n,
                   gb_error *err)
{
	gone g = {c, names};
	drvc_cleanup cl = {c->host, "azure", "VM", gone_del, gone_name, &g};
	drvc_create_failed(&cl, touched, n, err);
}

/* One PUT.  create_only: with If-None-Match: *; returns 1 when ARM
 * answered 412 (the name exists).  0: sent, op filled (poll URL and the
 * time of its first poll); -1 with err. */
static int put_vm(azure_ctx *c, const char *name, const char *body,
                  int create_only, azure_op *op, gb_error *err)
{
	const gb_host *h = c->host;
	gb_http_resp resp;
	char what[160], *url = azure_vm_url(c, name, NULL);
	int r;

	snprintf(what, sizeof(what), "PUT VM %s", name);
	r = azure_arm_hdr(c, "PUT", url, body,
	                  create_only ? "If-None-Match: *" : NULL, "arm-write",
	                  what, &resp, err);
	free(url);
	if (r != 0) {
		int exists = create_only && resp.status == 412;
		h->http_free(h->ctx, &resp);
		return exists ? 1 : -1;
	}
	free(op->url);
	op->url = azure_op_url(c, &resp, &op->location);
	/* ARM's Retry-After says when the VM is worth a look */
	op->retry_ms = drvc_retry_after_ms(&resp, h->now_ms(h->ctx));
	op->next_ms = h->mono_ms(h->ctx) + op->retry_ms;
	h->http_free(h->ctx, &resp);
	return 0;
}

/* The name is taken: 0 when the VM is ours (this token), -1 with err
 * otherwise.  A name held by someone else must not be overwritten.  *again
 * is 1 when ours ended Failed and is PUT again (ARM provisions it anew);
 * one that is provisioning or Succeeded is only waited for: a second PUT
 * would cost a write from ARM's smallest bucket on every replay. */
static int existing_ok(azure_ctx *c, const gb_create_req *req,
                       const char *name, int *again, gb_error *err)
{
	azure_vm old;
	const char *tok, *why;
	int ours, deleting, r = azure_get_vm(c, name, &old, err);

	*again = 0;
	if (r < 0)
		return -1;
	if (r == 0) {
		drvc_err(err, GB_ERR_TRANSIENT, 412, "VMNameRace",
		         "Azure VM %s existed when it was PUT and is gone now; "
		         "the create is retried", name);
		return -1;
	}
	tok = azure_vm_tag(&old, GB_TAG_TOKEN);
	ours = tok && strcmp(tok, req->token) == 0;
	deleting = azure_vm_state(&old, &why) == GB_INST_STOPPING;
	*again = old.prov_state && strcasecmp(old.prov_state, "Failed") == 0;
	azure_vm_free(&old);
	if (ours && deleting) {
		/* the earlier try's cleanup is deleting it: not a result; the
		 * create is retried once it is gone */
		drvc_err(err, GB_ERR_TRANSIENT, 409, "VMBeingDeleted",
		         "Azure VM %s (from an earlier try with this token) is "
		         "being deleted; the create is retried once it is gone",
		         name);
		return -1;
	}
	if (!ours) {
		drvc_err(err, GB_ERR_CONFLICT, 409, "VMNameTaken",
		         "Azure VM %s already exists in resource group %s and "
		         "does not carry gpubroker-token %s",
		         name, c->rg, req->token);
		return -1;
	}
	return 0;
}

int azure_create(void *ctx, const gb_create_req *req, gb_instance_cb emit,
                 void *ud, gb_error *err)
{
	azure_ctx *c = ctx;
	const gb_host *h = c->host;
	azure_vm_params p;
	size_t n, i;
	char **names = NULL;
	int *touched = NULL;
	azure_op *ops = NULL;
	azure_vm *vms = NULL;
	int64_t deadline;
	int rc = -1;

	if (drvc_create_req_ok(req, "Azure", AZURE_MAX_COUNT, err) != 0 || azure_require(c, 1, err) != 0)
		return -1;
	memset(&p, 0, sizeof(p));
	p.subnet = azure_subnet_for(c, req->region);
	p.image = req->image && *req->image ? req->image
	                                    : azure_image_for(c, req->region);
	p.security_type = c->security_type;
	p.os_disk_type = c->os_disk_type;
	p.os_disk_gb = c->os_disk_gb;
	p.public_ip = c->public_ip;

	n = req->count;
	names = drvc_xcalloc(n, sizeof(char *));
	touched = drvc_xcalloc(n, sizeof(int));
	ops = drvc_xcalloc(n, sizeof(azure_op));
	vms = drvc_xcalloc(n, sizeof(azure_vm));
	for (i = 0; i < n; i++) {
		names[i] = drvc_xasprintf("%s-%u", req->name_prefix,
		                          req->first_index + (unsigned)i);
		ops[i].name = names[i];
		if (azure_vm_name_ok(names[i], err) != 0)
			goto out;
	}
	deadline = h->mono_ms(h->ctx) + c->create_timeout_ms;

	for (i = 0; i < n; i++) {
		char *body = azure_vm_body(req, names[i], &p, err);
		int r, again = 0;
		if (!body)
			goto fail;
		/* The first PUT creates only: If-None-Match: * makes ARM answer
		 * 412 instead of updating a VM that already has the name.  That
		 * saves a GET per VM from ARM's read bucket. */
		r = put_vm(c, names[i], body, 1, &ops[i], err);
		if (r == 0) {
			touched[i] = 1; /* made by this call */
		} else if (r == 1 &&
		           (r = existing_ok(c, req, names[i], &again, err)) == 0 &&
		           again) {
			r = put_vm(c, names[i], body, 0, &ops[i], err);
		}
		free(body);
		if (r != 0)
			goto fail;
	}

	if (azure_vm_wait(c, ops, vms, n, deadline, err) != 0)
		goto fail;
	for (i = 0; i < n; i++) {
		if (ops[i].failed) {
			*err = ops[i].err;
			goto fail;
		}
	}
	for (i = 0; i < n; i++)
		if (azure_emit_vm(c, &vms[i], emit, ud))
			break;
	rc = 0;
	goto out;
fail:
	/* A throttled or transient failure leaves the outcome unknown to the
	 * host, which replays the create with the same token: the PUTs by
	 * name find what this call made.  Only a definite failure cleans up. */
	failed(c, names, touched, n, err);
out:
	for (i = 0; i < n; i++) {
		free(names[i]);
		free(ops[i].url);
		azure_vm_free(&vms[i]);
	}
	free(names);
	free(touched);
	free(ops);
	free(vms);
	return rc;
}
