/* tzfile.c -- TZif reader and POSIX TZ footer rules (see tzfile.h).
 * Format facts from RFC 8536 (https://www.rfc-editor.org/rfc/rfc8536):
 * 44-byte header "TZif", version, 15 unused, six big-endian 32-bit counts
 * isutcnt isstdcnt leapcnt timecnt typecnt charcnt; a v1 data block with
 * 32-bit times; for v2+ a second header and block with 64-bit times, then
 * the footer "\nTZ string\n" (POSIX TZ, section 3.3). */
#include "tzfile.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct prule {
	char kind;      /* 'J' (1..365, no Feb 29), 'N' (0..365), 'M' */
	int n, m, w, d; /* n for J/N; month, week 1..5, weekday 0=Sun */
	int32_t time;   /* seconds after local midnight, default 02:00 */
} prule;

typedef struct ptz {
	int ok, has_dst;
	int32_t std_off, dst_off; /* seconds east of UTC */
	prule start, end;
} ptz;

struct gb_tz {
	char name[GB_TZ_NAME_MAX];
	size_t ntrans, ntypes;
	int64_t *trans;
	unsigned char *idx;
	int32_t *utoff;
	ptz rule;
};

int gb_tz_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n >= GB_TZ_NAME_MAX || name[0] == '/' ||
	    name[n - 1] == '/' || strstr(name, "..") || strstr(name, "//"))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) &&
		    !strchr("/_+-", name[i]))
			return 0;
	return 1;
}

/* ---- POSIX TZ strings ---- */

/* [+-]h[h[h]][:mm[:ss]] -> seconds (sign applied); -1 on error. */
static int parse_hms(const char **pp, int maxh, int32_t *out)
{
	const char *p = *pp;
	int sign = 1, h = 0, m = 0, s = 0, nd = 0;
	if (*p == '+' || *p == '-')
		sign = *p++ == '-' ? -1 : 1;
	while (isdigit((unsigned char)*p) && nd < 3)
		h = h * 10 + (*p++ - '0'), nd++;
	if (!nd || h > maxh)
		return -1;
	if (*p == ':') {
		p++;
		if (!isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[1]))
			return -1;
		m = (p[0] - '0') * 10 + (p[1] - '0');
		p += 2;
		if (*p == ':') {
			p++;
			if (!isdigit((unsigned char)p[0]) ||
			    !isdigit((unsigned char)p[1]))
				return -1;
			s = (p[0] - '0') * 10 + (p[1] - '0');
			p += 2;
		}
	}
	if (m > 59 || s > 59)
		return -1;
	*out = sign * (h * 3600 + m * 60 + s);
	*pp = p;
	return 0;
}

static int parse_zname(const char **pp)
{
	const char *p = *pp;
	if (*p == '<') {
		const char *e = strchr(p, '>');
		if (!e || e == p + 1)
			return -1;
		*pp = e + 1;
		return 0;
	}
	while (isalpha((unsigned char)*p))
		p++;
	if (p - *pp < 3)
		return -1;
	*pp = p;
	return 0;
}

static int parse_int(const char **pp, int lo, int hi, int *out)
{
	const char *p = *pp;
	int v = 0, nd = 0;
	while (isdigit((unsigned char)*p) && nd < 4)
		v = v * 10 + (*p++ - '0'), nd++;
	if (!nd || v < lo || v > hi)
		return -1;
	*out = v;
	*pp = p;
	return 0;
}

static int parse_rule(const char **pp, prule *r)
{
	const char *p = *pp;
	memset(r, 0, sizeof(*r));
	if (*p == 'J') {
		p++;
		r->kind = 'J';
		if (parse_int(&p, 1, 365, &r->n))
			return -1;
	} else if (*p == 'M') {
		p++;
		r->kind = 'M';
		if (parse_int(&p, 1, 12, &r->m) || *p++ != '.' ||
		    parse_int(&p, 1, 5, &r->w) || *p++ != '.' ||
		    parse_int(&p, 0, 6, &r->d))
			return -1;
	} else {
		r->kind = 'N';
		if (parse_int(&p, 0, 365, &r->n))
			return -1;
	}
	r->time = 7200;
	if (*p == '/') {
		p++;
		if (parse_hms(&p, 167, &r->time))
			return -1;
	}
	*pp = p;
	return 0;
}

/* Fills *z from a POSIX TZ string; z->ok stays 0 for forms we do not
 * handle (then the last transition's offset holds). */
static void parse_posix(const char *s, ptz *z)
{
	const char *p = s;
	int32_t off;
	memset(z, 0, sizeof(*z));
	if (parse_zname(&p) || parse_hms(&p, 24, &off))
		return;
	z->std_off = -off; /* POSIX offsets are west of UTC */
	if (!*p) {
		z->ok = 1;
		return;
	}
	if (parse_zname(&p))
		return;
	z->dst_off = z->std_off + 3600;
	if (*p && *p != ',') {
		if (parse_hms(&p, 24, &off))
			return;
		z->dst_off = -off;
	}
	if (*p++ != ',' || parse_rule(&p, &z->start) || *p++ != ',' ||
	    parse_rule(&p, &z->end) || *p)
		return;
	z->has_dst = z->ok = 1;
}

static int is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days since 1970-01-01 of y-m-d (proleptic Gregorian; H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int64_t year_of_days(int64_t z)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	int m = (int)(mp < 10 ? mp + 3 : mp - 9);
	return yoe + era * 400 + (m <= 2);
}

/* Local (wall-clock-of-the-rule) seconds since the epoch at which rule r
 * fires in year y. */
static int64_t rule_local(const prule *r, int64_t y)
{
	int64_t day;
	if (r->kind == 'J')
		day = days_from_civil(y, 1, 1) + r->n - 1 +
		      (is_leap(y) && r->n >= 60);
	else if (r->kind == 'N')
		day = days_from_civil(y, 1, 1) + r->n;
	else {
		static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31,
		                              30, 31, 30, 31};
		int dim = mdays[r->m - 1] + (r->m == 2 && is_leap(y));
		int64_t first = days_from_civil(y, r->m, 1);
		/* 1970-01-01 was a Thursday (4) */
		int wd1 = (int)(((first + 4) % 7 + 7) % 7);
		int dom = 1 + (r->d - wd1 + 7) % 7 + 7 * (r->w - 1);
		while (dom > dim)
			dom -= 7;
		day = first + dom - 1;
	}
	return day * 86400 + r->time;
}

static int32_t posix_offset(const ptz *z, int64_t t)
{
	if (!z->has_dst)
		return z->std_off;
	int64_t ls = t + z->std_off;
	int64_t y = year_of_days(ls >= 0 ? ls / 86400
	                                 : -((-ls + 86399) / 86400));
	/* start is given in standard time, end in daylight time */
	int64_t start = rule_local(&z->start, y) - z->std_off;
	int64_t end = rule_local(&z->end, y) - z->dst_off;
	int dst = start < end ? t >= start && t < end
	                      : !(t >= end && t < start);
	return dst ? z->dst_off : z->std_off;
}

/* ---- TZif ---- */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

typedef struct hdr {
	int version; /* 1..4 */
	uint32_t isut, isstd, leap, time, type, chars;
} hdr;

static int read_hdr(const unsigned char *b, size_t len, size_t off, hdr *h)
{
	if (len < off || len - off < 44 || memcmp(b + off, "TZif", 4) != 0)
		return -1;
	unsigned char v = b[off + 4];
	if (v == 0)
		h->version = 1;
	else if (v >= '2' && v <= '4')
		h->version = v - '0';
	else
		return -1;
	const unsigned char *c = b + off + 20;
	h->isut = be32(c);
	h->isstd = be32(c + 4);
	h->leap = be32(c + 8);
	h->time = be32(c + 12);
	h->type = be32(c + 16);
	h->chars = be32(c + 20);
	if (h->type == 0 || h->type > 256 || h->time > 100000 ||
	    h->leap > 100000 || h->chars > 100000 ||
	    (h->isut && h->isut != h->type) ||
	    (h->isstd && h->isstd != h->type))
		return -1;
	return 0;
}

static size_t block_len(const hdr *h, size_t tsz)
{
	return (size_t)h->time * tsz + h->time + (size_t)h->type * 6 +
	       h->chars + (size_t)h->leap * (tsz + 4) + h->isstd + h->isut;
}

gb_tz *gb_tz_parse(const unsigned char *b, size_t len, char *err,
                   size_t errcap)
{
	hdr h;
	size_t off = 0, tsz = 4;
	if (read_hdr(b, len, 0, &h) != 0) {
		snprintf(err, errcap, "not a TZif zone file (RFC 8536)");
		return NULL;
	}
	if (h.version >= 2) {
		off = 44 + block_len(&h, 4);
		tsz = 8;
		if (read_hdr(b, len, off, &h) != 0) {
			snprintf(err, errcap, "TZif file: bad v2+ header");
			return NULL;
		}
	}
	off += 44;
	if (len - off < block_len(&h, tsz)) {
		snprintf(err, errcap, "TZif file: truncated data block");
		return NULL;
	}
	gb_tz *z = gb_xcalloc(1, sizeof(*z));
	z->ntrans = h.time;
	z->ntypes = h.type;
	z->trans = gb_xcalloc(h.time ? h.time : 1, sizeof(*z->trans));
	z->idx = gb_xcalloc(h.time ? h.time : 1, 1);
	z->utoff = gb_xcalloc(h.type, sizeof(*z->utoff));
	const unsigned char *p = b + off;
	for (size_t i = 0; i < h.time; i++, p += tsz) {
		z->trans[i] = tsz == 8 ? be64(p) : (int32_t)be32(p);
		if (i && z->trans[i] <= z->trans[i - 1])
			goto bad;
	}
	for (size_t i = 0; i < h.time; i++)
		if ((z->idx[i] = *p++) >= h.type)
			goto bad;
	for (size_t i = 0; i < h.type; i++, p += 6) {
		z->utoff[i] = (int32_t)be32(p);
		if (z->utoff[i] < -89999 || z->utoff[i] > 93599)
			goto bad;
	}
	off += block_len(&h, tsz);
	if (h.version >= 2 && off < len && b[off] == '\n') {
		const unsigned char *s = b + off + 1;
		const unsigned char *e = memchr(s, '\n', len - off - 1);
		if (e && e - s < 128) {
			char tzs[128];
			memcpy(tzs, s, (size_t)(e - s));
			tzs[e - s] = '\0';
			parse_posix(tzs, &z->rule);
		}
	}
	return z;
bad:
	snprintf(err, errcap, "TZif file: inconsistent data");
	gb_tz_free(z);
	return NULL;
}

void gb_tz_free(gb_tz *z)
{
	if (!z)
		return;
	free(z->trans);
	free(z->idx);
	free(z->utoff);
	free(z);
}

int gb_tz_offset(const gb_tz *z, int64_t t)
{
	size_t n = z->ntrans;
	if (n == 0 || t >= z->trans[n - 1]) {
		if (z->rule.ok)
			return posix_offset(&z->rule, t);
		return z->utoff[n ? z->idx[n - 1] : 0];
	}
	if (t < z->trans[0])
		return z->utoff[0];
	size_t lo = 0, hi = n - 1; /* trans[lo] <= t < trans[hi] */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (z->trans[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	return z->utoff[z->idx[lo]];
}

const char *gb_tz_name(const gb_tz *z)
{
	return z->name;
}

/* ---- the process-wide cache ---- */

typedef struct tz_node {
	struct tz_node *next;
	gb_tz *z;
} tz_node;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static tz_node *cache;

const gb_tz *gb_tz_get(const char *name, char *err, size_t errcap)
{
	char path[sizeof(GB_ZONEINFO_DIR) + GB_TZ_NAME_MAX + 1], why[96];
	char *buf = NULL;
	size_t len = 0;
	gb_tz *z = NULL;
	if (!gb_tz_name_ok(name)) {
		snprintf(err, errcap, "\"%s\" is not a zone name (letters, "
		         "digits and /_+- only, such as Europe/Berlin; no \"..\" "
		         "or leading /)", name ? name : "");
		return NULL;
	}
	pthread_mutex_lock(&cache_lock);
	for (tz_node *n = cache; n; n = n->next)
		if (strcmp(n->z->name, name) == 0) {
			z = n->z;
			break;
		}
	if (!z) {
		snprintf(path, sizeof(path), "%s/%s", GB_ZONEINFO_DIR, name);
		if (gb_read_file(path, 1 << 20, &buf, &len) != 0)
			snprintf(err, errcap, "\"%s\" is not a zone in %s (%s)",
			         name, GB_ZONEINFO_DIR,
			         errno == ENOENT || errno == EISDIR ||
			         errno == ENOTDIR ? "no such zone file"
			                          : strerror(errno));
		else if (!(z = gb_tz_parse((unsigned char *)buf, len, why,
		                           sizeof(why))))
			snprintf(err, errcap, "\"%s\" is not a zone in %s (%s)",
			         name, GB_ZONEINFO_DIR, why);
		else {
			tz_node *n = gb_xcalloc(1, sizeof(*n));
			snprintf(z->name, sizeof(z->name), "%s", name);
			n->z = z;
			n->next = cache;
			cache = n;
		}
		free(buf);
	}
	pthread_mutex_unlock(&cache_lock);
	return z;
}
