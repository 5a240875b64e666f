/* gcp_create.c -- create req->count instances, all or nothing.
 *
 * One instances.insert per instance (bulkInsert is not used, so the
 * driver does not advertise BATCH_CREATE), each with a requestId derived
 * from (token, index) so that a retried create is deduplicated by GCE.
 * A name already taken by an instance without our token is a CONFLICT.
 * Every operation is polled until DONE; DONE with an error (capacity,
 * quota, ...) on any instance deletes every instance of this request and
 * returns that error's class. */
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

typedef struct gone {
	gcp_ctx *c;
	const char *zone;
	char (*names)[64];
} gone;

static int gone_del(void *ud, size_t i, gb_error *err)
{
	gone *g = ud;
	return gcp_delete_inst(g->c, g->zone, g->names[i], err);
}

static const char *gone_name(void *ud, size_t i)
{
	return ((gone *)ud)->names[i];
}

/* Deletes every touched instance unless the failure is throttled or
 * transient; notes the outcome in err->message. */
static void failed(gcp_ctx *c, const char *zone, char (*names)[64],
                   const int *touched, size_t n, gb_error *err)
{
	gone g = {c, zone, names};
	drvc_cleanup cl = {c->host, "gcp", "instance", gone_del, gone_name, &g};
	drvc_create_failed(&cl, touched, n, err);
}

static int op_name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return 0;
	return 1;
}

/* One insert.  Returns 0 (op filled, or op->done when the instance was
 * already ours), -1 with err.  *taken set when the name already existed:
 * someone else's (with -1), or ours from an earlier try (with 0); either
 * way a failure of this call must not delete it.  *accepted set when GCE
 * answered the insert with a 2xx (even one whose body is unusable). */
static int insert_one(gcp_ctx *c, const gb_create_req *req, const char *zone,
                      const char *name, unsigned index, const char *body,
                      gcp_op *op, int *taken, int *accepted,
                      gb_error *err)
{
	const gb_host *h = c->host;
	gb_http_resp resp;
	char rid[37], what[200], opname[128], st[32], code[96], msg[512];
	char *rest, *url;
	long hs;
	int rc;

	*taken = 0;
	*accepted = 0;
	gcp_request_id(req->token, index, rid);
	rest = drvc_xasprintf("instances?requestId=%s", rid);
	url = gcp_zone_url(c, zone, rest);
	free(rest);
	snprintf(what, sizeof(what), "insert instance %.63s in %.63s", name,
	         zone);
	rc = gcp_api(c, "POST", url, body, "gce-mutate", what, &resp, err);
	free(url);
	*accepted = rc == 0; /* a 2xx: GCE took the insert from this call */
	if (rc != 0) {
		h->http_free(h->ctx, &resp);
		if (err->cls == GB_ERR_CONFLICT) {
			/* alreadyExists: ours from an earlier try, or a clash? */
			gcp_inst old;
			char want[64];
			gb_error e2;
			int r = gcp_get_inst(c, zone, name, &old, &e2);
			gcp_label_value(req->token, want);
			if (r == 1 && gcp_inst_label(&old, GB_TAG_TOKEN) &&
			    strcmp(gcp_inst_label(&old, GB_TAG_TOKEN), want) == 0) {
				/* made by an earlier try with this token, which
				 * the host may have recorded: not this call's
				 * to clean up if the call fails.  One that is
				 * being deleted (the earlier try's cleanup) is
				 * not a result: try again once it is gone. */
				const char *why;
				gb_instance_state ost = gcp_inst_state(&old, &why);
				*taken = 1;
				gcp_inst_free(&old);
				if (ost == GB_INST_STOPPING) {
					drvc_err(err, GB_ERR_TRANSIENT, 409,
					         "InstanceBeingDeleted",
					         "GCE instance %s in %s (from an earlier "
					         "try with this token) is being deleted; "
					         "the create is retried once it is gone",
					         name, zone);
					return -1;
				}
				memset(err, 0, sizeof(*err));
				op->done = 1;
				return 0;
			}
			if (r == 1) {
				*taken = 1;
				drvc_err(err, GB_ERR_CONFLICT, 409, "alreadyExists",
				         "GCE instance %s already exists in %s and does "
				         "not carry label gpubroker-token=%s", name, zone,
				         want);
			}
			gcp_inst_free(&old);
		}
		return -1;
	}
	if (drvc_json_ctype_ok(&resp, what, err) != 0 ||
	    gcp_parse_op(resp.body, resp.body_len, opname, sizeof(opname), st,
	                 sizeof(st), code, sizeof(code), msg, sizeof(msg),
	                 &hs) != 0 ||
	    !op_name_ok(opname)) {
		h->http_free(h->ctx, &resp);
		if (!err->code[0])
			drvc_err(err, GB_ERR_TRANSIENT, (int)resp.status,
			         "MalformedOperation",
			         "GCP %s: the answer is not an Operation", what);
		return -1;
	}
	h->http_free(h->ctx, &resp);
	op->name = drvc_xstrdup(opname);
	if (strcmp(st, "DONE") == 0) {
		op->done = 1;
		if (code[0]) {
			op->failed = 1;
			drvc_err(&op->err, gcp_op_class(code, hs), (int)hs, code,
			         "GCE instance %s in %s: %s%s%s", name, zone, code,
			         msg[0] ? ": " : "", msg);
		}
	}
	return 0;
}

int gcp_create(void *ctx, const gb_create_req *req, gb_instance_cb emit,
               void *ud, gb_error *err)
{
	gcp_ctx *c = ctx;
	const gb_host *h = c->host;
	gcp_params p;
	char zone[64];
	char (*names)[64] = NULL;
	int *touched = NULL;
	gcp_op *ops = NULL;
	gcp_inst *insts = NULL;
	size_t n, i;
	int64_t deadline;
	int rc = -1;

	if (drvc_create_req_ok(req, "GCP", GCP_MAX_COUNT, err) != 0 || gcp_require(c, err) != 0 ||
	    choose_zone(c, req, zone, err) != 0)
		return -1;
	memset(&p, 0, sizeof(p));
	p.image = req->image && *req->image ? req->image
	                                    : gcp_image_for(c, req->region);
	p.network = c->network;
	p.subnetwork = c->subnetwork;
	p.disk_type = c->disk_type;
	p.disk_gb = c->disk_gb;
	p.public_ip = c->public_ip;

	n = req->count;
	names = drvc_xcalloc(n, sizeof(*names));
	touched = drvc_xcalloc(n, sizeof(int));
	ops = drvc_xcalloc(n, sizeof(gcp_op));
	insts = drvc_xcalloc(n, sizeof(gcp_inst));
	for (i = 0; i < n; i++) {
		if (gcp_instance_name(req->name_prefix,
		                      req->first_index + (unsigned)i, names[i],
		                      err) != 0)
			goto out;
		ops[i].target = names[i];
		ops[i].zone = drvc_xstrdup(zone);
	}
	deadline = h->mono_ms(h->ctx) + c->create_timeout_ms;

	for (i = 0; i < n; i++) {
		char *body = gcp_insert_body(req, names[i], zone, &p, err);
		int taken = 0, accepted = 0, r;
		if (!body)
			goto fail;
		r = insert_one(c, req, zone, names[i],
		               req->first_index + (unsigned)i, body, &ops[i],
		               &taken, &accepted, err);
		free(body);
		/* Only an insert GCE accepted from this call is this call's to
		 * delete if the call fails.  A name that already existed, or
		 * an insert whose every try failed (throttled, or an answer
		 * lost after the work was done), is left alone: it may be an
		 * instance of an earlier try that the host has recorded, and a
		 * replay with the same token finds it. */
		touched[i] = accepted && !taken;
		if (r != 0)
			goto fail;
	}
	if (gcp_ops_wait(c, ops, n, deadline, err) != 0)
		goto fail;
	for (i = 0; i < n; i++)
		if (ops[i].failed) {
			*err = ops[i].err;
			goto fail;
		}
	for (i = 0; i < n; i++) {
		int r = gcp_get_inst(c, zone, names[i], &insts[i], err);
		if (r < 0)
			goto fail;
		if (r == 0) {
			drvc_err(err, GB_ERR_TRANSIENT, 404, "notFound",
			         "GCE instance %s in %s is gone right after its "
			         "insert operation finished", names[i], zone);
			goto fail;
		}
		gcp_zone_remember(c, names[i], zone);
	}
	for (i = 0; i < n; i++)
		if (gcp_emit_inst(c, &insts[i], emit, ud))
			break;
	rc = 0;
	goto out;
fail:
	/* A throttled or transient failure leaves the outcome unknown to the
	 * host, which replays the create with the same token: the replay's
	 * requestId returns this call's operations and finds what they made.
	 * Deleting it here would leave that requestId pointing at a deleted
	 * instance, and the replay could never succeed. */
	failed(c, zone, names, touched, n, err);
out:
	for (i = 0; i < n; i++) {
		free(ops[i].name);
		free(ops[i].zone);
		gcp_inst_free(&insts[i]);
	}
	free(names);
	free(touched);
	free(ops);
	free(insts);
	return rc;
}
