/*
 * aws_xml.h -- EC2's XML answers, read with libexpat (Debian's
 * libexpat1-dev), into a small tree with path lookups.
 *
 * The reader is incremental: aws_xml_begin, aws_xml_feed with the bytes
 * as they arrive (any split), aws_xml_end; aws_xml_parse does all three
 * for a whole document.  Namespace prefixes are stripped ("ec2:item" is
 * "item"), attributes are ignored, the five predefined entities and
 * numeric character references are decoded (libexpat), CDATA is text,
 * comments and processing instructions are skipped; a DOCTYPE (and so any
 * entity declaration) is refused.
 * Bounds: AWS_XML_MAX_DOC bytes, AWS_XML_MAX_DEPTH levels,
 * AWS_XML_MAX_NODES elements.  Every failure is a message with the byte
 * offset; nothing is read past the given lengths.
 * Thread-safety: a reader or a document is used by one thread at a time;
 * separate ones are independent.
 */
#ifndef AWS_XML_H
#define AWS_XML_H

#include <stddef.h>

#define AWS_XML_MAX_DOC (16u * 1024u * 1024u)
#define AWS_XML_MAX_DEPTH 48
#define AWS_XML_MAX_NODES 400000u

typedef struct aws_xml_node aws_xml_node;
struct aws_xml_node {
	const char *name;     /* local name */
	const char *text;     /* direct character data, "" when none */
	aws_xml_node *parent, *child, *last, *next;
};

typedef struct aws_xml_doc aws_xml_doc;
typedef struct aws_xml_reader aws_xml_reader;

/* A reader for one document (never NULL; allocation failure aborts). */
aws_xml_reader *aws_xml_begin(void);
/* The next len bytes of the document.  0, or -1 with a message in err
 * (the reader then refuses everything and aws_xml_end gives NULL). */
int aws_xml_feed(aws_xml_reader *r, const char *data, size_t len, char *err,
                 size_t errcap);
/* The end of the document: the tree (the caller's, aws_xml_free) or NULL
 * with a message in err.  Frees the reader either way. */
aws_xml_doc *aws_xml_end(aws_xml_reader *r, char *err, size_t errcap);

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
