/*
 * policy_objects.c -- what policies see: offers (light userdata read
 * through one shared metatable, so passing 100,000 of them costs no
 * allocation), the read-only req table, region tables and the gb.*
 * helpers.
 *
 * Field lookups on an offer compare the key's pointer with the interned
 * field names (Lua interns short strings, so equal names share one
 * pointer).  Derived values that are tables (tags, bench, regions) are
 * built once per sandbox and cached in registry tables.
 */
#include "policy_int.h"

#include <jansson.h>
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "regions.h"

/* The field names of offer and req, from policy_fields.h. */
const char *const gb_offer_field_names[GB_OF_COUNT] = {
	GB_POLICY_OFFER_FIELDS(GB_POLICY_FIELD_NAME)};
const char *const gb_req_field_names[GB_REQ_FIELDS] = {
	GB_POLICY_REQ_FIELDS(GB_POLICY_FIELD_NAME)};
const char *const gb_req_gpu_field_names[GB_REQ_GPU_FIELDS] = {
	GB_POLICY_REQ_GPU_FIELDS(GB_POLICY_FIELD_NAME)};
const char *const gb_req_team_field_names[GB_REQ_TEAM_FIELDS] = {
	GB_POLICY_REQ_TEAM_FIELDS(GB_POLICY_FIELD_NAME)};
const char *const gb_region_field_names[GB_REGION_FIELDS] = {
	GB_POLICY_REGION_FIELDS(GB_POLICY_FIELD_NAME)};

const gb_policy_field *gb_policy_fields(size_t *n)
{
	static const gb_policy_field all[] = {
		GB_POLICY_OFFER_FIELDS(GB_POLICY_FIELD_ROW)
		GB_POLICY_BENCH_FIELDS(GB_POLICY_FIELD_ROW)
		GB_POLICY_REQ_FIELDS(GB_POLICY_FIELD_ROW)
		GB_POLICY_REQ_GPU_FIELDS(GB_POLICY_FIELD_ROW)
		GB_POLICY_REQ_TEAM_FIELDS(GB_POLICY_FIELD_ROW)
		GB_POLICY_REGION_FIELDS(GB_POLICY_FIELD_ROW)
	};
	*n = GB_ARRAY_LEN(all);
	return all;
}

static char k_fields, k_tags, k_bench, k_empty;

/* ------------------------------------------------------------------ */
/* small builders */

static void set_str(lua_State *L, const char *k, const char *v)
{
	if (!v)
		return;
	lua_pushstring(L, v);
	lua_setfield(L, -2, k);
}

static void set_num(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

static void set_int(lua_State *L, const char *k, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, k);
}

static void push_empty_list(lua_State *L)
{
	lua_rawgetp(L, LUA_REGISTRYINDEX, &k_empty);
}

/* A read-only list from a comma-separated string ("a, b,c"). */
static void push_csv_list(lua_State *L, const char *s, const char *what)
{
	int n = 0;
	lua_newtable(L);
	while (s && *s) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		const char *a = s, *b = s + len;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b > a) {
			lua_pushlstring(L, a, (size_t)(b - a));
			lua_rawseti(L, -2, ++n);
		}
		s = e ? e + 1 : NULL;
	}
	gb_sb_readonly(L, what);
}

static void push_strv(lua_State *L, const gb_strv *sv, const char *what)
{
	lua_createtable(L, (int)sv->n, 0);
	for (size_t i = 0; i < sv->n; i++) {
		lua_pushstring(L, sv->v[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	gb_sb_readonly(L, what);
}

/* Cached read-only list for an offer's tags string. */
static void push_tags(lua_State *L, const char *tags)
{
	if (!tags || !*tags) {
		push_empty_list(L);
		return;
	}
	lua_rawgetp(L, LUA_REGISTRYINDEX, &k_tags);
	if (lua_getfield(L, -1, tags) == LUA_TNIL) {
		lua_pop(L, 1);
		push_csv_list(L, tags, "offer.tags");
		lua_pushvalue(L, -1);
		lua_setfield(L, -3, tags);
	}
	lua_remove(L, -2);
}

/* ------------------------------------------------------------------ */
/* bench: the probe's JSON as read-only tables, parsed once per text */

static void push_json(lua_State *L, json_t *v, int depth)
{
	luaL_checkstack(L, 4, "bench");
	if (depth > 32) {
		lua_pushnil(L);
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *x;
		lua_createtable(L, 0, (int)json_object_size(v));
		json_object_foreach(v, k, x) {
			if (json_is_null(x))
				continue;
			push_json(L, x, depth + 1);
			lua_setfield(L, -2, k);
		}
		break;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *x;
		lua_createtable(L, (int)json_array_size(v), 0);
		json_array_foreach(v, i, x) {
			push_json(L, x, depth + 1);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		break;
	}
	case JSON_STRING:
		lua_pushlstring(L, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		lua_pushinteger(L, (lua_Integer)json_integer_value(v));
		break;
	case JSON_REAL:
		lua_pushnumber(L, json_real_value(v));
		break;
	case JSON_TRUE:
		lua_pushboolean(L, 1);
		break;
	case JSON_FALSE:
		lua_pushboolean(L, 0);
		break;
	default:
		lua_pushnil(L);
	}
}

/* jansson allocates outside Lua: build the Lua side in a protected call
 * so an error (memory) cannot leak the parsed document. */
static int bench_build(lua_State *L)
{
	json_t *doc = lua_touserdata(L, 1);
	push_json(L, doc, 0);
	gb_sb_readonly_deep(L, "offer.bench");
	return 1;
}

static void push_bench(lua_State *L, const char *text)
{
	json_t *doc;
	int st;
	if (!text) {
		lua_pushnil(L);
		return;
	}
	lua_rawgetp(L, LUA_REGISTRYINDEX, &k_bench);
	if (lua_getfield(L, -1, text) != LUA_TNIL) {
		lua_remove(L, -2);
		if (!lua_toboolean(L, -1)) {
			lua_pop(L, 1);
			lua_pushnil(L);
		}
		return;
	}
	lua_pop(L, 1);
	doc = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	if (!doc || !json_is_object(doc)) {
		json_decref(doc);
		lua_pushboolean(L, 0); /* malformed: remember, read as nil */
		lua_setfield(L, -2, text);
		lua_pop(L, 1);
		lua_pushnil(L);
		return;
	}
	lua_pushcfunction(L, bench_build);
	lua_pushlightuserdata(L, doc);
	st = lua_pcall(L, 1, 1, 0);
	json_decref(doc);
	if (st != LUA_OK)
		lua_error(L);
	lua_pushvalue(L, -1);
	lua_setfield(L, -3, text);
	lua_remove(L, -2);
}

/* ------------------------------------------------------------------ */
/* offers */

static int push_field(lua_State *L, const gb_coffer *o, int f)
{
	switch (f) {
	case GB_OF_cloud: lua_pushstring(L, o->cloud); break;
	case GB_OF_region: lua_pushstring(L, o->region); break;
	case GB_OF_zone: lua_pushstring(L, o->zone ? o->zone : ""); break;
	case GB_OF_instance_type: lua_pushstring(L, o->instance_type); break;
	case GB_OF_gpu_model: lua_pushstring(L, o->gpu_model); break;
	case GB_OF_gpu_count: lua_pushinteger(L, o->gpu_count); break;
	case GB_OF_gpu_memory_gb: lua_pushinteger(L, o->gpu_memory_gb); break;
	case GB_OF_vcpus: lua_pushinteger(L, o->vcpus); break;
	case GB_OF_ram_gb: lua_pushnumber(L, o->ram_gb); break;
	case GB_OF_capacity:
		lua_pushstring(L, gb_capacity_name(o->capacity));
		break;
	case GB_OF_price: lua_pushnumber(L, o->price); break;
	case GB_OF_price_per_gpu_hour:
		lua_pushnumber(L, o->gpu_count > 0 ? o->price / o->gpu_count
		                                   : o->price);
		break;
	case GB_OF_source: lua_pushstring(L, o->source); break;
	case GB_OF_fetched_at: lua_pushinteger(L, o->fetched_at); break;
	case GB_OF_tags: push_tags(L, o->tags); break;
	case GB_OF_bench: push_bench(L, o->bench_json); break;
	default: lua_pushnil(L);
	}
	return 1;
}

/* Reading a field an object does not have is a mistake (a typo such as
 * offer.gpu_modle would otherwise be nil, and the rule would silently
 * refuse or accept everything): an error naming it, with the nearest
 * field and the list. */
int gb_obj_unknown_field(lua_State *L, const char *obj, const char *k,
                         const char *const *names, size_t n)
{
	const char *list[64];
	const char *near;
	luaL_Buffer b;
	if (n > GB_ARRAY_LEN(list) - 1)
		n = GB_ARRAY_LEN(list) - 1;
	for (size_t i = 0; i < n; i++)
		list[i] = names[i];
	list[n] = NULL;
	near = gb_nearest(k, list);
	luaL_buffinit(L, &b);
	for (size_t i = 0; i < n; i++) {
		if (i)
			luaL_addstring(&b, ", ");
		luaL_addstring(&b, list[i]);
	}
	luaL_pushresult(&b);
	if (near)
		return luaL_error(L, "%s has no field '%s'; did you mean '%s'? "
		                  "(fields: %s)", obj, k, near,
		                  lua_tostring(L, -1));
	return luaL_error(L, "%s has no field '%s' (fields: %s)", obj, k,
	                  lua_tostring(L, -1));
}

/* __index of a strict proxy: upvalues table, names, count, what. */
static int strict_index(lua_State *L)
{
	const char *const *names = lua_touserdata(L, lua_upvalueindex(2));
	size_t n = (size_t)lua_tointeger(L, lua_upvalueindex(3));
	const char *k;
	lua_pushvalue(L, 2);
	if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
		return 1;
	if (lua_type(L, 2) != LUA_TSTRING)
		return 1; /* nil */
	k = lua_tostring(L, 2);
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], k) == 0)
			return 1; /* a field this one leaves out: nil */
	return gb_obj_unknown_field(L, lua_tostring(L, lua_upvalueindex(4)), k,
	                            names, n);
}

void gb_obj_strict(lua_State *L, const char *what, const char *const *names,
                   size_t n)
{
	luaL_checkstack(L, 6, "strict proxy");
	if (!lua_getmetatable(L, -1))
		return;
	lua_getfield(L, -1, "__index"); /* the proxied table */
	lua_pushlightuserdata(L, (void *)(uintptr_t)names);
	lua_pushinteger(L, (lua_Integer)n);
	lua_pushstring(L, what);
	lua_pushcclosure(L, strict_index, 4);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
}

static int offer_index(lua_State *L)
{
	const gb_coffer *o = lua_touserdata(L, 1);
	const char *k;
	const char *const *fields;
	if (!o || lua_type(L, 2) != LUA_TSTRING)
		return 0;
	k = lua_tostring(L, 2);
	fields = gb_sb_get(L)->fields;
	for (int i = 0; i < GB_OF_COUNT; i++)
		if (fields[i] == k)
			return push_field(L, o, i);
	return gb_obj_unknown_field(L, "offer", k, gb_offer_field_names,
	                            GB_OF_COUNT);
}

static int offer_newindex(lua_State *L)
{
	const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2)
	                                              : "?";
	return luaL_error(L, "offer is read-only (cannot set '%s')", k);
}

static int offer_next(lua_State *L)
{
	const gb_coffer *o = lua_touserdata(L, 1);
	gb_sandbox *sb = gb_sb_get(L);
	int i = 0;
	if (!lua_isnil(L, 2)) {
		const char *k = lua_type(L, 2) == LUA_TSTRING
		                        ? lua_tostring(L, 2) : NULL;
		while (i < GB_OF_COUNT && sb->fields[i] != k)
			i++;
		if (i == GB_OF_COUNT)
			return luaL_error(L, "invalid key to 'next'");
		i++;
	}
	if (i == GB_OF_bench && (!o || !o->bench_json))
		i++;
	if (i >= GB_OF_COUNT || !o)
		return 0;
	lua_pushstring(L, gb_offer_field_names[i]);
	push_field(L, o, i);
	return 2;
}

static int offer_pairs(lua_State *L)
{
	lua_pushcfunction(L, offer_next);
	lua_pushvalue(L, 1);
	lua_pushnil(L);
	return 3;
}

void gb_obj_offer_label(const gb_coffer *o, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%s/%s/%s", o->cloud ? o->cloud : "?",
	         o->region ? o->region : "?",
	         o->instance_type ? o->instance_type : "?",
	         gb_capacity_name(o->capacity));
}

static int offer_tostring(lua_State *L)
{
	const gb_coffer *o = lua_touserdata(L, 1);
	char buf[256];
	if (!o) {
		lua_pushliteral(L, "offer");
		return 1;
	}
	gb_obj_offer_label(o, buf, sizeof(buf));
	lua_pushfstring(L, "offer %s", buf);
	return 1;
}

void gb_obj_push_offer(lua_State *L, const gb_coffer *o)
{
	union {
		const gb_coffer *c;
		void *p;
	} u;
	u.c = o;
	lua_pushlightuserdata(L, u.p);
}

/* ------------------------------------------------------------------ */
/* regions */

static void push_region(lua_State *L, const gb_region_info *r)
{
	lua_createtable(L, 0, 11);
	set_str(L, "cloud", r->cloud);
	set_str(L, "name", r->name);
	set_str(L, "display", r->display);
	set_str(L, "country", r->country);
	set_str(L, "jurisdiction", r->jurisdiction);
	set_num(L, "lat", r->lat);
	set_num(L, "lon", r->lon);
	push_csv_list(L, r->tags, "region.tags");
	lua_setfield(L, -2, "tags");
	set_num(L, "carbon", r->carbon_g_per_kwh);
	set_str(L, "carbon_source", r->carbon_source);
	gb_sb_readonly(L, "region");
	/* r.carbonn is a mistake, not nil (policy_fields.h) */
	gb_obj_strict(L, "region", gb_region_field_names, GB_REGION_FIELDS);
}

/* The one table of region r (upvalue 2: region info pointer -> table). */
static void push_region_cached(lua_State *L, const gb_region_info *r)
{
	if (lua_rawgetp(L, lua_upvalueindex(2), r) != LUA_TNIL)
		return;
	lua_pop(L, 1);
	push_region(L, r);
	lua_pushvalue(L, -1);
	lua_rawsetp(L, lua_upvalueindex(2), r);
}

/* gb.region(name[, cloud]) or gb.region(offer) -> read-only region table
 * or nil.  An offer from the catalog already knows its region: no string
 * lookups at all.  Upvalue 1: cloud (or true for any) -> {name -> table |
 * false}; upvalue 2: see push_region_cached. */
static int l_region(lua_State *L)
{
	const gb_region_info *r;
	const char *cloud;
	int t = lua_type(L, 1);
	if (t == LUA_TLIGHTUSERDATA) {
		const gb_coffer *o = lua_touserdata(L, 1);
		if (o && o->rinfo) {
			push_region_cached(L, o->rinfo);
			return 1;
		}
		lua_settop(L, 1);
		lua_pushstring(L, o ? o->region : NULL);
		lua_pushstring(L, o ? o->cloud : NULL);
		lua_remove(L, 1);
	} else if (t == LUA_TTABLE) { /* an offer as a table (tests) */
		lua_settop(L, 1);
		lua_getfield(L, 1, "region");
		lua_getfield(L, 1, "cloud");
		lua_remove(L, 1);
		if (lua_type(L, 1) != LUA_TSTRING)
			return luaL_error(L, "gb.region: the offer has no region");
	}
	luaL_checkstring(L, 1);
	cloud = luaL_optstring(L, 2, NULL);
	lua_settop(L, 2);
	if (!cloud) {
		lua_pushboolean(L, 1);
		lua_replace(L, 2);
	}
	lua_pushvalue(L, 2);
	if (lua_rawget(L, lua_upvalueindex(1)) == LUA_TNIL) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, 2);
		lua_pushvalue(L, -2);
		lua_rawset(L, lua_upvalueindex(1));
	}
	lua_pushvalue(L, 1);
	if (lua_rawget(L, 3) != LUA_TNIL) {
		if (!lua_toboolean(L, -1))
			lua_pushnil(L);
		return 1;
	}
	lua_pop(L, 1);
	r = gb_region_find(cloud, lua_tostring(L, 1));
	lua_pushvalue(L, 1);
	if (r)
		push_region_cached(L, r);
	else
		lua_pushboolean(L, 0);
	lua_pushvalue(L, -1);
	lua_insert(L, -3);
	lua_rawset(L, 3);
	if (!r)
		lua_pushnil(L);
	return 1;
}

/* 1 when arg idx gives coordinates, 0 for an unknown region name. */
static int coords(lua_State *L, int idx, double *lat, double *lon)
{
	int t = lua_type(L, idx);
	if (t == LUA_TSTRING) {
		const gb_region_info *r = gb_region_find(NULL,
		                                         lua_tostring(L, idx));
		if (!r)
			return 0;
		*lat = r->lat;
		*lon = r->lon;
		return 1;
	}
	if (t != LUA_TTABLE && t != LUA_TLIGHTUSERDATA)
		return luaL_typeerror(L, idx, "region name or {lat=, lon=}");
	if (lua_getfield(L, idx, "lat") != LUA_TNUMBER ||
	    lua_getfield(L, idx, "lon") != LUA_TNUMBER)
		return luaL_argerror(L, idx, "lat and lon must be numbers");
	*lat = lua_tonumber(L, -2);
	*lon = lua_tonumber(L, -1);
	lua_pop(L, 2);
	return 1;
}

static int l_distance(lua_State *L)
{
	double la1, lo1, la2, lo2;
	int a = coords(L, 1, &la1, &lo1);
	int b = coords(L, 2, &la2, &lo2);
	if (!a || !b) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushnumber(L, gb_distance_km(la1, lo1, la2, lo2));
	return 1;
}

static int l_glob(lua_State *L)
{
	const char *p = luaL_checkstring(L, 1);
	const char *s = luaL_checkstring(L, 2);
	lua_pushboolean(L, gb_glob(p, s));
	return 1;
}

/* gb.has_tag(x, tag): x is a region name, or anything with a `tags`
 * list (region, offer), or the list itself. */
static int l_has_tag(lua_State *L)
{
	int list, t = lua_type(L, 1);
	luaL_checkstring(L, 2);
	/* an older tag name counts as its tag (hipaa-eligible: hipaa) */
	lua_pushstring(L, gb_region_tag_canonical(lua_tostring(L, 2)));
	lua_replace(L, 2);
	if (t == LUA_TSTRING) {
		const gb_region_info *r = gb_region_find(NULL,
		                                         lua_tostring(L, 1));
		lua_pushboolean(L, r && gb_region_has_tag(r,
		                                          lua_tostring(L, 2)));
		return 1;
	}
	if (t != LUA_TTABLE && t != LUA_TLIGHTUSERDATA)
		return luaL_typeerror(L, 1, "region name, region, offer or list");
	lua_settop(L, 2);
	if (lua_getfield(L, 1, "tags") == LUA_TNIL) {
		lua_pop(L, 1);
		lua_pushvalue(L, 1);
	}
	list = lua_gettop(L);
	if (lua_type(L, list) != LUA_TTABLE)
		return luaL_argerror(L, 1, "tags must be a list");
	for (lua_Integer i = 1; i <= 10000; i++) {
		int vt = lua_geti(L, list, i);
		if (vt == LUA_TNIL)
			break;
		if (vt == LUA_TSTRING && lua_rawequal(L, -1, 2)) {
			lua_pushboolean(L, 1);
			return 1;
		}
		lua_pop(L, 1);
	}
	lua_pushboolean(L, 0);
	return 1;
}

/* gb.log(...): like print, into the plan's explanation.  Built in a
 * fixed buffer: luaL_tolstring may raise (a __tostring error) and must
 * not leak. */
static int l_log(lua_State *L)
{
	gb_sandbox *sb = gb_sb_get(L);
	char msg[GB_POLICY_LOG_LEN + 1];
	size_t len = 0;
	int n = lua_gettop(L);
	for (int i = 1; i <= n; i++) {
		size_t l;
		const char *s = luaL_tolstring(L, i, &l);
		if (i > 1 && len < GB_POLICY_LOG_LEN)
			msg[len++] = ' ';
		if (l > GB_POLICY_LOG_LEN - len)
			l = GB_POLICY_LOG_LEN - len;
		memcpy(msg + len, s, l);
		len += l;
		lua_pop(L, 1);
	}
	msg[len] = '\0';
	/* no terminal escapes, fake output lines or bytes JSON refuses */
	gb_text_clean(msg);
	if (sb->logs.n >= GB_POLICY_LOG_MAX) {
		sb->logs_dropped++;
		return 0;
	}
	gb_strv_push_take(&sb->logs,
	                  gb_xasprintf("%s: %s", sb->log_tag ? sb->log_tag
	                                                     : "policy",
	                               msg));
	return 0;
}

/* ------------------------------------------------------------------ */

void gb_obj_install(lua_State *L, int base_idx)
{
	gb_sandbox *sb = gb_sb_get(L);
	base_idx = lua_absindex(L, base_idx);

	/* interned field names, anchored */
	lua_createtable(L, GB_OF_COUNT, 0);
	for (int i = 0; i < GB_OF_COUNT; i++) {
		lua_pushstring(L, gb_offer_field_names[i]);
		sb->fields[i] = lua_tostring(L, -1);
		lua_rawseti(L, -2, i + 1);
	}
	lua_rawsetp(L, LUA_REGISTRYINDEX, &k_fields);
	lua_newtable(L);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &k_tags);
	lua_newtable(L);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &k_bench);
	lua_newtable(L);
	gb_sb_readonly(L, "list");
	lua_rawsetp(L, LUA_REGISTRYINDEX, &k_empty);

	/* The metatable of every light userdata in this state: offers. */
	lua_pushlightuserdata(L, NULL);
	lua_createtable(L, 0, 5);
	lua_pushcfunction(L, offer_index);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, offer_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushcfunction(L, offer_pairs);
	lua_setfield(L, -2, "__pairs");
	lua_pushcfunction(L, offer_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pushliteral(L, "locked");
	lua_setfield(L, -2, "__metatable");
	lua_setmetatable(L, -2);
	lua_pop(L, 1);

	lua_createtable(L, 0, 6);
	lua_newtable(L); /* region caches: by name, by info pointer */
	lua_newtable(L);
	lua_pushcclosure(L, l_region, 2);
	lua_setfield(L, -2, "region");
	lua_pushcfunction(L, l_distance);
	lua_setfield(L, -2, "distance_km");
	lua_pushcfunction(L, l_glob);
	lua_setfield(L, -2, "glob");
	lua_pushcfunction(L, l_has_tag);
	lua_setfield(L, -2, "has_tag");
	lua_pushcfunction(L, l_log);
	lua_setfield(L, -2, "log");
	gb_sb_readonly(L, "gb");
	lua_setfield(L, base_idx, "gb");
}

/* ------------------------------------------------------------------ */
/* req */

static void set_opt_num(lua_State *L, const char *k, double v)
{
	if (v > 0)
		set_num(L, k, v);
}

void gb_obj_push_req(lua_State *L, const gb_pool_spec *s,
                     const gb_team_cfg *team)
{
	luaL_checkstack(L, 8, "req");
	lua_createtable(L, 0, 24);
	set_str(L, "name", s->name);
	set_str(L, "purpose", gb_purpose_name(s->purpose));
	set_int(L, "count", s->count);
	set_int(L, "min", s->min);
	set_int(L, "max", s->max);

	lua_createtable(L, 0, 4);
	set_str(L, "name", team && team->name ? team->name
	                                      : s->team ? s->team : "default");
	if (team) {
		if (team->max_gpus > 0)
			set_int(L, "max_gpus", team->max_gpus);
		set_opt_num(L, "max_price_per_hour", team->max_price_per_hour);
		set_opt_num(L, "monthly_budget", team->monthly_budget);
	}
	gb_sb_readonly(L, "req.team");
	gb_obj_strict(L, "req.team", gb_req_team_field_names,
	              GB_REQ_TEAM_FIELDS);
	lua_setfield(L, -2, "team");

	lua_createtable(L, 0, 3);
	push_strv(L, &s->gpu_models, "req.gpu.models");
	lua_setfield(L, -2, "models");
	set_int(L, "count", s->gpu_count);
	set_int(L, "memory_gb", s->gpu_memory_gb);
	gb_sb_readonly(L, "req.gpu");
	gb_obj_strict(L, "req.gpu", gb_req_gpu_field_names,
	              GB_REQ_GPU_FIELDS);
	lua_setfield(L, -2, "gpu");

	lua_createtable(L, s->ncapacity, 0);
	for (int i = 0; i < s->ncapacity; i++) {
		lua_pushstring(L, gb_capacity_name(s->capacity[i]));
		lua_rawseti(L, -2, i + 1);
	}
	gb_sb_readonly(L, "req.capacity");
	lua_setfield(L, -2, "capacity");

	push_strv(L, &s->clouds, "req.clouds");
	lua_setfield(L, -2, "clouds");
	push_strv(L, &s->regions, "req.regions");
	lua_setfield(L, -2, "regions");
	push_strv(L, &s->compliance, "req.compliance");
	lua_setfield(L, -2, "compliance");
	push_strv(L, &s->policies, "req.policies");
	lua_setfield(L, -2, "policies");
	set_str(L, "colocate", gb_colocate_name(s->colocate));
	if (s->data_region && *s->data_region)
		set_str(L, "data_region", s->data_region);
	set_opt_num(L, "max_price_per_hour", s->max_price_per_hour);
	if (s->ttl_s > 0)
		set_int(L, "ttl", s->ttl_s);
	if (s->idle_timeout_s > 0)
		set_int(L, "idle_timeout", s->idle_timeout_s);

	lua_createtable(L, 0, (int)s->labels.n);
	for (size_t i = 0; i < s->labels.n; i++)
		set_str(L, s->labels.keys[i], s->labels.vals[i]);
	gb_sb_readonly(L, "req.labels");
	lua_setfield(L, -2, "labels");

	gb_sb_readonly(L, "req");
	gb_obj_strict(L, "req", gb_req_field_names, GB_REQ_FIELDS);
}
