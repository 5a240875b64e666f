/*
 * test_gcp.c -- the GCP driver against the fake host: the service-account
 * JWT (decoded here and its RS256 signature verified with the public half
 * of a key pair this test generates), the token exchange, caching and
 * refresh, the exact instances.bulkInsert bodies (N1 guestAccelerators vs
 * A2/G2 built-in GPUs, Spot scheduling, labels), deterministic requestIds,
 * one bulkInsert per create, operation polling and DONE-with-error
 * (nothing made, nothing deleted), replays and adoption, error
 * classes, aggregatedList paging and states, terminate, refresh_prices
 * from billing-catalog pages, malformed answers, missing credentials --
 * and that no secret (private key, assertion, token) reaches an error or
 * a log line.
 */
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../drivers/gcp/gcp.h"
#include "drvc_enc.h"
#include "fakehost.h"

#define TOK1 "ya29.c.access-token-number-one"
#define TOK2 "ya29.c.access-token-number-two"
#define GCE "https://gce.test/compute/v1/"
#define ZONES GCE "projects/proj-1/zones/"
#define TOKEN_URI "https://oauth.test/token"
#define KEYSRC "file:/keys/sa.json"
#define EMAIL "broker@proj-1.iam.gserviceaccount.com"
#define SSHKEY "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBroker test@ci"

static EVP_PKEY *pkey;
static char *key_json;   /* the service-account key file */
static char pem_line[80]; /* one base64 line of the private key */
static char tmpdir[256];
static char catalog[300];

/* ------------------------------------------------------------ fake GCE */

typedef struct route {
	const char *method;
	char *sub;
	long status;
	char *body;
	char *h[3];
	int times;
} route;

static route routes[128];
static size_t nroutes;
static int unmatched;

static void routes_reset(void)
{
	for (size_t i = 0; i < nroutes; i++) {
		free(routes[i].sub);
		free(routes[i].body);
		for (int k = 0; k < 3; k++)
			free(routes[i].h[k]);
	}
	memset(routes, 0, sizeof(routes));
	nroutes = 0;
	unmatched = 0;
}

static void on(const char *method, const char *sub, int times, long status,
               const char *body, const char *h1, const char *h2)
{
	route *r = &routes[nroutes++];
	assert_true(nroutes < 128);
	r->method = method;
	r->sub = strdup(sub);
	r->times = times;
	r->status = status;
	r->body = strdup(body ? body : "");
	r->h[0] = h1 ? strdup(h1) : NULL;
	r->h[1] = h2 ? strdup(h2) : NULL;
}

static void handler(void *ud, const fakehost_req *req, long *status,
                    char **body, char ***headers, size_t *nh)
{
	(void)ud;
	for (size_t i = 0; i < nroutes; i++) {
		route *r = &routes[i];
		if (r->times == 0 || strcmp(r->method, req->method) != 0 ||
		    !strstr(req->url, r->sub))
			continue;
		if (r->times > 0)
			r->times--;
		*status = r->status;
		*body = strdup(r->body);
		*headers = calloc(4, sizeof(char *));
		*nh = 0;
		for (int k = 0; k < 3 && r->h[k]; k++)
			(*headers)[(*nh)++] = strdup(r->h[k]);
		return;
	}
	unmatched++;
	fprintf(stderr, "fake GCE: no route for %s %s\n", req->method,
	        req->url);
	*status = 599;
	*body = strdup("{}");
}

static void token_route(const char *tok, int expires_in, int times)
{
	char b[256];
	snprintf(b, sizeof(b),
	         "{\"access_token\":\"%s\",\"expires_in\":%d,"
	         "\"token_type\":\"Bearer\"}",
	         tok, expires_in);
	on("POST", TOKEN_URI, times, 200, b, "Content-Type: application/json",
	   NULL);
}

static char *inst_json(const char *name, const char *zone,
                       const char *status, const char *model,
                       const char *token, const char *pool)
{
	char *s = malloc(4096);
	snprintf(s, 4096,
	         "{\"kind\":\"compute#instance\",\"id\":\"1234567890123\","
	         "\"name\":\"%s\",\"zone\":\"" ZONES "%s\","
	         "\"machineType\":\"" ZONES "%s/machineTypes/n1-standard-8\","
	         "\"status\":\"%s\",\"creationTimestamp\":"
	         "\"2023-11-14T14:13:20.123-08:00\","
	         "\"guestAccelerators\":[{\"acceleratorType\":\"" ZONES
	         "%s/acceleratorTypes/nvidia-tesla-t4\",\"acceleratorCount\":1}],"
	         "\"scheduling\":{\"provisioningModel\":\"%s\"},"
	         "\"networkInterfaces\":[{\"networkIP\":\"10.128.0.7\","
	         "\"accessConfigs\":[{\"type\":\"ONE_TO_ONE_NAT\",\"natIP\":"
	         "\"34.1.2.3\"}]}],"
	         "\"labels\":{\"gpubroker-pool\":\"%s\",\"gpubroker-broker\":"
	         "\"b1\",\"gpubroker-token\":\"%s\"}}",
	         name, zone, zone, status, zone, model, pool, token);
	return s;
}

static char *op_json(const char *name, const char *status,
                     const char *errcode)
{
	char *s = malloc(1024);
	if (errcode)
		snprintf(s, 1024,
		         "{\"kind\":\"compute#operation\",\"name\":\"%s\","
		         "\"operationType\":\"bulkInsert\",\"status\":\"%s\","
		         "\"httpErrorStatusCode\":503,\"error\":{\"errors\":[{"
		         "\"code\":\"%s\",\"message\":\"The zone "
		         "'projects/proj-1/zones/us-central1-a' does not have "
		         "enough resources available to fulfill the request.\"}]}}",
		         name, status, errcode);
	else
		snprintf(s, 1024,
		         "{\"kind\":\"compute#operation\",\"name\":\"%s\","
		         "\"operationType\":\"bulkInsert\",\"status\":\"%s\","
		         "\"progress\":0}",
		         name, status);
	return s;
}

/* ------------------------------------------------------------- helpers */

static fakehost *mk(int creds)
{
	fakehost *fh = fakehost_new();
	routes_reset();
	fakehost_set_handler(fh, handler, NULL);
	fakehost_option(fh, "endpoint", GCE);
	fakehost_option(fh, "billing_endpoint", "https://billing.test/v1/");
	fakehost_option(fh, "poll_interval_ms", "1500");
	fakehost_option(fh, "catalog", catalog);
	if (creds) {
		fakehost_option(fh, "credentials.key_file", KEYSRC);
		fakehost_secret(fh, KEYSRC, key_json);
	}
	return fh;
}

static void *init(fakehost *fh)
{
	void *ctx = NULL;
	gb_error err;
	memset(&err, 0, sizeof(err));
	assert_int_equal(gcp_driver_desc.init(fakehost_host(fh), &ctx, &err), 0);
	assert_non_null(ctx);
	return ctx;
}

typedef struct got {
	size_t n;
	char ids[16][80];
	gb_instance_state st[16];
	char reason[16][64];
	char priv[16][32], pub[16][32];
	char type[16][64];
	char zone[16][32], region[16][32];
	gb_capacity cap[16];
	int64_t created[16], created_ms[16];
} got;

static int collect(void *ud, const gb_instance *in)
{
	got *g = ud;
	if (g->n < 16) {
		snprintf(g->ids[g->n], 80, "%s", in->id);
		g->st[g->n] = in->state;
		snprintf(g->reason[g->n], 64, "%s",
		         in->state_reason ? in->state_reason : "");
		snprintf(g->priv[g->n], 32, "%s", in->private_ip ? in->private_ip : "");
		snprintf(g->pub[g->n], 32, "%s", in->public_ip ? in->public_ip : "");
		snprintf(g->type[g->n], 64, "%s", in->instance_type);
		snprintf(g->zone[g->n], 32, "%s", in->zone);
		snprintf(g->region[g->n], 32, "%s", in->region);
		g->cap[g->n] = in->capacity;
		g->created[g->n] = in->created_at;
		g->created_ms[g->n] = in->created_ms;
	}
	g->n++;
	return 0;
}

static const char *const keys[] = {SSHKEY};
static const gb_kv extra_tags[] = {{"Project", "LLM Training"},
                                   {"cost.center", "4411"},
                                   {"9lives", "x"}};

static gb_create_req base_req(unsigned count, const char *type)
{
	gb_create_req r;
	memset(&r, 0, sizeof(r));
	r.pool = "train-42";
	r.broker_id = "b1";
	r.team = "Research";
	r.region = "us-central1";
	r.zone = "us-central1-a";
	r.instance_type = type;
	r.capacity = GB_CAPACITY_ON_DEMAND;
	r.count = count;
	r.token = "0123abcdef";
	r.name_prefix = "train-42";
	r.first_index = 0;
	r.tags = extra_tags;
	r.ntags = 3;
	r.ssh_keys = keys;
	r.nssh_keys = 1;
	return r;
}

static const fakehost_req *find_req(fakehost *fh, const char *method,
                                    const char *sub, size_t nth)
{
	for (size_t i = 0; i < fakehost_nrequests(fh); i++) {
		const fakehost_req *r = fakehost_request(fh, i);
		if (strcmp(r->method, method) == 0 && strstr(r->url, sub) &&
		    nth-- == 0)
			return r;
	}
	return NULL;
}

static char *form_field(const char *body, const char *name)
{
	size_t n = strlen(name);
	const char *p = body;
	while (p && *p) {
		const char *amp = strchr(p, '&');
		size_t len = amp ? (size_t)(amp - p) : strlen(p);
		if (len > n && strncmp(p, name, n) == 0 && p[n] == '=') {
			drvc_buf b = DRVC_BUF_INIT;
			if (drvc_pct_decode(&b, p + n + 1, len - n - 1, 1) != 0)
				return NULL;
			return drvc_buf_take(&b);
		}
		p = amp ? amp + 1 : NULL;
	}
	return NULL;
}

/* No secret in errors or logs: the private key (a line of it), every
 * assertion sent, the tokens. */
static void assert_clean(fakehost *fh, const gb_error *err)
{
	const char *logs = fakehost_logs(fh);
	const char *bad[] = {TOK1, TOK2, pem_line, "PRIVATE KEY"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (err)
			assert_null(strstr(err->message, bad[i]));
		assert_null(strstr(logs, bad[i]));
	}
	for (size_t i = 0; i < fakehost_nrequests(fh); i++) {
		const fakehost_req *r = fakehost_request(fh, i);
		char *a = strcmp(r->method, "POST") == 0
		                  ? form_field(r->body, "assertion")
		                  : NULL;
		if (!a)
			continue;
		if (err)
			assert_null(strstr(err->message, a + 40));
		assert_null(strstr(logs, a + 40));
		free(a);
	}
}

static char *agg_page(const char *const *insts, size_t n, const char *zone,
                      const char *next)
{
	size_t cap = 1 << 16, o;
	char *s = malloc(cap);
	o = (size_t)snprintf(s, cap,
	                     "{\"kind\":\"compute#instanceAggregatedList\","
	                     "\"items\":{\"zones/europe-west4-a\":{\"warning\":"
	                     "{\"code\":\"NO_RESULTS_ON_PAGE\",\"message\":"
	                     "\"none\"}},\"zones/%s\":{\"instances\":[",
	                     zone);
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(s + o, cap - o, "%s%s", i ? "," : "",
		                      insts[i]);
	o += (size_t)snprintf(s + o, cap - o, "]}}");
	if (next)
		snprintf(s + o, cap - o, ",\"nextPageToken\":\"%s\"}", next);
	else
		snprintf(s + o, cap - o, "}");
	return s;
}

/* ---------------------------------------------------------------- JWT */

static unsigned char *b64d(const char *s, size_t n, size_t *len)
{
	unsigned char *out = drvc_b64_decode(s, n, len);
	assert_non_null(out);
	return out;
}

static void test_jwt_and_token_request(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_describe_req d;
	got g;
	gb_error err;
	const fakehost_req *t, *r;
	char *gt, *as, *dot1, *dot2;
	unsigned char *hdr, *cl, *sig;
	size_t hl, cll, sl;
	json_t *jh, *jc;
	EVP_MD_CTX *md;
	char *page;
	(void)state;

	token_route(TOK1, 3599, -1);
	page = agg_page(NULL, 0, "us-central1-a", NULL);
	on("GET", "aggregated/instances", -1, 200, page, NULL, NULL);
	free(page);
	memset(&d, 0, sizeof(d));
	memset(&g, 0, sizeof(g));
	d.region = "us-central1";
	d.pool = "train-42";
	assert_int_equal(gcp_driver_desc.describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(g.n, 0);

	t = fakehost_request(fh, 0);
	assert_string_equal(t->method, "POST");
	assert_string_equal(t->url, TOKEN_URI);
	assert_string_equal(t->rate_class, "oauth-token");
	assert_string_equal(fakehost_req_header(t, "Content-Type"),
	                    "application/x-www-form-urlencoded");
	gt = form_field(t->body, "grant_type");
	assert_string_equal(gt, "urn:ietf:params:oauth:grant-type:jwt-bearer");
	free(gt);
	as = form_field(t->body, "assertion");
	assert_non_null(as);
	dot1 = strchr(as, '.');
	assert_non_null(dot1);
	dot2 = strchr(dot1 + 1, '.');
	assert_non_null(dot2);
	hdr = b64d(as, (size_t)(dot1 - as), &hl);
	cl = b64d(dot1 + 1, (size_t)(dot2 - dot1 - 1), &cll);
	sig = b64d(dot2 + 1, strlen(dot2 + 1), &sl);
	jh = json_loadb((char *)hdr, hl, 0, NULL);
	jc = json_loadb((char *)cl, cll, 0, NULL);
	assert_non_null(jh);
	assert_non_null(jc);
	assert_string_equal(json_string_value(json_object_get(jh, "alg")),
	                    "RS256");
	assert_string_equal(json_string_value(json_object_get(jh, "typ")), "JWT");
	assert_string_equal(json_string_value(json_object_get(jh, "kid")),
	                    "key-id-1");
	assert_string_equal(json_string_value(json_object_get(jc, "iss")), EMAIL);
	assert_string_equal(json_string_value(json_object_get(jc, "aud")),
	                    TOKEN_URI);
	assert_string_equal(json_string_value(json_object_get(jc, "scope")),
	                    "https://www.googleapis.com/auth/cloud-platform");
	assert_int_equal(json_integer_value(json_object_get(jc, "iat")),
	                 1700000000);
	assert_int_equal(json_integer_value(json_object_get(jc, "exp")),
	                 1700000000 + 3600);
	/* The signature verifies with the public key. */
	md = EVP_MD_CTX_new();
	assert_int_equal(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL,
	                                      pkey),
	                 1);
	assert_int_equal(EVP_DigestVerify(md, sig, sl, (unsigned char *)as,
	                                  (size_t)(dot2 - as)),
	                 1);
	/* ... and not for a tampered header.claims. */
	as[3] ^= 1;
	assert_int_equal(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL,
	                                      pkey),
	                 1);
	assert_int_not_equal(EVP_DigestVerify(md, sig, sl, (unsigned char *)as,
	                                      (size_t)(dot2 - as)),
	                     1);
	EVP_MD_CTX_free(md);
	json_decref(jh);
	json_decref(jc);
	free(hdr);
	free(cl);
	free(sig);
	free(as);

	r = fakehost_request(fh, 1);
	assert_string_equal(r->method, "GET");
	assert_string_equal(
		r->url, GCE "projects/proj-1/aggregated/instances?filter="
		            "labels.gpubroker-pool%20%3D%20%22train-42%22"
		            "&maxResults=500&fields=items%2F%2A%2Finstances%28"
		            "name%2Czone%2CmachineType%2Cstatus%2C"
		            "creationTimestamp%2Clabels%2Cscheduling%28"
		            "provisioningModel%2Cpreemptible%29%2C"
		            "networkInterfaces%28networkIP%2CaccessConfigs%2F"
		            "natIP%29%2CguestAccelerators%28acceleratorType%2C"
		            "acceleratorCount%29%29%2CnextPageToken");
	assert_string_equal(r->rate_class, "gce-list");
	assert_string_equal(fakehost_req_header(r, "Authorization"),
	                    "Bearer " TOK1);
	assert_int_equal(unmatched, 0);
	assert_clean(fh, &err);
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_token_cache_refresh_and_401(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_describe_req d;
	got g;
	gb_error err;
	char *page = agg_page(NULL, 0, "us-central1-a", NULL);
	(void)state;

	token_route(TOK1, 3600, 1);
	token_route(TOK2, 3600, -1);
	on("GET", "aggregated/instances", -1, 200, page, NULL, NULL);
	memset(&d, 0, sizeof(d));
	d.region = "us-central1";
	d.broker_id = "b1";
	for (int i = 0; i < 5; i++)
		assert_int_equal(
			gcp_driver_desc.describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(fakehost_count(fh, "POST", TOKEN_URI), 1);
	fakehost_set_now(fh, 1700000000000LL + 3530 * 1000LL);
	assert_int_equal(gcp_driver_desc.describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(fakehost_count(fh, "POST", TOKEN_URI), 1);
	fakehost_set_now(fh, 1700000000000LL + 3545 * 1000LL);
	assert_int_equal(gcp_driver_desc.describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(fakehost_count(fh, "POST", TOKEN_URI), 2);
	assert_string_equal(
		fakehost_req_header(fakehost_request(fh, fakehost_nrequests(fh) - 1),
		                    "Authorization"),
		"Bearer " TOK2);

	/* 401: the cached token is dropped and the call repeated once. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("GET", "aggregated/instances", 1, 401,
	   "{\"error\":{\"code\":401,\"message\":\"Request had invalid "
	   "authentication credentials.\",\"status\":\"UNAUTHENTICATED\"}}",
	   NULL, NULL);
	on("GET", "aggregated/instances", -1, 200, page, NULL, NULL);
	assert_int_equal(gcp_driver_desc.describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(fakehost_count(fh, "POST", TOKEN_URI), 3);
	assert_string_equal(
		fakehost_req_header(fakehost_request(fh, fakehost_nrequests(fh) - 1),
		                    "Authorization"),
		"Bearer " TOK1);
	free(page);
	assert_clean(fh, &err);
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

/* ------------------------------------------------------------- bodies */

static const char expect_n1_spot[] =
	"{\"count\":\"2\",\"instanceProperties\":{"
	"\"disks\":[{\"autoDelete\":true,\"boot\":true,\"initializeParams\":{"
	"\"diskSizeGb\":\"200\",\"diskType\":\"pd-balanced\",\"sourceImage\":"
	"\"projects/deeplearning-platform-release/"
	"global/images/family/common-cu128-ubuntu-2204-nvidia-570\"}}],"
	"\"guestAccelerators\":[{\"acceleratorCount\":1,\"acceleratorType\":"
	"\"nvidia-tesla-t4\"}],"
	"\"labels\":{\"cost_center\":\"4411\",\"gpubroker-broker\":\"b1\","
	"\"gpubroker-pool\":\"train-42\",\"gpubroker-team\":\"research\","
	"\"gpubroker-token\":\"0123abcdef\",\"project\":\"llm_training\","
	"\"x9lives\":\"x\"},"
	"\"machineType\":\"n1-standard-8\","
	"\"metadata\":{\"items\":[{\"key\":\"ssh-keys\",\"value\":\"gpubroker:"
	SSHKEY "\"},{\"key\":\"startup-script\",\"value\":\"#!/bin/sh\\n"
	"nvidia-smi\\n\"}]},"
	"\"networkInterfaces\":[{\"accessConfigs\":[{"
	"\"name\":\"External NAT\",\"type\":\"ONE_TO_ONE_NAT\"}],\"network\":"
	"\"global/networks/default\"}],"
	"\"scheduling\":{\"automaticRestart\":false,"
	"\"instanceTerminationAction\":\"STOP\",\"onHostMaintenance\":"
	"\"TERMINATE\",\"provisioningModel\":\"SPOT\"}},"
	"\"minCount\":\"2\",\"perInstanceProperties\":{\"train-42-0\":{},"
	"\"train-42-1\":{}}}";

static const char *const two[] = {"train-42-0", "train-42-1"};
static const char *const x1[] = {"x-1"};

static void test_bulk_bodies(void **state)
{
	gb_create_req r = base_req(2, "n1-standard-8/nvidia-tesla-t4:1");
	gcp_params p = {GCP_DEFAULT_IMAGE, "global/networks/default", NULL,
	                "pd-balanced", 200, 1};
	gb_error err;
	char *b, *b2;
	json_t *j, *props;
	(void)state;

	/* count = minCount, names as perInstanceProperties keys, every type
	 * by name (InstanceProperties take no zonal URLs) */
	r.capacity = GB_CAPACITY_SPOT;
	r.user_data = "#!/bin/sh\nnvidia-smi\n";
	b = gcp_bulk_body(&r, two, 2, &p, &err);
	assert_non_null(b);
	assert_string_equal(b, expect_n1_spot);
	b2 = gcp_bulk_body(&r, two, 2, &p, &err);
	assert_string_equal(b, b2);
	free(b);
	free(b2);

	/* A2/A3/G2: GPUs are built in -> no guestAccelerators; on-demand
	 * scheduling; cloud-init goes to user-data; a subnetwork; no NAT. */
	r.instance_type = "a2-highgpu-1g";
	r.capacity = GB_CAPACITY_ON_DEMAND;
	r.user_data = "#cloud-config\npackages: [htop]\n";
	p.subnetwork = "regions/us-central1/subnetworks/gpu";
	p.public_ip = 0;
	b = gcp_bulk_body(&r, x1, 1, &p, &err);
	assert_non_null(b);
	j = json_loads(b, 0, NULL);
	props = json_object_get(j, "instanceProperties");
	assert_string_equal(json_string_value(json_object_get(j, "count")), "1");
	assert_string_equal(json_string_value(json_object_get(j, "minCount")),
	                    "1");
	assert_int_equal(json_object_size(json_object_get(
		                 j, "perInstanceProperties")), 1);
	assert_non_null(json_object_get(json_object_get(
		j, "perInstanceProperties"), "x-1"));
	assert_null(json_object_get(props, "guestAccelerators"));
	assert_string_equal(json_string_value(json_object_get(props,
	                                                      "machineType")),
	                    "a2-highgpu-1g");
	{
		json_t *sc = json_object_get(props, "scheduling");
		json_t *nic = json_array_get(
			json_object_get(props, "networkInterfaces"), 0);
		json_t *md = json_array_get(
			json_object_get(json_object_get(props, "metadata"),
			                "items"), 1);
		assert_true(json_is_true(json_object_get(sc, "automaticRestart")));
		assert_string_equal(
			json_string_value(json_object_get(sc, "onHostMaintenance")),
			"TERMINATE");
		assert_string_equal(
			json_string_value(json_object_get(sc, "provisioningModel")),
			"STANDARD");
		assert_null(json_object_get(sc, "instanceTerminationAction"));
		assert_null(json_object_get(nic, "accessConfigs"));
		assert_string_equal(
			json_string_value(json_object_get(nic, "subnetwork")),
			"regions/us-central1/subnetworks/gpu");
		assert_string_equal(json_string_value(json_object_get(md, "key")),
		                    "user-data");
	}
	json_decref(j);
	free(b);
	r.instance_type = "g2-standard-8";
	b = gcp_bulk_body(&r, x1, 1, &p, &err);
	assert_null(strstr(b, "guestAccelerators"));
	free(b);

	/* Attachable GPUs exist only for N1; malformed types. */
	r.instance_type = "a2-highgpu-1g/nvidia-tesla-a100:1";
	assert_null(gcp_bulk_body(&r, x1, 1, &p, &err));
	assert_int_equal(err.cls, GB_ERR_INVALID);
	r.instance_type = "n1-standard-8/nvidia-tesla-t4:0";
	assert_null(gcp_bulk_body(&r, x1, 1, &p, &err));
	r.instance_type = "N1 standard";
	assert_null(gcp_bulk_body(&r, x1, 1, &p, &err));
}

static void test_names_labels_request_ids(void **state)
{
	char out[64], a[37], b[37], c[37];
	gb_error err;
	(void)state;
	gcp_label_key("Cost.Center", out);
	assert_string_equal(out, "cost_center");
	gcp_label_key("9lives", out);
	assert_string_equal(out, "x9lives");
	gcp_label_value("Ünïcode Team", out);
	assert_string_equal(out, "__n__code_team");
	gcp_label_value("a-very-long-value-that-goes-on-and-on-and-on-and-on-"
	                "and-on-and-on",
	                out);
	assert_int_equal(strlen(out), 63);
	assert_int_equal(gcp_instance_name("Train_42", 7, out, &err), 0);
	assert_string_equal(out, "train-42-7");
	assert_int_equal(gcp_instance_name("42train", 0, out, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_int_equal(gcp_instance_name("a-name-that-is-far-too-long-for-"
	                                   "compute-engine-instance-names-x",
	                                   10, out, &err),
	                 -1);

	gcp_request_id("tok-1", two, 2, a);
	gcp_request_id("tok-1", two, 2, b);
	assert_string_equal(a, b);
	gcp_request_id("tok-1", two + 1, 1, c); /* a subset: another id */
	assert_string_not_equal(a, c);
	gcp_request_id("tok-2", two, 2, c);
	assert_string_not_equal(a, c);
	assert_int_equal(strlen(a), 36);
	assert_true(a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-');
	assert_true(a[14] == '4');
	assert_non_null(strchr("89ab", a[19]));
	assert_string_not_equal(a, "00000000-0000-0000-0000-000000000000");
	gcp_random_uuid(b);
	gcp_random_uuid(c);
	assert_string_not_equal(b, c);
	assert_true(gcp_zone_in_region("us-central1-a", "us-central1"));
	assert_false(gcp_zone_in_region("us-central1-a", "us-central"));
	assert_false(gcp_zone_in_region("us-east1-b", "us-central1"));
}

/* ------------------------------------------------------------- create */

#define BULK "/instances/bulkInsert?requestId="

/* The bulkInsert in zone answered with operation opname: RUNNING
 * `running` polls (Retry-After 4 s), then DONE with errcode (or none). */
static void bulk_routes(const char *zone, const char *opname, int running,
                        const char *errcode)
{
	char sub[256], *op;
	snprintf(sub, sizeof(sub), "zones/%s" BULK, zone);
	op = op_json(opname, "RUNNING", NULL);
	on("POST", sub, 1, 200, op, NULL, NULL);
	free(op);
	snprintf(sub, sizeof(sub), "zones/%s/operations/%s", zone, opname);
	op = op_json(opname, "RUNNING", NULL);
	if (running)
		on("GET", sub, running, 200, op, "Retry-After: 4", NULL);
	free(op);
	op = op_json(opname, "DONE", errcode);
	on("GET", sub, -1, 200, op, NULL, NULL);
	free(op);
}

/* GET of instance name in zone (status, token label). */
static void inst_route(const char *name, const char *zone,
                       const char *status, const char *token, int times)
{
	char sub[256], *inst;
	snprintf(sub, sizeof(sub), "zones/%s/instances/%s", zone, name);
	inst = inst_json(name, zone, status, "STANDARD", token, "train-42");
	on("GET", sub, times, 200, inst, NULL, NULL);
	free(inst);
}

static void test_create_polls_and_emits(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_create_req r = base_req(2, "n1-standard-8/nvidia-tesla-t4:1");
	got g;
	gb_error err;
	const fakehost_req *ins;
	char rid[37], url[300];
	json_t *body;
	int64_t t0;
	(void)state;

	/* one create call makes them all, all or nothing */
	assert_int_equal(gcp_driver_desc.caps & (GB_DRV_CAP_BATCH_CREATE |
	                                         GB_DRV_CAP_ATOMIC_CREATE),
	                 GB_DRV_CAP_BATCH_CREATE | GB_DRV_CAP_ATOMIC_CREATE);
	token_route(TOK1, 3600, -1);
	r.zone = ""; /* the catalog's first zone for the type: us-central1-b */
	bulk_routes("us-central1-b", "operation-1", 2, NULL);
	inst_route("train-42-0", "us-central1-b", "RUNNING", "0123abcdef", -1);
	inst_route("train-42-1", "us-central1-b", "STAGING", "0123abcdef", -1);
	memset(&g, 0, sizeof(g));
	t0 = fakehost_host(fh)->now_ms(fakehost_host(fh)->ctx);
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), 0);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.ids[0], "train-42-0");
	assert_string_equal(g.ids[1], "train-42-1");
	assert_int_equal(g.st[0], GB_INST_RUNNING);
	assert_int_equal(g.st[1], GB_INST_PENDING);
	assert_string_equal(g.priv[0], "10.128.0.7");
	assert_string_equal(g.pub[0], "34.1.2.3");
	assert_string_equal(g.type[0], "n1-standard-8/nvidia-tesla-t4:1");
	assert_string_equal(g.zone[0], "us-central1-b");
	assert_string_equal(g.region[0], "us-central1");
	assert_int_equal(g.created[0], 1700000000);
	/* ABI minor 3: the millisecond creation time, offset applied */
	assert_int_equal(g.created_ms[0], 1700000000123LL);
	assert_int_equal(fakehost_count(fh, "GET", "operations/operation-1"), 3);
	assert_true(fakehost_host(fh)->now_ms(fakehost_host(fh)->ctx) - t0 >=
	            8000);
	/* one bulkInsert for both: count = minCount = 2, the engine's names,
	 * a requestId from the token and the names */
	assert_int_equal(fakehost_count(fh, "POST", "/instances"), 1);
	ins = find_req(fh, "POST", BULK, 0);
	gcp_request_id("0123abcdef", two, 2, rid);
	snprintf(url, sizeof(url), ZONES "us-central1-b" BULK "%s", rid);
	assert_string_equal(ins->url, url);
	assert_string_equal(ins->rate_class, "gce-mutate");
	assert_string_equal(fakehost_req_header(ins, "Authorization"),
	                    "Bearer " TOK1);
	body = json_loads(ins->body, 0, NULL);
	assert_non_null(body);
	assert_string_equal(json_string_value(json_object_get(body, "count")),
	                    "2");
	assert_string_equal(json_string_value(json_object_get(body,
	                                                      "minCount")),
	                    "2");
	assert_non_null(json_object_get(json_object_get(
		body, "perInstanceProperties"), "train-42-1"));
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(body, "instanceProperties"),
			"machineType")),
		"n1-standard-8");
	json_decref(body);
	assert_string_equal(find_req(fh, "GET", "operations/", 0)->rate_class,
	                    "gce-ops");
	assert_int_equal(fakehost_count(fh, "DELETE", "instances"), 0);
	assert_int_equal(unmatched, 0);

	/* Now known: describe by id GETs it in its zone directly. */
	{
		const char *ids[] = {"train-42-0"};
		gb_describe_req d;
		memset(&d, 0, sizeof(d));
		memset(&g, 0, sizeof(g));
		d.region = "us-central1";
		d.ids = ids;
		d.nids = 1;
		assert_int_equal(
			gcp_driver_desc.describe(ctx, &d, collect, &g, &err), 0);
		assert_int_equal(g.n, 1);
		assert_int_equal(fakehost_count(fh, "GET", "aggregated"), 0);
	}
	assert_clean(fh, &err);
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

/* A refused bulkInsert made nothing: the driver returns the error's class
 * and deletes nothing (GCE checked capacity and quota up front). */
static void test_create_refused_makes_nothing(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_create_req r = base_req(2, "a2-highgpu-1g");
	got g;
	gb_error err;
	(void)state;

	token_route(TOK1, 3600, -1);
	bulk_routes("us-central1-a", "op-a", 1, "ZONE_RESOURCE_POOL_EXHAUSTED");
	on("DELETE", "instances/train-42-", -1, 200,
	   "{\"name\":\"op-del\",\"status\":\"RUNNING\"}", NULL, NULL);
	memset(&g, 0, sizeof(g));
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_CAPACITY);
	assert_string_equal(err.code, "ZONE_RESOURCE_POOL_EXHAUSTED");
	assert_non_null(strstr(err.message, "train-42-0..train-42-1"));
	assert_non_null(strstr(err.message, "us-central1-a"));
	assert_int_equal(g.n, 0);
	assert_int_equal(fakehost_count(fh, "POST", "/instances"), 1);
	assert_int_equal(fakehost_count(fh, "DELETE", "instances"), 0);
	assert_int_equal(fakehost_count(fh, "GET", "/instances/"), 0);

	/* QUOTA_EXCEEDED in DONE -> QUOTA. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	bulk_routes("us-central1-a", "op-q", 0, "QUOTA_EXCEEDED");
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_QUOTA);
	assert_string_equal(err.code, "QUOTA_EXCEEDED");

	/* A synchronous 403 quotaExceeded. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("POST", BULK, -1, 403,
	   "{\"error\":{\"code\":403,\"message\":\"Quota 'NVIDIA_A100_GPUS' "
	   "exceeded. Limit: 1.0 in region us-central1.\",\"errors\":[{"
	   "\"message\":\"Quota 'NVIDIA_A100_GPUS' exceeded.\",\"domain\":"
	   "\"usageLimits\",\"reason\":\"quotaExceeded\"}]}}",
	   NULL, NULL);
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_QUOTA);
	assert_string_equal(err.code, "quotaExceeded");

	/* A synchronous 503 insufficientCapacity (the bulk API's own form):
	 * CAPACITY, not a transient error to replay. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("POST", BULK, -1, 503,
	   "{\"error\":{\"code\":503,\"message\":\"Insufficient capacity.\","
	   "\"errors\":[{\"reason\":\"insufficientCapacity\"}]}}", NULL, NULL);
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_CAPACITY);
	assert_int_equal(fakehost_count(fh, "DELETE", "instances"), 0);
	assert_clean(fh, &err);
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

#define EXISTS "{\"error\":{\"code\":409,\"message\":\"The resource " \
	"'projects/proj-1/zones/us-central1-a/instances/train-42-0' already " \
	"exists\",\"errors\":[{\"reason\":\"alreadyExists\"}]}}"

static void test_create_conflict(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_create_req r = base_req(1, "a2-highgpu-1g");
	got g;
	gb_error err;
	char *inst;
	size_t posts;
	(void)state;

	/* a name taken by someone else's instance */
	token_route(TOK1, 3600, -1);
	on("POST", BULK, 1, 409, EXISTS, NULL, NULL);
	inst = inst_json("train-42-0", "us-central1-a", "RUNNING", "STANDARD",
	                 "someone-else", "other");
	on("GET", "instances/train-42-0", 1, 200, inst, NULL, NULL);
	free(inst);
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_CONFLICT);
	assert_non_null(strstr(err.message, "gpubroker-token=0123abcdef"));
	assert_int_equal(fakehost_count(fh, "DELETE", "instances"), 0);

	/* Ours from an earlier try whose requestId GCE has forgotten:
	 * adopted, nothing more asked. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("POST", BULK, 1, 409, EXISTS, NULL, NULL);
	inst_route("train-42-0", "us-central1-a", "RUNNING", "0123abcdef", -1);
	memset(&g, 0, sizeof(g));
	posts = fakehost_count(fh, "POST", BULK);
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(fakehost_count(fh, "POST", BULK), posts + 1);
	assert_int_equal(unmatched, 0);

	/* train-42-0 ours, train-42-1 missing: one more bulkInsert of just
	 * train-42-1, with its own requestId. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("POST", BULK, 1, 409, EXISTS, NULL, NULL);
	inst_route("train-42-0", "us-central1-a", "RUNNING", "0123abcdef", -1);
	on("GET", "instances/train-42-1", 1, 404,
	   "{\"error\":{\"code\":404,\"errors\":[{\"reason\":\"notFound\"}]}}",
	   NULL, NULL);
	bulk_routes("us-central1-a", "op-b", 0, NULL);
	inst_route("train-42-1", "us-central1-a", "RUNNING", "0123abcdef", -1);
	r.count = 2;
	memset(&g, 0, sizeof(g));
	posts = fakehost_count(fh, "POST", BULK);
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), 0);
	assert_int_equal(g.n, 2);
	assert_int_equal(fakehost_count(fh, "POST", BULK), posts + 2);
	{
		const fakehost_req *b2 = find_req(fh, "POST", BULK, posts + 1);
		char rid[37];
		json_t *j = json_loads(b2->body, 0, NULL);
		json_t *per = json_object_get(j, "perInstanceProperties");
		assert_int_equal(json_object_size(per), 1);
		assert_non_null(json_object_get(per, "train-42-1"));
		assert_string_equal(json_string_value(json_object_get(j, "count")),
		                    "1");
		json_decref(j);
		gcp_request_id("0123abcdef", two + 1, 1, rid);
		assert_non_null(strstr(b2->url, rid));
		assert_string_not_equal(b2->url,
		                        find_req(fh, "POST", BULK, posts)->url);
	}
	assert_int_equal(fakehost_count(fh, "DELETE", "instances"), 0);

	/* Ours but STOPPING: not a result, a transient error; nothing
	 * deleted by this call. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("POST", BULK, 1, 409, EXISTS, NULL, NULL);
	inst_route("train-42-0", "us-central1-a", "STOPPING", "0123abcdef", -1);
	r.count = 1;
	memset(&g, 0, sizeof(g));
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_TRANSIENT);
	assert_string_equal(err.code, "InstanceBeingDeleted");
	assert_int_equal(g.n, 0);
	assert_int_equal(fakehost_count(fh, "DELETE", "instances/"), 0);

	/* Every try throttled: the outcome is unknown, nothing deleted. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("POST", BULK, -1, 403,
	   "{\"error\":{\"code\":403,\"message\":\"Quota exceeded for "
	   "quota metric 'Queries'\",\"errors\":[{\"reason\":"
	   "\"rateLimitExceeded\"}]}}", NULL, NULL);
	on("DELETE", "instances/", -1, 200, "{}", NULL, NULL);
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_THROTTLED);
	assert_int_equal(fakehost_count(fh, "DELETE", "instances/"), 0);
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

/* ------------------------------------------------------------- errors */

static void test_error_classes(void **state)
{
	static const struct {
		long status;
		const char *body;
		const char *hdr;
		gb_err_class cls;
		const char *code;
		int64_t retry_ms;
		int expired;
	} cases[] = {
		{403, "{\"error\":{\"code\":403,\"message\":\"Rate Limit Exceeded\","
		      "\"errors\":[{\"domain\":\"usageLimits\",\"reason\":"
		      "\"rateLimitExceeded\"}]}}",
		 NULL, GB_ERR_THROTTLED, "rateLimitExceeded", 0, 0},
		{403, "{\"error\":{\"errors\":[{\"reason\":\"userRateLimitExceeded\"}"
		      "]}}", "Retry-After: 9", GB_ERR_THROTTLED,
		 "userRateLimitExceeded", 9000, 0},
		{429, "{\"error\":{\"code\":429,\"status\":\"RESOURCE_EXHAUSTED\"}}",
		 "Retry-After: 5", GB_ERR_THROTTLED, "RESOURCE_EXHAUSTED", 5000, 0},
		{403, "{\"error\":{\"errors\":[{\"reason\":\"quotaExceeded\"}]}}",
		 NULL, GB_ERR_QUOTA, "quotaExceeded", 0, 0},
		{400, "{\"error\":{\"errors\":[{\"reason\":\"resourceNotReady\","
		      "\"message\":\"ZONE_RESOURCE_POOL_EXHAUSTED: no\"}]}}",
		 NULL, GB_ERR_CAPACITY, "ZONE_RESOURCE_POOL_EXHAUSTED", 0, 0},
		{503, "{\"error\":{\"errors\":[{\"reason\":\"backendError\"}]}}", NULL,
		 GB_ERR_TRANSIENT, "backendError", 0, 0},
		{500, "<html>oops</html>", NULL, GB_ERR_TRANSIENT, "", 0, 0},
		{401, "{\"error\":{\"code\":401,\"status\":\"UNAUTHENTICATED\"}}",
		 NULL, GB_ERR_AUTH, "UNAUTHENTICATED", 0, 1},
		{403, "{\"error\":{\"errors\":[{\"reason\":\"forbidden\"}]}}", NULL,
		 GB_ERR_AUTH, "forbidden", 0, 0},
		{404, "{\"error\":{\"errors\":[{\"reason\":\"notFound\"}]}}", NULL,
		 GB_ERR_NOT_FOUND, "notFound", 0, 0},
		{409, "{\"error\":{\"errors\":[{\"reason\":\"alreadyExists\"}]}}",
		 NULL, GB_ERR_CONFLICT, "alreadyExists", 0, 0},
		{400, "{\"error\":{\"errors\":[{\"reason\":\"invalid\"}]}}", NULL,
		 GB_ERR_INVALID, "invalid", 0, 0},
	};
	fakehost *fh = mk(0);
	gcp_ctx c;
	gcp_what w;
	(void)state;
	memset(&c, 0, sizeof(c));
	c.host = fakehost_host(fh);
	w.c = &c;
	w.what = "insert instance x";
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *hdrs[1] = {(char *)cases[i].hdr};
		gb_http_resp resp = {cases[i].status, (char *)cases[i].body,
		                     strlen(cases[i].body), cases[i].hdr ? hdrs : NULL,
		                     cases[i].hdr ? 1 : 0, 1};
		gb_error err;
		int expired = -1;
		memset(&err, 0, sizeof(err));
		assert_int_equal(gcp_classify(&w, &resp, &err, &expired),
		                 cases[i].cls);
		assert_string_equal(err.code, cases[i].code);
		assert_int_equal(err.retry_after_ms, cases[i].retry_ms);
		assert_int_equal(expired, cases[i].expired);
		assert_non_null(strstr(err.message, "insert instance x"));
	}
	assert_int_equal(gcp_op_class("ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS",
	                              503),
	                 GB_ERR_CAPACITY);
	assert_int_equal(gcp_op_class("QUOTA_EXCEEDED", 403), GB_ERR_QUOTA);
	assert_int_equal(gcp_op_class("RESOURCE_NOT_FOUND", 404), GB_ERR_INVALID);
	assert_int_equal(gcp_op_class("INTERNAL_ERROR", 500), GB_ERR_TRANSIENT);
	fakehost_free(fh);
}

static void test_throttle_end_to_end(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	const gb_instance_ref ref = {"vm-1", "us-central1", "us-central1-a"};
	gb_error err;
	(void)state;
	token_route(TOK1, 3600, -1);
	on("DELETE", "instances/vm-1?requestId=", -1, 403,
	   "{\"error\":{\"code\":403,\"errors\":[{\"reason\":"
	   "\"rateLimitExceeded\"}]}}",
	   "Retry-After: 12", NULL);
	assert_int_equal(gcp_driver_desc.terminate(ctx, &ref, 1, &err), -1);
	assert_int_equal(err.cls, GB_ERR_THROTTLED);
	assert_int_equal(err.retry_after_ms, 12000);
	assert_int_equal(fakehost_count(fh, "DELETE", "vm-1"), 3);
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

/* ----------------------------------------------------------- describe */

static void test_describe_paging_and_states(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_describe_req d;
	got g;
	gb_error err;
	char *a = inst_json("train-42-0", "us-central1-a", "RUNNING", "STANDARD",
	                    "t", "train-42");
	char *b = inst_json("train-42-1", "us-central1-a", "TERMINATED", "SPOT",
	                    "t", "train-42");
	char *c2 = inst_json("train-42-2", "us-central1-a", "STAGING", "SPOT",
	                     "t", "train-42");
	char *e = inst_json("train-42-3", "us-central1-a", "TERMINATED",
	                    "STANDARD", "t", "train-42");
	char *f = inst_json("train-42-4", "us-central1-a", "STOPPING", "SPOT",
	                    "t", "train-42");
	char *far = inst_json("train-42-9", "europe-west4-a", "RUNNING",
	                      "STANDARD", "t", "train-42");
	const char *p1[] = {a}, *p2[] = {b, c2}, *p3[] = {e, f};
	char *pg1 = agg_page(p1, 1, "us-central1-a", "tok/2=");
	char *pg2 = agg_page(p2, 2, "us-central1-a", "tok3");
	char *pg3 = agg_page(p3, 2, "us-central1-a", NULL);
	char *pgfar;
	const char *p4[] = {far};
	(void)state;
	pgfar = agg_page(p4, 1, "europe-west4-a", NULL);

	token_route(TOK1, 3600, -1);
	on("GET", "pageToken=tok%2F2%3D", 1, 200, pg2, NULL, NULL);
	on("GET", "pageToken=tok3", 1, 200, pg3, NULL, NULL);
	on("GET", "aggregated/instances?filter=", 1, 200, pg1, NULL, NULL);
	memset(&d, 0, sizeof(d));
	memset(&g, 0, sizeof(g));
	d.region = "us-central1";
	d.pool = "train-42";
	d.broker_id = "b1";
	assert_int_equal(gcp_driver_desc.describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(g.n, 5);
	assert_int_equal(g.st[0], GB_INST_RUNNING);
	assert_int_equal(g.st[1], GB_INST_PREEMPTED);
	assert_string_equal(g.reason[1], "compute.instances.preempted");
	assert_int_equal(g.cap[1], GB_CAPACITY_SPOT);
	assert_int_equal(g.st[2], GB_INST_PENDING);
	assert_int_equal(g.st[3], GB_INST_FAILED);
	assert_int_equal(g.st[4], GB_INST_STOPPING);
	assert_non_null(strstr(find_req(fh, "GET", "aggregated", 0)->url,
	                       "filter=labels.gpubroker-pool%20%3D%20%22train-42%22"
	                       "%20AND%20labels.gpubroker-broker%20%3D%20%22b1%22"
	                       "&maxResults=500"));
	assert_int_equal(fakehost_count(fh, "GET", "aggregated"), 3);
	assert_int_equal(unmatched, 0);

	/* A2 reports its built-in GPUs in guestAccelerators: the type stays
	 * the machine type. */
	{
		gcp_inst in;
		json_t *o = json_loads(
			"{\"name\":\"a\",\"zone\":\"zones/us-central1-a\","
			"\"machineType\":\"zones/us-central1-a/machineTypes/"
			"a2-highgpu-1g\",\"guestAccelerators\":[{\"acceleratorType\":"
			"\"nvidia-tesla-a100\",\"acceleratorCount\":1}]}",
			0, NULL);
		assert_int_equal(gcp_inst_parse(o, &in), 0);
		assert_string_equal(in.type, "a2-highgpu-1g");
		gcp_inst_free(&in);
		json_decref(o);
	}

	/* Instances in other regions are not reported. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("GET", "aggregated/instances", -1, 200, pgfar, NULL, NULL);
	memset(&g, 0, sizeof(g));
	assert_int_equal(gcp_driver_desc.describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(g.n, 0);

	/* By id with unknown zone: aggregatedList by name. */
	{
		const char *ids[] = {"train-42-9", "not/a/name"};
		memset(&d, 0, sizeof(d));
		d.region = "europe-west4";
		d.ids = ids;
		d.nids = 2;
		assert_int_equal(
			gcp_driver_desc.describe(ctx, &d, collect, &g, &err), 0);
		assert_int_equal(g.n, 1);
		assert_string_equal(g.zone[0], "europe-west4-a");
		assert_non_null(strstr(
			find_req(fh, "GET", "aggregated",
			         fakehost_count(fh, "GET", "aggregated") - 1)->url,
			"filter=name%20%3D%20%22train-42-9%22"));
	}
	free(a);
	free(b);
	free(c2);
	free(e);
	free(f);
	free(far);
	free(pg1);
	free(pg2);
	free(pg3);
	free(pgfar);
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_malformed_answers(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_describe_req d;
	gb_create_req r = base_req(1, "a2-highgpu-1g");
	got g;
	gb_error err;
	char *big;
	size_t bign = 20u << 20;
	(void)state;

	memset(&d, 0, sizeof(d));
	d.region = "us-central1";
	d.pool = "train-42";
	token_route(TOK1, 3600, -1);
	on("GET", "aggregated", 1, 200, "{\"items\":{\"zones/a\":{\"instances\"",
	   NULL, NULL);
	assert_int_equal(gcp_driver_desc.describe(ctx, &d, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_string_equal(err.code, "MalformedResponse");
	on("GET", "aggregated", 1, 200, "{\"items\":[1,2,3]}", NULL, NULL);
	assert_int_equal(gcp_driver_desc.describe(ctx, &d, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	/* wrong types inside: ignored, not a crash */
	on("GET", "aggregated", 1, 200,
	   "{\"items\":{\"zones/us-central1-a\":{\"instances\":[{\"name\":5},"
	   "{\"name\":\"x-1\",\"labels\":[],\"status\":{},\"zone\":7,"
	   "\"networkInterfaces\":{}}]}},\"nextPageToken\":17}",
	   NULL, NULL);
	memset(&g, 0, sizeof(g));
	assert_int_equal(gcp_driver_desc.describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(g.n, 0); /* x-1 carries no pool label */
	big = malloc(bign + 1);
	memset(big, ' ', bign);
	big[bign] = '\0';
	big[0] = '[';
	on("GET", "aggregated", 1, 200, big, NULL, NULL);
	free(big);
	assert_int_equal(gcp_driver_desc.describe(ctx, &d, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	on("GET", "aggregated", 1, 200, "<html>captive portal</html>",
	   "Content-Type: text/html", NULL);
	assert_int_equal(gcp_driver_desc.describe(ctx, &d, collect, &g, &err), -1);
	assert_string_equal(err.code, "UnexpectedContentType");

	/* A bulkInsert answered with something that is not an Operation: a
	 * transient failure whose outcome is unknown (GCE took the request).
	 * Nothing is deleted: the host replays with the same requestId,
	 * which finds the instance; deleting it would leave that requestId
	 * pointing at a deleted instance forever. */
	on("POST", BULK, 1, 200, "{\"status\":[]}", NULL, NULL);
	on("DELETE", "instances/train-42-0", -1, 200, "{}", NULL, NULL);
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_TRANSIENT);
	assert_string_equal(err.code, "MalformedOperation");
	assert_int_equal(fakehost_count(fh, "DELETE", "train-42-0"), 0);
	gcp_driver_desc.fini(ctx);

	/* Token endpoint garbage and errors. */
	routes_reset();
	ctx = init(fh);
	on("POST", TOKEN_URI, 1, 200, "<html>", "Content-Type: text/html", NULL);
	on("POST", TOKEN_URI, 1, 200, "{\"access_token\":[\"x\"]}", NULL, NULL);
	on("POST", TOKEN_URI, 1, 400,
	   "{\"error\":\"invalid_grant\",\"error_description\":\"Invalid JWT "
	   "Signature.\"}",
	   NULL, NULL);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(
			gcp_driver_desc.describe(ctx, &d, collect, &g, &err), -1);
		assert_clean(fh, &err);
	}
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_string_equal(err.code, "invalid_grant");
	assert_non_null(strstr(err.message, EMAIL));
	assert_int_equal(fakehost_count(fh, "GET", "aggregated"), 5);
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_missing_or_bad_credentials(void **state)
{
	fakehost *fh = mk(0);
	void *ctx = init(fh);
	gb_create_req r = base_req(1, "a2-highgpu-1g");
	gb_error err;
	got g;
	(void)state;

	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_non_null(strstr(err.message, "GOOGLE_APPLICATION_CREDENTIALS"));
	assert_non_null(strstr(err.message, "credentials.key_file"));
	assert_int_equal(fakehost_nrequests(fh), 0);
	gcp_driver_desc.fini(ctx);

	/* GOOGLE_APPLICATION_CREDENTIALS names a file that is not there. */
	setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/key.json", 1);
	ctx = init(fh);
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_non_null(strstr(err.message, "/nonexistent/key.json"));
	gcp_driver_desc.fini(ctx);

	/* ... and one that is: project from the key's project_id. */
	fakehost_secret(fh, "file:/nonexistent/key.json", key_json);
	ctx = init(fh);
	routes_reset();
	token_route(TOK1, 3600, -1);
	{
		gb_instance_ref ref = {"vm-1", "us-central1", "us-central1-a"};
		on("DELETE", "projects/proj-1/zones/us-central1-a/instances/vm-1?",
		   -1, 200, "{}", NULL, NULL);
		assert_int_equal(gcp_driver_desc.terminate(ctx, &ref, 1, &err), 0);
	}
	gcp_driver_desc.fini(ctx);
	unsetenv("GOOGLE_APPLICATION_CREDENTIALS");

	/* The config's other spelling, with an env: source naming a path. */
	fakehost_option(fh, "credentials.service_account_json", "env:GCP_SA_PATH");
	fakehost_secret(fh, "env:GCP_SA_PATH", "/keys/p.json");
	fakehost_secret(fh, "file:/keys/p.json", key_json);
	ctx = init(fh);
	{
		gb_instance_ref ref = {"vm-2", "us-central1", "us-central1-a"};
		on("DELETE", "projects/proj-1/zones/us-central1-a/instances/vm-2?",
		   -1, 200, "{}", NULL, NULL);
		assert_int_equal(gcp_driver_desc.terminate(ctx, &ref, 1, &err), 0);
	}
	gcp_driver_desc.fini(ctx);

	/* A key without private_key; a key whose private_key is no PEM. */
	fakehost_option(fh, "credentials.key_file", "file:/keys/bad.json");
	fakehost_secret(fh, "file:/keys/bad.json",
	                "{\"type\":\"service_account\",\"client_email\":\"a@b\"}");
	ctx = init(fh);
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_non_null(strstr(err.message, "private_key"));
	assert_non_null(strstr(err.message, "/keys/bad.json"));
	gcp_driver_desc.fini(ctx);
	fakehost_secret(fh, "file:/keys/bad.json",
	                "{\"type\":\"service_account\",\"client_email\":\"a@b\","
	                "\"private_key\":\"-----BEGIN PRIVATE KEY-----\\nnotakey"
	                "notakeynotakeynotakey\\n-----END PRIVATE KEY-----\\n\"}");
	ctx = init(fh);
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_non_null(strstr(err.message, "not a PEM RSA private key"));
	assert_null(strstr(err.message, "notakey"));
	gcp_driver_desc.fini(ctx);
	fakehost_secret(fh, "file:/keys/bad.json", "{\"type\":\"authorized_user\"}");
	ctx = init(fh);
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_non_null(strstr(err.message, "authorized_user"));
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_terminate(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	const gb_instance_ref refs[] = {{"vm-1", "us-central1", "us-central1-a"},
	                                {"vm-2", "us-central1", "us-central1-b"},
	                                {"vm-3", "us-central1", ""}};
	gb_error err;
	const fakehost_req *del;
	char *inst, *page;
	const char *one[1];
	(void)state;

	token_route(TOK1, 3600, -1);
	on("DELETE", "zones/us-central1-a/instances/vm-1?requestId=", -1, 200,
	   "{\"name\":\"op\",\"status\":\"RUNNING\"}", NULL, NULL);
	on("DELETE", "zones/us-central1-b/instances/vm-2?requestId=", -1, 404,
	   "{\"error\":{\"code\":404,\"errors\":[{\"reason\":\"notFound\"}]}}",
	   NULL, NULL);
	inst = inst_json("vm-3", "us-central1-f", "RUNNING", "SPOT", "t", "p");
	one[0] = inst;
	page = agg_page(one, 1, "us-central1-f", NULL);
	on("GET", "aggregated/instances?filter=name%20%3D%20%22vm-3%22", -1, 200,
	   page, NULL, NULL);
	on("DELETE", "zones/us-central1-f/instances/vm-3?requestId=", -1, 200,
	   "{}", NULL, NULL);
	assert_int_equal(gcp_driver_desc.terminate(ctx, refs, 3, &err), 0);
	del = find_req(fh, "DELETE", "vm-1", 0);
	assert_string_equal(del->rate_class, "gce-mutate");
	assert_int_equal(strlen(strstr(del->url, "requestId=") + 10), 36);
	assert_int_equal(fakehost_count(fh, "DELETE", "instances/"), 3);
	assert_int_equal(unmatched, 0);
	free(inst);
	free(page);
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

/* --------------------------------------------------------------- prices */

typedef struct offers {
	size_t n;
	char type[16][64];
	char zone[16][32];
	gb_capacity cap[16];
	double price[16];
	char source[128];
} offers;

static int take_offer(void *ud, const gb_offer *o)
{
	offers *of = ud;
	if (of->n < 16) {
		snprintf(of->type[of->n], 64, "%s", o->instance_type);
		snprintf(of->zone[of->n], 32, "%s", o->zone);
		of->cap[of->n] = o->capacity;
		of->price[of->n] = o->price_per_hour;
		snprintf(of->source, sizeof(of->source), "%s", o->source);
	}
	of->n++;
	return 0;
}

static char *sku(const char *desc, const char *group, const char *usage,
                 const char *regions, long units, long nanos)
{
	char *s = malloc(1024);
	snprintf(s, 1024,
	         "{\"skuId\":\"X\",\"description\":\"%s\",\"category\":{"
	         "\"serviceDisplayName\":\"Compute Engine\",\"resourceFamily\":"
	         "\"Compute\",\"resourceGroup\":\"%s\",\"usageType\":\"%s\"},"
	         "\"serviceRegions\":[%s],\"pricingInfo\":[{\"pricingExpression\":"
	         "{\"usageUnit\":\"h\",\"tieredRates\":[{\"startUsageAmount\":0,"
	         "\"unitPrice\":{\"currencyCode\":\"USD\",\"units\":\"%ld\","
	         "\"nanos\":%ld}}]}}]}",
	         desc, group, usage, regions, units, nanos);
	return s;
}

static void test_refresh_prices(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	offers of;
	gb_error err;
	char page1[16384], page2[16384];
	char *s[12];
	const fakehost_req *r;
	double a2 = 12 * 0.031611 + 85 * 0.004237 + 2.933908;
	double a2s = 12 * 0.00949 + 85 * 0.00127 + 1.1;
	double n1 = 8 * 0.031611 + 30 * 0.004237 + 0.35;
	(void)state;

	s[0] = sku("A2 Instance Core running in Americas", "CPU", "OnDemand",
	           "\"us-central1\",\"us-east1\"", 0, 31611000);
	s[1] = sku("A2 Instance Ram running in Americas", "RAM", "OnDemand",
	           "\"us-central1\"", 0, 4237000);
	s[2] = sku("Nvidia Tesla A100 GPU running in Americas", "GPU", "OnDemand",
	           "\"us-central1\"", 2, 933908000);
	s[3] = sku("Spot Preemptible A2 Instance Core running in Americas", "CPU",
	           "Preemptible", "\"us-central1\"", 0, 9490000);
	s[4] = sku("Spot Preemptible A2 Instance Ram running in Americas", "RAM",
	           "Preemptible", "\"us-central1\"", 0, 1270000);
	s[5] = sku("Nvidia Tesla A100 GPU attached to Spot Preemptible VMs "
	           "running in Americas", "GPU", "Preemptible", "\"us-central1\"",
	           1, 100000000);
	s[6] = sku("Commitment v1: A2 Cpu in Americas for 1 Year", "CPU",
	           "Commit1Yr", "\"us-central1\"", 0, 1);
	s[7] = sku("N1 Predefined Instance Core running in Americas", "CPU",
	           "OnDemand", "\"us-central1\"", 0, 31611000);
	s[8] = sku("N1 Predefined Instance Ram running in Americas", "RAM",
	           "OnDemand", "\"us-central1\"", 0, 4237000);
	s[9] = sku("Nvidia Tesla T4 GPU running in Americas", "GPU", "OnDemand",
	           "\"us-central1\"", 0, 350000000);
	s[10] = sku("Nvidia Tesla A100 GPU running in EMEA", "GPU", "OnDemand",
	            "\"europe-west4\"", 3, 0);
	s[11] = NULL;
	snprintf(page1, sizeof(page1),
	         "{\"skus\":[%s,%s,%s,%s,%s,%s],\"nextPageToken\":\"p2\"}", s[0],
	         s[1], s[2], s[3], s[4], s[5]);
	snprintf(page2, sizeof(page2), "{\"skus\":[%s,%s,%s,%s,%s,{\"x\":1}]}",
	         s[6], s[7], s[8], s[9], s[10]);
	for (int i = 0; s[i]; i++)
		free(s[i]);
	token_route(TOK1, 3600, -1);
	on("GET", "skus?currencyCode=USD&pageSize=5000&pageToken=p2", 1, 200,
	   page2, NULL, NULL);
	on("GET", "billing.test/v1/services/6F81-5844-456A/skus?currencyCode=USD"
	          "&pageSize=5000",
	   1, 200, page1, NULL, NULL);
	memset(&of, 0, sizeof(of));
	assert_int_equal(gcp_driver_desc.refresh_prices(ctx, "us-central1",
	                                                take_offer, &of, &err),
	                 0);
	/* a2-highgpu-1g: 2 zones x (on-demand, spot); n1+T4: 1 zone, on-demand
	 * only (no spot SKUs on the pages). */
	assert_int_equal(of.n, 5);
	assert_string_equal(of.type[0], "a2-highgpu-1g");
	assert_int_equal(of.cap[0], GB_CAPACITY_ON_DEMAND);
	assert_true(of.price[0] > a2 - 1e-9 && of.price[0] < a2 + 1e-9);
	assert_int_equal(of.cap[1], GB_CAPACITY_SPOT);
	assert_true(of.price[1] > a2s - 1e-9 && of.price[1] < a2s + 1e-9);
	assert_string_equal(of.type[4], "n1-standard-8/nvidia-tesla-t4:1");
	assert_true(of.price[4] > n1 - 1e-9 && of.price[4] < n1 + 1e-9);
	assert_string_equal(of.source, "gcp-billing-catalog https://billing.test/v1");
	r = find_req(fh, "GET", "skus", 0);
	assert_string_equal(r->rate_class, "billing");
	assert_string_equal(fakehost_req_header(r, "Authorization"),
	                    "Bearer " TOK1);
	assert_int_equal(unmatched, 0);
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

/* -------------------------------------------------------------- setup */

static int make_key(void)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *pem, *p;
	long n;
	json_t *k;
	pkey = EVP_RSA_gen(2048);
	if (!pkey || !bio || !PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0,
	                                               NULL, NULL))
		return -1;
	n = BIO_get_mem_data(bio, &p);
	pem = strndup(p, (size_t)n);
	BIO_free(bio);
	/* a base64 line from the middle of the key */
	p = strchr(pem, '\n');
	p = strchr(p + 1, '\n');
	snprintf(pem_line, sizeof(pem_line), "%.40s", p + 1);
	k = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "type", "service_account",
	              "project_id", "proj-1", "private_key_id", "key-id-1",
	              "private_key", pem, "client_email", EMAIL, "client_id",
	              "1234567890", "token_uri", TOKEN_URI);
	key_json = json_dumps(k, JSON_INDENT(2));
	json_decref(k);
	free(pem);
	return key_json ? 0 : -1;
}

/* A create that ends TRANSIENT (every try of the bulkInsert answered
 * 503: GCE may have made them): the outcome is unknown to the host, which
 * replays with the same token.  Nothing is deleted (a deleted instance
 * behind a deduplicated requestId could never be made by the replay), and
 * the replay, with the same requestId, returns both instances. */
static void test_create_transient_left_for_replay(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_create_req r = base_req(2, "a2-highgpu-1g");
	got g;
	gb_error err;
	char first[300];
	(void)state;
	token_route(TOK1, 3600, -1);
	on("POST", BULK, -1, 503,
	   "{\"error\":{\"code\":503,\"message\":\"backend\","
	   "\"errors\":[{\"reason\":\"backendError\"}]}}", NULL, NULL);
	on("DELETE", "instances/train-42-", -1, 200,
	   "{\"name\":\"op-del\",\"status\":\"RUNNING\"}", NULL, NULL);
	memset(&g, 0, sizeof(g));
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_TRANSIENT);
	assert_int_equal(fakehost_count(fh, "DELETE", "instances"), 0);
	assert_int_equal(g.n, 0);
	snprintf(first, sizeof(first), "%s", find_req(fh, "POST", BULK, 0)->url);

	/* the replay: its requestId returns the (now DONE) operation */
	routes_reset();
	token_route(TOK1, 3600, -1);
	bulk_routes("us-central1-a", "op-a", 0, NULL);
	inst_route("train-42-0", "us-central1-a", "RUNNING", "0123abcdef", -1);
	inst_route("train-42-1", "us-central1-a", "RUNNING", "0123abcdef", -1);
	memset(&g, 0, sizeof(g));
	assert_int_equal(gcp_driver_desc.create(ctx, &r, collect, &g, &err), 0);
	assert_int_equal(g.n, 2);
	assert_string_equal(find_req(fh, "POST", BULK,
	                             fakehost_count(fh, "POST", BULK) - 1)->url,
	                    first);
	assert_int_equal(fakehost_count(fh, "DELETE", "instances"), 0);
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

/* Numeric and boolean options are read strictly: a bad value fails
 * init with the option's name, what it accepts and what was found. */
static void test_bad_options(void **state)
{
	static const char *const cases[][3] = {
		{"poll_interval_ms", "fast", "option poll_interval_ms: expected a "
		                             "whole number from 1 to 600000, found "
		                             "\"fast\""},
		{"create_timeout_s", "0", "option create_timeout_s"},
		{"public_ip", "maybe", "option public_ip: expected true or false, "
		                       "found \"maybe\""},
		{"disk_gb", "big", "option disk_gb"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fakehost *fh = mk(1);
		char *why = fakehost_init_refusal(fh, &gcp_driver_desc, cases[i][0],
		                                  cases[i][1], cases[i][2]);
		fakehost_free(fh);
		if (why)
			fail_msg("%s", why);
	}
}

/* The image when a spec names none (issue 5 item 7): the option
 * image.<region>, else the option image, else the driver's GPU-ready
 * default.  (A spec's own image wins before any of these: see create.) */
static void test_image_choice(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	(void)state;
	assert_string_equal(gcp_image_for(ctx, "europe-west4"), GCP_DEFAULT_IMAGE);
	assert_string_equal(gcp_image_for(ctx, NULL), GCP_DEFAULT_IMAGE);
	gcp_driver_desc.fini(ctx);
	fakehost_option(fh, "image", "img-everywhere");
	fakehost_option(fh, "image.europe-west4", "img-regional");
	ctx = init(fh);
	assert_string_equal(gcp_image_for(ctx, "europe-west4"), "img-regional");
	assert_string_equal(gcp_image_for(ctx, "us-central1"), "img-everywhere");
	gcp_driver_desc.fini(ctx);
	fakehost_free(fh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jwt_and_token_request),
		cmocka_unit_test(test_token_cache_refresh_and_401),
		cmocka_unit_test(test_bulk_bodies),
		cmocka_unit_test(test_names_labels_request_ids),
		cmocka_unit_test(test_create_polls_and_emits),
		cmocka_unit_test(test_create_refused_makes_nothing),
		cmocka_unit_test(test_create_conflict),
		cmocka_unit_test(test_create_transient_left_for_replay),
		cmocka_unit_test(test_image_choice),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_error_classes),
		cmocka_unit_test(test_throttle_end_to_end),
		cmocka_unit_test(test_describe_paging_and_states),
		cmocka_unit_test(test_malformed_answers),
		cmocka_unit_test(test_missing_or_bad_credentials),
		cmocka_unit_test(test_terminate),
		cmocka_unit_test(test_refresh_prices),
	};
	const char *t = getenv("TMPDIR");
	FILE *f;
	int rc;
	unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
	unsetenv("GOOGLE_CLOUD_PROJECT");
	unsetenv("CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE");
	unsetenv("GCP_BILLING_ENDPOINT");
	if (make_key() != 0) {
		fprintf(stderr, "cannot generate an RSA key\n");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_gcp.XXXXXX",
	         t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(catalog, sizeof(catalog), "%s/gcp-offers.json", tmpdir);
	f = fopen(catalog, "w");
	if (!f)
		return 1;
	fputs("{\"format\":1,\"cloud\":\"gcp\",\"source\":\"test\","
	      "\"fetched_at\":\"2026-01-01\",\"types\":["
	      "{\"type\":\"a2-highgpu-1g\",\"gpu\":\"A100\",\"gpus\":1,"
	      "\"gpu_memory_gb\":40,\"vcpus\":12,\"ram_gb\":85,\"regions\":{"
	      "\"us-central1\":{\"on_demand\":3.67,\"spot\":1.2,\"zones\":"
	      "[\"us-central1-a\",\"us-central1-c\"]},"
	      "\"europe-west4\":{\"on_demand\":3.9,\"zones\":[\"europe-west4-a\"]}}},"
	      "{\"type\":\"n1-standard-8/nvidia-tesla-t4:1\",\"gpu\":\"T4\","
	      "\"gpus\":1,\"gpu_memory_gb\":16,\"vcpus\":8,\"ram_gb\":30,"
	      "\"regions\":{\"us-central1\":{\"on_demand\":0.73,\"zones\":"
	      "[\"us-central1-b\"]}}}]}",
	      f);
	fclose(f);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(catalog);
	rmdir(tmpdir);
	routes_reset();
	free(key_json);
	EVP_PKEY_free(pkey);
	return rc;
}
