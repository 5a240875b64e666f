/* aws_xml.c -- see aws_xml.h. */
#include "aws_xml.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_util.h"

/* ------------------------------------------------------------------ */
/* Pull reader                                                          */
/* ------------------------------------------------------------------ */

static aws_xml_tok fail(aws_xml_reader *r, const char *fmt, ...)
	GB_PRINTF(2, 3);

static aws_xml_tok fail(aws_xml_reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, sizeof(r->err), "byte %zu: ", r->pos);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(r->err))
		vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	r->pos = r->len; /* sticky: every later call fails too */
	r->depth = -1;
	return AWS_XML_ERROR;
}

void aws_xml_reader_init(aws_xml_reader *r, const char *doc, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->doc = doc;
	r->len = len;
}

void aws_xml_reader_done(aws_xml_reader *r)
{
	drvc_buf_free(&r->text);
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int name_start(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
	       c == ':' || c >= 0x80;
}

static int name_char(unsigned char c)
{
	return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* Finds `pat` at or after pos; returns its offset or (size_t)-1. */
static size_t find(const aws_xml_reader *r, size_t pos, const char *pat)
{
	size_t n = strlen(pat);
	if (r->len < n)
		return (size_t)-1;
	for (size_t i = pos; i + n <= r->len; i++)
		if (r->doc[i] == pat[0] && memcmp(r->doc + i, pat, n) == 0)
			return i;
	return (size_t)-1;
}

/* Scans a name at r->pos; returns its length (0 when none). */
static size_t scan_name(const aws_xml_reader *r, size_t pos)
{
	size_t i = pos;
	if (i >= r->len || !name_start((unsigned char)r->doc[i]))
		return 0;
	while (i < r->len && name_char((unsigned char)r->doc[i]))
		i++;
	return i - pos;
}

/* Copies the local part (after the last ':') of the qualified name. */
static int set_local_name(aws_xml_reader *r, size_t off, size_t n)
{
	const char *q = r->doc + off;
	const char *colon = memrchr(q, ':', n);
	size_t ln;
	if (colon) {
		ln = n - (size_t)(colon + 1 - q);
		q = colon + 1;
	} else {
		ln = n;
	}
	if (ln == 0 || ln >= sizeof(r->name))
		return -1;
	memcpy(r->name, q, ln);
	r->name[ln] = '\0';
	return 0;
}

static void put_utf8(drvc_buf *b, unsigned long cp)
{
	char o[4];
	size_t n;
	if (cp < 0x80) {
		o[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		o[0] = (char)(0xF0 | (cp >> 18));
		o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	drvc_buf_add(b, o, n);
}

static int valid_cp(unsigned long cp)
{
	return cp == 0x9 || cp == 0xA || cp == 0xD ||
	       (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
	       (cp >= 0x10000 && cp <= 0x10FFFF);
}

/* Decodes the entity at r->doc[*pos] ('&') into r->text. */
static int entity(aws_xml_reader *r, size_t *pos)
{
	size_t i = *pos + 1, end;
	const char *e;
	size_t n;
	for (end = i; end < r->len && end - i <= 12 && r->doc[end] != ';';
	     end++)
		;
	if (end >= r->len || r->doc[end] != ';')
		return -1;
	e = r->doc + i;
	n = end - i;
	if (n == 3 && memcmp(e, "amp", 3) == 0)
		drvc_buf_adds(&r->text, "&");
	else if (n == 2 && memcmp(e, "lt", 2) == 0)
		drvc_buf_adds(&r->text, "<");
	else if (n == 2 && memcmp(e, "gt", 2) == 0)
		drvc_buf_adds(&r->text, ">");
	else if (n == 4 && memcmp(e, "quot", 4) == 0)
		drvc_buf_adds(&r->text, "\"");
	else if (n == 4 && memcmp(e, "apos", 4) == 0)
		drvc_buf_adds(&r->text, "'");
	else if (n >= 2 && e[0] == '#') {
		unsigned long cp = 0;
		int hex = e[1] == 'x';
		size_t k = hex ? 2 : 1;
		if (k >= n)
			return -1;
		for (; k < n; k++) {
			int d;
			char c = e[k];
			if (c >= '0' && c <= '9')
				d = c - '0';
			else if (hex && c >= 'a' && c <= 'f')
				d = c - 'a' + 10;
			else if (hex && c >= 'A' && c <= 'F')
				d = c - 'A' + 10;
			else
				return -1;
			cp = cp * (hex ? 16u : 10u) + (unsigned long)d;
			if (cp > 0x10FFFF)
				return -1;
		}
		if (!valid_cp(cp))
			return -1;
		put_utf8(&r->text, cp);
	} else {
		return -1;
	}
	*pos = end + 1;
	return 0;
}

static aws_xml_tok read_text(aws_xml_reader *r)
{
	size_t i = r->pos;
	r->text.len = 0;
	if (r->text.data)
		r->text.data[0] = '\0';
	while (i < r->len && r->doc[i] != '<') {
		unsigned char c = (unsigned char)r->doc[i];
		if (c == '&') {
			size_t at = i;
			if (entity(r, &i) != 0) {
				r->pos = at;
				return fail(r, "malformed entity or character "
				               "reference");
			}
			continue;
		}
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			r->pos = i;
			return fail(r, "control character 0x%02x in text", c);
		}
		size_t s = i;
		while (i < r->len && r->doc[i] != '<' && r->doc[i] != '&' &&
		       ((unsigned char)r->doc[i] >= 0x20 || is_ws(r->doc[i])))
			i++;
		drvc_buf_add(&r->text, r->doc + s, i - s);
	}
	r->pos = i;
	if (r->text.oom)
		return fail(r, "out of memory");
	if (!r->text.data)
		drvc_buf_add(&r->text, "", 0);
	return AWS_XML_TEXT;
}

static aws_xml_tok end_tag(aws_xml_reader *r)
{
	size_t off = r->pos + 2, n = scan_name(r, off), i;
	if (n == 0)
		return fail(r, "malformed end tag");
	i = off + n;
	while (i < r->len && is_ws(r->doc[i]))
		i++;
	if (i >= r->len)
		return fail(r, "document truncated inside an end tag");
	if (r->doc[i] != '>')
		return fail(r, "malformed end tag");
	if (r->depth <= 0)
		return fail(r, "end tag without a start tag");
	if (r->stack_len[r->depth - 1] != n ||
	    memcmp(r->doc + r->stack[r->depth - 1], r->doc + off, n) != 0)
		return fail(r, "end tag </%.*s> does not match <%.*s>",
		            (int)(n > 64 ? 64 : n), r->doc + off,
		            (int)(r->stack_len[r->depth - 1] > 64
		                          ? 64
		                          : r->stack_len[r->depth - 1]),
		            r->doc + r->stack[r->depth - 1]);
	if (set_local_name(r, off, n) != 0)
		return fail(r, "element name too long or empty");
	r->depth--;
	r->pos = i + 1;
	return AWS_XML_END;
}

static aws_xml_tok start_tag(aws_xml_reader *r)
{
	size_t off = r->pos + 1, n = scan_name(r, off), i;
	int self_close = 0;
	if (n == 0)
		return fail(r, "malformed start tag");
	if (r->depth == 0 && r->seen_root)
		return fail(r, "a second root element");
	if (r->depth >= AWS_XML_MAX_DEPTH)
		return fail(r, "elements nested deeper than %d",
		            AWS_XML_MAX_DEPTH);
	i = off + n;
	for (;;) {
		size_t an;
		char q;
		int had_ws = 0;
		while (i < r->len && is_ws(r->doc[i])) {
			i++;
			had_ws = 1;
		}
		if (i >= r->len)
			return fail(r, "document truncated inside a start tag");
		if (r->doc[i] == '>') {
			i++;
			break;
		}
		if (r->doc[i] == '/') {
			if (i + 1 >= r->len)
				return fail(r, "document truncated inside a "
				               "start tag");
			if (r->doc[i + 1] != '>')
				return fail(r, "malformed start tag");
			i += 2;
			self_close = 1;
			break;
		}
		/* an attribute: name = "value" (skipped) */
		an = scan_name(r, i);
		if (an == 0 || !had_ws)
			return fail(r, "malformed attribute");
		i += an;
		while (i < r->len && is_ws(r->doc[i]))
			i++;
		if (i >= r->len || r->doc[i] != '=')
			return fail(r, i >= r->len ? "document truncated inside "
			                             "a start tag"
			                           : "attribute without a value");
		i++;
		while (i < r->len && is_ws(r->doc[i]))
			i++;
		if (i >= r->len || (r->doc[i] != '"' && r->doc[i] != '\''))
			return fail(r, i >= r->len ? "document truncated inside "
			                             "a start tag"
			                           : "attribute value not quoted");
		q = r->doc[i++];
		while (i < r->len && r->doc[i] != q) {
			if (r->doc[i] == '<' || r->doc[i] == '\0')
				return fail(r, "invalid character in an "
				               "attribute value");
			i++;
		}
		if (i >= r->len)
			return fail(r, "document truncated inside an attribute");
		i++;
	}
	if (set_local_name(r, off, n) != 0)
		return fail(r, "element name too long or empty");
	r->stack[r->depth] = off;
	r->stack_len[r->depth] = n;
	r->depth++;
	r->seen_root = 1;
	r->pos = i;
	r->pending_end = self_close;
	return AWS_XML_START;
}

aws_xml_tok aws_xml_next(aws_xml_reader *r)
{
	if (r->depth < 0)
		return AWS_XML_ERROR;
	if (r->pending_end) {
		r->pending_end = 0;
		r->depth--;
		return AWS_XML_END; /* r->name still holds the element */
	}
	for (;;) {
		size_t e;
		if (r->pos >= r->len) {
			if (!r->seen_root)
				return fail(r, "no root element (empty or "
				               "truncated document)");
			if (r->depth > 0)
				return fail(r, "document truncated: <%.*s> is "
				               "not closed",
				            (int)(r->stack_len[r->depth - 1] > 64
				                          ? 64
				                          : r->stack_len[r->depth - 1]),
				            r->doc + r->stack[r->depth - 1]);
			return AWS_XML_EOF;
		}
		if (r->doc[r->pos] == '\0')
			return fail(r, "NUL byte in the document");
		if (r->doc[r->pos] != '<') {
			if (r->depth > 0)
				return read_text(r);
			while (r->pos < r->len && is_ws(r->doc[r->pos]))
				r->pos++;
			if (r->pos < r->len && r->doc[r->pos] != '<')
				return fail(r, "text outside the root element");
			continue;
		}
		if (r->pos + 1 >= r->len)
			return fail(r, "document truncated after '<'");
		if (r->doc[r->pos + 1] == '?') {
			e = find(r, r->pos + 2, "?>");
			if (e == (size_t)-1)
				return fail(r, "unterminated processing "
				               "instruction");
			r->pos = e + 2;
			continue;
		}
		if (r->doc[r->pos + 1] == '!') {
			if (r->len - r->pos >= 4 &&
			    memcmp(r->doc + r->pos, "<!--", 4) == 0) {
				e = find(r, r->pos + 4, "-->");
				if (e == (size_t)-1)
					return fail(r, "unterminated comment");
				r->pos = e + 3;
				continue;
			}
			if (r->len - r->pos >= 9 &&
			    memcmp(r->doc + r->pos, "<![CDATA[", 9) == 0) {
				if (r->depth == 0)
					return fail(r, "CDATA outside the root "
					               "element");
				e = find(r, r->pos + 9, "]]>");
				if (e == (size_t)-1)
					return fail(r, "unterminated CDATA");
				r->text.len = 0;
				drvc_buf_add(&r->text, r->doc + r->pos + 9,
				             e - (r->pos + 9));
				if (memchr(r->doc + r->pos + 9, '\0',
				           e - (r->pos + 9)))
					return fail(r, "NUL byte in CDATA");
				r->pos = e + 3;
				if (r->text.oom)
					return fail(r, "out of memory");
				return AWS_XML_TEXT;
			}
			return fail(r, "DOCTYPE and declarations are not "
			               "accepted");
		}
		if (r->doc[r->pos + 1] == '/')
			return end_tag(r);
		return start_tag(r);
	}
}

/* ------------------------------------------------------------------ */
/* Tree                                                                 */
/* ------------------------------------------------------------------ */

typedef struct blk {
	struct blk *next;
	size_t used, cap;
	max_align_t data[]; /* aligned storage */
} blk;

struct aws_xml_doc {
	blk *blocks;
	aws_xml_node *root;
};

static void *arena_alloc(aws_xml_doc *d, size_t n)
{
	const size_t al = sizeof(max_align_t);
	blk *b = d->blocks;
	n = (n + al - 1) / al * al;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		b = aws_xmalloc(sizeof(blk) + cap);
		b->cap = cap;
		b->used = 0;
		b->next = d->blocks;
		d->blocks = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

static char *arena_strndup(aws_xml_doc *d, const char *s, size_t n)
{
	char *p = arena_alloc(d, n + 1);
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void aws_xml_free(aws_xml_doc *d)
{
	blk *b, *next;
	if (!d)
		return;
	for (b = d->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	free(d);
}

aws_xml_doc *aws_xml_parse(const char *data, size_t len, char *err,
                           size_t errcap)
{
	aws_xml_reader r;
	aws_xml_doc *d;
	aws_xml_node *cur = NULL;
	drvc_buf texts[AWS_XML_MAX_DEPTH];
	size_t nodes = 0;
	aws_xml_tok t;
	int ok = 0;

	if (len > AWS_XML_MAX_DOC) {
		snprintf(err, errcap, "document of %zu bytes exceeds the "
		         "%u-byte limit", len, AWS_XML_MAX_DOC);
		return NULL;
	}
	d = aws_xcalloc(1, sizeof(*d));
	memset(texts, 0, sizeof(texts));
	aws_xml_reader_init(&r, data, len);
	while ((t = aws_xml_next(&r)) != AWS_XML_ERROR) {
		if (t == AWS_XML_EOF) {
			ok = 1;
			break;
		}
		if (t == AWS_XML_START) {
			aws_xml_node *n;
			if (++nodes > AWS_XML_MAX_NODES) {
				snprintf(err, errcap, "more than %u elements",
				         AWS_XML_MAX_NODES);
				goto out;
			}
			n = arena_alloc(d, sizeof(*n));
			memset(n, 0, sizeof(*n));
			n->name = arena_strndup(d, r.name, strlen(r.name));
			n->text = "";
			n->parent = cur;
			if (cur) {
				if (cur->last)
					cur->last->next = n;
				else
					cur->child = n;
				cur->last = n;
			} else {
				d->root = n;
			}
			cur = n;
			texts[r.depth - 1].len = 0;
		} else if (t == AWS_XML_TEXT) {
			drvc_buf *tb = &texts[r.depth - 1];
			drvc_buf_add(tb, r.text.data, r.text.len);
			if (tb->oom) {
				snprintf(err, errcap, "out of memory");
				goto out;
			}
		} else { /* END */
			drvc_buf *tb = &texts[r.depth];
			if (tb->len)
				cur->text = arena_strndup(d, tb->data, tb->len);
			tb->len = 0;
			cur = cur->parent;
		}
	}
	if (!ok)
		snprintf(err, errcap, "%s", r.err);
out:
	for (size_t i = 0; i < AWS_XML_MAX_DEPTH; i++)
		drvc_buf_free(&texts[i]);
	aws_xml_reader_done(&r);
	if (!ok) {
		aws_xml_free(d);
		return NULL;
	}
	return d;
}

const aws_xml_node *aws_xml_root(const aws_xml_doc *d)
{
	return d ? d->root : NULL;
}

const aws_xml_node *aws_xml_child(const aws_xml_node *n, const char *name)
{
	if (!n)
		return NULL;
	for (const aws_xml_node *c = n->child; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

const aws_xml_node *aws_xml_next_named(const aws_xml_node *n)
{
	if (!n)
		return NULL;
	for (const aws_xml_node *c = n->next; c; c = c->next)
		if (strcmp(c->name, n->name) == 0)
			return c;
	return NULL;
}

const aws_xml_node *aws_xml_path(const aws_xml_node *n, const char *path)
{
	char step[AWS_XML_MAX_NAME];
	while (n && *path) {
		const char *slash = strchr(path, '/');
		size_t len = slash ? (size_t)(slash - path) : strlen(path);
		if (len == 0 || len >= sizeof(step))
			return NULL;
		memcpy(step, path, len);
		step[len] = '\0';
		n = aws_xml_child(n, step);
		path += len + (slash ? 1 : 0);
	}
	return n;
}

const char *aws_xml_text(const aws_xml_node *n, const char *path)
{
	n = aws_xml_path(n, path);
	return n ? n->text : NULL;
}

/* Copies text without surrounding whitespace into buf; -1 if too long. */
static int trimmed(const char *s, char *buf, size_t cap)
{
	size_t n;
	while (is_ws(*s))
		s++;
	n = strlen(s);
	while (n && is_ws(s[n - 1]))
		n--;
	if (n == 0 || n >= cap)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

int aws_xml_int(const aws_xml_node *n, const char *path, long long *out)
{
	const char *s = aws_xml_text(n, path);
	char buf[32], *end;
	long long v;
	if (!s)
		return -1;
	if (trimmed(s, buf, sizeof(buf)) != 0)
		return -2;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || *end)
		return -2;
	*out = v;
	return 0;
}

int aws_xml_double(const aws_xml_node *n, const char *path, double *out)
{
	const char *s = aws_xml_text(n, path);
	char buf[48], *end;
	double v;
	if (!s)
		return -1;
	if (trimmed(s, buf, sizeof(buf)) != 0)
		return -2;
	errno = 0;
	v = strtod(buf, &end);
	if (errno || *end || !isfinite(v))
		return -2;
	*out = v;
	return 0;
}
