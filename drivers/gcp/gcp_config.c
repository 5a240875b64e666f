/* gcp_config.c -- the GCP driver's settings: broker-config options first,
 * then the environment, then defaults (see README.md).  The
 * service-account key is located and loaded here; a missing or broken key
 * does not fail init (offers still work) but every mutation then fails
 * with AUTH and the reason. */
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drvc_mem.h"
#include "drvc_opts.h"
#include "drvc_util.h"
#include "gcp.h"

#define KEY_MAX (64 * 1024)

/* Reads the key through host->secret: "file:/path" (the file) or
 * "env:VAR" (JSON text, or a path to the file).  Returns the text
 * (caller frees with drvc_free_secret) or NULL with *where set. */
static char *read_key(gcp_ctx *c, char **where)
{
	const gb_host *h = c->host;
	const char *src = drvc_opt(h, "credentials.key_file");
	const char *optname = "credentials.key_file";
	char *buf = drvc_xmalloc(KEY_MAX), *path = NULL;
	int n;

	if (!src) {
		src = drvc_opt(h, "credentials.service_account_json");
		optname = "credentials.service_account_json";
	}
	if (src) {
		*where = drvc_xasprintf("%s (option %s)", src, optname);
		if (strncmp(src, "file:", 5) != 0 && strncmp(src, "env:", 4) != 0)
			path = drvc_xasprintf("file:%s", src);
		n = h->secret(h->ctx, path ? path : src, buf, KEY_MAX);
		free(path);
		path = NULL;
		if (n > 0 && strncmp(src, "env:", 4) == 0 && buf[0] != '{') {
			/* the variable names a file */
			path = drvc_xasprintf("file:%s", buf);
			n = h->secret(h->ctx, path, buf, KEY_MAX);
			free(path);
		}
	} else {
		const char *env = getenv("GOOGLE_APPLICATION_CREDENTIALS");
		if (!env || !*env) {
			*where = NULL;
			free(buf);
			return NULL;
		}
		*where = drvc_xasprintf("%s (GOOGLE_APPLICATION_CREDENTIALS)", env);
		path = drvc_xasprintf("file:%s", env);
		n = h->secret(h->ctx, path, buf, KEY_MAX);
		free(path);
	}
	if (n <= 0) {
		OPENSSL_cleanse(buf, KEY_MAX);
		free(buf);
		return NULL;
	}
	return buf;
}

int gcp_config_load(gcp_ctx *c, gb_error *err)
{
	const gb_host *h = c->host;
	char *key, *why = NULL, *key_project = NULL;
	size_t n;
	int64_t num;

	c->compute = drvc_opt_env(h, "endpoint", "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE",
	                     GCP_DEFAULT_COMPUTE);
	n = strlen(c->compute);
	if (n == 0 || c->compute[n - 1] != '/') {
		char *s = drvc_xasprintf("%s/", c->compute);
		free(c->compute);
		c->compute = s;
	}
	c->billing = drvc_opt_env(h, "billing_endpoint", "GCP_BILLING_ENDPOINT",
	                     GCP_DEFAULT_BILLING);
	n = strlen(c->billing);
	while (n > 0 && c->billing[n - 1] == '/')
		c->billing[--n] = '\0';
	c->network = drvc_opt_env(h, "network", NULL, "global/networks/default");
	c->subnetwork = drvc_opt_env(h, "subnetwork", NULL, NULL);
	c->image = drvc_opt_env(h, "image", NULL, NULL);
	c->disk_type = drvc_opt_env(h, "disk_type", NULL, "pd-balanced");
	/* numbers and flags: a bad value is an error, not the default */
	if (drvc_opt_int(h, "disk_gb", 200, 10, 65536, &num, err) != 0 ||
	    drvc_opt_bool(h, "public_ip", 1, &c->public_ip, err) != 0 ||
	    drvc_opt_int(h, "create_timeout_s", 900, 1, 86400,
	                 &c->create_timeout_ms, err) != 0 ||
	    drvc_opt_int(h, "poll_interval_ms", 2000, 1, 600000,
	                 &c->poll_interval_ms, err) != 0)
		return -1;
	c->disk_gb = (int)num;
	c->create_timeout_ms *= 1000;

	key = read_key(c, &c->key_where);
	if (!key) {
		if (c->key_where) {
			c->auth_problem = drvc_xasprintf(
				"GCP credentials missing: the service-account key "
				"file %s could not be read", c->key_where);
			c->auth_looked = drvc_xasprintf("%s (cannot be read)",
			                                c->key_where);
		} else {
			c->auth_problem = drvc_xstrdup(
				"GCP credentials missing: no service-account key "
				"(option credentials.key_file is unset and "
				"GOOGLE_APPLICATION_CREDENTIALS is unset); see the GCP "
				"section of drivers/gcp/README.md");
			c->auth_looked = drvc_xstrdup(
				"options credentials.key_file and "
				"credentials.service_account_json, env "
				"GOOGLE_APPLICATION_CREDENTIALS (all unset)");
		}
	} else if (gcp_load_key(c, key, strlen(key), &why, &key_project) != 0) {
		c->auth_problem = drvc_xasprintf(
			"GCP service-account key %s is not usable: %s",
			c->key_where, why);
		c->auth_looked = drvc_xasprintf("%s (not a usable service-"
		                                "account key: %s)",
		                                c->key_where, why);
		free(why);
	}
	drvc_free_secret(key);

	c->project = drvc_opt_env(h, "project", NULL, NULL);
	if (!c->project && key_project)
		c->project = drvc_xstrdup(key_project);
	if (!c->project)
		c->project = drvc_opt_env(h, "project", "GOOGLE_CLOUD_PROJECT", NULL);
	free(key_project);
	return 0;
}

void gcp_config_free(gcp_ctx *c)
{
	free(c->compute);
	free(c->billing);
	free(c->project);
	free(c->network);
	free(c->subnetwork);
	free(c->image);
	free(c->disk_type);
	free(c->key_where);
	free(c->client_email);
	free(c->key_id);
	free(c->token_uri);
	EVP_PKEY_free(c->pkey);
	free(c->auth_problem);
	free(c->auth_looked);
}

int gcp_require(gcp_ctx *c, gb_error *err)
{
	if (drvc_creds_ok(c->auth_problem, err) != 0)
		return -1;
	if (!c->project) {
		drvc_err(err, GB_ERR_INVALID, 0, "ProjectMissing",
		         "GCP project unknown: set option project, or use a key "
		         "file with project_id, or env GOOGLE_CLOUD_PROJECT");
		return -1;
	}
	return 0;
}

const char *gcp_image_for(gcp_ctx *c, const char *region)
{
	const char *v = drvc_opt_region(c->host, "image", region);
	if (v)
		return v;
	return c->image ? c->image : GCP_DEFAULT_IMAGE;
}
