/*
 * http.h -- the host's HTTP transport, handed to drivers through the host
 * table.  One gb_http_client per driver: libcurl easy handles pooled for
 * connection reuse, per-rate-class token buckets, retries with exponential
 * backoff and full jitter that honour Retry-After, TLS verification always
 * on, proxy variables honoured (libcurl's http_proxy/https_proxy/no_proxy),
 * metrics, and redaction of secrets in every log line.  Thread-safe.
 */
#ifndef GB_HTTP_H
#define GB_HTTP_H

#include <stdint.h>

#include "url.h"
#include "util.h"

typedef struct gb_http_client gb_http_client;

typedef struct gb_http_opts {
	const char *name;        /* driver name, for logs and metrics */
	int max_attempts;        /* default 5 */
	int64_t backoff_base_ms; /* default 200 */
	int64_t backoff_cap_ms;  /* default 20000 */
	unsigned timeout_ms;     /* per attempt; default 60000 */
	unsigned connect_timeout_ms; /* default 10000 */
	int max_in_flight;       /* concurrent requests; default 64 */
	const char *ca_file;     /* NULL = system default */
	const char *ca_path;
	size_t max_body;         /* largest answer accepted; default 32 MiB */
	/* Rate limits: "class=capacity/refill_per_s" entries, e.g.
	 * "RunInstances=5/2".  Classes not listed are unlimited unless
	 * "default=..." is given. */
	const gb_kvs *rates;
	/* Plain http:// to hosts other than loopback (the driver option
	 * allow_insecure_http, or GPUBROKER_ALLOW_INSECURE_HTTP=1): without
	 * it such a request is refused before it is signed (credentials
	 * would go out in clear); with it, a warning is logged once. */
	int allow_insecure_http;
} gb_http_opts;

/* Ownership: caller frees with gb_http_client_free. */
gb_http_client *gb_http_client_new(const gb_http_opts *opts);
void gb_http_client_free(gb_http_client *c);

/* The host table's http(): see gpubroker/driver.h for the contract. */
int gb_http_do(gb_http_client *c, const gb_http_req *req, gb_http_resp *resp,
               gb_error *err);
void gb_http_resp_free(gb_http_resp *resp);

/* gb_http_url_check, gb_http_insecure_env: url.h (base/). */

/* Parses "Retry-After" (delta seconds or an HTTP date) from a response;
 * returns milliseconds, or -1 when absent/unparseable. */
int64_t gb_http_retry_after_ms(const gb_http_resp *resp);
/* Borrowed value of a response header (case-insensitive), or NULL. */
const char *gb_http_header(const gb_http_resp *resp, const char *name);

#define GB_HTTP_LAT_BUCKETS 12
/* Upper bounds (seconds) of the latency histogram buckets (+Inf last). */
extern const double gb_http_lat_bounds[GB_HTTP_LAT_BUCKETS];

typedef struct gb_http_metrics {
	uint64_t requests;        /* attempts sent */
	uint64_t calls;           /* gb_http_do calls */
	uint64_t retries;
	uint64_t errors[GB_ERR_INTERNAL + 1]; /* final outcome by class */
	uint64_t lat_count[GB_HTTP_LAT_BUCKETS]; /* cumulative per bucket */
	double lat_sum_s;
	uint64_t rate_waits;      /* times a bucket made us wait */
	double rate_wait_s;
} gb_http_metrics;

void gb_http_metrics_get(gb_http_client *c, gb_http_metrics *out);
/* "CAP/REFILL" (a bucket of CAP requests refilled REFILL per second, both
 * > 0) -> 0 with the two numbers, or -1. */
int gb_http_parse_rate(const char *spec, double *cap, double *refill);
/* The bucket of a rate class: 0 with its capacity and refill per second,
 * or -1 when the class has none (unlimited, or the default bucket). */
int gb_http_get_rate(gb_http_client *c, const char *cls, double *cap,
                     double *refill);
/* Change/set one rate class at run time ("5/2" syntax); 0 or -1. */
int gb_http_set_rate(gb_http_client *c, const char *cls, const char *spec);

#endif
