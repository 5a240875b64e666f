/* lambda_driver.c -- the Lambda driver's descriptor, init/fini and the
 * catalog (list_offers).  gb_driver_entry lives in lambda_entry.c so that
 * test programs linking every driver archive pull in only the driver they
 * use.
 *
 * Settings (README.md): option api_key (a secret source, env:NAME or
 * file:PATH; default env:LAMBDA_API_KEY), option endpoint, else
 * LAMBDA_ENDPOINT_URL, else https://cloud.lambda.ai/api/v1.  A missing key
 * does not fail init (offers still work); every API call then fails with
 * AUTH and the reason. */
#include <stdlib.h>
#include <string.h>

#include "drvc_catalog.h"
#include "drvc_mem.h"
#include "drvc_opts.h"
#include "drvc_util.h"
#include "lambda.h"

static void ctx_free(lambda_ctx *c)
{
	drvc_cache_free(&c->keys);
	free(c->endpoint);
	drvc_free_secret(c->key);
	drvc_free_secret(c->auth_line);
	free(c->auth_problem);
	free(c->key_where);
	free(c->ssh_key_name);
	free(c->image_family);
	free(c->file_system);
	free(c);
}

static void load_key(lambda_ctx *c)
{
	const gb_host *h = c->host;
	const char *src = drvc_opt(h, "api_key");
	const char *optname = "api_key";
	const char *shown;
	if (!src && (src = drvc_opt(h, "credentials.api_key")) != NULL)
		optname = "credentials.api_key";
	shown = src ? src : LAMBDA_DEFAULT_KEY_SOURCE;
	char *buf = drvc_xcalloc(1, LAMBDA_KEY_MAX);
	int n = h->secret(h->ctx, shown, buf, LAMBDA_KEY_MAX);
	c->key_where = drvc_xasprintf("%s (%s%s)", shown, src ? "option " : "",
	                              src ? optname : "the default source");
	/* a key has no blanks: drop a trailing newline of a key file */
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
	                 buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		buf[--n] = '\0';
	if (n <= 0) {
		c->auth_problem = drvc_xasprintf(
			"Lambda API key missing: %s (%s%s) is %s; create a key at "
			"https://cloud.lambda.ai/api-keys and export "
			"LAMBDA_API_KEY, or set the driver option api_key to "
			"env:NAME or file:PATH", shown, src ? "option " : "",
			src ? optname : "the default source",
			n == 0 ? "empty" : "not set or not readable");
		drvc_free_secret(buf);
		return;
	}
	if (h->redact)
		h->redact(h->ctx, buf);
	c->key = buf;
	c->auth_line = drvc_xasprintf("Authorization: Bearer %s", buf);
	if (h->redact)
		h->redact(h->ctx, c->auth_line);
}

static int lambda_init(const gb_host *host, void **out, gb_error *err)
{
	lambda_ctx *c;
	size_t n;
	int64_t q;
	if (drvc_host_ok(host, "lambda", err) != 0)
		return -1;
	c = drvc_xcalloc(1, sizeof(*c));
	c->host = host;
	if (drvc_cache_init(&c->keys, 256) != 0)
		abort();
	c->endpoint = drvc_opt_env(host, "endpoint", "LAMBDA_ENDPOINT_URL",
	                           LAMBDA_DEFAULT_ENDPOINT);
	n = strlen(c->endpoint);
	while (n > 0 && c->endpoint[n - 1] == '/')
		c->endpoint[--n] = '\0';
	if (strncmp(c->endpoint, "https://", 8) != 0 &&
	    strncmp(c->endpoint, "http://", 7) != 0) {
		drvc_err(err, GB_ERR_INVALID, 0, "BadOption",
		         "lambda: endpoint '%.200s' is not an http(s) URL: set "
		         "the option endpoint or LAMBDA_ENDPOINT_URL to the API "
		         "base, e.g. %s", c->endpoint, LAMBDA_DEFAULT_ENDPOINT);
		ctx_free(c);
		return -1;
	}
	c->ssh_key_name = drvc_opt_env(host, "ssh_key_name", NULL, NULL);
	c->image_family = drvc_opt_env(host, "image_family", NULL, NULL);
	c->file_system = drvc_opt_env(host, "file_system", NULL, NULL);
	/* API.md, "Launch": quantity's maximum is not documented for the
	 * current API; 10 is what cloudsim and observed clients use */
	if (drvc_opt_int(host, "max_quantity", 10, 1, 100, &q, err) != 0) {
		ctx_free(c);
		return -1;
	}
	c->max_quantity = (unsigned)q;
	/* the host's transport timeout (it reads the option too; 60 s by
	 * default): how long a launch may still land after its answer
	 * timed out (lambda_create.c) */
	if (drvc_opt_int(host, "http_timeout_ms", 60000, 1, 3600000, &q,
	                 err) != 0) {
		ctx_free(c);
		return -1;
	}
	c->http_timeout_ms = q;
	/* tags on launch are in the current API but not in the v1.4.0
	 * OpenAPI document (API.md, "Other facts"): tags: false leaves them
	 * out, and describe then reads pool/broker/token from names */
	if (drvc_opt_bool(host, "tags", 1, &c->tags, err) != 0) {
		ctx_free(c);
		return -1;
	}
	load_key(c);
	if (c->auth_problem && host->log)
		host->log(host->ctx, GB_LOG_INFO, "lambda: %s (offers still work)",
		          c->auth_problem);
	*out = c;
	return 0;
}

static void lambda_fini(void *ctx)
{
	if (ctx)
		ctx_free(ctx);
}

int lambda_require(lambda_ctx *c, gb_error *err)
{
	return drvc_creds_ok(c->auth_problem, err);
}

static int lambda_list_offers(void *ctx, gb_offer_cb emit, void *ud,
                              gb_error *err)
{
	lambda_ctx *c = ctx;
	return drvc_catalog_list(c->host, "lambda", emit, ud, err);
}

/* Lambda's documented limits (API.md, "Rate limits"): "generally 1
 * request per second", launch "1 request every 10 seconds"; burst sizes
 * are not documented.  As buckets: 1 token refilled 1 per second; 1
 * refilled 0.1 per second (a launch takes a token from each).
 * rate.lambda-api and rate.lambda-launch override them. */
static const char *const lambda_default_rates[] = {
	LAMBDA_RATE_API, "1/1",
	LAMBDA_RATE_LAUNCH, "1/0.1",
	NULL, NULL,
};

/* Every option the driver reads (see drivers/lambda/README.md). */
static const char *const lambda_options[] = {
	"api_key", "credentials.api_key", "endpoint", "ssh_key_name",
	"image_family", "file_system", "max_quantity", "tags", "catalog",
	NULL,
};

const gb_driver lambda_driver_desc = {
	GB_DRIVER_V1,
	.name = "lambda",
	.version = "1.0.0",
	.description = "Lambda Cloud: on-demand GPU instances, launches "
	               "with quantity, recovery by instance name",
	/* one create launches all its instances (quantity); not atomic: a
	 * launch may make fewer than asked (API.md, "Launch"), which the
	 * driver then terminates.  GET /instances lists every region; one
	 * terminate request ends many. */
	.caps = GB_DRV_CAP_BATCH_CREATE | GB_DRV_CAP_PRICE_REFRESH |
	        GB_DRV_CAP_DESCRIBE_ALL_REGIONS | GB_DRV_CAP_BATCH_TERMINATE,
	.init = lambda_init,
	.fini = lambda_fini,
	.list_offers = lambda_list_offers,
	.create = lambda_create,
	.describe = lambda_describe,
	.terminate = lambda_terminate,
	.refresh_prices = lambda_refresh_prices,
	.quota = NULL,
	.command = lambda_command, /* "sites": region facts */
	.default_rates = lambda_default_rates,
	.options = lambda_options,
	/* "ODC prices instances by hourly usage and bills in one-minute
	 * increments" (https://docs.lambda.ai/public-cloud/billing): an
	 * instance is billed at least a minute */
	.billing_minimum_s = 60,
};
