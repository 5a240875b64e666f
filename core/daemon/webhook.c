/* webhook.c -- serve.webhook: after each reconcile pass, the targets
 * list of every pool this replica holds (gb_daemon_pool_targets: the
 * list and the version GET /v1/pools/NAME/targets answers, its ETag) is
 * POSTed as {"pool", "version", "targets"} to the pool's webhook when
 * that version was not delivered yet.  The versions delivered are kept
 * in memory (the reconciler thread's only): a restarted daemon sends
 * each pool's current list once.  A failed delivery (the host transport,
 * 2 s an attempt, 3 attempts) is logged and retried on later passes
 * (one attempt each), after 1 s, 2 s, 4 s ... at most 5 minutes apart;
 * it is one "webhook-failed" event until a delivery succeeds again.  A
 * pass spends at most WEBHOOK_PASS_MS starting deliveries: the rest wait
 * for the next pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "log.h"

#define WEBHOOK_PASS_MS 5000
#define WEBHOOK_BACKOFF_CAP_MS 300000

typedef struct hook {
	char *pool;
	char *url;            /* the URL delivered[] went to */
	char delivered[24];   /* version delivered ("" none) */
	int fails;            /* failed deliveries in a row */
	int64_t next_ms;      /* monotonic: no retry before */
} hook;

static hook *hooks;        /* the reconciler thread's */
static size_t nhooks;
static gb_http_client *client;

static hook *hook_of(const char *pool)
{
	for (size_t i = 0; i < nhooks; i++)
		if (strcmp(hooks[i].pool, pool) == 0)
			return &hooks[i];
	hooks = gb_xrealloc(hooks, (nhooks + 1) * sizeof(*hooks));
	memset(&hooks[nhooks], 0, sizeof(*hooks));
	hooks[nhooks].pool = gb_xstrdup(pool);
	return &hooks[nhooks++];
}

static gb_http_client *client_get(void)
{
	if (!client) {
		gb_http_opts o;
		memset(&o, 0, sizeof(o));
		o.name = "webhook";
		o.max_attempts = 3;
		o.backoff_base_ms = 200;
		o.backoff_cap_ms = 1000;
		o.timeout_ms = 2000;
		o.connect_timeout_ms = 1000;
		o.max_in_flight = 4;
		o.max_body = 64u << 10;
		client = gb_http_client_new(&o);
	}
	return client;
}

/* One delivery (attempts: 0 = the client's 3): 0, or -1 with why. */
static int post(const char *url, const char *body, int attempts, char *why,
                size_t cap)
{
	static const char *const hdrs[] = {"Content-Type: application/json"};
	gb_http_req req;
	gb_http_resp resp;
	gb_error err;
	int rc;
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	memset(&err, 0, sizeof(err));
	req.method = "POST";
	req.url = url;
	req.headers = hdrs;
	req.nheaders = 1;
	req.body = body;
	req.body_len = strlen(body);
	req.max_attempts = attempts;
	rc = gb_http_do(client_get(), &req, &resp, &err);
	if (rc != 0)
		snprintf(why, cap, "%s", err.message[0] ? err.message
		                                        : "no answer");
	gb_http_resp_free(&resp);
	return rc == 0 ? 0 : -1;
}

static void deliver(gb_daemon *d, const char *pool)
{
	char ver[24], why[800];
	char *url = NULL, *body, *shown;
	json_t *msg;
	json_t *list = gb_daemon_pool_targets(d, pool, 0, ver, sizeof(ver),
	                                      &url);
	hook *h;
	if (!list || !url)
		goto out;
	h = hook_of(pool);
	if (strcmp(h->delivered, ver) == 0 && h->url &&
	    strcmp(h->url, url) == 0)
		goto out;
	if (h->fails && gb_mono_ms() < h->next_ms)
		goto out;
	/* the version as the ETag's value, without its quotes */
	msg = json_pack("{s:s, s:s#, s:O}", "pool", pool, "version", ver + 1,
	                (int)(strlen(ver) - 2), "targets", list);
	body = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	json_decref(msg);
	shown = gb_url_for_log(url);
	/* a webhook that failed gets one attempt a pass: its retries are
	 * the later passes, and a dead receiver costs a pass 2 s at most */
	if (body && post(url, body, h->fails ? 1 : 0, why, sizeof(why)) == 0) {
		if (h->fails)
			gb_log(GB_LOG_INFO, "webhook", "pool %s: delivered to %s "
			       "after %d failed tries", pool, shown, h->fails);
		snprintf(h->delivered, sizeof(h->delivered), "%s", ver);
		free(h->url);
		h->url = gb_xstrdup(url);
		h->fails = 0;
	} else {
		int64_t wait = 1000;
		for (int i = 1; i < h->fails && wait < WEBHOOK_BACKOFF_CAP_MS; i++)
			wait *= 2;
		if (wait > WEBHOOK_BACKOFF_CAP_MS)
			wait = WEBHOOK_BACKOFF_CAP_MS;
		h->next_ms = gb_mono_ms() + wait;
		gb_log(GB_LOG_WARN, "webhook", "pool %s: POST of the targets "
		       "list to %s failed: %s; retried in %llds", pool, shown,
		       body ? why : "out of memory", (long long)(wait / 1000));
		/* one event for a run of failures, not one per pass */
		if (h->fails++ == 0)
			GB_IGNORE(gb_store_event(d->store, pool, NULL,
			               "webhook-failed", "POST of the targets list "
			               "(version %.16s) to serve.webhook %s failed: "
			               "%s; retried at later passes until it is "
			               "delivered", ver + 1, shown,
			               body ? why : "out of memory"));
	}
	free(shown);
	free(body);
out:
	json_decref(list);
	free(url);
}

void gb_daemon_webhooks(gb_daemon *d, const gb_strv *pools)
{
	int64_t t0 = gb_mono_ms();
	for (size_t i = 0; i < pools->n && !gb_daemon_stopping(d); i++) {
		if (gb_mono_ms() - t0 >= WEBHOOK_PASS_MS)
			break; /* the rest at the next pass */
		deliver(d, pools->v[i]);
	}
}

void gb_daemon_webhooks_release(void)
{
	for (size_t i = 0; i < nhooks; i++) {
		free(hooks[i].pool);
		free(hooks[i].url);
	}
	free(hooks);
	hooks = NULL;
	nhooks = 0;
	gb_http_client_free(client);
	client = NULL;
}
