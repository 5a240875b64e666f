/*
 * azure_filter.c -- the OData $filter subset of the Retail Prices API
 * that real clients send:
 *
 *     expr   := term { "or" term }
 *     term   := factor { "and" factor }
 *     factor := "(" expr ")" | FIELD "eq" 'VALUE'
 *
 * so `and` binds tighter than `or`, as in OData.  Keywords are
 * case-insensitive, `''` inside a value is a quote, FIELD is one of the
 * item fields (priceType means `type`).  Everything else the real API may
 * know (ne, gt, contains(), startswith(), not, numbers) is refused with a
 * message naming it, and so is nesting deeper than MAX_DEPTH or more than
 * MAX_CLAUSES comparisons (a bound on work per request).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"

#define MAX_DEPTH 32
#define MAX_CLAUSES 1000

enum node_kind { N_EQ, N_AND, N_OR };

struct az_filter {
	enum node_kind kind;
	char *field;       /* N_EQ: canonical item field */
	char *value;       /* N_EQ */
	az_filter *left, *right;
};

typedef struct parser {
	const char *p;
	int depth, clauses;
	char *why;
	size_t cap;
	int failed;
} parser;

static const char *const fields[] = {
	"armRegionName", "armSkuName", "serviceName", "type", "skuName",
	"meterName", "productName", "location", "serviceFamily",
	"currencyCode", "unitOfMeasure", "meterId", "skuId", "productId",
	"serviceId", NULL,
};

static void refuse(parser *ps, const char *fmt, ...) GB_PRINTF(2, 3);

static void refuse(parser *ps, const char *fmt, ...)
{
	va_list ap;
	if (ps->failed)
		return;
	ps->failed = 1;
	va_start(ap, fmt);
	vsnprintf(ps->why, ps->cap, fmt, ap);
	va_end(ap);
}

void az_filter_free(az_filter *f)
{
	if (!f)
		return;
	az_filter_free(f->left);
	az_filter_free(f->right);
	free(f->field);
	free(f->value);
	free(f);
}

static void skip_ws(parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r' ||
	       *ps->p == '\n')
		ps->p++;
}

static int is_word(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_';
}

/* Length of the word at p (letters, digits, '_'). */
static size_t word_len(const char *p)
{
	size_t n = 0;
	while (is_word(p[n]))
		n++;
	return n;
}

/* Consumes the keyword kw when it is the next whole word. */
static int keyword(parser *ps, const char *kw)
{
	size_t n = strlen(kw);
	skip_ws(ps);
	if (word_len(ps->p) != n || strncasecmp(ps->p, kw, n) != 0)
		return 0;
	ps->p += n;
	return 1;
}

/* A short quote of the text at p for error messages. */
static const char *near(const char *p, char *buf, size_t cap)
{
	snprintf(buf, cap, "%.40s%s", p, strlen(p) > 40 ? "..." : "");
	return buf;
}

static const char *canonical_field(const char *name, size_t n)
{
	if (n == 9 && strncasecmp(name, "priceType", 9) == 0)
		return "type";
	for (size_t i = 0; fields[i]; i++)
		if (strlen(fields[i]) == n && strncasecmp(fields[i], name, n) == 0)
			return fields[i];
	return NULL;
}

static char *quoted_value(parser *ps)
{
	gb_buf val = GB_BUF_INIT;
	char q[64];
	skip_ws(ps);
	if (*ps->p != '\'') {
		refuse(ps, "expected a quoted string value at '%s' (only string "
		       "comparisons are supported)", near(ps->p, q, sizeof(q)));
		return NULL;
	}
	ps->p++;
	for (;;) {
		if (!*ps->p) {
			gb_buf_free(&val);
			refuse(ps, "unterminated string in $filter");
			return NULL;
		}
		if (*ps->p == '\'' && ps->p[1] == '\'') {
			gb_buf_putc(&val, '\'');
			ps->p += 2;
			continue;
		}
		if (*ps->p == '\'')
			break;
		gb_buf_putc(&val, *ps->p++);
	}
	ps->p++;
	return gb_buf_take(&val);
}

static az_filter *comparison(parser *ps)
{
	const char *s = ps->p, *field;
	size_t n = word_len(s), op;
	char q[64];
	az_filter *f;
	if (n == 0) {
		refuse(ps, "expected a field name or '(' at '%s'",
		       *s ? near(s, q, sizeof(q)) : "end of filter");
		return NULL;
	}
	if (s[n] == '(' || (n == 3 && strncasecmp(s, "not", 3) == 0)) {
		refuse(ps, "function or operator '%.*s' is not supported; use "
		       "eq, and, or and parentheses", (int)n, s);
		return NULL;
	}
	if ((n == 11 && strncasecmp(s, "retailPrice", 11) == 0) ||
	    (n == 9 && strncasecmp(s, "unitPrice", 9) == 0) ||
	    (n == 16 && strncasecmp(s, "tierMinimumUnits", 16) == 0)) {
		refuse(ps, "numeric field '%.*s': only string comparisons are "
		       "supported", (int)n, s);
		return NULL;
	}
	if (!(field = canonical_field(s, n))) {
		refuse(ps, "unknown field '%.*s'", (int)n, s);
		return NULL;
	}
	ps->p += n;
	skip_ws(ps);
	op = word_len(ps->p);
	if (op != 2 || strncasecmp(ps->p, "eq", 2) != 0) {
		if (op)
			refuse(ps, "operator '%.*s' is not supported; only 'eq' "
			       "comparisons are", (int)op, ps->p);
		else
			refuse(ps, "expected 'eq' after '%s' at '%s'", field,
			       *ps->p ? near(ps->p, q, sizeof(q)) : "end of filter");
		return NULL;
	}
	ps->p += 2;
	if (++ps->clauses > MAX_CLAUSES) {
		refuse(ps, "more than %d comparisons in $filter", MAX_CLAUSES);
		return NULL;
	}
	f = gb_xcalloc(1, sizeof(*f));
	f->kind = N_EQ;
	f->field = gb_xstrdup(field);
	if (!(f->value = quoted_value(ps))) {
		az_filter_free(f);
		return NULL;
	}
	return f;
}

static az_filter *expr(parser *ps);

static az_filter *factor(parser *ps)
{
	az_filter *f;
	char q[64];
	skip_ws(ps);
	if (*ps->p != '(')
		return comparison(ps);
	if (++ps->depth > MAX_DEPTH) {
		refuse(ps, "parentheses nested deeper than %d", MAX_DEPTH);
		return NULL;
	}
	ps->p++;
	if (!(f = expr(ps)))
		return NULL;
	skip_ws(ps);
	if (*ps->p != ')') {
		refuse(ps, "expected ')' at '%s'",
		       *ps->p ? near(ps->p, q, sizeof(q)) : "end of filter");
		az_filter_free(f);
		return NULL;
	}
	ps->p++;
	ps->depth--;
	return f;
}

static az_filter *join(enum node_kind kind, az_filter *l, az_filter *r)
{
	az_filter *f = gb_xcalloc(1, sizeof(*f));
	f->kind = kind;
	f->left = l;
	f->right = r;
	return f;
}

static az_filter *term(parser *ps)
{
	az_filter *f = factor(ps);
	while (f && keyword(ps, "and")) {
		az_filter *r = factor(ps);
		if (!r) {
			az_filter_free(f);
			return NULL;
		}
		f = join(N_AND, f, r);
	}
	return f;
}

static az_filter *expr(parser *ps)
{
	az_filter *f = term(ps);
	while (f && keyword(ps, "or")) {
		az_filter *r = term(ps);
		if (!r) {
			az_filter_free(f);
			return NULL;
		}
		f = join(N_OR, f, r);
	}
	return f;
}

int az_filter_parse(const char *text, az_filter **out, char *why,
                    size_t cap)
{
	parser ps;
	az_filter *f;
	char q[64];
	memset(&ps, 0, sizeof(ps));
	ps.p = text;
	ps.why = why;
	ps.cap = cap;
	*out = NULL;
	skip_ws(&ps);
	if (!*ps.p)
		return 0;
	f = expr(&ps);
	if (f) {
		size_t n;
		skip_ws(&ps);
		n = word_len(ps.p);
		if (*ps.p && n)
			refuse(&ps, "operator '%.*s' is not supported; use eq, "
			       "and, or and parentheses", (int)n, ps.p);
		else if (*ps.p)
			refuse(&ps, "unexpected '%s'", near(ps.p, q, sizeof(q)));
	}
	if (ps.failed) {
		az_filter_free(f);
		return -1;
	}
	*out = f;
	return 0;
}

int az_filter_match(const az_filter *f, const json_t *item, int cs)
{
	const char *s;
	if (!f)
		return 1;
	switch (f->kind) {
	case N_AND:
		return az_filter_match(f->left, item, cs) &&
		       az_filter_match(f->right, item, cs);
	case N_OR:
		return az_filter_match(f->left, item, cs) ||
		       az_filter_match(f->right, item, cs);
	case N_EQ:
		break;
	}
	s = json_string_value(json_object_get(item, f->field));
	if (!s)
		return 0;
	return cs ? strcmp(s, f->value) == 0 : strcasecmp(s, f->value) == 0;
}
