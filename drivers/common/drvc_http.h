/*
 * drvc_http.h -- helpers around the host's HTTP exchange shared by the
 * cloud drivers: header lookup, Retry-After, bounded and typed JSON body
 * parsing, same-origin checks before sending credentials to a URL the
 * server handed us, scrubbing secrets out of provider text, and the
 * common shape of the gb_error a driver's classifier makes of a failed
 * answer.
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Thread-safety: reentrant (no shared state).  Ownership: as each
 * function says; responses stay the host's (host->http_free).
 */
#ifndef DRVC_HTTP_H
#define DRVC_HTTP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "gpubroker/driver.h"

/* The largest body any driver parser accepts (a list page). */
#define DRVC_MAX_BODY ((size_t)32 << 20)
/* Cap on server-suggested delays. */
#define DRVC_MAX_RETRY_AFTER_MS ((int64_t)3600 * 1000)

/* Value of the first header `name` (case-insensitive) in resp, copied
 * into buf with surrounding blanks/CR removed.  Returns its length, or
 * -1 when absent (buf then ""). */
int drvc_header(const gb_http_resp *r, const char *name, char *buf,
                size_t cap);

/* Server-suggested delay in ms from Retry-After (delta-seconds or
 * HTTP-date), retry-after-ms or x-ms-retry-after-ms; 0 when none or
 * unparsable; capped at DRVC_MAX_RETRY_AFTER_MS. */
int64_t drvc_retry_after_ms(const gb_http_resp *r, int64_t now_ms);

/* Parse a response body as a JSON object.  Refuses (err filled, NULL
 * returned) a body larger than max, a Content-Type that is present and not
 * JSON (an HTML error page from a proxy, say), malformed or truncated JSON,
 * and anything but an object.  `what` names the request in messages
 * ("Azure token response").  Class INVALID, except TRANSIENT for an empty
 * body.  Caller json_decref()s the result. */
json_t *drvc_json_body(const gb_http_resp *r, size_t max, const char *what,
                       gb_error *err);
/* Only the Content-Type check of drvc_json_body: 0 when absent or JSON,
 * else -1 with err. */
int drvc_json_ctype_ok(const gb_http_resp *r, const char *what,
                       gb_error *err);
/* The same for a plain buffer (no content type). */
json_t *drvc_json_buf(const char *body, size_t len, size_t max,
                      const char *what, gb_error *err);

/* The checks after a JSON API GET of one resource, where rc is what the
 * exchange returned; resp is freed here (h->http_free) whatever the
 * result.  Returns 1 with *root (caller json_decref()s) when rc is 0 and
 * drvc_json_body accepts the body (at most max bytes; `what` names the
 * request); 0 when the exchange failed with NOT_FOUND (err keeps that
 * error: "no such resource"); -1 with err otherwise (*root NULL). */
int drvc_json_answer(const gb_host *h, int rc, gb_http_resp *resp,
                     size_t max, const char *what, json_t **root,
                     gb_error *err);

/* For a DELETE, where "already gone" is success: rc, except that a
 * failure with NOT_FOUND becomes 0 with err cleared. */
int drvc_gone_ok(int rc, gb_error *err);

/* The body of an error answer as a JSON object, for a classifier to read
 * the provider's code and message from: NULL (and no error: an error
 * answer may be anything) when the body is empty, larger than max, not
 * JSON or not an object.  Caller json_decref()s the result. */
json_t *drvc_json_error_body(const gb_http_resp *r, size_t max);

/* The class a bare HTTP status implies, for a classifier whose provider
 * codes said nothing more specific: 0 (no answer) and 5xx TRANSIENT, 429
 * THROTTLED, 401/403 AUTH, 404 NOT_FOUND, 409 CONFLICT, anything else
 * INVALID.  Pure. */
gb_err_class drvc_status_class(long status);

/* Fills err for the failed answer r: class cls, r's HTTP status, code
 * `code` (NULL: ""), message "<prefix>: HTTP <status>[ <shown>][: <msg>]"
 * (prefix is fmt's output; shown and msg are left out when NULL or
 * empty; truncated to fit), and for THROTTLED and TRANSIENT the
 * server-suggested delay (drvc_retry_after_ms at h's wall clock), else 0.
 * Nothing is scrubbed: callers holding secrets drvc_scrub afterwards. */
void drvc_http_fail(gb_error *err, const gb_host *h, const gb_http_resp *r,
                    gb_err_class cls, const char *code, const char *shown,
                    const char *msg, const char *fmt, ...) GB_PRINTF(8, 9);

/* 1 when a and b are absolute http(s) URLs with the same scheme, host and
 * port (so a bearer token meant for a may be sent to b). */
int drvc_same_origin(const char *a, const char *b);

/* Copy at most maxlen bytes of untrusted provider text into dst (cap),
 * replacing control characters and non-ASCII bytes with '?' so a message
 * stays one printable line. */
void drvc_clean_text(char *dst, size_t cap, const char *src, size_t maxlen);

/* Replace every occurrence of secret (when non-empty) in the
 * NUL-terminated buffer s with "[redacted]", truncating to cap. */
void drvc_scrub(char *s, size_t cap, const char *secret);

#endif
