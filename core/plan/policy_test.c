/*
 * policy_test.c -- `gpubroker policy test` and `policy check`: run the
 * test_* functions of *_test.lua files in the policy sandbox, and load
 * single files to report their errors.
 *
 * Each test file gets a fresh sandbox whose environment also holds the
 * assertion helpers (a small Lua prelude below) and load_policy(); every
 * test function is one limited call, like a policy call.
 */
#include "policy.h"

#include <dirent.h>
#include <errno.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"

/* The helpers tests use.  Runs in the test file's environment; receives
 * the deep read-only constructor as its argument. */
static const char *const prelude[] = {
"local readonly = ...\n"
"local function repr(v, depth)\n"
"  depth = depth or 0\n"
"  if type(v) == 'string' then return string.format('%q', v) end\n"
"  if type(v) ~= 'table' then return tostring(v) end\n"
"  if depth > 2 then return '{...}' end\n"
"  local parts = {}\n"
"  for k, x in pairs(v) do\n"
"    if #parts >= 8 then parts[#parts + 1] = '...'; break end\n"
"    if type(k) == 'string' and k:match('^[%a_][%w_]*$') then\n"
"      parts[#parts + 1] = k .. '=' .. repr(x, depth + 1)\n"
"    else\n"
"      parts[#parts + 1] = '[' .. repr(k, depth + 1) .. ']=' ..\n"
"                          repr(x, depth + 1)\n"
"    end\n"
"  end\n"
"  return '{' .. table.concat(parts, ', ') .. '}'\n"
"end\n",
"local function deep_eq(a, b, depth)\n"
"  if a == b then return true end\n"
"  if type(a) ~= 'table' or type(b) ~= 'table' or depth > 20 then\n"
"    return false\n"
"  end\n"
"  for k, v in pairs(a) do\n"
"    if not deep_eq(v, b[k], depth + 1) then return false end\n"
"  end\n"
"  for k in pairs(b) do\n"
"    if a[k] == nil then return false end\n"
"  end\n"
"  return true\n"
"end\n"
"local function fail(what, msg)\n"
"  if msg ~= nil then what = tostring(msg) .. ': ' .. what end\n"
"  error(what, 3)\n"
"end\n"
"function assert_true(v, msg)\n"
"  if v ~= true then fail('expected true, got ' .. repr(v), msg) end\n"
"end\n"
"function assert_false(v, msg)\n"
"  if v ~= false and v ~= nil then\n"
"    fail('expected false or nil, got ' .. repr(v), msg)\n"
"  end\n"
"end\n"
"function assert_eq(actual, expected, msg)\n"
"  if not deep_eq(actual, expected, 0) then\n"
"    fail('expected ' .. repr(expected) .. ', got ' .. repr(actual), msg)\n"
"  end\n"
"end\n"
"function assert_near(a, b, eps, msg)\n"
"  eps = eps or 1e-9\n"
"  if type(a) ~= 'number' or type(b) ~= 'number' or\n"
"     math.abs(a - b) > eps then\n"
"    fail('expected ' .. repr(b) .. ' (+/- ' .. eps .. '), got ' ..\n"
"         repr(a), msg)\n"
"  end\n"
"end\n"
"function assert_match(s, pattern, msg)\n"
"  if type(s) ~= 'string' or not s:find(pattern) then\n"
"    fail('expected a string matching ' .. repr(pattern) .. ', got ' ..\n"
"         repr(s), msg)\n"
"  end\n"
"end\n"
"function assert_error(fn, text, msg)\n"
"  local ok, err = pcall(fn)\n"
"  if ok then fail('expected an error, got none', msg) end\n"
"  err = type(err) == 'string' and err or repr(err)\n"
"  if text ~= nil and not err:find(text, 1, true) then\n"
"    fail('expected an error containing ' .. repr(text) .. ', got ' ..\n"
"         repr(err), msg)\n"
"  end\n"
"  return err\n"
"end\n",
"local offer_defaults = {\n"
"  cloud = 'aws', region = 'us-east-1', zone = 'us-east-1a',\n"
"  instance_type = 'p5.48xlarge', gpu_model = 'H100', gpu_count = 8,\n"
"  gpu_memory_gb = 80, vcpus = 192, ram_gb = 2048,\n"
"  capacity = 'on-demand', price = 98.32, source = 'test', fetched_at = 0,\n"
"}\n"
"local offer_extra = {tags = true, bench = true, price_per_gpu_hour = true}\n"
"function offer(t)\n"
"  local o = {}\n"
"  for k, v in pairs(offer_defaults) do o[k] = v end\n"
"  for k, v in pairs(t or {}) do\n"
"    if offer_defaults[k] == nil and not offer_extra[k] then\n"
"      error('offer{}: unknown field ' .. repr(k), 2)\n"
"    end\n"
"    o[k] = v\n"
"  end\n"
"  if o.price_per_gpu_hour == nil then\n"
"    o.price_per_gpu_hour = o.gpu_count > 0 and o.price / o.gpu_count\n"
"                           or o.price\n"
"  end\n"
"  if o.tags == nil then o.tags = {} end\n"
"  return readonly(o, 'offer')\n"
"end\n"
"local req_keys = {name = 1, team = 1, purpose = 1, count = 1, min = 1,\n"
"  max = 1, gpu = 1, capacity = 1, clouds = 1, regions = 1, colocate = 1,\n"
"  data_region = 1, compliance = 1, max_price_per_hour = 1, ttl = 1,\n"
"  idle_timeout = 1, labels = 1, policies = 1}\n"
"function request(t)\n"
"  t = t or {}\n"
"  local purpose = t.purpose or 'training'\n"
"  local r = {name = 'test', purpose = purpose, count = 1,\n"
"    colocate = 'none', clouds = {}, regions = {'*'}, compliance = {},\n"
"    labels = {}, policies = {}}\n"
"  r.capacity = purpose == 'inference' and {'on-demand'}\n"
"               or {'spot', 'on-demand'}\n"
"  for k, v in pairs(t) do\n"
"    if not req_keys[k] then\n"
"      error('request{}: unknown field ' .. repr(k), 2)\n"
"    end\n"
"    if k ~= 'gpu' and k ~= 'team' then r[k] = v end\n"
"  end\n"
"  r.min = t.min or r.count\n"
"  r.max = t.max or r.count\n"
"  local gpu = {models = {'H100'}, count = 1, memory_gb = 0}\n"
"  for k, v in pairs(t.gpu or {}) do gpu[k] = v end\n"
"  r.gpu = gpu\n"
"  local team = {name = 'default'}\n"
"  if type(t.team) == 'string' then team.name = t.team\n"
"  else for k, v in pairs(t.team or {}) do team[k] = v end end\n"
"  r.team = team\n"
"  return readonly(r, 'req')\n"
"end\n",
NULL,
};

static const char *prelude_reader(lua_State *L, void *ud, size_t *size)
{
	size_t *i = ud;
	(void)L;
	if (!prelude[*i]) {
		*size = 0;
		return NULL;
	}
	*size = strlen(prelude[*i]);
	return prelude[(*i)++];
}

/* Makes the table field key of the strict proxy on top strict too. */
static void strict_nested(lua_State *L, const char *key, const char *what,
                          const char *const *names, size_t n)
{
	if (lua_getfield(L, -1, key) == LUA_TTABLE)
		gb_obj_strict(L, what, names, n);
	lua_pop(L, 1);
}

static int l_readonly(lua_State *L)
{
	const char *what = luaL_optstring(L, 2, "table");
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 2);
	lua_pushvalue(L, 1);
	gb_sb_readonly_deep(L, what);
	/* test objects read like real ones: a field they cannot have is
	 * an error */
	if (strcmp(what, "offer") == 0)
		gb_obj_strict(L, "offer", gb_offer_field_names, GB_OF_COUNT);
	else if (strcmp(what, "req") == 0) {
		gb_obj_strict(L, "req", gb_req_field_names, GB_REQ_FIELDS);
		strict_nested(L, "gpu", "req.gpu", gb_req_gpu_field_names,
		              GB_REQ_GPU_FIELDS);
		strict_nested(L, "team", "req.team", gb_req_team_field_names,
		              GB_REQ_TEAM_FIELDS);
	}
	return 1;
}

struct src_copy {
	const char *src;
	size_t len;
	const char *path;
};

static int push_src(lua_State *L)
{
	struct src_copy *sc = lua_touserdata(L, 1);
	lua_pushlstring(L, sc->src, sc->len);
	lua_pushstring(L, sc->path);
	return 2;
}

/* load_policy(name): the table <test dir>/<name>.lua returns.  Runs in
 * the calling test's budget. */
static int l_load_policy(lua_State *L)
{
	gb_sandbox *sb = gb_sb_get(L);
	const char *name = luaL_checkstring(L, 1);
	gb_strv dirs = {0};
	char err[512], *path, *src;
	size_t len;
	int has;

	gb_strv_push(&dirs, sb->test_dir);
	path = gb_policy_resolve(name, &dirs, err, sizeof(err));
	gb_strv_free(&dirs);
	if (!path)
		return luaL_error(L, "load_policy: %s", err);
	if (gb_read_file(path, GB_POLICY_MAX_SOURCE, &src, &len) != 0) {
		lua_pushfstring(L, "load_policy: cannot read %s: %s", path,
		                strerror(errno));
		free(path);
		return lua_error(L);
	}
	/* Copy into Lua-owned memory (protected, so a memory error cannot
	 * leak the C copies). */
	{
		struct src_copy sc = {src, len, path};
		int st;
		lua_pushcfunction(L, push_src);
		lua_pushlightuserdata(L, &sc);
		st = lua_pcall(L, 1, 2, 0);
		free(src);
		free(path);
		if (st != LUA_OK)
			return lua_error(L);
	}
	gb_sb_new_env(L);
	{
		size_t n;
		const char *s = lua_tolstring(L, -3, &n);
		gb_sb_run_chunk(sb, s, n, lua_tostring(L, -2), -1);
	}
	if (lua_type(L, -1) == LUA_TTABLE && lua_getmetatable(L, -1))
		return luaL_error(L, "load_policy('%s'): the returned table "
		                     "must not have a metatable", name);
	gb_policy_check_shape(L, &has);
	return 1;
}

/* sample_offers(): a new list of the sample offers (policy_sample.c),
 * the same objects a plan hands policies. */
static int l_sample_offers(lua_State *L)
{
	size_t n;
	const gb_coffer *const *v = gb_policy_sample_offers(&n);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		gb_obj_push_offer(L, v[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* ------------------------------------------------------------------ */

typedef struct file_ctx {
	gb_sandbox *sb;
	const char *path;
	char *src;
	size_t len;
	gb_strv tests; /* names found */
	const char *test; /* the one to run */
} file_ctx;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Registry slot of the test file's environment. */
static char k_env;

static int file_setup(lua_State *L)
{
	file_ctx *c = lua_touserdata(L, 1);
	size_t part = 0;
	int env;
	gb_sb_new_env(L);
	env = lua_gettop(L);
	lua_pushcfunction(L, l_load_policy);
	lua_setfield(L, env, "load_policy");
	lua_pushcfunction(L, l_sample_offers);
	lua_setfield(L, env, "sample_offers");
	lua_pushvalue(L, env);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &k_env);

	if (lua_load(L, prelude_reader, &part, "=(test helpers)", "t") !=
	    LUA_OK)
		return lua_error(L);
	lua_pushvalue(L, env);
	lua_setupvalue(L, -2, 1);
	lua_pushcfunction(L, l_readonly);
	lua_call(L, 1, 0);

	gb_sb_run_chunk(c->sb, c->src, c->len, c->path, env);
	lua_pop(L, 1);
	lua_pushnil(L);
	while (lua_next(L, env)) {
		if (lua_type(L, -2) == LUA_TSTRING &&
		    lua_type(L, -1) == LUA_TFUNCTION &&
		    strncmp(lua_tostring(L, -2), "test_", 5) == 0)
			gb_strv_push(&c->tests, lua_tostring(L, -2));
		lua_pop(L, 1);
	}
	if (c->tests.n)
		qsort(c->tests.v, c->tests.n, sizeof(char *), cmp_str);
	return 0;
}

static int run_test(lua_State *L)
{
	file_ctx *c = lua_touserdata(L, 1);
	lua_rawgetp(L, LUA_REGISTRYINDEX, &k_env);
	lua_getfield(L, -1, c->test);
	gb_sb_call(c->sb, 0, 0);
	return 0;
}

static gb_policy_test_case *add_case(gb_policy_test_report *r,
                                     const char *file, const char *name)
{
	gb_policy_test_case *tc;
	r->cases = gb_xrealloc(r->cases, (r->n + 1) * sizeof(*r->cases));
	tc = &r->cases[r->n++];
	memset(tc, 0, sizeof(*tc));
	tc->file = gb_xstrdup(file);
	tc->name = gb_xstrdup(name);
	return tc;
}

static void fail_case(gb_policy_test_report *r, gb_policy_test_case *tc,
                      const char *msg)
{
	tc->passed = 0;
	tc->message = gb_xstrdup(msg);
	r->failed++;
}

static void take_logs(gb_sandbox *sb, gb_policy_test_case *tc)
{
	tc->logs = sb->logs;
	memset(&sb->logs, 0, sizeof(sb->logs));
	if (sb->logs_dropped)
		gb_strv_push_take(&tc->logs,
		                  gb_xasprintf("(%zu more gb.log messages "
		                               "dropped)", sb->logs_dropped));
	sb->logs_dropped = 0;
}

static void run_file(const char *dir, const char *file, const char *filter,
                     const gb_policy_limits *lim, gb_policy_test_report *r)
{
	gb_sandbox sb;
	file_ctx c;
	char err[1024];
	char *path = gb_xasprintf("%s/%s", dir, file);

	memset(&c, 0, sizeof(c));
	c.sb = &sb;
	c.path = path;
	if (gb_read_file(path, GB_POLICY_MAX_SOURCE, &c.src, &c.len) != 0) {
		snprintf(err, sizeof(err), "%s: cannot read: %s", path,
		         strerror(errno));
		fail_case(r, add_case(r, file, "(load)"), err);
		free(path);
		return;
	}
	if (gb_sb_open(&sb, lim, err, sizeof(err)) != 0) {
		fail_case(r, add_case(r, file, "(load)"), err);
		free(c.src);
		free(path);
		return;
	}
	sb.test_dir = dir;
	sb.log_tag = file;
	if (gb_sb_pcall(&sb, file_setup, &c, err, sizeof(err)) != LUA_OK) {
		fail_case(r, add_case(r, file, "(load)"), err);
	} else if (c.tests.n == 0) {
		fail_case(r, add_case(r, file, "(load)"),
		          "no test_* functions defined");
	}
	gb_strv_free(&sb.logs);
	sb.logs_dropped = 0;
	for (size_t i = 0; i < c.tests.n; i++) {
		gb_policy_test_case *tc;
		int64_t t0;
		if (filter && !gb_glob(filter, c.tests.v[i]))
			continue;
		tc = add_case(r, file, c.tests.v[i]);
		c.test = c.tests.v[i];
		sb.log_tag = c.test;
		t0 = gb_mono_ns();
		if (gb_sb_pcall(&sb, run_test, &c, err, sizeof(err)) !=
		    LUA_OK) {
			fail_case(r, tc, err);
		} else {
			tc->passed = 1;
			r->passed++;
		}
		tc->ms = (double)(gb_mono_ns() - t0) / 1e6;
		take_logs(&sb, tc);
	}
	gb_sb_close(&sb);
	gb_strv_free(&c.tests);
	free(c.src);
	free(path);
}

int gb_policy_test_dir(const char *dir, const char *filter,
                       const gb_policy_limits *lim,
                       gb_policy_test_report *out, char *err, size_t errcap)
{
	DIR *d;
	struct dirent *e;
	gb_strv files = {0};

	memset(out, 0, sizeof(*out));
	d = opendir(dir);
	if (!d) {
		snprintf(err, errcap, "cannot read policy directory %s: %s", dir,
		         strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n > 9 && e->d_name[0] != '.' &&
		    strcmp(e->d_name + n - 9, "_test.lua") == 0)
			gb_strv_push(&files, e->d_name);
	}
	closedir(d);
	if (files.n == 0) {
		snprintf(err, errcap, "no *_test.lua files in %s", dir);
		return -1;
	}
	qsort(files.v, files.n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < files.n; i++)
		run_file(dir, files.v[i], filter, lim, out);
	gb_strv_free(&files);
	return 0;
}

void gb_policy_test_report_free(gb_policy_test_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->cases[i].file);
		free(r->cases[i].name);
		free(r->cases[i].message);
		gb_strv_free(&r->cases[i].logs);
	}
	free(r->cases);
	memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------------------------ */
/* check */

typedef struct check_ctx {
	gb_sandbox *sb;
	const char *path;
	char *src;
	size_t len;
	int has;
} check_ctx;

static int check_policy(lua_State *L)
{
	check_ctx *c = lua_touserdata(L, 1);
	gb_sb_new_env(L);
	gb_sb_run_chunk(c->sb, c->src, c->len, c->path, -1);
	if (lua_type(L, -1) == LUA_TTABLE && lua_getmetatable(L, -1))
		return luaL_error(L, "the returned table must not have a "
		                     "metatable");
	gb_policy_check_shape(L, &c->has);
	return 0;
}

int gb_policy_check_file(const char *path, const gb_policy_limits *lim,
                         int *has, char *err, size_t errcap)
{
	size_t n = strlen(path);
	int is_test = n > 9 && strcmp(path + n - 9, "_test.lua") == 0;
	gb_sandbox sb;
	char msg[1024];
	int rc = 0;

	*has = 0;
	if (is_test) {
		file_ctx c;
		char *dir = gb_xstrdup(path), *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			strcpy(dir, ".");
		memset(&c, 0, sizeof(c));
		c.sb = &sb;
		c.path = path;
		if (gb_read_file(path, GB_POLICY_MAX_SOURCE, &c.src, &c.len)) {
			snprintf(err, errcap, "%s: cannot read: %s", path,
			         errno == EFBIG ? "larger than 1 MiB"
			                        : strerror(errno));
			free(dir);
			return -1;
		}
		if (gb_sb_open(&sb, lim, msg,
		               sizeof(msg)) != 0) {
			snprintf(err, errcap, "%s: %s", path, msg);
			free(c.src);
			free(dir);
			return -1;
		}
		sb.test_dir = dir;
		if (gb_sb_pcall(&sb, file_setup, &c, msg, sizeof(msg)) !=
		    LUA_OK)
			rc = -1;
		else if (c.tests.n == 0)
			rc = -1, snprintf(msg, sizeof(msg),
			                  "no test_* functions defined");
		*has = (int)c.tests.n;
		gb_sb_close(&sb);
		gb_strv_free(&c.tests);
		free(c.src);
		free(dir);
	} else {
		check_ctx c;
		memset(&c, 0, sizeof(c));
		c.sb = &sb;
		c.path = path;
		if (gb_read_file(path, GB_POLICY_MAX_SOURCE, &c.src, &c.len)) {
			snprintf(err, errcap, "%s: cannot read: %s", path,
			         errno == EFBIG ? "larger than 1 MiB"
			                        : strerror(errno));
			return -1;
		}
		if (gb_sb_open(&sb, lim, msg,
		               sizeof(msg)) != 0) {
			snprintf(err, errcap, "%s: %s", path, msg);
			free(c.src);
			return -1;
		}
		sb.log_tag = path;
		if (gb_sb_pcall(&sb, check_policy, &c, msg, sizeof(msg)) !=
		    LUA_OK)
			rc = -1;
		*has = c.has;
		gb_sb_close(&sb);
		free(c.src);
	}
	if (rc != 0) {
		if (strncmp(msg, path, n) == 0 && msg[n] == ':')
			snprintf(err, errcap, "%s", msg);
		else
			snprintf(err, errcap, "%s: %s", path, msg);
	}
	return rc;
}
