/* azure_config.c -- the Azure driver's settings: broker-config options
 * first, then the environment, then defaults (see README.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure.h"
#include "drvc_mem.h"
#include "drvc_opts.h"
#include "drvc_util.h"

static void strip_slash(char *s)
{
	size_t n = s ? strlen(s) : 0;
	while (n > 0 && s[n - 1] == '/')
		s[--n] = '\0';
}

int azure_config_load(azure_ctx *c, gb_error *err)
{
	const gb_host *h = c->host;
	char probe[4096];
	int64_t disk_gb;
	char miss[512] = "", looked[512] = "";

	c->arm = drvc_opt_env(h, "arm_endpoint", "AZURE_ARM_ENDPOINT",
	                 AZURE_DEFAULT_ARM);
	c->authority = drvc_opt_env(h, "authority_host", "AZURE_AUTHORITY_HOST",
	                       AZURE_DEFAULT_AUTHORITY);
	c->prices = drvc_opt_env(h, "prices_endpoint", "AZURE_PRICES_ENDPOINT",
	                    AZURE_DEFAULT_PRICES);
	strip_slash(c->arm);
	strip_slash(c->authority);
	c->tenant = drvc_opt_env(h, "tenant_id", "AZURE_TENANT_ID", NULL);
	c->client_id = drvc_opt_env(h, "client_id", "AZURE_CLIENT_ID", NULL);
	c->secret_source = drvc_opt_env(h, "credentials.client_secret", NULL,
	                           AZURE_DEFAULT_SECRET_SOURCE);
	c->subscription = drvc_opt_env(h, "subscription_id",
	                          "AZURE_SUBSCRIPTION_ID", NULL);
	c->rg = drvc_opt_env(h, "resource_group", "AZURE_RESOURCE_GROUP", NULL);
	c->subnet = drvc_opt_env(h, "subnet_id", "AZURE_SUBNET_ID", NULL);
	c->image = drvc_opt_env(h, "image", NULL, NULL);
	c->security_type = drvc_opt_env(h, "security_type", NULL, NULL);
	c->os_disk_type = drvc_opt_env(h, "os_disk_type", NULL, "StandardSSD_LRS");
	/* numbers and flags: a bad value is an error, not the default */
	if (drvc_opt_int(h, "os_disk_gb", 0, 1, 4095, &disk_gb, err) != 0)
		return -1;
	c->os_disk_gb = (int)disk_gb;
	if (drvc_opt_bool(h, "public_ip", 0, &c->public_ip, err) != 0 ||
	    drvc_opt_int(h, "create_timeout_s", 900, 1, 86400,
	                 &c->create_timeout_ms, err) != 0 ||
	    drvc_opt_int(h, "poll_interval_ms", 5000, 1, 600000,
	                 &c->poll_interval_ms, err) != 0)
		return -1;
	c->create_timeout_ms *= 1000;

	/* Credentials: all three must be there; say which are not, and
	 * where each was looked for. */
	if (!c->tenant) {
		strcat(miss, "tenant id (option tenant_id, env AZURE_TENANT_ID); ");
		strcat(looked, "option tenant_id and env AZURE_TENANT_ID (no "
		       "tenant id); ");
	}
	if (!c->client_id) {
		strcat(miss, "client id (option client_id, env AZURE_CLIENT_ID); ");
		strcat(looked, "option client_id and env AZURE_CLIENT_ID (no "
		       "client id); ");
	}
	if (h->secret(h->ctx, c->secret_source, probe, sizeof(probe)) <= 0) {
		int dflt = strcmp(c->secret_source,
		                  AZURE_DEFAULT_SECRET_SOURCE) == 0;
		size_t n = strlen(miss);
		snprintf(miss + n, sizeof(miss) - n,
		         "client secret (source %.100s%s); ", c->secret_source,
		         dflt ? ", set option credentials.client_secret to "
		                "use another source"
		              : ", option credentials.client_secret");
		n = strlen(looked);
		snprintf(looked + n, sizeof(looked) - n,
		         "%.100s, %s credentials.client_secret (no client "
		         "secret); ", c->secret_source,
		         dflt ? "the default of option" : "option");
	}
	memset(probe, 0, sizeof(probe));
	if (miss[0]) {
		miss[strlen(miss) - 2] = '\0';
		looked[strlen(looked) - 2] = '\0';
		c->auth_problem = drvc_xasprintf(
			"Azure credentials missing: %s. The driver uses a service "
			"principal (client-credentials flow); see the Azure section "
			"of drivers/azure/README.md", miss);
		c->auth_looked = drvc_xstrdup(looked);
	}
	return 0;
}

void azure_config_free(azure_ctx *c)
{
	free(c->arm);
	free(c->authority);
	free(c->prices);
	free(c->tenant);
	free(c->client_id);
	free(c->secret_source);
	free(c->subscription);
	free(c->rg);
	free(c->subnet);
	free(c->image);
	free(c->security_type);
	free(c->os_disk_type);
	free(c->auth_problem);
	free(c->auth_looked);
}

int azure_require(azure_ctx *c, int need_rg, gb_error *err)
{
	if (drvc_creds_ok(c->auth_problem, err) != 0)
		return -1;
	if (!c->subscription) {
		drvc_err(err, GB_ERR_INVALID, 0, "SubscriptionMissing",
		         "Azure subscription not set: set option subscription_id "
		         "or env AZURE_SUBSCRIPTION_ID");
		return -1;
	}
	if (need_rg && !c->rg) {
		drvc_err(err, GB_ERR_INVALID, 0, "ResourceGroupMissing",
		         "Azure resource group not set: set option "
		         "resource_group or env AZURE_RESOURCE_GROUP (the group "
		         "must exist; the broker creates its VMs in it)");
		return -1;
	}
	return 0;
}

const char *azure_subnet_for(azure_ctx *c, const char *region)
{
	const char *v = drvc_opt_region(c->host, "subnet_id", region);
	return v ? v : c->subnet;
}

const char *azure_image_for(azure_ctx *c, const char *region)
{
	const char *v = drvc_opt_region(c->host, "image", region);
	if (v)
		return v;
	return c->image ? c->image : AZURE_DEFAULT_IMAGE;
}
