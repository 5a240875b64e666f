/*
 * policy.c -- a set of loaded policies and their evaluation over offers.
 *
 * Every policy of a set lives in one sandbox (policy_sandbox.c), each in
 * its own environment.  An evaluation is one protected call that loops
 * over the offers in C and calls each policy function with the limits
 * armed: a failure anywhere fails the evaluation with
 *   policy 'NAME': FUNCTION: MESSAGE (offer CLOUD/REGION/TYPE/CAPACITY)
 * Refusal reasons are interned C strings owned by the set.
 */
#include "policy.h"

#include <dirent.h>
#include <errno.h>
#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "policy_int.h"

typedef struct policy {
	char *name;
	char *path;
	char hash[65];
	int has; /* 1 filter, 2 score */
	const char *default_reason; /* "refused by NAME", interned */
	gb_policy_param *params; /* declared, by name */
	size_t nparams;
	const char **param_names; /* params[].name, for the strict args */
} policy;


/* Recently interned reasons by the address of their Lua string: a policy
 * returning the same (cached) string for many offers skips the hashing.
 * Entries are verified by content, so a reused address cannot lie. */
#define RCACHE 256
typedef struct rcache_ent {
	const void *lua;
	size_t len;
	const char *c;
} rcache_ent;

struct gb_policy_set {
	gb_sandbox sb;
	rcache_ent rcache[RCACHE];
	policy *p;
	size_t n;
	int fn_ref;  /* registry: {filter1|false, score1|false, ...} */
	int req_ref; /* registry: the bound req, LUA_NOREF before */
	gb_strset reasons; /* interned reason strings */
	pthread_mutex_t mu;  /* gb_policy_lock: one evaluation at a time */
	atomic_uint refs;    /* gb_policy_set_free drops one */
	atomic_int retired;  /* not to be handed out again by the cache: an
	                        evaluation failed (the state may hold what a
	                        limit left behind), or it grew large */
};

/* Sets compiled in this process (gb_policy_loads). */
static atomic_ullong policy_loads;

/* registry: {filter1|false, score1|false, ...}; {defaults1, ...} (name ->
 * default per policy); {args1, ...} (the bound request's args) */
static char k_fns, k_defaults, k_args;

/* ------------------------------------------------------------------ */
/* resolving names */

char *gb_policy_name_of(const char *path)
{
	const char *b = strrchr(path, '/');
	size_t n;
	b = b ? b + 1 : path;
	n = strlen(b);
	if (n > 4 && strcmp(b + n - 4, ".lua") == 0)
		n -= 4;
	return gb_xstrndup(b, n);
}

static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int valid_name(const char *s)
{
	if (!*s || *s == '.' || strlen(s) > 128)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ||
		      *s == '.'))
			return 0;
	return 1;
}

/* Policy names in dirs (not tests), for "did you mean". */
static void list_names(const gb_strv *dirs, gb_strv *out)
{
	for (size_t i = 0; dirs && i < dirs->n; i++) {
		DIR *d = opendir(dirs->v[i]);
		struct dirent *e;
		if (!d)
			continue;
		while ((e = readdir(d)) && out->n < 500) {
			size_t n = strlen(e->d_name);
			if (n > 4 && strcmp(e->d_name + n - 4, ".lua") == 0 &&
			    !(n > 9 && strcmp(e->d_name + n - 9, "_test.lua") == 0))
				gb_strv_push_take(out, gb_xstrndup(e->d_name, n - 4));
		}
		closedir(d);
	}
}

char *gb_policy_resolve(const char *name, const gb_strv *dirs, char *err,
                        size_t errcap)
{
	size_t n = strlen(name);
	gb_strv names = {0};
	char *where, *path;
	const char *near;

	if (n > 4 && strcmp(name + n - 4, ".lua") == 0) {
		if (!is_file(name)) {
			snprintf(err, errcap, "policy '%s': cannot read %s: %s",
			         name, name, strerror(errno ? errno : ENOENT));
			return NULL;
		}
		return gb_xstrdup(name);
	}
	if (!valid_name(name)) {
		snprintf(err, errcap,
		         "policy '%s': invalid name (use letters, digits, '-', "
		         "'_' and '.', or a path ending in .lua)", name);
		return NULL;
	}
	for (size_t i = 0; dirs && i < dirs->n; i++) {
		path = gb_xasprintf("%s/%s.lua", dirs->v[i], name);
		if (is_file(path))
			return path;
		free(path);
	}
	where = dirs && dirs->n ? gb_strv_join(dirs, ", ")
	                        : gb_xstrdup("(empty search path)");
	list_names(dirs, &names);
	gb_strv_push(&names, NULL);
	names.n--;
	near = gb_nearest(name, (const char *const *)names.v);
	if (near)
		snprintf(err, errcap, "policy '%s': not found in %s; did you "
		                      "mean '%s'?", name, where, near);
	else
		snprintf(err, errcap, "policy '%s': not found in %s (add its "
		                      "directory to policy_path or give a path "
		                      "ending in .lua)", name, where);
	free(where);
	gb_strv_free(&names);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* loading */

/* The keys of a policy's table that gpubroker reads. */
static const char *const policy_keys[] = {"filter", "score", "params",
                                          NULL};

/* A key of the policy table at t that is a near miss of policy_keys
 * (fitler): an error naming both.  Other keys (helpers a test reaches)
 * are the policy's own. */
static void check_keys(lua_State *L, int t)
{
	lua_pushnil(L);
	while (lua_next(L, t)) {
		const char *k = lua_type(L, -2) == LUA_TSTRING
		                        ? lua_tostring(L, -2) : NULL;
		const char *near = k ? gb_nearest(k, policy_keys) : NULL;
		int known = 0;
		for (size_t i = 0; k && policy_keys[i]; i++)
			known |= strcmp(k, policy_keys[i]) == 0;
		if (near && !known)
			luaL_error(L, "the returned table has '%s'; did you mean "
			           "'%s'? (a policy returns filter, score and "
			           "params)", k, near);
		lua_pop(L, 1);
	}
}

void gb_policy_check_shape(lua_State *L, int *has)
{
	int t = lua_absindex(L, -1), ft, st;
	*has = 0;
	if (lua_type(L, t) != LUA_TTABLE)
		luaL_error(L, "must return a table with filter and/or score "
		              "functions, got %s", luaL_typename(L, t));
	check_keys(L, t);
	lua_pushliteral(L, "filter");
	ft = lua_rawget(L, t);
	lua_pushliteral(L, "score");
	st = lua_rawget(L, t);
	lua_pop(L, 2);
	if ((ft != LUA_TNIL && ft != LUA_TFUNCTION) ||
	    (st != LUA_TNIL && st != LUA_TFUNCTION))
		luaL_error(L, "filter and score must be functions, got %s and %s",
		           lua_typename(L, ft), lua_typename(L, st));
	if (ft == LUA_TNIL && st == LUA_TNIL)
		luaL_error(L, "must return a table with filter and/or score "
		              "functions, got a table with neither");
	*has = (ft == LUA_TFUNCTION ? 1 : 0) | (st == LUA_TFUNCTION ? 2 : 0);
}

typedef struct load_ctx {
	gb_policy_set *ps;
	policy *pol;
	const char *src;
	size_t len;
} load_ctx;

static int load_one(lua_State *L)
{
	load_ctx *c = lua_touserdata(L, 1);
	gb_sandbox *sb = &c->ps->sb;
	size_t i = (size_t)(c->pol - c->ps->p);

	sb->log_tag = c->pol->name;
	gb_sb_new_env(L);
	gb_sb_run_chunk(sb, c->src, c->len, c->pol->path, -1);
	/* Look at the shape with raw access only: a metatable on the
	 * returned table must not run host-side. */
	if (lua_type(L, -1) == LUA_TTABLE && lua_getmetatable(L, -1)) {
		lua_pop(L, 1);
		luaL_error(L, "the returned table must not have a metatable");
	}
	gb_policy_check_shape(L, &c->pol->has);
	gb_params_read(L, -1, &c->pol->params, &c->pol->nparams);
	lua_rawgetp(L, LUA_REGISTRYINDEX, &k_defaults);
	lua_insert(L, -2);
	lua_rawseti(L, -2, (lua_Integer)i + 1);
	lua_pop(L, 1);
	c->pol->param_names = gb_xcalloc(c->pol->nparams + 1,
	                                 sizeof(*c->pol->param_names));
	for (size_t k = 0; k < c->pol->nparams; k++)
		c->pol->param_names[k] = c->pol->params[k].name;
	lua_rawgetp(L, LUA_REGISTRYINDEX, &k_fns);
	lua_pushliteral(L, "filter");
	lua_rawget(L, -3);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		lua_pushboolean(L, 0);
	}
	lua_rawseti(L, -2, (lua_Integer)(2 * i + 1));
	lua_pushliteral(L, "score");
	lua_rawget(L, -3);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		lua_pushboolean(L, 0);
	}
	lua_rawseti(L, -2, (lua_Integer)(2 * i + 2));
	return 0;
}

static int init_fns(lua_State *L)
{
	lua_newtable(L);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &k_fns);
	lua_newtable(L);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &k_defaults);
	lua_newtable(L);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &k_args);
	return 0;
}

static int add_policy(gb_policy_set *ps, const char *entry,
                      const gb_strv *dirs, char *err, size_t errcap)
{
	char *path = gb_policy_resolve(entry, dirs, err, errcap);
	char *real, *src = NULL, msg[1024];
	size_t len;
	policy *pol;
	load_ctx c;

	if (!path)
		return -1;
	real = realpath(path, NULL);
	for (size_t i = 0; i < ps->n; i++) {
		char *other = realpath(ps->p[i].path, NULL);
		int same = real && other && strcmp(real, other) == 0;
		free(other);
		if (same) { /* listed twice (org and pool): runs once */
			free(real);
			free(path);
			return 0;
		}
	}
	free(real);
	if (gb_read_file(path, GB_POLICY_MAX_SOURCE, &src, &len) != 0) {
		snprintf(err, errcap, "policy '%s' (%s): %s", entry, path,
		         errno == EFBIG ? "larger than 1 MiB"
		                        : strerror(errno));
		free(path);
		return -1;
	}
	ps->p = gb_xrealloc(ps->p, (ps->n + 1) * sizeof(*ps->p));
	pol = &ps->p[ps->n++];
	memset(pol, 0, sizeof(*pol));
	pol->path = path;
	pol->name = gb_policy_name_of(path);
	gb_sha256_hex(src, len, pol->hash);
	snprintf(msg, sizeof(msg), "refused by %s", pol->name);
	pol->default_reason = gb_strset_intern(&ps->reasons, msg);
	c.ps = ps;
	c.pol = pol;
	c.src = src;
	c.len = len;
	if (gb_sb_pcall(&ps->sb, load_one, &c, msg, sizeof(msg)) != LUA_OK) {
		if (strstr(msg, path) == msg) /* "path:line: ..." */
			snprintf(err, errcap, "policy '%s': %s", pol->name, msg);
		else
			snprintf(err, errcap, "policy '%s' (%s): %s", pol->name,
			         path, msg);
		free(src);
		return -1;
	}
	free(src);
	return 0;
}

int gb_policy_set_new(gb_policy_set **out, const gb_strv *org,
                      const gb_strv *pool, const gb_strv *search_path,
                      const gb_policy_limits *lim, char *err, size_t errcap)
{
	gb_policy_set *ps = gb_xcalloc(1, sizeof(*ps));
	char dummy[8];
	unsigned long long nth = atomic_fetch_add(&policy_loads, 1) + 1;
	*out = NULL;
	pthread_mutex_init(&ps->mu, NULL);
	atomic_init(&ps->refs, 1);
	atomic_init(&ps->retired, 0);
	if (!err || !errcap) {
		err = dummy;
		errcap = sizeof(dummy);
	}
	ps->req_ref = LUA_NOREF;
	if (gb_sb_open(&ps->sb, lim, err, errcap) != 0 ||
	    gb_sb_pcall(&ps->sb, init_fns, NULL, err, errcap) != LUA_OK)
		goto fail;
	for (size_t i = 0; org && i < org->n; i++)
		if (add_policy(ps, org->v[i], search_path, err, errcap) != 0)
			goto fail;
	for (size_t i = 0; pool && i < pool->n; i++)
		if (add_policy(ps, pool->v[i], search_path, err, errcap) != 0)
			goto fail;
	gb_strv_free(&ps->sb.logs); /* top-level gb.log output is dropped */
	ps->sb.logs_dropped = 0;
	gb_log(GB_LOG_DEBUG, "policy", "compiled a set of %zu polic%s "
	       "(load %llu in this process)", ps->n, ps->n == 1 ? "y" : "ies",
	       nth);
	*out = ps;
	return 0;
fail:
	gb_policy_set_free(ps);
	return -1;
}

unsigned long long gb_policy_loads(void)
{
	return atomic_load(&policy_loads);
}

void gb_policy_set_ref(gb_policy_set *ps)
{
	atomic_fetch_add(&ps->refs, 1);
}

int gb_policy_set_retired(gb_policy_set *ps)
{
	return atomic_load(&ps->retired);
}

void gb_policy_lock(gb_policy_set *ps)
{
	pthread_mutex_lock(&ps->mu);
}

void gb_policy_unlock(gb_policy_set *ps)
{
	pthread_mutex_unlock(&ps->mu);
}

void gb_policy_set_free(gb_policy_set *ps)
{
	if (!ps || atomic_fetch_sub(&ps->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&ps->mu);
	gb_sb_close(&ps->sb);
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->p[i].name);
		free(ps->p[i].path);
		gb_params_free(ps->p[i].params, ps->p[i].nparams);
		free(ps->p[i].param_names);
	}
	free(ps->p);
	gb_strset_free(&ps->reasons);
	free(ps);
}

size_t gb_policy_count(const gb_policy_set *ps)
{
	return ps ? ps->n : 0;
}

const char *gb_policy_name(const gb_policy_set *ps, size_t i)
{
	return ps && i < ps->n ? ps->p[i].name : NULL;
}

const char *gb_policy_path(const gb_policy_set *ps, size_t i)
{
	return ps && i < ps->n ? ps->p[i].path : NULL;
}

const char *gb_policy_hash(const gb_policy_set *ps, size_t i)
{
	return ps && i < ps->n ? ps->p[i].hash : NULL;
}

int gb_policy_has(const gb_policy_set *ps, size_t i)
{
	return ps && i < ps->n ? ps->p[i].has : 0;
}

const gb_policy_param *gb_policy_params(const gb_policy_set *ps, size_t i,
                                        size_t *n)
{
	*n = ps && i < ps->n ? ps->p[i].nparams : 0;
	return ps && i < ps->n ? ps->p[i].params : NULL;
}

/* The policy of ps a pool's entry (name or path) stands for: -1 when
 * none (not loaded: an org policy list without it cannot happen). */
static int policy_of_entry(const gb_policy_set *ps, const char *entry)
{
	char *name = gb_policy_name_of(entry);
	int found = -1;
	for (size_t i = 0; i < ps->n && found < 0; i++)
		if (strcmp(ps->p[i].name, name) == 0)
			found = (int)i;
	free(name);
	return found;
}

/* Every arg of the spec's policy entries, checked against the
 * declarations: 0, or -1 with msg. */
static int check_args(const gb_policy_set *ps, const gb_pool_spec *spec,
                      char *msg, size_t cap)
{
	for (size_t j = 0; spec->policy_args && j < spec->policies.n; j++) {
		const gb_kvs *kv = &spec->policy_args[j];
		int i = kv->n ? policy_of_entry(ps, spec->policies.v[j]) : -1;
		const policy *pol = i >= 0 ? &ps->p[i] : NULL;
		for (size_t k = 0; pol && k < kv->n; k++) {
			gb_param_value v;
			const gb_policy_param *pp = gb_param_find(
				pol->params, pol->nparams, pol->name, kv->keys[k],
				msg, cap);
			if (!pp || gb_param_parse(pp, pol->name, kv->vals[k], &v,
			                          msg, cap) != 0)
				return -1;
		}
	}
	return 0;
}

int gb_policy_check_arg(const char *entry, const gb_strv *search_path,
                        const gb_policy_limits *lim, const char *key,
                        const char *value, char *msg, size_t cap)
{
	gb_strv pool = {0};
	gb_policy_set *ps = NULL;
	const gb_policy_param *pp;
	gb_param_value v;
	int rc = -1;
	gb_strv_push(&pool, entry);
	if (gb_policy_set_get(&ps, NULL, &pool, search_path, lim, msg, cap) != 0)
		goto out;
	rc = 0;
	if (!key)
		goto out;
	pp = gb_param_find(ps->p[0].params, ps->p[0].nparams, ps->p[0].name,
	                   key, msg, cap);
	if (!pp || gb_param_parse(pp, ps->p[0].name, value, &v, msg, cap) != 0)
		rc = -1;
out:
	gb_policy_set_free(ps);
	gb_strv_free(&pool);
	return rc;
}

/* ------------------------------------------------------------------ */
/* request */

typedef struct req_ctx {
	gb_policy_set *ps;
	const gb_pool_spec *spec;
	const gb_team_cfg *team;
} req_ctx;

/* The args table of policy i for spec (checked by check_args): the
 * defaults, then the pool's values; read-only and strict. */
static void push_args(lua_State *L, gb_policy_set *ps, size_t i,
                      const gb_pool_spec *spec)
{
	policy *pol = &ps->p[i];
	char what[160];
	luaL_checkstack(L, 6, "args");
	lua_createtable(L, 0, (int)pol->nparams);
	lua_rawgetp(L, LUA_REGISTRYINDEX, &k_defaults);
	lua_rawgeti(L, -1, (lua_Integer)i + 1);
	lua_remove(L, -2);
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		lua_pushvalue(L, -2);
		lua_insert(L, -2);
		lua_rawset(L, -5);
	}
	lua_pop(L, 1);
	for (size_t j = 0; spec->policy_args && j < spec->policies.n; j++) {
		const gb_kvs *kv = &spec->policy_args[j];
		if (!kv->n || policy_of_entry(ps, spec->policies.v[j]) != (int)i)
			continue;
		for (size_t k = 0; k < kv->n; k++) {
			char msg[8];
			gb_param_value v;
			const gb_policy_param *pp = gb_param_find(
				pol->params, pol->nparams, pol->name, kv->keys[k],
				msg, sizeof(msg));
			if (!pp || gb_param_parse(pp, pol->name, kv->vals[k], &v,
			                          msg, sizeof(msg)) != 0)
				continue; /* check_args refused it already */
			gb_param_push(L, pp, &v);
			lua_setfield(L, -2, pp->name);
		}
	}
	snprintf(what, sizeof(what), "args of %s", pol->name);
	gb_sb_readonly(L, what);
	gb_obj_strict(L, what, pol->param_names, pol->nparams);
}

static int bind_req(lua_State *L)
{
	req_ctx *c = lua_touserdata(L, 1);
	if (c->ps->req_ref != LUA_NOREF) {
		luaL_unref(L, LUA_REGISTRYINDEX, c->ps->req_ref);
		c->ps->req_ref = LUA_NOREF;
	}
	gb_obj_push_req(L, c->spec, c->team);
	c->ps->req_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_newtable(L);
	for (size_t i = 0; i < c->ps->n; i++) {
		push_args(L, c->ps, i, c->spec);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_rawsetp(L, LUA_REGISTRYINDEX, &k_args);
	return 0;
}

int gb_policy_set_request(gb_policy_set *ps, const gb_pool_spec *spec,
                          const gb_team_cfg *team, char *err, size_t errcap)
{
	req_ctx c = {ps, spec, team};
	char msg[512];
	if (check_args(ps, spec, msg, sizeof(msg)) != 0) {
		if (err && errcap)
			snprintf(err, errcap, "%s", msg);
		return -1;
	}
	if (gb_sb_pcall(&ps->sb, bind_req, &c, msg, sizeof(msg)) != LUA_OK) {
		if (err && errcap)
			snprintf(err, errcap, "policy request: %s", msg);
		atomic_store(&ps->retired, 1);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* evaluation */

typedef struct eval_ctx {
	gb_policy_set *ps;
	const gb_coffer *const *offers;
	size_t n;
	gb_policy_result *out;
	/* where a failure happened */
	size_t cur_policy;
	const char *cur_fn;
	size_t cur_offer;
	char detail[300]; /* a shape error found host-side */
	int nil_filter;   /* the failure: a filter returned nil */
} eval_ctx;

static int fail_shape(lua_State *L, eval_ctx *c, const char *fmt,
                      const char *tname)
{
	snprintf(c->detail, sizeof(c->detail), fmt, tname);
	lua_pushstring(L, c->detail);
	return lua_error(L);
}

static const char *reason_of(gb_policy_set *ps, lua_State *L, int idx,
                             const policy *pol)
{
	size_t len;
	const char *s;
	char buf[GB_POLICY_REASON_LEN + 1];
	rcache_ent *e;
	if (lua_type(L, idx) == LUA_TNIL)
		return pol->default_reason;
	s = lua_tolstring(L, idx, &len);
	e = &ps->rcache[((uintptr_t)s >> 4) % RCACHE];
	if (e->lua == s && e->len == len && memcmp(e->c, s, len) == 0)
		return e->c;
	if (len > GB_POLICY_REASON_LEN)
		len = GB_POLICY_REASON_LEN;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!buf[0] || strlen(buf) != len)
		return pol->default_reason; /* empty, or with NUL bytes */
	gb_text_clean(buf); /* printed in tables and JSON */
	e->lua = s;
	e->len = len;
	e->c = gb_strset_intern(&ps->reasons, buf);
	return e->c;
}

static int eval_batch(lua_State *L)
{
	eval_ctx *c = lua_touserdata(L, 1);
	gb_policy_set *ps = c->ps;
	gb_sandbox *sb = &ps->sb;
	size_t np = ps->n;
	int req, fns, args, base, offer;

	lua_settop(L, 0);
	luaL_checkstack(L, (int)(3 * np + 8), "policies");
	lua_rawgeti(L, LUA_REGISTRYINDEX, ps->req_ref);
	req = 1;
	/* filter i at fns + 2i, score i at fns + 2i + 1 */
	lua_rawgetp(L, LUA_REGISTRYINDEX, &k_fns);
	for (size_t i = 0; i < 2 * np; i++)
		lua_rawgeti(L, 2, (lua_Integer)i + 1);
	lua_remove(L, 2);
	fns = 2;
	/* args i at args + i */
	lua_rawgetp(L, LUA_REGISTRYINDEX, &k_args);
	for (size_t i = 0; i < np; i++)
		lua_rawgeti(L, fns + 2 * (int)np, (lua_Integer)i + 1);
	lua_remove(L, fns + 2 * (int)np);
	args = fns + 2 * (int)np;
	base = lua_gettop(L);
	offer = base + 1;

	for (size_t k = 0; k < c->n; k++) {
		gb_policy_result *r = &c->out[k];
		int refused = 0;
		double score = 0;
		c->cur_offer = k;
		r->refused_by = -1;
		r->reason = NULL;
		r->score = 0;
		gb_obj_push_offer(L, c->offers[k]);
		for (size_t i = 0; i < np && !refused; i++) {
			int ok, t;
			if (!(ps->p[i].has & 1))
				continue;
			c->cur_policy = i;
			c->cur_fn = "filter";
			sb->log_tag = ps->p[i].name;
			lua_pushvalue(L, fns + 2 * (int)i);
			lua_pushvalue(L, req);
			lua_pushvalue(L, offer);
			lua_pushvalue(L, args + (int)i);
			gb_sb_call(sb, 3, 2);
			t = lua_type(L, -2);
			if (t == LUA_TBOOLEAN)
				ok = lua_toboolean(L, -2);
			else if (t == LUA_TNIL && !lua_isnil(L, -1))
				ok = 0; /* nil, reason: Lua's usual refusal */
			else if (t == LUA_TNIL) {
				/* most often a missing `return true` at the
				 * end: refusing silently would hide it */
				c->nil_filter = 1;
				return fail_shape(L, c, "%s", "filter returned "
				                  "nil");
			} else
				return fail_shape(L, c, "must return a boolean "
				                  "(and an optional reason), got %s",
				                  lua_typename(L, t));
			if (!ok) {
				t = lua_type(L, -1);
				if (t != LUA_TNIL && t != LUA_TSTRING &&
				    t != LUA_TNUMBER)
					return fail_shape(L, c, "the reason must "
					                  "be a string, got %s",
					                  lua_typename(L, t));
				r->refused_by = (int)i;
				r->reason = reason_of(ps, L, -1, &ps->p[i]);
				refused = 1;
			}
			lua_pop(L, 2);
		}
		for (size_t i = 0; i < np && !refused; i++) {
			double v;
			if (!(ps->p[i].has & 2))
				continue;
			c->cur_policy = i;
			c->cur_fn = "score";
			sb->log_tag = ps->p[i].name;
			lua_pushvalue(L, fns + 2 * (int)i + 1);
			lua_pushvalue(L, req);
			lua_pushvalue(L, offer);
			lua_pushvalue(L, args + (int)i);
			gb_sb_call(sb, 3, 1);
			if (lua_type(L, -1) != LUA_TNUMBER)
				return fail_shape(L, c, "must return a number, "
				                  "got %s",
				                  lua_typename(L, lua_type(L, -1)));
			v = lua_tonumber(L, -1);
			if (!isfinite(v))
				return fail_shape(L, c, "must return a finite "
				                  "number, got %s",
				                  v != v ? "nan" : "inf");
			score += v;
			lua_pop(L, 1);
		}
		if (!refused)
			r->score = score;
		lua_settop(L, base);
	}
	return 0;
}

int gb_policy_eval(gb_policy_set *ps, const gb_coffer *const *offers,
                   size_t n, gb_policy_result *out, char *err,
                   size_t errcap)
{
	eval_ctx c;
	char msg[1024];

	gb_strv_free(&ps->sb.logs);
	ps->sb.logs_dropped = 0;
	if (ps->req_ref == LUA_NOREF) {
		if (err && errcap)
			snprintf(err, errcap, "policy evaluation: no request "
			                      "bound (gb_policy_set_request)");
		return -1;
	}
	if (n == 0 || ps->n == 0) {
		for (size_t k = 0; k < n; k++) {
			out[k].refused_by = -1;
			out[k].reason = NULL;
			out[k].score = 0;
		}
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.ps = ps;
	c.offers = offers;
	c.n = n;
	c.out = out;
	c.cur_fn = "?";
	if (gb_sb_pcall(&ps->sb, eval_batch, &c, msg, sizeof(msg)) !=
	    LUA_OK) {
		if (err && errcap) {
			char label[256];
			gb_obj_offer_label(offers[c.cur_offer], label,
			                   sizeof(label));
			if (c.nil_filter)
				snprintf(err, errcap, "policy '%s' (%s): filter "
				         "returned nil for offer %s; return true "
				         "to keep the offer or false with a "
				         "reason", ps->p[c.cur_policy].name,
				         ps->p[c.cur_policy].path, label);
			else
				snprintf(err, errcap, "policy '%s': %s: %s "
				         "(offer %s)", ps->p[c.cur_policy].name,
				         c.cur_fn, msg, label);
		}
		ps->sb.log_tag = NULL;
		atomic_store(&ps->retired, 1);
		return -1;
	}
	ps->sb.log_tag = NULL;
	/* A cached set lives long: interned reasons and whatever the
	 * policies keep grow with it; past these it is built afresh. */
	if (ps->reasons.n > GB_POLICY_REUSE_REASONS ||
	    ps->sb.mem_used > ps->sb.mem_cap / 2)
		atomic_store(&ps->retired, 1);
	if (ps->sb.logs_dropped)
		gb_strv_push_take(&ps->sb.logs,
		                  gb_xasprintf("(%zu more gb.log messages "
		                               "dropped)",
		                               ps->sb.logs_dropped));
	return 0;
}

const char *const *gb_policy_logs(const gb_policy_set *ps, size_t *n)
{
	*n = ps ? ps->sb.logs.n : 0;
	return ps ? (const char *const *)ps->sb.logs.v : NULL;
}
