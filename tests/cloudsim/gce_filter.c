/*
 * gce_filter.c -- the part of the Compute list filter syntax (AIP-160)
 * cloudsim understands: `FIELD = "VALUE"`, `FIELD != VALUE`,
 * `FIELD:VALUE` and `FIELD:*` (has), joined by AND or by juxtaposition,
 * optionally parenthesised.  FIELD is labels.KEY or a plain field the
 * caller resolves (name, status, zone, operationType, ...).  OR, NOT and
 * the legacy `eq`/`ne` regular-expression form are refused (400).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "gce.h"

void gce_filter_free(gce_clause *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].field);
		free(c[i].value);
	}
	free(c);
}

static void ws(const char **p)
{
	while (isspace((unsigned char)**p) || **p == '(' || **p == ')')
		(*p)++;
}

static int field_char(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '-';
}

int gce_filter_parse(const char *s, gce_clause **out, size_t *n)
{
	const char *p = s;
	gce_clause *v = NULL;
	size_t k = 0;
	*out = NULL;
	*n = 0;
	for (;;) {
		const char *f;
		int op;
		gb_buf val = GB_BUF_INIT;
		ws(&p);
		if (!*p)
			break;
		if (strncmp(p, "AND", 3) == 0 && !field_char((unsigned char)p[3])) {
			if (k == 0)
				goto bad;
			p += 3;
			continue;
		}
		if ((strncmp(p, "OR", 2) == 0 && !field_char((unsigned char)p[2])) ||
		    (strncmp(p, "NOT", 3) == 0 && !field_char((unsigned char)p[3])) ||
		    *p == '-')
			goto bad;
		f = p;
		while (field_char((unsigned char)*p))
			p++;
		if (p == f)
			goto bad;
		v = gb_xrealloc(v, (k + 1) * sizeof(*v));
		v[k].field = gb_xstrndup(f, (size_t)(p - f));
		v[k].value = NULL;
		k++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (p[0] == '!' && p[1] == '=') {
			op = '!';
			p += 2;
		} else if (*p == '=' || *p == ':') {
			op = *p++;
		} else {
			goto bad; /* includes the legacy "eq"/"ne" forms */
		}
		v[k - 1].op = op;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '"') {
			p++;
			while (*p && *p != '"') {
				if (*p == '\\' && p[1])
					p++;
				gb_buf_putc(&val, *p++);
			}
			if (*p != '"') {
				gb_buf_free(&val);
				goto bad;
			}
			p++;
			v[k - 1].value = gb_buf_take(&val);
		} else {
			const char *b = p;
			while (*p && !isspace((unsigned char)*p) && *p != ')' &&
			       *p != '(')
				p++;
			if (p == b)
				goto bad;
			v[k - 1].value = gb_xstrndup(b, (size_t)(p - b));
		}
	}
	*out = v;
	*n = k;
	return 0;
bad:
	gce_filter_free(v, k);
	return -1;
}

int gce_filter_match(const gce_clause *c, size_t n, gce_field_fn get,
                     const void *obj)
{
	for (size_t i = 0; i < n; i++) {
		char buf[64];
		const char *v = get(obj, c[i].field, buf, sizeof(buf));
		int eq;
		if (c[i].op == ':' && strcmp(c[i].value, "*") == 0) {
			if (!v)
				return 0;
			continue;
		}
		if (!v) {
			if (c[i].op == '!')
				continue;
			return 0;
		}
		eq = strchr(c[i].value, '*') ? gb_glob(c[i].value, v)
		                             : strcmp(c[i].value, v) == 0;
		if (c[i].op == '!' ? eq : !eq)
			return 0;
	}
	return 1;
}
