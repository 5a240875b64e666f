/* azure_driver.c -- the Azure driver's descriptor, init/fini and the
 * catalog (list_offers).  gb_driver_entry lives in azure_entry.c so that
 * test programs linking every driver archive pull in only the driver
 * they use. */
#include <stdlib.h>
#include <string.h>

#include "azure.h"
#include "drvc_catalog.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_util.h"

static int azure_init(const gb_host *host, void **out, gb_error *err)
{
	azure_ctx *c;
	if (drvc_host_ok(host, "azure", err) != 0)
		return -1;
	c = drvc_xcalloc(1, sizeof(*c));
	c->host = host;
	drvc_token_init(&c->tok);
	if (drvc_cache_init(&c->addrs, AZURE_ADDR_CACHE) != 0)
		abort();
	if (azure_config_load(c, err) != 0) {
		azure_config_free(c);
		drvc_token_fini(&c->tok);
		drvc_cache_free(&c->addrs);
		free(c);
		return -1;
	}
	if (c->auth_problem && host->log)
		host->log(host->ctx, GB_LOG_INFO, "azure: %s (offers still work)",
		          c->auth_problem);
	*out = c;
	return 0;
}

static void azure_fini(void *ctx)
{
	azure_ctx *c = ctx;
	if (!c)
		return;
	azure_config_free(c);
	drvc_cache_free(&c->addrs);
	drvc_token_fini(&c->tok);
	free(c);
}

static int azure_list_offers(void *ctx, gb_offer_cb emit, void *ud,
                             gb_error *err)
{
	azure_ctx *c = ctx;
	return drvc_catalog_list(c->host, "azure", emit, ud, err);
}

/* ARM's documented per-principal buckets (since 2024; capacity/refill
 * per second): reads 250/25, writes 200/10, deletes 200/10.
 * rate.arm-read etc. in the broker config override them. */
static const char *const azure_default_rates[] = {
	"arm-read", "250/25",
	"arm-write", "200/10",
	"arm-delete", "200/10",
	NULL, NULL,
};

/* Every option the driver reads (see drivers/azure/README.md). */
static const char *const azure_options[] = {
	"arm_endpoint", "authority_host", "prices_endpoint", "tenant_id",
	"client_id", "credentials.client_secret", "subscription_id",
	"resource_group", "subnet_id.*", "image.*", "security_type",
	"os_disk_type", "os_disk_gb", "public_ip", "create_timeout_s",
	"poll_interval_ms", "catalog",
	NULL,
};

/* The host's "credentials" verb (driver.h): the service principal, or
 * where each missing part was looked for. */
static int azure_command(void *ctx, const char *verb, int argc,
                         const char *const *argv,
                         void (*out)(void *ud, const char *json), void *ud,
                         gb_error *err)
{
	const azure_ctx *c = ctx;
	char *src;
	int rc;
	if (verb && strcmp(verb, "requirements") == 0 && argc == 0)
		/* the host's verb (driver.h): azure_vm.c refuses a create
		 * without a key (SshKeyRequired) */
		return drvc_command_answer(
			json_pack("{s:s}", "ssh_key",
			          "Azure Linux VMs are created with password "
			          "login disabled"),
			out, ud, err);
	src = c->auth_problem
	                    ? NULL
	                    : drvc_xasprintf("service principal %s of tenant "
	                                     "%s, secret from %s",
	                                     c->client_id, c->tenant,
	                                     c->secret_source);
	rc = drvc_credentials_command("azure", verb, argc, src,
	                                  c->auth_looked, out, ud, err);
	(void)argv;
	free(src);
	return rc;
}

const gb_driver azure_driver_desc = {
	GB_DRIVER_V1,
	.name = "azure",
	.version = "1.0.0",
	.description = "Microsoft Azure (ARM Compute): VMs by PUT with Spot "
	               "priority, service-principal auth, Retail Prices",
	.caps = GB_DRV_CAP_SPOT | GB_DRV_CAP_PRICE_REFRESH | GB_DRV_CAP_ZONES |
	        GB_DRV_CAP_DESCRIBE_ALL_REGIONS,
	.init = azure_init,
	.fini = azure_fini,
	.list_offers = azure_list_offers,
	.create = azure_create,
	.describe = azure_describe,
	.terminate = azure_terminate,
	.refresh_prices = azure_refresh_prices,
	.quota = NULL,
	.command = azure_command, /* "credentials" */
	.default_rates = azure_default_rates,
	.options = azure_options,
	/* ARM VMs: Microsoft documents billing by the minute and no
	 * minimum (tests/cloudsim/README.md, "/_sim/bill", has the source) */
	.billing_minimum_s = 0,
};
