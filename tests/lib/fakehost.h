/*
 * fakehost.h -- a host table for driver unit tests: HTTP answers come from
 * a queue (or a handler), every request is recorded with the headers the
 * driver's sign callback produced, options/secrets are set by the test,
 * log lines are captured.  Retries follow the real host's rule (classify
 * says THROTTLED/TRANSIENT -> try again, up to max_attempts, default 3)
 * without sleeping.
 */
#ifndef FAKEHOST_H
#define FAKEHOST_H

#include <stddef.h>

#include "gpubroker/driver.h"

typedef struct fakehost fakehost;

typedef struct fakehost_req {
	char *method;
	char *url;
	char **headers;   /* request headers followed by signed headers */
	size_t nheaders;
	char *body;
	size_t body_len;
	char *rate_class;
} fakehost_req;

/* Handler alternative to the queue: fill status/body/headers. */
typedef void (*fakehost_handler)(void *ud, const fakehost_req *req,
                                 long *status, char **body,
                                 char ***headers, size_t *nheaders);

fakehost *fakehost_new(void);
void fakehost_free(fakehost *fh);
const gb_host *fakehost_host(fakehost *fh);

void fakehost_option(fakehost *fh, const char *key, const char *value);
/* Sets option key=value and initialises driver d on this host, which
 * must refuse: INVALID, code BadOption, a message containing needle.
 * NULL when it did; otherwise what happened instead (caller frees). */
char *fakehost_init_refusal(fakehost *fh, const gb_driver *d,
                            const char *key, const char *value,
                            const char *needle);
/* source like "env:AWS_SECRET_ACCESS_KEY" -> value */
void fakehost_secret(fakehost *fh, const char *source, const char *value);
/* Queue one answer.  headers: NULL-terminated "Name: value" list or NULL.
 * status 0 simulates a network failure (TRANSIENT). */
void fakehost_push(fakehost *fh, long status, const char *body,
                   const char *const *headers);
void fakehost_set_handler(fakehost *fh, fakehost_handler h, void *ud);
/* Wall clock the driver sees (ms); default 1700000000000. */
void fakehost_set_now(fakehost *fh, int64_t now_ms);

size_t fakehost_nrequests(const fakehost *fh);
const fakehost_req *fakehost_request(const fakehost *fh, size_t i);
/* How many requests so far had this method and a URL containing sub. */
size_t fakehost_count(const fakehost *fh, const char *method,
                      const char *sub);
/* Value of header `name` (case-insensitive) in request i, or NULL. */
const char *fakehost_req_header(const fakehost_req *r, const char *name);
/* Everything logged so far (one line each). Borrowed. */
const char *fakehost_logs(const fakehost *fh);
/* Remaining queued answers. */
size_t fakehost_pending(const fakehost *fh);

#endif
