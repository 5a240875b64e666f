/* lambda_sites.c -- the command method.  "sites": Lambda's regions
 * with the facts data-locality, compliance and carbon rules need
 * (driver.h, gb_driver.command), read from the shipped data/regions.json
 * (sources in data/SOURCES.md); "credentials": where the API key came
 * from, or was looked for.  The host sends both once at load. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_util.h"
#include "lambda.h"

/* <data_dir>/drivers/lambda/data/regions.json, or NULL without data_dir. */
static const char *regions_path(const gb_host *h, char *buf, size_t cap)
{
	const char *dd = h->option ? h->option(h->ctx, "data_dir") : NULL;
	if (!dd || !*dd)
		return NULL;
	snprintf(buf, cap, "%s/drivers/lambda/data/regions.json", dd);
	return buf;
}

static int sites(lambda_ctx *c, void (*out)(void *ud, const char *json),
                 void *ud, gb_error *err)
{
	char path[1024];
	json_error_t je;
	json_t *root, *regions;
	if (!regions_path(c->host, path, sizeof(path))) {
		drvc_err(err, GB_ERR_NOT_FOUND, 0, "NoRegionFacts",
		         "lambda: no data_dir option, so no regions.json");
		return -1;
	}
	if (!(root = json_load_file(path, JSON_REJECT_DUPLICATES, &je))) {
		drvc_err(err, GB_ERR_INVALID, 0, "BadRegionFacts",
		         "%s:%d:%d: %s (the regions of the lambda driver: "
		         "reinstall it)", path, je.line, je.column, je.text);
		return -1;
	}
	regions = json_object_get(root, "regions");
	if (!json_is_array(regions)) {
		drvc_err(err, GB_ERR_INVALID, 0, "BadRegionFacts",
		         "%s: \"regions\" must be an array of {name, display, "
		         "country, jurisdiction, lat, lon, tags, "
		         "carbon_g_per_kwh}", path);
		json_decref(root);
		return -1;
	}
	json_incref(regions);
	json_decref(root);
	return drvc_command_answer(regions, out, ud, err);
}

int lambda_command(void *ctx, const char *verb, int argc,
                   const char *const *argv,
                   void (*out)(void *ud, const char *json), void *ud,
                   gb_error *err)
{
	(void)argv;
	const lambda_ctx *c = ctx;
	if (verb && strcmp(verb, "sites") == 0 && argc == 0)
		return sites(ctx, out, ud, err);
	if (verb && strcmp(verb, "requirements") == 0 && argc == 0)
		/* the host's verb (driver.h): a launch names a registered key
		 * (lambda_create.c), the option's or the spec's first */
		return drvc_command_answer(
			c->ssh_key_name
				? json_object()
				: json_pack("{s:s}", "ssh_key",
				            "a Lambda launch names a registered "
				            "SSH key, and the driver option "
				            "ssh_key_name is not set"),
			out, ud, err);
	if (verb && strcmp(verb, "credentials") == 0 && argc == 0) {
		/* the host's verb (driver.h): where the key is, or was not */
		char *looked = c->key ? NULL
		                      : drvc_xasprintf("%s: %s", c->key_where,
		                                       "not set, empty or not "
		                                       "readable");
		int rc = drvc_credentials_answer(c->key ? c->key_where : NULL,
		                                 looked, out, ud, err);
		free(looked);
		return rc;
	}
	drvc_err(err, GB_ERR_INVALID, 0, "UnknownCommand",
	         "the lambda driver has no command \"%s\" (it answers: "
	         "sites, credentials, requirements)",
	         verb ? verb : "");
	return -1;
}
