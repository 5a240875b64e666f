/*
 * tinycloud.c -- the smallest complete gpubroker driver, built out of tree
 * against the installed header and SDK (tests/integration/sdk_driver.sh;
 * drivers/README.md walks through it).  Its "cloud" is a JSON file:
 * <state_dir>/instances.json holds every instance ever created, so
 * create, describe and terminate really keep what they did between runs.
 * Offers come from the catalog file data/offers.json (drvc_catalog).
 *
 * Idempotency: an instance carries its request's token as a tag; a
 * create whose token is already on live instances returns those and makes
 * nothing.  The file is rewritten whole (temporary file + rename) under a
 * mutex (threads of one process) and an flock (other processes).
 */
#define _GNU_SOURCE /* flock, O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drvc_catalog.h"
#include "drvc_create.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_opts.h"
#include "drvc_util.h"
#include "gpubroker/driver.h"

#define TC_NAME "tinycloud"
#define TC_MAX_COUNT 16

typedef struct tc_ctx {
	const gb_host *host;
	char *state_dir;
	char *db;    /* <state_dir>/instances.json */
	char *lock;  /* <state_dir>/instances.lock */
	pthread_mutex_t mu;
} tc_ctx;

/* mkdir -p path (0700).  0, or -1 with errno. */
static int mkdirs(const char *path)
{
	char *p = drvc_xstrdup(path);
	int rc = 0;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST) {
			rc = -1;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return rc;
}

static int tc_init(const gb_host *host, void **out, gb_error *err)
{
	const char *dir = drvc_opt(host, "state_dir");
	tc_ctx *c;
	if (drvc_host_ok(host, TC_NAME, err) != 0)
		return -1;
	if (!dir) {
		drvc_err(err, GB_ERR_INVALID, 0, "BadOption",
		         TC_NAME " driver: no state_dir (the host sets it next to "
		         "a SQLite state; set drivers[].options.state_dir)");
		return -1;
	}
	if (mkdirs(dir) != 0) {
		drvc_err(err, GB_ERR_INVALID, 0, "BadOption",
		         TC_NAME " driver: cannot create state_dir %s: %s", dir,
		         strerror(errno));
		return -1;
	}
	c = drvc_xcalloc(1, sizeof(*c));
	c->host = host;
	c->state_dir = drvc_xstrdup(dir);
	c->db = drvc_xasprintf("%s/instances.json", dir);
	c->lock = drvc_xasprintf("%s/instances.lock", dir);
	pthread_mutex_init(&c->mu, NULL);
	*out = c;
	return 0;
}

static void tc_fini(void *ctx)
{
	tc_ctx *c = ctx;
	pthread_mutex_destroy(&c->mu);
	free(c->state_dir);
	free(c->db);
	free(c->lock);
	free(c);
}

static int tc_list_offers(void *ctx, gb_offer_cb emit, void *ud,
                          gb_error *err)
{
	tc_ctx *c = ctx;
	return drvc_catalog_list(c->host, TC_NAME, emit, ud, err);
}

/* ------------------------------------------------------------ the file */

/* Takes the locks and reads the file ({"next": N, "instances": [...]}
 * when missing).  Returns the root (caller json_decref()s, then calls
 * tc_unlock with *fd), or NULL with err. */
static json_t *tc_lock_load(tc_ctx *c, int *fd, gb_error *err)
{
	json_error_t je;
	json_t *root;
	pthread_mutex_lock(&c->mu);
	*fd = open(c->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (*fd < 0 || flock(*fd, LOCK_EX) != 0) {
		drvc_err(err, GB_ERR_TRANSIENT, 0, "StateLocked",
		         TC_NAME ": cannot lock %s: %s", c->lock, strerror(errno));
		goto fail;
	}
	if (access(c->db, F_OK) != 0)
		return json_pack("{s:i, s:[]}", "next", 1, "instances");
	root = json_load_file(c->db, 0, &je);
	if (!root || !json_is_array(json_object_get(root, "instances"))) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "StateCorrupt",
		         TC_NAME ": %s: %s (delete it to start afresh)", c->db,
		         root ? "no \"instances\" array" : je.text);
		json_decref(root);
		goto fail;
	}
	return root;
fail:
	if (*fd >= 0)
		close(*fd);
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

static void tc_unlock(tc_ctx *c, int fd)
{
	close(fd); /* drops the flock */
	pthread_mutex_unlock(&c->mu);
}

/* Replaces the file with root.  0, or -1 with err. */
static int tc_save(tc_ctx *c, const json_t *root, gb_error *err)
{
	char *tmp = drvc_xasprintf("%s.tmp", c->db);
	int rc = json_dump_file(root, tmp, JSON_INDENT(1));
	if (rc == 0 && rename(tmp, c->db) != 0)
		rc = -1;
	if (rc != 0)
		drvc_err(err, GB_ERR_TRANSIENT, 0, "StateWriteFailed",
		         TC_NAME ": cannot write %s: %s", c->db, strerror(errno));
	free(tmp);
	return rc;
}

/* inst[key] as a string, "" when missing (a hand-edited file) */
static const char *field(const json_t *inst, const char *key)
{
	const char *v = drvc_jstr(inst, key);
	return v ? v : "";
}

static const char *tag(const json_t *inst, const char *key)
{
	return drvc_jstr(json_object_get(inst, "tags"), key);
}

static int tc_emit(const json_t *inst, gb_instance_cb emit, void *ud)
{
	size_t ntags;
	gb_kv *tags = drvc_json_kv_borrow(json_object_get(inst, "tags"),
	                                  &ntags);
	int64_t ms = 0;
	gb_instance g = {0};
	int rc;
	drvc_jint(json_object_get(inst, "created_ms"), &ms);
	g.id = field(inst, "id");
	g.name = field(inst, "name");
	g.region = field(inst, "region");
	g.zone = field(inst, "zone");
	g.instance_type = field(inst, "type");
	g.capacity = (gb_capacity)json_integer_value(
		json_object_get(inst, "capacity"));
	g.state = strcmp(field(inst, "state"), "terminated") == 0
	                  ? GB_INST_TERMINATED
	                  : GB_INST_RUNNING;
	g.private_ip = drvc_jstr(inst, "private_ip");
	g.tags = tags;
	g.ntags = ntags;
	g.created_at = ms / 1000;
	g.created_ms = ms;
	rc = emit(ud, &g);
	free(tags);
	return rc;
}

static int live(const json_t *inst)
{
	return strcmp(field(inst, "state"), "running") == 0;
}

/* ------------------------------------------------------------ create */

struct type_find {
	const char *type, *zone;
	int found;
};

static int type_cb(void *ud, const gb_offer *o)
{
	struct type_find *f = ud;
	if (strcmp(o->instance_type, f->type) == 0 &&
	    (!*f->zone || strcmp(o->zone, f->zone) == 0)) {
		f->found = 1;
		return 1;
	}
	return 0;
}

/* 0 when the catalog sells req's type in req's region (and zone). */
static int tc_type_ok(tc_ctx *c, const gb_create_req *r, gb_error *err)
{
	char path[1024];
	struct type_find f = {r->instance_type, r->zone ? r->zone : "", 0};
	if (!drvc_catalog_path(c->host, TC_NAME, path, sizeof(path))) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "NoCatalog",
		         TC_NAME ": no offers file (set the catalog option)");
		return -1;
	}
	if (drvc_catalog_emit(path, r->region, type_cb, &f, err) != 0)
		return -1;
	if (!f.found) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidInstanceType",
		         TC_NAME " create: no type %s in region %s%s%s "
		         "(`gpubroker offers` lists what tinycloud sells)",
		         r->instance_type, r->region, *f.zone ? " zone " : "",
		         f.zone);
		return -1;
	}
	return 0;
}

static int tc_create(void *ctx, const gb_create_req *r, gb_instance_cb emit,
                     void *ud, gb_error *err)
{
	tc_ctx *c = ctx;
	json_t *root, *list, *inst, *made;
	size_t i;
	int fd, rc = -1;
	if (drvc_create_req_ok(r, TC_NAME, TC_MAX_COUNT, err) != 0 ||
	    tc_type_ok(c, r, err) != 0)
		return -1;
	if (!(root = tc_lock_load(c, &fd, err)))
		return -1;
	list = json_object_get(root, "instances");
	made = json_array();
	/* an idempotent retry: what carries the token already */
	json_array_foreach(list, i, inst) {
		const char *t = tag(inst, GB_TAG_TOKEN);
		if (live(inst) && t && strcmp(t, r->token) == 0)
			json_array_append(made, inst);
	}
	if (json_array_size(made) == 0) {
		json_int_t next = json_integer_value(json_object_get(root, "next"));
		int64_t now = c->host->now_ms(c->host->ctx);
		for (unsigned k = 0; k < r->count; k++, next++) {
			json_t *tags = json_object();
			char id[32], name[256], ip[32];
			for (size_t t = 0; t < r->ntags; t++)
				json_object_set_new(tags, r->tags[t].key,
				                    json_string(r->tags[t].value));
			json_object_set_new(tags, GB_TAG_POOL, json_string(r->pool));
			json_object_set_new(tags, GB_TAG_BROKER,
			                    json_string(r->broker_id));
			json_object_set_new(tags, GB_TAG_TOKEN, json_string(r->token));
			if (r->team && *r->team)
				json_object_set_new(tags, GB_TAG_TEAM,
				                    json_string(r->team));
			snprintf(id, sizeof(id), "tc-%06lld", (long long)next);
			snprintf(name, sizeof(name), "%s-%u", r->name_prefix,
			         r->first_index + k);
			snprintf(ip, sizeof(ip), "10.0.%lld.%lld",
			         (long long)(next / 250 % 250),
			         (long long)(next % 250 + 2));
			inst = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s, "
			                 "s:I, s:o}",
			                 "id", id, "name", name, "region", r->region,
			                 "zone", r->zone ? r->zone : "", "type",
			                 r->instance_type, "capacity", (int)r->capacity,
			                 "state", "running", "private_ip", ip,
			                 "created_ms", (json_int_t)now, "tags", tags);
			json_array_append_new(list, inst);
			json_array_append(made, inst);
		}
		json_object_set_new(root, "next", json_integer(next));
		if (tc_save(c, root, err) != 0)
			goto out;
		c->host->log(c->host->ctx, GB_LOG_INFO,
		             TC_NAME ": created %u x %s in %s", r->count,
		             r->instance_type, r->region);
	}
	rc = 0;
	json_array_foreach(made, i, inst)
		if (tc_emit(inst, emit, ud) != 0)
			break;
out:
	json_decref(made);
	json_decref(root);
	tc_unlock(c, fd);
	return rc;
}

/* ------------------------------------------------------------ describe */

/* 1 when tag key of inst is want (or want is NULL or "": no filter) */
static int tag_is(const json_t *inst, const char *key, const char *want)
{
	const char *t = tag(inst, key);
	return !want || !*want || (t && strcmp(t, want) == 0);
}

/* The precedence of gb_describe_req: ids when given, else the pool and
 * broker tags; the token (when set) and region narrow either. */
static int wanted(const gb_describe_req *q, const json_t *inst)
{
	if (q->region && strcmp(q->region, field(inst, "region")) != 0)
		return 0;
	if (!q->include_terminated && !live(inst))
		return 0;
	if (!tag_is(inst, GB_TAG_TOKEN, q->token))
		return 0;
	if (q->nids) {
		for (size_t i = 0; i < q->nids; i++)
			if (q->ids[i] && strcmp(q->ids[i], field(inst, "id")) == 0)
				return 1;
		return 0;
	}
	return tag_is(inst, GB_TAG_POOL, q->pool) &&
	       tag_is(inst, GB_TAG_BROKER, q->broker_id);
}

static int tc_describe(void *ctx, const gb_describe_req *q,
                       gb_instance_cb emit, void *ud, gb_error *err)
{
	tc_ctx *c = ctx;
	json_t *root, *inst;
	size_t i;
	int fd;
	if (q->nids == 0 && !(q->pool && *q->pool) &&
	    !(q->broker_id && *q->broker_id)) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidRequest",
		         TC_NAME " describe: give instance ids, a pool or a "
		         "broker id");
		return -1;
	}
	if (!(root = tc_lock_load(c, &fd, err)))
		return -1;
	json_array_foreach(json_object_get(root, "instances"), i, inst)
		if (wanted(q, inst) && tc_emit(inst, emit, ud) != 0)
			break;
	json_decref(root);
	tc_unlock(c, fd);
	return 0;
}

/* ------------------------------------------------------------ terminate */

static int tc_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                        gb_error *err)
{
	tc_ctx *c = ctx;
	json_t *root, *inst;
	size_t i;
	int fd, changed = 0, rc = 0;
	if (!(root = tc_lock_load(c, &fd, err)))
		return -1;
	json_array_foreach(json_object_get(root, "instances"), i, inst)
		for (size_t k = 0; k < n; k++)
			if (strcmp(refs[k].id, field(inst, "id")) == 0 &&
			    live(inst)) {
				json_object_set_new(inst, "state",
				                    json_string("terminated"));
				changed = 1;
			}
	/* an id that is not there (or already terminated) is already gone */
	if (changed)
		rc = tc_save(c, root, err);
	json_decref(root);
	tc_unlock(c, fd);
	return rc;
}

/* ------------------------------------------------------------ descriptor */

static const char *const tc_options[] = {"catalog", NULL};

static const gb_driver tc_driver = {
	GB_DRIVER_V1,
	.name = TC_NAME,
	.version = "0.1.0",
	.description = "the SDK's example driver: a cloud in a JSON file",
	.caps = GB_DRV_CAP_BATCH_CREATE | GB_DRV_CAP_ZONES |
	        GB_DRV_CAP_DESCRIBE_ALL_REGIONS | GB_DRV_CAP_ATOMIC_CREATE,
	.init = tc_init,
	.fini = tc_fini,
	.list_offers = tc_list_offers,
	.create = tc_create,
	.describe = tc_describe,
	.terminate = tc_terminate,
	.options = tc_options,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_abi_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_abi_major)
{
	return host_abi_major == GB_DRIVER_ABI_MAJOR ? &tc_driver : NULL;
}
