/* drvc_mem.c -- aborting allocators for drivers (see drvc_mem.h). */
#include "drvc_mem.h"

#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
	fprintf(stderr, "gpubroker driver: out of memory (%zu bytes)\n", n);
	abort();
}

void *drvc_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *drvc_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *drvc_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *drvc_xstrdup(const char *s)
{
	return s ? drvc_xstrndup(s, strlen(s)) : NULL;
}

char *drvc_xstrndup(const char *s, size_t n)
{
	char *p;
	size_t len = 0;
	while (len < n && s[len])
		len++;
	p = drvc_xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *drvc_xasprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom(0);
	p = drvc_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void drvc_free_secret(char *s)
{
	if (!s)
		return;
	OPENSSL_cleanse(s, strlen(s));
	free(s);
}
