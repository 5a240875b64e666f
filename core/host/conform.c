/* conform.c -- the driver conformance suite (see conform.h): one driver,
 * its own methods, driver.h as the spec. */
#include "conform.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "spec.h"

#define CF_PASS 0
#define CF_FAIL 1
#define CF_SKIP 2

#define CF_BAD_TYPE "gbconf-no-such-type"
/* Some clouds refuse a VM without a login key (Azure: SshKeyRequired).
 * Nobody holds the private half of this one: no-one can log in. */
static const char *const cf_ssh_keys[] = {
	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3RrZXl0ZXN0a2V5dGVzdGtleXRl"
	"c3RrZXk1 gbconf",
};

typedef struct cf {
	gb_drv *drv;
	const gb_driver *d;
	const gb_conform_opts *o;
	const char *broker;
	int64_t timeout_ms;
	json_t *cases;
	json_t *errors;     /* every gb_error of the run: {call, cls, ...} */
	/* captured log lines (the tap) */
	pthread_mutex_t mu;
	gb_strv lines;
	char pool[32];
	char token[48];     /* the create's (and the replay's) */
	char detail[1024];  /* of the case running */
	/* the chosen offer */
	int have_offer;
	char *region, *zone, *type;
	gb_capacity cap;
	json_t *made;       /* [{id, region, zone}] every id any create emitted */
	json_t *ids;        /* the 2 ids of the create case, when it passed */
	int terminated;     /* the terminate case passed */
} cf;

/* ------------------------------------------------------------ helpers */

static void cf_detail(cf *c, const char *fmt, ...) GB_PRINTF(2, 3);
static void cf_detail(cf *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
}

static json_t *jstr(const char *s)
{
	json_t *v;
	if (!s)
		return json_null();
	v = json_string(s);
	return v ? v : json_string("(not UTF-8)");
}

static const char *jget(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static void tap(void *ud, gb_log_level lvl, const char *component,
                const char *msg)
{
	cf *c = ud;
	(void)lvl;
	pthread_mutex_lock(&c->mu);
	if (c->lines.n < 100000)
		gb_strv_push_take(&c->lines,
		                  gb_xasprintf("%s: %s", component, msg));
	pthread_mutex_unlock(&c->mu);
}

/* Keeps a failed call's error for the errors and secrets cases. */
static void keep_err(cf *c, const char *call, const gb_error *e)
{
	json_t *o = json_object();
	json_object_set_new(o, "call", json_string(call));
	json_object_set_new(o, "cls", json_integer(e->cls));
	json_object_set_new(o, "http_status", json_integer(e->http_status));
	json_object_set_new(o, "code", jstr(e->code));
	json_object_set_new(o, "message", jstr(e->message));
	json_array_append_new(c->errors, o);
}

/* "CLASS code: message" of e, for a detail (redacted when the case ends). */
static const char *err_text(const gb_error *e, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s%s%s: %.300s", gb_err_class_name(e->cls),
	         e->code[0] ? " " : "", e->code,
	         e->message[0] ? e->message : "(no message)");
	return buf;
}

static int has_id(json_t *arr, const char *id)
{
	size_t i;
	json_t *in;
	json_array_foreach(arr, i, in)
		if (strcmp(jget(in, "id"), id) == 0)
			return 1;
	return 0;
}

/* 1 when s is one of the strings of arr. */
static int in_strs(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
		if (strcmp(json_string_value(v), s) == 0)
			return 1;
	return 0;
}

static int inst_cb(void *ud, const gb_instance *in)
{
	json_t *arr = ud, *o = json_object(), *tags = json_object();
	json_object_set_new(o, "id", jstr(in->id));
	json_object_set_new(o, "name", jstr(in->name));
	json_object_set_new(o, "region", jstr(in->region));
	json_object_set_new(o, "zone", jstr(in->zone));
	json_object_set_new(o, "instance_type", jstr(in->instance_type));
	json_object_set_new(o, "state", json_integer(in->state));
	for (size_t i = 0; in->tags && i < in->ntags; i++)
		if (in->tags[i].key)
			json_object_set_new(tags, in->tags[i].key,
			                    jstr(in->tags[i].value));
	json_object_set_new(o, "tags", tags);
	json_array_append_new(arr, o);
	return 0;
}

/* create/describe through the driver; *out: a new array of what was
 * emitted (also on failure).  The error is kept. */
static int cf_create(cf *c, const gb_create_req *r, json_t **out,
                     gb_error *e)
{
	size_t i;
	json_t *in;
	int rc;
	*out = json_array();
	memset(e, 0, sizeof(*e));
	rc = c->d->create(c->drv->ctx, r, inst_cb, *out, e);
	if (rc != 0)
		keep_err(c, "create", e);
	json_array_foreach(*out, i, in) {
		const char *id = json_string_value(json_object_get(in, "id"));
		if (id && *id && !has_id(c->made, id))
			json_array_append_new(c->made, json_pack(
				"{s:s, s:s, s:s}", "id", id, "region",
				jget(in, "region")[0] ? jget(in, "region")
				                      : r->region,
				"zone", jget(in, "zone")));
	}
	return rc;
}

static int cf_describe(cf *c, const gb_describe_req *r, json_t **out,
                       gb_error *e)
{
	int rc;
	*out = json_array();
	memset(e, 0, sizeof(*e));
	rc = c->d->describe(c->drv->ctx, r, inst_cb, *out, e);
	if (rc != 0)
		keep_err(c, "describe", e);
	return rc;
}

/* terminate refs (an array of {id, region, zone}): in one call with
 * GB_DRV_CAP_BATCH_TERMINATE, else one ref per call as the host does. */
static int cf_terminate(cf *c, json_t *refs, gb_error *e)
{
	size_t n = json_array_size(refs), i;
	gb_instance_ref *v = gb_xcalloc(n ? n : 1, sizeof(*v));
	int rc = 0;
	for (i = 0; i < n; i++) {
		json_t *r = json_array_get(refs, i);
		v[i].id = jget(r, "id");
		v[i].region = jget(r, "region");
		v[i].zone = jget(r, "zone");
	}
	memset(e, 0, sizeof(*e));
	if (n && (c->d->caps & GB_DRV_CAP_BATCH_TERMINATE)) {
		rc = c->d->terminate(c->drv->ctx, v, n, e);
	} else {
		for (i = 0; i < n && rc == 0; i++)
			rc = c->d->terminate(c->drv->ctx, v + i, 1, e);
	}
	if (rc != 0)
		keep_err(c, "terminate", e);
	free(v);
	return rc;
}

static int live(json_t *in)
{
	json_int_t st = json_integer_value(json_object_get(in, "state"));
	return st == GB_INST_PENDING || st == GB_INST_RUNNING;
}

static int gone_or_going(json_t *in)
{
	json_int_t st = json_integer_value(json_object_get(in, "state"));
	return st == GB_INST_STOPPING || st == GB_INST_TERMINATED;
}

static size_t count_live(json_t *arr)
{
	size_t i, n = 0;
	json_t *in;
	json_array_foreach(arr, i, in)
		n += live(in) != 0;
	return n;
}

static int stopped(const cf *c)
{
	return c->o->stop && *c->o->stop;
}

/* Sleeps *step ms (then doubles it, up to 2 s) in slices, so a stop
 * request ends the wait: 0, or -1 when asked to stop. */
static int pause_ms(cf *c, int64_t *step)
{
	for (int64_t t = 0; t < *step; t += 100) {
		if (stopped(c))
			return -1;
		gb_sleep_ms(*step - t < 100 ? *step - t : 100);
	}
	if (*step < 2000)
		*step *= 2;
	return stopped(c) ? -1 : 0;
}

static gb_describe_req pool_req(cf *c)
{
	gb_describe_req r;
	memset(&r, 0, sizeof(r));
	r.region = c->region;
	r.pool = c->pool;
	return r;
}

/* describe r until it reports exactly the ids in want (a JSON array of
 * strings), within the timeout (new instances may take a while to be
 * listed).  An instance not in want fails at once.  0, or -1 with the
 * detail set; what: the describe's name in the detail. */
static int describe_exactly(cf *c, const gb_describe_req *r, json_t *want,
                            const char *what)
{
	int64_t end = gb_mono_ms() + c->timeout_ms, step = 200;
	for (;;) {
		json_t *got = NULL, *w;
		gb_error e;
		char eb[512];
		size_t i, missing = 0;
		json_t *in;
		if (cf_describe(c, r, &got, &e) != 0) {
			cf_detail(c, "describe %s failed: %s", what,
			          err_text(&e, eb, sizeof(eb)));
			json_decref(got);
			return -1;
		}
		json_array_foreach(got, i, in) {
			if (!in_strs(want, jget(in, "id"))) {
				cf_detail(c, "describe %s reported %s, which it "
				          "should not (%zu instance(s) reported, "
				          "%zu expected)", what, jget(in, "id"),
				          json_array_size(got),
				          json_array_size(want));
				json_decref(got);
				return -1;
			}
		}
		json_array_foreach(want, i, w)
			missing += !has_id(got, json_string_value(w));
		if (!missing && json_array_size(got) != json_array_size(want)) {
			cf_detail(c, "describe %s reported an instance more than "
			          "once (%zu rows for %zu instances)", what,
			          json_array_size(got), json_array_size(want));
			json_decref(got);
			return -1;
		}
		json_decref(got);
		if (!missing)
			return 0;
		if (gb_mono_ms() >= end) {
			cf_detail(c, "describe %s still misses %zu of %zu "
			          "instance(s) after %lld s", what, missing,
			          json_array_size(want),
			          (long long)c->timeout_ms / 1000);
			return -1;
		}
		if (pause_ms(c, &step) != 0) {
			cf_detail(c, "interrupted while describe %s still missed "
			          "%zu instance(s)", what, missing);
			return -1;
		}
	}
}

/* ------------------------------------------------------------- offers */

typedef struct offer_walk {
	cf *c;
	json_t *seen;      /* "region|zone|type|capacity" -> true */
	size_t n, bad;
	char why[400];     /* the first malformed offer */
	/* the cheapest offer matching the options */
	int best;
	double best_price;
	char *region, *zone, *type;
	gb_capacity cap;
} offer_walk;

/* What is wrong with o, or NULL. */
static const char *offer_fault(const gb_offer *o, char *buf, size_t cap)
{
	const char *canon;
	if (!o->region || !*o->region)
		return "empty region";
	if (!o->instance_type || !*o->instance_type)
		return "empty instance_type";
	if (!o->zone)
		return "zone is NULL (\"\" where the cloud has none)";
	if (!o->gpu_model ||
	    !(canon = gb_gpu_canonical(o->gpu_model)) ||
	    strcmp(canon, o->gpu_model) != 0) {
		snprintf(buf, cap, "gpu_model \"%s\" is not a canonical name%s%s",
		         o->gpu_model ? o->gpu_model : "(null)",
		         o->gpu_model && gb_gpu_canonical(o->gpu_model)
		                 ? "; canonical: " : "",
		         o->gpu_model && gb_gpu_canonical(o->gpu_model)
		                 ? gb_gpu_canonical(o->gpu_model) : "");
		return buf;
	}
	if (o->gpu_count < 1) {
		snprintf(buf, cap, "gpu_count %d (>= 1 expected)", o->gpu_count);
		return buf;
	}
	if (o->gpu_memory_gb <= 0) {
		snprintf(buf, cap, "gpu_memory_gb %d (> 0 expected)",
		         o->gpu_memory_gb);
		return buf;
	}
	if (!(o->price_per_hour > 0) || !isfinite(o->price_per_hour)) {
		snprintf(buf, cap, "price_per_hour %g (positive and finite "
		         "expected)", o->price_per_hour);
		return buf;
	}
	if ((int)o->capacity < GB_CAPACITY_ON_DEMAND ||
	    (int)o->capacity > GB_CAPACITY_RESERVED) {
		snprintf(buf, cap, "capacity %d is not a gb_capacity",
		         (int)o->capacity);
		return buf;
	}
	return NULL;
}

static int offer_cb(void *ud, const gb_offer *o)
{
	offer_walk *w = ud;
	const gb_conform_opts *opt = w->c->o;
	char buf[300], key[600];
	const char *fault = offer_fault(o, buf, sizeof(buf));
	gb_capacity want = opt->capacity < 0 ? GB_CAPACITY_ON_DEMAND
	                                     : (gb_capacity)opt->capacity;
	w->n++;
	if (!fault && w->c->d->abi_minor >= 6 && o->available < 0) {
		snprintf(buf, sizeof(buf), "available %d (0 when unknown, else "
		         "how many can be created now)", o->available);
		fault = buf;
	}
	if (!fault) {
		snprintf(key, sizeof(key), "%s|%s|%s|%d", o->region, o->zone,
		         o->instance_type, (int)o->capacity);
		if (json_object_get(w->seen, key))
			fault = "a duplicate (region, zone, type, capacity)";
		else
			json_object_set_new(w->seen, key, json_true());
	}
	if (fault) {
		if (!w->bad++)
			snprintf(w->why, sizeof(w->why), "offer %zu (%s %s %s): %s",
			         w->n, o->region ? o->region : "(null)",
			         o->zone ? o->zone : "(null)",
			         o->instance_type ? o->instance_type : "(null)",
			         fault);
		return 0;
	}
	if (!w->region)
		return 0; /* (refresh: no choice) */
	if (o->capacity != want ||
	    (opt->region && strcmp(opt->region, o->region) != 0) ||
	    (opt->type && strcmp(opt->type, o->instance_type) != 0) ||
	    (w->best && o->price_per_hour >= w->best_price))
		return 0;
	free(w->region);
	free(w->zone);
	free(w->type);
	w->best = 1;
	w->best_price = o->price_per_hour;
	w->region = gb_xstrdup(o->region);
	w->zone = gb_xstrdup(o->zone);
	w->type = gb_xstrdup(o->instance_type);
	w->cap = o->capacity;
	return 0;
}

static int case_offers(cf *c)
{
	offer_walk w;
	gb_error e;
	char eb[512], note[200] = "";
	int rc;
	memset(&w, 0, sizeof(w));
	w.c = c;
	w.seen = json_object();
	w.region = gb_xstrdup(""); /* marks "choose" */
	memset(&e, 0, sizeof(e));
	rc = c->d->list_offers(c->drv->ctx, offer_cb, &w, &e);
	json_decref(w.seen);
	if (w.best) {
		c->have_offer = 1;
		c->region = w.region;
		c->zone = w.zone;
		c->type = w.type;
		c->cap = w.cap;
	} else {
		free(w.region);
	}
	if (rc != 0) {
		keep_err(c, "list_offers", &e);
		cf_detail(c, "list_offers failed: %s",
		          err_text(&e, eb, sizeof(eb)));
		return CF_FAIL;
	}
	if (w.n == 0) {
		cf_detail(c, "list_offers emitted no offer");
		return CF_FAIL;
	}
	if (w.bad) {
		cf_detail(c, "%zu of %zu offers malformed; first: %s", w.bad,
		          w.n, w.why);
		return CF_FAIL;
	}
	if ((c->d->caps & GB_DRV_CAP_PRICE_REFRESH) &&
	    GB_DRV_HAS(c->drv, refresh_prices)) {
		offer_walk r;
		const char *region = c->have_offer ? c->region : NULL;
		memset(&r, 0, sizeof(r));
		r.c = c;
		r.seen = json_object();
		memset(&e, 0, sizeof(e));
		rc = c->d->refresh_prices(c->drv->ctx, region, offer_cb, &r, &e);
		json_decref(r.seen);
		if (rc != 0) {
			keep_err(c, "refresh_prices", &e);
			cf_detail(c, "%zu offers well formed, but refresh_prices("
			          "%s) failed: %s", w.n, region ? region : "all",
			          err_text(&e, eb, sizeof(eb)));
			return CF_FAIL;
		}
		if (r.n == 0 || r.bad) {
			cf_detail(c, "%zu offers well formed, but refresh_prices("
			          "%s) emitted %s", w.n, region ? region : "all",
			          r.n ? r.why : "no offer");
			return CF_FAIL;
		}
		snprintf(note, sizeof(note), "; refresh_prices(%s): %zu well "
		         "formed", region ? region : "all", r.n);
	} else if (c->d->caps & GB_DRV_CAP_PRICE_REFRESH) {
		cf_detail(c, "the driver has the price-refresh capability but no "
		          "refresh_prices method");
		return CF_FAIL;
	} else {
		snprintf(note, sizeof(note), "; no price-refresh capability: "
		         "refresh_prices not tried");
	}
	if (!c->have_offer) {
		cf_detail(c, "%zu offers well formed%s, but none matches the "
		          "options (region %s, type %s, capacity %s) to create "
		          "from", w.n, note, c->o->region ? c->o->region : "any",
		          c->o->type ? c->o->type : "any",
		          gb_capacity_name(c->o->capacity < 0
		                                   ? GB_CAPACITY_ON_DEMAND
		                                   : (gb_capacity)c->o->capacity));
		return CF_FAIL;
	}
	cf_detail(c, "%zu offers well formed%s; using %s %s%s%s %s at %.4f/h",
	          w.n, note, c->region, c->zone, *c->zone ? " " : "", c->type,
	          gb_capacity_name(c->cap), w.best_price);
	return CF_PASS;
}

/* -------------------------------------------------------------- quota */

typedef struct quota_walk {
	size_t n, bad;
	char why[300];
} quota_walk;

static int quota_cb(void *ud, const gb_quota *q)
{
	quota_walk *w = ud;
	w->n++;
	if (!q->name || !*q->name || !isfinite(q->limit) || q->limit < 0 ||
	    !isfinite(q->usage) || q->usage < 0) {
		if (!w->bad++)
			snprintf(w->why, sizeof(w->why), "quota %zu (%s): name "
			         "empty or limit %g / usage %g not finite and "
			         ">= 0", w->n, q->name ? q->name : "(null)",
			         q->limit, q->usage);
	}
	return 0;
}

static int case_quota(cf *c)
{
	quota_walk w;
	gb_error e;
	char eb[512];
	if (!(c->d->caps & GB_DRV_CAP_QUOTA)) {
		cf_detail(c, "no quota capability");
		return CF_SKIP;
	}
	if (!GB_DRV_HAS(c->drv, quota)) {
		cf_detail(c, "the driver has the quota capability but no quota "
		          "method");
		return CF_FAIL;
	}
	if (!c->have_offer) {
		cf_detail(c, "needs an offer (offers failed)");
		return CF_SKIP;
	}
	memset(&w, 0, sizeof(w));
	memset(&e, 0, sizeof(e));
	if (c->d->quota(c->drv->ctx, c->region, quota_cb, &w, &e) != 0) {
		keep_err(c, "quota", &e);
		cf_detail(c, "quota(%s) failed: %s", c->region,
		          err_text(&e, eb, sizeof(eb)));
		return CF_FAIL;
	}
	if (w.bad) {
		cf_detail(c, "%zu of %zu quotas malformed; first: %s", w.bad,
		          w.n, w.why);
		return CF_FAIL;
	}
	cf_detail(c, "quota(%s): %zu well formed", c->region, w.n);
	return CF_PASS;
}

/* ------------------------------------------------------------- create */

/* prefix: the names' (NULL = the pool's; the refused creates use their
 * own, so a name taken by the first create is not what refuses them) */
static void fill_req(cf *c, gb_create_req *r, const char *token,
                     unsigned count, const char *type, const char *prefix)
{
	memset(r, 0, sizeof(*r));
	r->pool = c->pool;
	r->broker_id = c->broker;
	r->team = "gbconf";
	r->region = c->region;
	r->zone = c->zone;
	r->instance_type = type;
	r->capacity = c->cap;
	r->count = count;
	r->token = token;
	r->name_prefix = prefix ? prefix : c->pool;
	r->first_index = 0;
	r->ssh_keys = cf_ssh_keys;
	r->nssh_keys = GB_ARRAY_LEN(cf_ssh_keys);
}

/* The 2 emitted instances are those asked for: 0 or -1 with the detail. */
static int check_made(cf *c, json_t *got, const char *what)
{
	size_t i;
	json_t *in;
	int names[2] = {0, 0};
	if (json_array_size(got) != 2) {
		cf_detail(c, "%s emitted %zu instance(s), 2 expected", what,
		          json_array_size(got));
		return -1;
	}
	json_array_foreach(got, i, in) {
		const char *name = jget(in, "name");
		size_t pl = strlen(c->pool);
		if (!jget(in, "id")[0]) {
			cf_detail(c, "%s: instance %zu has no id", what, i + 1);
			return -1;
		}
		if (strcmp(jget(in, "region"), c->region) != 0) {
			cf_detail(c, "%s: %s has region \"%s\", \"%s\" was asked",
			          what, jget(in, "id"), jget(in, "region"),
			          c->region);
			return -1;
		}
		if (strcmp(jget(in, "instance_type"), c->type) != 0) {
			cf_detail(c, "%s: %s has type \"%s\", \"%s\" was asked",
			          what, jget(in, "id"), jget(in, "instance_type"),
			          c->type);
			return -1;
		}
		if (strncmp(name, c->pool, pl) != 0 || name[pl] != '-' ||
		    (strcmp(name + pl + 1, "0") != 0 &&
		     strcmp(name + pl + 1, "1") != 0) ||
		    names[name[pl + 1] - '0']++) {
			cf_detail(c, "%s: %s is named \"%s\"; the names must be "
			          "%s-0 and %s-1 (name_prefix-index)", what,
			          jget(in, "id"), name, c->pool, c->pool);
			return -1;
		}
	}
	if (strcmp(jget(json_array_get(got, 0), "id"),
	           jget(json_array_get(got, 1), "id")) == 0) {
		cf_detail(c, "%s: both instances have id %s", what,
		          jget(json_array_get(got, 0), "id"));
		return -1;
	}
	return 0;
}

static int case_create(cf *c)
{
	gb_create_req r;
	gb_error e;
	json_t *got;
	char eb[512];
	size_t i;
	json_t *in;
	if (!c->have_offer) {
		cf_detail(c, "no offer to create from (see offers)");
		return CF_FAIL;
	}
	fill_req(c, &r, c->token, 2, c->type, NULL);
	if (cf_create(c, &r, &got, &e) != 0) {
		cf_detail(c, "create of 2 %s in %s failed: %s", c->type,
		          c->region, err_text(&e, eb, sizeof(eb)));
		json_decref(got);
		return CF_FAIL;
	}
	if (check_made(c, got, "create") != 0) {
		json_decref(got);
		return CF_FAIL;
	}
	c->ids = json_array();
	json_array_foreach(got, i, in)
		json_array_append_new(c->ids, json_string(jget(in, "id")));
	cf_detail(c, "2 x %s in %s: %s, %s", c->type, c->region,
	          jget(json_array_get(got, 0), "id"),
	          jget(json_array_get(got, 1), "id"));
	json_decref(got);
	return CF_PASS;
}

/* ---------------------------------------------------------------- tags */

/* A cloud with label rules (GCP) maps values deterministically: compare
 * lowercased, with anything but [a-z0-9] as one class. */
static int tag_equal(const char *got, const char *want)
{
	if (!got)
		return 0;
	if (strcmp(got, want) == 0)
		return 1;
	for (; *got && *want; got++, want++) {
		char a = *got >= 'A' && *got <= 'Z' ? (char)(*got + 32) : *got;
		char b = *want >= 'A' && *want <= 'Z' ? (char)(*want + 32) : *want;
		int an = (a >= 'a' && a <= 'z') || (a >= '0' && a <= '9');
		int bn = (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9');
		if (an != bn || (an && a != b))
			return 0;
	}
	return !*got && !*want;
}

static int needs_create(cf *c)
{
	if (c->ids)
		return 0;
	cf_detail(c, "needs the instances of the create case, which failed");
	return 1;
}

static int case_tags(cf *c)
{
	gb_describe_req r = pool_req(c);
	json_t *got = NULL;
	gb_error e;
	char eb[512];
	size_t i;
	json_t *in;
	if (needs_create(c))
		return CF_SKIP;
	if (describe_exactly(c, &r, c->ids, "by pool") != 0)
		return CF_FAIL;
	if (cf_describe(c, &r, &got, &e) != 0) {
		cf_detail(c, "describe by pool failed: %s",
		          err_text(&e, eb, sizeof(eb)));
		json_decref(got);
		return CF_FAIL;
	}
	json_array_foreach(got, i, in) {
		static const char *const keys[] = {GB_TAG_POOL, GB_TAG_BROKER,
		                                   GB_TAG_TOKEN};
		const char *want[3];
		json_t *tags = json_object_get(in, "tags");
		want[0] = c->pool;
		want[1] = c->broker;
		want[2] = c->token;
		for (size_t k = 0; k < 3; k++) {
			const char *v = json_string_value(json_object_get(tags,
			                                                  keys[k]));
			if (!tag_equal(v, want[k])) {
				cf_detail(c, "%s: tag %s is %s%s%s, \"%s\" was "
				          "asked (recovery and gc find instances "
				          "by it)", jget(in, "id"), keys[k],
				          v ? "\"" : "missing", v ? v : "",
				          v ? "\"" : "", want[k]);
				json_decref(got);
				return CF_FAIL;
			}
		}
	}
	cf_detail(c, "describe by pool: both carry %s, %s and %s",
	          GB_TAG_POOL, GB_TAG_BROKER, GB_TAG_TOKEN);
	json_decref(got);
	return CF_PASS;
}

/* -------------------------------------------------------------- replay */

static int case_replay(cf *c)
{
	gb_create_req r;
	gb_describe_req d = pool_req(c);
	gb_error e;
	json_t *got = NULL;
	char eb[512];
	size_t i;
	json_t *in;
	if (needs_create(c))
		return CF_SKIP;
	fill_req(c, &r, c->token, 2, c->type, NULL);
	if (cf_create(c, &r, &got, &e) != 0) {
		cf_detail(c, "the same create again (same token) failed: %s",
		          err_text(&e, eb, sizeof(eb)));
		json_decref(got);
		return CF_FAIL;
	}
	if (check_made(c, got, "the replayed create") != 0) {
		json_decref(got);
		return CF_FAIL;
	}
	json_array_foreach(got, i, in) {
		if (!in_strs(c->ids, jget(in, "id"))) {
			cf_detail(c, "the same create again (same token) emitted "
			          "%s, a new instance: a replay must return the "
			          "instances the token made", jget(in, "id"));
			json_decref(got);
			return CF_FAIL;
		}
	}
	json_decref(got);
	if (cf_describe(c, &d, &got, &e) != 0) {
		cf_detail(c, "describe by pool after the replay failed: %s",
		          err_text(&e, eb, sizeof(eb)));
		json_decref(got);
		return CF_FAIL;
	}
	if (json_array_size(got) != 2) {
		cf_detail(c, "after the replay describe by pool reports %zu "
		          "instance(s), 2 expected", json_array_size(got));
		json_decref(got);
		return CF_FAIL;
	}
	json_decref(got);
	cf_detail(c, "the same ids again; describe by pool still shows 2");
	return CF_PASS;
}

/* ------------------------------------------------------------ describe */

/* An id that no instance of the run has: the first id with its last
 * character changed (same kind of character, so it stays well formed). */
static char *unknown_id(cf *c)
{
	const char *base = json_string_value(json_array_get(c->ids, 0));
	char *id = gb_xstrdup(base);
	size_t n = strlen(id);
	const char *set = "0123456789abcdef";
	if (!n)
		return id;
	if (id[n - 1] >= 'g' && id[n - 1] <= 'z')
		set = "ghijklmnopqrstuvwxyz";
	else if (id[n - 1] >= 'A' && id[n - 1] <= 'Z')
		set = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	for (const char *p = set; *p; p++) {
		id[n - 1] = *p;
		if (!has_id(c->made, id))
			break;
	}
	return id;
}

static int case_describe(cf *c)
{
	gb_describe_req r;
	const char *ids[2];
	json_t *want, *got = NULL;
	gb_error e;
	char eb[512], other_token[64], other_pool[48], note[160];
	char *unknown;
	int rc = CF_FAIL;
	if (needs_create(c))
		return CF_SKIP;
	ids[0] = json_string_value(json_array_get(c->ids, 0));
	ids[1] = json_string_value(json_array_get(c->ids, 1));
	snprintf(other_token, sizeof(other_token), "%s-none", c->token);
	snprintf(other_pool, sizeof(other_pool), "%s-none", c->pool);
	unknown = unknown_id(c);

	memset(&r, 0, sizeof(r));
	r.region = c->region;
	r.ids = ids;
	r.nids = 2;
	if (describe_exactly(c, &r, c->ids, "by both ids") != 0)
		goto out;
	want = json_pack("[s]", ids[0]);
	r.nids = 1;
	if (describe_exactly(c, &r, want, "by one id") != 0) {
		json_decref(want);
		goto out;
	}
	json_decref(want);
	/* ids with a pool as well: driver.h lists them as alternatives and
	 * drivers differ (ids alone, or ids within the pool), but none may
	 * report an instance that is not one of the ids */
	r.pool = other_pool;
	if (cf_describe(c, &r, &got, &e) != 0) {
		cf_detail(c, "describe by one id with another pool failed: %s",
		          err_text(&e, eb, sizeof(eb)));
		goto out;
	}
	if (json_array_size(got) > 1 ||
	    (json_array_size(got) == 1 &&
	     strcmp(jget(json_array_get(got, 0), "id"), ids[0]) != 0)) {
		cf_detail(c, "describe by one id (%s) with another pool reported "
		          "%zu instance(s), among them %s: the ids bound the "
		          "answer", ids[0], json_array_size(got),
		          jget(json_array_get(got, json_array_size(got) - 1),
		               "id"));
		goto out;
	}
	json_decref(got);
	got = NULL;
	r = pool_req(c);
	if (describe_exactly(c, &r, c->ids, "by pool") != 0)
		goto out;
	memset(&r, 0, sizeof(r));
	r.region = c->region;
	r.broker_id = c->broker;
	r.token = c->token;
	if (describe_exactly(c, &r, c->ids, "by broker and token") != 0)
		goto out;
	want = json_array();
	r = pool_req(c);
	r.token = other_token;
	if (describe_exactly(c, &r, want, "by pool with a token nobody "
	                     "used") != 0) {
		json_decref(want);
		goto out;
	}
	json_decref(want);
	memset(&r, 0, sizeof(r));
	r.region = c->region;
	r.ids = (const char *const *)&unknown;
	r.nids = 1;
	if (cf_describe(c, &r, &got, &e) != 0) {
		cf_detail(c, "describe of an unknown id (%s) failed: %s; driver.h: "
		          "describe emits the instances matching, and an unknown "
		          "id matches none (not an error)", unknown,
		          err_text(&e, eb, sizeof(eb)));
		goto out;
	}
	if (json_array_size(got)) {
		cf_detail(c, "describe of an unknown id (%s) reported %s",
		          unknown, jget(json_array_get(got, 0), "id"));
		goto out;
	}
	if (c->d->caps & GB_DRV_CAP_DESCRIBE_ALL_REGIONS) {
		r = pool_req(c);
		r.region = NULL;
		if (describe_exactly(c, &r, c->ids, "by pool in every region "
		                     "(region NULL, describe-all-regions)") != 0)
			goto out;
		snprintf(note, sizeof(note), ", by pool with region NULL");
	} else {
		snprintf(note, sizeof(note), " (region NULL not tried: no "
		         "describe-all-regions capability)");
	}
	cf_detail(c, "exactly the matching instances by ids, one id, pool, "
	          "broker+token, a foreign token (none), an unknown id (none), "
	          "an id with a foreign pool (nothing else)%s", note);
	rc = CF_PASS;
out:
	json_decref(got);
	free(unknown);
	return rc;
}

/* ------------------------------------------------------ all or nothing */

/* Polls describe by pool + token until nothing of it is live. */
static int wait_none_live(cf *c, const char *token, const char *what)
{
	int64_t end = gb_mono_ms() + c->timeout_ms, step = 200;
	for (;;) {
		gb_describe_req r = pool_req(c);
		json_t *got = NULL;
		gb_error e;
		char eb[512];
		size_t n;
		r.token = token;
		if (cf_describe(c, &r, &got, &e) != 0) {
			cf_detail(c, "describe by pool and the token of %s failed: "
			          "%s", what, err_text(&e, eb, sizeof(eb)));
			json_decref(got);
			return -1;
		}
		n = count_live(got);
		json_decref(got);
		if (!n)
			return 0;
		if (gb_mono_ms() >= end) {
			cf_detail(c, "%s left %zu instance(s) pending or running "
			          "after %lld s", what, n,
			          (long long)c->timeout_ms / 1000);
			return -1;
		}
		if (pause_ms(c, &step) != 0) {
			cf_detail(c, "interrupted while %s still had %zu "
			          "instance(s) pending or running", what, n);
			return -1;
		}
	}
}

static int definite(gb_err_class cls)
{
	return cls == GB_ERR_CAPACITY || cls == GB_ERR_QUOTA ||
	       cls == GB_ERR_INVALID;
}

static int case_all_or_nothing(cf *c)
{
	gb_create_req r;
	gb_error e;
	json_t *got = NULL;
	char token[64], prefix[48], eb[512];
	unsigned n = c->o->huge_count ? c->o->huge_count : 10000;
	if (!c->have_offer) {
		cf_detail(c, "needs an offer (offers failed)");
		return CF_SKIP;
	}
	snprintf(token, sizeof(token), "%s-huge", c->token);
	snprintf(prefix, sizeof(prefix), "%s-h", c->pool);
	fill_req(c, &r, token, n, c->type, prefix);
	if (cf_create(c, &r, &got, &e) == 0) {
		cf_detail(c, "a create of %u x %s succeeded (%zu emitted); "
		          "raise --huge-count above the account's quota", n,
		          c->type, json_array_size(got));
		json_decref(got);
		return CF_FAIL;
	}
	json_decref(got);
	if (!definite(e.cls)) {
		cf_detail(c, "a create of %u x %s failed with %s; CAPACITY, "
		          "QUOTA or INVALID expected", n, c->type,
		          err_text(&e, eb, sizeof(eb)));
		return CF_FAIL;
	}
	err_text(&e, eb, sizeof(eb));
	if (c->d->caps & GB_DRV_CAP_ATOMIC_CREATE) {
		gb_describe_req d = pool_req(c);
		d.token = token;
		d.include_terminated = 1;
		if (cf_describe(c, &d, &got, &e) != 0) {
			cf_detail(c, "describe by the refused create's token "
			          "failed: %s", err_text(&e, eb, sizeof(eb)));
			json_decref(got);
			return CF_FAIL;
		}
		if (json_array_size(got)) {
			cf_detail(c, "the driver has atomic-create, yet the refused "
			          "create made %zu instance(s) (%s)",
			          json_array_size(got),
			          jget(json_array_get(got, 0), "id"));
			json_decref(got);
			return CF_FAIL;
		}
		json_decref(got);
	}
	if (wait_none_live(c, token, "the refused create") != 0)
		return CF_FAIL;
	cf_detail(c, "%u x %s refused: %.400s; nothing live under its token",
	          n, c->type, eb);
	return CF_PASS;
}

/* -------------------------------------------------------------- errors */

/* Is cls a class an answer with this HTTP status may have?  NULL when
 * so, else why not. */
static const char *cls_vs_status(gb_err_class cls, int st)
{
	if (cls == GB_ERR_NONE || cls > GB_ERR_INTERNAL)
		return "a failure with no (or no valid) class";
	if (!st || (st >= 200 && st < 300))
		return NULL; /* no exchange, or an asynchronous failure */
	if (st < 100 || st > 599)
		return "an http_status that is no HTTP status";
	if (st == 401 && cls != GB_ERR_AUTH)
		return "HTTP 401 but not AUTH";
	if (st == 429 && cls != GB_ERR_THROTTLED && cls != GB_ERR_QUOTA &&
	    cls != GB_ERR_CAPACITY)
		return "HTTP 429 but not THROTTLED (or QUOTA/CAPACITY)";
	if (st >= 500 && (cls == GB_ERR_AUTH || cls == GB_ERR_INVALID ||
	                  cls == GB_ERR_NOT_FOUND || cls == GB_ERR_CONFLICT))
		return "a 5xx classed as the caller's fault";
	if (st >= 400 && st < 500 && st != 408 && cls == GB_ERR_TRANSIENT)
		return "a 4xx (not 408) classed TRANSIENT";
	if (st == 404 && cls != GB_ERR_NOT_FOUND && cls != GB_ERR_INVALID &&
	    cls != GB_ERR_CAPACITY)
		return "HTTP 404 but not NOT_FOUND or INVALID";
	return NULL;
}

static int case_errors(cf *c)
{
	gb_create_req r;
	gb_error e;
	json_t *got = NULL, *x;
	char token[64], prefix[48], eb[512];
	size_t i;
	if (!c->have_offer) {
		cf_detail(c, "needs an offer (offers failed)");
		return CF_SKIP;
	}
	snprintf(token, sizeof(token), "%s-badtype", c->token);
	snprintf(prefix, sizeof(prefix), "%s-x", c->pool);
	fill_req(c, &r, token, 1, CF_BAD_TYPE, prefix);
	if (cf_create(c, &r, &got, &e) == 0) {
		cf_detail(c, "a create of type \"%s\" succeeded (%zu emitted)",
		          CF_BAD_TYPE, json_array_size(got));
		json_decref(got);
		return CF_FAIL;
	}
	json_decref(got);
	/* CAPACITY is let through: some APIs answer an unknown size as one
	 * not offered there (ARM: SkuNotAvailable), and the driver cannot
	 * tell them apart; it stops the attempt without a retry as well. */
	if (e.cls != GB_ERR_INVALID && e.cls != GB_ERR_NOT_FOUND &&
	    e.cls != GB_ERR_CAPACITY) {
		cf_detail(c, "a create of type \"%s\" failed with %s; INVALID or "
		          "NOT_FOUND expected (the request is wrong: no retry, "
		          "no failover)", CF_BAD_TYPE,
		          err_text(&e, eb, sizeof(eb)));
		return CF_FAIL;
	}
	if (!e.message[0]) {
		cf_detail(c, "a create of type \"%s\" failed with %s but an "
		          "empty message (the user is shown it)", CF_BAD_TYPE,
		          gb_err_class_name(e.cls));
		return CF_FAIL;
	}
	err_text(&e, eb, sizeof(eb));
	json_array_foreach(c->errors, i, x) {
		const char *why = cls_vs_status(
			(gb_err_class)json_integer_value(json_object_get(x, "cls")),
			(int)json_integer_value(json_object_get(x, "http_status")));
		if (why) {
			cf_detail(c, "%s failed with class %s, HTTP %lld, code "
			          "\"%s\": %s", jget(x, "call"),
			          gb_err_class_name((gb_err_class)json_integer_value(
			                  json_object_get(x, "cls"))),
			          (long long)json_integer_value(
			                  json_object_get(x, "http_status")),
			          jget(x, "code"), why);
			return CF_FAIL;
		}
	}
	cf_detail(c, "bad type: %.400s%s; %zu error(s) of the run agree with "
	          "their HTTP status", eb, e.cls == GB_ERR_CAPACITY
	          ? " (CAPACITY: the provider answers an unknown type as one "
	            "not offered; INVALID or NOT_FOUND is clearer)" : "",
	          json_array_size(c->errors));
	return CF_PASS;
}

/* ----------------------------------------------------------- terminate */

static json_t *refs_of(cf *c, json_t *ids)
{
	json_t *refs = json_array(), *id, *m;
	size_t i, k;
	json_array_foreach(ids, i, id)
		json_array_foreach(c->made, k, m)
			if (strcmp(jget(m, "id"), json_string_value(id)) == 0) {
				json_array_append(refs, m);
				break;
			}
	return refs;
}

static int case_terminate(cf *c)
{
	json_t *refs, *unk, *got = NULL;
	gb_describe_req r;
	gb_error e;
	const char *ids[2];
	char eb[512], *unknown;
	int64_t end, step = 200;
	int rc = CF_FAIL;
	if (needs_create(c))
		return CF_SKIP;
	refs = refs_of(c, c->ids);
	unknown = unknown_id(c);
	unk = json_pack("[{s:s, s:s, s:s}]", "id", unknown, "region",
	                jget(json_array_get(refs, 0), "region"), "zone",
	                jget(json_array_get(refs, 0), "zone"));
	if (cf_terminate(c, refs, &e) != 0) {
		cf_detail(c, "terminate failed: %s", err_text(&e, eb, sizeof(eb)));
		goto out;
	}
	if (cf_terminate(c, refs, &e) != 0) {
		cf_detail(c, "terminate again failed: %s (driver.h: terminate is "
		          "idempotent)", err_text(&e, eb, sizeof(eb)));
		goto out;
	}
	if (cf_terminate(c, unk, &e) != 0) {
		cf_detail(c, "terminate of an unknown id (%s) failed: %s "
		          "(already gone = ok)", unknown,
		          err_text(&e, eb, sizeof(eb)));
		goto out;
	}
	ids[0] = json_string_value(json_array_get(c->ids, 0));
	ids[1] = json_string_value(json_array_get(c->ids, 1));
	memset(&r, 0, sizeof(r));
	r.region = c->region;
	r.ids = ids;
	r.nids = 2;
	end = gb_mono_ms() + c->timeout_ms;
	for (;;) {
		size_t i, left = 0;
		json_t *in;
		const char *which = NULL;
		json_decref(got);
		if (cf_describe(c, &r, &got, &e) != 0) {
			cf_detail(c, "describe after terminate failed: %s",
			          err_text(&e, eb, sizeof(eb)));
			goto out;
		}
		json_array_foreach(got, i, in)
			if (!gone_or_going(in)) {
				left++;
				which = jget(in, "id");
			}
		if (!left)
			break;
		if (gb_mono_ms() >= end) {
			cf_detail(c, "after %lld s describe still reports %s "
			          "(and %zu more) neither gone nor stopping",
			          (long long)c->timeout_ms / 1000, which,
			          left - 1);
			goto out;
		}
		if (pause_ms(c, &step) != 0) {
			cf_detail(c, "interrupted while describe still reported %s "
			          "neither gone nor stopping", which);
			goto out;
		}
	}
	c->terminated = 1;
	cf_detail(c, "terminated%s, again, and an unknown id: all ok; "
	          "describe shows them gone or stopping",
	          (c->d->caps & GB_DRV_CAP_BATCH_TERMINATE) ? " (one batch)"
	                                                    : " (one by one)");
	rc = CF_PASS;
out:
	json_decref(got);
	json_decref(refs);
	json_decref(unk);
	free(unknown);
	return rc;
}

/* ------------------------------------------------------------- secrets */

static int case_secrets(cf *c)
{
	size_t i, nsec = gb_redact_count(), nlines, bad_err = 0, bad_line = 0;
	size_t first_line = 0;
	const char *first_call = NULL;
	json_t *x;
	json_array_foreach(c->errors, i, x) {
		if (gb_redact_has_secret(jget(x, "message")) ||
		    gb_redact_has_secret(jget(x, "code"))) {
			if (!bad_err++)
				first_call = jget(x, "call");
		}
	}
	pthread_mutex_lock(&c->mu);
	nlines = c->lines.n;
	for (i = 0; i < c->lines.n; i++)
		if (gb_redact_has_secret(c->lines.v[i]) && !bad_line++)
			first_line = i + 1;
	pthread_mutex_unlock(&c->mu);
	if (bad_err || bad_line) {
		char a[160] = "", b[200] = "";
		if (bad_err)
			snprintf(a, sizeof(a), "%zu error(s) contain a registered "
			         "secret (the first of a failed %s): error "
			         "messages must be secret-free", bad_err,
			         first_call);
		if (bad_line)
			snprintf(b, sizeof(b), "%s%zu log line(s) show a registered "
			         "secret (the first: line %zu of the run; logged "
			         "before the driver registered it?)",
			         bad_err ? "; " : "", bad_line, first_line);
		cf_detail(c, "%s%s", a, b);
		return CF_FAIL;
	}
	cf_detail(c, "%zu error(s) and %zu log line(s) free of the %zu "
	          "registered secret(s)", json_array_size(c->errors), nlines,
	          nsec);
	return CF_PASS;
}

/* ------------------------------------------------------------- cleanup */

static int case_cleanup(cf *c)
{
	json_t *refs = json_array(), *got = NULL, *m;
	gb_describe_req r;
	gb_error e;
	char eb[512];
	size_t i, n;
	int rc = CF_FAIL;
	if (!c->region) {
		cf_detail(c, "nothing was created (no offer)");
		json_decref(refs);
		return CF_PASS;
	}
	/* every id any create emitted, and whatever the pool still has */
	json_array_foreach(c->made, i, m)
		json_array_append(refs, m);
	r = pool_req(c);
	if (cf_describe(c, &r, &got, &e) != 0) {
		cf_detail(c, "describe by pool failed: %s",
		          err_text(&e, eb, sizeof(eb)));
		goto out;
	}
	json_array_foreach(got, i, m)
		if (!gone_or_going(m) && !has_id(refs, jget(m, "id")))
			json_array_append_new(refs, json_pack(
				"{s:s, s:s, s:s}", "id", jget(m, "id"), "region",
				jget(m, "region")[0] ? jget(m, "region") : c->region,
				"zone", jget(m, "zone")));
	n = json_array_size(refs);
	if (n && !c->terminated && cf_terminate(c, refs, &e) != 0) {
		cf_detail(c, "terminating the run's %zu instance(s) failed: %s",
		          n, err_text(&e, eb, sizeof(eb)));
		goto out;
	}
	if (n && c->terminated) {
		/* the terminate case ended its own; the rest (a replay or a
		 * refused create that made some) still needs ending */
		json_t *rest = json_array();
		json_array_foreach(refs, i, m)
			if (!in_strs(c->ids, jget(m, "id")))
				json_array_append(rest, m);
		if (json_array_size(rest) && cf_terminate(c, rest, &e) != 0) {
			cf_detail(c, "terminating %zu instance(s) failed: %s",
			          json_array_size(rest),
			          err_text(&e, eb, sizeof(eb)));
			json_decref(rest);
			goto out;
		}
		json_decref(rest);
	}
	if (wait_none_live(c, NULL, "the run") != 0)
		goto out;
	cf_detail(c, "pool %s: nothing pending or running (%zu instance "
	          "id(s) made by the run, all ended)", c->pool,
	          json_array_size(c->made));
	rc = CF_PASS;
out:
	json_decref(got);
	json_decref(refs);
	return rc;
}

/* ----------------------------------------------------------------- run */

static int case_interrupted(cf *c)
{
	cf_detail(c, "not run: interrupted");
	return CF_SKIP;
}

static void run_case(cf *c, const char *name, int (*fn)(cf *))
{
	static const char *const names[] = {"pass", "fail", "skip"};
	int64_t t0 = gb_mono_ms();
	int st;
	char *detail;
	json_t *o;
	if (c->o->progress)
		c->o->progress(c->o->progress_ud, name);
	c->detail[0] = '\0';
	st = fn(c);
	detail = gb_redact(c->detail);
	o = json_pack("{s:s, s:s, s:o, s:I}", "name", name, "status",
	              names[st], "detail", jstr(detail), "duration_ms",
	              (json_int_t)(gb_mono_ms() - t0));
	json_array_append_new(c->cases, o);
	free(detail);
}

json_t *gb_conform_run(gb_drv *drv, const gb_conform_opts *opts)
{
	static const struct {
		const char *name;
		int (*fn)(cf *);
	} cases[] = {
		{"offers", case_offers},
		{"quota", case_quota},
		{"create", case_create},
		{"tags", case_tags},
		{"replay", case_replay},
		{"describe", case_describe},
		{"all_or_nothing", case_all_or_nothing},
		{"errors", case_errors},
		{"terminate", case_terminate},
		{"secrets", case_secrets},
		{"cleanup", case_cleanup},
	};
	cf c;
	char hex[9];
	json_t *doc, *info, *x;
	gb_drivers one = {&drv, 1};
	size_t i, count[3] = {0, 0, 0};
	memset(&c, 0, sizeof(c));
	c.drv = drv;
	c.d = drv->d;
	c.o = opts;
	c.broker = opts->broker_id && *opts->broker_id ? opts->broker_id
	                                               : "gpubroker";
	c.timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : 300000;
	c.cases = json_array();
	c.errors = json_array();
	c.made = json_array();
	pthread_mutex_init(&c.mu, NULL);
	if (gb_random_hex(hex, 4) != 0)
		snprintf(hex, sizeof(hex), "%08llx",
		         (unsigned long long)gb_now_ms() & 0xffffffffull);
	snprintf(c.pool, sizeof(c.pool), "gbconf-%s", hex);
	snprintf(c.token, sizeof(c.token), "gbconf-%s-a", hex);

	gb_log_set_tap(tap, &c);
	for (i = 0; i < GB_ARRAY_LEN(cases); i++)
		run_case(&c, cases[i].name,
		         stopped(&c) && cases[i].fn != case_cleanup
		                 ? case_interrupted : cases[i].fn);
	gb_log_set_tap(NULL, NULL);

	info = gb_drivers_json(&one);
	doc = json_object();
	json_object_set_new(doc, "driver", json_string(drv->name));
	json_object_set(doc, "version",
	                json_object_get(json_array_get(info, 0), "version"));
	json_object_set(doc, "capabilities",
	                json_object_get(json_array_get(info, 0),
	                                "capabilities"));
	json_decref(info);
	json_object_set_new(doc, "pool", json_string(c.pool));
	json_object_set_new(doc, "region", jstr(c.region));
	json_object_set_new(doc, "instance_type", jstr(c.type));
	json_object_set_new(doc, "capacity",
	                    c.have_offer ? json_string(gb_capacity_name(c.cap))
	                                 : json_null());
	json_array_foreach(c.cases, i, x) {
		const char *st = jget(x, "status");
		count[st[0] == 'p' ? 0 : st[0] == 'f' ? 1 : 2]++;
	}
	json_object_set_new(doc, "passed", json_integer((json_int_t)count[0]));
	json_object_set_new(doc, "failed", json_integer((json_int_t)count[1]));
	json_object_set_new(doc, "skipped", json_integer((json_int_t)count[2]));
	json_object_set_new(doc, "interrupted", json_boolean(stopped(&c)));
	json_object_set_new(doc, "cases", c.cases);

	json_decref(c.errors);
	json_decref(c.made);
	json_decref(c.ids);
	gb_strv_free(&c.lines);
	pthread_mutex_destroy(&c.mu);
	free(c.region);
	free(c.zone);
	free(c.type);
	return doc;
}
