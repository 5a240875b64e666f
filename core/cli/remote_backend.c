/* remote_backend.c -- the pool commands against a daemon's HTTP API
 * (backend.h); gb_remote_call (remote.c) makes each call. */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "remote.h"

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

static json_t *remote_plan_diff(gb_backend *b, const gb_pool_spec *spec)
{
	json_t *diff = NULL;
	if (send_spec(b, "POST", spec, "/diff", &diff) != 0)
		return NULL;
	return diff ? diff : json_object();
}

static int remote_apply(gb_backend *b, const gb_pool_spec *spec,
                        json_t **pool)
{
	return send_spec(b, "PUT", spec, "", pool);
}

/* Polls the pool every second until every desired instance runs. */
static int remote_wait(gb_backend *b, const char *pool, int64_t timeout_s,
                       char *err, size_t cap, json_t **last)
{
	int64_t deadline = gb_mono_ms() + timeout_s * 1000;
	char *path = pool_path(pool, "");
	int rc = -1;
	*last = NULL;
	if (cap)
		err[0] = '\0';
	for (;;) {
		json_t *p = NULL;
		json_int_t running, desired;
		size_t i;
		json_t *in;
		if (gb_remote_call(b->cli, "GET", path, NULL, NULL, &p) != 0)
			break;
		json_decref(*last);
		*last = p;
		running = json_integer_value(json_object_get(p, "running"));
		desired = json_integer_value(json_object_get(p, "desired"));
		json_array_foreach(json_object_get(p, "instances"), i, in)
			if (strcmp(json_string_value(json_object_get(in, "state")),
			           "failed") == 0) {
				gb_cli_err(b->cli, "pool %s: instance %s failed", pool,
				           json_string_value(json_object_get(in, "name")));
				goto out;
			}
		if (running >= desired) {
			rc = 1;
			break;
		}
		if (timeout_s > 0 && gb_mono_ms() > deadline) {
			rc = 0;
			break;
		}
		gb_sleep_ms(1000);
	}
out:
	free(path);
	return rc;
}

/* DELETE, then polls until the pool is destroyed. */
static int remote_destroy(gb_backend *b, const char *pool, int64_t timeout_s,
                          json_t **res)
{
	char *path = pool_path(pool, "");
	int64_t deadline = gb_mono_ms() + (timeout_s > 0 ? timeout_s : 600) * 1000;
	long status = 0;
	int rc = gb_remote_call(b->cli, "DELETE", path, NULL, &status, res);
	if (rc && status == 404) {
		free(path);
		return 1;
	}
	while (rc == 0) {
		const char *st = json_string_value(json_object_get(*res, "state"));
		if (st && strcmp(st, "destroyed") == 0)
			break;
		if (gb_mono_ms() > deadline) {
			gb_cli_err(b->cli, "pool %s: termination requested, but not "
			                   "yet confirmed by the cloud; the daemon "
			                   "keeps going ('gpubroker status %s')",
			           pool, pool);
			rc = GB_EXIT_FAIL;
			break;
		}
		gb_sleep_ms(1000);
		json_decref(*res);
		*res = NULL;
		rc = gb_remote_call(b->cli, "GET", path, NULL, NULL, res);
	}
	free(path);
	if (rc) {
		json_decref(*res);
		*res = NULL;
	}
	return rc ? -1 : 0;
}

static int remote_scale(gb_backend *b, const char *pool, int n, json_t **res)
{
	char *path = pool_path(pool, "/scale");
	json_t *body = json_pack("{s:i}", "count", n);
	int rc = gb_remote_call(b->cli, "POST", path, body, NULL, res);
	json_decref(body);
	free(path);
	return rc ? -1 : 0;
}

/* One pool, or every pool: the list comes in pages (next_after), each
 * pool in the same shape as the one. */
static int remote_status(gb_backend *b, const char *pool, json_t **out)
{
	json_t *all;
	char *after = NULL;
	if (pool) {
		char *path = pool_path(pool, "");
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
		char *path = gb_xasprintf("/v1/pools?instances=1%s%s",
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
	free(b);
}

static const gb_backend_ops remote_ops = {
	remote_plan_diff, remote_apply, remote_wait, remote_destroy,
	remote_scale, remote_status, remote_events, remote_cost, remote_gc,
	remote_close,
};

int gb_remote_backend_open(gb_cli *cli, unsigned needs, gb_backend **out)
{
	gb_backend *b = gb_xcalloc(1, sizeof(*b));
	(void)needs;
	b->ops = &remote_ops;
	b->cli = cli;
	*out = b;
	return 0;
}
