/* drvc_enc.c -- percent-encoding, base64 and a string buffer for drivers. */
#include "drvc_enc.h"

#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int buf_grow(drvc_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;
	if (b->oom)
		return -1;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		free(b->data);
		b->data = NULL;
		b->len = b->cap = 0;
		b->oom = 1;
		return -1;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

void drvc_buf_add(drvc_buf *b, const void *p, size_t n)
{
	if (buf_grow(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void drvc_buf_adds(drvc_buf *b, const char *s)
{
	drvc_buf_add(b, s, strlen(s));
}

void drvc_buf_addf(drvc_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf_grow(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *drvc_buf_take(drvc_buf *b)
{
	char *s;
	if (b->oom)
		return NULL;
	s = b->data ? b->data : strdup("");
	b->data = NULL;
	b->len = b->cap = 0;
	return s;
}

void drvc_buf_free(drvc_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

static int unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
	       c == '~';
}

void drvc_pct_encode(drvc_buf *out, const char *s, size_t n, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (unreserved(c) || (keep_slash && c == '/')) {
			drvc_buf_add(out, &s[i], 1);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};
			drvc_buf_add(out, e, 3);
		}
	}
}

char *drvc_pct_encode_str(const char *s)
{
	drvc_buf b = DRVC_BUF_INIT;
	drvc_pct_encode(&b, s, strlen(s), 0);
	return drvc_buf_take(&b);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int drvc_pct_decode(drvc_buf *out, const char *s, size_t n, int form)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			int hi, lo;
			if (i + 2 >= n)
				return -1;
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			c = (char)(hi * 16 + lo);
			i += 2;
		} else if (form && c == '+') {
			c = ' ';
		}
		drvc_buf_add(out, &c, 1);
	}
	return 0;
}

char *drvc_b64(const void *data, size_t n)
{
	size_t cap = 4 * ((n + 2) / 3) + 1;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	EVP_EncodeBlock((unsigned char *)out, data, (int)n);
	return out;
}

char *drvc_b64url(const void *data, size_t n)
{
	char *s = drvc_b64(data, n);
	size_t len;
	if (!s)
		return NULL;
	for (char *p = s; *p; p++) {
		if (*p == '+')
			*p = '-';
		else if (*p == '/')
			*p = '_';
	}
	len = strlen(s);
	while (len && s[len - 1] == '=')
		s[--len] = '\0';
	return s;
}

unsigned char *drvc_b64_decode(const char *s, size_t n, size_t *outlen)
{
	size_t padded = (n + 3) / 4 * 4, pad = padded - n;
	char *tmp;
	unsigned char *out;
	int len;
	if (n % 4 == 1)
		return NULL;
	tmp = malloc(padded + 1);
	out = malloc(padded / 4 * 3 + 1);
	if (!tmp || !out) {
		free(tmp);
		free(out);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '-')
			c = '+';
		else if (c == '_')
			c = '/';
		tmp[i] = c;
	}
	for (size_t i = n; i < padded; i++)
		tmp[i] = '=';
	tmp[padded] = '\0';
	/* count existing padding too */
	for (size_t i = n; i > 0 && s[i - 1] == '='; i--)
		pad++;
	len = EVP_DecodeBlock(out, (unsigned char *)tmp, (int)padded);
	free(tmp);
	if (len < 0 || (size_t)len < pad) {
		free(out);
		return NULL;
	}
	*outlen = (size_t)len - pad;
	out[*outlen] = '\0';
	return out;
}

void drvc_hex(const unsigned char *in, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 15];
	}
	out[2 * n] = '\0';
}
