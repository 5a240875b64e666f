/* http.c -- libcurl transport with retries, rate limits and metrics. */
#include "http.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cancel.h"
#include "log.h"

const double gb_http_lat_bounds[GB_HTTP_LAT_BUCKETS] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, INFINITY,
};

typedef struct bucket {
	char *cls;
	double capacity;
	double refill; /* tokens per second */
	double tokens;
	int64_t last_ns;
} bucket;

struct gb_http_client {
	char *name;
	gb_http_opts o;
	char *ca_file, *ca_path;
	pthread_mutex_t lock;
	pthread_cond_t slot_cv;
	int in_flight;
	CURL **idle;          /* pooled easy handles */
	size_t nidle, capidle;
	bucket *buckets;
	size_t nbuckets;
	bucket *dflt;         /* "default" bucket, may be NULL */
	gb_http_metrics m;
	uint64_t rng;
	int insecure_warned; /* the plain-HTTP opt-in was logged */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

int gb_http_parse_rate(const char *spec, double *cap, double *refill)
{
	char *end;
	double c, r;
	errno = 0;
	c = strtod(spec, &end);
	if (errno || end == spec || *end != '/' || c <= 0)
		return -1;
	r = strtod(end + 1, &end);
	if (errno || *end || r <= 0)
		return -1;
	*cap = c;
	*refill = r;
	return 0;
}

static bucket *bucket_find(gb_http_client *c, const char *cls)
{
	for (size_t i = 0; i < c->nbuckets; i++)
		if (strcmp(c->buckets[i].cls, cls) == 0)
			return &c->buckets[i];
	return NULL;
}

static int set_rate_locked(gb_http_client *c, const char *cls,
                           const char *spec)
{
	double cap, refill;
	bucket *b;
	if (gb_http_parse_rate(spec, &cap, &refill) != 0)
		return -1;
	b = bucket_find(c, cls);
	if (!b) {
		/* buckets never move after creation: allocate generously */
		if (c->nbuckets >= 128)
			return -1;
		b = &c->buckets[c->nbuckets++];
		b->cls = gb_xstrdup(cls);
		b->tokens = cap;
		b->last_ns = gb_mono_ns();
	}
	b->capacity = cap;
	b->refill = refill;
	if (b->tokens > cap)
		b->tokens = cap;
	if (strcmp(cls, "default") == 0)
		c->dflt = b;
	return 0;
}

int gb_http_get_rate(gb_http_client *c, const char *cls, double *cap,
                     double *refill)
{
	bucket *b;
	int rc = -1;
	pthread_mutex_lock(&c->lock);
	if ((b = bucket_find(c, cls))) {
		*cap = b->capacity;
		*refill = b->refill;
		rc = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int gb_http_set_rate(gb_http_client *c, const char *cls, const char *spec)
{
	int rc;
	pthread_mutex_lock(&c->lock);
	rc = set_rate_locked(c, cls, spec);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

gb_http_client *gb_http_client_new(const gb_http_opts *opts)
{
	gb_http_client *c = gb_xcalloc(1, sizeof(*c));
	pthread_once(&curl_once, curl_init_once);
	c->o = *opts;
	c->name = gb_xstrdup(opts->name ? opts->name : "http");
	c->o.name = c->name;
	if (c->o.max_attempts <= 0)
		c->o.max_attempts = 5;
	if (c->o.backoff_base_ms <= 0)
		c->o.backoff_base_ms = 200;
	if (c->o.backoff_cap_ms <= 0)
		c->o.backoff_cap_ms = 20000;
	if (!c->o.timeout_ms)
		c->o.timeout_ms = 60000;
	if (!c->o.connect_timeout_ms)
		c->o.connect_timeout_ms = 10000;
	if (c->o.max_in_flight <= 0)
		c->o.max_in_flight = 64;
	if (!c->o.max_body)
		c->o.max_body = 32u << 20;
	c->ca_file = gb_xstrdup(opts->ca_file);
	c->ca_path = gb_xstrdup(opts->ca_path);
	c->o.ca_file = c->ca_file;
	c->o.ca_path = c->ca_path;
	c->o.rates = NULL;
	c->o.allow_insecure_http = opts->allow_insecure_http ||
	                           gb_http_insecure_env();
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->slot_cv, NULL);
	c->buckets = gb_xcalloc(128, sizeof(bucket));
	if (opts->rates) {
		for (size_t i = 0; i < opts->rates->n; i++)
			if (set_rate_locked(c, opts->rates->keys[i],
			                    opts->rates->vals[i]) != 0)
				gb_log(GB_LOG_WARN, c->name,
				       "ignoring bad rate limit %s=%s (want "
				       "CAPACITY/REFILL_PER_SECOND, e.g. 5/2)",
				       opts->rates->keys[i], opts->rates->vals[i]);
	}
	c->rng = (uint64_t)gb_mono_ns() ^ (uint64_t)(uintptr_t)c;
	return c;
}

void gb_http_client_free(gb_http_client *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nidle; i++)
		curl_easy_cleanup(c->idle[i]);
	free(c->idle);
	for (size_t i = 0; i < c->nbuckets; i++)
		free(c->buckets[i].cls);
	free(c->buckets);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->slot_cv);
	free(c->ca_file);
	free(c->ca_path);
	free(c->name);
	free(c);
}

/* xorshift64*: jitter only, not security. Caller holds the lock. */
static double rand01(gb_http_client *c)
{
	uint64_t x = c->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	c->rng = x;
	return (double)((x * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

/* The error of a call given up because it was cancelled before it was
 * sent: TRANSIENT, so the engine treats the outcome as unknown. */
static void cancelled_err(gb_error *err)
{
	memset(err, 0, sizeof(*err));
	err->cls = GB_ERR_TRANSIENT;
	snprintf(err->code, sizeof(err->code), "Cancelled");
	snprintf(err->message, sizeof(err->message), "the request was not "
	         "sent: gpubroker is stopping or the call's deadline passed");
}

/* Takes one token from the class's bucket, waiting as long as needed.
 * 0, or -1 when the call was cancelled while it waited (gb_cancelled). */
static int rate_acquire(gb_http_client *c, const char *cls)
{
	double waited = 0;
	for (;;) {
		int64_t now, wait_ms = 0;
		bucket *b;
		pthread_mutex_lock(&c->lock);
		b = cls ? bucket_find(c, cls) : NULL;
		if (!b)
			b = c->dflt;
		if (!b) {
			pthread_mutex_unlock(&c->lock);
			return 0;
		}
		now = gb_mono_ns();
		b->tokens += (double)(now - b->last_ns) / 1e9 * b->refill;
		if (b->tokens > b->capacity)
			b->tokens = b->capacity;
		b->last_ns = now;
		if (b->tokens >= 1.0) {
			b->tokens -= 1.0;
			if (waited > 0) {
				c->m.rate_waits++;
				c->m.rate_wait_s += waited;
			}
			pthread_mutex_unlock(&c->lock);
			return 0;
		}
		wait_ms = (int64_t)ceil((1.0 - b->tokens) / b->refill * 1000.0);
		pthread_mutex_unlock(&c->lock);
		if (wait_ms < 1)
			wait_ms = 1;
		if (gb_cancel_sleep_ms(wait_ms))
			return -1;
		waited += (double)wait_ms / 1000.0;
	}
}

static void slot_acquire(gb_http_client *c)
{
	pthread_mutex_lock(&c->lock);
	while (c->in_flight >= c->o.max_in_flight)
		pthread_cond_wait(&c->slot_cv, &c->lock);
	c->in_flight++;
	pthread_mutex_unlock(&c->lock);
}

static void slot_release(gb_http_client *c)
{
	pthread_mutex_lock(&c->lock);
	c->in_flight--;
	pthread_cond_signal(&c->slot_cv);
	pthread_mutex_unlock(&c->lock);
}

static CURL *handle_get(gb_http_client *c)
{
	CURL *h = NULL;
	pthread_mutex_lock(&c->lock);
	if (c->nidle)
		h = c->idle[--c->nidle];
	pthread_mutex_unlock(&c->lock);
	if (!h)
		h = curl_easy_init();
	else
		curl_easy_reset(h);
	return h;
}

static void handle_put(gb_http_client *c, CURL *h)
{
	pthread_mutex_lock(&c->lock);
	if (c->nidle == c->capidle) {
		c->capidle = c->capidle ? c->capidle * 2 : 8;
		c->idle = gb_xrealloc(c->idle, c->capidle * sizeof(CURL *));
	}
	c->idle[c->nidle++] = h;
	pthread_mutex_unlock(&c->lock);
}

typedef struct sink {
	gb_buf body;
	gb_strv headers;
	size_t max;
	int too_big;
} sink;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	sink *s = ud;
	size_t len = size * n;
	if (s->body.len + len > s->max) {
		s->too_big = 1;
		return 0; /* aborts the transfer */
	}
	gb_buf_append(&s->body, p, len);
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	sink *s = ud;
	size_t len = size * n, l = len;
	while (l && (p[l - 1] == '\r' || p[l - 1] == '\n'))
		l--;
	if (l >= 7 && strncmp(p, "HTTP/", 5) == 0) {
		/* a new response (after 100-continue or redirects): restart */
		gb_strv_free(&s->headers);
		return len;
	}
	if (l && memchr(p, ':', l))
		gb_strv_push_take(&s->headers, gb_xstrndup(p, l));
	return len;
}

const char *gb_http_header(const gb_http_resp *resp, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < resp->nheaders; i++) {
		const char *h = resp->headers[i];
		if (strncasecmp(h, name, n) == 0 && h[n] == ':') {
			h += n + 1;
			while (*h == ' ' || *h == '\t')
				h++;
			return h;
		}
	}
	return NULL;
}

int64_t gb_http_retry_after_ms(const gb_http_resp *resp)
{
	const char *v = gb_http_header(resp, "Retry-After");
	int64_t secs;
	struct tm tm;
	if (!v)
		return -1;
	if (gb_parse_int64(v, &secs) == 0)
		return secs < 0 ? -1 : secs * 1000;
	memset(&tm, 0, sizeof(tm));
	if (strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tm)) {
		int64_t when = (int64_t)timegm(&tm) * 1000 - gb_now_ms();
		return when > 0 ? when : 0;
	}
	return -1;
}

static gb_err_class default_classify(const gb_http_resp *r, gb_error *err)
{
	gb_err_class cls;
	if (r->status >= 200 && r->status < 300)
		return GB_ERR_NONE;
	cls = r->status == 429               ? GB_ERR_THROTTLED
	      : r->status >= 500             ? GB_ERR_TRANSIENT
	      : r->status == 401 || r->status == 403 ? GB_ERR_AUTH
	      : r->status == 404             ? GB_ERR_NOT_FOUND
	      : r->status == 409             ? GB_ERR_CONFLICT
	                                     : GB_ERR_INVALID;
	gb_error_set(err, cls, (int)r->status, "", "HTTP %ld", r->status);
	return cls;
}

static void record_latency(gb_http_client *c, double secs)
{
	for (int i = 0; i < GB_HTTP_LAT_BUCKETS; i++)
		if (secs <= gb_http_lat_bounds[i])
			c->m.lat_count[i]++;
	c->m.lat_sum_s += secs;
}

/* One attempt with the headers the sign callback produced.  Returns 0
 * when an HTTP answer was received. */
static int attempt_once(gb_http_client *c, const gb_http_req *req,
                        const char *const *signed_h, int nsigned,
                        gb_http_resp *resp, gb_error *err)
{
	CURL *h;
	struct curl_slist *hl = NULL;
	sink s;
	CURLcode cc;
	int64_t t0;
	int rc = 0;

	memset(&s, 0, sizeof(s));
	s.max = c->o.max_body;
	h = handle_get(c);
	if (!h) {
		gb_error_set(err, GB_ERR_INTERNAL, 0, "CurlInit",
		             "%s: cannot create an HTTP handle", c->name);
		return -2;
	}
	for (size_t i = 0; i < req->nheaders; i++)
		hl = curl_slist_append(hl, req->headers[i]);
	for (int i = 0; i < nsigned; i++)
		hl = curl_slist_append(hl, signed_h[i]);
	hl = curl_slist_append(hl, "Expect:"); /* no 100-continue */
	curl_easy_setopt(h, CURLOPT_URL, req->url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
	if (strcmp(req->method, "GET") == 0)
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	else if (strcmp(req->method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	if (req->body || strcmp(req->method, "POST") == 0 ||
	    strcmp(req->method, "PUT") == 0) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body ? req->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
		                 (curl_off_t)(req->body ? req->body_len : 0));
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &s);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
	                 (long)(req->timeout_ms ? req->timeout_ms : c->o.timeout_ms));
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
	                 (long)c->o.connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	/* gb_http_do checked the URL: https, or http where allowed; no
	 * redirect is followed, and none could change the scheme */
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR,
	                 strncasecmp(req->url, "https:", 6) == 0 ? "https"
	                                                        : "http");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "gpubroker/" GB_VERSION);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	if (c->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
	if (c->ca_path)
		curl_easy_setopt(h, CURLOPT_CAPATH, c->ca_path);

	t0 = gb_mono_ns();
	cc = curl_easy_perform(h);
	pthread_mutex_lock(&c->lock);
	c->m.requests++;
	record_latency(c, (double)(gb_mono_ns() - t0) / 1e9);
	pthread_mutex_unlock(&c->lock);
	if (cc != CURLE_OK) {
		char *u = gb_url_for_log(req->url);
		if (s.too_big)
			gb_error_set(err, GB_ERR_INVALID, 0, "ResponseTooLarge",
			             "%s: answer from %s larger than %zu bytes",
			             c->name, u, c->o.max_body);
		else
			gb_error_set(err,
			             cc == CURLE_SSL_CACERT ||
			                             cc == CURLE_PEER_FAILED_VERIFICATION
			                     ? GB_ERR_AUTH
			                     : GB_ERR_TRANSIENT,
			             0, "NetworkError", "%s: %s %s: %s", c->name,
			             req->method, u, curl_easy_strerror(cc));
		free(u);
		rc = s.too_big ? -2 : -1;
		gb_buf_free(&s.body);
		gb_strv_free(&s.headers);
	} else {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
		resp->body_len = s.body.len;
		resp->body = gb_buf_take(&s.body);
		resp->headers = s.headers.v;
		resp->nheaders = s.headers.n;
	}
	curl_slist_free_all(hl);
	handle_put(c, h);
	return rc;
}

void gb_http_resp_free(gb_http_resp *resp)
{
	free(resp->body);
	for (size_t i = 0; i < resp->nheaders; i++)
		free(resp->headers[i]);
	free(resp->headers);
	memset(resp, 0, sizeof(*resp));
}

int gb_http_do(gb_http_client *c, const gb_http_req *req, gb_http_resp *resp,
               gb_error *err)
{
	int max = req->max_attempts > 0 ? req->max_attempts : c->o.max_attempts;
	gb_err_class cls = GB_ERR_INTERNAL;
	memset(resp, 0, sizeof(*resp));
	memset(err, 0, sizeof(*err));
	pthread_mutex_lock(&c->lock);
	c->m.calls++;
	pthread_mutex_unlock(&c->lock);
	{
		char why[600];
		int u = gb_http_url_check(req->url, c->o.allow_insecure_http,
		                          why, sizeof(why));
		if (u < 0) {
			/* before signing: nothing leaves the host */
			gb_error_set(err, GB_ERR_INVALID, 0, "InsecureEndpoint",
			             "%s: refusing to send %s %s", c->name,
			             req->method, why);
			cls = GB_ERR_INVALID;
			goto done;
		}
		if (u == 2 && !__atomic_exchange_n(&c->insecure_warned, 1,
		                                   __ATOMIC_ACQ_REL)) {
			char *shown = gb_url_for_log(req->url);
			gb_log(GB_LOG_WARN, c->name, "sending requests (and "
			       "credentials) in clear over plain HTTP to %s: "
			       "allowed by allow_insecure_http / "
			       "GPUBROKER_ALLOW_INSECURE_HTTP", shown);
			free(shown);
		}
	}
	for (int attempt = 1;; attempt++) {
		int rc, nsigned = 0;
		const char *signed_h[32];
		int64_t delay, ra;
		gb_http_resp_free(resp);
		memset(err, 0, sizeof(*err));
		if (rate_acquire(c, req->rate_class) != 0) {
			cancelled_err(err);
			cls = err->cls;
			break;
		}
		/* Sign before taking a transfer slot: a driver may fetch a
		 * token (another HTTP call) inside its sign callback. */
		if (req->sign) {
			nsigned = req->sign(req->sign_ud, req, signed_h, 32, err);
			if (nsigned < 0) {
				cls = err->cls ? err->cls : GB_ERR_AUTH;
				break; /* signing failed: not retryable here */
			}
		}
		slot_acquire(c);
		rc = attempt_once(c, req, signed_h, nsigned, resp, err);
		slot_release(c);
		resp->attempts = attempt;
		if (rc == -2) {
			cls = err->cls ? err->cls : GB_ERR_INTERNAL;
			break;
		}
		if (rc == -1) {
			cls = err->cls;
		} else {
			cls = req->classify
			              ? req->classify(req->classify_ud, resp, err)
			              : default_classify(resp, err);
			if (cls == GB_ERR_NONE)
				break;
			err->cls = cls;
			if (!err->http_status)
				err->http_status = (int)resp->status;
		}
		{
			char *u = gb_url_for_log(req->url);
			gb_log(GB_LOG_DEBUG, c->name,
			       "%s %s -> %ld %s (%s), attempt %d/%d", req->method,
			       u, resp->status, gb_err_class_name(cls), err->code,
			       attempt, max);
			free(u);
		}
		if ((cls != GB_ERR_THROTTLED && cls != GB_ERR_TRANSIENT) ||
		    attempt >= max)
			break;
		if (gb_cancelled()) {
			/* stopping, or past the call's deadline: no retry */
			gb_log(GB_LOG_DEBUG, c->name, "not retrying %s: the call "
			       "was cancelled", req->method);
			break;
		}
		/* exponential backoff with full jitter, at least Retry-After */
		delay = c->o.backoff_base_ms << (attempt - 1 < 16 ? attempt - 1 : 16);
		if (delay > c->o.backoff_cap_ms)
			delay = c->o.backoff_cap_ms;
		pthread_mutex_lock(&c->lock);
		delay = (int64_t)(rand01(c) * (double)delay);
		c->m.retries++;
		pthread_mutex_unlock(&c->lock);
		ra = err->retry_after_ms > 0 ? err->retry_after_ms
		                             : gb_http_retry_after_ms(resp);
		if (ra > delay)
			delay = ra > c->o.backoff_cap_ms * 3 ? c->o.backoff_cap_ms * 3
			                                     : ra;
		if (gb_cancel_sleep_ms(delay))
			break;
	}
done:
	pthread_mutex_lock(&c->lock);
	c->m.errors[cls <= GB_ERR_INTERNAL ? cls : GB_ERR_INTERNAL]++;
	pthread_mutex_unlock(&c->lock);
	return cls == GB_ERR_NONE ? 0 : -1;
}

void gb_http_metrics_get(gb_http_client *c, gb_http_metrics *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->m;
	pthread_mutex_unlock(&c->lock);
}
