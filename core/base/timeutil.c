/* timeutil.c -- durations, clocks and timestamps. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int gb_parse_duration(const char *s, int64_t *out)
{
	int64_t total = 0;
	int any = 0;
	if (!s || !*s)
		return -1;
	while (*s) {
		int64_t v = 0, mult;
		int digits = 0;
		while (isdigit((unsigned char)*s)) {
			if (v > (INT64_MAX - 9) / 10)
				return -1;
			v = v * 10 + (*s - '0');
			s++;
			digits++;
		}
		if (!digits)
			return -1;
		switch (*s) {
		case 's': mult = 1; s++; break;
		case 'm': mult = 60; s++; break;
		case 'h': mult = 3600; s++; break;
		case 'd': mult = 86400; s++; break;
		case 'w': mult = 7 * 86400; s++; break;
		case '\0':
			if (any)
				return -1; /* "1h30" is ambiguous */
			mult = 1;
			break;
		default: return -1;
		}
		if (v > INT64_MAX / mult || total > INT64_MAX - v * mult)
			return -1;
		total += v * mult;
		any = 1;
	}
	/* 100 years is more than any pool should live; larger is a typo. */
	if (total > (int64_t)100 * 365 * 86400)
		return -1;
	*out = total;
	return 0;
}

const char *gb_format_duration(int64_t secs, char *buf, size_t cap)
{
	int64_t d, h, m, s;
	size_t n = 0;
	if (secs < 0) {
		snprintf(buf, cap, "-");
		return buf;
	}
	d = secs / 86400;
	h = (secs % 86400) / 3600;
	m = (secs % 3600) / 60;
	s = secs % 60;
	buf[0] = '\0';
	if (d)
		n += (size_t)snprintf(buf + n, cap - n, "%lldd", (long long)d);
	if (h && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "%lldh", (long long)h);
	if (m && n < cap && !d)
		n += (size_t)snprintf(buf + n, cap - n, "%lldm", (long long)m);
	if ((s && n < cap && !d && !h) || secs == 0)
		snprintf(buf + n, cap - n, "%llds", (long long)s);
	return buf;
}

int gb_parse_int64(const char *s, int64_t *out)
{
	char *end;
	long long v;
	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int gb_parse_double(const char *s, double *out)
{
	char *end;
	double v;
	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v != v)
		return -1;
	*out = v;
	return 0;
}

int64_t gb_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t gb_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t gb_mono_ms(void)
{
	return gb_mono_ns() / 1000000;
}

void gb_sleep_ms(int64_t ms)
{
	struct timespec ts;
	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

const char *gb_format_time(int64_t unix_s, char *buf, size_t cap)
{
	time_t t = (time_t)unix_s;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

int gb_parse_time(const char *s, int64_t *unix_s)
{
	struct tm tm;
	const char *end;
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (end) {
		if (*end == '.') { /* fractional seconds */
			end++;
			while (isdigit((unsigned char)*end))
				end++;
		}
		if (*end == 'Z')
			end++;
		else if (strcmp(end, "+00:00") == 0)
			end += 6;
	} else {
		memset(&tm, 0, sizeof(tm));
		end = strptime(s, "%Y-%m-%d", &tm);
	}
	if (!end || *end)
		return -1;
	*unix_s = (int64_t)timegm(&tm);
	return 0;
}

const char *gb_format_time_ms(int64_t unix_ms, char *buf, size_t cap)
{
	int64_t ms = unix_ms % 1000, s = unix_ms / 1000;
	time_t t;
	struct tm tm;
	char day[24];
	if (ms < 0) {
		ms += 1000;
		s--;
	}
	t = (time_t)s;
	gmtime_r(&t, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, cap, "%s.%03dZ", day, (int)ms);
	return buf;
}

int gb_parse_time_ms(const char *s, int64_t *unix_ms)
{
	int64_t secs, ms = 0;
	const char *dot = strchr(s, '.');
	if (gb_parse_time(s, &secs) != 0)
		return -1;
	if (dot)
		for (int i = 1, scale = 100; i <= 3 && isdigit((unsigned char)dot[i]);
		     i++, scale /= 10)
			ms += (dot[i] - '0') * scale;
	*unix_ms = secs * 1000 + ms;
	return 0;
}

const char *gb_format_real(double d, char *buf, size_t cap)
{
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, cap, "%.*g", digits, d);
		if (digits == 17 || strtod(buf, NULL) == d)
			break;
	}
	return buf;
}

const char *gb_plural(long long n)
{
	return n == 1 || n == -1 ? "" : "s";
}
