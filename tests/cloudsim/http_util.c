/*
 * http_util.c -- request/response helpers and the small encodings the
 * provider modules share (percent, form, XML, base64url, UUID, time).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http.h"

const char *sim_req_header(const sim_req *r, const char *name)
{
	for (size_t i = 0; i < r->nhdrs; i++)
		if (strcasecmp(r->hdrs[i].name, name) == 0)
			return r->hdrs[i].value;
	return NULL;
}

const char *sim_req_qarg(const sim_req *r, const char *name)
{
	return gb_kvs_get(&r->qargs, name);
}

void sim_req_free(sim_req *r)
{
	if (!r)
		return;
	free(r->method);
	free(r->raw_uri);
	free(r->path);
	free(r->query);
	for (size_t i = 0; i < r->nhdrs; i++) {
		free(r->hdrs[i].name);
		free(r->hdrs[i].value);
	}
	free(r->hdrs);
	free(r->body);
	gb_kvs_free(&r->qargs);
	memset(r, 0, sizeof(*r));
}

void sim_resp_init(sim_resp *r)
{
	memset(r, 0, sizeof(*r));
	r->status = 500;
}

void sim_resp_free(sim_resp *r)
{
	free(r->content_type);
	gb_buf_free(&r->body);
	gb_kvs_free(&r->headers);
	memset(r, 0, sizeof(*r));
}

void sim_resp_header(sim_resp *r, const char *name, const char *value)
{
	/* gb_kvs_set replaces; headers we emit are unique by name. */
	gb_kvs_set(&r->headers, name, value);
}

void sim_resp_headerf(sim_resp *r, const char *name, const char *fmt, ...)
{
	va_list ap;
	char *v;
	va_start(ap, fmt);
	v = gb_xvasprintf(fmt, ap);
	va_end(ap);
	sim_resp_header(r, name, v);
	free(v);
}

static void set_ctype(sim_resp *r, const char *ct)
{
	free(r->content_type);
	r->content_type = ct ? gb_xstrdup(ct) : NULL;
}

void sim_resp_json(sim_resp *r, int status, json_t *obj)
{
	char *s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER |
	                                JSON_REAL_PRECISION(12));
	json_decref(obj);
	gb_buf_reset(&r->body);
	if (s) {
		gb_buf_puts(&r->body, s);
		free(s);
	}
	r->status = status;
	set_ctype(r, "application/json; charset=utf-8");
}

void sim_resp_text(sim_resp *r, int status, const char *ctype,
                   const char *text)
{
	gb_buf_reset(&r->body);
	gb_buf_puts(&r->body, text);
	r->status = status;
	set_ctype(r, ctype);
}

void sim_resp_empty(sim_resp *r, int status)
{
	gb_buf_reset(&r->body);
	r->status = status;
	set_ctype(r, NULL);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

char *sim_pct_decode(const char *s, size_t n, int plus_space)
{
	char *out = gb_xmalloc(n + 1);
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (c == '%') {
			int h, l;
			if (i + 2 >= n) {
				free(out);
				return NULL;
			}
			h = hexval((unsigned char)s[i + 1]);
			l = hexval((unsigned char)s[i + 2]);
			if (h < 0 || l < 0) {
				free(out);
				return NULL;
			}
			c = h * 16 + l;
			i += 2;
		} else if (c == '+' && plus_space) {
			c = ' ';
		}
		if (c == 0) {
			free(out);
			return NULL;
		}
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return out;
}

int sim_parse_form(const char *s, size_t n, int plus_space, gb_kvs *out)
{
	size_t i = 0, pieces = 0;
	while (i < n) {
		size_t j = i, eq = (size_t)-1;
		if (++pieces > SIM_MAX_PARAMS)
			return -1;
		char *k, *v;
		while (j < n && s[j] != '&') {
			if (s[j] == '=' && eq == (size_t)-1)
				eq = j;
			j++;
		}
		if (j > i) {
			if (eq == (size_t)-1) {
				k = sim_pct_decode(s + i, j - i, plus_space);
				v = gb_xstrdup("");
			} else {
				k = sim_pct_decode(s + i, eq - i, plus_space);
				v = sim_pct_decode(s + eq + 1, j - eq - 1,
				                   plus_space);
			}
			if (!k || !v) {
				free(k);
				free(v);
				return -1;
			}
			if (*k)
				gb_kvs_set(out, k, v);
			free(k);
			free(v);
		}
		i = j + 1;
	}
	return 0;
}

void sim_pct_encode(gb_buf *b, const char *s, size_t n, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (isalnum(c) || c == '-' || c == '_' || c == '.' ||
		    c == '~' || (keep_slash && c == '/')) {
			gb_buf_putc(b, (char)c);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};
			gb_buf_append(b, e, 3);
		}
	}
}

char *sim_url_encode(const char *s)
{
	gb_buf b = GB_BUF_INIT;
	sim_pct_encode(&b, s, strlen(s), 0);
	return gb_buf_take(&b);
}

void sim_xml_escape(gb_buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': gb_buf_puts(b, "&lt;"); break;
		case '>': gb_buf_puts(b, "&gt;"); break;
		case '&': gb_buf_puts(b, "&amp;"); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' &&
			    *s != '\t' && *s != '\r')
				gb_buf_printf(b, "&#x%X;", (unsigned char)*s);
			else
				gb_buf_putc(b, *s);
		}
	}
}

static const char b64u[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *sim_b64url_encode(const void *p, size_t n)
{
	const unsigned char *s = p;
	gb_buf b = GB_BUF_INIT;
	size_t i;
	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 |
		             s[i + 2];
		gb_buf_putc(&b, b64u[v >> 18 & 63]);
		gb_buf_putc(&b, b64u[v >> 12 & 63]);
		gb_buf_putc(&b, b64u[v >> 6 & 63]);
		gb_buf_putc(&b, b64u[v & 63]);
	}
	if (n - i == 1) {
		unsigned v = (unsigned)s[i] << 16;
		gb_buf_putc(&b, b64u[v >> 18 & 63]);
		gb_buf_putc(&b, b64u[v >> 12 & 63]);
	} else if (n - i == 2) {
		unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8;
		gb_buf_putc(&b, b64u[v >> 18 & 63]);
		gb_buf_putc(&b, b64u[v >> 12 & 63]);
		gb_buf_putc(&b, b64u[v >> 6 & 63]);
	}
	return gb_buf_take(&b);
}

static int b64u_val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-' || c == '+')
		return 62;
	if (c == '_' || c == '/')
		return 63;
	return -1;
}

unsigned char *sim_b64url_decode(const char *s, size_t n, size_t *outlen)
{
	unsigned char *out;
	size_t o = 0;
	unsigned acc = 0;
	int bits = 0;
	while (n > 0 && s[n - 1] == '=')
		n--;
	if (n % 4 == 1)
		return NULL;
	out = gb_xmalloc(n * 3 / 4 + 3);
	for (size_t i = 0; i < n; i++) {
		int v = b64u_val((unsigned char)s[i]);
		if (v < 0) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits & 0xff);
		}
	}
	out[o] = 0;
	*outlen = o;
	return out;
}

void sim_uuid(char out[37])
{
	char h[33];
	if (gb_random_hex(h, 16) != 0)
		abort();
	h[12] = '4';
	h[16] = "89ab"[hexval(h[16]) & 3];
	snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12,
	         h + 16, h + 20);
}

int sim_is_uuid(const char *s)
{
	size_t i;
	for (i = 0; s[i]; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!isxdigit((unsigned char)s[i])) {
			return 0;
		}
	}
	return i == 36;
}

const char *sim_time_ms(int64_t unix_ms, char *buf, size_t cap)
{
	time_t t = (time_t)(unix_ms / 1000);
	struct tm tm;
	char base[32];
	gmtime_r(&t, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, cap, "%s.%03dZ", base, (int)(unix_ms % 1000));
	return buf;
}

const char *sim_time_s(int64_t unix_ms, char *buf, size_t cap)
{
	return gb_format_time(unix_ms / 1000, buf, cap);
}

int sim_parse_iso(const char *s, int64_t *unix_ms)
{
	struct tm tm;
	const char *p;
	int64_t ms = 0, off = 0;
	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -1;
	if (*p == '.') {
		int digits = 0;
		p++;
		while (isdigit((unsigned char)*p)) {
			if (digits < 3)
				ms = ms * 10 + (*p - '0');
			digits++;
			p++;
		}
		while (digits > 0 && digits < 3) {
			ms *= 10;
			digits++;
		}
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1;
		if (!isdigit((unsigned char)p[1]) ||
		    !isdigit((unsigned char)p[2]) || p[3] != ':' ||
		    !isdigit((unsigned char)p[4]) ||
		    !isdigit((unsigned char)p[5]))
			return -1;
		off = sign * (((p[1] - '0') * 10 + (p[2] - '0')) * 3600 +
		              ((p[4] - '0') * 10 + (p[5] - '0')) * 60);
		p += 6;
	}
	if (*p)
		return -1;
	*unix_ms = ((int64_t)timegm(&tm) - off) * 1000 + ms;
	return 0;
}

int sim_parse_i64(const char *s, int64_t *out)
{
	if (!s || !*s)
		return -1;
	return gb_parse_int64(s, out);
}
