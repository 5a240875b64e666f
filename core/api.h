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

#include "daemon.h"

#define GB_API_MAX_BODY (1u << 20)
#define GB_API_MAX_DEPTH 32
/* GET /v1/offers lists at most this many (then "truncated": true) */
#define GB_API_MAX_OFFERS 20000

typedef struct gb_api_req {
	gb_daemon *d;
	struct MHD_Connection *conn;
	const char *method;
	const char *path;
	gb_buf body;
	int too_big;
	int64_t t0_ns;
	/* who */
	const char *actor;   /* token name, or "anonymous" */
	gb_role role;
	const char *team;    /* NULL for admins without a team */
	char *actor_copy;    /* owned copies of the token's name and team:  */
	char *team_copy;     /* a SIGHUP reload frees the config's strings */
	/* result */
	unsigned status;
	json_t *resp;        /* owned; sent as JSON */
	char *text;          /* or a text body (owned) */
	const char *content_type;
	/* audit */
	const char *action;
	char target[160];
	char detail[512];
} gb_api_req;

/* Set an error response: status, machine code, human message. */
void gb_api_error(gb_api_req *r, unsigned status, const char *code,
                  const char *fmt, ...) GB_PRINTF(4, 5);
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

/* Rebuilds the daemon's catalog (shipped + stored prices + live driver
 * offers) and hands it to the engine.  Called with the config read lock
 * held, as every handler is; takes the write lock meanwhile so no plan
 * runs on the old catalog while it is freed. */
void gb_api_reload_offers(gb_api_req *r);

/* Endpoint handlers (return after setting r->status and r->resp). */
void gb_api_pools_list(gb_api_req *r);
void gb_api_pool_get(gb_api_req *r, const char *name);
void gb_api_pool_put(gb_api_req *r, const char *name);
void gb_api_pool_delete(gb_api_req *r, const char *name);
void gb_api_pool_scale(gb_api_req *r, const char *name);
void gb_api_pool_diff(gb_api_req *r, const char *name);
void gb_api_pool_instances(gb_api_req *r, const char *name);
void gb_api_heartbeat(gb_api_req *r, const char *id);
void gb_api_plan(gb_api_req *r);
void gb_api_offers(gb_api_req *r);
void gb_api_events(gb_api_req *r);
void gb_api_cost(gb_api_req *r);
void gb_api_drivers(gb_api_req *r);
void gb_api_audit(gb_api_req *r);
void gb_api_gc(gb_api_req *r);
void gb_api_reconcile(gb_api_req *r);
void gb_api_offers_refresh(gb_api_req *r, const char *name);
void gb_api_nodes(gb_api_req *r);
void gb_api_sites(gb_api_req *r);
void gb_api_probe(gb_api_req *r);

#endif
