/*
 * http.h -- cloudsim's view of one HTTP exchange: the request exactly as
 * received (raw path and query, headers in order, body) and the response
 * a handler fills in.  Plus the encodings every provider module needs:
 * percent-decoding, form/query parsing, JSON and XML escaping.
 */
#ifndef SIM_HTTP_H
#define SIM_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "util.h"

typedef struct sim_hdr {
	char *name;  /* as sent (case kept) */
	char *value; /* as sent */
} sim_hdr;

typedef struct sim_req {
	char *method;
	char *raw_uri;   /* request target as on the wire */
	char *path;      /* raw path (still percent-encoded) */
	char *query;     /* raw query after '?', "" when none */
	sim_hdr *hdrs;
	size_t nhdrs;
	char *body;      /* NUL-terminated copy of the body */
	size_t body_len;
	int body_too_large;
	int bad_query;   /* the query string had a malformed %-escape */
	/* Decoded query parameters (last value wins on repeats). */
	gb_kvs qargs;
	/* Set by handlers: the operation name (borrowed static string). */
	const char *op;
	char request_id[40];
} sim_req;

typedef struct sim_resp {
	int status;
	char *content_type; /* owned */
	gb_buf body;
	gb_kvs headers;
} sim_resp;

/* First header named `name` (case-insensitive); borrowed, NULL if absent. */
const char *sim_req_header(const sim_req *r, const char *name);
/* Decoded query argument; borrowed, NULL if absent. */
const char *sim_req_qarg(const sim_req *r, const char *name);
void sim_req_free(sim_req *r);

void sim_resp_init(sim_resp *r);
void sim_resp_free(sim_resp *r);
void sim_resp_header(sim_resp *r, const char *name, const char *value);
void sim_resp_headerf(sim_resp *r, const char *name, const char *fmt, ...)
	GB_PRINTF(3, 4);
/* Replaces the body.  sim_resp_json steals obj (compact JSON). */
void sim_resp_json(sim_resp *r, int status, json_t *obj);
void sim_resp_text(sim_resp *r, int status, const char *ctype,
                   const char *text);
void sim_resp_empty(sim_resp *r, int status);

/* Percent-decoding of s[0..n).  plus_space turns '+' into ' ' (form
 * bodies).  Returns a new string, or NULL on a malformed escape or an
 * embedded NUL. */
char *sim_pct_decode(const char *s, size_t n, int plus_space);
/* Parses "a=1&b=2" (decoded, last value wins).  -1 on a malformed escape
 * or more than SIM_MAX_PARAMS pieces.  Empty pieces are skipped. */
#define SIM_MAX_PARAMS 4096
int sim_parse_form(const char *s, size_t n, int plus_space, gb_kvs *out);
/* RFC 3986 unreserved-only encoding (SigV4 style, uppercase hex).
 * keep_slash leaves '/' alone. */
void sim_pct_encode(gb_buf *b, const char *s, size_t n, int keep_slash);
/* Query-component encoding for links we build (same as above). */
char *sim_url_encode(const char *s);

/* XML text-node escaping (&, <, >, control characters) into b. */
void sim_xml_escape(gb_buf *b, const char *s);

/* base64url without padding; caller frees.  Decode returns NULL on bad
 * input and sets *outlen. */
char *sim_b64url_encode(const void *p, size_t n);
unsigned char *sim_b64url_decode(const char *s, size_t n, size_t *outlen);

/* A random RFC 4122 v4 UUID (36 chars + NUL). */
void sim_uuid(char out[37]);
/* 1 when s is a UUID in 8-4-4-4-12 hex form. */
int sim_is_uuid(const char *s);

/* RFC 3339 UTC with milliseconds: "2026-11-22T13:42:00.123Z" (>= 32). */
const char *sim_time_ms(int64_t unix_ms, char *buf, size_t cap);
/* The same without fraction: "2026-11-22T13:42:00Z". */
const char *sim_time_s(int64_t unix_ms, char *buf, size_t cap);
/* Parses RFC 3339 / ISO 8601 ("...Z", fractions, +hh:mm offsets);
 * 0 ok. */
int sim_parse_iso(const char *s, int64_t *unix_ms);

/* Strict decimal integer of the whole string; 0 ok. */
int sim_parse_i64(const char *s, int64_t *out);

#endif
