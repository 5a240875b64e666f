/* gcp_create.c -- create req->count instances with one
 * instances.bulkInsert, all or nothing.
 *
 * count = minCount = req->count, the names the engine asks for
 * (<prefix>-<index>) as perInstanceProperties keys, and a requestId
 * derived from the token and those names.  GCE checks the zone's capacity
 * and the quotas for all of them before it makes any, so a refused create
 * (an operation DONE with ZONE_RESOURCE_POOL_EXHAUSTED, QUOTA_EXCEEDED,
 * ..., or a synchronous error) made nothing and leaves nothing to clean
 * up: the driver advertises BATCH_CREATE and ATOMIC_CREATE.  The
 * operation is polled until DONE, then every instance is read back and
 * emitted.
 *
 * Replays (the same token): the same requestId returns the same
 * operation, and so the same instances.  Once GCE has forgotten the
 * requestId, the bulkInsert fails with alreadyExists: names that carry
 * our token label are ours and adopted, one of ours being deleted is
 * TRANSIENT, one without our token is a CONFLICT, and names still missing
 * are made by one more bulkInsert of just those (its own requestId).
 * THROTTLED or TRANSIENT leaves the outcome unknown to the host, which
 * replays with the same token: nothing is ever deleted here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drvc_catalog.h"
#include "drvc_create.h"
#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_util.h"
#include "gcp.h"

#define GCP_MAX_COUNT 1000

typedef struct zone_pick {
	const char *type;
	char zone[64];
} zone_pick;

static int pick_fn(void *ud, const gb_offer *o)
{
	zone_pick *z = ud;
	if (strcmp(o->instance_type, z->type) != 0 || !o->zone || !*o->zone)
		return 0;
	snprintf(z->zone, sizeof(z->zone), "%s", o->zone);
	return 1;
}

/* req->zone, else the first zone the catalog lists for (type, region). */
static int choose_zone(gcp_ctx *c, const gb_create_req *req, char out[64],
                       gb_error *err)
{
	char path[4096];
	zone_pick z;
	gb_error e;
	if (req->zone && *req->zone) {
		if (!gcp_zone_in_region(req->zone, req->region) ||
		    strlen(req->zone) >= 64) {
			drvc_err(err, GB_ERR_INVALID, 0, "InvalidZone",
			         "GCE zone '%.80s' is not a zone of region %.80s",
			         req->zone, req->region);
			return -1;
		}
		snprintf(out, 64, "%s", req->zone);
		return 0;
	}
	memset(&z, 0, sizeof(z));
	z.type = req->instance_type;
	if (drvc_catalog_path(c->host, "gcp", path, sizeof(path)))
		drvc_catalog_emit(path, req->region, pick_fn, &z, &e);
	if (!z.zone[0]) {
		drvc_err(err, GB_ERR_INVALID, 0, "ZoneRequired",
		         "GCE instances live in a zone: none was given and the "
		         "catalog lists no zone for %.100s in %.80s",
		         req->instance_type, req->region);
		return -1;
	}
	snprintf(out, 64, "%s", z.zone);
	return 0;
}

typedef struct bulk {
	gcp_ctx *c;
	const gb_create_req *req;
	const gcp_params *p;
	const char *zone;
	char (*names)[64];
	size_t n;
	int *mine;          /* names[i] exists with our token (adopted) */
} bulk;

/* One bulkInsert of the names not yet ours, polled until DONE.  0, or -1
 * with err (the operation's error when DONE carries one). */
static int bulk_insert(bulk *b, int64_t deadline, gb_error *err)
{
	gcp_ctx *c = b->c;
	const gb_host *h = c->host;
	const char **want = drvc_xcalloc(b->n, sizeof(*want));
	gb_http_resp resp;
	gcp_op op;
	char rid[37], target[200], *body = NULL, *rest, *url;
	size_t k = 0;
	int rc = -1;

	memset(&op, 0, sizeof(op));
	for (size_t i = 0; i < b->n; i++)
		if (!b->mine[i])
			want[k++] = b->names[i];
	body = gcp_bulk_body(b->req, want, k, b->p, err);
	if (!body)
		goto out;
	gcp_request_id(b->req->token, want, k, rid);
	rest = drvc_xasprintf("instances/bulkInsert?requestId=%s", rid);
	url = gcp_zone_url(c, b->zone, rest);
	free(rest);
	snprintf(target, sizeof(target), "bulkInsert of %.63s%s%.63s", want[0],
	         k > 1 ? ".." : "", k > 1 ? want[k - 1] : "");
	op.target = target;
	op.zone = drvc_xstrdup(b->zone);
	rc = gcp_api(c, "POST", url, body, "gce-mutate", target, &resp, err);
	free(url);
	if (rc == 0)
		rc = gcp_op_answer(&resp, target, &op, err);
	h->http_free(h->ctx, &resp);
	if (rc == 0 && !op.done)
		rc = gcp_ops_wait(c, &op, 1, deadline, err);
	if (rc == 0 && op.failed) {
		*err = op.err;
		rc = -1;
	}
out:
	free(op.name);
	free(op.zone);
	free(body);
	free(want);
	return rc;
}

/* After alreadyExists: which names are ours (adopted into b->mine).
 * 0 all ours, 1 some still missing, -1 with err (CONFLICT: one is not
 * ours; TRANSIENT: one of ours is being deleted). */
static int adopt(bulk *b, gb_error *err)
{
	char want[64];
	size_t missing = 0;
	gcp_label_value(b->req->token, want);
	for (size_t i = 0; i < b->n; i++) {
		gcp_inst old;
		const char *tok, *why;
		int r;
		if (b->mine[i])
			continue;
		r = gcp_get_inst(b->c, b->zone, b->names[i], &old, err);
		if (r < 0)
			return -1;
		if (r == 0) {
			missing++;
			continue;
		}
		tok = gcp_inst_label(&old, GB_TAG_TOKEN);
		if (!tok || strcmp(tok, want) != 0) {
			gcp_inst_free(&old);
			drvc_err(err, GB_ERR_CONFLICT, 409, "alreadyExists",
			         "GCE instance %s already exists in %s and does "
			         "not carry label gpubroker-token=%s", b->names[i],
			         b->zone, want);
			return -1;
		}
		if (gcp_inst_state(&old, &why) == GB_INST_STOPPING) {
			gcp_inst_free(&old);
			drvc_err(err, GB_ERR_TRANSIENT, 409, "InstanceBeingDeleted",
			         "GCE instance %s in %s (made with this token) is "
			         "being deleted; the create is retried once it is "
			         "gone", b->names[i], b->zone);
			return -1;
		}
		gcp_inst_free(&old);
		b->mine[i] = 1;
	}
	return missing ? 1 : 0;
}

int gcp_create(void *ctx, const gb_create_req *req, gb_instance_cb emit,
               void *ud, gb_error *err)
{
	gcp_ctx *c = ctx;
	const gb_host *h = c->host;
	gcp_params p;
	char zone[64];
	gcp_inst *insts = NULL;
	bulk b;
	size_t i;
	int64_t deadline;
	int rc = -1;

	if (drvc_create_req_ok(req, "GCP", GCP_MAX_COUNT, err) != 0 ||
	    gcp_require(c, err) != 0 || choose_zone(c, req, zone, err) != 0)
		return -1;
	memset(&p, 0, sizeof(p));
	p.image = req->image && *req->image ? req->image
	                                    : gcp_image_for(c, req->region);
	p.network = c->network;
	p.subnetwork = c->subnetwork;
	p.disk_type = c->disk_type;
	p.disk_gb = c->disk_gb;
	p.public_ip = c->public_ip;

	memset(&b, 0, sizeof(b));
	b.c = c;
	b.req = req;
	b.p = &p;
	b.zone = zone;
	b.n = req->count;
	b.names = drvc_xcalloc(b.n, sizeof(*b.names));
	b.mine = drvc_xcalloc(b.n, sizeof(int));
	insts = drvc_xcalloc(b.n, sizeof(gcp_inst));
	for (i = 0; i < b.n; i++)
		if (gcp_instance_name(req->name_prefix,
		                      req->first_index + (unsigned)i, b.names[i],
		                      err) != 0)
			goto out;
	deadline = h->mono_ms(h->ctx) + c->create_timeout_ms;

	/* at most twice: all names, then (after alreadyExists) the ones
	 * still missing */
	for (int round = 0;; round++) {
		int r;
		if (bulk_insert(&b, deadline, err) == 0)
			break;
		if (err->cls != GB_ERR_CONFLICT || round > 0)
			goto out;
		r = adopt(&b, err);
		if (r < 0)
			goto out;
		if (r == 0)
			break;
	}
	memset(err, 0, sizeof(*err));
	for (i = 0; i < b.n; i++) {
		int r = gcp_get_inst(c, zone, b.names[i], &insts[i], err);
		if (r < 0)
			goto out;
		if (r == 0) {
			drvc_err(err, GB_ERR_TRANSIENT, 404, "notFound",
			         "GCE instance %s in %s is gone right after its "
			         "bulkInsert operation finished", b.names[i], zone);
			goto out;
		}
		gcp_zone_remember(c, b.names[i], zone);
	}
	for (i = 0; i < b.n; i++)
		if (gcp_emit_inst(c, &insts[i], emit, ud))
			break;
	rc = 0;
out:
	for (i = 0; i < b.n; i++)
		gcp_inst_free(&insts[i]);
	free(b.names);
	free(b.mine);
	free(insts);
	return rc;
}
