/* fake_sloppy.c -- a driver named "sloppy" that keeps its instances in
 * memory and breaks driver.h on purpose, for `gpubroker drivers test`
 * (tests/integration/drivers_test.sh) to catch: it forgets the
 * gpubroker-token tag, so a replayed create (same token) makes new
 * instances; its error for an unknown type quotes the API key it
 * registered as a secret; and its first create logs a session token
 * (info level) before it registers it.  Everything else is as driver.h
 * asks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpubroker/driver.h"

#define SLOPPY_KEY "sloppy-api-key-4f2a9c71"
#define SLOPPY_SESSION "sloppy-session-8d1e55aa"
#define SLOPPY_MAX 64
#define SLOPPY_QUOTA 16

typedef struct sl_inst {
	char id[32], name[96], pool[96], broker[96], type[64];
	int gone;
} sl_inst;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static sl_inst insts[SLOPPY_MAX];
static size_t ninsts;
static const gb_host *host;
static int have_session;

static int sl_init(const gb_host *h, void **out, gb_error *err)
{
	(void)err;
	host = h;
	h->redact(h->ctx, SLOPPY_KEY);
	*out = &host;
	return 0;
}

static void sl_fini(void *ctx)
{
	(void)ctx;
}

static const char *const types[] = {"sl.1xl4", "sl.8xh100"};

static int sl_list(void *ctx, gb_offer_cb emit, void *ud, gb_error *err)
{
	(void)ctx;
	(void)err;
	for (size_t i = 0; i < 2; i++) {
		gb_offer o;
		memset(&o, 0, sizeof(o));
		o.region = "sloppy-1";
		o.zone = "";
		o.instance_type = types[i];
		o.gpu_model = i ? "H100" : "L4";
		o.gpu_count = i ? 8 : 1;
		o.gpu_memory_gb = i ? 80 : 24;
		o.capacity = GB_CAPACITY_ON_DEMAND;
		o.price_per_hour = i ? 30.0 : 0.8;
		o.source = "sloppy";
		o.fetched_at = 1;
		if (emit(ud, &o))
			break;
	}
	return 0;
}

static int sl_emit(const sl_inst *s, gb_instance_cb emit, void *ud)
{
	gb_kv tags[3] = {{GB_TAG_POOL, s->pool}, {GB_TAG_BROKER, s->broker},
	                 {GB_TAG_TEAM, "t"}};
	gb_instance in;
	memset(&in, 0, sizeof(in));
	in.id = s->id;
	in.name = s->name;
	in.region = "sloppy-1";
	in.zone = "";
	in.instance_type = s->type;
	in.state = s->gone ? GB_INST_TERMINATED : GB_INST_RUNNING;
	in.tags = tags;
	in.ntags = 3; /* no gpubroker-token: the bug */
	return emit(ud, &in);
}

static int sl_create(void *ctx, const gb_create_req *req, gb_instance_cb emit,
                     void *ud, gb_error *err)
{
	size_t live = 0, first;
	int known = 0;
	(void)ctx;
	for (size_t i = 0; i < 2; i++)
		known |= strcmp(req->instance_type, types[i]) == 0;
	if (!known) {
		err->cls = GB_ERR_INVALID;
		snprintf(err->code, sizeof(err->code), "UnknownType");
		snprintf(err->message, sizeof(err->message),
		         "no instance type %s (account key " SLOPPY_KEY ")",
		         req->instance_type);
		return -1;
	}
	pthread_mutex_lock(&mu);
	if (!have_session) {
		/* the bug: logged before it is registered */
		host->log(host->ctx, GB_LOG_INFO, "new session " SLOPPY_SESSION);
		host->redact(host->ctx, SLOPPY_SESSION);
		have_session = 1;
	}
	for (size_t i = 0; i < ninsts; i++)
		live += !insts[i].gone;
	if (live + req->count > SLOPPY_QUOTA || ninsts + req->count > SLOPPY_MAX) {
		pthread_mutex_unlock(&mu);
		err->cls = GB_ERR_QUOTA;
		snprintf(err->code, sizeof(err->code), "QuotaExceeded");
		snprintf(err->message, sizeof(err->message),
		         "%u more instances would exceed the quota of %d",
		         req->count, SLOPPY_QUOTA);
		return -1;
	}
	/* the token is ignored: every call makes new instances */
	first = ninsts;
	for (unsigned i = 0; i < req->count; i++) {
		sl_inst *s = &insts[ninsts++];
		memset(s, 0, sizeof(*s));
		snprintf(s->id, sizeof(s->id), "sl-%04zu", ninsts);
		snprintf(s->name, sizeof(s->name), "%s-%u", req->name_prefix,
		         req->first_index + i);
		snprintf(s->pool, sizeof(s->pool), "%s", req->pool);
		snprintf(s->broker, sizeof(s->broker), "%s", req->broker_id);
		snprintf(s->type, sizeof(s->type), "%s", req->instance_type);
	}
	pthread_mutex_unlock(&mu);
	for (size_t i = first; i < first + req->count; i++)
		if (sl_emit(&insts[i], emit, ud))
			break;
	return 0;
}

static int sl_matches(const sl_inst *s, const gb_describe_req *req)
{
	if (s->gone && !req->include_terminated)
		return 0;
	if (req->nids) {
		for (size_t k = 0; k < req->nids; k++)
			if (strcmp(req->ids[k], s->id) == 0)
				return 1;
		return 0;
	}
	if (req->pool && strcmp(req->pool, s->pool) != 0)
		return 0;
	if (req->broker_id && strcmp(req->broker_id, s->broker) != 0)
		return 0;
	return !(req->token && *req->token); /* it has no token tag */
}

static int sl_describe(void *ctx, const gb_describe_req *req,
                       gb_instance_cb emit, void *ud, gb_error *err)
{
	sl_inst snap[SLOPPY_MAX];
	size_t n = 0;
	(void)ctx;
	(void)err;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < ninsts; i++)
		if (sl_matches(&insts[i], req))
			snap[n++] = insts[i];
	pthread_mutex_unlock(&mu);
	for (size_t i = 0; i < n; i++)
		if (sl_emit(&snap[i], emit, ud))
			break;
	return 0;
}

static int sl_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                        gb_error *err)
{
	(void)ctx;
	(void)err;
	pthread_mutex_lock(&mu);
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < ninsts; i++)
			if (strcmp(refs[k].id, insts[i].id) == 0)
				insts[i].gone = 1;
	pthread_mutex_unlock(&mu);
	return 0;
}

static const gb_driver desc = {
	GB_DRIVER_V1,
	.name = "sloppy",
	.version = "0.1",
	.description = "a deliberately non-conforming test driver",
	.caps = GB_DRV_CAP_BATCH_CREATE | GB_DRV_CAP_BATCH_TERMINATE,
	.init = sl_init,
	.fini = sl_fini,
	.list_offers = sl_list,
	.create = sl_create,
	.describe = sl_describe,
	.terminate = sl_terminate,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	return host_major == GB_DRIVER_ABI_MAJOR ? &desc : NULL;
}
