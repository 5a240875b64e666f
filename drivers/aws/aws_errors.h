/*
 * aws_errors.h -- EC2 error answers: parsing <Response><Errors><Error>
 * <Code/><Message/></Error></Errors><RequestID/></Response> and mapping
 * the code (and HTTP status) to the broker's error classes.
 */
#ifndef AWS_ERRORS_H
#define AWS_ERRORS_H

#include <stddef.h>

#include "gpubroker/driver.h"

/* Class of an EC2 error code; `status` decides for unknown codes
 * (5xx TRANSIENT, 503 THROTTLED, 401/403 AUTH, other 4xx INVALID). */
gb_err_class aws_error_class(const char *code, long status);

typedef struct aws_ec2_error {
	char code[96];
	char message[512];
	char request_id[96];
} aws_ec2_error;

/* Parses an EC2 error document.  Returns 0 when it is one (code filled),
 * -1 when the body is not an EC2 error document. */
int aws_parse_error(const char *body, size_t len, aws_ec2_error *out);

/* Classifies a completed exchange of `action` against `endpoint` and fills
 * err (class, status, code, a secret-free message, Retry-After).  Returns
 * the class (GB_ERR_NONE for 2xx).  `scrub` lists values that must never
 * appear in a message (secret key, session token, the signature): any
 * occurrence in the server's text is replaced with "[redacted]". */
gb_err_class aws_classify_answer(const char *action, const char *region,
                                 const char *endpoint,
                                 const struct gb_http_resp *resp,
                                 const char *const *scrub, size_t nscrub,
                                 gb_error *err);

/* Value of header `name` in resp (case-insensitive), or NULL.  Borrowed
 * from resp. */
const char *aws_resp_header(const struct gb_http_resp *resp,
                            const char *name, size_t *len);

/* Replaces every occurrence of each scrub value in s (in place, NUL-
 * terminated, capacity cap) with "[redacted]" and control characters with
 * spaces. */
void aws_scrub(char *s, size_t cap, const char *const *scrub,
               size_t nscrub);

#endif
