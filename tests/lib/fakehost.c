/* fakehost.c -- see fakehost.h. */
#include "fakehost.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

typedef struct answer {
	long status;
	char *body;
	char **headers;
	size_t nheaders;
} answer;

struct fakehost {
	gb_host host;
	gb_kvs options;
	gb_kvs secrets;
	answer *q;
	size_t qn, qhead;
	fakehost_req *reqs;
	size_t nreqs;
	gb_buf logs;
	fakehost_handler handler;
	void *handler_ud;
	int64_t now;
};

static void fh_log(void *ctx, gb_log_level level, const char *fmt, ...)
{
	fakehost *fh = ctx;
	va_list ap;
	static const char *lv[] = {"error", "warn", "info", "debug"};
	gb_buf_printf(&fh->logs, "[%s] ", lv[level <= GB_LOG_DEBUG ? level : 3]);
	va_start(ap, fmt);
	gb_buf_vprintf(&fh->logs, fmt, ap);
	va_end(ap);
	gb_buf_putc(&fh->logs, '\n');
}

static char **copy_headers(const char *const *h, size_t n)
{
	char **out = gb_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		out[i] = gb_xstrdup(h[i]);
	return out;
}

static void free_headers(char **h, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(h[i]);
	free(h);
}

static int fh_http(void *ctx, const gb_http_req *req, gb_http_resp *resp,
                   gb_error *err)
{
	fakehost *fh = ctx;
	int max = req->max_attempts > 0 ? req->max_attempts : 3;
	memset(resp, 0, sizeof(*resp));
	for (int attempt = 1;; attempt++) {
		const char *signed_h[32];
		int ns = 0;
		fakehost_req *r;
		gb_err_class cls;
		if (req->sign) {
			ns = req->sign(req->sign_ud, req, signed_h, 32, err);
			if (ns < 0)
				return -1;
		}
		fh->reqs = gb_xrealloc(fh->reqs, (fh->nreqs + 1) * sizeof(*fh->reqs));
		r = &fh->reqs[fh->nreqs++];
		memset(r, 0, sizeof(*r));
		r->method = gb_xstrdup(req->method);
		r->url = gb_xstrdup(req->url);
		r->nheaders = req->nheaders + (size_t)ns;
		r->headers = gb_xcalloc(r->nheaders + 1, sizeof(char *));
		for (size_t i = 0; i < req->nheaders; i++)
			r->headers[i] = gb_xstrdup(req->headers[i]);
		for (int i = 0; i < ns; i++)
			r->headers[req->nheaders + (size_t)i] = gb_xstrdup(signed_h[i]);
		r->body = gb_xstrndup(req->body ? req->body : "", req->body_len);
		r->body_len = req->body_len;
		r->rate_class = gb_xstrdup(req->rate_class);

		/* release a previous attempt's answer */
		free(resp->body);
		free_headers(resp->headers, resp->nheaders);
		memset(resp, 0, sizeof(*resp));
		resp->attempts = attempt;
		if (fh->handler) {
			fh->handler(fh->handler_ud, r, &resp->status, &resp->body,
			            &resp->headers, &resp->nheaders);
			if (!resp->body)
				resp->body = gb_xstrdup("");
		} else if (fh->qhead < fh->qn) {
			answer *a = &fh->q[fh->qhead++];
			resp->status = a->status;
			resp->body = gb_xstrdup(a->body);
			resp->headers = copy_headers((const char *const *)a->headers,
			                             a->nheaders);
			resp->nheaders = a->nheaders;
		} else {
			resp->status = 0;
			resp->body = gb_xstrdup("");
		}
		resp->body_len = strlen(resp->body);
		if (resp->status == 0) {
			gb_error_set(err, GB_ERR_TRANSIENT, 0, "NetworkError",
			             "fakehost: no answer queued for %s %s",
			             req->method, req->url);
			cls = GB_ERR_TRANSIENT;
		} else if (req->classify) {
			memset(err, 0, sizeof(*err));
			cls = req->classify(req->classify_ud, resp, err);
		} else {
			cls = resp->status >= 200 && resp->status < 300
			              ? GB_ERR_NONE
			      : resp->status == 429 ? GB_ERR_THROTTLED
			      : resp->status >= 500 ? GB_ERR_TRANSIENT
			                            : GB_ERR_INVALID;
			if (cls != GB_ERR_NONE)
				gb_error_set(err, cls, (int)resp->status, "",
				             "HTTP %ld", resp->status);
		}
		if (cls == GB_ERR_NONE)
			return 0;
		err->cls = cls;
		if ((cls != GB_ERR_THROTTLED && cls != GB_ERR_TRANSIENT) ||
		    attempt >= max)
			return -1;
	}
}

static void fh_http_free(void *ctx, gb_http_resp *resp)
{
	(void)ctx;
	free(resp->body);
	free_headers(resp->headers, resp->nheaders);
	memset(resp, 0, sizeof(*resp));
}

static int64_t fh_now(void *ctx)
{
	return ((fakehost *)ctx)->now;
}

static int64_t fh_mono(void *ctx)
{
	return ((fakehost *)ctx)->now;
}

static void fh_sleep(void *ctx, int64_t ms)
{
	((fakehost *)ctx)->now += ms;
}

static void *fh_alloc(void *ctx, size_t n)
{
	(void)ctx;
	return malloc(n);
}

static void fh_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static const char *fh_option(void *ctx, const char *key)
{
	return gb_kvs_get(&((fakehost *)ctx)->options, key);
}

static int fh_secret(void *ctx, const char *source, char *buf, size_t cap)
{
	const char *v = gb_kvs_get(&((fakehost *)ctx)->secrets, source);
	if (!v || cap == 0)
		return -1;
	snprintf(buf, cap, "%s", v);
	return (int)strlen(buf);
}

static void fh_redact(void *ctx, const char *value)
{
	(void)ctx;
	(void)value;
}

fakehost *fakehost_new(void)
{
	fakehost *fh = gb_xcalloc(1, sizeof(*fh));
	fh->host.abi_major = GB_DRIVER_ABI_MAJOR;
	fh->host.abi_minor = GB_DRIVER_ABI_MINOR;
	fh->host.struct_size = sizeof(gb_host);
	fh->host.ctx = fh;
	fh->host.log = fh_log;
	fh->host.http = fh_http;
	fh->host.http_free = fh_http_free;
	fh->host.now_ms = fh_now;
	fh->host.mono_ms = fh_mono;
	fh->host.sleep_ms = fh_sleep;
	fh->host.alloc = fh_alloc;
	fh->host.free = fh_free;
	fh->host.option = fh_option;
	fh->host.secret = fh_secret;
	fh->host.redact = fh_redact;
	fh->now = 1700000000000LL;
	return fh;
}

void fakehost_free(fakehost *fh)
{
	if (!fh)
		return;
	gb_kvs_free(&fh->options);
	gb_kvs_free(&fh->secrets);
	for (size_t i = 0; i < fh->qn; i++) {
		free(fh->q[i].body);
		free_headers(fh->q[i].headers, fh->q[i].nheaders);
	}
	free(fh->q);
	for (size_t i = 0; i < fh->nreqs; i++) {
		fakehost_req *r = &fh->reqs[i];
		free(r->method);
		free(r->url);
		free_headers(r->headers, r->nheaders);
		free(r->body);
		free(r->rate_class);
	}
	free(fh->reqs);
	gb_buf_free(&fh->logs);
	free(fh);
}

const gb_host *fakehost_host(fakehost *fh)
{
	return &fh->host;
}

void fakehost_option(fakehost *fh, const char *key, const char *value)
{
	gb_kvs_set(&fh->options, key, value);
}

void fakehost_secret(fakehost *fh, const char *source, const char *value)
{
	gb_kvs_set(&fh->secrets, source, value);
}

void fakehost_push(fakehost *fh, long status, const char *body,
                   const char *const *headers)
{
	answer *a;
	size_t n = 0;
	fh->q = gb_xrealloc(fh->q, (fh->qn + 1) * sizeof(*fh->q));
	a = &fh->q[fh->qn++];
	while (headers && headers[n])
		n++;
	a->status = status;
	a->body = gb_xstrdup(body ? body : "");
	a->headers = copy_headers(headers, n);
	a->nheaders = n;
}

void fakehost_set_handler(fakehost *fh, fakehost_handler h, void *ud)
{
	fh->handler = h;
	fh->handler_ud = ud;
}

void fakehost_set_now(fakehost *fh, int64_t now_ms)
{
	fh->now = now_ms;
}

size_t fakehost_nrequests(const fakehost *fh)
{
	return fh->nreqs;
}

const fakehost_req *fakehost_request(const fakehost *fh, size_t i)
{
	return i < fh->nreqs ? &fh->reqs[i] : NULL;
}

const char *fakehost_req_header(const fakehost_req *r, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < r->nheaders; i++) {
		const char *h = r->headers[i];
		if (strncasecmp(h, name, n) == 0 && h[n] == ':') {
			h += n + 1;
			while (*h == ' ')
				h++;
			return h;
		}
	}
	return NULL;
}

const char *fakehost_logs(const fakehost *fh)
{
	return gb_buf_str(&fh->logs);
}

size_t fakehost_count(const fakehost *fh, const char *method,
                      const char *sub)
{
	size_t n = 0;
	for (size_t i = 0; i < fakehost_nrequests(fh); i++) {
		const fakehost_req *r = fakehost_request(fh, i);
		if (strcmp(r->method, method) == 0 && strstr(r->url, sub))
			n++;
	}
	return n;
}

size_t fakehost_pending(const fakehost *fh)
{
	return fh->qn - fh->qhead;
}

char *fakehost_init_refusal(fakehost *fh, const gb_driver *d,
                            const char *key, const char *value,
                            const char *needle)
{
	void *ctx = NULL;
	gb_error err;
	memset(&err, 0, sizeof(err));
	fakehost_option(fh, key, value);
	if (d->init(fakehost_host(fh), &ctx, &err) == 0) {
		d->fini(ctx);
		return gb_xasprintf("%s=%s: init accepted it", key, value);
	}
	if (ctx)
		return gb_xasprintf("%s=%s: init failed but left a context", key,
		                    value);
	if (err.cls != GB_ERR_INVALID || strcmp(err.code, "BadOption") != 0 ||
	    !strstr(err.message, needle))
		return gb_xasprintf("%s=%s: class %d code \"%s\" message \"%s\" "
		                    "(want INVALID, BadOption, \"%s\")", key, value,
		                    (int)err.cls, err.code, err.message, needle);
	return NULL;
}
