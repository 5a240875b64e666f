/* regions.c -- lookups over the built-in region table plus registered
 * on-prem sites. */
#include "regions.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define GB_MAX_SITES 1024 /* on-prem sites */

static gb_region_info *extra;
static size_t nextra;
static pthread_rwlock_t extra_lock = PTHREAD_RWLOCK_INITIALIZER;

size_t gb_region_count(void)
{
	size_t n;
	pthread_rwlock_rdlock(&extra_lock);
	n = gb_builtin_region_count + nextra;
	pthread_rwlock_unlock(&extra_lock);
	return n;
}

const gb_region_info *gb_region_at(size_t i)
{
	const gb_region_info *r = NULL;
	if (i < gb_builtin_region_count)
		return &gb_builtin_regions[i];
	pthread_rwlock_rdlock(&extra_lock);
	if (i - gb_builtin_region_count < nextra)
		r = &extra[i - gb_builtin_region_count];
	pthread_rwlock_unlock(&extra_lock);
	return r;
}

const gb_region_info *gb_region_find(const char *cloud, const char *name)
{
	const gb_region_info *r = NULL;
	if (!name)
		return NULL;
	for (size_t i = 0; i < gb_builtin_region_count; i++) {
		const gb_region_info *b = &gb_builtin_regions[i];
		if (strcmp(b->name, name) == 0 &&
		    (!cloud || strcmp(b->cloud, cloud) == 0))
			return b;
	}
	pthread_rwlock_rdlock(&extra_lock);
	for (size_t i = 0; i < nextra && !r; i++)
		if (strcmp(extra[i].name, name) == 0 &&
		    (!cloud || strcmp(extra[i].cloud, cloud) == 0))
			r = &extra[i];
	pthread_rwlock_unlock(&extra_lock);
	return r;
}

const char *gb_region_tag_canonical(const char *tag)
{
	return tag && strcmp(tag, "hipaa-eligible") == 0 ? "hipaa" : tag;
}

int gb_region_has_tag(const gb_region_info *r, const char *tag)
{
	const char *p;
	size_t n;
	tag = gb_region_tag_canonical(tag);
	n = strlen(tag);
	if (!r || !r->tags || !n)
		return 0;
	for (p = r->tags; (p = strstr(p, tag)); p += n) {
		if ((p == r->tags || p[-1] == ',') &&
		    (p[n] == '\0' || p[n] == ','))
			return 1;
	}
	return 0;
}

double gb_distance_km(double lat1, double lon1, double lat2, double lon2)
{
	const double rad = M_PI / 180.0;
	double dlat = (lat2 - lat1) * rad, dlon = (lon2 - lon1) * rad;
	double a = sin(dlat / 2) * sin(dlat / 2) +
	           cos(lat1 * rad) * cos(lat2 * rad) * sin(dlon / 2) *
	                   sin(dlon / 2);
	return 2 * 6371.0 * atan2(sqrt(a), sqrt(1 - a));
}

static void info_copy(gb_region_info *dst, const gb_region_info *src)
{
	dst->cloud = gb_xstrdup(src->cloud);
	dst->name = gb_xstrdup(src->name);
	dst->display = gb_xstrdup(src->display ? src->display : src->name);
	dst->country = gb_xstrdup(src->country ? src->country : "");
	dst->jurisdiction =
		gb_xstrdup(src->jurisdiction ? src->jurisdiction : "");
	dst->lat = src->lat;
	dst->lon = src->lon;
	dst->tags = gb_xstrdup(src->tags ? src->tags : "");
	dst->carbon_g_per_kwh = src->carbon_g_per_kwh;
	dst->carbon_source = gb_xstrdup(src->carbon_source ? src->carbon_source
	                                                   : "");
}

/* Registered sites live until exit: lookups hand out borrowed pointers, so
 * an entry is never freed; a re-registration overwrites in place (the old
 * strings are leaked deliberately, bounded by the number of reloads). */
static int str_same(const char *kept, const char *given, const char *dflt)
{
	return strcmp(kept, given ? given : dflt) == 0;
}

/* Is r what e already holds (info_copy's defaults applied)? */
static int info_same(const gb_region_info *e, const gb_region_info *r)
{
	return str_same(e->display, r->display, r->name) &&
	       str_same(e->country, r->country, "") &&
	       str_same(e->jurisdiction, r->jurisdiction, "") &&
	       str_same(e->tags, r->tags, "") &&
	       str_same(e->carbon_source, r->carbon_source, "") &&
	       e->lat == r->lat && e->lon == r->lon &&
	       e->carbon_g_per_kwh == r->carbon_g_per_kwh;
}

void gb_region_register(const gb_region_info *r)
{
	pthread_rwlock_wrlock(&extra_lock);
	for (size_t i = 0; i < nextra; i++) {
		if (strcmp(extra[i].cloud, r->cloud) == 0 &&
		    strcmp(extra[i].name, r->name) == 0) {
			/* the same facts again (a runtime opened twice in one
			 * process): nothing to replace, nothing leaked */
			if (!info_same(&extra[i], r))
				info_copy(&extra[i], r);
			pthread_rwlock_unlock(&extra_lock);
			return;
		}
	}
	/* One fixed array, never moved, so borrowed pointers stay valid. */
	if (!extra)
		extra = gb_xcalloc(GB_MAX_SITES, sizeof(*extra));
	if (nextra >= GB_MAX_SITES) {
		pthread_rwlock_unlock(&extra_lock);
		return; /* documented limit */
	}
	info_copy(&extra[nextra++], r);
	pthread_rwlock_unlock(&extra_lock);
}
