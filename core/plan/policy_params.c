/*
 * policy_params.c -- the parameters a policy declares (policy.h,
 * parameters): reading the `params` table of a policy file, and checking
 * and converting the text of a pool's args against it.
 */
#include "policy_int.h"

#include <errno.h>
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const types[] = {"number", "integer", "string",
                                    "boolean", NULL};
static const char *const decl_keys[] = {"type", "default", "doc", NULL};

static int valid_param_name(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 64 || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_'))
			return 0;
	return 1;
}

/* Does the Lua value at idx have the declared type? */
static int lua_is_type(lua_State *L, int idx, const char *type)
{
	if (strcmp(type, "number") == 0)
		return lua_type(L, idx) == LUA_TNUMBER;
	if (strcmp(type, "integer") == 0)
		return lua_isinteger(L, idx);
	if (strcmp(type, "string") == 0)
		return lua_type(L, idx) == LUA_TSTRING;
	return lua_type(L, idx) == LUA_TBOOLEAN;
}

static int cmp_param(const void *a, const void *b)
{
	return strcmp(((const gb_policy_param *)a)->name,
	              ((const gb_policy_param *)b)->name);
}

/* One declaration: the value at -1 for name; appends to *out. */
static void read_one(lua_State *L, const char *name, gb_policy_param **out,
                     size_t *n)
{
	int d = lua_absindex(L, -1);
	gb_policy_param *p;
	const char *type = NULL;
	if (lua_type(L, d) != LUA_TTABLE)
		luaL_error(L, "params.%s must be a table such as {type = "
		           "\"number\", default = 1, doc = \"...\"}, got %s",
		           name, luaL_typename(L, d));
	lua_pushnil(L);
	while (lua_next(L, d)) {
		const char *k = lua_type(L, -2) == LUA_TSTRING
		                        ? lua_tostring(L, -2) : "?";
		int known = 0;
		for (size_t i = 0; decl_keys[i]; i++)
			known |= strcmp(k, decl_keys[i]) == 0;
		if (!known) {
			const char *near = gb_nearest(k, decl_keys);
			luaL_error(L, "params.%s has '%s'%s%s%s (a parameter has "
			           "type, default and doc)", name, k,
			           near ? "; did you mean '" : "",
			           near ? near : "", near ? "'?" : "");
		}
		lua_pop(L, 1);
	}
	lua_pushliteral(L, "type");
	if (lua_rawget(L, d) == LUA_TSTRING)
		for (size_t i = 0; types[i]; i++)
			if (strcmp(lua_tostring(L, -1), types[i]) == 0)
				type = types[i];
	if (!type)
		luaL_error(L, "params.%s.type must be number, integer, string "
		           "or boolean", name);
	lua_pop(L, 1);
	*out = gb_xrealloc(*out, (*n + 1) * sizeof(**out));
	p = &(*out)[(*n)++];
	memset(p, 0, sizeof(*p));
	p->name = gb_xstrdup(name);
	p->type = type;
	lua_pushliteral(L, "doc");
	if (lua_rawget(L, d) == LUA_TSTRING)
		p->doc = gb_xstrdup(lua_tostring(L, -1));
	else if (!lua_isnil(L, -1))
		luaL_error(L, "params.%s.doc must be a string", name);
	lua_pop(L, 1);
	lua_pushliteral(L, "default");
	if (lua_rawget(L, d) != LUA_TNIL) {
		if (!lua_is_type(L, -1, type))
			luaL_error(L, "params.%s.default must be a%s %s, got %s",
			           name, type[0] == 'i' ? "n" : "", type,
			           lua_isinteger(L, -1) ? "an integer"
			                                : luaL_typename(L, -1));
		p->def = gb_xstrdup(luaL_tolstring(L, -1, NULL));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

void gb_params_read(lua_State *L, int t, gb_policy_param **out, size_t *n)
{
	int pt, defs;
	t = lua_absindex(L, t);
	luaL_checkstack(L, 8, "params");
	lua_newtable(L);
	defs = lua_gettop(L);
	lua_pushliteral(L, "params");
	pt = lua_rawget(L, t);
	if (pt == LUA_TNIL) {
		lua_pop(L, 1);
		return;
	}
	if (pt != LUA_TTABLE)
		luaL_error(L, "params must be a table of parameter "
		           "declarations, got %s", lua_typename(L, pt));
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		const char *name;
		if (lua_type(L, -2) != LUA_TSTRING ||
		    !valid_param_name(lua_tostring(L, -2)))
			luaL_error(L, "params: each key must be a parameter name "
			           "(lowercase letters, digits and '_'), got %s",
			           lua_type(L, -2) == LUA_TSTRING
			                   ? lua_tostring(L, -2)
			                   : luaL_typename(L, -2));
		name = lua_tostring(L, -2);
		read_one(L, name, out, n);
		lua_pushliteral(L, "default");
		lua_rawget(L, -2);
		lua_setfield(L, defs, name);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), cmp_param);
}

void gb_params_free(gb_policy_param *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].name);
		free(p[i].def);
		free(p[i].doc);
	}
	free(p);
}

const gb_policy_param *gb_param_find(const gb_policy_param *p, size_t n,
                                     const char *policy, const char *key,
                                     char *msg, size_t cap)
{
	const char *names[65];
	const char *near;
	gb_buf list = GB_BUF_INIT;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(p[i].name, key) == 0)
			return &p[i];
	for (size_t i = 0; i < n && k < 64; i++)
		names[k++] = p[i].name;
	names[k] = NULL;
	near = gb_nearest(key, names);
	for (size_t i = 0; i < n; i++)
		gb_buf_printf(&list, "%s%s (%s)", i ? ", " : "", p[i].name,
		              p[i].type);
	if (!n)
		snprintf(msg, cap, "policy '%s' declares no parameters, so it "
		         "takes no argument '%s' (list it by name only)", policy,
		         key);
	else if (near)
		snprintf(msg, cap, "policy '%s' has no parameter '%s'; did you "
		         "mean '%s'? (parameters: %s)", policy, key, near,
		         gb_buf_str(&list));
	else
		snprintf(msg, cap, "policy '%s' has no parameter '%s' "
		         "(parameters: %s)", policy, key, gb_buf_str(&list));
	gb_buf_free(&list);
	return NULL;
}

int gb_param_parse(const gb_policy_param *p, const char *policy,
                   const char *text, gb_param_value *v, char *msg,
                   size_t cap)
{
	char *end;
	memset(v, 0, sizeof(*v));
	errno = 0;
	if (strcmp(p->type, "string") == 0) {
		v->s = text;
		return 0;
	}
	if (strcmp(p->type, "boolean") == 0) {
		if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0) {
			v->b = text[0] == 't';
			return 0;
		}
	} else if (strcmp(p->type, "integer") == 0) {
		long long x = strtoll(text, &end, 10);
		if (*text && !*end && errno == 0) {
			v->i = x;
			return 0;
		}
	} else {
		double x = strtod(text, &end);
		if (*text && !*end && errno == 0 && isfinite(x)) {
			v->d = x;
			return 0;
		}
	}
	snprintf(msg, cap, "policy '%s' parameter '%s' is %s %s, got \"%.60s\"",
	         policy, p->name, p->type[0] == 'i' ? "an" : "a", p->type,
	         text);
	return -1;
}

void gb_param_push(lua_State *L, const gb_policy_param *p,
                   const gb_param_value *v)
{
	switch (p->type[0]) {
	case 's': lua_pushstring(L, v->s); break;
	case 'b': lua_pushboolean(L, v->b); break;
	case 'i': lua_pushinteger(L, (lua_Integer)v->i); break;
	default: lua_pushnumber(L, v->d);
	}
}
