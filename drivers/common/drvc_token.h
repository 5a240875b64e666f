/*
 * drvc_token.h -- an OAuth access-token cache: one token per driver
 * context, reused until `margin` seconds
 * before it expires, refreshed by one thread at a time under a mutex
 * (others wait and then reuse the fresh token), and invalidated after the
 * server says it is expired.  Every token obtained is registered with
 * host->redact.  Also the classifier of a token endpoint's answer.
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Thread-safety: drvc_token_get, _invalidate and _fetches may be called
 * from any number of threads on one drvc_token (init and fini once, in
 * the driver's init and fini).  Ownership: tokens handed out are malloc'd
 * copies the caller wipes with drvc_free_secret.  Do not read the struct
 * fields directly: they are guarded by mu.
 */
#ifndef DRVC_TOKEN_H
#define DRVC_TOKEN_H

#include <pthread.h>
#include <stdint.h>

#include "gpubroker/driver.h"

typedef struct drvc_token {
	pthread_mutex_t mu;
	char *value;        /* current token, NULL when none */
	int64_t expires_ms; /* host wall clock when it expires */
	int64_t refresh_ms; /* host wall clock after which we fetch anew */
	unsigned fetches;   /* tokens obtained so far (tests, metrics) */
} drvc_token;

/* Obtain a new token.  On success return 0 with *token (malloc'd; the
 * cache takes it) and *expires_in_s (<= 0 when the server gave none).  On
 * failure return -1 with err filled. */
typedef int (*drvc_token_fetch_fn)(void *ud, char **token,
                                   int64_t *expires_in_s, gb_error *err);

void drvc_token_init(drvc_token *t);
/* Wipes and frees the token. */
void drvc_token_fini(drvc_token *t);

/* A valid token into *out (malloc'd copy; free with drvc_free_secret).
 * Fetches one when there is none or it is within margin_s of expiry (the
 * margin shrinks to half the lifetime for short-lived tokens).  Returns 0,
 * or -1 with err from fetch. */
int drvc_token_get(drvc_token *t, const gb_host *host, int64_t margin_s,
                   drvc_token_fetch_fn fetch, void *ud, char **out,
                   gb_error *err);

/* Forget the cached token if it is still `used` (another thread may have
 * replaced it already). */
void drvc_token_invalidate(drvc_token *t, const char *used);

/* Number of tokens fetched so far. */
unsigned drvc_token_fetches(drvc_token *t);

/* Parses an OAuth 2.0 token response (RFC 6749 5.1: access_token,
 * token_type Bearer when given, expires_in) of at most max bytes; who
 * names it in errors ("Azure token response").  Returns 0 with *token
 * (malloc'd; free with drvc_free_secret) and *expires_in_s (0 when
 * absent), or -1 with err, which never quotes the body (pure; fuzzed). */
int drvc_parse_token_response(const char *body, size_t len, size_t max,
                              const char *who, char **token,
                              int64_t *expires_in_s, gb_error *err);

/* Classifies the token endpoint's answer r (RFC 6749 5.2 error body):
 * GB_ERR_NONE for 2xx; else 429 THROTTLED, 5xx TRANSIENT, 400/401/403
 * AUTH, anything else INVALID, with err filled by drvc_http_fail: code
 * from the body's "error" (TokenRequestFailed when none), message
 * "<prefix>: HTTP <status>[ <error>][: <error_description>]" (prefix is
 * fmt's output; the description at most desc_max bytes), every
 * occurrence of secret (NULL: none) replaced by [redacted]. */
gb_err_class drvc_oauth_classify(const gb_host *h, const gb_http_resp *r,
                                 size_t desc_max, const char *secret,
                                 gb_error *err, const char *fmt, ...)
	GB_PRINTF(6, 7);

#endif
