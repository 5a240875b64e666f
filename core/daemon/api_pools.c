/* api_pools.c -- /v1/pools endpoints and heartbeats. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "log.h"
#include "timejson.h"

/* ------------------------------------------------------------------ */
/* GET /v1/pools: a snapshot of every pool's summary
 *
 * Rendering the list reads every pool and its instances from the store,
 * far too slow to do per request.  The daemon keeps a snapshot instead
 * (d->pools_cache): every listed pool's summary rendered once as compact
 * JSON, sorted by name, with its team; a request filters, pages and
 * concatenates.  What only time changes (age_s, ttl_left_s) is not in the
 * snapshot's text: each request writes it from the pool's created_at and
 * ttl, so a snapshot never ages.  It is used only while
 *   - no engine event happened since it was built (d->event_gen) and no
 *     pool was written through this API without one (pool_writes:
 *     destroy requests, heartbeats, re-applies): a change shows in the
 *     very next read, the readers waiting for one rebuild; and
 *   - the store's version (gb_store_version_try: rows this process
 *     wrote, commits of other processes to the same file) is the one it
 *     was built at.  That is looked at by one request every
 *     POOLS_CHECK_MS, without waiting for the store; when it moved, that
 *     request rebuilds while the others go on with the snapshot they
 *     have.  So a write no event announces (another CLI on the same
 *     state file, an instance's state the reconciler wrote quietly)
 *     shows within POOLS_CHECK_MS plus one rebuild, and a daemon where
 *     nothing changes never rebuilds: the rebuild (~1,000 pools' JSON)
 *     was what stalled readers under load (BENCHMARKS.md, api).
 *
 * The snapshot is one allocation (header, entries, then the text they
 * point into), so the daemon frees it with free(); readers hold a
 * reference (refs, under snap_mu) while they copy from it.  snap_mu
 * guards the snapshot fields of gb_daemon (pools_cache, pools_gen,
 * pools_at_ms: when its version was last compared) and nothing else:
 * the daemon's own mutex (jobs, events) stays off the read path. */

#define POOLS_CHECK_MS 250
/* ,"age_s":N,"ttl_left_s":N} -- two int64 at most 20 characters each */
#define AGE_TEXT_MAX 80

typedef struct snap_entry {
	const char *name;
	const char *team;
	const char *json;       /* the summary, compact, without its '}' */
	size_t json_len;
	const char *name_json;  /* the name as a JSON string (next_after) */
	size_t name_json_len;
	int64_t created_at;     /* unix s */
	int64_t ttl_s;          /* 0 = none */
} snap_entry;

typedef struct pools_snap {
	size_t refs;            /* under snap_mu; the cache holds one */
	size_t n;
	gb_store_ver ver;       /* the store's version it was built at */
	snap_entry e[];
} pools_snap;

/* Pool writes through this API that no engine event announces. */
static atomic_uint_fast64_t pool_writes;
/* One rebuild (or version check) at a time. */
static pthread_mutex_t build_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t snap_mu = PTHREAD_MUTEX_INITIALIZER;

static void pools_changed(void)
{
	atomic_fetch_add(&pool_writes, 1);
}

static uint64_t pools_gen_now(gb_daemon *d)
{
	return __atomic_load_n(&d->event_gen, __ATOMIC_ACQUIRE) +
	       (uint64_t)atomic_load(&pool_writes);
}

/* A pool without its instances and without what time changes, for
 * lists: its compact JSON without the closing '}' (malloc'd). */
static char *summary_text(json_t *p)
{
	json_t *s = json_deep_copy(p);
	char *t;
	json_object_del(s, "instances");
	json_object_del(s, "age_s");
	json_object_del(s, "ttl_left_s");
	if (!(t = json_dumps(s, JSON_COMPACT |
	                           JSON_REAL_PRECISION(GB_JSON_DIGITS))))
		abort(); /* out of memory */
	json_decref(s);
	t[strlen(t) - 1] = '\0';
	return t;
}

static pools_snap *snap_build(gb_daemon *d)
{
	json_t *all = gb_engine_pools_json(d->eng, NULL, 0), *p;
	size_t n = json_array_size(all), i, text = 0;
	char **parts;
	pools_snap *s;
	char *at;

	if (!all) /* the store failed: no snapshot (never an empty one) */
		return NULL;
	parts = gb_xcalloc(n ? n * 2 : 1, sizeof(char *));

	json_array_foreach(all, i, p) {
		parts[2 * i] = summary_text(p);
		parts[2 * i + 1] = json_dumps(json_object_get(p, "name"),
		                              JSON_COMPACT | JSON_ENCODE_ANY);
		if (!parts[2 * i + 1])
			abort(); /* out of memory */
		text += strlen(parts[2 * i]) + strlen(parts[2 * i + 1]) + 2 +
		        strlen(json_string_value(json_object_get(p, "name"))) +
		        strlen(json_string_value(json_object_get(p, "team"))) + 2;
	}
	s = gb_xcalloc(1, sizeof(*s) + n * sizeof(snap_entry) + text);
	s->refs = 1;
	s->n = n;
	at = (char *)&s->e[n];
	json_array_foreach(all, i, p) {
		const char *src[4] = {
			json_string_value(json_object_get(p, "name")),
			json_string_value(json_object_get(p, "team")),
			parts[2 * i], parts[2 * i + 1],
		};
		const char **dst[4] = {&s->e[i].name, &s->e[i].team,
		                       &s->e[i].json, &s->e[i].name_json};
		for (int k = 0; k < 4; k++) {
			size_t len = strlen(src[k]);
			memcpy(at, src[k], len + 1);
			*dst[k] = at;
			at += len + 1;
			if (k == 2)
				s->e[i].json_len = len;
			else if (k == 3)
				s->e[i].name_json_len = len;
		}
		if (gb_json_time_get(json_object_get(p, "created_at"),
		                     &s->e[i].created_at) == 0)
			s->e[i].created_at /= 1000;
		/* ttl_left_s is null without a TTL; created_at + ttl_s - now
		 * otherwise (engine_report.c) */
		if (json_is_integer(json_object_get(p, "ttl_left_s")))
			s->e[i].ttl_s = json_integer_value(
				json_object_get(p, "ttl_left_s")) +
				json_integer_value(json_object_get(p, "age_s"));
		free(parts[2 * i]);
		free(parts[2 * i + 1]);
	}
	free(parts);
	json_decref(all);
	return s;
}

/* What time changes, then the closing '}': at most AGE_TEXT_MAX bytes. */
static size_t age_text(char *out, const snap_entry *e, int64_t now_s)
{
	int len;
	if (e->ttl_s)
		len = snprintf(out, AGE_TEXT_MAX, ",\"age_s\":%lld,\"ttl_left_s\":%lld}",
		               (long long)(now_s - e->created_at),
		               (long long)(e->created_at + e->ttl_s - now_s));
	else
		len = snprintf(out, AGE_TEXT_MAX, ",\"age_s\":%lld,\"ttl_left_s\":null}",
		               (long long)(now_s - e->created_at));
	return len > 0 && len < AGE_TEXT_MAX ? (size_t)len : 0;
}

static void snap_release(pools_snap *s)
{
	int last;
	pthread_mutex_lock(&snap_mu);
	last = --s->refs == 0;
	pthread_mutex_unlock(&snap_mu);
	if (last)
		free(s);
}

/* Builds a snapshot and makes it the daemon's.  Caller holds build_mu. */
static void snap_refresh(gb_daemon *d)
{
	pools_snap *s, *old;
	uint64_t gen;
	gb_store_ver ver;
	int64_t at = gb_mono_ms();
	/* the generation and version before the store is read: a change
	 * made meanwhile makes this snapshot stale at once, never a change
	 * lost */
	pthread_mutex_lock(&snap_mu);
	gen = pools_gen_now(d);
	pthread_mutex_unlock(&snap_mu);
	gb_store_ver_read(d->store, &ver);
	if (!(s = snap_build(d))) {
		/* the last snapshot stays; a request with none gets 503 */
		gb_log(GB_LOG_ERROR, "api", "pools snapshot: state store "
		       "failed: %s", gb_store_errmsg(d->store));
		return;
	}
	__atomic_fetch_add(&d->pools_builds, 1, __ATOMIC_RELAXED);
	s->ver = ver;
	pthread_mutex_lock(&snap_mu);
	old = (pools_snap *)(void *)d->pools_cache;
	d->pools_cache = (char *)(void *)s;
	d->pools_gen = gen;
	d->pools_at_ms = at;
	pthread_mutex_unlock(&snap_mu);
	if (old)
		snap_release(old);
}

/* Compares the store's version with snapshot s's (one request at a time,
 * every POOLS_CHECK_MS) and rebuilds when it moved: 1 = rebuilt.  The
 * store busy: nothing now, the next request's turn. */
static int snap_check(gb_daemon *d, const pools_snap *s, int64_t now)
{
	int rebuilt = 0, rc;
	if (pthread_mutex_trylock(&build_mu) != 0)
		return 0;
	rc = gb_store_ver_moved(d->store, &s->ver);
	if (rc == 1) {
		snap_refresh(d);
		rebuilt = 1;
	} else if (rc == 0) {
		pthread_mutex_lock(&snap_mu);
		d->pools_at_ms = now;
		pthread_mutex_unlock(&snap_mu);
	}
	pthread_mutex_unlock(&build_mu);
	return rebuilt;
}

/* A referenced snapshot that the rules above allow; NULL when none
 * could ever be built (the store failed). */
static pools_snap *snap_get(gb_daemon *d)
{
	for (int round = 0;; round++) {
		pools_snap *s = NULL;
		int current = 0, due = 0;
		int64_t now = gb_mono_ms();
		pthread_mutex_lock(&snap_mu);
		if (d->pools_cache && d->pools_gen == pools_gen_now(d)) {
			current = 1;
			due = now - d->pools_at_ms >= POOLS_CHECK_MS;
			s = (pools_snap *)(void *)d->pools_cache;
			s->refs++;
		}
		pthread_mutex_unlock(&snap_mu);
		if (s) {
			/* a rebuild of our own: serve it (the next round
			 * finds it current) */
			if (due && snap_check(d, s, now) && round == 0) {
				snap_release(s);
				continue;
			}
			return s;
		}
		/* changed since it was built (or none yet): wait for (or
		 * make) a new one; after a rebuild of our own we serve it even
		 * if an event came in meanwhile */
		pthread_mutex_lock(&build_mu);
		pthread_mutex_lock(&snap_mu);
		current = d->pools_cache && d->pools_gen == pools_gen_now(d);
		pthread_mutex_unlock(&snap_mu);
		if (!current || round > 0)
			snap_refresh(d);
		pthread_mutex_unlock(&build_mu);
		if (round > 0) {
			pthread_mutex_lock(&snap_mu);
			s = (pools_snap *)(void *)d->pools_cache;
			if (s) /* NULL: none could be built (the store failed) */
				s->refs++;
			pthread_mutex_unlock(&snap_mu);
			return s;
		}
	}
}

/* The snapshot if it may be served without waiting for anything: it is
 * current and no version check is due (NULL: leave the request to a
 * handler thread, which checks, or rebuilds). */
static pools_snap *snap_now(gb_daemon *d)
{
	pools_snap *s = NULL;
	pthread_mutex_lock(&snap_mu);
	if (d->pools_cache && d->pools_gen == pools_gen_now(d) &&
	    gb_mono_ms() - d->pools_at_ms < POOLS_CHECK_MS) {
		s = (pools_snap *)(void *)d->pools_cache;
		s->refs++;
	}
	pthread_mutex_unlock(&snap_mu);
	return s;
}

static void pools_list(gb_api_req *r, pools_snap *given);

void gb_api_pools_list(gb_api_req *r)
{
	pools_list(r, NULL);
}

int gb_api_pools_list_now(gb_api_req *r)
{
	pools_snap *s;
	if (gb_api_query(r, "instances") || gb_api_query(r, "all"))
		return 0; /* not from the snapshot */
	s = snap_now(r->d);
	if (!s)
		return 0;
	pools_list(r, s);
	return 1;
}

/* GET /v1/pools?instances=1: a page of pools as GET /v1/pools/NAME
 * answers each (with its instances, their cost as of now), built from
 * the store for this request: what `gpubroker status` prints, slower
 * than the snapshot's summaries. */
/* Adds the pool's autoscale state (when it has one) to its JSON. */
static void with_autoscale(gb_daemon *d, json_t *pool)
{
	const char *name = json_string_value(json_object_get(pool, "name"));
	json_t *as = name ? gb_daemon_autoscale_json(d, name) : NULL;
	if (as)
		json_object_set_new(pool, "autoscale", as);
}

static void pools_list_full(gb_api_req *r, const char *team,
                            const char *after, int64_t limit)
{
	json_t *all = gb_engine_pools_json(r->d->eng, NULL,
	                                   gb_api_query(r, "all") != NULL);
	json_t *p;
	json_t *page, *budgets;
	if (!all) {
		gb_api_store_failed(r);
		return;
	}
	budgets = gb_engine_budgets(r->d->eng, NULL);
	page = json_array();
	const char *next = NULL;
	size_t i;
	json_array_foreach(all, i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		const char *pteam = json_string_value(json_object_get(p, "team"));
		if (!gb_api_sees_team(r, pteam) ||
		    (team && strcmp(team, pteam) != 0) ||
		    (after && strcmp(name, after) <= 0))
			continue;
		if ((int64_t)json_array_size(page) == limit) {
			next = json_string_value(json_object_get(
				json_array_get(page, json_array_size(page) - 1),
				"name"));
			break;
		}
		with_autoscale(r->d, p);
		gb_engine_budget_attach(p, budgets);
		json_array_append(page, p);
	}
	json_decref(budgets);
	r->resp = json_pack("{s:o}", "pools", page);
	if (next)
		json_object_set_new(r->resp, "next_after", json_string(next));
	json_decref(all);
	r->status = 200;
}

/* One page of the list from snapshot `given` (NULL: get one, waiting
 * if need be). */
static void pools_list(gb_api_req *r, pools_snap *given)
{
	const char *team = gb_api_query(r, "team");
	const char *after = gb_api_query(r, "after");
	const char *lim = gb_api_query(r, "limit");
	int64_t limit = 100;
	size_t i, taken = 0, len, *pick;
	int64_t now_s;
	const snap_entry *next = NULL;
	pools_snap *s;
	char *out, *at;
	static const char head[] = "{\"pools\":[", na[] = "],\"next_after\":";

	if (lim && (gb_parse_int64(lim, &limit) != 0 || limit < 1 || limit > 1000)) {
		gb_api_error(r, 400, "BadQuery", "limit must be 1..1000");
		if (given)
			snap_release(given);
		return;
	}
	/* the snapshot has neither instances nor destroyed pools */
	if (!given && (gb_api_query(r, "instances") || gb_api_query(r, "all"))) {
		pools_list_full(r, team, after, limit);
		return;
	}
	s = given ? given : snap_get(r->d);
	if (!s) {
		gb_api_store_failed(r);
		return;
	}
	/* the page: visible pools after `after`, at most limit; next_after
	 * names the page's last pool when more follow */
	pick = gb_xmalloc((size_t)limit * sizeof(*pick));
	len = sizeof(head) + sizeof(na) + 2;
	for (i = 0; i < s->n; i++) {
		const snap_entry *e = &s->e[i];
		if (!gb_api_sees_team(r, e->team) ||
		    (team && strcmp(team, e->team) != 0))
			continue;
		if (after && strcmp(e->name, after) <= 0)
			continue;
		if ((int64_t)taken == limit) {
			next = &s->e[pick[taken - 1]];
			len += next->name_json_len;
			break;
		}
		pick[taken++] = i;
		len += e->json_len + AGE_TEXT_MAX + 1;
	}
	now_s = gb_now_ms() / 1000;
	out = gb_xmalloc(len);
	memcpy(out, head, sizeof(head) - 1);
	at = out + sizeof(head) - 1;
	for (i = 0; i < taken; i++) {
		const snap_entry *e = &s->e[pick[i]];
		if (i)
			*at++ = ',';
		memcpy(at, e->json, e->json_len);
		at += e->json_len;
		at += age_text(at, e, now_s);
	}
	if (next) {
		memcpy(at, na, sizeof(na) - 1);
		at += sizeof(na) - 1;
		memcpy(at, next->name_json, next->name_json_len);
		at += next->name_json_len;
	} else {
		*at++ = ']';
	}
	*at++ = '}';
	*at = '\0';
	snap_release(s);
	free(pick);
	r->text = out;
	r->content_type = "application/json";
	r->status = 200;
}

void gb_api_pool_get(gb_api_req *r, const char *name)
{
	const char *st;
	if (!gb_api_pool_visible(r, name))
		return;
	r->resp = gb_engine_pool_json(r->d->eng, name);
	if (!r->resp) { /* visible a moment ago: the store failed */
		gb_api_store_failed(r);
		return;
	}
	st = json_string_value(json_object_get(r->resp, "state"));
	if (st && strcmp(st, "destroyed") == 0 && !gb_api_query(r, "all")) {
		/* gone, as from the list: its history only on asking */
		json_decref(r->resp);
		r->resp = NULL;
		gb_api_error(r, 404, "NotFound", "no pool named %s (one was "
		             "destroyed: 'gpubroker status --all %s', or "
		             "?all=1, shows it)", name, name);
		return;
	}
	r->status = 200;
	{
		const char *team = json_string_value(json_object_get(r->resp,
		                                                     "team"));
		json_t *b = team ? gb_engine_budgets(r->d->eng, team) : NULL;
		with_autoscale(r->d, r->resp);
		gb_engine_budget_attach(r->resp, b);
		json_decref(b);
	}
}

void gb_api_pool_instances(gb_api_req *r, const char *name)
{
	json_t *p;
	if (!gb_api_pool_visible(r, name))
		return;
	if (!(p = gb_engine_pool_json(r->d->eng, name))) {
		gb_api_store_failed(r);
		return;
	}
	r->resp = json_pack("{s:O}", "instances", json_object_get(p, "instances"));
	json_decref(p);
	r->status = 200;
}

/* A spec sent as YAML sees no environment: the daemon's must not leak
 * into it (${VAR} is "not set"; ${VAR:-default} takes the default). */
static const char *no_env(void *ud, const char *name)
{
	(void)ud;
	(void)name;
	return NULL;
}

/* 1 when the request's body is YAML (Content-Type application/yaml,
 * application/x-yaml or text/yaml): a spec file as it is, from the web
 * console's plan preview. */
static int body_is_yaml(gb_api_req *r)
{
	const char *ct = MHD_lookup_connection_value(
		r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	static const char *const yaml[] = {"application/yaml",
	                                   "application/x-yaml", "text/yaml"};
	return gb_api_type_in(ct, yaml, GB_ARRAY_LEN(yaml));
}

/* GET /v1/pools/{name}/plan: the placement decision recorded when the
 * pool was last applied (the plan its placement walked). */
void gb_api_pool_plan(gb_api_req *r, const char *name)
{
	json_t *rec;
	int rc;
	if (!gb_api_pool_visible(r, name))
		return;
	rc = gb_store_decision_last(r->d->store, name, &rec);
	if (rc < 0) {
		gb_api_error(r, 500, "StoreError", "%s",
		             gb_store_errmsg(r->d->store));
	} else if (rc == 1) {
		gb_api_error(r, 404, "NotFound", "no placement decision is "
		             "recorded for pool %s (one is written each time "
		             "it is applied)", name);
	} else {
		r->resp = rec;
		r->status = 200;
	}
}

/* GET /v1/pools/{name}/spec: the spec the pool was last applied with,
 * as stored (normalised: every default written out).  Its user_data is
 * not shown, only its size: scripts carry secrets often enough. */
void gb_api_pool_spec(gb_api_req *r, const char *name)
{
	gb_pool_row row;
	json_t *doc, *pool, *ud;
	if (!gb_api_pool_visible(r, name))
		return;
	if (gb_store_pool_get(r->d->store, name, &row) != 0) {
		gb_api_error(r, 404, "NotFound", "no pool named %s", name);
		return;
	}
	doc = row.spec_json ? json_loads(row.spec_json, 0, NULL) : NULL;
	gb_pool_row_free(&row);
	pool = json_object_get(doc, "pool");
	if (!json_is_object(pool)) {
		json_decref(doc);
		gb_api_error(r, 500, "StoreError", "the stored spec of pool %s "
		             "does not parse; apply it again", name);
		return;
	}
	if ((ud = json_object_get(pool, "user_data")) && json_is_string(ud))
		json_object_set_new(pool, "user_data", json_sprintf(
			"(%zu bytes, not shown: user data may hold secrets)",
			json_string_length(ud)));
	r->resp = json_pack("{s:O}", "spec", pool);
	json_decref(doc);
	r->status = 200;
}

int gb_api_body_spec(gb_api_req *r, gb_spec_set *set)
{
	gb_diags d = GB_DIAGS_INIT;
	gb_spec_opts so;
	const char *clouds[GB_MAX_CLOUDS];
	char *text = NULL;
	int yaml = body_is_yaml(r), rc;
	memset(&so, 0, sizeof(so));
	/* the clouds are this daemon's drivers */
	gb_drivers_names(&r->d->app.rt.drivers, clouds, GB_ARRAY_LEN(clouds));
	so.clouds = clouds;
	/* and a region glob must name a region of the pool's clouds (the
	 * caller holds cfg_lock, so the catalog is not swapped meanwhile) */
	so.catalog = r->d->app.rt.cat;
	/* and priority: a class of this daemon's priorities: */
	const char *classes[64];
	so.priorities = gb_config_priority_names(r->d->cfg, classes, 64);
	/* and policy args must be ones the policies declare */
	so.policy_arg = gb_plan_policy_arg;
	so.policy_ud = (void *)(uintptr_t)r->d->cfg;
	if (yaml) {
		if (!r->body.len) {
			gb_api_error(r, 400, "EmptyBody",
			             "this request needs a pool spec (YAML) as its "
			             "body");
			return -1;
		}
		so.getenv_fn = no_env;
		rc = gb_spec_load_buf("request", r->body.data, r->body.len, &so,
		                      set, &d);
	} else {
		json_t *j = gb_api_body_json(r), *wrapped;
		if (!j)
			return -1;
		/* a spec, {"pool": spec}, or {"pools": [{"pool": spec},
		 * ...]} (a file's documents) */
		json_t *many = json_object_get(j, "pools");
		wrapped = json_is_array(many) && json_object_size(j) == 1
		                  ? json_incref(many)
		          : json_object_get(j, "pool")
		                  ? json_incref(j)
		                  : json_pack("{s:O}", "pool", j);
		json_decref(j);
		text = json_dumps(wrapped, JSON_COMPACT);
		json_decref(wrapped);
		/* No ${VAR} expansion on the server: the client already
		 * expanded its own environment, and the daemon's must not
		 * leak in. */
		so.getenv_fn = NULL;
		rc = gb_spec_load_json("request", text, strlen(text), &so, set,
		                       &d);
	}
	if (rc != 0) {
		json_t *details = json_array();
		char *all = gb_diags_str(&d);
		for (size_t i = 0; i < d.n; i++)
			json_array_append_new(details, d.v[i].line > 0
				? json_sprintf("line %d column %d: %s%s%s",
				               d.v[i].line, d.v[i].col, d.v[i].path,
				               *d.v[i].path ? ": " : "", d.v[i].msg)
				: json_sprintf("%s: %s", d.v[i].path, d.v[i].msg));
		gb_api_error(r, 400, "InvalidSpec",
		             "the pool spec is invalid (%zu problems)", d.n);
		json_object_set_new(json_object_get(r->resp, "error"), "details",
		                    details);
		snprintf(r->detail, sizeof(r->detail), "%s", all);
		free(all);
		gb_diags_free(&d);
		free(text);
		return -1;
	}
	gb_diags_free(&d);
	free(text);
	/* A policy given as a path names a file on the client's machine;
	 * the daemon must not read files of its own host on a request's
	 * word.  Over the API only names from the daemon's policy path. */
	for (size_t i = 0; i < set->n; i++)
		for (size_t k = 0; k < set->pools[i].policies.n; k++) {
			const char *p = set->pools[i].policies.v[k];
			if (strchr(p, '/') || strstr(p, ".lua")) {
				gb_api_error(r, 400, "InvalidSpec",
				             "pool.policy[%zu]: \"%.200s\" is a path; a "
				             "spec sent to the daemon may only name "
				             "policies in the daemon's policy path (copy "
				             "the file there and use its name)",
				             k, p);
				gb_spec_set_free(set);
				return -1;
			}
		}
	return 0;
}

/* The one pool of a request body, named as in the URL. */
static int body_spec(gb_api_req *r, const char *name, gb_spec_set *set)
{
	if (gb_api_body_spec(r, set) != 0)
		return -1;
	if (set->n != 1 || strcmp(set->pools[0].name, name) != 0) {
		gb_api_error(r, 400, "NameMismatch",
		             "the URL names pool %s but the spec names %s", name,
		             set->n ? set->pools[0].name : "nothing");
		gb_spec_set_free(set);
		return -1;
	}
	return 0;
}

/* An engine operation's refusal: 503 StoreUnavailable when the store
 * failed (nothing was done: send it again), else 422 Refused. */
static void engine_error(gb_api_req *r, const gb_engine_result *res)
{
	if (res->store_failed) {
		r->retry_after_s = 5;
		gb_api_error(r, 503, "StoreUnavailable", "%s", res->message);
	} else {
		gb_api_error(r, 422, "Refused", "%s", res->message);
	}
}

void gb_api_pool_put(gb_api_req *r, const char *name)
{
	gb_spec_set set;
	gb_engine_result res;
	gb_pool_row row;
	if (body_spec(r, name, &set) != 0)
		return;
	gb_api_ci_labels(r, &set.pools[0]);
	if (!gb_api_sees_team(r, set.pools[0].team)) {
		gb_api_error(r, 403, "Forbidden",
		             "pool %s: token '%s' is for team %s and cannot "
		             "create pools for team %s", name, r->actor, r->team,
		             set.pools[0].team);
		gb_spec_set_free(&set);
		return;
	}
	/* an operator must not overwrite another team's pool of that name */
	if (gb_store_pool_get(r->d->store, name, &row) == 0) {
		int other = !gb_api_sees_team(r, row.team) &&
		            strcmp(row.state, "destroyed") != 0;
		gb_pool_row_free(&row);
		if (other) {
			gb_api_error(r, 409, "NameTaken",
			             "a pool named %s exists for another team; pick "
			             "another name", name);
			gb_spec_set_free(&set);
			return;
		}
	}
	if (gb_engine_submit(r->d->eng, &set.pools[0], &res) != 0) {
		engine_error(r, &res);
		gb_engine_result_free(&res);
		gb_spec_set_free(&set);
		return;
	}
	pools_changed();
	if (r->ci_labels)
		gb_api_ci_event(r, name);
	gb_daemon_enqueue(r->d, GB_JOB_CONVERGE, name, NULL);
	r->resp = res.pool;
	res.pool = NULL;
	r->status = 202;
	snprintf(r->detail, sizeof(r->detail), "%d x %s", set.pools[0].count,
	         set.pools[0].gpu_models.n ? set.pools[0].gpu_models.v[0] : "?");
	gb_spec_set_free(&set);
}

/* The body is the pool's spec, or a file's pools ending with it: the
 * ones before it are counted as if applied by the quota and budget
 * checks (apply checks a file's pools together before creating any). */
void gb_api_pool_diff(gb_api_req *r, const char *name)
{
	gb_spec_set set;
	gb_engine_batch earlier = GB_ENGINE_BATCH_INIT;
	const gb_pool_spec *s;
	char err[1024];
	if (gb_api_body_spec(r, &set) != 0)
		return;
	if (!set.n || strcmp(set.pools[set.n - 1].name, name) != 0) {
		gb_api_error(r, 400, "NameMismatch",
		             "the URL names pool %s but %s names %s", name,
		             set.n > 1 ? "the last spec" : "the spec", set.n ?
		             set.pools[set.n - 1].name : "nothing");
		gb_spec_set_free(&set);
		return;
	}
	s = &set.pools[set.n - 1];
	for (size_t i = 0; i < set.n; i++) {
		gb_api_ci_labels(r, &set.pools[i]);
		if (!gb_api_sees_team(r, set.pools[i].team)) {
			gb_api_error(r, 403, "Forbidden", "pool %s: token '%s' is "
			             "for team %s and cannot plan pools for team "
			             "%s", set.pools[i].name, r->actor, r->team,
			             set.pools[i].team);
			gb_spec_set_free(&set);
			return;
		}
	}
	for (size_t i = 0; i + 1 < set.n; i++)
		if (gb_engine_batch_plan(r->d->eng, &earlier, &set.pools[i], err,
		                         sizeof(err)) != 0) {
			gb_api_error(r, 422, "PlanFailed", "pool %s: %s",
			             set.pools[i].name, err);
			gb_engine_batch_free(&earlier);
			gb_spec_set_free(&set);
			return;
		}
	r->resp = gb_engine_diff(r->d->eng, s, &earlier, err, sizeof(err));
	if (!r->resp)
		gb_api_error(r, 422, "PlanFailed", "%s", err);
	else
		r->status = 200;
	gb_engine_batch_free(&earlier);
	gb_spec_set_free(&set);
}

void gb_api_pool_delete(gb_api_req *r, const char *name)
{
	gb_engine_result res;
	int rc;
	if (!gb_api_pool_visible(r, name))
		return;
	rc = gb_engine_request_destroy(r->d->eng, name, "user", r->actor, &res);
	if (rc != 0 && res.not_found) {
		/* destroyed already: gone, as kubectl's second delete */
		gb_api_error(r, 404, "NotFound", "%s", res.message);
		gb_engine_result_free(&res);
		return;
	}
	if (rc != 0) {
		if (rc == 1) {
			r->retry_after_s = 5;
			gb_api_error(r, 503, "StoreUnavailable", "%s",
			             res.message);
		} else {
			engine_error(r, &res);
		}
		gb_engine_result_free(&res);
		return;
	}
	pools_changed();
	gb_daemon_enqueue(r->d, GB_JOB_DESTROY, name, "user");
	r->resp = res.pool;
	r->status = 202;
}

void gb_api_pool_scale(gb_api_req *r, const char *name)
{
	json_t *j;
	json_t *c;
	gb_engine_result res;
	if (!gb_api_pool_visible(r, name))
		return;
	if (!(j = gb_api_body_json(r)))
		return;
	c = json_object_get(j, "count");
	if (!json_is_integer(c)) {
		json_decref(j);
		gb_api_error(r, 400, "BadRequest",
		             "body must be {\"count\": N} with an integer N");
		return;
	}
	if (json_integer_value(c) < 0 ||
	    json_integer_value(c) > GB_POOL_MAX_INSTANCES) {
		/* checked before the engine's int: 4294967297 is not 1 */
		gb_api_error(r, 422, "Refused",
		             "scale to %lld: expected 0 to %d instances",
		             (long long)json_integer_value(c),
		             GB_POOL_MAX_INSTANCES);
		json_decref(j);
		return;
	}
	if (gb_engine_set_desired(r->d->eng, name, (int)json_integer_value(c),
	                          &res) != 0) {
		engine_error(r, &res);
	} else {
		pools_changed();
		gb_daemon_enqueue(r->d, GB_JOB_CONVERGE, name, NULL);
		r->resp = res.pool;
		res.pool = NULL;
		r->status = 202;
		snprintf(r->detail, sizeof(r->detail), "count %lld",
		         (long long)json_integer_value(c));
	}
	gb_engine_result_free(&res);
	json_decref(j);
}

/* Deletes the heartbeat samples past daemon.heartbeats_retention, every
 * tenth of it (at most once a minute, at least a second apart): the
 * samples grow with heartbeats, so they are pruned where they arrive. */
static void prune_heartbeats(gb_daemon *d)
{
	int64_t keep = d->cfg->heartbeats_retention_s, now = gb_mono_ms(), n = 0;
	int64_t every = keep * 100; /* a tenth, in ms */
	int due;
	if (keep <= 0)
		return;
	every = every > 60000 ? 60000 : every < 1000 ? 1000 : every;
	pthread_mutex_lock(&d->mmu);
	due = !d->hb_prune_at_ms || now - d->hb_prune_at_ms >= every;
	if (due)
		d->hb_prune_at_ms = now;
	pthread_mutex_unlock(&d->mmu);
	if (!due)
		return;
	if (gb_store_hb_prune(d->store, gb_now_ms() - keep * 1000, &n) != 0)
		gb_log(GB_LOG_ERROR, "api", "heartbeat retention: %s",
		       gb_store_errmsg(d->store));
	if (n)
		gb_log(GB_LOG_INFO, "api", "retention: deleted %lld heartbeat "
		       "samples older than daemon.heartbeats_retention",
		       (long long)n);
	pthread_mutex_lock(&d->mmu);
	d->pruned_heartbeats += (uint64_t)n;
	pthread_mutex_unlock(&d->mmu);
}

#define DEMAND_MAX_S (7 * 86400)
/* Demand signals a token may send a minute, heartbeats an instance may
 * send a minute (README, "Limits"): past them 429 with Retry-After. */
#define DEMAND_PER_MINUTE 120
#define HEARTBEATS_PER_MINUTE 120

/* Counts the request against the budget "KIND:who"; 0 after a 429. */
static int admit(gb_api_req *r, const char *kind, const char *who,
                 int per_minute, const char *what)
{
	char key[256];
	int retry = 0;
	if (!r->d->srv)
		return 1;
	snprintf(key, sizeof(key), "%s:%s", kind, who);
	if (gb_api_token_admit(gb_api_srv_limits(r->d), key, per_minute,
	                       &retry))
		return 1;
	gb_api_error(r, 429, "RateLimited", "%s may send %d %s a minute; "
	             "retry in %d s", who, per_minute, what, retry);
	r->retry_after_s = retry;
	return 0;
}

/* The pool's spec when it is active and has an autoscale block; else an
 * error answered.  0 with *spec filled (caller frees). */
static int autoscaled_spec(gb_api_req *r, const char *name,
                           gb_pool_spec *spec)
{
	gb_pool_row row;
	gb_spec_set set = {NULL, 0};
	gb_diags dg = GB_DIAGS_INIT;
	gb_spec_opts so;
	int ok = 0;
	memset(&so, 0, sizeof(so));
	if (gb_store_pool_get(r->d->store, name, &row) != 0) {
		gb_api_error(r, 404, "NotFound", "no pool named %s", name);
		return -1;
	}
	if (strcmp(row.state, "active") == 0 &&
	    gb_spec_load_json(name, row.spec_json, strlen(row.spec_json), &so,
	                      &set, &dg) == 0 && set.n &&
	    set.pools[0].autoscale.enabled) {
		gb_pool_spec_copy(spec, &set.pools[0]);
		ok = 1;
	}
	if (!ok)
		gb_api_error(r, 422, "Refused", "pool %s is not an active "
		             "autoscaled pool: give its spec an autoscale: block "
		             "(and min < max) to send it demand", name);
	gb_spec_set_free(&set);
	gb_diags_free(&dg);
	gb_pool_row_free(&row);
	return ok ? 0 : -1;
}

/* POST /v1/pools/{name}/demand {"desired": N, "for": "10m"}: a
 * workload that knows its demand (an inference router's queue) asks for
 * N instances for a while (default 10m, at most 7d); the autoscaler
 * keeps at least N, clamped to min..max, until then.  A later signal
 * replaces it; {"desired": 0} withdraws it. */
void gb_api_pool_demand(gb_api_req *r, const char *name)
{
	json_t *j, *n, *f;
	gb_pool_spec spec;
	int64_t secs = 600, now = gb_now_ms() / 1000;
	int want, eff, changed;
	if (!gb_api_pool_visible(r, name))
		return;
	if (!admit(r, "demand", r->actor ? r->actor : "-", DEMAND_PER_MINUTE,
	           "demand signals"))
		return;
	if (!(j = gb_api_body_json(r)))
		return;
	n = json_object_get(j, "desired");
	f = json_object_get(j, "for");
	if (!json_is_integer(n) || json_integer_value(n) < 0 ||
	    json_integer_value(n) > GB_POOL_MAX_INSTANCES ||
	    (f && !json_is_string(f) && !json_is_integer(f))) {
		json_decref(j);
		gb_api_error(r, 400, "BadRequest", "body must be {\"desired\": "
		             "N, \"for\": \"10m\"} with N from 0 to %d and a "
		             "duration (default 10m)", GB_POOL_MAX_INSTANCES);
		return;
	}
	if (json_is_integer(f))
		secs = json_integer_value(f);
	else if (f && gb_parse_duration(json_string_value(f), &secs) != 0)
		secs = -1;
	if (secs <= 0 || secs > DEMAND_MAX_S) {
		json_decref(j);
		gb_api_error(r, 400, "BadRequest", "\"for\" must be a duration "
		             "such as 90s, 10m or 2h, more than 0 and at most 7d");
		return;
	}
	want = (int)json_integer_value(n);
	json_decref(j);
	if (autoscaled_spec(r, name, &spec) != 0)
		return;
	eff = want < spec.min ? spec.min : want > spec.max ? spec.max : want;
	/* stored: the replica that converges the pool acts on it, whichever
	 * replica took it */
	changed = gb_daemon_set_demand(r->d, name, want, want ? now + secs : 0);
	if (changed < 0) {
		gb_api_error(r, 503, "StoreError", "the demand signal was not "
		             "kept: %s; retry", gb_store_errmsg(r->d->store));
		r->retry_after_s = 5;
		gb_pool_spec_free(&spec);
		return;
	}
	/* the same signal again only moves its end: one event and one
	 * audit row per change, not per request */
	r->no_audit = !changed;
	/* the signal is kept; its event is best effort */
	if (changed && want)
		GB_IGNORE(gb_store_event(r->d->store, name, NULL, "demand",
		               "demand signal %d for %llds from %s (within "
		               "min..max: %d)", want, (long long)secs,
		               r->actor ? r->actor : "-", eff));
	else if (changed)
		GB_IGNORE(gb_store_event(r->d->store, name, NULL, "demand",
		               "demand signal withdrawn by %s",
		               r->actor ? r->actor : "-"));
	r->resp = json_pack("{s:s, s:i, s:i, s:o, s:b}", "pool", name,
	                    "desired", want, "effective", eff, "until",
	                    want ? gb_json_time((now + secs) * 1000)
	                         : json_null(), "changed", changed);
	r->status = 200;
	snprintf(r->detail, sizeof(r->detail), "desired %d for %llds", want,
	         (long long)secs);
	gb_pool_spec_free(&spec);
	if (changed)
		gb_daemon_kick(r->d);
}

int gb_api_keep_heartbeat(gb_api_req *r, const gb_inst_row *inst,
                          double util)
{
	gb_daemon *d = r->d;
	int64_t now = gb_now_ms() / 1000;
	if (gb_store_inst_heartbeat(d->store, inst->id, now, util) != 0) {
		gb_api_error(r, 503, "StoreUnavailable", "state store failed: "
		             "%s; the heartbeat was not recorded: send it again",
		             gb_store_errmsg(d->store));
		return -1;
	}
	if (gb_store_hb_add(d->store, inst->id, gb_now_ms(), util) != 0)
		gb_log(GB_LOG_ERROR, "api", "keep heartbeat of %s: %s",
		       inst->name ? inst->name : "?", gb_store_errmsg(d->store));
	prune_heartbeats(d);
	if (gb_store_pool_heartbeat(d->store, inst->pool, now,
	                            util > 0.05) != 0) {
		gb_api_error(r, 503, "StoreUnavailable", "state store failed: "
		             "%s; the pool's GPU use was not recorded: send the "
		             "heartbeat again", gb_store_errmsg(d->store));
		return -1;
	}
	pools_changed();
	return 0;
}

/* POST /v1/instances/{id}/heartbeat {"gpu_util": 0.0..1.0}: the
 * workload says it is alive and how busy its GPUs are.  Utilisation
 * above 5% counts as GPU use for idle_timeout; every heartbeat is kept
 * as a sample for `usage` (until daemon.heartbeats_retention). */
void gb_api_heartbeat(gb_api_req *r, const char *id)
{
	json_t *j, *u;
	gb_inst_row inst;
	char key[32];
	double util;
	if (!(j = gb_api_body_json(r)))
		return;
	u = json_object_get(j, "gpu_util");
	if (!json_is_number(u) || json_number_value(u) < 0 ||
	    json_number_value(u) > 1) {
		json_decref(j);
		gb_api_error(r, 400, "BadRequest",
		             "body must be {\"gpu_util\": U} with U between 0 and "
		             "1 (the busiest GPU's utilisation)");
		return;
	}
	util = json_number_value(u);
	json_decref(j);
	if (gb_store_inst_lookup(r->d->store, id, &inst) != 0) {
		gb_api_error(r, 404, "NotFound", "no live instance %s", id);
		return;
	}
	if (!gb_api_pool_visible(r, inst.pool)) {
		gb_api_error(r, 404, "NotFound", "no live instance %s", id);
		gb_inst_row_free(&inst);
		return;
	}
	snprintf(key, sizeof(key), "instance %lld", (long long)inst.id);
	if (!admit(r, "hb", key, HEARTBEATS_PER_MINUTE, "heartbeats")) {
		gb_inst_row_free(&inst);
		return;
	}
	if (gb_api_keep_heartbeat(r, &inst, util) != 0) {
		gb_inst_row_free(&inst);
		return;
	}
	r->resp = json_pack("{s:s, s:s, s:f}", "instance", id, "pool",
	                    inst.pool, "gpu_util", util);
	r->status = 200;
	gb_inst_row_free(&inst);
}
