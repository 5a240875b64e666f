/*
 * policy.h -- Lua 5.4 placement policies in a sandbox.
 *
 * A policy file returns a table with any of
 *     filter(req, offer, args) -> ok[, reason]
 *     score(req, offer, args)  -> number (lower is better)
 *     params                   what args holds (see parameters below)
 * All filters of a set must pass; scores add up.  Org-wide policies are
 * loaded first and always run.
 *
 * Sandbox: only base (minus dofile/loadfile/load/require/rawset/
 * collectgarbage/warn, see policy_sandbox.c), table, string (minus dump),
 * math, utf8; text chunks only; req and offer are read-only (writes raise
 * an error); a per-call instruction budget (count hook, re-armed so pcall
 * cannot swallow it), a wall-clock backstop per call, a memory cap
 * (allocator) and caps on C work that no hook sees (pattern matching,
 * table.move/insert/remove ranges, allocation volume per call).  A policy
 * that breaks a limit or raises an error fails the evaluation with a
 * message naming the policy, the function, the limit and the offer.
 *
 * Offers reach Lua as read-only objects, req as a read-only table of the
 * pool spec; their fields are policy_fields.h's table (gb_policy_fields
 * below).  Optional values are nil when unset (never 0), so `if req.ttl
 * then` reads naturally.
 * Helpers: gb.region(name[, cloud]) or gb.region(offer) -> {cloud,name,
 *   display,country,jurisdiction,lat,lon,tags{},carbon,carbon_source} |
 *   nil (one cached read-only table per region), gb.distance_km(a, b)
 *   (region names or {lat=,lon=} tables; nil for an unknown name),
 *   gb.has_tag(region|offer|name|list, tag), gb.glob(pattern, s),
 *   gb.log(...) (print is an alias).  xpcall runs its handler after the
 *   stack unwinds (a handler cannot escape the limits).
 * Implementation: policy.c (sets, evaluation), policy_sandbox.c (state,
 * limits), policy_objects.c (offer/req/gb), policy_test.c (test runner).
 *
 * Threading and sharing: a gb_policy_set is reference-counted; its
 * names, paths, hashes and the reason strings it hands out are immutable
 * and may be read from any thread while a reference is held.  Its Lua
 * state is not thread-safe: gb_policy_set_request, gb_policy_eval and
 * gb_policy_logs must run between gb_policy_lock and gb_policy_unlock
 * (one evaluation at a time per set; gb_plan_pool does this).
 *
 * Caching (policy_cache.c): gb_policy_set_get hands out one compiled set
 * per process for the same entries, search path, limits and file
 * contents (sha256 of each resolved file, read on every get, so a changed
 * file is compiled afresh; compiling is what gb_policy_loads counts).  A
 * cached set's Lua state outlives one plan: what a policy keeps in its
 * own upvalues or environment persists between plans until its files
 * change -- policies should be pure functions of req and offer.  A set
 * whose evaluation failed (error or limit), or that grew large, is not
 * handed out again.
 */
#ifndef GB_POLICY_H
#define GB_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "config.h"
#include "spec.h"

typedef struct gb_policy_set gb_policy_set;

typedef struct gb_policy_limits {
	uint64_t instructions; /* per call; 0 = default (1,000,000) */
	size_t memory_bytes;   /* whole sandbox; 0 = default (64 MiB) */
	unsigned time_ms;      /* wall clock per call, a backstop for single
	                          instructions that do much work (comparing
	                          huge strings...); 0 = default (1000) */
} gb_policy_limits;

typedef struct gb_policy_result {
	int refused_by;      /* -1 = every filter passed, else policy index */
	const char *reason;  /* refusal reason; borrowed, valid until the set
	                        is freed */
	double score;        /* sum of scores (when not refused) */
} gb_policy_result;

/* Resolve and load policies: each entry of `org` then `pool` is a path
 * ending in ".lua" or a name looked up as <dir>/<name>.lua in
 * search_path (in order).  Returns 0, or -1 with a message in err naming
 * the policy and the problem (not found, syntax error with line, not
 * returning a table, ...).  Ownership: caller frees *out with
 * gb_policy_set_free. */
int gb_policy_set_new(gb_policy_set **out, const gb_strv *org,
                      const gb_strv *pool, const gb_strv *search_path,
                      const gb_policy_limits *lim, char *err, size_t errcap);
/* The same through the process-wide cache (see above): the set compiled
 * earlier for these entries, search path, limits and file contents, else
 * a new one (cached).  Errors and messages as gb_policy_set_new.
 * Ownership: a reference; the caller drops it with gb_policy_set_free.
 * Thread-safe. */
int gb_policy_set_get(gb_policy_set **out, const gb_strv *org,
                      const gb_strv *pool, const gb_strv *search_path,
                      const gb_policy_limits *lim, char *err, size_t errcap);
/* Drops a reference; the last one frees the set.  NULL is a no-op. */
void gb_policy_set_free(gb_policy_set *ps);
/* Drops every cached set (references held elsewhere stay valid). */
void gb_policy_cache_clear(void);
/* How many sets this process has compiled (gb_policy_set_new, directly
 * or for the cache): each reads and compiles every file of its set. */
unsigned long long gb_policy_loads(void);

/* Evaluation lock of a set (see Threading above). */
void gb_policy_lock(gb_policy_set *ps);
void gb_policy_unlock(gb_policy_set *ps);

size_t gb_policy_count(const gb_policy_set *ps);
/* Borrowed: the policy's name (file name without .lua), its path, and the
 * sha256 hex of its source. */
const char *gb_policy_name(const gb_policy_set *ps, size_t i);
const char *gb_policy_path(const gb_policy_set *ps, size_t i);
const char *gb_policy_hash(const gb_policy_set *ps, size_t i);

/* Bind the request (and the team's limits, may be NULL) for the following
 * evaluations.  0 or -1 with err. */
int gb_policy_set_request(gb_policy_set *ps, const gb_pool_spec *spec,
                          const gb_team_cfg *team, char *err, size_t errcap);

/* Evaluate every policy on n offers: filters in order (the first refusal
 * wins), then scores summed for the survivors.  Returns 0, or -1 when a
 * policy failed (error or limit), with err like
 *   "policy 'cost': score: instruction limit (1000000) exceeded"
 * in which case the whole evaluation must be treated as failed. */
int gb_policy_eval(gb_policy_set *ps, const gb_coffer *const *offers,
                   size_t n, gb_policy_result *out, char *err,
                   size_t errcap);

/* Messages from gb.log() since the last call (borrowed until the next
 * evaluation); n set to their count. */
const char *const *gb_policy_logs(const gb_policy_set *ps, size_t *n);

/* Which functions policy i defines: bit 1 filter, bit 2 score. */
int gb_policy_has(const gb_policy_set *ps, size_t i);

/* ---- parameters ----
 *
 * A policy may declare parameters in its returned table:
 *     params = { max_per_gpu_hour = {type = "number", default = nil,
 *                                    doc = "..."} }
 * type is number, integer, string or boolean; default (of that type) is
 * optional (nil when not given); doc a one-line description.  A pool
 * sets them with `policy: [{name: budget, args: {max_per_gpu_hour: 3}}]`
 * and filter and score receive them as a third argument, a read-only
 * table with every declared parameter (the pool's value or the default;
 * reading an undeclared name is an error).  Org-wide policies get their
 * defaults unless the pool lists them with args. */
typedef struct gb_policy_param {
	char *name;
	const char *type;  /* "number", "integer", "string", "boolean"
	                      (static storage) */
	char *def;         /* the default as text; NULL = nil */
	char *doc;         /* NULL when not given */
} gb_policy_param;
/* The parameters policy i declares, *n set to their count (in name
 * order).  Borrowed while the set is held. */
const gb_policy_param *gb_policy_params(const gb_policy_set *ps, size_t i,
                                        size_t *n);
/* Checks an argument of a pool's policy entry (a name or path, resolved
 * in search_path) against the policy's declaration: with key NULL only
 * that the policy loads.  0, or -1 with a message naming the policy and
 * the problem (not found, unknown parameter with the nearest and the
 * list, a value that does not read as the declared type).  Loads through
 * the cache (gb_policy_set_get). */
int gb_policy_check_arg(const char *entry, const gb_strv *search_path,
                        const gb_policy_limits *lim, const char *key,
                        const char *value, char *msg, size_t cap);

/* One field policies see: object ("offer", "offer.bench", "req",
 * "req.gpu", "req.team"), name, type ("string", "integer", "number",
 * "list", "table") and meaning (one line). */
typedef struct gb_policy_field {
	const char *object, *name, *type, *meaning;
} gb_policy_field;
/* Every field of policy_fields.h, offer first; *n set to the count.
 * Static storage. */
const gb_policy_field *gb_policy_fields(size_t *n);

/* ---- the sample offers (policy_sample.c) ----
 *
 * A fixed handful of offers (aws, gcp, azure and on-prem; spot and
 * on-demand; whole GPUs and a MIG slice; on-prem ones with bench) that
 * tests reach as sample_offers() and `policy check --sample` evaluates a
 * policy on. */
/* The sample offers, *n set to their count.  Borrowed, valid for the
 * life of the process.  Thread-safe. */
const gb_coffer *const *gb_policy_sample_offers(size_t *n);

typedef struct gb_policy_sample_row {
	const gb_coffer *offer; /* borrowed: a sample offer */
	char label[256];        /* "cloud/region/type/capacity", as errors
	                           name it */
	int refused;            /* a filter refused it (reason says why) */
	int error;              /* the evaluation failed (reason is the error,
	                           as a plan would report it) */
	char *reason;           /* NULL when kept */
	double score;           /* when kept: the policy's score (0 without
	                           score) */
	gb_strv logs;           /* gb.log output of this offer's evaluation */
} gb_policy_sample_row;

typedef struct gb_policy_sample_report {
	gb_policy_sample_row *rows; /* one per sample offer, in order */
	size_t n;
	int has; /* the policy's functions: bit 1 filter, bit 2 score */
} gb_policy_sample_report;

/* Load the policy file at path and evaluate it on each sample offer
 * alone, as a plan does, with the req of a minimal pool (name sample,
 * gpu H100, everything else the spec defaults).  0, or -1 with err when
 * the file does not load.  Caller frees out with
 * gb_policy_sample_report_free. */
int gb_policy_sample_run(const char *path, const gb_policy_limits *lim,
                         gb_policy_sample_report *out, char *err,
                         size_t errcap);
void gb_policy_sample_report_free(gb_policy_sample_report *r);

/* ---- `gpubroker policy test` / `policy check` (policy_test.c) ----
 *
 * A test file <name>_test.lua defines global test_* functions; each runs
 * in the sandbox with the same limits as a policy call and passes when it
 * returns without error.  Available in tests besides gb.*:
 *   load_policy(name)      the table <dir>/<name>.lua returns
 *   offer{...}, request{...}  read-only offer / req with defaults filled
 *   sample_offers()        the sample offers (below), a list
 *   assert_true(v[, msg])  v == true      assert_false(v[, msg])  v is false/nil
 *   assert_eq(actual, expected[, msg])  deep equality for tables
 *   assert_near(a, b[, eps[, msg]])     |a - b| <= eps (default 1e-9)
 *   assert_match(s, pattern[, msg])     assert_error(fn[, text]) -> message
 */
typedef struct gb_policy_test_case {
	char *file;     /* base name: "cost_test.lua" */
	char *name;     /* "test_cheapest_first"; "(load)" if the file failed */
	int passed;
	char *message;  /* why it failed; NULL when it passed */
	gb_strv logs;   /* gb.log output of the test */
	double ms;
} gb_policy_test_case;

typedef struct gb_policy_test_report {
	gb_policy_test_case *cases;
	size_t n, passed, failed;
} gb_policy_test_report;

/* Run every test_* function of every *_test.lua in dir, sorted by file
 * then name; with filter (a glob, NULL = all) only the tests whose name
 * matches.  Returns 0 when dir could be read and held test files (the
 * outcome is in out->failed), else -1 with err.  Ownership: caller frees
 * out with gb_policy_test_report_free. */
int gb_policy_test_dir(const char *dir, const char *filter,
                       const gb_policy_limits *lim,
                       gb_policy_test_report *out, char *err,
                       size_t errcap);
void gb_policy_test_report_free(gb_policy_test_report *r);

/* Load one file in the sandbox: a policy (must return filter and/or
 * score) or, for *_test.lua, a test file (must define test_* functions).
 * 0 with *has = the policy's functions (bit 1 filter, bit 2 score) or the
 * number of tests; -1 with err "FILE:LINE: message" (or "FILE: message"
 * when there is no line). */
int gb_policy_check_file(const char *path, const gb_policy_limits *lim,
                         int *has, char *err, size_t errcap);

#endif
