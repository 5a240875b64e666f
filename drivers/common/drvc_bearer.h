/*
 * drvc_bearer.h -- one HTTP exchange through host->http with an OAuth
 * bearer token: the token is taken from a drvc_token cache (fetched when
 * needed) *before* host->http is called, and the sign callback only adds
 * "Authorization: Bearer <token>" to each attempt -- so no HTTP exchange
 * ever runs inside another one's sign callback (the host holds a transfer
 * slot while it signs).  A 401 that the driver's classifier recognises as
 * an expired or revoked token invalidates the cached token and the
 * exchange is repeated once with a fresh token.  Tokens never reach
 * err->message.
 *
 * Usage: fill a drvc_call on the stack, fill a gb_http_req (method, url,
 * headers, body, rate_class, ...; leave classify/sign NULL), call
 * drvc_call_http, then host->http_free(resp) whatever the result.  For
 * a JSON API (Azure ARM and Retail Prices, Google APIs) drvc_call_json
 * builds the request itself, and drvc_call_form for an OAuth token
 * endpoint.
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Thread-safety: a drvc_call is one caller's (fill one per exchange, on
 * the stack); the drvc_token it points to is shared and thread-safe, so
 * any number of threads may run calls with the same token cache.
 * Ownership: every string passed in is borrowed for the call; the
 * gb_http_resp filled is the host's, released with host->http_free.
 */
#ifndef DRVC_BEARER_H
#define DRVC_BEARER_H

#include "drvc_token.h"
#include "gpubroker/driver.h"

/* The driver's classifier: the class of a completed exchange (GB_ERR_NONE
 * for success), err filled otherwise.  Sets *auth_expired when the answer
 * says the bearer token is expired or invalid (a refresh may help). */
typedef gb_err_class (*drvc_classify_fn)(void *ud, const gb_http_resp *r,
                                         gb_error *err, int *auth_expired);

typedef struct drvc_call {
	const gb_host *host;
	drvc_token *tok;            /* NULL: no Authorization header */
	int64_t margin_s;           /* refresh this long before expiry */
	drvc_token_fetch_fn fetch;
	void *fetch_ud;
	drvc_classify_fn classify;
	void *classify_ud;
	/* private */
	char *token;
	char *auth_line;
	int expired_seen;
} drvc_call;

/* A drvc_call with these fields and the private ones cleared (tok NULL:
 * no token, fetch unused). */
drvc_call drvc_call_make(const gb_host *host, drvc_token *tok,
                         int64_t margin_s, drvc_token_fetch_fn fetch,
                         void *fetch_ud, drvc_classify_fn classify,
                         void *classify_ud);

/* Performs req (its classify/sign fields are overwritten).  Returns 0 on
 * success, -1 with err otherwise; resp is filled either way. */
int drvc_call_http(drvc_call *c, gb_http_req *req, gb_http_resp *resp,
                   gb_error *err);

/* One JSON API exchange through drvc_call_http: headers "Accept:
 * application/json", then "Content-Type: application/json" when body is
 * non-NULL (sent as its strlen bytes), then extra when non-NULL (one
 * whole header line, e.g. "If-None-Match: *"); nothing else.  All strings
 * are borrowed for the call.  Returns as drvc_call_http; the caller
 * host->http_free()s resp whatever the result. */
int drvc_call_json(drvc_call *c, const char *method, const char *url,
                   const char *body, const char *extra,
                   const char *rate_class, gb_http_resp *resp,
                   gb_error *err);

/* POST url with the form body (application/x-www-form-urlencoded, sent
 * as its strlen bytes) through drvc_call_http: headers "Content-Type:
 * application/x-www-form-urlencoded" and "Accept: application/json", for
 * an OAuth token endpoint (c->tok is normally NULL).  Returns as
 * drvc_call_http; the caller host->http_free()s resp whatever the
 * result. */
int drvc_call_form(drvc_call *c, const char *url, const char *body,
                   const char *rate_class, gb_http_resp *resp,
                   gb_error *err);

#endif
