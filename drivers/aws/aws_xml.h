/*
 * aws_xml.h -- a small, strict, bounded XML reader for EC2 answers.
 *
 * Two layers:
 *   - a pull reader (aws_xml_next) yielding START / TEXT / END tokens;
 *     namespace prefixes are stripped, attributes are skipped, the five
 *     predefined entities and numeric character references are decoded,
 *     CDATA is text, comments and processing instructions are skipped;
 *     DOCTYPE (and so any custom entity) is refused;
 *   - a tiny tree (aws_xml_parse) built with the pull reader, with path
 *     lookups for the response parsers.
 * Bounds: AWS_XML_MAX_DOC bytes, AWS_XML_MAX_DEPTH levels,
 * AWS_XML_MAX_NODES elements.  Every failure is a message with the byte
 * offset; nothing is ever read past the given length.
 */
#ifndef AWS_XML_H
#define AWS_XML_H

#include <stddef.h>

#include "drvc_enc.h"

#define AWS_XML_MAX_DOC (16u * 1024u * 1024u)
#define AWS_XML_MAX_DEPTH 48
#define AWS_XML_MAX_NODES 400000u
#define AWS_XML_MAX_NAME 128

typedef enum aws_xml_tok {
	AWS_XML_START = 1, /* name = local name of the element */
	AWS_XML_TEXT,      /* text = decoded character data (may be split) */
	AWS_XML_END,       /* name = local name of the closed element */
	AWS_XML_EOF,       /* the root element was closed and only
	                      whitespace / comments followed */
	AWS_XML_ERROR      /* err holds the reason */
} aws_xml_tok;

typedef struct aws_xml_reader {
	const char *doc;
	size_t len, pos;
	int depth;
	int seen_root;
	int pending_end; /* a self-closing tag still owes its END */
	size_t stack[AWS_XML_MAX_DEPTH]; /* offsets of open element names */
	size_t stack_len[AWS_XML_MAX_DEPTH];
	char name[AWS_XML_MAX_NAME];     /* current START/END local name */
	drvc_buf text;                   /* current TEXT */
	char err[160];
} aws_xml_reader;

/* doc is borrowed for the reader's life.  Call aws_xml_reader_done after. */
void aws_xml_reader_init(aws_xml_reader *r, const char *doc, size_t len);
aws_xml_tok aws_xml_next(aws_xml_reader *r);
void aws_xml_reader_done(aws_xml_reader *r);

typedef struct aws_xml_node aws_xml_node;
struct aws_xml_node {
	const char *name;     /* local name */
	const char *text;     /* direct character data, "" when none */
	aws_xml_node *parent, *child, *last, *next;
};

typedef struct aws_xml_doc aws_xml_doc;

/* Parse a whole document.  Returns the tree (caller frees with
 * aws_xml_free) or NULL with a message in err. */
aws_xml_doc *aws_xml_parse(const char *data, size_t len, char *err,
                           size_t errcap);
void aws_xml_free(aws_xml_doc *d);
/* Borrowed until aws_xml_free. */
const aws_xml_node *aws_xml_root(const aws_xml_doc *d);

/* First child named `name`, or NULL. */
const aws_xml_node *aws_xml_child(const aws_xml_node *n, const char *name);
/* Next sibling with the same name as n, or NULL. */
const aws_xml_node *aws_xml_next_named(const aws_xml_node *n);
/* Follow "a/b/c" from n (each step: first child of that name). */
const aws_xml_node *aws_xml_path(const aws_xml_node *n, const char *path);
/* Character data of aws_xml_path(n, path) exactly as decoded ("" for an
 * empty element), or NULL when the element is absent.  Borrowed until
 * aws_xml_free. */
const char *aws_xml_text(const aws_xml_node *n, const char *path);
/* Parse the text at path as an integer (surrounding whitespace allowed).
 * Returns 0 and sets *out, -1 when absent, -2 when not an integer. */
int aws_xml_int(const aws_xml_node *n, const char *path, long long *out);
/* Same for a decimal number. */
int aws_xml_double(const aws_xml_node *n, const char *path, double *out);

#endif
