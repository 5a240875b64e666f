/* api_http.c -- the daemon's HTTP server: libmicrohttpd on epoll, limits
 * per client and in total, request hygiene, and a pool of handler
 * threads.
 *
 * Threads.  `daemon.api_threads` connection threads (libmicrohttpd's
 * epoll thread pool) do every socket's I/O and never run a handler, so a
 * slow handler (a plan, a gc, a probe over ssh) or a store busy with
 * another process never stalls other connections: once a request is
 * complete its connection is suspended and the request queued for one of
 * `daemon.api_workers` handler threads, which runs it (config read lock
 * held), audits it and resumes the connection; the connection thread
 * then sends the answer.  Only /healthz, /readyz, and GET /v1/pools and
 * /metrics while their snapshots are current (gb_api_run_now: nothing
 * to wait for), are answered on the connection thread.  A long poll (GET /v1/events?wait=N) whose answer
 * is empty does not keep its handler thread: it parks (the connection
 * stays suspended, the request on a list sorted by deadline) until an
 * event of its pool or its deadline puts it back on the run queue.  So
 * idle connections and waiting long polls cost memory (a few KiB each),
 * not threads.
 *
 * Limits.  At most `daemon.max_connections` open connections, and
 * `daemon.max_connections_per_client` from one address (checked when a
 * connection is accepted: a refused one is closed at once, counted in
 * gpubroker_api_connections_refused_total).  A connection may be silent
 * for `daemon.header_timeout` before its request's headers are complete
 * (and as long before its next request on a kept-alive connection, or
 * while its answer is sent); a request with a body then gets
 * GB_API_REQUEST_TIMEOUT_S of silence while the body arrives.  The file
 * descriptor limit is raised to fit the connection cap (or the cap
 * lowered to fit the limit, with a warning).
 *
 * Hygiene (before any handler, so before any body is read): two
 * Authorization, Content-Length, Transfer-Encoding or Host headers, a
 * header value cut by a NUL byte or folded over lines, or more than
 * GB_API_MAX_HEADERS headers: 400; a Transfer-Encoding other than
 * chunked: 501; Content-Length and Transfer-Encoding together: 400;
 * `Expect: 100-continue` with a Content-Length over the body cap: 413
 * at once, instead of 100 Continue.  Routing splits the path as sent and
 * decodes each segment (api.c), so %2F inside a name never becomes a
 * separator. */
#include "api.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "log.h"

/* silence allowed while a request's body arrives */
#define GB_API_REQUEST_TIMEOUT_S 60u
#define GB_API_MAX_HEADERS 100
/* descriptors kept free for everything but API connections */
#define FD_RESERVE 512

typedef struct gb_api_srv {
	gb_daemon *d;
	gb_api_limits *limits;
	int max_conns, max_per_client;
	int64_t header_timeout_s;
	pthread_mutex_t mu;          /* the run queue and the park list */
	pthread_cond_t work_cv;      /* run queue not empty, or quit */
	pthread_cond_t timer_cv;     /* park list changed, or quit */
	gb_api_req *run_head, *run_tail;
	gb_api_req *park_head, *park_tail; /* sorted by park_until_ms */
	uint64_t event_seq;          /* bumped by every gb_api_wake */
	size_t parked;
	int quit;                    /* handler threads: drain, then exit */
	pthread_t *workers;
	int nworkers;
	pthread_t timer;
	int timer_started;
	/* counters (under mu) */
	uint64_t parks_total, runs_total, queued_max;
	size_t queued;
} gb_api_srv;

/* ------------------------------------------------------------ queues */

/* Appends r to the run queue (caller holds mu). */
static void run_push(gb_api_srv *s, gb_api_req *r)
{
	r->next = NULL;
	r->prev = s->run_tail;
	if (s->run_tail)
		s->run_tail->next = r;
	else
		s->run_head = r;
	s->run_tail = r;
	r->phase = GB_REQ_RUN;
	if (++s->queued > s->queued_max)
		s->queued_max = s->queued;
	pthread_cond_signal(&s->work_cv);
}

static gb_api_req *run_pop(gb_api_srv *s)
{
	gb_api_req *r = s->run_head;
	if (r) {
		s->run_head = r->next;
		if (s->run_head)
			s->run_head->prev = NULL;
		else
			s->run_tail = NULL;
		r->next = r->prev = NULL;
		s->queued--;
	}
	return r;
}

/* Inserts r into the park list by deadline (caller holds mu).  Most
 * long polls wait the same time, so the place is found from the tail. */
static void park_insert(gb_api_srv *s, gb_api_req *r)
{
	gb_api_req *after = s->park_tail;
	while (after && after->park_until_ms > r->park_until_ms)
		after = after->prev;
	r->prev = after;
	r->next = after ? after->next : s->park_head;
	if (r->next)
		r->next->prev = r;
	else
		s->park_tail = r;
	if (after)
		after->next = r;
	else
		s->park_head = r;
	r->phase = GB_REQ_PARKED;
	s->parked++;
	s->parks_total++;
	if (s->park_head == r)
		pthread_cond_signal(&s->timer_cv);
}

static void park_remove(gb_api_srv *s, gb_api_req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		s->park_head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		s->park_tail = r->prev;
	r->next = r->prev = NULL;
	s->parked--;
}

void gb_api_park(gb_api_req *r, gb_api_fn again, const char *pool,
                 int64_t until_ms)
{
	r->again = again;
	free(r->park_pool);
	r->park_pool = pool ? gb_xstrdup(pool) : NULL;
	r->park_until_ms = until_ms;
	r->parked_once = 1;
}

/* Wakes the long polls waiting for an event of pool (all = every one). */
static void wake(gb_daemon *d, const char *pool, int all)
{
	gb_api_srv *s = d->srv;
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->event_seq++;
	for (gb_api_req *r = s->park_head, *next; r; r = next) {
		next = r->next;
		if (all || !r->park_pool ||
		    (pool && strcmp(r->park_pool, pool) == 0)) {
			park_remove(s, r);
			run_push(s, r);
		}
	}
	pthread_mutex_unlock(&s->mu);
}

void gb_api_wake(gb_daemon *d, const char *pool)
{
	wake(d, pool, 0);
}

void gb_api_wake_all(gb_daemon *d)
{
	wake(d, NULL, 1);
}

/* ----------------------------------------------------------- answers */

/* An answer this big (a plan with every refusal) is freed with its
 * memory given back to the system: glibc keeps freed heap memory for
 * reuse, so a few big answers would otherwise leave the daemon's RSS at
 * their peak for good. */
#define GB_API_TRIM_AT ((size_t)1 << 20)

void gb_api_give_back(size_t bytes)
{
#ifdef __GLIBC__
	if (bytes >= GB_API_TRIM_AT)
		malloc_trim(0);
#else
	(void)bytes;
#endif
}

static void free_big(void *p)
{
	free(p);
	gb_api_give_back(GB_API_TRIM_AT);
}

/* 1 when an Accept-Encoding value lists gzip with a weight above 0
 * ("gzip", "gzip, deflate", "deflate;q=1, gzip;q=0.5"; not "gzip;q=0"). */
static int accepts_gzip(const char *ae)
{
	while (ae && *ae) {
		size_t n;
		while (*ae == ' ' || *ae == '\t' || *ae == ',')
			ae++;
		n = strcspn(ae, ",");
		if (n >= 4 && strncasecmp(ae, "gzip", 4) == 0 &&
		    (n == 4 || ae[4] == ';' || ae[4] == ' ')) {
			const char *q = memchr(ae, '=', n);
			return !q || strtod(q + 1, NULL) > 0;
		}
		ae += n;
	}
	return 0;
}

/* body (len bytes) gzip-compressed at zlib's fastest level: a new string
 * (caller frees) with its length in *out_len, or NULL when zlib failed
 * (the caller then sends it as it is). */
static char *gzip_body(const char *body, size_t len, size_t *out_len)
{
	z_stream z;
	uLong cap;
	char *out;
	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
	                 Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	cap = deflateBound(&z, (uLong)len);
	out = gb_xmalloc(cap);
	z.next_in = (Bytef *)(uintptr_t)body;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(out);
		return NULL;
	}
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

static enum MHD_Result send_response(gb_api_req *r)
{
	int gz = 0;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char *body;
	size_t len;
	if (r->text) {
		body = r->text;
		r->text = NULL;
	} else {
		body = r->resp ? json_dumps(r->resp, JSON_COMPACT |
		                                    JSON_REAL_PRECISION(GB_JSON_DIGITS)) : gb_xstrdup("{}");
		if (!body)
			body = gb_xstrdup("{}");
		r->content_type = "application/json";
	}
	len = r->text_len ? r->text_len : strlen(body);
	if (r->gzip_ok && len <= UINT32_MAX &&
	    accepts_gzip(MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                             "Accept-Encoding"))) {
		size_t zlen;
		char *z = gzip_body(body, len, &zlen);
		if (z) {
			free(body);
			body = z;
			len = zlen;
			gz = 1;
		}
	}
	resp = len >= GB_API_TRIM_AT
	               ? MHD_create_response_from_buffer_with_free_callback(
	                         len, body, free_big)
	               : MHD_create_response_from_buffer(len, body,
	                                                 MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(resp, "Content-Type", r->content_type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (r->gzip_ok)
		MHD_add_response_header(resp, "Vary", "Accept-Encoding");
	if (gz)
		MHD_add_response_header(resp, "Content-Encoding", "gzip");
	if (r->console) {
		MHD_add_response_header(resp, "Content-Security-Policy",
		                        gb_api_console_csp);
		MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
		MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	}
	if (r->etag[0])
		MHD_add_response_header(resp, "ETag", r->etag);
	if (r->retry_after_s > 0) {
		char ra[24];
		snprintf(ra, sizeof(ra), "%d", r->retry_after_s);
		MHD_add_response_header(resp, "Retry-After", ra);
	}
	ret = MHD_queue_response(r->conn, r->status ? r->status : 500, resp);
	MHD_destroy_response(resp);
	gb_metrics_api(r->d, (double)(gb_mono_ns() - r->t0_ns) / 1e9, r->status,
	               r->parked_once);
	return ret;
}

/* -------------------------------------------------- handler threads */

/* Runs one request (or a woken long poll) on a handler thread. */
static void run_one(gb_api_srv *s, gb_api_req *r)
{
	gb_daemon *d = s->d;
	uint64_t seq;
	pthread_mutex_lock(&s->mu);
	seq = s->event_seq;
	s->runs_total++;
	pthread_mutex_unlock(&s->mu);
	pthread_rwlock_rdlock(&d->cfg_lock);
	if (r->again) {
		gb_api_fn fn = r->again;
		r->again = NULL;
		fn(r);
	} else if (!r->status) {
		gb_api_run(r);
	}
	if (!r->again)
		gb_api_audit_request(r);
	pthread_rwlock_unlock(&d->cfg_lock);
	if (r->again) {
		pthread_mutex_lock(&s->mu);
		/* an event since the handler looked: look again at once (the
		 * handler read the store after seq was taken) */
		if (s->event_seq != seq || gb_daemon_stopping(d))
			run_push(s, r);
		else
			park_insert(s, r);
		pthread_mutex_unlock(&s->mu);
		return;
	}
	r->phase = GB_REQ_DONE;
	MHD_resume_connection(r->conn);
}

static void *worker_main(void *arg)
{
	gb_api_srv *s = arg;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		gb_api_req *r;
		while (!s->run_head && !s->quit)
			pthread_cond_wait(&s->work_cv, &s->mu);
		if (!(r = run_pop(s)))
			break; /* quit, and nothing left to run */
		pthread_mutex_unlock(&s->mu);
		run_one(s, r);
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Puts parked requests whose deadline came back on the run queue. */
static void *timer_main(void *arg)
{
	gb_api_srv *s = arg;
	pthread_mutex_lock(&s->mu);
	while (!s->quit) {
		int64_t now = gb_mono_ms();
		struct timespec ts;
		while (s->park_head && s->park_head->park_until_ms <= now) {
			gb_api_req *r = s->park_head;
			park_remove(s, r);
			run_push(s, r);
		}
		if (!s->park_head) {
			pthread_cond_wait(&s->timer_cv, &s->mu);
			continue;
		}
		{
			int64_t wait = s->park_head->park_until_ms - now;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += wait / 1000;
			ts.tv_nsec += (wait % 1000) * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
		}
		pthread_cond_timedwait(&s->timer_cv, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* ------------------------------------------------------ connections */

static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr,
                                     socklen_t addrlen)
{
	gb_daemon *d = cls;
	gb_api_srv *s = d->srv;
	int why;
	(void)addrlen;
	why = gb_api_conn_check(s->limits, addr, s->max_conns,
	                        s->max_per_client);
	return why ? MHD_NO : MHD_YES;
}

static void notify_connection(void *cls, struct MHD_Connection *conn,
                              void **socket_context,
                              enum MHD_ConnectionNotificationCode toe)
{
	gb_daemon *d = cls;
	gb_api_srv *s = d->srv;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		*socket_context = gb_api_conn_opened(
			s->limits, ci ? ci->client_addr : NULL);
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		gb_api_conn_closed(s->limits, *socket_context);
		*socket_context = NULL;
	}
}

/* Called with the request line: the request's state starts here, with
 * the path as sent (before libmicrohttpd decodes it). */
static void *uri_logged(void *cls, const char *uri,
                       struct MHD_Connection *conn)
{
	gb_api_req *r = gb_xcalloc(1, sizeof(*r));
	const char *q = strchr(uri, '?');
	r->d = cls;
	r->conn = conn;
	r->path = gb_xstrndup(uri, q ? (size_t)(q - uri) : strlen(uri));
	r->t0_ns = gb_mono_ns();
	return r;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
	gb_api_req *r = *con_cls;
	gb_daemon *d = cls;
	if (!r)
		return;
	/* kept alive after a body: the next request gets the header timeout
	 * again */
	if (r->body_timeout && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
		                          (unsigned)d->srv->header_timeout_s);
	json_decref(r->resp);
	free(r->text);
	gb_buf_free(&r->body);
	free(r->actor_copy);
	free(r->team_copy);
	json_decref(r->ci_labels);
	free(r->path);
	free(r->park_pool);
	free(r);
	*con_cls = NULL;
}

/* ---------------------------------------------------------- hygiene */

typedef struct hdr_scan {
	int n;                        /* headers */
	int auth, clen, tenc, host;   /* how many of each */
	const char *te, *cl, *expect;
	const char *keys[GB_API_MAX_HEADERS + 1];
	const char *vals[GB_API_MAX_HEADERS + 1];
} hdr_scan;

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind,
                                   const char *key, const char *value)
{
	hdr_scan *h = cls;
	(void)kind;
	if (h->n <= GB_API_MAX_HEADERS) {
		h->keys[h->n] = key;
		h->vals[h->n] = value;
	}
	h->n++;
	if (strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION) == 0)
		h->auth++;
	else if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		h->clen++;
		h->cl = value;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		h->tenc++;
		h->te = value;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0)
		h->host++;
	else if (strcasecmp(key, MHD_HTTP_HEADER_EXPECT) == 0)
		h->expect = value;
	return MHD_YES;
}

/* Whether a header value was cut short.  libmicrohttpd 0.9.x keeps the
 * request line and headers as received in the connection's read buffer
 * (from the method on, header_size bytes), ends each line by writing NUL
 * over its CR LF, and hands out values as C strings pointing into it:
 * so after a value's end only NUL bytes may come before the next
 * header's name (or the end of the block).  Anything else means the
 * value held a NUL byte (the rest of it was silently dropped) or went on
 * on a folded line.  Values that are not inside the block are not
 * judged. */
static int value_cut(const hdr_scan *h, int i, const char *blk, size_t blen)
{
	const char *v = h->vals[i], *end = blk + blen, *next = end;
	if (!v || v < blk || v >= end)
		return 0;
	for (int j = 0; j < h->n && j <= GB_API_MAX_HEADERS; j++)
		if (h->keys[j] > v && h->keys[j] < next)
			next = h->keys[j];
	for (const char *p = v + strlen(v); p < next; p++)
		if (*p)
			return 1;
	return 0;
}

/* 0, or sets the refusal on r and returns -1. */
static int check_headers(gb_api_req *r, const char *method)
{
	hdr_scan h;
	const union MHD_ConnectionInfo *ci;
	memset(&h, 0, sizeof(h));
	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, scan_header, &h);
	if (h.n > GB_API_MAX_HEADERS) {
		gb_api_error(r, 431, "TooManyHeaders",
		             "%d header fields; at most %d are accepted", h.n,
		             GB_API_MAX_HEADERS);
		return -1;
	}
	if (h.auth > 1 || h.clen > 1 || h.tenc > 1 || h.host > 1) {
		gb_api_error(r, 400, "DuplicateHeader",
		             "the %s header is sent %d times; send it once",
		             h.auth > 1 ? "Authorization"
		             : h.clen > 1 ? "Content-Length"
		             : h.tenc > 1 ? "Transfer-Encoding" : "Host",
		             h.auth > 1 ? h.auth : h.clen > 1 ? h.clen
		             : h.tenc > 1 ? h.tenc : h.host);
		return -1;
	}
	ci = MHD_get_connection_info(r->conn,
	                             MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	if (ci)
		for (int i = 0; i < h.n; i++)
			if (value_cut(&h, i, method, ci->header_size)) {
				gb_api_error(r, 400, "MalformedHeader",
				             "the value of header %.64s holds a NUL "
				             "byte or goes on over a folded line; "
				             "send each header on one line, without "
				             "control characters", h.keys[i]);
				return -1;
			}
	if (h.te) {
		if (strcasecmp(h.te, "chunked") != 0) {
			gb_api_error(r, 501, "NotImplemented",
			             "Transfer-Encoding \"%.64s\" is not supported: "
			             "send the body with a Content-Length, or with "
			             "Transfer-Encoding: chunked alone", h.te);
			return -1;
		}
		if (h.cl) {
			gb_api_error(r, 400, "BadRequest",
			             "Content-Length and Transfer-Encoding are both "
			             "set; send one of them");
			return -1;
		}
	}
	if (h.expect && h.cl && strcasecmp(h.expect, "100-continue") == 0) {
		char *end;
		unsigned long long n;
		errno = 0;
		n = strtoull(h.cl, &end, 10);
		if (errno || n > GB_API_MAX_BODY) {
			r->too_big = 1;
			gb_api_error(r, 413, "TooLarge",
			             "request body larger than %u bytes",
			             GB_API_MAX_BODY);
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ handler */

/* Queues a request for a handler thread (its connection suspended), or
 * answers 503 when the server is stopping.  Returns what the MHD
 * callback returns. */
static enum MHD_Result dispatch(gb_api_srv *s, gb_api_req *r)
{
	pthread_mutex_lock(&s->mu);
	if (s->quit) {
		pthread_mutex_unlock(&s->mu);
		gb_api_error(r, 503, "ShuttingDown",
		             "the daemon is stopping; retry against another "
		             "replica or after it is back");
		r->retry_after_s = 5;
		r->phase = GB_REQ_DONE;
		return send_response(r);
	}
	MHD_suspend_connection(r->conn);
	run_push(s, r);
	pthread_mutex_unlock(&s->mu);
	return MHD_YES;
}

static int is_probe(const gb_api_req *r)
{
	return strcmp(r->path, "/healthz") == 0 || strcmp(r->path, "/readyz") == 0;
}

static void begin(gb_api_req *r, const char *method)
{
	const union MHD_ConnectionInfo *ci;
	const char *cl;
	r->method = method;
	ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr) {
		const struct sockaddr *sa = ci->client_addr;
		socklen_t len = sa->sa_family == AF_INET6
		                        ? sizeof(struct sockaddr_in6)
		                        : sizeof(struct sockaddr_in);
		memcpy(&r->peer, sa, len);
		r->peer_len = len;
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr,
			          r->peer_text, sizeof(r->peer_text));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6,
			          &((const struct sockaddr_in6 *)sa)->sin6_addr,
			          r->peer_text, sizeof(r->peer_text));
	}
	/* attempted mutations are audited even when refused */
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		r->action = method;
		snprintf(r->target, sizeof(r->target), "%s", r->path);
	}
	/* headers are complete: a body gets the longer timeout.  Only then:
	 * the option takes libmicrohttpd's cleanup lock and moves the
	 * connection between its timeout lists, which cost a GET ~10% of
	 * its throughput when done for every request (BENCHMARKS.md, 5) */
	if (MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                MHD_HTTP_HEADER_TRANSFER_ENCODING) ||
	    ((cl = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                       MHD_HTTP_HEADER_CONTENT_LENGTH)) &&
	     strcmp(cl, "0") != 0)) {
		MHD_set_connection_option(r->conn, MHD_CONNECTION_OPTION_TIMEOUT,
		                          GB_API_REQUEST_TIMEOUT_S);
		r->body_timeout = 1;
	}
}

/* The request line and Host: a path that holds an encoded NUL (%00) or
 * a control character, and an HTTP/1.1 request without Host (RFC 9112
 * 3.2), are answered 400.  0, or -1 with the error set. */
static int check_target(gb_api_req *r, const char *version)
{
	const char *host;
	for (const char *p = r->path; *p; p++)
		if ((p[0] == '%' && p[1] == '0' && p[2] == '0') ||
		    (unsigned char)*p < 0x20 || *p == 0x7f) {
			gb_api_error(r, 400, "BadRequest",
			             "the request path holds %s; send a path of "
			             "printable characters",
			             *p == '%' ? "an encoded NUL (%00)"
			                       : "a control character");
			return -1;
		}
	host = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Host");
	if (version && strcmp(version, MHD_HTTP_VERSION_1_1) == 0 &&
	    (!host || !*host)) {
		gb_api_error(r, 400, "BadRequest",
		             "an HTTP/1.1 request needs a Host header");
		return -1;
	}
	return 0;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn,
                               const char *url, const char *method,
                               const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
	gb_daemon *d = cls;
	gb_api_req *r = *con_cls;
	(void)url;
	if (!r || r->conn != conn)
		return MHD_NO;
	switch (r->phase) {
	case GB_REQ_NEW:
		begin(r, method);
		r->phase = GB_REQ_BODY;
		if (check_target(r, version) != 0 ||
		    check_headers(r, method) != 0)
			return dispatch(d->srv, r); /* audited, then answered */
		return MHD_YES;
	case GB_REQ_BODY:
		if (*upload_size) {
			if (r->too_big ||
			    r->body.len + *upload_size > GB_API_MAX_BODY) {
				r->too_big = 1;
				gb_buf_free(&r->body);
			} else {
				gb_buf_append(&r->body, upload, *upload_size);
			}
			*upload_size = 0;
			return MHD_YES;
		}
		if (is_probe(r)) {
			/* no store, no config: answered right here */
			gb_api_run(r);
			r->phase = GB_REQ_DONE;
			return send_response(r);
		}
		if (gb_api_run_now(r)) {
			/* a snapshot, ready: answered right here too */
			r->phase = GB_REQ_DONE;
			return send_response(r);
		}
		return dispatch(d->srv, r);
	case GB_REQ_DONE:
		return send_response(r);
	default:
		return MHD_YES; /* suspended: not called */
	}
}

/* ---------------------------------------------------------- metrics */

gb_api_limits *gb_api_srv_limits(gb_daemon *d)
{
	return d->srv ? d->srv->limits : NULL;
}

void gb_api_metrics(gb_daemon *d, gb_buf *b)
{
	gb_api_srv *s = d->srv;
	gb_api_limit_stats st;
	size_t parked, queued;
	unsigned long long parks, runs;
	if (!s)
		return;
	gb_api_limits_stats(s->limits, &st);
	pthread_mutex_lock(&s->mu);
	parked = s->parked;
	queued = s->queued;
	parks = (unsigned long long)s->parks_total;
	runs = (unsigned long long)s->runs_total;
	pthread_mutex_unlock(&s->mu);
	gb_buf_printf(b,
		"# HELP gpubroker_api_connections Open API connections.\n"
		"# TYPE gpubroker_api_connections gauge\n"
		"gpubroker_api_connections %llu\n"
		"# HELP gpubroker_api_connections_limit The caps: in all, and "
		"per client address (0: none).\n"
		"# TYPE gpubroker_api_connections_limit gauge\n"
		"gpubroker_api_connections_limit{scope=\"total\"} %d\n"
		"gpubroker_api_connections_limit{scope=\"client\"} %d\n"
		"# HELP gpubroker_api_connections_total Connections accepted.\n"
		"# TYPE gpubroker_api_connections_total counter\n"
		"gpubroker_api_connections_total %llu\n"
		"# HELP gpubroker_api_connections_refused_total Connections "
		"closed at once: a cap was reached.\n"
		"# TYPE gpubroker_api_connections_refused_total counter\n"
		"gpubroker_api_connections_refused_total{cap=\"total\"} %llu\n"
		"gpubroker_api_connections_refused_total{cap=\"client\"} %llu\n"
		"# HELP gpubroker_api_clients Client addresses tracked (open "
		"connections or a refusal budget in use).\n"
		"# TYPE gpubroker_api_clients gauge\n"
		"gpubroker_api_clients %llu\n"
		"# HELP gpubroker_api_long_polls Long polls waiting (without a "
		"thread).\n"
		"# TYPE gpubroker_api_long_polls gauge\n"
		"gpubroker_api_long_polls %zu\n"
		"# HELP gpubroker_api_long_polls_parked_total Times a long poll "
		"started to wait.\n"
		"# TYPE gpubroker_api_long_polls_parked_total counter\n"
		"gpubroker_api_long_polls_parked_total %llu\n"
		"# HELP gpubroker_api_handler_runs_total Handler runs (requests "
		"and woken long polls).\n"
		"# TYPE gpubroker_api_handler_runs_total counter\n"
		"gpubroker_api_handler_runs_total %llu\n"
		"# HELP gpubroker_api_queued Requests waiting for a handler "
		"thread.\n"
		"# TYPE gpubroker_api_queued gauge\n"
		"gpubroker_api_queued %zu\n"
		"# HELP gpubroker_api_threads Threads of the API: connection "
		"(epoll) and handler threads.\n"
		"# TYPE gpubroker_api_threads gauge\n"
		"gpubroker_api_threads{kind=\"connection\"} %d\n"
		"gpubroker_api_threads{kind=\"handler\"} %d\n"
		"# HELP gpubroker_audit_refusals_dropped_total Refused requests "
		"not written to the audit: their address was over "
		"daemon.refusals_per_minute.\n"
		"# TYPE gpubroker_audit_refusals_dropped_total counter\n"
		"gpubroker_audit_refusals_dropped_total %llu\n"
		"# HELP gpubroker_api_rate_limited_total Requests refused by a "
		"token's budget (POST /v1/reconcile).\n"
		"# TYPE gpubroker_api_rate_limited_total counter\n"
		"gpubroker_api_rate_limited_total %llu\n",
		(unsigned long long)st.open, s->max_conns, s->max_per_client,
		(unsigned long long)st.opened,
		(unsigned long long)st.refused_total,
		(unsigned long long)st.refused_client,
		(unsigned long long)st.clients, parked, parks, runs, queued,
		d->cfg->api_threads, s->nworkers,
		(unsigned long long)st.refusals_dropped,
		(unsigned long long)st.token_limited);
}

/* ----------------------------------------------------------- control */

static int parse_listen(const char *listen, struct sockaddr_in *sa, char *err,
                        size_t cap)
{
	char host[256];
	const char *colon = listen ? strrchr(listen, ':') : NULL;
	int64_t port;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (!listen || !colon) {
		snprintf(err, cap, "listen address \"%s\" must be HOST:PORT",
		         listen ? listen : "");
		return -1;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
	if (gb_parse_int64(colon + 1, &port) != 0 || port < 0 || port > 65535) {
		snprintf(err, cap, "listen address %s: bad port", listen);
		return -1;
	}
	if (!*host || strcmp(host, "localhost") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
		snprintf(err, cap, "listen address %s: %s is not an IPv4 address",
		         listen, host);
		return -1;
	}
	sa->sin_port = htons((uint16_t)port);
	return 0;
}

/* Raises the descriptor limit to fit the connection cap; returns the cap
 * that fits (lower than asked, with a warning, when the hard limit is
 * too low). */
static int fit_fd_limit(int want)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)want + FD_RESERVE;
	int fits;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return want;
	if (rl.rlim_cur < need) {
		struct rlimit nl = rl;
		nl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need
		                      ? need
		                      : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &nl) == 0)
			rl = nl;
	}
	if (rl.rlim_cur >= need)
		return want;
	fits = rl.rlim_cur > 2 * FD_RESERVE ? (int)(rl.rlim_cur - FD_RESERVE)
	                                    : (int)(rl.rlim_cur / 2);
	if (fits < 16)
		fits = 16;
	gb_log(GB_LOG_WARN, "api", "daemon.max_connections is %d, but this "
	       "process may open only %llu files (ulimit -n; hard limit %llu): "
	       "serving at most %d connections. Raise the limit (LimitNOFILE= "
	       "in the systemd unit) or lower daemon.max_connections.", want,
	       (unsigned long long)rl.rlim_cur,
	       (unsigned long long)rl.rlim_max, fits);
	return fits;
}

static void srv_free(gb_api_srv *s)
{
	if (!s)
		return;
	gb_api_limits_free(s->limits);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->work_cv);
	pthread_cond_destroy(&s->timer_cv);
	free(s->workers);
	free(s);
}

/* Stops the handler threads: every parked long poll is answered, the
 * queue drained (caller: the daemon's stop flag is set). */
static void srv_stop_threads(gb_api_srv *s)
{
	pthread_mutex_lock(&s->mu);
	while (s->park_head) {
		gb_api_req *r = s->park_head;
		park_remove(s, r);
		run_push(s, r);
	}
	s->quit = 1;
	pthread_cond_broadcast(&s->work_cv);
	pthread_cond_broadcast(&s->timer_cv);
	pthread_mutex_unlock(&s->mu);
	/* nworkers stays as it is: /metrics may still read it */
	for (int i = 0; i < s->nworkers; i++)
		pthread_join(s->workers[i], NULL);
	if (s->timer_started)
		pthread_join(s->timer, NULL);
}

/* TLS 1.2 and 1.3 only, forward-secret key exchanges (ECDHE, DHE; TLS
 * 1.3's are all), AEAD ciphers only: no TLS 1.0/1.1, no static RSA, no
 * CBC (a GnuTLS priority string). */
#define GB_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:" \
	"-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:+DHE-RSA:-CIPHER-ALL:+AES-256-GCM:" \
	"+AES-128-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD"

/* tls.key readable or writable by others is refused, by its group
 * warned about.  0, or -1 with err. */
static int tls_key_mode(const char *path, char *err, size_t cap)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return 0; /* reading it says why */
	if (st.st_mode & (S_IROTH | S_IWOTH)) {
		snprintf(err, cap, "tls.key %s is readable by everyone (mode "
		         "%04o): anyone on this machine could impersonate the "
		         "daemon; chmod 600 %s (owned by the daemon's user)",
		         path, (unsigned)(st.st_mode & 07777), path);
		return -1;
	}
	if (st.st_mode & (S_IRGRP | S_IWGRP))
		gb_log(GB_LOG_WARN, "daemon", "tls.key %s is readable by its "
		       "group (mode %04o): chmod 600 %s unless that group is "
		       "meant to read it", path,
		       (unsigned)(st.st_mode & 07777), path);
	return 0;
}

int gb_api_start(gb_daemon *d, char *err, size_t cap)
{
	struct sockaddr_in sa;
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
	char *cert = NULL, *key = NULL;
	size_t len;
	const union MHD_DaemonInfo *info;
	gb_api_srv *s;
	const gb_config *cfg = d->cfg;
	unsigned threads = cfg->api_threads > 0 ? (unsigned)cfg->api_threads : 2;
	if (parse_listen(cfg->listen ? cfg->listen : "127.0.0.1:7878", &sa, err,
	                 cap) != 0)
		return -1;
	if (cfg->tls_cert && cfg->tls_key) {
		if (tls_key_mode(cfg->tls_key, err, cap) != 0)
			return -1;
		if (gb_read_file(cfg->tls_cert, 1 << 20, &cert, &len) != 0 ||
		    gb_read_file(cfg->tls_key, 1 << 20, &key, &len) != 0) {
			snprintf(err, cap, "cannot read tls.cert %s or tls.key %s",
			         cfg->tls_cert, cfg->tls_key);
			free(cert);
			return -1;
		}
		flags |= MHD_USE_TLS;
		d->tls = 1;
	}
	s = gb_xcalloc(1, sizeof(*s));
	s->d = d;
	s->limits = gb_api_limits_new();
	s->max_conns = fit_fd_limit(cfg->max_connections > 0
	                                    ? cfg->max_connections : 8192);
	s->max_per_client = cfg->max_conn_per_client;
	s->header_timeout_s = cfg->header_timeout_s > 0 ? cfg->header_timeout_s
	                                                : 10;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->work_cv, NULL);
	pthread_cond_init(&s->timer_cv, NULL);
	d->srv = s;
	{
		/* MHD's own cap is a backstop above ours (ours counts per
		 * client too, and says so in a metric) */
		struct MHD_OptionItem opts[16];
		size_t n = 0;
#define OPT(o, v, p) (opts[n].option = (o), opts[n].value = (intptr_t)(v), \
                      opts[n].ptr_value = (void *)(p), n++)
		OPT(MHD_OPTION_SOCK_ADDR, 0, &sa);
		OPT(MHD_OPTION_THREAD_POOL_SIZE, threads, NULL);
		OPT(MHD_OPTION_CONNECTION_LIMIT, s->max_conns + (int)threads, NULL);
		OPT(MHD_OPTION_CONNECTION_TIMEOUT, s->header_timeout_s, NULL);
		OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, 64 * 1024, NULL);
		OPT(MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, NULL);
		OPT(MHD_OPTION_URI_LOG_CALLBACK, uri_logged, d);
		OPT(MHD_OPTION_NOTIFY_COMPLETED, completed, d);
		OPT(MHD_OPTION_NOTIFY_CONNECTION, notify_connection, d);
		if (d->tls) {
			OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, cert);
			OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, key);
			OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, GB_TLS_PRIORITIES);
		}
		OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
		d->mhd = MHD_start_daemon(flags, 0, accept_policy, d, handler, d,
		                          MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	}
	if (key)
		memset(key, 0, strlen(key));
	free(cert);
	free(key);
	if (!d->mhd) {
		snprintf(err, cap, "cannot listen on %s (in use, or not an "
		                   "address of this machine)",
		         cfg->listen ? cfg->listen : "127.0.0.1:7878");
		d->srv = NULL;
		srv_free(s);
		return -1;
	}
	s->nworkers = cfg->api_workers > 0 ? cfg->api_workers : 16;
	s->workers = gb_xcalloc((size_t)s->nworkers, sizeof(pthread_t));
	for (int i = 0; i < s->nworkers; i++)
		pthread_create(&s->workers[i], NULL, worker_main, s);
	s->timer_started = pthread_create(&s->timer, NULL, timer_main, s) == 0;
	info = MHD_get_daemon_info(d->mhd, MHD_DAEMON_INFO_BIND_PORT);
	d->port = info ? info->port : ntohs(sa.sin_port);
	return 0;
}

void gb_api_quiesce(gb_daemon *d)
{
	if (d->mhd) {
		MHD_socket sock = MHD_quiesce_daemon(d->mhd);
		if (sock != MHD_INVALID_SOCKET)
			close(sock);
	}
}

void gb_api_stop(gb_daemon *d)
{
	/* every suspended connection is resumed before libmicrohttpd
	 * stops: parked long polls answer (the stop flag is set), queued
	 * requests run to their end */
	if (d->srv)
		srv_stop_threads(d->srv);
	if (d->mhd)
		MHD_stop_daemon(d->mhd);
	d->mhd = NULL;
	srv_free(d->srv);
	d->srv = NULL;
}
