/* aws_expat.c -- see aws_xml.h: EC2's XML through libexpat. */
#include "aws_xml.h"

#include <errno.h>
#include <expat.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_util.h"
#include "drvc_enc.h"

/* The tree's memory: nodes and strings in blocks freed together. */
typedef struct blk {
	struct blk *next;
	size_t cap, used;
	max_align_t data[];
} blk;

struct aws_xml_doc {
	aws_xml_node *root;
	blk *blocks;
};

struct aws_xml_reader {
	XML_Parser p;
	aws_xml_doc *d;
	aws_xml_node *cur;
	int depth;
	size_t nodes, fed;
	drvc_buf texts[AWS_XML_MAX_DEPTH]; /* direct text of each open level */
	char err[160];                     /* set: the reader failed */
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

/* Stops the parser with a message (the first one wins). */
static void stop(aws_xml_reader *r, const char *what)
{
	if (!r->err[0])
		snprintf(r->err, sizeof(r->err), "byte %ld: %s",
		         (long)XML_GetCurrentByteIndex(r->p), what);
	XML_StopParser(r->p, XML_FALSE);
}

static void XMLCALL on_start(void *ud, const XML_Char *name,
                             const XML_Char **attrs)
{
	aws_xml_reader *r = ud;
	const char *local = strrchr(name, ':');
	aws_xml_node *n;
	(void)attrs;
	if (r->err[0])
		return;
	if (r->depth >= AWS_XML_MAX_DEPTH) {
		char m[64];
		snprintf(m, sizeof(m), "elements nested deeper than %d levels",
		         AWS_XML_MAX_DEPTH);
		stop(r, m);
		return;
	}
	if (++r->nodes > AWS_XML_MAX_NODES) {
		char m[64];
		snprintf(m, sizeof(m), "more than %u elements",
		         AWS_XML_MAX_NODES);
		stop(r, m);
		return;
	}
	local = local ? local + 1 : name;
	n = arena_alloc(r->d, sizeof(*n));
	memset(n, 0, sizeof(*n));
	n->name = arena_strndup(r->d, local, strlen(local));
	n->text = "";
	n->parent = r->cur;
	if (r->cur) {
		if (r->cur->last)
			r->cur->last->next = n;
		else
			r->cur->child = n;
		r->cur->last = n;
	} else {
		r->d->root = n;
	}
	r->cur = n;
	r->texts[r->depth++].len = 0;
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
	aws_xml_reader *r = ud;
	drvc_buf *tb;
	(void)name;
	if (r->err[0] || r->depth == 0)
		return;
	tb = &r->texts[--r->depth];
	if (tb->len)
		r->cur->text = arena_strndup(r->d, tb->data, tb->len);
	tb->len = 0;
	r->cur = r->cur->parent;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
	aws_xml_reader *r = ud;
	drvc_buf *tb;
	if (r->err[0] || r->depth == 0 || len <= 0)
		return;
	tb = &r->texts[r->depth - 1];
	drvc_buf_add(tb, s, (size_t)len);
	if (tb->oom)
		stop(r, "out of memory");
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name,
                               const XML_Char *sysid, const XML_Char *pubid,
                               int has_internal_subset)
{
	(void)name;
	(void)sysid;
	(void)pubid;
	(void)has_internal_subset;
	stop(ud, "DOCTYPE and declarations are not accepted in an EC2 answer");
}

aws_xml_reader *aws_xml_begin(void)
{
	aws_xml_reader *r = aws_xcalloc(1, sizeof(*r));
	r->d = aws_xcalloc(1, sizeof(*r->d));
	/* no namespace processing: prefixes are stripped in on_start, and an
	 * undeclared prefix is not an error (as before libexpat) */
	r->p = XML_ParserCreate(NULL);
	if (!r->p)
		abort(); /* allocation failure (HACKING.md) */
	XML_SetUserData(r->p, r);
	XML_SetElementHandler(r->p, on_start, on_end);
	XML_SetCharacterDataHandler(r->p, on_text);
	XML_SetStartDoctypeDeclHandler(r->p, on_doctype);
	return r;
}

/* Feeds bytes (final: the last call); 0 or -1 with r->err set. */
static int feed(aws_xml_reader *r, const char *data, size_t len, int final)
{
	if (r->err[0])
		return -1;
	if (len > AWS_XML_MAX_DOC - r->fed) {
		snprintf(r->err, sizeof(r->err), "document of more than %zu "
		         "bytes exceeds the %u-byte limit", r->fed + len,
		         AWS_XML_MAX_DOC);
		return -1;
	}
	r->fed += len;
	do {
		int n = len > (size_t)INT_MAX ? INT_MAX : (int)len;
		int last = final && (size_t)n == len;
		if (XML_Parse(r->p, data, n, last) != XML_STATUS_OK) {
			enum XML_Error ec = XML_GetErrorCode(r->p);
			if (!r->err[0] && final &&
			    (r->depth > 0 || ec == XML_ERROR_UNCLOSED_TOKEN ||
			     ec == XML_ERROR_NO_ELEMENTS) &&
			    (r->d->root || ec == XML_ERROR_UNCLOSED_TOKEN))
				snprintf(r->err, sizeof(r->err),
				         "byte %ld: document truncated (%d "
				         "elements still open: %s)",
				         (long)XML_GetCurrentByteIndex(r->p),
				         r->depth, XML_ErrorString(ec));
			if (!r->err[0])
				snprintf(r->err, sizeof(r->err),
				         "byte %ld, line %lu: %s",
				         (long)XML_GetCurrentByteIndex(r->p),
				         (unsigned long)
				                 XML_GetCurrentLineNumber(r->p),
				         XML_ErrorString(
				                 XML_GetErrorCode(r->p)));
			return -1;
		}
		data += n;
		len -= (size_t)n;
	} while (len);
	return 0;
}

int aws_xml_feed(aws_xml_reader *r, const char *data, size_t len, char *err,
                 size_t errcap)
{
	if (feed(r, data, len, 0) != 0) {
		snprintf(err, errcap, "%s", r->err);
		return -1;
	}
	return 0;
}

aws_xml_doc *aws_xml_end(aws_xml_reader *r, char *err, size_t errcap)
{
	aws_xml_doc *d = NULL;
	if (feed(r, "", 0, 1) == 0 && r->d->root) {
		d = r->d;
		r->d = NULL;
	} else {
		snprintf(err, errcap, "%s", r->err[0] ? r->err : "no element");
	}
	for (size_t i = 0; i < AWS_XML_MAX_DEPTH; i++)
		drvc_buf_free(&r->texts[i]);
	XML_ParserFree(r->p);
	aws_xml_free(r->d);
	free(r);
	return d;
}

aws_xml_doc *aws_xml_parse(const char *data, size_t len, char *err,
                           size_t errcap)
{
	aws_xml_reader *r;
	if (len > AWS_XML_MAX_DOC) {
		snprintf(err, errcap, "document of %zu bytes exceeds the "
		         "%u-byte limit", len, AWS_XML_MAX_DOC);
		return NULL;
	}
	r = aws_xml_begin();
	/* a failure stays in r->err, which aws_xml_end reports */
	(void)feed(r, data ? data : "", data ? len : 0, 0);
	return aws_xml_end(r, err, errcap);
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
	char step[128];
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

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
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
