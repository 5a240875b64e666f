/* region_glob.c -- a region glob against the regions of the clouds it is
 * meant for (region_glob.h). */
#include "region_glob.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define SHOW_MAX 8      /* names listed before "... (N in all)" */
#define NAME_MAX_LEN 128 /* longer names are not candidates for spelling */

/* One cloud's region names (table rows, then the catalog's regions). */
static void cloud_regions(const char *cloud, const gb_catalog *cat,
                          gb_strv *out)
{
	size_t n = gb_region_count();
	for (size_t i = 0; i < n; i++) {
		const gb_region_info *r = gb_region_at(i);
		if (r && strcmp(r->cloud, cloud) == 0 &&
		    !gb_strv_contains(out, r->name))
			gb_strv_push(out, r->name);
	}
	n = cat ? gb_catalog_count(cat) : 0;
	for (size_t i = 0; i < n; i++) {
		const gb_coffer *o = gb_catalog_at(cat, i);
		if (strcmp(o->cloud, cloud) == 0 &&
		    !gb_strv_contains(out, o->region))
			gb_strv_push(out, o->region);
	}
}

static int in_list(const char *const *v, const char *s)
{
	for (size_t i = 0; v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A region elsewhere (another cloud) that the glob matches: note its
 * cloud and jurisdiction, and whether it is GDPR territory. */
static void note_elsewhere(const gb_region_info *r, const char *cloud,
                           gb_strv *where, gb_strv *juris, int *gdpr)
{
	if (!gb_strv_contains(where, cloud))
		gb_strv_push(where, cloud);
	if (r && r->jurisdiction && *r->jurisdiction &&
	    !gb_strv_contains(juris, r->jurisdiction))
		gb_strv_push(juris, r->jurisdiction);
	if (r && gb_region_has_tag(r, "gdpr"))
		*gdpr = 1;
}

/* Regions of clouds other than `clouds` that glob matches. */
static void matches_elsewhere(const char *glob, const char *const *clouds,
                              const gb_catalog *cat, gb_strv *where,
                              gb_strv *juris, int *gdpr)
{
	size_t n = gb_region_count();
	for (size_t i = 0; i < n; i++) {
		const gb_region_info *r = gb_region_at(i);
		if (r && !in_list(clouds, r->cloud) && gb_glob(glob, r->name))
			note_elsewhere(r, r->cloud, where, juris, gdpr);
	}
	n = cat ? gb_catalog_count(cat) : 0;
	for (size_t i = 0; i < n; i++) {
		const gb_coffer *o = gb_catalog_at(cat, i);
		if (!in_list(clouds, o->cloud) && gb_glob(glob, o->region))
			note_elsewhere(o->rinfo, o->cloud, where, juris, gdpr);
	}
}

/* The glob for spelling: lower case, each [...] set as one '?'. */
static void glob_plain(const char *glob, char *out, size_t cap)
{
	size_t w = 0;
	for (const char *p = glob; *p && w + 1 < cap; p++) {
		const char *close = NULL;
		if (*p == '[') {
			const char *q = p + 1;
			if (*q == '!')
				q++;
			if (*q)
				close = strchr(q + 1, ']');
		}
		if (close) {
			out[w++] = '?';
			p = close;
			continue;
		}
		out[w++] = (char)tolower((unsigned char)*p);
	}
	out[w] = '\0';
}

/* Edit distance between a glob and a name, where '*' takes any run of
 * characters and '?' any one character for free. */
static size_t glob_distance(const char *pat, const char *s)
{
	size_t prev[NAME_MAX_LEN + 1], cur[NAME_MAX_LEN + 1];
	size_t n = strlen(s);
	for (size_t j = 0; j <= n; j++)
		prev[j] = j;
	for (const char *p = pat; *p; p++) {
		if (*p == '*') {
			cur[0] = prev[0];
			for (size_t j = 1; j <= n; j++)
				cur[j] = prev[j] < cur[j - 1] ? prev[j]
				                              : cur[j - 1];
		} else {
			cur[0] = prev[0] + 1;
			for (size_t j = 1; j <= n; j++) {
				int same = *p == '?' || *p == s[j - 1];
				size_t best = prev[j - 1] + (same ? 0 : 1);
				if (prev[j] + 1 < best)
					best = prev[j] + 1;
				if (cur[j - 1] + 1 < best)
					best = cur[j - 1] + 1;
				cur[j] = best;
			}
		}
		memcpy(prev, cur, (n + 1) * sizeof(prev[0]));
	}
	return prev[n];
}

/* ", "-separated names, at most SHOW_MAX, then "... (N in all)". */
static void put_names(gb_buf *b, char *const *v, size_t n)
{
	for (size_t i = 0; i < n && i < SHOW_MAX; i++)
		gb_buf_printf(b, "%s%s", i ? ", " : "", v[i]);
	if (n > SHOW_MAX)
		gb_buf_printf(b, ", ... (%zu in all)", n);
}

/* The names spelt most like glob (at most 3, within the distance that
 * gb_nearest allows for a word as long as the glob's literal part). */
static void put_spelling(gb_buf *b, const char *glob, char *const *v,
                         size_t n)
{
	char plain[NAME_MAX_LEN + 1];
	size_t lit = 0, best = (size_t)-1, shown = 0, limit;
	size_t *d = gb_xcalloc(n ? n : 1, sizeof(*d));
	glob_plain(glob, plain, sizeof(plain));
	for (const char *p = plain; *p; p++)
		lit += *p != '*' && *p != '?';
	limit = lit <= 3 ? 1 : lit <= 6 ? 2 : 3;
	for (size_t i = 0; i < n; i++) {
		d[i] = strlen(v[i]) <= NAME_MAX_LEN ? glob_distance(plain, v[i])
		                                    : (size_t)-1;
		if (d[i] < best)
			best = d[i];
	}
	if (best <= limit) {
		gb_buf_puts(b, "; did you mean ");
		for (size_t i = 0; i < n && shown < 3; i++)
			if (d[i] == best)
				gb_buf_printf(b, "%s\"%s\"",
				              shown++ ? " or " : "", v[i]);
		gb_buf_puts(b, "?");
	} else {
		gb_buf_puts(b, "; known regions there: ");
		put_names(b, v, n);
	}
	free(d);
}

char *gb_region_glob_problem(const char *glob, const char *const *clouds,
                             const gb_catalog *cat)
{
	gb_strv mine = {0}, judged = {0}, where = {0}, juris = {0}, near = {0};
	gb_buf b = GB_BUF_INIT;
	char *names;
	int gdpr = 0;
	if (!glob || !clouds)
		return NULL;
	for (size_t c = 0; clouds[c]; c++) {
		gb_strv one = {0};
		int hit = 0;
		/* a cloud with no known region (its driver did not load, or
		 * lists nothing) can place nothing: it is not judged */
		cloud_regions(clouds[c], cat, &one);
		if (one.n)
			gb_strv_push(&judged, clouds[c]);
		for (size_t i = 0; i < one.n && !hit; i++) {
			hit = gb_glob(glob, one.v[i]);
			if (!gb_strv_contains(&mine, one.v[i]))
				gb_strv_push(&mine, one.v[i]);
		}
		gb_strv_free(&one);
		if (hit) {
			gb_strv_free(&mine);
			gb_strv_free(&judged);
			return NULL;
		}
	}
	if (!mine.n) {
		gb_strv_free(&judged);
		return NULL;
	}
	qsort(mine.v, mine.n, sizeof(*mine.v), cmp_str);
	names = gb_strv_join(&judged, ", ");
	gb_buf_printf(&b, "\"%s\" matches no region of %s", glob, names);
	free(names);
	matches_elsewhere(glob, clouds, cat, &where, &juris, &gdpr);
	if (where.n) {
		char *w = gb_strv_join(&where, ", ");
		gb_buf_printf(&b, " (it matches regions of %s: region names "
		              "differ per cloud)", w);
		free(w);
		for (size_t i = 0; i < mine.n; i++) {
			const gb_region_info *r = NULL;
			for (size_t c = 0; clouds[c] && !r; c++)
				r = gb_region_find(clouds[c], mine.v[i]);
			if (r && r->jurisdiction &&
			    gb_strv_contains(&juris, r->jurisdiction))
				gb_strv_push(&near, mine.v[i]);
		}
	}
	if (near.n) {
		char *j;
		qsort(juris.v, juris.n, sizeof(*juris.v), cmp_str);
		j = gb_strv_join(&juris, ", ");
		gb_buf_printf(&b, "; the nearest by place, in the same "
		              "jurisdiction%s (%s): ",
		              juris.n == 1 ? "" : "s", j);
		free(j);
		put_names(&b, near.v, near.n);
		if (gdpr)
			gb_buf_puts(&b, "; placement.compliance: [gdpr] selects "
			                "the EU/EEA regions of every cloud");
	} else {
		put_spelling(&b, glob, mine.v, mine.n);
	}
	gb_strv_free(&mine);
	gb_strv_free(&judged);
	gb_strv_free(&where);
	gb_strv_free(&juris);
	gb_strv_free(&near);
	return gb_buf_take(&b);
}
