/* remote_backend.c -- the pool commands against a daemon's HTTP API
 * (backend.h); gb_remote_call (remote.c) makes each call. */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "progress.h"
#include "remote.h"
#include "timejson.h"

typedef struct remote_backend {
	gb_backend b;
	gb_progress prog;
	int progress;   /* print the pool's events while waiting */
	char *marked;   /* the pool whose events after `after` are new */
	int64_t after;  /* the last event of it already seen */
} remote_backend;

static remote_backend *rb(gb_backend *b)
{
	return (remote_backend *)(void *)b;
}

/* Clears the live progress line before anything else is printed. */
static void progress_done(remote_backend *r)
{
	if (r->progress)
		gb_progress_done(&r->prog);
}

/* How long a wait without a timeout tries to get a lost daemon back. */
#define RECONNECT_DEFAULT_MS (10 * 60 * 1000)
/* The retry's backoff: doubles from the first to the cap. */
#define BACKOFF_FIRST_MS 250
#define BACKOFF_CAP_MS 4000
/* An events long poll waits at most this long (s) for the first event,
 * so the pool is looked at between them. */
#define EVENTS_WAIT_S 2

/* How long an events long poll may wait before deadline (0: none). */
static long poll_s(int64_t deadline)
{
	int64_t left = deadline ? deadline - gb_mono_ms() : EVENTS_WAIT_S * 1000;
	if (left <= 0)
		return 0;
	return left >= EVENTS_WAIT_S * 1000 ? EVENTS_WAIT_S
	                                    : (long)((left + 999) / 1000);
}

/* Rides out a daemon that restarts or fails over to another replica
 * (gb_remote_try's GB_REMOTE_UNREACHABLE): tries again after 0.25 s,
 * 0.5 s, ... 4 s until deadline (monotonic ms; 0: 10 minutes after the
 * daemon was lost), saying once that it lost the daemon and once that
 * it is back.  wait_s: the call's own long poll.  0, -1 (printed), or
 * GB_BACKEND_LOST (printed). */
static int call(remote_backend *r, const char *method, const char *path,
                json_t *body, long wait_s, long *status, json_t **out,
                int64_t deadline)
{
	gb_cli *cli = r->b.cli;
	int64_t lost_at = 0, backoff = BACKOFF_FIRST_MS;
	char why[256];
	for (;;) {
		int64_t now = gb_mono_ms(), until, left;
		long t = wait_s + 30;
		int rc;
		if (deadline && (deadline - now) / 1000 + 1 < t)
			t = (long)((deadline - now) / 1000) + 1;
		if (t < wait_s + 2)
			t = wait_s + 2;
		rc = gb_remote_try(cli, method, path, body, t, status, out, why,
		                   sizeof(why));
		if (rc != GB_REMOTE_UNREACHABLE) {
			if (lost_at) {
				progress_done(r);
				gb_cli_err(cli, "reconnected to the gpubroker daemon at "
				                "%s after %llds", cli->server,
				           (long long)((gb_mono_ms() - lost_at + 500) /
				                       1000));
			}
			return rc ? -1 : 0;
		}
		if (gb_backend_stopped(&r->b))
			return -1; /* the command says so */
		now = gb_mono_ms();
		if (!lost_at) {
			lost_at = now;
			until = deadline ? deadline : now + RECONNECT_DEFAULT_MS;
			progress_done(r);
			gb_cli_err(cli, "lost the gpubroker daemon at %s (%s); trying "
			                "again for up to %llds",
			           cli->server, why,
			           (long long)((until - now + 999) / 1000));
		}
		until = deadline ? deadline : lost_at + RECONNECT_DEFAULT_MS;
		left = until - now;
		if (left <= 0) {
			progress_done(r);
			gb_cli_err(cli, "gave up: the gpubroker daemon at %s has not "
			                "answered for %llds (last: %s)",
			           cli->server,
			           (long long)((now - lost_at + 500) / 1000), why);
			return GB_BACKEND_LOST;
		}
		gb_sleep_ms(backoff < left ? backoff : left);
		backoff = backoff * 2 < BACKOFF_CAP_MS ? backoff * 2
		                                       : BACKOFF_CAP_MS;
	}
}

/* The events of pool after r->after, printed as progress lines (the
 * local backend's engine hands its events to the same printer); with
 * wait_s, long-polls that long for the first.  0, -1 or
 * GB_BACKEND_LOST, printed.  deadline < 0: the last look once the wait
 * is over, not tried again, 0 whatever happens (a failure not printed
 * unless it is the daemon's answer). */
static int follow(remote_backend *r, const char *pool, long wait_s,
                  int64_t deadline)
{
	char *enc = curl_easy_escape(NULL, pool, 0);
	char *path = gb_xasprintf("/v1/events?pool=%s&after=%lld&wait=%ld",
	                          enc ? enc : "", (long long)r->after, wait_s);
	json_t *res = NULL, *e;
	size_t i;
	char why[256];
	int rc = 0;
	if (deadline >= 0)
		rc = call(r, "GET", path, NULL, wait_s, NULL, &res, deadline);
	else if (gb_remote_try(r->b.cli, "GET", path, NULL, 10, NULL, &res, why,
	                       sizeof(why)) != 0)
		res = NULL; /* the wait is over: the lines are a nicety */
	curl_free(enc);
	free(path);
	json_array_foreach(json_object_get(res, "events"), i, e) {
		json_int_t id = json_integer_value(json_object_get(e, "id"));
		int64_t at_ms;
		const char *kind = json_string_value(json_object_get(e, "kind"));
		const char *msg = json_string_value(json_object_get(e, "message"));
		if (id <= r->after)
			continue;
		r->after = id;
		if (r->progress && kind &&
		    gb_json_time_get(json_object_get(e, "time"), &at_ms) == 0)
			gb_progress_event_at(
			    &r->prog, at_ms,
			    json_string_value(json_object_get(e, "pool")),
			    json_string_value(json_object_get(e, "instance")), kind,
			    msg ? msg : "");
	}
	json_decref(res);
	return rc;
}

/* Sets r->after to pool's last event so far, so that a wait prints what
 * happens from now on.  A pool the daemon does not know yet (404, not
 * printed) has none; a daemon that cannot say leaves the mark unset
 * (the wait sets it when it starts; the operation itself says what is
 * wrong with the daemon). */
static void mark(remote_backend *r, const char *pool)
{
	int quiet = r->b.cli->quiet_not_found;
	free(r->marked);
	r->marked = NULL;
	r->after = 0;
	if (!r->progress)
		return;
	r->b.cli->quiet_not_found = 1;
	while (!r->marked) {
		char *enc = curl_easy_escape(NULL, pool, 0);
		char *path = gb_xasprintf("/v1/events?pool=%s&after=%lld",
		                          enc ? enc : "", (long long)r->after);
		json_t *res = NULL, *events;
		long status = 0;
		char why[256];
		int rc = gb_remote_try(r->b.cli, "GET", path, NULL, 30, &status,
		                       &res, why, sizeof(why));
		size_t n;
		curl_free(enc);
		free(path);
		if (rc && status == 404) {
			r->marked = gb_xstrdup(pool); /* not made yet */
			break;
		}
		if (rc)
			break;
		events = json_object_get(res, "events");
		n = json_array_size(events);
		if (n)
			r->after = json_integer_value(
			    json_object_get(json_array_get(events, n - 1), "id"));
		else
			r->marked = gb_xstrdup(pool);
		json_decref(res);
	}
	r->b.cli->quiet_not_found = quiet;
}

/* Before a wait on pool: its events from the mark set before the
 * operation, or from now on. */
static void mark_once(remote_backend *r, const char *pool)
{
	if (!r->marked || strcmp(r->marked, pool) != 0)
		mark(r, pool);
}

/* /v1/pools/NAME + suffix, NAME escaped; caller frees. */
static char *pool_path(const char *pool, const char *suffix)
{
	char *enc = curl_easy_escape(NULL, pool, 0);
	char *p = gb_xasprintf("/v1/pools/%s%s", enc ? enc : "", suffix);
	curl_free(enc);
	return p;
}

/* POST/PUT the spec to /v1/pools/NAME + suffix; 0 or -1 (printed). */
static int send_spec(gb_backend *b, const char *method,
                     const gb_pool_spec *spec, const char *suffix,
                     json_t **out)
{
	char *js = gb_pool_spec_to_json(spec);
	json_t *body = json_loads(js, 0, NULL);
	char *path = pool_path(spec->name, suffix);
	int rc = gb_remote_call(b->cli, method, path, body, NULL, out);
	free(js);
	free(path);
	json_decref(body);
	return rc ? -1 : 0;
}

/* With earlier pools, the body is {"pools": [them..., spec]}: the
 * daemon counts them as if applied. */
static json_t *remote_plan_diff(gb_backend *b, const gb_pool_spec *spec,
                                const gb_pool_spec *const *earlier,
                                size_t nearlier)
{
	json_t *diff = NULL, *body;
	char *path;
	int rc;
	if (!nearlier)
		return send_spec(b, "POST", spec, "/diff", &diff) != 0
		               ? NULL
		               : diff ? diff : json_object();
	body = json_object();
	json_object_set_new(body, "pools", json_array());
	for (size_t i = 0; i <= nearlier; i++) {
		char *js = gb_pool_spec_to_json(i < nearlier ? earlier[i]
		                                             : spec);
		json_array_append_new(json_object_get(body, "pools"),
		                      json_loads(js, 0, NULL));
		free(js);
	}
	path = pool_path(spec->name, "/diff");
	rc = gb_remote_call(b->cli, "POST", path, body, NULL, &diff);
	free(path);
	json_decref(body);
	if (rc != 0)
		return NULL;
	return diff ? diff : json_object();
}

/* The pool's events from here on are what this apply causes. */
static int remote_apply(gb_backend *b, const gb_pool_spec *spec,
                        json_t **pool)
{
	mark(rb(b), spec->name);
	return send_spec(b, "PUT", spec, "", pool);
}

/* Follows the pool's events and looks at it until every desired
 * instance runs. */
static int remote_wait(gb_backend *b, const char *pool, int64_t timeout_s,
                       char *err, size_t cap, json_t **last)
{
	remote_backend *r = rb(b);
	int64_t deadline = timeout_s > 0 ? gb_mono_ms() + timeout_s * 1000 : 0;
	char *path = pool_path(pool, "?all=1"); /* destroyed: seen, not 404 */
	int rc = -1;
	*last = NULL;
	if (cap)
		err[0] = '\0';
	mark_once(r, pool);
	for (;;) {
		json_t *p = NULL;
		json_int_t running, desired, ending = 0;
		size_t i;
		json_t *in;
		const char *st;
		int c = call(r, "GET", path, NULL, 0, NULL, &p, deadline);
		if (c != 0) {
			rc = c;
			break;
		}
		json_decref(*last);
		*last = p;
		running = json_integer_value(json_object_get(p, "running"));
		desired = json_integer_value(json_object_get(p, "desired"));
		st = json_string_value(json_object_get(p, "state"));
		if (st && strcmp(st, "active") != 0) {
			/* destroyed under the wait (TTL, idle, destroy) */
			follow(r, pool, 0, -1);
			rc = GB_BACKEND_GONE;
			break;
		}
		json_array_foreach(json_object_get(p, "instances"), i, in) {
			const char *ist = json_string_value(json_object_get(in,
			                                                    "state"));
			ending += ist && strcmp(ist, "terminating") == 0;
			if (ist && strcmp(ist, "failed") == 0) {
				follow(r, pool, 0, -1);
				progress_done(r);
				gb_cli_err(b->cli, "pool %s: instance %s failed", pool,
				           json_string_value(json_object_get(in, "name")));
				goto out;
			}
		}
		/* as asked: every desired instance runs, and the clouds
		 * confirmed that the ones it ends (a scale-down) are gone;
		 * more running than desired: the daemon's converge has not
		 * ended them yet */
		/* an agent pool: ready (its agents reported) unless
		 * --wait-for running */
		if (running == desired && !ending && !b->wait_running &&
		    json_is_true(json_object_get(p, "agent")) &&
		    json_integer_value(json_object_get(p, "ready")) < desired) {
			;
		} else if (running == desired && !ending) {
			rc = follow(r, pool, 0, -1) + 1; /* what brought it there */
			break;
		}
		if (json_is_true(json_object_get(json_object_get(p, "waiting"),
		                                 "refused"))) {
			/* refused for good: waiting cannot change it */
			follow(r, pool, 0, -1);
			progress_done(r);
			gb_cli_err(b->cli, "pool %s: %s", pool,
			           json_string_value(json_object_get(
			                   json_object_get(p, "waiting"),
			                   "reason")));
			goto out;
		}
		if (deadline && gb_mono_ms() > deadline) {
			if (running >= desired && cap)
				snprintf(err, cap, "%lld instance%s still terminating "
				         "(not yet confirmed by the cloud) when the "
				         "wait ended", (long long)(running - desired +
				                                   ending),
				         running - desired + ending == 1 ? "" : "s");
			rc = 0;
			break;
		}
		c = follow(r, pool, poll_s(deadline), deadline);
		if (c != 0 || gb_backend_stopped(b)) {
			rc = c ? c : -1; /* apply says it was interrupted */
			break;
		}
	}
out:
	progress_done(r);
	if (rc == GB_BACKEND_LOST)
		gb_cli_err(b->cli, "pool %s: the daemon goes on converging it "
		                   "when it is back ('gpubroker status %s')",
		           pool, pool);
	free(path);
	return rc;
}

/* DELETE, then follows the pool's events until it is destroyed. */
static int remote_destroy(gb_backend *b, const char *pool, int64_t timeout_s,
                          json_t **res)
{
	remote_backend *r = rb(b);
	char *path = pool_path(pool, ""), *seen = pool_path(pool, "?all=1");
	int64_t deadline = gb_mono_ms() + (timeout_s > 0 ? timeout_s : 600) * 1000;
	long status = 0;
	int rc;
	mark(r, pool);
	rc = call(r, "DELETE", path, NULL, 0, &status, res, deadline);
	if (rc == -1 && status == 404) {
		free(path);
		free(seen);
		return 1;
	}
	if (rc == GB_BACKEND_LOST || (rc && gb_backend_stopped(b))) {
		gb_cli_err(b->cli, "pool %s: not destroyed: %s; run destroy again%s",
		           pool, rc == GB_BACKEND_LOST ? "the daemon could not be asked"
		                                       : "interrupted",
		           rc == GB_BACKEND_LOST ? " when it is back" : "");
		free(path);
		free(seen);
		return rc;
	}
	while (rc == 0) {
		const char *st = json_string_value(json_object_get(*res, "state"));
		if (st && strcmp(st, "destroyed") == 0) {
			rc = follow(r, pool, 0, -1);
			break;
		}
		if (gb_mono_ms() > deadline) {
			progress_done(r);
			gb_cli_err(b->cli, "pool %s: termination requested, but not "
			                   "yet confirmed by the cloud; the daemon "
			                   "keeps going ('gpubroker status %s')",
			           pool, pool);
			rc = -1;
			break;
		}
		if ((rc = follow(r, pool, poll_s(deadline), deadline)) != 0)
			break;
		if (gb_backend_stopped(b)) {
			rc = -1;
			break;
		}
		json_decref(*res);
		*res = NULL;
		/* ?all=1: once destroyed, the pool is gone from a plain GET */
		rc = call(r, "GET", seen, NULL, 0, NULL, res, deadline);
	}
	progress_done(r);
	if (rc == -1 && gb_backend_stopped(b)) {
		gb_cli_err(b->cli, "pool %s: interrupted; termination was asked "
		                   "for and the daemon goes on with it ('gpubroker "
		                   "status %s')", pool, pool);
		rc = -1;
	}
	if (rc == GB_BACKEND_LOST)
		gb_cli_err(b->cli, "pool %s: termination was asked for; the daemon "
		                   "goes on with it when it is back ('gpubroker "
		                   "status %s')", pool, pool);
	free(path);
	free(seen);
	if (rc) {
		json_decref(*res);
		*res = NULL;
	}
	return rc;
}

/* Marks the pool's events, as apply does, for a wait that follows. */
static int remote_scale(gb_backend *b, const char *pool, int n, json_t **res)
{
	char *path = pool_path(pool, "/scale");
	json_t *body = json_pack("{s:i}", "count", n);
	int rc;
	mark(rb(b), pool);
	rc = gb_remote_call(b->cli, "POST", path, body, NULL, res);
	json_decref(body);
	free(path);
	return rc ? -1 : 0;
}

/* One pool, or every pool: the list comes in pages (next_after), each
 * pool in the same shape as the one. */
static int remote_status(gb_backend *b, const char *pool, int with_destroyed,
                         json_t **out)
{
	json_t *all;
	char *after = NULL;
	if (pool) {
		char *path = pool_path(pool, with_destroyed ? "?all=1" : "");
		int rc = gb_remote_call(b->cli, "GET", path, NULL, NULL, out);
		free(path);
		return rc ? -1 : 0;
	}
	*out = NULL;
	all = json_array();
	for (;;) {
		json_t *res = NULL;
		const char *next;
		char *enc = after ? curl_easy_escape(NULL, after, 0) : NULL;
		/* each pool as GET /v1/pools/NAME has it: with its
		 * instances */
		char *path = gb_xasprintf("/v1/pools?instances=1%s%s%s",
		                          with_destroyed ? "&all=1" : "",
		                          enc ? "&after=" : "", enc ? enc : "");
		int rc = gb_remote_call(b->cli, "GET", path, NULL, NULL, &res);
		curl_free(enc);
		free(path);
		free(after);
		after = NULL;
		if (rc) {
			json_decref(all);
			return -1;
		}
		json_array_extend(all, json_object_get(res, "pools"));
		next = json_string_value(json_object_get(res, "next_after"));
		if (next)
			after = gb_xstrdup(next);
		json_decref(res);
		if (!after)
			break;
	}
	*out = all;
	return 0;
}

static int remote_events(gb_backend *b, const char *pool, int64_t *after,
                         int64_t since_ms, int wait, json_t **events)
{
	char *enc = pool ? curl_easy_escape(NULL, pool, 0) : NULL;
	char *path = gb_xasprintf("/v1/events?after=%lld&since_ms=%lld%s%s%s",
	                          (long long)*after, (long long)since_ms,
	                          enc ? "&pool=" : "", enc ? enc : "",
	                          wait ? "&wait=25" : "");
	json_t *res = NULL, *e;
	size_t i;
	int rc = gb_remote_call(b->cli, "GET", path, NULL, NULL, &res);
	curl_free(enc);
	free(path);
	*events = NULL;
	if (rc)
		return -1;
	*events = json_incref(json_object_get(res, "events"));
	if (!*events)
		*events = json_array();
	json_array_foreach(*events, i, e) {
		json_int_t id = json_integer_value(json_object_get(e, "id"));
		if (id > *after)
			*after = id;
	}
	json_decref(res);
	return 0;
}

static int remote_cost(gb_backend *b, const char *by, int64_t since_s,
                       json_t **cost)
{
	char *enc = curl_easy_escape(NULL, by ? by : "pool", 0);
	char *path = gb_xasprintf("/v1/cost?by=%s&since=%lld", enc ? enc : "pool",
	                          (long long)since_s);
	int rc = gb_remote_call(b->cli, "GET", path, NULL, NULL, cost);
	curl_free(enc);
	free(path);
	return rc ? -1 : 0;
}

static int remote_usage(gb_backend *b, const char *by, const char *pool,
                        const char *team, int64_t since_s, int64_t until_s,
                        json_t **usage)
{
	gb_buf path = GB_BUF_INIT;
	const char *keys[3] = {"by", "pool", "team"};
	const char *vals[3] = {by ? by : "hour", pool, team};
	int rc;
	gb_buf_printf(&path, "/v1/usage?since=%lld", (long long)since_s);
	if (until_s)
		gb_buf_printf(&path, "&until=%lld", (long long)until_s);
	for (int i = 0; i < 3; i++) {
		char *enc;
		if (!vals[i])
			continue;
		enc = curl_easy_escape(NULL, vals[i], 0);
		gb_buf_printf(&path, "&%s=%s", keys[i], enc ? enc : "");
		curl_free(enc);
	}
	rc = gb_remote_call(b->cli, "GET", path.data, NULL, NULL, usage);
	gb_buf_free(&path);
	return rc ? -1 : 0;
}

static int remote_queue(gb_backend *b, json_t **queue)
{
	return gb_remote_call(b->cli, "GET", "/v1/queue", NULL, NULL, queue)
	               ? -1 : 0;
}

static int remote_gc(gb_backend *b, int adopt, json_t **orphans,
                     int *incomplete)
{
	json_t *res = NULL;
	int rc = gb_remote_call(b->cli, "POST",
	                        adopt ? "/v1/gc?adopt=1" : "/v1/gc", NULL, NULL,
	                        &res);
	*orphans = json_incref(json_object_get(res, "orphans"));
	*incomplete = json_is_true(json_object_get(res, "incomplete"));
	json_decref(res);
	return rc ? -1 : 0;
}

static void remote_close(gb_backend *b)
{
	remote_backend *r = rb(b);
	progress_done(r);
	free(r->marked);
	free(r);
}

/* GET /v1/pools/NAME/plan, quietly: 404 = none recorded. */
static int remote_decision(gb_backend *b, const char *pool, json_t **out)
{
	char *path = pool_path(pool, "/plan"), why[256];
	long status = 0;
	int rc = gb_remote_try(b->cli, "GET", path, NULL, 30, &status, out,
	                       why, sizeof(why));
	free(path);
	if (rc == 0)
		return 0;
	json_decref(*out);
	*out = NULL;
	return status == 404 ? 1 : -1;
}

static const gb_backend_ops remote_ops = {
	remote_plan_diff, remote_apply, remote_wait, remote_destroy,
	remote_scale, remote_status, remote_events, remote_cost, remote_usage,
	remote_gc, remote_decision, remote_queue, remote_close,
};

int gb_remote_backend_open(gb_cli *cli, unsigned needs, gb_backend **out)
{
	remote_backend *r = gb_xcalloc(1, sizeof(*r));
	r->b.ops = &remote_ops;
	r->b.cli = cli;
	if (needs & GB_BACKEND_SIGNALS)
		gb_backend_catch_signals(&r->b);
	if (needs & GB_BACKEND_PROGRESS) {
		r->progress = 1;
		gb_progress_init(&r->prog, cli);
	}
	*out = &r->b;
	return 0;
}
