/* azure_describe.c -- describe by VM name (GET ...?$expand=instanceView)
 * or by tags: list the resource group's VMs with $expand=instanceView,
 * following nextLink, and keep those whose gpubroker tags match.  A
 * listed VM with its instance view is emitted from the page it came on,
 * as the streaming scanner (drvc_scan.h) closes its object, its strings
 * borrowed from the scanner (azure_vm_scan); only the names of those
 * listed without one are kept, to be fetched one by one after.  An error
 * on a later page fails the describe after earlier pages were emitted,
 * as the EC2 driver's paging does.
 * Addresses come from the VM's NIC (and its public IP when option
 * public_ip is on), fetched once per running VM and cached. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"
#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_util.h"

/* ---------------------------------------------------------------- pages */

static const char *const page_tops[] = { "nextLink", "value" };

typedef struct vm_page {
	int (*fn)(void *ud, azure_vm *vm);
	void *ud;
} vm_page;

static int page_elem(void *ud, const drvc_scan_elem *e)
{
	vm_page *p = ud;
	azure_vm vm;
	int stop = 0;
	if (azure_vm_scan(e, &vm) == 0)
		stop = p->fn(p->ud, &vm);
	azure_vm_free(&vm);
	return stop;
}

int azure_parse_vm_page(const char *body, size_t len,
                        int (*fn)(void *ud, azure_vm *vm), void *ud,
                        char **next, gb_error *err)
{
	/* each VM of "value" is read as its object closes (drvc_scan.h):
	 * no tree of the page is built */
	static const drvc_scan_spec spec = {
		"value[]", azure_vm_members, AZURE_VM_NMEMBERS, page_tops, 2,
		DRVC_MAX_BODY, "Azure VM list page",
	};
	vm_page p = { fn, ud };
	drvc_scan *sc = drvc_scan_new(&spec, page_elem, &p);
	const char *nl;
	int rc;

	*next = NULL;
	if (!sc)
		abort(); /* the spec above is well-formed */
	rc = drvc_scan_run(sc, body, len, err);
	if (rc == 0 && drvc_scan_top_kind(sc, 1) != DRVC_SCAN_ARRAY) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedResponse",
		         "Azure VM list page has no \"value\" array");
		rc = -1;
	}
	nl = drvc_scan_top(sc, 0);
	if (rc == 0 && nl && *nl)
		*next = drvc_xstrdup(nl);
	drvc_scan_free(sc);
	return rc;
}

/* ---------------------------------------------------------- addresses */

static int resource_id_ok(const char *id)
{
	if (strncasecmp(id, "/subscriptions/", 15) != 0 || strstr(id, ".."))
		return 0;
	for (const char *p = id; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == '?' || *p == '#' ||
		    *p == '%' || (unsigned char)*p >= 0x7f)
			return 0;
	return 1;
}

/* GET a network resource; returns the parsed object or NULL. */
static json_t *get_network(azure_ctx *c, const char *id, const char *what)
{
	const gb_host *h = c->host;
	gb_http_resp resp;
	gb_error err;
	json_t *root = NULL;
	char *url;
	if (!resource_id_ok(id))
		return NULL;
	url = drvc_xasprintf("%s%s?api-version=%s", c->arm, id,
	                     AZURE_API_NETWORK);
	if (azure_arm(c, "GET", url, NULL, "arm-read", what, &resp, &err) == 0)
		root = drvc_json_body(&resp, AZURE_MAX_SMALL, what, &err);
	if (!root && h->log)
		h->log(h->ctx, GB_LOG_WARN, "azure: %s: %s", what, err.message);
	h->http_free(h->ctx, &resp);
	free(url);
	return root;
}

static void fetch_addrs(azure_ctx *c, const azure_vm *vm, char **priv,
                        char **pub)
{
	const char *key = vm->vm_id[0] ? vm->vm_id : vm->name;
	char what[160], *pub_id = NULL;
	json_t *nic;
	*priv = *pub = NULL;
	{
		char *v[2];
		if (drvc_cache_get(&c->addrs, key, v, 2)) {
			*priv = v[0];
			*pub = v[1];
			return;
		}
	}
	if (!vm->nic_id[0])
		return;
	snprintf(what, sizeof(what), "NIC of VM %s", vm->name);
	nic = get_network(c, vm->nic_id, what);
	if (!nic)
		return;
	azure_parse_nic(nic, priv, &pub_id);
	json_decref(nic);
	if (c->public_ip && pub_id) {
		json_t *pip;
		snprintf(what, sizeof(what), "public IP of VM %s", vm->name);
		pip = get_network(c, pub_id, what);
		*pub = drvc_xstrdup(drvc_jpath_str(pip, "properties.ipAddress"));
		json_decref(pip);
	}
	free(pub_id);
	/* Cache only complete answers: a public IP may still be allocating. */
	if (*priv && (!c->public_ip || *pub)) {
		const char *v[2] = {*priv, *pub};
		drvc_cache_put(&c->addrs, key, v, 2);
	}
}

int azure_emit_vm(azure_ctx *c, azure_vm *vm, gb_instance_cb emit, void *ud)
{
	gb_instance inst;
	const char *reason;
	char *priv = NULL, *pub = NULL;
	int rc;

	memset(&inst, 0, sizeof(inst));
	inst.state = azure_vm_state(vm, &reason);
	if (inst.state == GB_INST_RUNNING)
		fetch_addrs(c, vm, &priv, &pub);
	inst.id = vm->name;
	inst.name = vm->name;
	inst.region = vm->location;
	inst.zone = vm->zone;
	inst.instance_type = vm->size;
	inst.capacity = strcasecmp(vm->priority, "Spot") == 0
	                        ? GB_CAPACITY_SPOT
	                        : GB_CAPACITY_ON_DEMAND;
	inst.state_reason = reason;
	inst.private_ip = priv;
	inst.public_ip = pub;
	inst.tags = vm->tags;
	inst.ntags = vm->ntags;
	inst.created_at = vm->created_ms / 1000;
	inst.created_ms = vm->created_ms;
	rc = emit(ud, &inst);
	free(priv);
	free(pub);
	return rc;
}

/* ------------------------------------------------------------ describe */

typedef struct collect {
	azure_ctx *c;
	const gb_describe_req *req;
	gb_instance_cb emit;
	void *ud;
	int stopped;        /* the caller's emit asked to stop */
	azure_vm *vms;      /* listed without an instance view: fetched after */
	size_t n;
} collect;

static int tag_is(const azure_vm *vm, const char *key, const char *want)
{
	const char *v;
	if (!want || !*want)
		return 1;
	v = azure_vm_tag(vm, key);
	return v && strcmp(v, want) == 0;
}

static int collect_fn(void *ud, azure_vm *vm)
{
	collect *col = ud;
	const gb_describe_req *r = col->req;
	if (!azure_vm_tag(vm, GB_TAG_POOL) && !azure_vm_tag(vm, GB_TAG_BROKER))
		return 0;
	if (!tag_is(vm, GB_TAG_POOL, r->pool) ||
	    !tag_is(vm, GB_TAG_BROKER, r->broker_id) ||
	    !tag_is(vm, GB_TAG_TOKEN, r->token))
		return 0;
	if (r->region && *r->region && vm->location[0] &&
	    strcasecmp(vm->location, r->region) != 0)
		return 0;
	if (vm->has_view) {
		/* emitted from the page it came on: nothing kept past it */
		if (azure_emit_vm(col->c, vm, col->emit, col->ud)) {
			col->stopped = 1;
			return 1;
		}
		return 0;
	}
	/* kept by name only: the page's strings end with its callback */
	col->vms = drvc_xrealloc(col->vms, (col->n + 1) * sizeof(azure_vm));
	memset(&col->vms[col->n], 0, sizeof(azure_vm));
	col->vms[col->n].name = col->vms[col->n].own_name =
		drvc_xstrdup(vm->name);
	col->n++;
	return 0;
}

/* GET one VM with its instance view.  Returns 1 found, 0 not found, -1
 * error. */
int azure_get_vm(azure_ctx *c, const char *name, azure_vm *vm,
                 gb_error *err)
{
	const gb_host *h = c->host;
	gb_http_resp resp;
	char what[160];
	char *url;
	json_t *root = NULL;
	int rc;

	memset(vm, 0, sizeof(*vm));
	if (azure_vm_name_ok(name, err) != 0)
		return -1;
	url = azure_vm_url(c, name, "$expand=instanceView");
	snprintf(what, sizeof(what), "GET VM %s", name);
	rc = azure_arm(c, "GET", url, NULL, "arm-read", what, &resp, err);
	free(url);
	rc = drvc_json_answer(h, rc, &resp, AZURE_MAX_VM, what, &root, err);
	if (rc <= 0)
		return rc;
	if (azure_vm_parse(root, vm) != 0) {
		json_decref(root);
		azure_vm_free(vm);
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedResponse",
		         "Azure %s: the answer is not a VM (no name)", what);
		return -1;
	}
	json_decref(root);
	return 1;
}

static int list_rg(azure_ctx *c, collect *col, gb_error *err)
{
	const gb_host *h = c->host;
	char what[200];
	char *url = azure_vm_url(c, NULL, "$expand=instanceView");
	int pages = 0, rc = 0;

	snprintf(what, sizeof(what), "list VMs in resource group %s", c->rg);
	while (url) {
		gb_http_resp resp;
		char *next = NULL;
		if (++pages > AZURE_MAX_PAGES) {
			drvc_err(err, GB_ERR_INTERNAL, 0, "TooManyPages",
			         "Azure %s: more than %d pages", what,
			         AZURE_MAX_PAGES);
			rc = -1;
			break;
		}
		rc = azure_arm(c, "GET", url, NULL, "arm-read", what, &resp, err);
		if (rc == 0)
			rc = drvc_json_ctype_ok(&resp, what, err);
		if (rc == 0)
			rc = azure_parse_vm_page(resp.body, resp.body_len,
			                         collect_fn, col, &next, err);
		h->http_free(h->ctx, &resp);
		free(url);
		url = NULL;
		if (rc < 0)
			break;
		if (next && !drvc_same_origin(next, c->arm)) {
			drvc_err(err, GB_ERR_INVALID, 0, "UntrustedNextLink",
			         "Azure %s: nextLink points off the ARM endpoint's "
			         "origin; refusing to send credentials there", what);
			free(next);
			rc = -1;
			break;
		}
		url = next;
	}
	free(url);
	return rc < 0 ? -1 : 0;
}

int azure_describe(void *ctx, const gb_describe_req *req,
                   gb_instance_cb emit, void *ud, gb_error *err)
{
	azure_ctx *c = ctx;
	collect col = {c, req, emit, ud, 0, NULL, 0};
	int rc = 0;

	if (azure_require(c, 1, err) != 0)
		return -1;
	if (req->nids) {
		for (size_t i = 0; i < req->nids; i++) {
			azure_vm vm;
			int r = azure_get_vm(c, req->ids[i], &vm, err);
			if (r < 0) {
				rc = -1;
				break;
			}
			if (r == 0)
				continue;
			col.vms = drvc_xrealloc(col.vms,
			                        (col.n + 1) * sizeof(azure_vm));
			col.vms[col.n++] = vm;
		}
	} else if ((!req->pool || !*req->pool) &&
	           (!req->broker_id || !*req->broker_id)) {
		drvc_err(err, GB_ERR_INVALID, 0, "DescribeFilterMissing",
		         "Azure describe needs ids, a pool or a broker id");
		return -1;
	} else {
		rc = list_rg(c, &col, err);
	}
	/* A list that came without instance views: fetch them one by one. */
	for (size_t i = 0; rc == 0 && !col.stopped && !req->nids && i < col.n;
	     i++) {
		if (!col.vms[i].has_view) {
			azure_vm full;
			int r = azure_get_vm(c, col.vms[i].name, &full, err);
			if (r < 0) {
				rc = -1;
				break;
			}
			if (r == 0) {
				azure_vm_free(&col.vms[i]);
				continue;
			}
			azure_vm_free(&col.vms[i]);
			col.vms[i] = full;
		}
	}
	for (size_t i = 0; rc == 0 && !col.stopped && i < col.n; i++)
		if (col.vms[i].name && col.vms[i].name[0] &&
		    azure_emit_vm(c, &col.vms[i], emit, ud))
			break;
	for (size_t i = 0; i < col.n; i++)
		azure_vm_free(&col.vms[i]);
	free(col.vms);
	return rc;
}
