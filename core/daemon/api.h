/*
 * api.h -- the daemon's HTTP API (libmicrohttpd): request plumbing shared
 * by the endpoint files (api_pools.c, api_misc.c, api_nodes.c).
 *
 * Every request: bounded body (1 MiB), JSON nesting depth checked before
 * parsing (32), bearer token authentication (tokens stored as SHA-256
 * hex, compared in constant time), roles: viewer (read), operator (read
 * and change their team's pools; other teams' pools are 404), admin
 * (everything).  Errors are JSON {"error": {"code", "message"[,
 * "details"]}} with a message a person can act on.  Every mutation is
 * audited (actor, role, team, action, target, result).
 */
#ifndef GB_API_H
#define GB_API_H

#include <jansson.h>
#include <microhttpd.h>
#include <sys/socket.h>

#include "daemon.h"

#define GB_API_MAX_BODY (1u << 20)
#define GB_API_MAX_DEPTH 32
/* GET /v1/offers lists at most this many (then "truncated": true) */
#define GB_API_MAX_OFFERS 20000

typedef struct gb_api_limits gb_api_limits;
typedef struct gb_api_client gb_api_client;

/* A request's way through the server (api_http.c). */
enum {
	GB_REQ_NEW = 0,   /* headers not looked at yet */
	GB_REQ_BODY,      /* headers accepted; body arriving */
	GB_REQ_RUN,       /* suspended; queued for or run by a handler thread */
	GB_REQ_PARKED,    /* suspended; a long poll waiting, without a thread */
	GB_REQ_DONE       /* the answer is set; the connection thread sends it */
};

typedef struct gb_api_req gb_api_req;
typedef void (*gb_api_fn)(gb_api_req *r);

struct gb_api_req {
	gb_daemon *d;
	struct MHD_Connection *conn;
	const char *method;
	char *path;          /* owned: the path as sent, still %-encoded,
	                        without the query (routing splits it into
	                        segments first and decodes each) */
	gb_buf body;
	int too_big;
	int64_t t0_ns;
	int phase;           /* GB_REQ_* */
	gb_api_req *next, *prev; /* run queue / park list (api_http.c) */
	/* the client: address (for limits and the audit) */
	struct sockaddr_storage peer;
	socklen_t peer_len;
	char peer_text[64];
	/* a long poll: gb_api_park() sets these; the handler runs `again`
	 * when an event of `park_pool` (NULL: any pool) happens or at
	 * park_until_ms (monotonic) */
	gb_api_fn again;
	int64_t park_until_ms;
	char *park_pool;     /* owned */
	int parked_once;     /* it waited: a long poll (metrics.c) */
	int64_t ev_after;    /* events: the last id looked at */
	int64_t ev_since;
	int ev_started;
	int retry_after_s;   /* > 0: sent as Retry-After (429, 503) */
	char etag[24];       /* sent as ETag when set (api_targets.c) */
	int body_timeout;    /* the connection has the body's timeout */
	/* who */
	const char *actor;   /* token name, or "anonymous" */
	gb_role role;
	const char *team;    /* NULL for admins without a team */
	char *actor_copy;    /* owned copies of the token's name and team:  */
	char *team_copy;     /* a SIGHUP reload frees the config's strings */
	json_t *ci_labels;   /* a token exchanged for a CI ID token: the
	                        labels its pools get (owned), else NULL */
	/* result */
	unsigned status;
	json_t *resp;        /* owned; sent as JSON */
	char *text;          /* or a text body (owned) */
	size_t text_len;     /* its length (0: up to its NUL) */
	int gzip_ok;         /* the text may be sent gzip-compressed when the
	                        client accepts it (/metrics) */
	const char *content_type;
	int console;         /* a console file: sent with gb_api_console_csp */
	/* audit */
	int no_audit;        /* an accepted repeat that changed nothing (an
	                        identical demand signal): not audited */
	const char *action;
	char target[160];
	int target_pool;     /* target names a pool (its row is the audit's) */
	char detail[512];
};

/* Set an error response: status, machine code, human message. */
void gb_api_error(gb_api_req *r, unsigned status, const char *code,
                  const char *fmt, ...) GB_PRINTF(4, 5);
/* The state store failed (the calling thread's gb_store_errmsg): 503
 * StoreUnavailable, "state store failed: ...", Retry-After 5. */
void gb_api_store_failed(gb_api_req *r);
/* Parse the body as a JSON object (depth-checked); NULL after setting a
 * 400 error. New reference. */
json_t *gb_api_body_json(gb_api_req *r);
/* The pool spec(s) of a request body: the spec document itself (as
 * `gpubroker apply` sends it) or {"pool": {...}} as in YAML files; no
 * ${VAR} expansion, policies only by name (never a path on the daemon's
 * host).  0 with *set (gb_spec_set_free it), or -1 with the 400 answer
 * set on r. */
int gb_api_body_spec(gb_api_req *r, gb_spec_set *set);
/* Query parameter, or NULL. */
const char *gb_api_query(gb_api_req *r, const char *key);
/* Role/team checks: 1 allowed; else sets 403/404 and returns 0. */
int gb_api_can_write(gb_api_req *r);
int gb_api_sees_team(gb_api_req *r, const char *team);
int gb_api_is_admin(gb_api_req *r);
/* The pool's team, from the store: 0 found, else sets 404 (also for
 * pools of other teams, so they cannot be probed). */
int gb_api_pool_visible(gb_api_req *r, const char *pool);

/* Long poll: answer later.  The calling handler returns without an
 * answer; the request waits without a thread until an event of `pool`
 * (NULL: any) or until_ms (monotonic), then `again` runs (with the
 * config read lock held, as every handler). */
void gb_api_park(gb_api_req *r, gb_api_fn again, const char *pool,
                 int64_t until_ms);
/* An engine event of `pool` (may be NULL): wake the long polls that wait
 * for it.  Any thread. */
void gb_api_wake(gb_daemon *d, const char *pool);
/* Every long poll looks again now (the daemon is stopping). */
void gb_api_wake_all(gb_daemon *d);
/* After freeing `bytes` of a request's work: from 1 MiB on, the freed
 * memory goes back to the system (glibc's malloc_trim), so a large
 * answer does not leave the daemon's RSS at its peak.  Any thread. */
void gb_api_give_back(size_t bytes);
/* The server's per-client and per-token budgets (api_limits.c). */
gb_api_limits *gb_api_srv_limits(gb_daemon *d);
/* The server's own counters for /metrics (connections, refusals, long
 * polls, threads), appended to b. */
void gb_api_metrics(gb_daemon *d, gb_buf *b);

/* Handler side of a request (api.c): route, run and audit it.  Called by
 * the handler threads with the config read lock held. */
void gb_api_run(gb_api_req *r);
/* On the connection thread: answer GET /v1/pools and GET /metrics from
 * their snapshots when that needs no waiting (no store, no lock held
 * by another).  1 answered (r->status set), 0 leave it to a handler
 * thread. */
int gb_api_run_now(gb_api_req *r);
/* Audit a refused or accepted mutation (api.c); no-op for others. */
void gb_api_audit_request(gb_api_req *r);

/* ---- api_limits.c: what the API counts per client address and per
 * token.  One instance per daemon, shared by every thread (its own
 * mutex). ---- */

gb_api_limits *gb_api_limits_new(void);
void gb_api_limits_free(gb_api_limits *l);
/* May a new connection from sa be accepted?  0 yes; else 1 = the total
 * cap, 2 = this client's cap (counted in the stats). max_per_client 0 =
 * no per-client cap. */
int gb_api_conn_check(gb_api_limits *l, const struct sockaddr *sa,
                      int max_total, int max_per_client);
/* A connection was opened / closed: the handle (borrowed, valid until
 * its close) counts it against its address. */
gb_api_client *gb_api_conn_opened(gb_api_limits *l, const struct sockaddr *sa);
void gb_api_conn_closed(gb_api_limits *l, gb_api_client *c);
/* A refusal from sa may be written to the audit: 1 yes (and *dropped is
 * how many refusals of this address were not written since the last one
 * that was), 0 no (counted).  per_minute 0 = every refusal is written. */
int gb_api_refusal_admit(gb_api_limits *l, const struct sockaddr *sa,
                         int per_minute, uint64_t *dropped);
/* A request counted against the budget of `who` (a token's name for
 * reconciles; "demand:TOKEN", "hb:INSTANCE"): 1 allowed, 0 refused with
 * *retry_after_s set.  Budgets unused for a minute are forgotten. */
int gb_api_token_admit(gb_api_limits *l, const char *who, int per_minute,
                       int *retry_after_s);
/* The same for n units at once (a plan of n pools): 1 allowed (n taken),
 * 0 refused with *retry_after_s = when n are back (n over per_minute
 * never fits: the caller caps n below it). */
int gb_api_token_take(gb_api_limits *l, const char *who, int per_minute,
                      int n, int *retry_after_s);
typedef struct gb_api_limit_stats {
	uint64_t open;              /* connections open now */
	uint64_t opened;            /* since start */
	uint64_t refused_total;     /* refused: the total cap */
	uint64_t refused_client;    /* refused: a client's cap */
	uint64_t refusals_dropped;  /* refusals not written to the audit */
	uint64_t token_limited;     /* requests refused by a token's budget */
	uint64_t clients;           /* addresses tracked now */
} gb_api_limit_stats;
void gb_api_limits_stats(gb_api_limits *l, gb_api_limit_stats *out);

/* Rebuilds the daemon's catalog (shipped + stored prices + live driver
 * offers) and hands it to the engine.  Called with the config read lock
 * held, as every handler is; takes the write lock meanwhile so no plan
 * runs on the old catalog while it is freed. */
void gb_api_reload_offers(gb_api_req *r);

/* Endpoint handlers (return after setting r->status and r->resp). */
void gb_api_pools_list(gb_api_req *r);
/* GET /v1/pools from the current snapshot without waiting: 1 answered,
 * 0 not now (run gb_api_pools_list on a handler thread). */
int gb_api_pools_list_now(gb_api_req *r);
void gb_api_pool_get(gb_api_req *r, const char *name);
void gb_api_pool_put(gb_api_req *r, const char *name);
void gb_api_pool_delete(gb_api_req *r, const char *name);
void gb_api_pool_scale(gb_api_req *r, const char *name);
void gb_api_pool_demand(gb_api_req *r, const char *name);
void gb_api_pool_diff(gb_api_req *r, const char *name);
void gb_api_pool_instances(gb_api_req *r, const char *name);
/* GET /v1/pools/NAME/targets (api_targets.c). */
void gb_api_pool_targets(gb_api_req *r, const char *name);
void gb_api_pool_plan(gb_api_req *r, const char *name);
void gb_api_pool_spec(gb_api_req *r, const char *name);
void gb_api_heartbeat(gb_api_req *r, const char *id);
/* Keeps a heartbeat of inst (util: the busiest GPU, 0..1): the
 * instance's and its pool's last heartbeat, a `usage` sample, GPU use
 * for idle_timeout above 5%.  0, or -1 after the 503 (the store
 * failed).  api_pools.c */
int gb_api_keep_heartbeat(gb_api_req *r, const gb_inst_row *inst,
                          double util);
/* POST /v1/agent/register and /v1/agent/report (no bearer token of the
 * config: a bootstrap token, then the instance credential).
 * api_agent.c */
void gb_api_agent_register(gb_api_req *r);
void gb_api_agent_report(gb_api_req *r);
void gb_api_agent_package(gb_api_req *r);
void gb_api_plan(gb_api_req *r);
void gb_api_offers(gb_api_req *r);
void gb_api_events(gb_api_req *r);
void gb_api_cost(gb_api_req *r);
void gb_api_usage(gb_api_req *r);
void gb_api_drivers(gb_api_req *r);
void gb_api_audit(gb_api_req *r);
void gb_api_gc(gb_api_req *r);
void gb_api_reconcile(gb_api_req *r);
void gb_api_offers_refresh(gb_api_req *r, const char *name);
void gb_api_nodes(gb_api_req *r);
void gb_api_sites(gb_api_req *r);
void gb_api_probe(gb_api_req *r);
/* POST /v1/nodes/NODE/clear (admin): the node's failure mark and failing
 * probe report are forgotten, so it is offered again. */
void gb_api_node_clear(gb_api_req *r, const char *name);
void gb_api_whoami(gb_api_req *r);
/* GET /v1/openapi.json: the API's description (docs/openapi.json, built
 * into the binary), without a token. */
void gb_api_openapi(gb_api_req *r);
/* The text of docs/openapi.json (generated at build: scripts/embed.sh),
 * NUL-terminated, gb_openapi_json_len bytes before the NUL. */
extern const unsigned char gb_openapi_json[];
extern const size_t gb_openapi_json_len;
/* The i-th /v1 route: its method, its path as the description names it
 * ("/v1/pools/{name}/scale", into path, cap bytes) and the least role
 * that may call it ("public" = no token, "viewer", "operator",
 * "admin"); method and role are static strings.  0, or -1 past the
 * last route. */
int gb_api_route_at(size_t i, const char **method, char *path, size_t cap,
                    const char **least_role);
/* GET /v1/queue: the shared-GPU queue (api_queue.c). */
void gb_api_queue(gb_api_req *r);

/* ---- api_guard.c: what a browser could be made to send (its header
 * comment has the rules).  0 allowed; else the 403/415 is set on r and
 * -1.  guard_host: the Host header's name (DNS rebinding), for every
 * request but the probes; guard_write: a change's Origin and its body's
 * Content-Type, after authentication. ---- */
int gb_api_guard_host(gb_api_req *r);
int gb_api_guard_write(gb_api_req *r);
/* Whether Content-Type ct (may be NULL) is one of types (parameters
 * after ';' allowed, case ignored). */
int gb_api_type_in(const char *ct, const char *const *types, size_t n);
/* ---- api_auth.c: the OIDC token exchange ---- */
/* POST /v1/auth/oidc (no bearer token needed). */
void gb_api_auth_oidc(gb_api_req *r);
/* The exchanged token whose SHA-256 is hex: 0 with r's actor, role, team
 * and ci_labels set; 1 none (unknown, expired, or no auth.oidc); -1 a
 * store error. */
int gb_api_xtoken_auth(gb_api_req *r, const char *hex);
/* Adds the labels of r's exchanged token to p (overriding the spec's own
 * of those names); nothing for other tokens. */
void gb_api_ci_labels(gb_api_req *r, gb_pool_spec *p);
/* The pool's "ci" event: applied by a CI job, with its labels. */
void gb_api_ci_event(gb_api_req *r, const char *pool);

/* ---- api_console.c: the web console's files.  GET / and GET
 * /console/NAME: 1 answered (a file, 404 or 405), 0 not a console path.
 * Public (no token): the API decides what a token may see. ---- */
int gb_api_console(gb_api_req *r);
/* The Content-Security-Policy every console answer carries. */
extern const char gb_api_console_csp[];

#endif
