/*
 * aws_driver.c -- the AWS EC2 driver's descriptor and its init, fini,
 * list_offers and create methods.  describe/terminate live in
 * aws_describe.c, refresh_prices in aws_prices.c; the exported entry
 * point is in aws_entry.c.
 */
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws.h"
#include "aws_ec2.h"
#include "aws_util.h"
#include "drvc_catalog.h"
#include "drvc_json.h"
#include "drvc_util.h"

static int aws_init(const gb_host *host, void **out_ctx, gb_error *err)
{
	aws_ctx *c;
	if (!host || host->abi_major != GB_DRIVER_ABI_MAJOR || !host->http ||
	    !host->http_free || !host->now_ms) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "HostMismatch",
		         "aws: the host table is missing or of another ABI "
		         "major");
		return -1;
	}
	c = aws_xcalloc(1, sizeof(*c));
	c->host = host;
	if (aws_endpoint_init(c, err) != 0) {
		free(c);
		return -1;
	}
	aws_creds_load(host, &c->creds);
	if (host->log) {
		if (c->creds.have)
			host->log(host->ctx, GB_LOG_INFO,
			          "aws: credentials from %s", c->creds.source);
		else
			host->log(host->ctx, GB_LOG_INFO,
			          "aws: no credentials (offers work; create, "
			          "describe and terminate will fail): tried %s",
			          c->creds.tried);
		if (c->endpoint)
			host->log(host->ctx, GB_LOG_INFO,
			          "aws: EC2 endpoint %s (from %s); signing keeps "
			          "the real region and service ec2",
			          c->endpoint, c->endpoint_src);
	}
	*out_ctx = c;
	return 0;
}

static void aws_fini(void *ctx)
{
	aws_ctx *c = ctx;
	if (!c)
		return;
	aws_creds_clear(&c->creds);
	free(c->endpoint);
	free(c);
}

static int aws_list_offers(void *ctx, gb_offer_cb emit, void *ud,
                           gb_error *err)
{
	aws_ctx *c = ctx;
	char buf[1024];
	const char *path = drvc_catalog_path(c->host, "aws", buf, sizeof(buf));
	if (!path) {
		drvc_err(err, GB_ERR_NOT_FOUND, 0, "CatalogMissing",
		         "aws: no offers catalog: set the driver option "
		         "\"catalog\" (a file) or \"data_dir\"");
		return -1;
	}
	return drvc_catalog_emit(path, NULL, emit, ud, err);
}

/* ------------------------------------------------------------- create */

typedef struct idlist {
	char **ids;
	size_t n, cap;
} idlist;

static void idlist_free(idlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->ids[i]);
	free(l->ids);
	memset(l, 0, sizeof(*l));
}

static int collect_id(void *ud, const gb_instance *in)
{
	idlist *l = ud;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->ids = aws_xrealloc(l->ids, l->cap * sizeof(*l->ids));
	}
	l->ids[l->n++] = aws_xstrdup(in->id);
	return 0;
}

static int valid_token(const char *t)
{
	size_t n = t ? strlen(t) : 0;
	if (n == 0 || n > 64)
		return 0;
	for (; *t; t++)
		if ((unsigned char)*t < 0x21 || (unsigned char)*t > 0x7e)
			return 0;
	return 1;
}

static int collect_new_id(void *ud, const gb_instance *in)
{
	idlist *l = ud;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->ids[i], in->id) == 0)
			return 0;
	return collect_id(ud, in);
}

/* All-or-nothing: terminate what this create launched (the ids it knows
 * plus any found by the token tag) and say so in err's message. */
static void undo_create(aws_ctx *c, const gb_create_req *req, idlist *ids,
                        gb_error *err)
{
	gb_describe_req d;
	gb_error e2;
	size_t len = strlen(err->message);
	memset(&d, 0, sizeof(d));
	d.region = req->region;
	d.pool = req->pool;
	d.broker_id = req->broker_id;
	d.token = req->token;
	memset(&e2, 0, sizeof(e2));
	(void)aws_describe(c, &d, collect_new_id, ids, &e2);
	if (ids->n == 0) {
		snprintf(err->message + len, sizeof(err->message) - len,
		         "; no instance with tag %s=%s is visible yet (the "
		         "reconciler finds late ones by that tag)",
		         GB_TAG_TOKEN, req->token);
		return;
	}
	memset(&e2, 0, sizeof(e2));
	if (aws_terminate_ids(c, req->region, (const char *const *)ids->ids,
	                      ids->n, &e2) == 0)
		snprintf(err->message + len, sizeof(err->message) - len,
		         "; the %zu instance(s) it launched were terminated",
		         ids->n);
	else
		snprintf(err->message + len, sizeof(err->message) - len,
		         "; terminating the %zu instance(s) it launched failed "
		         "too (%s)", ids->n, e2.message);
}

static int aws_create(void *ctx, const gb_create_req *req,
                      gb_instance_cb emit, void *ud, gb_error *err)
{
	aws_ctx *c = ctx;
	aws_run_params p;
	gb_http_resp resp;
	idlist ids = {NULL, 0, 0};
	char *body;
	int rc, n;

	if (!req || !req->region || !*req->region || !req->instance_type ||
	    !*req->instance_type || req->count < 1 || req->count > 10000 ||
	    !req->pool || !*req->pool || !req->broker_id ||
	    !*req->broker_id) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidRequest",
		         "aws create: region, instance_type, pool, broker_id "
		         "and a count of 1..10000 are required");
		return -1;
	}
	if (req->capacity != GB_CAPACITY_ON_DEMAND &&
	    req->capacity != GB_CAPACITY_SPOT) {
		drvc_err(err, GB_ERR_INVALID, 0, "UnsupportedCapacity",
		         "aws create: only on-demand and spot capacity are "
		         "supported (capacity reservations and blocks are not)");
		return -1;
	}
	if (!valid_token(req->token)) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidClientToken",
		         "aws create: the idempotency token must be 1..64 "
		         "printable ASCII characters (EC2 ClientToken)");
		return -1;
	}
	if (!c->creds.have) {
		aws_no_creds_error(c, "RunInstances", err);
		return -1;
	}
	memset(&p, 0, sizeof(p));
	p.req = req;
	p.image = req->image && *req->image
	                  ? req->image
	                  : aws_opt_region(c, "image", req->region);
	if (!p.image)
		p.image = AWS_DEFAULT_IMAGE;
	p.subnet_id = aws_opt_region(c, "subnet_id", req->region);
	p.security_group_ids = aws_opt_region(c, "security_group_ids",
	                                      req->region);
	p.key_name = aws_opt_region(c, "key_name", req->region);
	p.iam_instance_profile = aws_opt_region(c, "iam_instance_profile",
	                                        req->region);
	if (req->nssh_keys && req->user_data && *req->user_data &&
	    c->host->log)
		c->host->log(c->host->ctx, GB_LOG_WARN,
		             "aws: pool %s gives both user_data and ssh keys; "
		             "the keys are not added (put them in the "
		             "cloud-init text, or use option key_name)",
		             req->pool);
	body = aws_ec2_run_body(&p, err);
	if (!body)
		return -1;
	/* retries are safe: the ClientToken makes them idempotent */
	rc = aws_call(c, req->region, "RunInstances", body, 0, &resp, err);
	free(body);
	if (rc != 0) {
		if (err->cls == GB_ERR_CONFLICT) {
			size_t l = strlen(err->message);
			snprintf(err->message + l, sizeof(err->message) - l,
			         " (token %s was used before with other "
			         "parameters)", req->token);
		}
		c->host->http_free(c->host->ctx, &resp);
		return -1;
	}
	if (aws_check_answer(c, "RunInstances", &resp, err) != 0 ||
	    (n = aws_ec2_parse_instances(resp.body, resp.body_len,
	                                 "RunInstancesResponse", req->region,
	                                 collect_id, &ids, NULL, err)) < 0) {
		c->host->http_free(c->host->ctx, &resp);
		undo_create(c, req, &ids, err);
		idlist_free(&ids);
		return -1;
	}
	if ((unsigned)n != req->count) {
		drvc_err(err, GB_ERR_CAPACITY, (int)resp.status,
		         "PartialLaunch", "EC2 RunInstances in %s launched %d "
		         "of %u %s", req->region, n, req->count,
		         req->instance_type);
		c->host->http_free(c->host->ctx, &resp);
		undo_create(c, req, &ids, err);
		idlist_free(&ids);
		return -1;
	}
	idlist_free(&ids);
	n = aws_ec2_parse_instances(resp.body, resp.body_len,
	                            "RunInstancesResponse", req->region, emit,
	                            ud, NULL, err);
	c->host->http_free(c->host->ctx, &resp);
	return n < 0 ? -1 : 0;
}

/* EC2's documented request buckets (capacity/refill per second, per
 * account and region; the host's buckets are per driver, so across
 * regions they are stricter than EC2): RunInstances 5/2,
 * TerminateInstances 100/5, Describe* 100/20.  rate.<Action> in the
 * broker config overrides one. */
static const char *const aws_default_rates[] = {
	"RunInstances", "5/2",
	"TerminateInstances", "100/5",
	"DescribeInstances", "100/20",
	"DescribeInstanceTypes", "100/20",
	"DescribeSpotPriceHistory", "100/20",
	"DescribeAvailabilityZones", "100/20",
	NULL, NULL,
};

/* Every option the driver reads (see drivers/aws/README.md). */
static const char *const aws_options[] = {
	"endpoint", "profile", "regions", "catalog",
	"credentials.access_key_id", "credentials.secret_access_key",
	"credentials.session_token",
	"image.*", "subnet_id.*", "security_group_ids.*", "key_name.*",
	"iam_instance_profile.*",
	NULL,
};

/* The host's "credentials" verb (driver.h): where the keys came from, or
 * everything aws_creds_load tried. */
static int aws_command(void *ctx, const char *verb, int argc,
                       const char *const *argv,
                       void (*out)(void *ud, const char *json), void *ud,
                       gb_error *err)
{
	const aws_ctx *c = ctx;
	(void)argv;
	return drvc_credentials_command("aws", verb, argc,
	                                c->creds.have ? c->creds.source : NULL,
	                                c->creds.tried, out, ud, err);
}

const gb_driver aws_driver = {
	GB_DRIVER_V1,
	.name = "aws",
	.version = "1.0.0",
	.description = "Amazon EC2 (Query API 2016-11-15, SigV4): batch "
	               "RunInstances with ClientToken, spot, price refresh",
	.caps = GB_DRV_CAP_SPOT | GB_DRV_CAP_BATCH_CREATE |
	        GB_DRV_CAP_PRICE_REFRESH | GB_DRV_CAP_ZONES |
	        GB_DRV_CAP_BATCH_TERMINATE | GB_DRV_CAP_ATOMIC_CREATE,
	.init = aws_init,
	.fini = aws_fini,
	.list_offers = aws_list_offers,
	.create = aws_create,
	.describe = aws_describe,
	.terminate = aws_terminate,
	.refresh_prices = aws_refresh_prices,
	.quota = NULL,
	.command = aws_command, /* "credentials" */
	.default_rates = aws_default_rates,
	.options = aws_options,
	/* EC2 Linux On-Demand and Spot: per-second billing, 60 s minimum
	 * (https://aws.amazon.com/about-aws/whats-new/2017/10/
	 * announcing-amazon-ec2-per-second-billing/) */
	.billing_minimum_s = 60,
};
