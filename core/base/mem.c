/* mem.c -- aborting allocators, growable buffers, string vectors, kv lists. */
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

static void oom(size_t n)
{
	fprintf(stderr, "gpubroker: out of memory allocating %zu bytes\n", n);
	abort();
}

void gb_mem_limit_arenas(void)
{
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (getenv("MALLOC_ARENA_MAX"))
		return;
	mallopt(M_ARENA_MAX, ncpu > 2 ? (int)(ncpu > 64 ? 64 : ncpu) : 2);
#endif
}

void *gb_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *gb_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *gb_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *gb_xstrdup(const char *s)
{
	return s ? gb_xstrndup(s, strlen(s)) : NULL;
}

char *gb_xstrndup(const char *s, size_t n)
{
	char *p;
	if (!s)
		return NULL;
	p = gb_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *gb_xvasprintf(const char *fmt, va_list ap)
{
	gb_buf b = GB_BUF_INIT;
	gb_buf_vprintf(&b, fmt, ap);
	return gb_buf_take(&b);
}

char *gb_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	s = gb_xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

static void buf_grow(gb_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	size_t cap;
	if (need <= b->cap)
		return;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	b->data = gb_xrealloc(b->data, cap);
	b->cap = cap;
}

void gb_buf_reserve(gb_buf *b, size_t extra)
{
	buf_grow(b, extra);
}

void gb_buf_append(gb_buf *b, const void *p, size_t n)
{
	buf_grow(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void gb_buf_puts(gb_buf *b, const char *s)
{
	gb_buf_append(b, s, strlen(s));
}

void gb_buf_putc(gb_buf *b, char c)
{
	gb_buf_append(b, &c, 1);
}

/* Formats straight into the room left and formats again only when the
 * text did not fit (the usual case after gb_buf_reserve: once). */
void gb_buf_vprintf(gb_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;
	size_t room = b->cap > b->len ? b->cap - b->len : 0;
	va_copy(cp, ap);
	n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, cp);
	va_end(cp);
	if (n < 0) {
		if (room)
			b->data[b->len] = '\0';
		return;
	}
	if ((size_t)n >= room) {
		buf_grow(b, (size_t)n);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	}
	b->len += (size_t)n;
}

void gb_buf_printf(gb_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gb_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void gb_buf_reset(gb_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

char *gb_buf_take(gb_buf *b)
{
	char *s = b->data ? b->data : gb_xstrdup("");
	b->data = NULL;
	b->len = b->cap = 0;
	return s;
}

const char *gb_buf_str(const gb_buf *b)
{
	return b->data ? b->data : "";
}

void gb_buf_free(gb_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void gb_strv_push_take(gb_strv *sv, char *s)
{
	sv->v = gb_xrealloc(sv->v, (sv->n + 1) * sizeof(*sv->v));
	sv->v[sv->n++] = s;
}

void gb_strv_push(gb_strv *sv, const char *s)
{
	gb_strv_push_take(sv, gb_xstrdup(s));
}

int gb_strv_contains(const gb_strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return 1;
	return 0;
}

int gb_strv_contains_ci(const gb_strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcasecmp(sv->v[i], s) == 0)
			return 1;
	return 0;
}

void gb_strv_free(gb_strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
}

char *gb_strv_join(const gb_strv *sv, const char *sep)
{
	gb_buf b = GB_BUF_INIT;
	for (size_t i = 0; i < sv->n; i++) {
		if (i)
			gb_buf_puts(&b, sep);
		gb_buf_puts(&b, sv->v[i]);
	}
	return gb_buf_take(&b);
}

void gb_kvs_set(gb_kvs *kv, const char *key, const char *val)
{
	for (size_t i = 0; i < kv->n; i++) {
		if (strcmp(kv->keys[i], key) == 0) {
			free(kv->vals[i]);
			kv->vals[i] = gb_xstrdup(val);
			return;
		}
	}
	kv->keys = gb_xrealloc(kv->keys, (kv->n + 1) * sizeof(char *));
	kv->vals = gb_xrealloc(kv->vals, (kv->n + 1) * sizeof(char *));
	kv->keys[kv->n] = gb_xstrdup(key);
	kv->vals[kv->n] = gb_xstrdup(val);
	kv->n++;
}

const char *gb_kvs_get(const gb_kvs *kv, const char *key)
{
	for (size_t i = 0; i < kv->n; i++)
		if (strcmp(kv->keys[i], key) == 0)
			return kv->vals[i];
	return NULL;
}

void gb_kvs_free(gb_kvs *kv)
{
	for (size_t i = 0; i < kv->n; i++) {
		free(kv->keys[i]);
		free(kv->vals[i]);
	}
	free(kv->keys);
	free(kv->vals);
	kv->keys = kv->vals = NULL;
	kv->n = 0;
}
