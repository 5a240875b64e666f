/* text.c -- globbing, edit distance, UTF-8 validation. */
#include "util.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

int gb_glob(const char *pattern, const char *s)
{
	return fnmatch(pattern, s, 0) == 0;
}

size_t gb_levenshtein(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row, res;
	if (la > 64 || lb > 64)
		return la > lb ? la : lb;
	row = gb_xmalloc((lb + 1) * sizeof(*row));
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = prev + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	res = row[lb];
	free(row);
	return res;
}

/* Edit distance where swapping two neighbours counts as one edit
 * (optimal string alignment): "gpc" is one typo away from "gcp". */
static size_t typo_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *d, res;
	if (la > 64 || lb > 64)
		return la > lb ? la : lb;
	d = gb_xmalloc((la + 1) * (lb + 1) * sizeof(*d));
#define D(i, j) d[(i) * (lb + 1) + (j)]
	for (size_t i = 0; i <= la; i++)
		D(i, 0) = i;
	for (size_t j = 0; j <= lb; j++)
		D(0, j) = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = D(i - 1, j - 1) + cost;
			if (D(i - 1, j) + 1 < best)
				best = D(i - 1, j) + 1;
			if (D(i, j - 1) + 1 < best)
				best = D(i, j - 1) + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && D(i - 2, j - 2) + 1 < best)
				best = D(i - 2, j - 2) + 1;
			D(i, j) = best;
		}
	}
	res = D(la, lb);
#undef D
	free(d);
	return res;
}

const char *gb_nearest(const char *s, const char *const *candidates)
{
	const char *best = NULL;
	size_t bestd = (size_t)-1;
	size_t len = strlen(s);
	size_t limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
	for (size_t i = 0; candidates[i]; i++) {
		size_t d = typo_distance(s, candidates[i]);
		if (d < bestd) {
			bestd = d;
			best = candidates[i];
		}
	}
	return bestd <= limit ? best : NULL;
}

size_t gb_utf8_check(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		size_t len;
		unsigned cp;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			len = 2;
			cp = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			len = 3;
			cp = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			len = 4;
			cp = c & 0x07;
		} else {
			return i;
		}
		if (i + len > n)
			return i;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return i;
		i += len;
	}
	return n;
}

int gb_utf8_valid(const char *str, size_t n)
{
	return gb_utf8_check(str, n) == n;
}

void gb_text_clean(char *s)
{
	size_t n = strlen(s), i = 0;
	while (i < n) {
		size_t ok = i + gb_utf8_check(s + i, n - i);
		for (; i < ok; i++)
			if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
				s[i] = '?';
		if (i < n)
			s[i++] = '?'; /* the invalid byte; go on after it */
	}
}
