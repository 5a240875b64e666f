/* api.c -- a request's own part: body, authentication, routing, errors,
 * audit.  The server around it (connections, threads, limits) is
 * api_http.c. */
#include "api.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

void gb_api_error(gb_api_req *r, unsigned status, const char *code,
                  const char *fmt, ...)
{
	va_list ap;
	char *msg;
	va_start(ap, fmt);
	msg = gb_xvasprintf(fmt, ap);
	va_end(ap);
	/* Messages echo what the client sent (a pool name from the URL):
	 * jansson refuses invalid UTF-8, which would leave the error
	 * without its body, so such bytes become '?', and so do control
	 * characters other than newline and tab. */
	for (size_t i = 0, n = strlen(msg); (i += gb_utf8_check(msg + i, n - i)) < n;
	     i++)
		msg[i] = '?';
	for (char *p = msg; *p; p++)
		if ((*p > 0 && *p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
			*p = '?';
	json_decref(r->resp);
	r->resp = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message",
	                    msg);
	r->status = status;
	snprintf(r->detail, sizeof(r->detail), "%s", msg);
	free(msg);
}

void gb_api_store_failed(gb_api_req *r)
{
	r->retry_after_s = 5;
	gb_api_error(r, 503, "StoreUnavailable", "state store failed: %s; "
	             "nothing more was done: retry when it works again",
	             gb_store_errmsg(r->d->store));
}

/* Nesting depth of a JSON text without parsing it (strings skipped). */
static int json_depth(const char *s, size_t n)
{
	int depth = 0, max = 0, in_str = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"')
			in_str = 1;
		else if (c == '{' || c == '[') {
			if (++depth > max)
				max = depth;
		} else if (c == '}' || c == ']')
			depth--;
	}
	return max;
}

json_t *gb_api_body_json(gb_api_req *r)
{
	json_error_t je;
	json_t *j;
	if (!r->body.len) {
		gb_api_error(r, 400, "EmptyBody",
		             "this request needs a JSON body");
		return NULL;
	}
	if (json_depth(r->body.data, r->body.len) > GB_API_MAX_DEPTH) {
		gb_api_error(r, 400, "TooDeep",
		             "JSON nested deeper than %d levels", GB_API_MAX_DEPTH);
		return NULL;
	}
	j = json_loadb(r->body.data, r->body.len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		gb_api_error(r, 400, "InvalidJSON",
		             "body is not valid JSON: line %d column %d: %s",
		             je.line, je.column, je.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		gb_api_error(r, 400, "InvalidJSON",
		             "body must be a JSON object");
		return NULL;
	}
	return j;
}

const char *gb_api_query(gb_api_req *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

int gb_api_is_admin(gb_api_req *r)
{
	if (r->role == GB_ROLE_ADMIN)
		return 1;
	gb_api_error(r, 403, "Forbidden",
	             "this needs an admin token; token '%s' is %s",
	             r->actor, gb_role_name(r->role));
	return 0;
}

int gb_api_can_write(gb_api_req *r)
{
	if (r->role != GB_ROLE_VIEWER)
		return 1;
	gb_api_error(r, 403, "Forbidden",
	             "token '%s' is a viewer and cannot change anything; use "
	             "an operator or admin token", r->actor);
	return 0;
}

int gb_api_sees_team(gb_api_req *r, const char *team)
{
	return r->role == GB_ROLE_ADMIN || !r->team ||
	       (team && strcmp(team, r->team) == 0);
}

int gb_api_pool_visible(gb_api_req *r, const char *pool)
{
	gb_pool_row row;
	int rc = gb_store_pool_get(r->d->store, pool, &row);
	int ok = rc == 0 && gb_api_sees_team(r, row.team);
	if (rc == 0)
		gb_pool_row_free(&row);
	if (!ok) {
		if (rc < 0)
			gb_api_store_failed(r);
		else
			gb_api_error(r, 404, "NotFound", "no pool named %s", pool);
		return 0;
	}
	return 1;
}

/* Authenticates; 0 on success, else the error response is set (-1), or
 * 1 when the token is none of the config's and only the store can tell
 * (exchanged CI tokens) but use_store is 0: nothing is set. */
static int authenticate(gb_api_req *r, int use_store)
{
	const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                            "Authorization");
	const gb_config *cfg = r->d->cfg;
	char hex[65];
	const gb_token_cfg *hit = NULL;
	if (!cfg->ntokens && !cfg->noidc) {
		/* no tokens configured: loopback-only daemon (enforced at
		 * start), everyone is admin */
		r->actor = "anonymous";
		r->role = GB_ROLE_ADMIN;
		r->team = NULL;
		return 0;
	}
	if (!h || strncasecmp(h, "Bearer ", 7) != 0 || !h[7]) {
		gb_api_error(r, 401, "Unauthenticated",
		             "missing bearer token: send 'Authorization: Bearer "
		             "<token>' (the CLI uses --token or GPUBROKER_TOKEN)");
		return -1;
	}
	gb_sha256_hex(h + 7, strlen(h + 7), hex);
	/* compare against every token (constant time per token) */
	for (size_t i = 0; i < cfg->ntokens; i++)
		if (gb_ct_streq(hex, cfg->tokens[i].sha256) && !hit)
			hit = &cfg->tokens[i];
	if (!hit) {
		int rc = cfg->noidc && !use_store ? 1
		         : gb_api_xtoken_auth(r, hex);
		if (rc == 1 && use_store)
			gb_api_error(r, 401, "Unauthenticated",
			             "the bearer token is not valid for this broker"
			             "%s", cfg->noidc ? " (a token exchanged for a "
			             "CI ID token ends with it: sign in again)" : "");
		else if (rc < 0)
			gb_api_error(r, 500, "StoreError", "%s",
			             gb_store_errmsg(r->d->store));
		return rc == 1 && !use_store ? 1 : rc == 0 ? 0 : -1;
	}
	if (strlen(h + 7) < GB_TOKEN_MIN_LEN) {
		gb_log(GB_LOG_WARN, "api", "token %s is shorter than %d "
		       "characters: refused; give it a longer one (openssl rand "
		       "-hex 24) and put its SHA-256 in the config",
		       hit->name, GB_TOKEN_MIN_LEN);
		gb_api_error(r, 401, "Unauthenticated",
		             "this token is shorter than %d characters, which "
		             "this broker does not accept: ask its admin for a "
		             "longer one", GB_TOKEN_MIN_LEN);
		return -1;
	}
	free(r->actor_copy); /* authenticated on the connection thread */
	free(r->team_copy);  /* first (gb_api_run_now), then here */
	r->actor_copy = gb_xstrdup(hit->name);
	r->team_copy = hit->team ? gb_xstrdup(hit->team) : NULL;
	r->actor = r->actor_copy;
	r->role = hit->role;
	r->team = r->team_copy;
	return 0;
}

/* Whose series of /metrics the caller reads: NULL = every team's
 * (admins, tokens without a team), else its team's only. */
static const char *metrics_team(const gb_api_req *r)
{
	return r->role == GB_ROLE_ADMIN ? NULL : r->team;
}

static int is_mutation(const char *m)
{
	return strcmp(m, "GET") != 0 && strcmp(m, "HEAD") != 0;
}

void gb_api_audit_request(gb_api_req *r)
{
	gb_audit_row a;
	char result[16], detail[sizeof(r->detail) + 96];
	uint64_t dropped = 0;
	if (!r->action || !r->method || !is_mutation(r->method) ||
	    (r->no_audit && r->status < 400))
		return;
	/* Refusals are written within a budget per client address: a client
	 * that sends refused requests in a loop must not fill the disk with
	 * audit rows (the rest are counted in
	 * gpubroker_audit_refusals_dropped_total, and the next row written
	 * for that address says how many were left out). */
	if (r->status >= 400 && r->d->srv &&
	    !gb_api_refusal_admit(gb_api_srv_limits(r->d),
	                          r->peer_len ? (const struct sockaddr *)&r->peer
	                                      : NULL,
	                          r->d->cfg->refusals_per_minute, &dropped))
		return;
	memset(&a, 0, sizeof(a));
	snprintf(result, sizeof(result), "%u", r->status);
	a.actor = (char *)(r->actor ? r->actor : "unauthenticated");
	a.role = (char *)(r->actor ? gb_role_name(r->role) : "-");
	a.team = (char *)r->team;
	a.action = (char *)r->action;
	a.target = r->target;
	/* the pool's team and incarnation are its row's now (after the
	 * request): a destroy's are the old owner's, a reused name's apply
	 * the new one's */
	a.pool = r->target_pool ? r->target : NULL;
	a.result = result;
	snprintf(detail, sizeof(detail), "%s%s%s", r->detail,
	         r->detail[0] && r->peer_text[0] ? "; " : "",
	         r->peer_text[0] ? "from " : "");
	if (r->peer_text[0])
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
		         "%s", r->peer_text);
	if (dropped)
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
		         " (and %llu earlier refusals from this address, over "
		         "daemon.refusals_per_minute, not written)",
		         (unsigned long long)dropped);
	a.detail = detail[0] ? detail : NULL;
	if (gb_store_audit(r->d->store, &a) != 0)
		gb_log(GB_LOG_ERROR, "api", "cannot write audit row: %s",
		       gb_store_errmsg(r->d->store));
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Splits the path as sent ("/v1/pools/NAME/scale", still %-encoded)
 * into segments at its '/' and then decodes each, so an encoded slash
 * (%2F) stays inside its segment and never routes.  A segment that
 * decodes to a NUL is cut there and marked with a byte no name may hold
 * (so it matches nothing).  Returns the count (6 = more than 5). */
static int split_path(const char *path, char parts[5][160])
{
	int n = 0;
	const char *p = path;
	while (*p == '/')
		p++;
	while (*p && n < 5) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p), w = 0;
		for (size_t i = 0; i < len && w < 159; i++) {
			int hi, lo;
			char c = p[i];
			if (c == '%' && i + 2 < len &&
			    (hi = hexval(p[i + 1])) >= 0 &&
			    (lo = hexval(p[i + 2])) >= 0) {
				c = (char)(hi * 16 + lo);
				i += 2;
			}
			if (c == '\0')
				c = '\x7f';
			parts[n][w++] = c;
		}
		parts[n][w] = '\0';
		n++;
		if (!e)
			break;
		p = e + 1;
		if (!*p)
			break;
	}
	return *p && n == 5 ? 6 : n;
}

void gb_api_reload_offers(gb_api_req *r)
{
	gb_catalog *old;
	/* drop our read lock, take the write lock, swap, come back to a
	 * read lock */
	pthread_rwlock_unlock(&r->d->cfg_lock);
	pthread_rwlock_wrlock(&r->d->cfg_lock);
	old = gb_runtime_reload_offers(&r->d->app.rt, r->d->store);
	gb_engine_set_catalog(r->d->eng, r->d->app.rt.cat);
	gb_catalog_free(old);
	pthread_rwlock_unlock(&r->d->cfg_lock);
	pthread_rwlock_rdlock(&r->d->cfg_lock);
}

/* The /v1 routes: /v1/<collection>[/<seg>[/<tail>]].  seg: "{name}" or
 * "{id}" (any segment, handed to fn1), a literal (that segment only), or
 * NULL (none).  action: NULL = GETs (not audited), "" = a POST not worth
 * auditing (plan, diff, heartbeat).  who: the least role that may call
 * it (checked here, before the handler; tokens of other teams are the
 * handlers' business).  docs/openapi.json describes exactly these
 * (tests/unit/test_openapi.c compares them, roles included). */
enum { WHO_PUBLIC, WHO_VIEWER, WHO_OPERATOR, WHO_ADMIN };

/* POST /v1/auth/oidc: how a CI job gets its token, so no token is asked;
 * a browser's cross-origin or untyped POST is refused as any change's
 * (api_guard.c).  The exchange audits itself (oidc-exchange). */
static void auth_oidc(gb_api_req *r, const char *seg)
{
	(void)seg;
	if (gb_api_guard_write(r) == 0)
		gb_api_auth_oidc(r);
}

/* The instance agents' routes (api_agent.c): a bootstrap token, then an
 * instance credential, never an API token; the package is pinned by its
 * SHA-256 in the instances' user data. */
static void agent_register(gb_api_req *r, const char *seg)
{
	(void)seg;
	if (gb_api_guard_write(r) == 0)
		gb_api_agent_register(r);
}

static void agent_report(gb_api_req *r, const char *seg)
{
	(void)seg;
	if (gb_api_guard_write(r) == 0)
		gb_api_agent_report(r);
}

static void agent_package(gb_api_req *r, const char *seg)
{
	(void)seg;
	gb_api_agent_package(r);
}

static const char *const who_names[] = {"public", "viewer", "operator",
                                         "admin"};
static const struct route {
	const char *method;
	const char *collection;
	const char *seg;
	const char *tail;
	const char *action;
	int who;
	void (*fn0)(gb_api_req *r);
	void (*fn1)(gb_api_req *r, const char *name);
} routes[] = {
	{"GET", "openapi.json", NULL, NULL, NULL, WHO_PUBLIC, gb_api_openapi, NULL},
	{"POST", "auth", "oidc", NULL, "", WHO_PUBLIC, NULL, auth_oidc},
	{"GET", "agent", "package", NULL, NULL, WHO_PUBLIC, NULL, agent_package},
	{"POST", "agent", "register", NULL, "", WHO_PUBLIC, NULL,
	 agent_register},
	{"POST", "agent", "report", NULL, "", WHO_PUBLIC, NULL, agent_report},
	{"GET", "pools", NULL, NULL, NULL, WHO_VIEWER, gb_api_pools_list, NULL},
	{"GET", "pools", "{name}", NULL, NULL, WHO_VIEWER, NULL, gb_api_pool_get},
	{"PUT", "pools", "{name}", NULL, "apply", WHO_OPERATOR, NULL,
	 gb_api_pool_put},
	{"DELETE", "pools", "{name}", NULL, "destroy", WHO_OPERATOR, NULL,
	 gb_api_pool_delete},
	{"POST", "pools", "{name}", "scale", "scale", WHO_OPERATOR, NULL,
	 gb_api_pool_scale},
	{"POST", "pools", "{name}", "demand", "demand", WHO_OPERATOR, NULL,
	 gb_api_pool_demand},
	{"POST", "pools", "{name}", "diff", "", WHO_VIEWER, NULL,
	 gb_api_pool_diff},
	{"GET", "pools", "{name}", "instances", NULL, WHO_VIEWER, NULL,
	 gb_api_pool_instances},
	{"GET", "pools", "{name}", "targets", NULL, WHO_VIEWER, NULL,
	 gb_api_pool_targets},
	{"GET", "pools", "{name}", "plan", NULL, WHO_VIEWER, NULL,
	 gb_api_pool_plan},
	{"GET", "pools", "{name}", "spec", NULL, WHO_VIEWER, NULL,
	 gb_api_pool_spec},
	{"POST", "instances", "{id}", "heartbeat", "", WHO_OPERATOR, NULL,
	 gb_api_heartbeat},
	{"POST", "plan", NULL, NULL, "", WHO_VIEWER, gb_api_plan, NULL},
	{"GET", "offers", NULL, NULL, NULL, WHO_VIEWER, gb_api_offers, NULL},
	{"POST", "offers", "refresh", NULL, "refresh-prices", WHO_ADMIN, NULL,
	 gb_api_offers_refresh},
	{"GET", "events", NULL, NULL, NULL, WHO_VIEWER, gb_api_events, NULL},
	{"GET", "cost", NULL, NULL, NULL, WHO_VIEWER, gb_api_cost, NULL},
	{"GET", "usage", NULL, NULL, NULL, WHO_VIEWER, gb_api_usage, NULL},
	{"GET", "drivers", NULL, NULL, NULL, WHO_VIEWER, gb_api_drivers, NULL},
	{"GET", "audit", NULL, NULL, NULL, WHO_ADMIN, gb_api_audit, NULL},
	{"POST", "gc", NULL, NULL, "gc", WHO_ADMIN, gb_api_gc, NULL},
	{"POST", "reconcile", NULL, NULL, "reconcile", WHO_OPERATOR,
	 gb_api_reconcile, NULL},
	{"GET", "nodes", NULL, NULL, NULL, WHO_VIEWER, gb_api_nodes, NULL},
	{"GET", "sites", NULL, NULL, NULL, WHO_VIEWER, gb_api_sites, NULL},
	{"POST", "probe", NULL, NULL, "probe", WHO_ADMIN, gb_api_probe, NULL},
	{"POST", "nodes", "{name}", "clear", "nodes-clear", WHO_ADMIN, NULL,
	 gb_api_node_clear},
	{"GET", "whoami", NULL, NULL, NULL, WHO_VIEWER, gb_api_whoami, NULL},
	{"GET", "queue", NULL, NULL, NULL, WHO_VIEWER, gb_api_queue, NULL},
};

/* /readyz is public: it says "state store unreachable" and no more (the
 * store's error names its host, port, user and database); the detail
 * goes to the log, at most once a minute however often it is probed. */
static void readyz_log(gb_daemon *d)
{
	static int64_t last_ms;
	int64_t now = gb_mono_ms(), was = __atomic_load_n(&last_ms,
	                                                 __ATOMIC_RELAXED);
	if ((was && now - was < 60000) ||
	    !__atomic_compare_exchange_n(&last_ms, &was, now, 0,
	                                 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	gb_log(GB_LOG_WARN, "api", "/readyz: not ready, the state store is "
	       "unreachable: %s", gb_store_errmsg(d->store));
}

int gb_api_route_at(size_t i, const char **method, char *path, size_t cap,
                    const char **least_role)
{
	const struct route *rt;
	if (i >= GB_ARRAY_LEN(routes))
		return -1;
	rt = &routes[i];
	*method = rt->method;
	*least_role = who_names[rt->who];
	snprintf(path, cap, "/v1/%s%s%s%s%s", rt->collection,
	         rt->seg ? "/" : "", rt->seg ? rt->seg : "",
	         rt->tail ? "/" : "", rt->tail ? rt->tail : "");
	return 0;
}

/* The route of a split /v1 path: the route, or NULL with *path_matched
 * set when another method has that path.  public_only: only the routes
 * that need no token. */
static const struct route *find_route(char parts[5][160], int n,
                                      const char *m, int public_only,
                                      int *path_matched)
{
	*path_matched = 0;
	if (n < 2 || n > 4 || strcmp(parts[0], "v1") != 0)
		return NULL;
	for (size_t i = 0; i < GB_ARRAY_LEN(routes); i++) {
		const struct route *rt = &routes[i];
		int want = 2 + (rt->seg ? 1 : 0) + (rt->tail ? 1 : 0);
		if ((public_only && rt->who != WHO_PUBLIC) || n != want ||
		    strcmp(parts[1], rt->collection) != 0 ||
		    (rt->seg && rt->seg[0] != '{' &&
		     strcmp(parts[2], rt->seg) != 0) ||
		    (rt->tail && strcmp(parts[3], rt->tail) != 0))
			continue;
		*path_matched = 1;
		if (strcmp(m, rt->method) == 0)
			return rt;
	}
	return NULL;
}

static void call_route(gb_api_req *r, const struct route *rt,
                       char parts[5][160])
{
	if (rt->seg) {
		snprintf(r->target, sizeof(r->target), "%s", parts[2]);
		r->target_pool = strcmp(rt->collection, "pools") == 0;
	}
	/* a refusal is audited under the route's action (or the method,
	 * api_http.c, for those not worth auditing when accepted) */
	if (rt->action && *rt->action)
		r->action = rt->action;
	if ((rt->who == WHO_OPERATOR && !gb_api_can_write(r)) ||
	    (rt->who == WHO_ADMIN && !gb_api_is_admin(r)))
		return;
	if (rt->action && !*rt->action)
		r->action = NULL;
	if (rt->seg)
		rt->fn1(r, parts[2]);
	else
		rt->fn0(r);
}

static void route(gb_api_req *r)
{
	char parts[5][160];
	int n = split_path(r->path, parts), path_matched;
	const char *m = r->method;
	const struct route *rt;

	if (n == 1 && strcmp(parts[0], "healthz") == 0) {
		r->resp = json_pack("{s:s}", "status", "ok");
		r->status = 200;
		return;
	}
	if (n == 1 && strcmp(parts[0], "readyz") == 0) {
		/* a replica whose database is unreachable takes no traffic */
		int db = !r->d->ready || !gb_store_is_shared(r->d->store) ||
		         gb_store_ping(r->d->store) == 0;
		r->status = r->d->ready && db ? 200 : 503;
		r->resp = json_pack("{s:s}", "status",
		                    !r->d->ready ? "starting"
		                    : db ? "ready" : "state store unreachable");
		if (!db)
			readyz_log(r->d);
		return;
	}
	/* DNS rebinding, cross-origin writes, untyped bodies: api_guard.c */
	if (gb_api_guard_host(r) != 0 || gb_api_console(r))
		return;
	/* routes without a token: the API's description */
	if ((rt = find_route(parts, n, m, 1, &path_matched)) != NULL) {
		call_route(r, rt, parts);
		return;
	}
	if (authenticate(r, 1) != 0 || gb_api_guard_write(r) != 0)
		return;
	/* Changes need the state store: refused at once, with why, while a
	 * shared one is unreachable (reads answer what they can). */
	if (strcmp(m, "GET") != 0 && strcmp(m, "HEAD") != 0 &&
	    gb_store_is_shared(r->d->store) && gb_store_ping(r->d->store) != 0) {
		r->retry_after_s = 5;
		gb_api_error(r, 503, "StoreUnavailable", "%s; nothing was "
		             "changed: retry when it is back (the daemon "
		             "reconnects by itself)", gb_store_errmsg(r->d->store));
		return;
	}
	if (n == 1 && strcmp(parts[0], "metrics") == 0 && strcmp(m, "GET") == 0) {
		r->text = gb_metrics_for_team(gb_metrics_render(r->d),
		                              metrics_team(r));
		r->content_type = "text/plain; version=0.0.4";
		r->gzip_ok = 1;
		r->status = 200;
		return;
	}
	rt = find_route(parts, n, m, 0, &path_matched);
	if (rt) {
		call_route(r, rt, parts);
		return;
	}
	if (path_matched) {
		gb_api_error(r, 405, "MethodNotAllowed",
		             "%s is not allowed on %s", m, r->path);
		return;
	}
	gb_api_error(r, 404, "NotFound",
	             "no endpoint %s %s (see README, 'The daemon')", m, r->path);
}

void gb_api_run(gb_api_req *r)
{
	if (r->too_big)
		gb_api_error(r, 413, "TooLarge",
		             "request body larger than %u bytes", GB_API_MAX_BODY);
	else
		route(r);
}

int gb_api_run_now(gb_api_req *r)
{
	int metrics = strcmp(r->path, "/metrics") == 0, done = 0;
	if (strcmp(r->method, "GET") != 0 || r->too_big ||
	    (!metrics && strcmp(r->path, "/v1/pools") != 0))
		return 0;
	/* a reload holds the write lock: not now */
	if (pthread_rwlock_tryrdlock(&r->d->cfg_lock) != 0)
		return 0;
	if (gb_api_guard_host(r) != 0) {
		done = 1; /* the 403 */
	} else if ((done = authenticate(r, 0)) != 0) {
		/* -1: the 401 (GETs are not audited); 1: a handler thread
		 * asks the store */
		done = done < 0;
	} else if (metrics) {
		if ((r->text = gb_metrics_render_now(r->d)) != NULL) {
			r->text = gb_metrics_for_team(r->text, metrics_team(r));
			r->content_type = "text/plain; version=0.0.4";
			r->gzip_ok = 1;
			r->status = 200;
			done = 1;
		}
	} else {
		done = gb_api_pools_list_now(r);
	}
	pthread_rwlock_unlock(&r->d->cfg_lock);
	return done;
}
