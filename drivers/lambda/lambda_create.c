/* lambda_create.c -- create: Lambda has no idempotency token, so the
 * instance name carries pool, broker and token (lambda_names.c) and a
 * create first lists the instances (GET /instances) and counts those
 * already bearing that name in the region: a replay of the same token
 * returns them and launches only the missing ones, with POST
 * /instance-operations/launch, quantity = what is missing (at most the
 * option max_quantity per launch).  A launch may make fewer than asked
 * (API.md, "Launch"): the rest is launched again, until all are made or
 * Lambda refuses, and its refusal (capacity, quota) is the create's
 * error, after the cleanup below.
 *
 * SSH: Lambda installs exactly one registered key, named in the launch.
 * The option ssh_key_name names one; else the request's first public key
 * is registered once (POST /ssh-keys) under "gpubroker-<hash>" unless a
 * key with that name or that public key exists (GET /ssh-keys).
 *
 * On a definite failure (CAPACITY, QUOTA, INVALID, ...) instances that an
 * earlier call with the same token made are terminated too, so the
 * token's request stays all or nothing; on THROTTLED / TRANSIENT they are
 * left for the replay to find. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "drvc_cache.h"
#include "drvc_create.h"
#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_util.h"
#include "lambda.h"

/* the most instances one create makes (in launches of max_quantity) */
#define LAMBDA_MAX_COUNT 256
/* launches repeated after THROTTLED / TRANSIENT within one create */
#define LAMBDA_LAUNCH_TRIES 5

static int is_uuid(const char *s)
{
	static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
	if (!s || strlen(s) != sizeof(shape) - 1)
		return 0;
	for (size_t i = 0; shape[i]; i++) {
		char ch = s[i];
		int hex = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
		          (ch >= 'A' && ch <= 'F');
		if (shape[i] == '-' ? ch != '-' : !hex)
			return 0;
	}
	return 1;
}

static void tag(json_t *arr, const char *k, const char *v)
{
	json_t *t;
	if (!k || !*k || !v)
		return;
	t = json_object();
	json_object_set_new(t, "key", json_string(k));
	json_object_set_new(t, "value", json_string(v));
	json_array_append_new(arr, t);
}

char *lambda_launch_body(const gb_create_req *req, const char *name,
                         const char *ssh_key, unsigned quantity,
                         const char *image_family, const char *file_system,
                         int with_tags)
{
	json_t *o = json_object(), *keys = json_array(), *tags = json_array();
	const char *image = req->image && *req->image ? req->image : image_family;
	char *s;

	json_object_set_new(o, "region_name", json_string(req->region));
	json_object_set_new(o, "instance_type_name",
	                    json_string(req->instance_type));
	json_array_append_new(keys, json_string(ssh_key));
	json_object_set_new(o, "ssh_key_names", keys);
	json_object_set_new(o, "quantity", json_integer(quantity));
	json_object_set_new(o, "name", json_string(name));
	if (file_system && *file_system) {
		json_t *fs = json_array();
		json_array_append_new(fs, json_string(file_system));
		json_object_set_new(o, "file_system_names", fs);
	}
	if (image && *image) {
		json_t *im = json_object();
		json_object_set_new(im, is_uuid(image) ? "id" : "family",
		                    json_string(image));
		json_object_set_new(o, "image", im);
	}
	if (req->user_data && *req->user_data)
		json_object_set_new(o, "user_data", json_string(req->user_data));
	tag(tags, GB_TAG_POOL, req->pool);
	tag(tags, GB_TAG_BROKER, req->broker_id);
	tag(tags, GB_TAG_TOKEN, req->token);
	tag(tags, GB_TAG_TEAM, req->team && *req->team ? req->team : NULL);
	for (size_t i = 0; i < req->ntags; i++) {
		const char *k = req->tags[i].key;
		if (!k || strcmp(k, GB_TAG_POOL) == 0 ||
		    strcmp(k, GB_TAG_BROKER) == 0 || strcmp(k, GB_TAG_TOKEN) == 0 ||
		    strcmp(k, GB_TAG_TEAM) == 0)
			continue; /* ours win */
		tag(tags, k, req->tags[i].value);
	}
	if (with_tags)
		json_object_set_new(o, "tags", tags);
	else
		json_decref(tags);
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (!s)
		abort();
	return s;
}

/* ---- SSH key ---------------------------------------------------- */

static int same_key(const char *a, const char *b)
{
	const char *sa, *sb;
	size_t na, nb;
	if (!a || !b)
		return 0;
	na = lambda_key_ident(a, &sa);
	nb = lambda_key_ident(b, &sb);
	return na > 0 && na == nb && memcmp(sa, sb, na) == 0;
}

/* 1 with out set when a key named `name` or holding pubkey exists; 0
 * when none; -1 with err. */
static int find_key(lambda_ctx *c, const char *name, const char *pubkey,
                    char *out, size_t cap, gb_error *err)
{
	json_t *root, *data, *v;
	size_t i;
	int found = 0;
	if (lambda_get_data(c, "/ssh-keys", "SSH key list", &root, &data,
	                    err) != 0)
		return -1;
	json_array_foreach(data, i, v) {
		const char *n = drvc_jstr(v, "name");
		if (!n)
			continue;
		if (strcmp(n, name) == 0 ||
		    same_key(drvc_jstr(v, "public_key"), pubkey)) {
			snprintf(out, cap, "%s", n);
			found = 1;
			if (strcmp(n, name) == 0)
				break;
		}
	}
	json_decref(root);
	return found;
}

static void key_remember(lambda_ctx *c, const char *ours, const char *name)
{
	const char *v[1] = {name};
	drvc_cache_put(&c->keys, ours, v, 1);
}

/* The name of the registered key to launch with, into out: the option
 * ssh_key_name, else the request's first key (found, or registered). */
static int ssh_key(lambda_ctx *c, const gb_create_req *req, char *out,
                   size_t cap, gb_error *err)
{
	char name[32];
	json_t *o;
	char *body;
	gb_http_resp resp;
	int r;

	if (c->ssh_key_name) {
		snprintf(out, cap, "%s", c->ssh_key_name);
		return 0;
	}
	if (req->nssh_keys == 0 || !req->ssh_keys || !req->ssh_keys[0] ||
	    !*req->ssh_keys[0]) {
		drvc_err(err, GB_ERR_INVALID, 0, "SshKeyMissing",
		         "Lambda create: Lambda launches need exactly one SSH key: "
		         "add ssh_keys (a public key) to the pool spec, or set the "
		         "lambda driver option ssh_key_name to a key registered at "
		         "https://cloud.lambda.ai/ssh-keys");
		return -1;
	}
	if (req->nssh_keys > 1 && c->host->log)
		c->host->log(c->host->ctx, GB_LOG_INFO,
		             "lambda: pool %s has %zu SSH keys; Lambda installs "
		             "one, the first", req->pool, req->nssh_keys);
	lambda_ssh_key_name(req->ssh_keys[0], name);
	{
		/* known from an earlier create of this process: no call */
		char *known = NULL;
		if (drvc_cache_get(&c->keys, name, &known, 1) && known) {
			snprintf(out, cap, "%s", known);
			free(known);
			return 0;
		}
		free(known);
	}
	r = find_key(c, name, req->ssh_keys[0], out, cap, err);
	if (r == 1)
		key_remember(c, name, out);
	if (r != 0)
		return r < 0 ? -1 : 0;
	o = json_object();
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "public_key", json_string(req->ssh_keys[0]));
	body = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (!body)
		abort();
	r = lambda_api(c, "POST", "/ssh-keys", body, LAMBDA_RATE_API, 0,
	               "SSH key registration", &resp, err);
	c->host->http_free(c->host->ctx, &resp);
	free(body);
	if (r != 0) {
		/* registered meanwhile by a concurrent create? */
		gb_error e2;
		if (err->cls != GB_ERR_INVALID && err->cls != GB_ERR_CONFLICT)
			return -1;
		if (find_key(c, name, req->ssh_keys[0], out, cap, &e2) == 1) {
			key_remember(c, name, out);
			return 0;
		}
		return -1;
	}
	snprintf(out, cap, "%s", name);
	key_remember(c, name, out);
	if (c->host->log)
		c->host->log(c->host->ctx, GB_LOG_INFO,
		             "lambda: registered SSH key %s", name);
	return 0;
}

/* ---- create ----------------------------------------------------- */

typedef struct found {
	const char *name, *region;
	char **ids;
	size_t n, cap;
} found;

static void found_add(found *f, const char *id);

static int found_fn(void *ud, const lambda_inst *inst)
{
	found *f = ud;
	gb_instance_state st = lambda_state(inst->status);
	if (!inst->name || strcmp(inst->name, f->name) != 0)
		return 0;
	if (!inst->region || strcmp(inst->region, f->region) != 0)
		return 0;
	if (st == GB_INST_TERMINATED || st == GB_INST_STOPPING)
		return 0;
	found_add(f, inst->id);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void found_free(found *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->ids[i]);
	free(f->ids);
}

/* Emits instance id i of this create. */
static int emit_one(const gb_create_req *req, const char *id, unsigned i,
                    gb_instance_cb emit, void *ud)
{
	gb_kv tags[4];
	size_t nt = 0;
	gb_instance gi;
	char name[160];
	snprintf(name, sizeof(name), "%s-%u", req->name_prefix,
	         req->first_index + i);
	tags[nt++] = (gb_kv){GB_TAG_POOL, req->pool};
	tags[nt++] = (gb_kv){GB_TAG_BROKER, req->broker_id};
	tags[nt++] = (gb_kv){GB_TAG_TOKEN, req->token};
	if (req->team && *req->team)
		tags[nt++] = (gb_kv){GB_TAG_TEAM, req->team};
	memset(&gi, 0, sizeof(gi));
	gi.id = id;
	gi.name = name;
	gi.region = req->region;
	gi.zone = "";
	gi.instance_type = req->instance_type;
	gi.capacity = GB_CAPACITY_ON_DEMAND;
	gi.state = GB_INST_PENDING;
	gi.tags = tags;
	gi.ntags = nt;
	return emit(ud, &gi);
}

/* Ends every instance of this token (f->ids: what earlier calls made,
 * then what this one made) after a definite failure, so the request
 * stays all or nothing; notes the outcome in err's message.  On THROTTLED
 * or TRANSIENT they are left for the replay to find. */
static void cleanup(lambda_ctx *c, found *f, gb_error *err)
{
	gb_instance_ref *refs;
	gb_error e2;
	size_t m;
	if (err->cls == GB_ERR_NONE)
		err->cls = GB_ERR_INTERNAL;
	if (f->n == 0 || err->cls == GB_ERR_THROTTLED ||
	    err->cls == GB_ERR_TRANSIENT)
		return;
	m = strlen(err->message);
	refs = drvc_xcalloc(f->n, sizeof(*refs));
	for (size_t i = 0; i < f->n; i++) {
		refs[i].id = f->ids[i];
		refs[i].region = f->region;
		refs[i].zone = "";
	}
	memset(&e2, 0, sizeof(e2));
	if (lambda_terminate(c, refs, f->n, &e2) == 0) {
		snprintf(err->message + m, sizeof(err->message) - m,
		         " [cleanup: terminated the %zu instance(s) of this "
		         "request]", f->n);
	} else {
		if (c->host->log)
			c->host->log(c->host->ctx, GB_LOG_ERROR,
			             "lambda: cleanup of %zu instance(s) named %s "
			             "failed: %s", f->n, f->name, e2.message);
		snprintf(err->message + m, sizeof(err->message) - m,
		         " [cleanup: %zu instance(s) of this request not "
		         "terminated: %s]", f->n, e2.message);
	}
	free(refs);
}

static void found_add(found *f, const char *id)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 8;
		f->ids = drvc_xrealloc(f->ids, f->cap * sizeof(*f->ids));
	}
	f->ids[f->n++] = drvc_xstrdup(id);
}

/* The ids in a launch answer {"data": {"instance_ids": [...]}}. */
static int launch_ids(const gb_http_resp *resp, char ***ids, size_t *n,
                      gb_error *err)
{
	json_t *root = drvc_json_body(resp, LAMBDA_MAX_SMALL, "Lambda launch",
	                              err);
	json_t *arr, *v;
	size_t i;
	*ids = NULL;
	*n = 0;
	if (!root)
		return -1;
	arr = drvc_jpath(root, "data") ?
	              json_object_get(drvc_jpath(root, "data"), "instance_ids") :
	              NULL;
	if (!json_is_array(arr)) {
		drvc_err(err, GB_ERR_TRANSIENT, (int)resp->status,
		         "MalformedResponse",
		         "Lambda launch: the answer has no data.instance_ids; the "
		         "outcome is unknown (a replay finds what was made)");
		json_decref(root);
		return -1;
	}
	*ids = drvc_xcalloc(json_array_size(arr) + 1, sizeof(char *));
	json_array_foreach(arr, i, v) {
		if (json_is_string(v) && *json_string_value(v))
			(*ids)[(*n)++] = drvc_xstrdup(json_string_value(v));
	}
	json_decref(root);
	return 0;
}

/* One launch of up to q instances named name: their ids appended to f.
 * Lambda may make fewer than asked (API.md, "Launch"); the caller then
 * launches the rest, and Lambda's refusal of that says why (capacity or
 * quota).  0 when at least one was made, or -1 with err. */
static int launch(lambda_ctx *c, const gb_create_req *req, const char *name,
                  const char *key, unsigned q, found *f, gb_error *err)
{
	gb_http_resp resp;
	char **ids = NULL;
	size_t nids = 0;
	char *body = lambda_launch_body(req, name, key, q, c->image_family,
	                                c->file_system, c->tags);
	int rc = lambda_api(c, "POST", "/instance-operations/launch", body,
	                    LAMBDA_RATE_LAUNCH, 1, "launch", &resp, err);
	free(body);
	if (rc == 0)
		rc = launch_ids(&resp, &ids, &nids, err);
	c->host->http_free(c->host->ctx, &resp);
	if (rc != 0 && err->cls == GB_ERR_NOT_FOUND) {
		/* the launch names something that does not exist: the SSH
		 * key or the file system -- the request is wrong; a key
		 * deleted since it was remembered is looked up again next
		 * time */
		size_t m = strlen(err->message);
		if (req->nssh_keys > 0 && req->ssh_keys && req->ssh_keys[0]) {
			char ours[32];
			lambda_ssh_key_name(req->ssh_keys[0], ours);
			drvc_cache_del(&c->keys, ours);
		}
		err->cls = GB_ERR_INVALID;
		snprintf(err->message + m, sizeof(err->message) - m,
		         " [the launch named SSH key '%s'%s%s%s: check the "
		         "lambda driver options ssh_key_name and file_system]",
		         key, c->file_system ? " and file system '" : "",
		         c->file_system ? c->file_system : "",
		         c->file_system ? "'" : "");
	}
	for (size_t i = 0; i < nids; i++) {
		found_add(f, ids[i]);
		free(ids[i]);
	}
	free(ids);
	if (rc == 0 && nids == 0) {
		drvc_err(err, GB_ERR_CAPACITY, 200, "EmptyLaunch",
		         "Lambda launch of %u %s in %s answered no instance",
		         q, req->instance_type, req->region);
		rc = -1;
	} else if (rc == 0 && nids > q) {
		drvc_err(err, GB_ERR_INTERNAL, 200, "MalformedResponse",
		         "Lambda launch of %u instance(s) answered %zu ids", q,
		         nids);
		rc = -1;
	} else if (rc == 0 && nids < q && c->host->log) {
		c->host->log(c->host->ctx, GB_LOG_INFO,
		             "lambda: launch of %u %s in %s made %zu; launching "
		             "the rest", q, req->instance_type, req->region, nids);
	}
	return rc;
}

/* After a launch failed THROTTLED or TRANSIENT (the host makes one
 * attempt only): 1 when it is worth another launch -- after the delay
 * Lambda asked for, or a backoff, and, for TRANSIENT, after listing again
 * what carries the name (the failed launch may have made some) -- and 0
 * when the class is definite or the tries are spent.  A launch that got
 * no answer at all (timed out, connection lost: http_status 0) may still
 * be on its way and land after the list (driver.h: look up the names
 * before creating again): the list waits until as long again as the
 * transport's timeout has passed, so a late launch is found, not made
 * twice. */
static int retry_launch(lambda_ctx *c, found *f, int *tries, gb_error *err)
{
	const gb_host *h = c->host;
	int64_t wait;
	found again;
	gb_error e2;
	if ((err->cls != GB_ERR_THROTTLED && err->cls != GB_ERR_TRANSIENT) ||
	    *tries >= LAMBDA_LAUNCH_TRIES)
		return 0;
	wait = (int64_t)1000 << *tries;
	if (err->retry_after_ms > wait)
		wait = err->retry_after_ms;
	if (wait > 30000)
		wait = 30000;
	if (err->cls == GB_ERR_TRANSIENT && err->http_status == 0 &&
	    wait < c->http_timeout_ms)
		wait = c->http_timeout_ms; /* unanswered: it may still land */
	(*tries)++;
	if (h->log)
		h->log(h->ctx, GB_LOG_INFO, "lambda: launch of %s: %s; trying "
		       "again in %lld ms (%d of %d)", f->name, err->message,
		       (long long)wait, *tries, LAMBDA_LAUNCH_TRIES);
	h->sleep_ms(h->ctx, wait);
	if (err->cls == GB_ERR_THROTTLED)
		return 1; /* refused before it was applied */
	memset(&again, 0, sizeof(again));
	again.name = f->name;
	again.region = f->region;
	memset(&e2, 0, sizeof(e2));
	if (lambda_list(c, found_fn, &again, &e2) != 0) {
		found_free(&again);
		return 0; /* keep the launch's error: unknown outcome */
	}
	if (again.n > 1)
		qsort(again.ids, again.n, sizeof(*again.ids), cmp_str);
	found_free(f);
	*f = again;
	return 1;
}

int lambda_create(void *ctx, const gb_create_req *req, gb_instance_cb emit,
                  void *ud, gb_error *err)
{
	lambda_ctx *c = ctx;
	char name[LAMBDA_NAME_MAX + 1], key[256];
	found f;
	unsigned k = 0;
	int rc = -1, tries = 0;

	if (drvc_create_req_ok(req, "Lambda", LAMBDA_MAX_COUNT, err) != 0)
		return -1;
	if (req->capacity != GB_CAPACITY_ON_DEMAND) {
		drvc_err(err, GB_ERR_INVALID, 0, "UnsupportedCapacity",
		         "Lambda create: Lambda sells on-demand instances only "
		         "(asked for capacity %d)", (int)req->capacity);
		return -1;
	}
	if (req->zone && *req->zone) {
		drvc_err(err, GB_ERR_INVALID, 0, "UnsupportedZone",
		         "Lambda create: Lambda regions have no zones (asked for "
		         "zone '%.64s' in %.64s)", req->zone, req->region);
		return -1;
	}
	if (lambda_require(c, err) != 0)
		return -1;
	lambda_name_encode(req->pool, req->broker_id, req->token, name);
	if (!c->tags && strncmp(name, "gb.", 3) != 0) {
		/* without tags only a readable name lets describe find the
		 * pool's instances again */
		drvc_err(err, GB_ERR_INVALID, 0, "NameTooLong",
		         "Lambda create: with the lambda driver option tags: "
		         "false the instance name must carry pool, broker and "
		         "token readably (gb.<pool>.<broker>.<token>, at most %d "
		         "characters), but pool '%.48s', broker '%.32s' and the "
		         "token make it longer: shorten the pool name or the "
		         "broker_id, or set tags: true", LAMBDA_NAME_MAX,
		         req->pool, req->broker_id);
		return -1;
	}

	memset(&f, 0, sizeof(f));
	f.name = name;
	f.region = req->region;
	if (lambda_list(c, found_fn, &f, err) != 0)
		goto out;
	if (f.n > 1)
		qsort(f.ids, f.n, sizeof(*f.ids), cmp_str);
	if (f.n > req->count && c->host->log)
		c->host->log(c->host->ctx, GB_LOG_WARN,
		             "lambda: %zu instances are named %s, more than the "
		             "%u of its request; reporting %u", f.n, name,
		             req->count, req->count);
	if (f.n < req->count) {
		if (ssh_key(c, req, key, sizeof(key), err) != 0) {
			cleanup(c, &f, err);
			goto out;
		}
		/* in launches of at most max_quantity, each waiting for the
		 * launch rate limit; each makes one or more, or fails */
		while (f.n < req->count) {
			unsigned q = req->count - (unsigned)f.n;
			if (q > c->max_quantity)
				q = c->max_quantity;
			if (launch(c, req, name, key, q, &f, err) == 0)
				continue;
			if (!retry_launch(c, &f, &tries, err)) {
				cleanup(c, &f, err);
				goto out;
			}
		}
	}
	/* what earlier calls made first (by id), then what this one made */
	for (size_t i = 0; i < f.n && k < req->count; i++, k++)
		if (emit_one(req, f.ids[i], k, emit, ud))
			break;
	rc = 0;
out:
	found_free(&f);
	return rc;
}
