/*
 * aws.h -- the AWS driver's context and its one HTTP path (internal).
 */
#ifndef AWS_H
#define AWS_H

#include "aws_creds.h"
#include "gpubroker/driver.h"

typedef struct aws_ctx {
	const gb_host *host;
	aws_creds creds;
	/* endpoint override (AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL, option
	 * "endpoint"), without a trailing '/'; NULL = the regional default */
	char *endpoint;
	char endpoint_src[40]; /* which of the three set it */
} aws_ctx;

/* The descriptor (aws_driver.c); gb_driver_entry (aws_entry.c) returns it. */
extern const gb_driver aws_driver;

/* Host option, NULL when unset or empty.  Borrowed until fini. */
const char *aws_opt(const aws_ctx *c, const char *key);
/* Option "<key>.<region>", else option "<key>". */
const char *aws_opt_region(const aws_ctx *c, const char *key,
                           const char *region);

/* Reads AWS_ENDPOINT_URL_EC2 / AWS_ENDPOINT_URL (unless
 * AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true) and option "endpoint" into c.
 * -1 with err (INVALID) when the value is not an http(s) URL. */
int aws_endpoint_init(aws_ctx *c, gb_error *err);
/* The URL to POST to for region ("<base>/") and the Host header value
 * curl will send for it (host[:port], default ports dropped).  -1 with err
 * when region is not a valid region name. */
int aws_endpoint_for(const aws_ctx *c, const char *region, char *url,
                     size_t urlcap, char *hostport, size_t hostcap,
                     gb_error *err);

/* One signed EC2 Query call: POST body (form) to region's endpoint with
 * rate class = action.  Returns 0 with resp filled (2xx), or -1 with err;
 * always release resp with host->http_free.  max_attempts 0 = host
 * default. */
int aws_call(aws_ctx *c, const char *region, const char *action,
             const char *body, int max_attempts, gb_http_resp *resp,
             gb_error *err);

/* Fills err with the AUTH error "no credentials" (what was tried). */
void aws_no_creds_error(const aws_ctx *c, const char *action, gb_error *err);

/* Checks a 2xx answer's Content-Type (must mention xml when present) and
 * size; -1 with err (INVALID) otherwise. */
int aws_check_answer(const aws_ctx *c, const char *action,
                     const gb_http_resp *resp, gb_error *err);

/* Driver methods (aws_describe.c, aws_prices.c). */
int aws_describe(void *ctx, const gb_describe_req *req, gb_instance_cb emit,
                 void *ud, gb_error *err);
int aws_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                  gb_error *err);
int aws_terminate_ids(aws_ctx *c, const char *region, const char *const *ids,
                      size_t n, gb_error *err);
int aws_refresh_prices(void *ctx, const char *region, gb_offer_cb emit,
                       void *ud, gb_error *err);

#endif
