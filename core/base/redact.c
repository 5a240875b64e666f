/* redact.c -- keeping secrets out of every line gpubroker writes. */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static gb_strv secrets;

void gb_redact_register(const char *value)
{
	if (!value || strlen(value) < 4)
		return;
	pthread_rwlock_wrlock(&lock);
	if (!gb_strv_contains(&secrets, value))
		gb_strv_push(&secrets, value);
	pthread_rwlock_unlock(&lock);
}

int gb_redact_has_secret(const char *text)
{
	int hit = 0;
	if (!text)
		return 0;
	pthread_rwlock_rdlock(&lock);
	for (size_t i = 0; i < secrets.n && !hit; i++)
		hit = strstr(text, secrets.v[i]) != NULL;
	pthread_rwlock_unlock(&lock);
	return hit;
}

size_t gb_redact_count(void)
{
	size_t n;
	pthread_rwlock_rdlock(&lock);
	n = secrets.n;
	pthread_rwlock_unlock(&lock);
	return n;
}

void gb_redact_clear(void)
{
	pthread_rwlock_wrlock(&lock);
	gb_strv_free(&secrets);
	pthread_rwlock_unlock(&lock);
}

/* Markers after which the value up to a delimiter is secret. */
static const char *const markers[] = {
	"authorization:", "bearer ", "signature=", "x-amz-security-token:",
	"x-amz-security-token=", "x-amz-signature=", "access_token=",
	"\"access_token\":", "client_secret=", "assertion=", "key=",
	"sig=", "password=", "\"private_key\":", "token=", NULL,
};

static size_t marker_at(const char *s)
{
	for (size_t i = 0; markers[i]; i++) {
		size_t n = strlen(markers[i]);
		if (strncasecmp(s, markers[i], n) == 0)
			return n;
	}
	return 0;
}

static int value_end(char c, int in_header)
{
	if (in_header)
		return c == '\0' || c == '\n' || c == '\r';
	return c == '\0' || c == '&' || c == ',' || c == ' ' || c == '"' ||
	       c == '\n' || c == '\r' || c == ';' || c == '\'';
}

char *gb_redact(const char *s)
{
	gb_buf b = GB_BUF_INIT;
	gb_buf pass2 = GB_BUF_INIT;
	const char *p = s;
	/* Pass 1: marker-based (headers, parameters). */
	while (*p) {
		size_t m = marker_at(p);
		if (m && (p == s || !isalnum((unsigned char)p[-1]) ||
		          p[m - 1] == ' ')) {
			int hdr = p[m - 1] == ':' && strncasecmp(p, "authorization", 13) == 0;
			const char *v = p + m;
			gb_buf_append(&b, p, m);
			while (*v == ' ' || *v == '"')
				gb_buf_putc(&b, *v++);
			if (!value_end(*v, hdr)) {
				gb_buf_puts(&b, "[REDACTED]");
				while (!value_end(*v, hdr))
					v++;
			}
			p = v;
			continue;
		}
		gb_buf_putc(&b, *p++);
	}
	/* Pass 2: registered values anywhere. */
	pthread_rwlock_rdlock(&lock);
	p = gb_buf_str(&b);
	while (*p) {
		size_t hit = 0;
		for (size_t i = 0; i < secrets.n; i++) {
			size_t n = strlen(secrets.v[i]);
			if (strncmp(p, secrets.v[i], n) == 0 && n > hit)
				hit = n;
		}
		if (hit) {
			gb_buf_puts(&pass2, "[REDACTED]");
			p += hit;
		} else {
			gb_buf_putc(&pass2, *p++);
		}
	}
	pthread_rwlock_unlock(&lock);
	gb_buf_free(&b);
	return gb_buf_take(&pass2);
}
