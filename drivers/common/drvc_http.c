/* drvc_http.c -- see drvc_http.h. */
#include "drvc_http.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drvc_json.h"
#include "drvc_util.h"

int drvc_header(const gb_http_resp *r, const char *name, char *buf,
                size_t cap)
{
	size_t n = strlen(name);
	if (cap)
		buf[0] = '\0';
	if (!r || !r->headers)
		return -1;
	for (size_t i = 0; i < r->nheaders; i++) {
		const char *h = r->headers[i];
		const char *v, *e;
		size_t len;
		if (!h || strncasecmp(h, name, n) != 0 || h[n] != ':')
			continue;
		v = h + n + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		e = v + strlen(v);
		while (e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' ||
		                 e[-1] == '\n'))
			e--;
		len = (size_t)(e - v);
		if (cap) {
			size_t c = len < cap - 1 ? len : cap - 1;
			memcpy(buf, v, c);
			buf[c] = '\0';
		}
		return (int)(len > (size_t)0x7fffffff ? 0x7fffffff : len);
	}
	return -1;
}

static int64_t parse_ms(const char *s, int64_t unit)
{
	char *end;
	double d;
	if (!*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	d = strtod(s, &end);
	if (*end || d < 0)
		return -1;
	d *= (double)unit;
	if (d > (double)DRVC_MAX_RETRY_AFTER_MS)
		return DRVC_MAX_RETRY_AFTER_MS;
	return (int64_t)d;
}

int64_t drvc_retry_after_ms(const gb_http_resp *r, int64_t now_ms)
{
	char v[128];
	int64_t ms;
	if (drvc_header(r, "retry-after-ms", v, sizeof(v)) >= 0 &&
	    (ms = parse_ms(v, 1)) >= 0)
		return ms;
	if (drvc_header(r, "x-ms-retry-after-ms", v, sizeof(v)) >= 0 &&
	    (ms = parse_ms(v, 1)) >= 0)
		return ms;
	if (drvc_header(r, "Retry-After", v, sizeof(v)) < 0)
		return 0;
	if ((ms = parse_ms(v, 1000)) >= 0)
		return ms;
	{
		int64_t when = drvc_http_date(v);
		if (when < 0)
			return 0;
		ms = when * 1000 - now_ms;
		if (ms < 0)
			return 0;
		return ms > DRVC_MAX_RETRY_AFTER_MS ? DRVC_MAX_RETRY_AFTER_MS : ms;
	}
}

json_t *drvc_json_buf(const char *body, size_t len, size_t max,
                      const char *what, gb_error *err)
{
	json_error_t je;
	json_t *root;
	if (!body || len == 0) {
		drvc_err(err, GB_ERR_TRANSIENT, 0, "EmptyResponse",
		         "%s: the body is empty", what);
		return NULL;
	}
	if (len > max) {
		drvc_err(err, GB_ERR_INVALID, 0, "ResponseTooLarge",
		         "%s: the body is %zu bytes, more than the %zu accepted",
		         what, len, max);
		return NULL;
	}
	root = json_loadb(body, len, 0, &je);
	if (!root) {
		char why[128];
		/* jansson quotes input near the error: keep it printable */
		drvc_clean_text(why, sizeof(why), je.text, sizeof(why) - 1);
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedResponse",
		         "%s: not valid JSON at byte %d: %s", what, je.position,
		         why);
		return NULL;
	}
	if (!json_is_object(root)) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedResponse",
		         "%s: expected a JSON object", what);
		json_decref(root);
		return NULL;
	}
	return root;
}

int drvc_json_ctype_ok(const gb_http_resp *r, const char *what,
                       gb_error *err)
{
	char ct[128];
	if (drvc_header(r, "Content-Type", ct, sizeof(ct)) >= 0 && ct[0] &&
	    !strcasestr(ct, "json")) {
		char clean[64];
		drvc_clean_text(clean, sizeof(clean), ct, sizeof(clean) - 1);
		drvc_err(err, GB_ERR_INVALID, (int)r->status, "UnexpectedContentType",
		         "%s: expected JSON, got Content-Type %s (%zu bytes)",
		         what, clean, r->body_len);
		return -1;
	}
	return 0;
}

json_t *drvc_json_body(const gb_http_resp *r, size_t max, const char *what,
                       gb_error *err)
{
	if (drvc_json_ctype_ok(r, what, err) != 0)
		return NULL;
	return drvc_json_buf(r->body, r->body ? r->body_len : 0, max, what, err);
}

/* "scheme://host[:port]/..." -> "scheme://host:port" (lower case, the
 * default port made explicit).  -1 for anything else or userinfo. */
static int origin(const char *u, char *out, size_t cap)
{
	const char *p, *e, *hend;
	size_t n, o;
	int https, has_port;
	if (strncasecmp(u, "https://", 8) == 0) {
		https = 1;
		p = u + 8;
	} else if (strncasecmp(u, "http://", 7) == 0) {
		https = 0;
		p = u + 7;
	} else {
		return -1;
	}
	e = p;
	while (*e && *e != '/' && *e != '?' && *e != '#')
		e++;
	n = (size_t)(e - p);
	if (n == 0 || n + 16 > cap || memchr(p, '@', n))
		return -1;
	if (p[0] == '[') {
		hend = memchr(p, ']', n);
		if (!hend)
			return -1;
		has_port = hend + 1 < e && hend[1] == ':';
	} else {
		has_port = memchr(p, ':', n) != NULL;
	}
	o = (size_t)snprintf(out, cap, "%s://", https ? "https" : "http");
	for (size_t i = 0; i < n; i++)
		out[o++] = (char)tolower((unsigned char)p[i]);
	out[o] = '\0';
	if (!has_port)
		snprintf(out + o, cap - o, ":%s", https ? "443" : "80");
	return 0;
}

int drvc_same_origin(const char *a, const char *b)
{
	char oa[320], ob[320];
	if (!a || !b || origin(a, oa, sizeof(oa)) || origin(b, ob, sizeof(ob)))
		return 0;
	return strcmp(oa, ob) == 0;
}

void drvc_clean_text(char *dst, size_t cap, const char *src, size_t maxlen)
{
	size_t o = 0;
	if (!cap)
		return;
	for (size_t i = 0; src && src[i] && i < maxlen && o + 1 < cap; i++) {
		unsigned char c = (unsigned char)src[i];
		dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	dst[o] = '\0';
}

void drvc_scrub(char *s, size_t cap, const char *secret)
{
	static const char rep[] = "[redacted]";
	size_t sl;
	char *p;
	if (!s || !secret || !*secret)
		return;
	sl = strlen(secret);
	p = strstr(s, secret);
	while (p) {
		size_t tail = strlen(p + sl), pos = (size_t)(p - s);
		size_t rl = sizeof(rep) - 1;
		if (pos + rl >= cap) {
			p[0] = '\0';
			return;
		}
		if (pos + rl + tail >= cap)
			tail = cap - 1 - pos - rl;
		memmove(p + rl, p + sl, tail);
		memcpy(p, rep, rl);
		p[rl + tail] = '\0';
		p = strstr(p + rl, secret);
	}
}

json_t *drvc_json_error_body(const gb_http_resp *r, size_t max)
{
	json_t *root;
	if (!r->body || !r->body_len || r->body_len > max)
		return NULL;
	root = json_loadb(r->body, r->body_len, 0, NULL);
	if (!json_is_object(root)) {
		json_decref(root);
		return NULL;
	}
	return root;
}

void drvc_http_fail(gb_error *err, const gb_host *h, const gb_http_resp *r,
                    gb_err_class cls, const char *code, const char *shown,
                    const char *msg, const char *fmt, ...)
{
	va_list ap;
	size_t m;
	drvc_err(err, cls, (int)r->status, code, "%s", "");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	m = strlen(err->message);
	snprintf(err->message + m, sizeof(err->message) - m,
	         ": HTTP %ld%s%s%s%s", r->status, shown && *shown ? " " : "",
	         shown ? shown : "", msg && *msg ? ": " : "", msg ? msg : "");
	if (cls == GB_ERR_THROTTLED || cls == GB_ERR_TRANSIENT)
		err->retry_after_ms = drvc_retry_after_ms(r, h->now_ms(h->ctx));
}

int drvc_json_answer(const gb_host *h, int rc, gb_http_resp *resp,
                     size_t max, const char *what, json_t **root,
                     gb_error *err)
{
	*root = NULL;
	if (rc != 0) {
		h->http_free(h->ctx, resp);
		return err->cls == GB_ERR_NOT_FOUND ? 0 : -1;
	}
	*root = drvc_json_body(resp, max, what, err);
	h->http_free(h->ctx, resp);
	return *root ? 1 : -1;
}

int drvc_gone_ok(int rc, gb_error *err)
{
	if (rc != 0 && err->cls == GB_ERR_NOT_FOUND) {
		memset(err, 0, sizeof(*err));
		rc = 0;
	}
	return rc;
}

gb_err_class drvc_status_class(long status)
{
	if (status >= 500 || status == 0)
		return GB_ERR_TRANSIENT;
	if (status == 429)
		return GB_ERR_THROTTLED;
	if (status == 401 || status == 403)
		return GB_ERR_AUTH;
	if (status == 404)
		return GB_ERR_NOT_FOUND;
	if (status == 409)
		return GB_ERR_CONFLICT;
	return GB_ERR_INVALID;
}
