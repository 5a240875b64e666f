/* aws_util.c -- see aws_util.h. */
#include "aws_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

void *aws_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		abort();
	return p;
}

void *aws_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		abort();
	return p;
}

void *aws_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

char *aws_xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");
	if (!p)
		abort();
	return p;
}

static void to_tm(int64_t unix_ms, struct tm *tm)
{
	time_t t = (time_t)(unix_ms / 1000);
	memset(tm, 0, sizeof(*tm));
	gmtime_r(&t, tm);
}

void aws_fmt_amz_date(int64_t unix_ms, char out[17])
{
	struct tm tm;
	to_tm(unix_ms, &tm);
	if (strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm) == 0)
		snprintf(out, 17, "19700101T000000Z");
}

void aws_fmt_iso8601(int64_t unix_ms, char out[21])
{
	struct tm tm;
	to_tm(unix_ms, &tm);
	if (strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, 21, "1970-01-01T00:00:00Z");
}

int64_t aws_parse_iso8601(const char *s)
{
	struct tm tm;
	const char *p;
	int64_t t;
	if (!s)
		return -1;
	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -1;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	t = (int64_t)timegm(&tm);
	if (*p == 'Z') {
		p++;
	} else if ((*p == '+' || *p == '-') && strlen(p) >= 6 &&
	           p[3] == ':') {
		int hh = (p[1] - '0') * 10 + (p[2] - '0');
		int mm = (p[4] - '0') * 10 + (p[5] - '0');
		int64_t off = (int64_t)hh * 3600 + mm * 60;
		t += *p == '+' ? -off : off;
		p += 6;
	}
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return *p ? -1 : t;
}

int aws_strieq(const char *a, const char *b)
{
	return a && b && strcasecmp(a, b) == 0;
}
