/*
 * policy_sandbox.c -- the Lua 5.4 state policies run in: a capping
 * allocator, the instruction hook, the base environment (only base,
 * table, string, math, utf8, minus everything that reaches outside or
 * defeats the limits) and read-only proxies.  See policy_int.h for the
 * limits and why each exists.
 */
#include "policy_int.h"

#include <ctype.h>
#include <lauxlib.h>
#include <lualib.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Host bookkeeping may go this far above the cap while no policy runs. */
#define SB_RESERVE ((size_t)4 << 20)
#define SB_RO_DEPTH 32

static char k_base, k_envmt;

gb_sandbox *gb_sb_get(lua_State *L)
{
	gb_sandbox *sb;
	memcpy(&sb, lua_getextraspace(L), sizeof(sb));
	return sb;
}

static void fmt_bytes(size_t n, char *buf, size_t cap)
{
	if (n >= ((size_t)1 << 20) && n % ((size_t)1 << 20) == 0)
		snprintf(buf, cap, "%zu MiB", n >> 20);
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, cap, "%zu KiB", n >> 10);
	else
		snprintf(buf, cap, "%zu bytes", n);
}

/* Record the first limit hit and make every further instruction of the
 * call raise, so the policy cannot carry on after catching the error. */
static void hook(lua_State *L, lua_Debug *ar);

static void record_hit(gb_sandbox *sb, int kind, const char *msg)
{
	if (sb->hit != GB_SB_HIT_NONE)
		return;
	sb->hit = kind;
	snprintf(sb->hit_msg, sizeof(sb->hit_msg), "%s", msg);
	lua_sethook(sb->L, hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
}

static void hook(lua_State *L, lua_Debug *ar)
{
	gb_sandbox *sb = gb_sb_get(L);
	if (sb->hit == GB_SB_HIT_NONE) {
		char msg[200];
		int kind;
		if (sb->instr_left <= (uint64_t)sb->count_armed) {
			kind = GB_SB_HIT_INSTR;
			snprintf(msg, sizeof(msg),
			         "instruction limit of %llu exceeded",
			         (unsigned long long)sb->instr_limit);
		} else if (gb_mono_ns() > sb->deadline_ns) {
			kind = GB_SB_HIT_TIME;
			snprintf(msg, sizeof(msg),
			         "time limit of %u ms per call exceeded",
			         sb->time_ms);
		} else {
			/* count down; arm exactly for the last stretch */
			sb->instr_left -= (uint64_t)sb->count_armed;
			if (sb->instr_left < GB_POLICY_HOOK_EVERY) {
				sb->count_armed = (int)sb->instr_left;
				lua_sethook(L, hook, LUA_MASKCOUNT,
				            sb->count_armed);
			}
			return;
		}
		lua_getinfo(L, "Sl", ar);
		if (ar->currentline > 0) {
			size_t n = strlen(msg);
			snprintf(msg + n, sizeof(msg) - n, " at %s:%d",
			         ar->short_src, ar->currentline);
		}
		record_hit(sb, kind, msg);
	}
	lua_pushstring(L, sb->hit_msg);
	lua_error(L);
}

static void *sb_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	gb_sandbox *sb = ud;
	size_t old = ptr ? osize : 0;
	void *np;

	if (nsize == 0) {
		free(ptr);
		sb->mem_used -= old;
		return NULL;
	}
	if (nsize > old) {
		size_t grow = nsize - old;
		size_t cap = sb->strict ? sb->mem_cap : sb->mem_cap + SB_RESERVE;
		if (grow > cap || sb->mem_used > cap - grow) {
			if (sb->strict)
				sb->mem_refused++;
			return NULL;
		}
		if (sb->strict) {
			if (grow > sb->alloc_cap ||
			    sb->alloc_call > sb->alloc_cap - grow) {
				char cap1[32], msg[160];
				fmt_bytes(sb->alloc_cap, cap1, sizeof(cap1));
				snprintf(msg, sizeof(msg),
				         "allocation limit of %s per call exceeded",
				         cap1);
				record_hit(sb, GB_SB_HIT_ALLOC, msg);
				return NULL;
			}
			sb->alloc_call += grow;
		}
	}
	np = realloc(ptr, nsize);
	if (!np)
		return NULL;
	sb->mem_used = sb->mem_used - old + nsize;
	return np;
}

/* Steps between two looks at the clock from gb_sb_charge. */
#define SB_CLOCK_EVERY ((uint64_t)4096)

/* Raises the work limit unless n more steps fit in this call's budget
 * (or a limit was already hit: C work raises again, like the hook). */
static void work_fits(lua_State *L, gb_sandbox *sb, uint64_t n,
                      const char *what)
{
	if (sb->hit == GB_SB_HIT_NONE &&
	    (n > sb->work_cap || sb->work_call > sb->work_cap - n)) {
		char msg[200];
		snprintf(msg, sizeof(msg),
		         "work limit of %llu steps per call exceeded by %s",
		         (unsigned long long)sb->work_cap, what);
		record_hit(sb, GB_SB_HIT_WORK, msg);
	}
	if (sb->hit != GB_SB_HIT_NONE) {
		lua_pushstring(L, sb->hit_msg);
		lua_error(L);
	}
}

static uint64_t steps_of(double d)
{
	return d >= 1.8e19 ? UINT64_MAX : d <= 0 ? 0 : (uint64_t)d;
}

void gb_sb_charge(lua_State *L, uint64_t n, const char *what)
{
	gb_sandbox *sb = gb_sb_get(L);
	uint64_t before = sb->work_call;
	if (!sb->strict)
		return;
	work_fits(L, sb, n, what);
	sb->work_call += n;
	/* C loops never reach the count hook: the deadline is checked here,
	 * once every SB_CLOCK_EVERY steps (or per charge of that many). */
	if (n >= SB_CLOCK_EVERY ||
	    before / SB_CLOCK_EVERY != sb->work_call / SB_CLOCK_EVERY) {
		if (gb_mono_ns() > sb->deadline_ns) {
			char msg[200];
			snprintf(msg, sizeof(msg),
			         "time limit of %u ms per call exceeded in %s",
			         sb->time_ms, what);
			record_hit(sb, GB_SB_HIT_TIME, msg);
			lua_pushstring(L, sb->hit_msg);
			lua_error(L);
		}
	}
}

void gb_sb_errstr(lua_State *L, int idx, char *buf, size_t cap)
{
	switch (lua_type(L, idx)) {
	case LUA_TSTRING: {
		size_t n;
		const char *s = lua_tolstring(L, idx, &n);
		snprintf(buf, cap, "%.*s", (int)(n > 2000 ? 2000 : n), s);
		break;
	}
	case LUA_TNUMBER:
		if (lua_isinteger(L, idx))
			snprintf(buf, cap, "%lld",
			         (long long)lua_tointeger(L, idx));
		else
			snprintf(buf, cap, "%.14g", (double)lua_tonumber(L, idx));
		break;
	case LUA_TNIL:
		snprintf(buf, cap, "error object is nil");
		break;
	default:
		/* Never call __tostring here: it is policy code and may not
		 * return. */
		snprintf(buf, cap, "error object is a %s",
		         lua_typename(L, lua_type(L, idx)));
	}
}

static void call_reset(gb_sandbox *sb)
{
	sb->strict = 0;
	sb->hit = GB_SB_HIT_NONE;
	lua_sethook(sb->L, NULL, 0, 0);
}

void gb_sb_call(gb_sandbox *sb, int nargs, int nresults)
{
	lua_State *L = sb->L;
	if (sb->strict) {
		/* Nested (a test calling load_policy): the outer budget
		 * applies. */
		lua_call(L, nargs, nresults);
		return;
	}
	sb->alloc_call = 0;
	sb->work_call = 0;
	sb->mem_refused = 0;
	sb->hit = GB_SB_HIT_NONE;
	sb->strict = 1;
	sb->instr_left = sb->instr_limit;
	sb->count_armed = sb->instr_limit < GB_POLICY_HOOK_EVERY
	                          ? (int)sb->instr_limit : GB_POLICY_HOOK_EVERY;
	sb->deadline_ns = gb_mono_ns() + (int64_t)sb->time_ms * 1000000;
	lua_sethook(L, hook, LUA_MASKCOUNT, sb->count_armed);
	lua_call(L, nargs, nresults);
	/* The hook stays set (no Lua runs until the next call re-arms it, and
	 * gb_sb_pcall clears it): one lua_sethook per call, not two. */
	sb->strict = 0;
	if (sb->hit != GB_SB_HIT_NONE) {
		/* The policy caught the error and returned: still a failure. */
		lua_pushstring(L, sb->hit_msg);
		lua_error(L);
	}
}

int gb_sb_pcall(gb_sandbox *sb, lua_CFunction f, void *ud, char *err,
                size_t errcap)
{
	lua_State *L = sb->L;
	int top = lua_gettop(L);
	int st;

	lua_pushcfunction(L, f);
	lua_pushlightuserdata(L, ud);
	st = lua_pcall(L, 1, 0, 0);
	if (st != LUA_OK && err && errcap) {
		const char *s = lua_type(L, -1) == LUA_TSTRING
		                        ? lua_tostring(L, -1) : NULL;
		if (sb->hit != GB_SB_HIT_NONE) {
			snprintf(err, errcap, "%s", sb->hit_msg);
		} else if (st == LUA_ERRMEM ||
		           (sb->mem_refused && s &&
		            strstr(s, "not enough memory"))) {
			char cap[32];
			fmt_bytes(sb->mem_cap, cap, sizeof(cap));
			snprintf(err, errcap, "memory limit of %s exceeded", cap);
		} else {
			gb_sb_errstr(L, -1, err, errcap);
		}
	}
	call_reset(sb);
	lua_settop(L, top);
	if (st == LUA_ERRMEM || sb->mem_used > sb->mem_cap / 2)
		lua_gc(L, LUA_GCCOLLECT);
	return st;
}

/* ------------------------------------------------------------------ */
/* read-only proxies */

static void key_desc(lua_State *L, int idx, char *buf, size_t cap)
{
	if (lua_type(L, idx) == LUA_TSTRING)
		snprintf(buf, cap, "'%.60s'", lua_tostring(L, idx));
	else if (lua_isinteger(L, idx))
		snprintf(buf, cap, "[%lld]", (long long)lua_tointeger(L, idx));
	else
		snprintf(buf, cap, "a %s key", luaL_typename(L, idx));
}

static int ro_newindex(lua_State *L)
{
	char k[80];
	key_desc(L, 2, k, sizeof(k));
	return luaL_error(L, "%s is read-only (cannot set %s)",
	                  lua_tostring(L, lua_upvalueindex(1)), k);
}

static int ro_len(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)lua_rawlen(L, lua_upvalueindex(1)));
	return 1;
}

static int ro_next(lua_State *L)
{
	lua_settop(L, 2);
	if (lua_next(L, lua_upvalueindex(1)))
		return 2;
	lua_pushnil(L);
	return 1;
}

static int ro_pairs(lua_State *L)
{
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_pushcclosure(L, ro_next, 1);
	lua_pushvalue(L, 1);
	lua_pushnil(L);
	return 3;
}

void gb_sb_readonly(lua_State *L, const char *what)
{
	int t = lua_absindex(L, -1);
	luaL_checkstack(L, 4, "read-only proxy");
	lua_createtable(L, 0, 0);        /* the proxy: always empty */
	lua_createtable(L, 0, 5);        /* its metatable */
	lua_pushvalue(L, t);
	lua_setfield(L, -2, "__index");
	lua_pushstring(L, what);
	lua_pushcclosure(L, ro_newindex, 1);
	lua_setfield(L, -2, "__newindex");
	lua_pushvalue(L, t);
	lua_pushcclosure(L, ro_len, 1);
	lua_setfield(L, -2, "__len");
	lua_pushvalue(L, t);
	lua_pushcclosure(L, ro_pairs, 1);
	lua_setfield(L, -2, "__pairs");
	lua_pushliteral(L, "locked");
	lua_setfield(L, -2, "__metatable");
	lua_setmetatable(L, -2);
	lua_replace(L, t);
}

static void ro_deep(lua_State *L, const char *what, int depth)
{
	int t = lua_absindex(L, -1);
	if (lua_type(L, t) != LUA_TTABLE)
		return;
	if (lua_getmetatable(L, t)) { /* already a proxy (or has one) */
		lua_pop(L, 1);
		return;
	}
	if (depth > SB_RO_DEPTH)
		luaL_error(L, "%s: nested more than %d levels (or cyclic)",
		           what, SB_RO_DEPTH);
	luaL_checkstack(L, 6, "read-only proxy");
	lua_pushnil(L);
	while (lua_next(L, t)) {
		if (lua_type(L, -1) == LUA_TTABLE) {
			char child[128];
			if (lua_type(L, -2) == LUA_TSTRING)
				snprintf(child, sizeof(child), "%s.%s", what,
				         lua_tostring(L, -2));
			else if (lua_isinteger(L, -2))
				snprintf(child, sizeof(child), "%s[%lld]", what,
				         (long long)lua_tointeger(L, -2));
			else
				snprintf(child, sizeof(child), "%s[?]", what);
			ro_deep(L, child, depth + 1);
			lua_pushvalue(L, -2);
			lua_insert(L, -2);
			lua_rawset(L, t); /* replace an existing field */
		} else {
			lua_pop(L, 1);
		}
	}
	gb_sb_readonly(L, what);
}

void gb_sb_readonly_deep(lua_State *L, const char *what)
{
	ro_deep(L, what, 0);
}

/* ------------------------------------------------------------------ */
/* guarded library functions */

/* setmetatable without __gc: a finalizer would run outside any policy
 * call (during a later collection or at close), beyond every limit. */
static int sb_setmetatable(lua_State *L)
{
	int t = lua_type(L, 2);
	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
	if (t == LUA_TTABLE) {
		lua_pushliteral(L, "__gc");
		if (lua_rawget(L, 2) != LUA_TNIL)
			return luaL_error(L, "setmetatable: __gc metamethods "
			                     "are not allowed in policies");
		lua_pop(L, 1);
	}
	if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)
		return luaL_error(L, "cannot change a protected metatable");
	lua_settop(L, 2);
	lua_setmetatable(L, 1);
	return 1;
}

/* xpcall(f, msgh, ...) calling msgh after the stack has unwound, not at
 * the point of the error.  Lua calls a message handler inside the code
 * that raised the error -- for the instruction limit that is the count
 * hook, where hooks are off, so a looping handler would never be
 * stopped.  Without the debug library a handler cannot look at the stack
 * anyway, so the only difference is invisible. */
static int sb_xpcall(lua_State *L)
{
	int n = lua_gettop(L);
	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_pushvalue(L, 1);
	for (int i = 3; i <= n; i++)
		lua_pushvalue(L, i);
	if (lua_pcall(L, n - 2, LUA_MULTRET, 0) == LUA_OK) {
		lua_pushboolean(L, 1);
		lua_insert(L, n + 1);
		return lua_gettop(L) - n;
	}
	lua_pushvalue(L, 2);
	lua_insert(L, -2);
	lua_pcall(L, 1, 1, 0); /* its error, if any, is the result */
	lua_pushboolean(L, 0);
	lua_insert(L, -2);
	return 2;
}

/* Calls upvalue 1 with every argument. */
static int call_original(lua_State *L)
{
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
	return lua_gettop(L);
}

/* string.rep written out here so that it charges its work: Lua's own
 * loops n - 1 times even when nothing is copied (an empty piece and
 * separator), and copies piece by piece in C where no hook runs. */
static int sb_rep(lua_State *L)
{
	size_t l, lsep = 0;
	lua_Integer n;
	gb_sandbox *sb = gb_sb_get(L);
	const char *s = luaL_checklstring(L, 1, &l);
	const char *sep;
	double total;
	luaL_Buffer b;
	char *p;

	n = luaL_checkinteger(L, 2);
	sep = luaL_optlstring(L, 3, "", &lsep);
	if (n <= 0 || l + lsep == 0) {
		lua_pushliteral(L, "");
		return 1;
	}
	if (!sb->strict)
		return call_original(L);
	total = (double)l * (double)n + (double)lsep * (double)(n - 1);
	{
		double avail = sb->mem_used < sb->mem_cap
		                       ? (double)(sb->mem_cap - sb->mem_used) : 0;
		if (total > avail) {
			char cap[32], msg[200];
			fmt_bytes(sb->mem_cap, cap, sizeof(cap));
			snprintf(msg, sizeof(msg),
			         "memory limit of %s exceeded (string.rep of "
			         "%.0f bytes)", cap, total);
			record_hit(sb, GB_SB_HIT_ALLOC, msg);
			lua_pushstring(L, sb->hit_msg);
			return lua_error(L);
		}
	}
	/* a step per 256 iterations or bytes: copying is cheap, and the
	 * allocation cap bounds it too; the charges below look at the clock */
	work_fits(L, sb, steps_of(((double)n + total) / 256), "string.rep");
	p = luaL_buffinitsize(L, &b, (size_t)total);
	for (lua_Integer i = 0; i < n; i++) {
		if (i > 0 && lsep > 0) {
			memcpy(p, sep, lsep);
			p += lsep;
		}
		memcpy(p, s, l);
		p += l;
		if ((i & 4095) == 4095)
			gb_sb_charge(L, 16 + 16 * (l + lsep), "string.rep");
	}
	luaL_pushresultsize(&b, (size_t)total);
	return 1;
}

/* Steps a Lua pattern match may take on a subject of ls bytes, an upper
 * estimate: every quantified item (*, +, -) can try every length, each
 * nested in the previous, so the cost multiplies; an unanchored search
 * repeats it from every start. */
static double pattern_cost(const char *p, size_t lp, size_t ls, int gmatch)
{
	const char *end = p + lp;
	double n = (double)ls + 1, cost = 1;
	int anchored = !gmatch && lp > 0 && p[0] == '^';

	if (anchored)
		p++;
	while (p < end) {
		char c = *p++;
		if (c == '(' || c == ')')
			continue;
		if (c == '$' && p == end)
			continue;
		if (c == '%') {
			if (p >= end)
				break;
			c = *p++;
			if (c == 'b') {
				p += 2;
				cost *= n;
				continue;
			}
			if (c == 'f') {
				if (p < end && *p == '[') {
					c = *p++;
					goto set;
				}
				continue;
			}
			if (isdigit((unsigned char)c)) {
				cost *= n;
				continue;
			}
		} else if (c == '[') {
set:
			if (p < end && *p == '^')
				p++;
			do { /* like Lua: the first ']' is literal */
				if (p >= end)
					break;
				if (*p++ == '%' && p < end)
					p++;
			} while (p < end && *p != ']');
			if (p < end)
				p++;
			if (c == 'f')
				continue;
		}
		if (p < end) {
			if (*p == '*' || *p == '+' || *p == '-') {
				cost *= n;
				p++;
			} else if (*p == '?') {
				cost *= 2;
				p++;
			}
		}
		if (cost > 1e30)
			cost = 1e30;
	}
	if (!anchored)
		cost *= n;
	return cost;
}

enum { PAT_FIND, PAT_MATCH, PAT_GMATCH, PAT_GSUB };
static const char *const pat_names[] = {"string.find", "string.match",
                                        "string.gmatch", "string.gsub"};

static int sb_pattern(lua_State *L)
{
	size_t ls, lp;
	int kind = (int)lua_tointeger(L, lua_upvalueindex(2));
	const char *p;
	double cost;

	luaL_checklstring(L, 1, &ls);
	p = luaL_checklstring(L, 2, &lp);
	if ((kind == PAT_FIND && lua_toboolean(L, 4)) ||
	    !strpbrk(p, "^$*+?.([%-") || strlen(p) != lp) {
		/* plain search: compares the needle at every position */
		cost = ((double)ls + 1) * ((double)lp + 1);
	} else {
		cost = pattern_cost(p, lp, ls, kind == PAT_GMATCH);
	}
	if (cost > 1) {
		char what[120];
		snprintf(what, sizeof(what),
		         "%s (pattern of %zu bytes on %zu bytes: ~%.3g steps)",
		         pat_names[kind], lp, ls, cost);
		gb_sb_charge(L, steps_of(cost), what);
	}
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
	return lua_gettop(L);
}

/* table.move and positional table.insert/remove loop in C over a range
 * the policy chooses (or a length its __len invents), writing nil into
 * nil without allocating: charge the range. */
static int sb_tmove(lua_State *L)
{
	lua_Integer f = luaL_checkinteger(L, 2), e = luaL_checkinteger(L, 3);
	if (e >= f) {
		lua_Unsigned n = (lua_Unsigned)e - (lua_Unsigned)f + 1;
		gb_sb_charge(L, n, "table.move");
	}
	return call_original(L);
}

static int sb_tshift(lua_State *L)
{
	int insert = (int)lua_tointeger(L, lua_upvalueindex(2));
	int nargs = lua_gettop(L);
	if ((insert && nargs == 3) || (!insert && nargs >= 2)) {
		lua_Integer len = luaL_len(L, 1);
		lua_Integer pos = luaL_checkinteger(L, 2);
		if (len > pos && len - pos > 0)
			gb_sb_charge(L, (uint64_t)(len - pos),
			             insert ? "table.insert" : "table.remove");
	}
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, nargs, LUA_MULTRET);
	return lua_gettop(L);
}

/* table.concat calls __index for every position, in C: the original
 * runs on slices of CONCAT_SLICE positions, each one charged. */
#define CONCAT_SLICE 4096

static int sb_tconcat(lua_State *L)
{
	gb_sandbox *sb = gb_sb_get(L);
	size_t lsep;
	lua_Integer i, last;
	luaL_Buffer b;

	if (lua_type(L, 1) != LUA_TTABLE || !sb->strict)
		return call_original(L);
	lua_settop(L, 4);
	luaL_optlstring(L, 2, "", &lsep);
	i = luaL_optinteger(L, 3, 1);
	last = lua_isnoneornil(L, 4) ? luaL_len(L, 1)
	                             : luaL_checkinteger(L, 4);
	if (i > last) {
		lua_pushliteral(L, "");
		return 1;
	}
	work_fits(L, sb, (lua_Unsigned)last - (lua_Unsigned)i + 1,
	          "table.concat");
	luaL_buffinit(L, &b);
	for (;;) {
		lua_Integer end =
			(lua_Unsigned)last - (lua_Unsigned)i < CONCAT_SLICE - 1
			        ? last : i + (CONCAT_SLICE - 1);
		gb_sb_charge(L, (uint64_t)(end - i) + 1, "table.concat");
		lua_pushvalue(L, lua_upvalueindex(1));
		lua_pushvalue(L, 1);
		lua_pushvalue(L, 2);
		lua_pushinteger(L, i);
		lua_pushinteger(L, end);
		lua_call(L, 4, 1);
		luaL_addvalue(&b);
		if (end == last)
			break;
		if (lsep > 0) {
			lua_pushvalue(L, 2);
			luaL_addvalue(&b);
		}
		i = end + 1;
	}
	luaL_pushresult(&b);
	return 1;
}

/* table.unpack fetches every position in one C loop (bounded by the
 * stack, about a million): charged by its range. */
static int sb_tunpack(lua_State *L)
{
	lua_Integer i = luaL_optinteger(L, 2, 1);
	lua_Integer e = lua_isnoneornil(L, 3) ? luaL_len(L, 1)
	                                      : luaL_checkinteger(L, 3);
	if (e >= i)
		gb_sb_charge(L, (lua_Unsigned)e - (lua_Unsigned)i + 1,
		             "table.unpack");
	return call_original(L);
}

/* The comparison table.sort makes, through the sandbox: one step each, so
 * a sort whose __index, __newindex, __len and order function are all C
 * functions (no hook ever runs) still meets the work and time limits.
 * Upvalue 1: the policy's order function, or nil for '<'. */
static int sort_less(lua_State *L)
{
	gb_sb_charge(L, 1, "table.sort");
	if (lua_isnil(L, lua_upvalueindex(1))) {
		lua_pushboolean(L, lua_compare(L, 1, 2, LUA_OPLT));
		return 1;
	}
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, 2, 1);
	lua_pushboolean(L, lua_toboolean(L, -1));
	return 1;
}

static int sb_tsort(lua_State *L)
{
	gb_sandbox *sb = gb_sb_get(L);
	lua_Integer n;
	if (lua_type(L, 1) != LUA_TTABLE)
		return call_original(L); /* its own error */
	n = luaL_len(L, 1);
	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_settop(L, 2);
	/* any sort compares about n log2(n) / 2 times at least: refuse at
	 * once what cannot fit (each comparison is charged as it happens) */
	if (n > 1 && sb->strict)
		work_fits(L, sb, steps_of((double)n * log2((double)n) / 2),
		          "table.sort");
	lua_pushvalue(L, 2);
	lua_pushcclosure(L, sort_less, 1);
	lua_replace(L, 2);
	return call_original(L);
}

static void wrap(lua_State *L, int lib, const char *name, lua_CFunction f,
                 int extra, int arg)
{
	lua_getfield(L, lib, name);
	if (extra)
		lua_pushinteger(L, arg);
	lua_pushcclosure(L, f, 1 + extra);
	lua_setfield(L, lib, name);
}

/* ------------------------------------------------------------------ */
/* set-up */

static const char *const base_allowed[] = {
	"assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall",
	"rawequal", "rawget", "rawlen", "select", "tonumber", "tostring",
	"type", "_VERSION", NULL,
};

/* Never reachable by policies (they get their own environments), removed
 * from the real globals all the same. */
static const char *const base_removed[] = {
	"collectgarbage", "dofile", "load", "loadfile", "loadstring", "print",
	"rawset", "require", "warn", "setmetatable", "xpcall", NULL,
};

/* Standard Lua names a policy may reach for that the sandbox leaves out:
 * reading one is an error saying so (not a nil to index later). */
static const char *const unavailable[] = {
	"os", "io", "debug", "package", "require", "load", "loadfile",
	"dofile", "collectgarbage", "coroutine", "rawset", "warn", NULL,
};

/* __index of the base environment's metatable, for names it lacks:
 * upvalue 1 the list of what is available. */
static int sb_missing(lua_State *L)
{
	const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2)
	                                              : NULL;
	for (size_t i = 0; k && unavailable[i]; i++)
		if (strcmp(k, unavailable[i]) == 0)
			return luaL_error(L, "%s is not available in policies "
			                  "(available: %s)", k,
			                  lua_tostring(L, lua_upvalueindex(1)));
	return 0; /* an unset global: nil, as in plain Lua */
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Gives the base table at idx the metatable of sb_missing, listing its
 * names (sorted). */
static void base_missing(lua_State *L, int idx)
{
	gb_strv names = {0};
	char *list;
	idx = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		if (lua_type(L, -2) == LUA_TSTRING &&
		    lua_tostring(L, -2)[0] != '_')
			gb_strv_push(&names, lua_tostring(L, -2));
		lua_pop(L, 1);
	}
	qsort(names.v, names.n, sizeof(*names.v), cmp_str);
	list = gb_strv_join(&names, ", ");
	gb_strv_free(&names);
	lua_createtable(L, 0, 1);
	lua_pushstring(L, list);
	free(list);
	lua_pushcclosure(L, sb_missing, 1);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, idx);
}

static int sb_setup(lua_State *L)
{
	gb_sandbox *sb = lua_touserdata(L, 1);
	int G, base, str, tab, math, utf8;

	lua_settop(L, 0);
	luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
	luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 0);
	luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 0);
	luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 0);
	luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 0);
	G = 1, str = 2, tab = 3, math = 4, utf8 = 5;

	lua_newtable(L);
	base = lua_gettop(L);
	for (size_t i = 0; base_allowed[i]; i++) {
		lua_getfield(L, G, base_allowed[i]);
		lua_setfield(L, base, base_allowed[i]);
	}
	lua_pushcfunction(L, sb_setmetatable);
	lua_setfield(L, base, "setmetatable");
	lua_pushcfunction(L, sb_xpcall);
	lua_setfield(L, base, "xpcall");
	for (size_t i = 0; base_removed[i]; i++) {
		lua_pushnil(L);
		lua_setfield(L, G, base_removed[i]);
	}

	/* string: no dump; explosive functions guarded; its metatable (the
	 * one every string shares) locked against getmetatable(""). */
	lua_pushnil(L);
	lua_setfield(L, str, "dump");
	wrap(L, str, "rep", sb_rep, 0, 0);
	wrap(L, str, "find", sb_pattern, 1, PAT_FIND);
	wrap(L, str, "match", sb_pattern, 1, PAT_MATCH);
	wrap(L, str, "gmatch", sb_pattern, 1, PAT_GMATCH);
	wrap(L, str, "gsub", sb_pattern, 1, PAT_GSUB);
	lua_pushliteral(L, "");
	if (lua_getmetatable(L, -1)) {
		lua_pushliteral(L, "locked");
		lua_setfield(L, -2, "__metatable");
		lua_pop(L, 1);
	}
	lua_pop(L, 1);

	wrap(L, tab, "move", sb_tmove, 0, 0);
	wrap(L, tab, "insert", sb_tshift, 1, 1);
	wrap(L, tab, "remove", sb_tshift, 1, 0);
	wrap(L, tab, "concat", sb_tconcat, 0, 0);
	wrap(L, tab, "unpack", sb_tunpack, 0, 0);
	wrap(L, tab, "sort", sb_tsort, 0, 0);

	/* Libraries are shared by every policy: hand out read-only views. */
	lua_pushvalue(L, str);
	gb_sb_readonly(L, "string");
	lua_setfield(L, base, "string");
	lua_pushvalue(L, tab);
	gb_sb_readonly(L, "table");
	lua_setfield(L, base, "table");
	lua_pushvalue(L, math);
	gb_sb_readonly(L, "math");
	lua_setfield(L, base, "math");
	lua_pushvalue(L, utf8);
	gb_sb_readonly(L, "utf8");
	lua_setfield(L, base, "utf8");

	gb_obj_install(L, base);
	/* print is gb.log */
	lua_getfield(L, base, "gb");
	lua_getfield(L, -1, "log");
	lua_setfield(L, base, "print");
	lua_pop(L, 1);

	base_missing(L, base);
	lua_pushvalue(L, base);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &k_base);
	lua_createtable(L, 0, 2);
	lua_pushvalue(L, base);
	lua_setfield(L, -2, "__index");
	lua_pushliteral(L, "locked");
	lua_setfield(L, -2, "__metatable");
	lua_rawsetp(L, LUA_REGISTRYINDEX, &k_envmt);
	(void)sb;
	return 0;
}

int gb_sb_open(gb_sandbox *sb, const gb_policy_limits *lim, char *err,
               size_t errcap)
{
	gb_sandbox *self = sb;
	memset(sb, 0, sizeof(*sb));
	sb->instr_limit = lim && lim->instructions
	                          ? lim->instructions
	                          : GB_POLICY_DEFAULT_INSTRUCTIONS;
	sb->mem_cap = lim && lim->memory_bytes ? lim->memory_bytes
	                                       : GB_POLICY_DEFAULT_MEMORY;
	sb->time_ms = lim && lim->time_ms ? lim->time_ms
	                                  : GB_POLICY_DEFAULT_TIME_MS;
	sb->alloc_cap = sb->mem_cap > SIZE_MAX / 4 ? SIZE_MAX
	                                           : sb->mem_cap * 4;
	sb->work_cap = sb->instr_limit > UINT64_MAX / 10
	                       ? UINT64_MAX : sb->instr_limit * 10;
	sb->L = lua_newstate(sb_alloc, sb);
	if (!sb->L) {
		snprintf(err, errcap, "cannot create the Lua state (memory "
		                      "limit too small?)");
		return -1;
	}
	memcpy(lua_getextraspace(sb->L), &self, sizeof(self));
	if (gb_sb_pcall(sb, sb_setup, sb, err, errcap) != LUA_OK) {
		lua_close(sb->L);
		sb->L = NULL;
		return -1;
	}
	return 0;
}

void gb_sb_close(gb_sandbox *sb)
{
	if (sb->L)
		lua_close(sb->L);
	sb->L = NULL;
	gb_strv_free(&sb->logs);
}

void gb_sb_new_env(lua_State *L)
{
	lua_createtable(L, 0, 4);
	lua_pushvalue(L, -1);
	lua_setfield(L, -2, "_G");
	lua_rawgetp(L, LUA_REGISTRYINDEX, &k_envmt);
	lua_setmetatable(L, -2);
}

void gb_sb_run_chunk(gb_sandbox *sb, const char *buf, size_t len,
                     const char *path, int env_idx)
{
	lua_State *L = sb->L;
	int st;
	env_idx = lua_absindex(L, env_idx);
	lua_pushfstring(L, "@%s", path);
	st = luaL_loadbufferx(L, buf, len, lua_tostring(L, -1), "t");
	lua_remove(L, -2);
	if (st != LUA_OK) {
		/* "attempt to load a binary chunk" carries no position */
		if (lua_type(L, -1) == LUA_TSTRING &&
		    strncmp(lua_tostring(L, -1), "attempt to load", 15) == 0) {
			lua_pushfstring(L, "%s: %s", path, lua_tostring(L, -1));
			lua_remove(L, -2);
		}
		lua_error(L);
	}
	lua_pushvalue(L, env_idx);
	if (!lua_setupvalue(L, -2, 1)) /* _ENV */
		lua_pop(L, 1);
	gb_sb_call(sb, 0, 1);
}
