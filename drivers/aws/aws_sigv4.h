/*
 * aws_sigv4.h -- AWS Signature Version 4 (header form) over a generic
 * request, with OpenSSL.  The same code signs the driver's EC2 calls and
 * the published test vectors.
 *
 * Canonicalisation (as the AWS SDKs do it):
 *   - path: normalised (empty and "." segments dropped, ".." pops, a
 *     trailing slash kept) unless normalize_path is 0 (S3), then every
 *     byte outside A-Z a-z 0-9 - _ . ~ / is %XX-encoded;
 *   - query: split on '&', each name and value %-decoded then encoded
 *     (RFC 3986, space = %20), sorted by name then value, "name=" for an
 *     empty value;
 *   - headers: the ones given are the ones signed; names lower-cased,
 *     values trimmed with inner runs of whitespace (including line folds)
 *     collapsed to one space, repeated names joined with ',' in order,
 *     sorted by name;
 *   - payload: lower-case hex SHA-256 of the body.
 */
#ifndef AWS_SIGV4_H
#define AWS_SIGV4_H

#include <stddef.h>

#include "gpubroker/driver.h"

typedef struct aws_sigv4_req {
	const char *method;    /* "GET", "POST", ... */
	const char *path;      /* as on the request line, no query; "" = "/" */
	const char *query;     /* without '?', NULL or "" when none */
	const gb_kv *headers;  /* every header to sign (any case) */
	size_t nheaders;
	const void *body;
	size_t body_len;
	int normalize_path;    /* 1 for every service but S3 */
} aws_sigv4_req;

typedef struct aws_sigv4_key {
	const char *access_key;
	const char *secret_key;
	const char *region;    /* the real region, also behind an endpoint
	                          override */
	const char *service;   /* "ec2" */
	const char *amz_date;  /* "YYYYMMDDTHHMMSSZ" (the X-Amz-Date value) */
} aws_sigv4_key;

typedef struct aws_sigv4_out {
	char *canonical_request; /* malloc'd */
	char *string_to_sign;    /* malloc'd */
	char *signed_headers;    /* malloc'd, "host;x-amz-date" */
	char *authorization;     /* malloc'd, the Authorization value */
	char signature[65];      /* lower-case hex */
} aws_sigv4_out;

/* Fills out (release with aws_sigv4_out_free).  Returns 0, or -1 with a
 * reason in err (bad date, a header name with invalid characters, ...).
 * The secret never leaves this function except as the HMAC result. */
int aws_sigv4_sign(const aws_sigv4_req *req, const aws_sigv4_key *key,
                   aws_sigv4_out *out, char *err, size_t errcap);
void aws_sigv4_out_free(aws_sigv4_out *out);

/* Lower-case hex SHA-256 of n bytes (out: 65 bytes). */
void aws_sha256_hex(const void *data, size_t n, char out[65]);

#endif
