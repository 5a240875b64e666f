/* gcp_driver.c -- the GCP driver's descriptor, init/fini and the catalog
 * (list_offers).  gb_driver_entry lives in gcp_entry.c so that test
 * programs linking every driver archive pull in only the driver they
 * use. */
#include <stdlib.h>
#include <string.h>

#include "drvc_catalog.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_util.h"
#include "gcp.h"

static int gcp_init(const gb_host *host, void **out, gb_error *err)
{
	gcp_ctx *c;
	if (drvc_host_ok(host, "gcp", err) != 0)
		return -1;
	c = drvc_xcalloc(1, sizeof(*c));
	c->host = host;
	drvc_token_init(&c->tok);
	if (drvc_cache_init(&c->zones, GCP_ZONE_CACHE) != 0)
		abort();
	if (gcp_config_load(c, err) != 0) {
		gcp_config_free(c);
		drvc_token_fini(&c->tok);
		drvc_cache_free(&c->zones);
		free(c);
		return -1;
	}
	if (c->auth_problem && host->log)
		host->log(host->ctx, GB_LOG_INFO, "gcp: %s (offers still work)",
		          c->auth_problem);
	*out = c;
	return 0;
}

static void gcp_fini(void *ctx)
{
	gcp_ctx *c = ctx;
	if (!c)
		return;
	gcp_config_free(c);
	drvc_cache_free(&c->zones);
	drvc_token_fini(&c->tok);
	free(c);
}

static int gcp_list_offers(void *ctx, gb_offer_cb emit, void *ud,
                           gb_error *err)
{
	gcp_ctx *c = ctx;
	return drvc_catalog_list(c->host, "gcp", emit, ud, err);
}

/* Compute Engine's default rate quotas, 1,500 per minute for each of
 * mutations, reads, lists and operation reads, as buckets of 1500
 * refilled 25 per second.  rate.gce-mutate etc. override them. */
static const char *const gcp_default_rates[] = {
	"gce-mutate", "1500/25",
	"gce-read", "1500/25",
	"gce-list", "1500/25",
	"gce-ops", "1500/25",
	NULL, NULL,
};

/* Every option the driver reads (see drivers/gcp/README.md). */
static const char *const gcp_options[] = {
	"endpoint", "billing_endpoint", "project", "network", "subnetwork",
	"image.*", "disk_type", "disk_gb", "public_ip", "create_timeout_s",
	"poll_interval_ms", "credentials.key_file",
	"credentials.service_account_json", "catalog",
	NULL,
};

/* The host's "credentials" verb (driver.h): the key's source, or where
 * it was looked for. */
static int gcp_command(void *ctx, const char *verb, int argc,
                       const char *const *argv,
                       void (*out)(void *ud, const char *json), void *ud,
                       gb_error *err)
{
	const gcp_ctx *c = ctx;
	char *src = c->auth_problem
	                    ? NULL
	                    : drvc_xasprintf("service-account key %s",
	                                     c->key_where);
	int rc = drvc_credentials_command("gcp", verb, argc, src,
	                                  c->auth_looked, out, ud, err);
	(void)argv;
	free(src);
	return rc;
}

const gb_driver gcp_driver_desc = {
	GB_DRIVER_V1,
	.name = "gcp",
	.version = "1.0.0",
	.description = "Google Compute Engine: instances.bulkInsert with "
	               "requestId, Spot provisioning, service-account JWT "
	               "auth, Billing Catalog",
	/* one bulkInsert per create, minCount = count: GCE checks capacity
	 * and quota for all before it makes any (gcp_create.c) */
	.caps = GB_DRV_CAP_SPOT | GB_DRV_CAP_BATCH_CREATE |
	        GB_DRV_CAP_ATOMIC_CREATE | GB_DRV_CAP_PRICE_REFRESH |
	        GB_DRV_CAP_ZONES | GB_DRV_CAP_DESCRIBE_ALL_REGIONS,
	.init = gcp_init,
	.fini = gcp_fini,
	.list_offers = gcp_list_offers,
	.create = gcp_create,
	.describe = gcp_describe,
	.terminate = gcp_terminate,
	.refresh_prices = gcp_refresh_prices,
	.quota = NULL,
	.command = gcp_command, /* "credentials" */
	.default_rates = gcp_default_rates,
	.options = gcp_options,
	/* Compute Engine: per-second billing after a 1-minute minimum
	 * (https://cloud.google.com/compute/vm-instance-pricing) */
	.billing_minimum_s = 60,
};
