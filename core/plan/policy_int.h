/*
 * policy_int.h -- internals shared by the policy files (not a public
 * interface): the Lua sandbox (policy_sandbox.c), the objects policies see
 * (policy_objects.c: offers, req, regions, gb.*), the policy set
 * (policy.c) and the test runner (policy_test.c).
 *
 * One gb_sandbox owns one lua_State.  Everything that can allocate inside
 * Lua runs under gb_sb_pcall (a protected call), so a failed allocation
 * becomes an error, never a panic.  Policy code itself only ever runs
 * through gb_sb_call, which arms the limits:
 *   - instructions: a count hook every 100 instructions counts them down
 *     (armed exactly so the limit falls on the Nth instruction) and checks
 *     a wall-clock deadline (a backstop: single instructions such as
 *     comparing two 30 MB strings do much work); when a limit is hit it
 *     re-arms itself at count 1 so every further instruction raises again
 *     (a pcall inside the policy cannot swallow it);
 *   - memory: the allocator refuses to grow past the cap (Lua raises
 *     "not enough memory"); while host code runs, a small reserve above
 *     the cap is allowed so bookkeeping never fails after a policy filled
 *     the heap;
 *   - allocation volume: at most 4 x the cap allocated during one call
 *     (bounds copying loops such as `local t = big .. x` repeated, which
 *     free as fast as they allocate);
 *   - work: C library functions that loop where no hook runs (pattern
 *     matching, plain find, string.rep, table.move/insert/remove/concat/
 *     unpack/sort -- sort through an order function of the sandbox's, one
 *     step per comparison) charge their steps against a per-call budget
 *     of 10 x the instruction limit, refuse up front what cannot fit, and
 *     look at the deadline every 4096 steps (gb_sb_charge), so no C call
 *     outruns the time limit either.
 * A limit hit is recorded (first one wins) and the call fails with that
 * message even if the policy caught the error.
 */
#ifndef GB_POLICY_INT_H
#define GB_POLICY_INT_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "config.h"
#include "policy.h"
#include "policy_fields.h"
#include "spec.h"
#include "util.h"

#define GB_POLICY_DEFAULT_INSTRUCTIONS 1000000ULL
#define GB_POLICY_DEFAULT_MEMORY ((size_t)64 << 20)
#define GB_POLICY_DEFAULT_TIME_MS 1000
#define GB_POLICY_HOOK_EVERY 100   /* instructions between hook checks */
#define GB_POLICY_MAX_SOURCE ((size_t)1 << 20)
#define GB_POLICY_LOG_MAX 100      /* messages kept per evaluation */
#define GB_POLICY_LOG_LEN 500      /* bytes kept per message */
#define GB_POLICY_REASON_LEN 512   /* bytes kept per refusal reason */
#define GB_POLICY_REUSE_REASONS 65536 /* interned reasons before a cached
                                         set is built afresh */
#define GB_POLICY_CACHE_MAX 32     /* compiled sets kept (policy_cache.c) */

/* Offer fields (policy_fields.h), in the order `pairs(offer)` lists
 * them: GB_OF_cloud, GB_OF_region, ... */
#define GB_OF_ENUM(obj, name, type, meaning) GB_OF_##name,
enum { GB_POLICY_OFFER_FIELDS(GB_OF_ENUM) GB_OF_COUNT };
#undef GB_OF_ENUM
extern const char *const gb_offer_field_names[GB_OF_COUNT];

enum {
	GB_SB_HIT_NONE = 0,
	GB_SB_HIT_INSTR,
	GB_SB_HIT_ALLOC,
	GB_SB_HIT_WORK,
	GB_SB_HIT_TIME
};

typedef struct gb_sandbox {
	lua_State *L;
	/* limits */
	uint64_t instr_limit;
	unsigned time_ms;
	size_t mem_cap;
	size_t alloc_cap;    /* per call */
	uint64_t work_cap;   /* per call */
	/* accounting */
	size_t mem_used;
	size_t alloc_call;
	uint64_t work_call;
	unsigned mem_refused; /* refusals during the current call */
	uint64_t instr_left;  /* of the current call, at the last hook */
	int count_armed;      /* the hook's current count */
	int64_t deadline_ns;  /* gb_mono_ns() deadline of the current call */
	int strict;           /* policy code running: the cap applies */
	int hit;              /* GB_SB_HIT_* (first wins) */
	char hit_msg[256];
	/* interned offer field names (anchored in the registry) */
	const char *fields[GB_OF_COUNT];
	/* gb.log */
	const char *log_tag;  /* current policy name, borrowed */
	gb_strv logs;
	size_t logs_dropped;
	/* directory of load_policy() in the test sandbox, borrowed */
	const char *test_dir;
} gb_sandbox;

/* ---- policy_sandbox.c */

/* Create the state with every library and the shared read-only base
 * environment.  0, or -1 with err.  Ownership: gb_sb_close. */
int gb_sb_open(gb_sandbox *sb, const gb_policy_limits *lim, char *err,
               size_t errcap);
void gb_sb_close(gb_sandbox *sb);
/* The sandbox of a state (stored in its extra space). */
gb_sandbox *gb_sb_get(lua_State *L);

/* Run f(L) with ud as its only argument (a light userdata) in protected
 * mode.  Returns the Lua status (LUA_OK = 0); on failure writes the error
 * into err (limit messages first) and resets the call state. */
int gb_sb_pcall(gb_sandbox *sb, lua_CFunction f, void *ud, char *err,
                size_t errcap);
/* Call the function below nargs arguments on the stack with the limits
 * armed (unprotected: use inside gb_sb_pcall).  Raises if a limit was hit
 * even when the policy caught the error. */
void gb_sb_call(gb_sandbox *sb, int nargs, int nresults);
/* Charge n work units to the current call; raises (naming what) when the
 * budget is exceeded. */
void gb_sb_charge(lua_State *L, uint64_t n, const char *what);
/* Describe the error value at idx without running any metamethod into
 * buf: strings and numbers as they are, anything else as "error object
 * is a <type>". */
void gb_sb_errstr(lua_State *L, int idx, char *buf, size_t cap);

/* Push a new environment table for one chunk: writes stay in it, reads
 * fall back to the shared read-only base. */
void gb_sb_new_env(lua_State *L);
/* Load text chunk buf (mode "t") named "@path", give it the environment
 * at env_idx, run it with the limits and leave its single result on the
 * stack.  Unprotected (use inside gb_sb_pcall). */
void gb_sb_run_chunk(gb_sandbox *sb, const char *buf, size_t len,
                     const char *path, int env_idx);

/* Replace the table on top of the stack by a read-only proxy for it
 * (shallow: nested tables must already be proxies).  what names it in
 * errors ("req.gpu"). */
void gb_sb_readonly(lua_State *L, const char *what);
/* Deep variant for values built from data: copies nothing, proxies every
 * nested table (depth <= 32, else an error).  Replaces the value on top
 * (non-tables are left alone). */
void gb_sb_readonly_deep(lua_State *L, const char *what);

/* ---- policy_objects.c */

/* Install the offer metatable, the caches and the `gb` library into the
 * base table at base_idx.  Called once from gb_sb_open (protected). */
void gb_obj_install(lua_State *L, int base_idx);
/* Push an offer (a light userdata seen through the offer metatable). */
void gb_obj_push_offer(lua_State *L, const gb_coffer *o);
/* Push the read-only req table for a pool spec and its team (may be
 * NULL).  Protected context required. */
void gb_obj_push_req(lua_State *L, const gb_pool_spec *spec,
                     const gb_team_cfg *team);
/* "aws/us-east-1/p5.48xlarge/spot" into buf. */
void gb_obj_offer_label(const gb_coffer *o, char *buf, size_t cap);
/* Raises the error for reading field k that obj ("offer", "req") does
 * not have: the name, the nearest of names[0..n) and the list.  Does not
 * return. */
int gb_obj_unknown_field(lua_State *L, const char *obj, const char *k,
                         const char *const *names, size_t n);
/* Makes the read-only proxy at the top of the stack strict: a field in
 * names[0..n) (static storage) it lacks reads as nil, any other name is
 * gb_obj_unknown_field's error. */
void gb_obj_strict(lua_State *L, const char *what, const char *const *names,
                   size_t n);
/* The fields of req, req.gpu and req.team (policy_fields.h). */
#define GB_REQ_FIELDS (0 GB_POLICY_REQ_FIELDS(GB_POLICY_FIELD_ONE))
extern const char *const gb_req_field_names[GB_REQ_FIELDS];
#define GB_REQ_GPU_FIELDS (0 GB_POLICY_REQ_GPU_FIELDS(GB_POLICY_FIELD_ONE))
extern const char *const gb_req_gpu_field_names[GB_REQ_GPU_FIELDS];
#define GB_REQ_TEAM_FIELDS (0 GB_POLICY_REQ_TEAM_FIELDS(GB_POLICY_FIELD_ONE))
extern const char *const gb_req_team_field_names[GB_REQ_TEAM_FIELDS];
#define GB_REGION_FIELDS (0 GB_POLICY_REGION_FIELDS(GB_POLICY_FIELD_ONE))
extern const char *const gb_region_field_names[GB_REGION_FIELDS];

/* ---- policy_params.c */

/* Reads the `params` of the policy table at t (raw access): appends the
 * declarations to *out (sorted by name; caller frees with
 * gb_params_free, also after an error) and leaves a table name ->
 * default on the stack.  Raises on a malformed declaration. */
void gb_params_read(lua_State *L, int t, gb_policy_param **out, size_t *n);
void gb_params_free(gb_policy_param *p, size_t n);
/* The declaration of key, or NULL with msg: no such parameter (the
 * nearest, the list). */
const gb_policy_param *gb_param_find(const gb_policy_param *p, size_t n,
                                     const char *policy, const char *key,
                                     char *msg, size_t cap);
/* An argument's value, read from its text by the declared type. */
typedef struct gb_param_value {
	double d;
	long long i;
	int b;
	const char *s; /* borrowed: the text */
} gb_param_value;
/* 0, or -1 with msg when text does not read as p's type. */
int gb_param_parse(const gb_policy_param *p, const char *policy,
                   const char *text, gb_param_value *v, char *msg,
                   size_t cap);
void gb_param_push(lua_State *L, const gb_policy_param *p,
                   const gb_param_value *v);

/* ---- policy.c */

/* Resolve name (or a path ending in .lua) against dirs; returns a new
 * path (caller frees) or NULL with err ("not found in ...", did you mean). */
char *gb_policy_resolve(const char *name, const gb_strv *dirs, char *err,
                        size_t errcap);
/* The policy's name for a path: its file name without ".lua".  Caller
 * frees. */
char *gb_policy_name_of(const char *path);
/* Check the table on top of the stack is a policy (filter and/or score
 * functions); raises "must return a table with filter and/or score
 * functions, got <type>" otherwise.  Sets *has (1 filter, 2 score). */
void gb_policy_check_shape(lua_State *L, int *has);
/* One more reference to ps (dropped by gb_policy_set_free). */
void gb_policy_set_ref(gb_policy_set *ps);
/* 1 when ps must not be handed out again (an evaluation failed, or it
 * grew past GB_POLICY_REUSE_REASONS reasons or half its memory cap). */
int gb_policy_set_retired(gb_policy_set *ps);

#endif
