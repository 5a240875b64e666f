/*
 * test_azure.c -- the Azure driver against the fake host: the
 * client-credentials token request, token caching and refresh, the exact
 * VM PUT bodies (on-demand, spot, zone, tags), operation polling with
 * Retry-After, all-or-nothing cleanup, error classes, describe paging and
 * states, terminate, refresh_prices from Retail Prices pages, malformed
 * answers, missing credentials -- and that no secret reaches an error
 * message or a log line.
 *
 * The fake ARM is a route table: each route answers requests whose method
 * matches and whose URL contains a substring, a fixed number of times.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../drivers/azure/azure.h"
#include "drvc_enc.h"
#include "drvc_mem.h"
#include "drvc_token.h"
#include "fakehost.h"

#define SECRET "s3cr3t-Az+ure/value=="
#define TOK1 "eyJ0eXAiOiJKV1QiLCJ-access-token-one"
#define TOK2 "eyJ0eXAiOiJKV1QiLCJ-access-token-two"
#define ARM "https://arm.test"
#define LOGIN "https://login.test"
#define SUBNET "/subscriptions/sub1/resourceGroups/net/providers/" \
	"Microsoft.Network/virtualNetworks/vnet1/subnets/default"
#define VMS ARM "/subscriptions/sub1/resourceGroups/rg1/providers/" \
	"Microsoft.Compute/virtualMachines"
#define OPS ARM "/subscriptions/sub1/providers/Microsoft.Compute/" \
	"locations/eastus/operations/"
#define SSHKEY "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBroker test@ci"

/* ------------------------------------------------------------ fake ARM */

typedef struct route {
	const char *method;
	char *sub;
	long status;
	char *body;
	char *h[3];
	int times; /* -1: forever */
} route;

static route routes[128];
static size_t nroutes;
static int unmatched;
static char tmpdir[256];

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
	const char *inm = fakehost_req_header(req, "If-None-Match");
	for (size_t i = 0; i < nroutes; i++) {
		route *r = &routes[i];
		/* "PUT-INM": only a PUT with If-None-Match: * (create only) */
		int cond = strcmp(r->method, "PUT-INM") == 0;
		if (r->times == 0 || !strstr(req->url, r->sub))
			continue;
		if (cond ? strcmp(req->method, "PUT") != 0 || !inm ||
		                   strcmp(inm, "*") != 0
		         : strcmp(r->method, req->method) != 0)
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
	fprintf(stderr, "fake ARM: no route for %s %s\n", req->method,
	        req->url);
	*status = 599;
	*body = strdup("{\"error\":{\"code\":\"NoRoute\",\"message\":\"no route\"}}");
}

static void token_route(const char *tok, int expires_in, int times)
{
	char b[256];
	snprintf(b, sizeof(b),
	         "{\"token_type\":\"Bearer\",\"expires_in\":%d,"
	         "\"ext_expires_in\":%d,\"access_token\":\"%s\"}",
	         expires_in, expires_in, tok);
	on("POST", "/tenant-1/oauth2/v2.0/token", times, 200, b,
	   "Content-Type: application/json; charset=utf-8", NULL);
}

/* A VM as ARM returns it (GET with $expand=instanceView). */
static char *vm_json(const char *name, const char *prov, const char *power,
                     const char *priority, const char *token,
                     const char *pool)
{
	char *s = malloc(4096);
	snprintf(s, 4096,
	         "{\"name\":\"%s\",\"id\":\"%s/%s\",\"location\":\"eastus\","
	         "\"zones\":[\"2\"],"
	         "\"tags\":{\"gpubroker-pool\":\"%s\",\"gpubroker-broker\":"
	         "\"b1\",\"gpubroker-token\":\"%s\",\"gpubroker-team\":"
	         "\"research\"},"
	         "\"properties\":{\"vmId\":\"id-%s\",\"hardwareProfile\":{"
	         "\"vmSize\":\"Standard_NC24ads_A100_v4\"},\"priority\":\"%s\","
	         "\"provisioningState\":\"%s\",\"timeCreated\":"
	         "\"2023-11-14T22:13:20.5+00:00\","
	         "\"networkProfile\":{\"networkInterfaces\":[{\"id\":"
	         "\"/subscriptions/sub1/resourceGroups/rg1/providers/"
	         "Microsoft.Network/networkInterfaces/%s-nic\"}]},"
	         "\"instanceView\":{\"statuses\":[{\"code\":"
	         "\"ProvisioningState/%s\"},{\"code\":\"PowerState/%s\"}]}}}",
	         name, VMS, name, pool, token, name, priority, prov, name, prov,
	         power);
	return s;
}

static void nic_route(const char *vm, const char *ip)
{
	char sub[128], b[512];
	snprintf(sub, sizeof(sub), "networkInterfaces/%s-nic?", vm);
	snprintf(b, sizeof(b),
	         "{\"name\":\"%s-nic\",\"properties\":{\"ipConfigurations\":"
	         "[{\"name\":\"ipconfig1\",\"properties\":{\"primary\":true,"
	         "\"privateIPAddress\":\"%s\"}}]}}",
	         vm, ip);
	on("GET", sub, -1, 200, b, NULL, NULL);
}

/* ------------------------------------------------------------- helpers */

static fakehost *mk(int creds)
{
	fakehost *fh = fakehost_new();
	routes_reset();
	fakehost_set_handler(fh, handler, NULL);
	fakehost_option(fh, "arm_endpoint", ARM);
	fakehost_option(fh, "authority_host", LOGIN);
	fakehost_option(fh, "subscription_id", "sub1");
	fakehost_option(fh, "resource_group", "rg1");
	fakehost_option(fh, "subnet_id", SUBNET);
	fakehost_option(fh, "prices_endpoint", "https://prices.test/api/retail/prices");
	fakehost_option(fh, "poll_interval_ms", "1000");
	if (creds) {
		fakehost_option(fh, "tenant_id", "tenant-1");
		fakehost_option(fh, "client_id", "client-1");
		fakehost_secret(fh, "env:AZURE_CLIENT_SECRET", SECRET);
	}
	return fh;
}

static void *init(fakehost *fh)
{
	void *ctx = NULL;
	gb_error err;
	memset(&err, 0, sizeof(err));
	assert_int_equal(azure_driver_desc.init(fakehost_host(fh), &ctx, &err),
	                 0);
	assert_non_null(ctx);
	return ctx;
}

typedef struct got {
	size_t n;
	char ids[16][80];
	gb_instance_state st[16];
	char reason[16][64];
	char priv[16][32];
	gb_capacity cap[16];
	int64_t created[16], created_ms[16];
	char zone[16][16];
} got;

static int collect(void *ud, const gb_instance *in)
{
	got *g = ud;
	if (g->n < 16) {
		snprintf(g->ids[g->n], 80, "%s", in->id);
		g->st[g->n] = in->state;
		snprintf(g->reason[g->n], 64, "%s",
		         in->state_reason ? in->state_reason : "");
		snprintf(g->priv[g->n], 32, "%s",
		         in->private_ip ? in->private_ip : "");
		g->cap[g->n] = in->capacity;
		g->created[g->n] = in->created_at;
		g->created_ms[g->n] = in->created_ms;
		snprintf(g->zone[g->n], 16, "%s", in->zone);
	}
	g->n++;
	return 0;
}

static const char *const keys[] = {SSHKEY};
static const gb_kv extra_tags[] = {{"project", "llm"},
                                   {"cost-center", "4411"}};

static gb_create_req base_req(unsigned count)
{
	gb_create_req r;
	memset(&r, 0, sizeof(r));
	r.pool = "train-42";
	r.broker_id = "b1";
	r.team = "research";
	r.region = "eastus";
	r.zone = "";
	r.instance_type = "Standard_NC24ads_A100_v4";
	r.capacity = GB_CAPACITY_ON_DEMAND;
	r.count = count;
	r.token = "tok-abc123";
	r.name_prefix = "pool-a";
	r.first_index = 0;
	r.tags = extra_tags;
	r.ntags = 2;
	r.ssh_keys = keys;
	r.nssh_keys = 1;
	return r;
}

/* Secrets must never appear in an error or a log line. */
static void assert_clean(fakehost *fh, const gb_error *err)
{
	const char *logs = fakehost_logs(fh);
	const char *bad[] = {SECRET, TOK1, TOK2, "s3cr3t"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (err)
			assert_null(strstr(err->message, bad[i]));
		assert_null(strstr(logs, bad[i]));
	}
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

/* Value of a form field (decoded), malloc'd, or NULL. */
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

/* Standard happy create routes for VM `name` with op `op`. */
/* A VM's create: the PUT (Retry-After: 7), the VM read `creating` times
 * while provisioning, then as it ends (Failed when final_status, the
 * operation's status body, is not Succeeded; the operation is read only
 * then), and its NIC. */
static void create_routes(const char *name, const char *op,
                          const char *final_status, int creating)
{
	int ok = strstr(final_status, "Succeeded") != NULL;
	char *vm = vm_json(name, ok ? "Succeeded" : "Failed",
	                   ok ? "running" : "stopped", "Regular", "tok-abc123",
	                   "train-42");
	char get[128], opsub[128];
	char hdr[512];
	snprintf(get, 128, "virtualMachines/%s?", name);
	snprintf(opsub, 128, "operations/%s?", op);
	snprintf(hdr, sizeof(hdr),
	         "Azure-AsyncOperation: " OPS "%s?api-version=2024-07-01", op);
	on("PUT", get, -1, 201,
	   "{\"name\":\"x\",\"properties\":{\"provisioningState\":\"Creating\"}}",
	   hdr, "Retry-After: 7");
	if (creating) {
		char *cr = vm_json(name, "Creating", "starting", "Regular",
		                   "tok-abc123", "train-42");
		on("GET", get, creating, 200, cr, NULL, NULL);
		free(cr);
	}
	on("GET", opsub, -1, 200, final_status, NULL, NULL);
	on("GET", get, -1, 200, vm, NULL, NULL);
	free(vm);
	nic_route(name, "10.0.0.4");
}

/* --------------------------------------------------------------- tests */

/* The OAuth token response parser shared by Azure and GCP: a bearer
 * token and its lifetime, and errors that name the response and never
 * quote the body. */
static void test_token_response_parse(void **state)
{
	static const char ok[] = "{\"token_type\":\"Bearer\",\"expires_in\":"
	                         "\"3599\",\"access_token\":\"abc.def\"}";
	static const char *const bad[] = {
		"{\"access_token\":\"SECRETPART", /* truncated JSON */
		"{\"token_type\":\"MAC\",\"access_token\":\"SECRETPART\"}",
		"{\"access_token\":\"SECRET\\r\\nX-Injected: 1\"}",
		"{\"expires_in\":3600}",
	};
	char *tok = NULL;
	int64_t exp = -1;
	gb_error err;
	(void)state;
	memset(&err, 0, sizeof(err));
	assert_int_equal(azure_parse_token(ok, strlen(ok), &tok, &exp, &err), 0);
	assert_string_equal(tok, "abc.def");
	assert_int_equal(exp, 3599);
	drvc_free_secret(tok);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		tok = NULL;
		assert_int_equal(drvc_parse_token_response(bad[i], strlen(bad[i]),
		                                           1 << 20,
		                                           "GCP token response",
		                                           &tok, &exp, &err),
		                 -1);
		assert_null(tok);
		assert_string_equal(err.code, "MalformedTokenResponse");
		assert_non_null(strstr(err.message, "GCP token response"));
		assert_null(strstr(err.message, "SECRET"));
	}
}

static void test_token_request_shape(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	const char *ids[] = {"pool-a-0"};
	gb_describe_req d;
	got g;
	gb_error err;
	const fakehost_req *t, *r;
	char *v;
	(void)state;

	token_route(TOK1, 3600, -1);
	{
		char *vm = vm_json("pool-a-0", "Succeeded", "running", "Regular",
		                   "t", "train-42");
		on("GET", "virtualMachines/pool-a-0?", -1, 200, vm, NULL, NULL);
		free(vm);
	}
	nic_route("pool-a-0", "10.0.0.4");
	memset(&d, 0, sizeof(d));
	memset(&g, 0, sizeof(g));
	d.region = "eastus";
	d.ids = ids;
	d.nids = 1;
	assert_int_equal(azure_driver_desc.describe(ctx, &d, collect, &g, &err),
	                 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.st[0], GB_INST_RUNNING);
	assert_string_equal(g.priv[0], "10.0.0.4");
	assert_string_equal(g.zone[0], "2");
	assert_int_equal(g.created[0], 1700000000);
	/* ABI minor 3: ".5" is 500 ms */
	assert_int_equal(g.created_ms[0], 1700000000500LL);

	t = fakehost_request(fh, 0);
	assert_string_equal(t->method, "POST");
	assert_string_equal(t->url, LOGIN "/tenant-1/oauth2/v2.0/token");
	assert_string_equal(t->rate_class, "aad-token");
	assert_string_equal(fakehost_req_header(t, "Content-Type"),
	                    "application/x-www-form-urlencoded");
	assert_null(fakehost_req_header(t, "Authorization"));
	v = form_field(t->body, "grant_type");
	assert_string_equal(v, "client_credentials");
	free(v);
	v = form_field(t->body, "client_id");
	assert_string_equal(v, "client-1");
	free(v);
	v = form_field(t->body, "client_secret");
	assert_string_equal(v, SECRET);
	free(v);
	v = form_field(t->body, "scope");
	assert_string_equal(v, "https://management.azure.com/.default");
	free(v);

	r = fakehost_request(fh, 1);
	assert_string_equal(r->method, "GET");
	assert_string_equal(r->url, VMS "/pool-a-0?api-version=2024-07-01"
	                                "&$expand=instanceView");
	assert_string_equal(r->rate_class, "arm-read");
	assert_string_equal(fakehost_req_header(r, "Authorization"),
	                    "Bearer " TOK1);
	assert_int_equal(unmatched, 0);
	assert_clean(fh, NULL);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_token_cache_and_refresh(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	const gb_instance_ref ref = {"gone-1", "eastus", ""};
	gb_error err;
	(void)state;

	token_route(TOK1, 3600, 1);
	token_route(TOK2, 3600, -1);
	on("DELETE", "virtualMachines/gone-1?", -1, 404,
	   "{\"error\":{\"code\":\"ResourceNotFound\",\"message\":\"x\"}}",
	   NULL, NULL);
	for (int i = 0; i < 4; i++)
		assert_int_equal(azure_driver_desc.terminate(ctx, &ref, 1, &err),
		                 0);
	assert_int_equal(fakehost_count(fh, "POST", "oauth2"), 1);
	/* 50 minutes later: still within the token's life minus 5 min. */
	fakehost_set_now(fh, 1700000000000LL + 3000 * 1000LL);
	assert_int_equal(azure_driver_desc.terminate(ctx, &ref, 1, &err), 0);
	assert_int_equal(fakehost_count(fh, "POST", "oauth2"), 1);
	/* 57 minutes: inside the refresh margin -> a new token. */
	fakehost_set_now(fh, 1700000000000LL + 3420 * 1000LL);
	assert_int_equal(azure_driver_desc.terminate(ctx, &ref, 1, &err), 0);
	assert_int_equal(fakehost_count(fh, "POST", "oauth2"), 2);
	assert_string_equal(
		fakehost_req_header(fakehost_request(fh, fakehost_nrequests(fh) - 1),
		                    "Authorization"),
		"Bearer " TOK2);
	assert_clean(fh, &err);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_expired_token_refreshed_once(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	const gb_instance_ref ref = {"vm-1", "eastus", ""};
	gb_error err;
	const fakehost_req *last;
	(void)state;

	token_route(TOK1, 3600, 1);
	token_route(TOK2, 3600, -1);
	on("DELETE", "virtualMachines/vm-1?", 1, 401,
	   "{\"error\":{\"code\":\"ExpiredAuthenticationToken\",\"message\":"
	   "\"The access token expiry UTC time '1/1/2024' is earlier than "
	   "current UTC time\"}}",
	   NULL, NULL);
	on("DELETE", "virtualMachines/vm-1?", -1, 202, "", NULL, NULL);
	assert_int_equal(azure_driver_desc.terminate(ctx, &ref, 1, &err), 0);
	assert_int_equal(fakehost_count(fh, "POST", "oauth2"), 2);
	assert_int_equal(fakehost_count(fh, "DELETE", "vm-1"), 2);
	last = fakehost_request(fh, fakehost_nrequests(fh) - 1);
	assert_string_equal(fakehost_req_header(last, "Authorization"),
	                    "Bearer " TOK2);

	/* A token that keeps being refused ends as AUTH, after one refresh. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("DELETE", "virtualMachines/vm-1?", -1, 401,
	   "{\"error\":{\"code\":\"InvalidAuthenticationToken\",\"message\":"
	   "\"bad\"}}",
	   NULL, NULL);
	assert_int_equal(azure_driver_desc.terminate(ctx, &ref, 1, &err), -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_string_equal(err.code, "InvalidAuthenticationToken");
	assert_clean(fh, &err);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static const char expect_ondemand[] =
	"{\"location\":\"eastus\",\"properties\":{\"hardwareProfile\":{"
	"\"vmSize\":\"Standard_NC24ads_A100_v4\"},\"networkProfile\":{"
	"\"networkApiVersion\":\"2020-11-01\",\"networkInterfaceConfigurations\":"
	"[{\"name\":\"pool-a-0-nic\",\"properties\":{\"deleteOption\":\"Delete\","
	"\"ipConfigurations\":[{\"name\":\"ipconfig1\",\"properties\":{"
	"\"primary\":true,\"subnet\":{\"id\":\"" SUBNET "\"}}}],\"primary\":true}}"
	"]},\"osProfile\":{\"adminUsername\":\"azureuser\",\"computerName\":"
	"\"pool-a-0\",\"customData\":\"I2Nsb3VkLWNvbmZpZwpydW5jbWQ6IFtlY2hvLCBoaV0K\","
	"\"linuxConfiguration\":{\"disablePasswordAuthentication\":true,\"ssh\":"
	"{\"publicKeys\":[{\"keyData\":\"" SSHKEY "\",\"path\":"
	"\"/home/azureuser/.ssh/authorized_keys\"}]}}},\"storageProfile\":{"
	"\"imageReference\":{\"offer\":\"ubuntu-hpc\",\"publisher\":"
	"\"microsoft-dsvm\",\"sku\":\"2204\",\"version\":\"latest\"},\"osDisk\":"
	"{\"createOption\":\"FromImage\",\"deleteOption\":\"Delete\","
	"\"managedDisk\":{\"storageAccountType\":\"StandardSSD_LRS\"}}}},"
	"\"tags\":{\"cost-center\":\"4411\",\"gpubroker-broker\":\"b1\","
	"\"gpubroker-pool\":\"train-42\",\"gpubroker-team\":\"research\","
	"\"gpubroker-token\":\"tok-abc123\",\"project\":\"llm\"}}";

static void test_put_body_exact(void **state)
{
	gb_create_req r = base_req(1);
	azure_vm_params p = {SUBNET, AZURE_DEFAULT_IMAGE, NULL,
	                     "StandardSSD_LRS", 0, 0};
	gb_error err;
	char *b1, *b2;
	json_t *j;
	(void)state;

	r.user_data = "#cloud-config\nruncmd: [echo, hi]\n";
	b1 = azure_vm_body(&r, "pool-a-0", &p, &err);
	assert_non_null(b1);
	assert_string_equal(b1, expect_ondemand);
	/* Deterministic: the retry of a PUT sends the same bytes. */
	b2 = azure_vm_body(&r, "pool-a-0", &p, &err);
	assert_string_equal(b1, b2);
	free(b1);
	free(b2);

	/* Spot, zone given as "eastus-2", a max price, public IP, an image
	 * resource id. */
	r.capacity = GB_CAPACITY_SPOT;
	r.zone = "eastus-2";
	r.max_price = 4.25;
	r.user_data = NULL;
	p.public_ip = 1;
	p.image = "/subscriptions/sub1/resourceGroups/img/providers/"
	          "Microsoft.Compute/galleries/g/images/cuda/versions/1.0.0";
	b1 = azure_vm_body(&r, "pool-a-0", &p, &err);
	assert_non_null(b1);
	j = json_loads(b1, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_array_get(
	                            json_object_get(j, "zones"), 0)),
	                    "2");
	{
		json_t *pr = json_object_get(j, "properties");
		json_t *ipc = json_array_get(
			json_object_get(
				json_object_get(
					json_array_get(
						json_object_get(
							json_object_get(pr, "networkProfile"),
							"networkInterfaceConfigurations"),
						0),
					"properties"),
				"ipConfigurations"),
			0);
		json_t *pip = json_object_get(json_object_get(ipc, "properties"),
		                              "publicIPAddressConfiguration");
		assert_string_equal(
			json_string_value(json_object_get(pr, "priority")), "Spot");
		assert_string_equal(
			json_string_value(json_object_get(pr, "evictionPolicy")),
			"Deallocate");
		assert_true(json_real_value(json_object_get(
				    json_object_get(pr, "billingProfile"), "maxPrice")) ==
		            4.25);
		assert_string_equal(
			json_string_value(json_object_get(
				json_object_get(json_object_get(pr, "storageProfile"),
				                "imageReference"),
				"id")),
			p.image);
		assert_string_equal(json_string_value(json_object_get(pip, "name")),
		                    "pool-a-0-pip");
		assert_string_equal(
			json_string_value(json_object_get(
				json_object_get(pip, "properties"), "deleteOption")),
			"Delete");
		assert_null(json_object_get(json_object_get(pr, "osProfile"),
		                            "customData"));
	}
	json_decref(j);
	free(b1);

	/* Spot without max price: -1 (capped at the pay-as-you-go price). */
	r.max_price = 0;
	b1 = azure_vm_body(&r, "pool-a-0", &p, &err);
	assert_non_null(strstr(b1, "\"billingProfile\":{\"maxPrice\":-1}"));
	free(b1);

	/* No SSH key: Azure needs one when passwords are off. */
	r.nssh_keys = 0;
	assert_null(azure_vm_body(&r, "pool-a-0", &p, &err));
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_string_equal(err.code, "SshKeyRequired");
	r.nssh_keys = 1;
	/* Bad names and images. */
	assert_null(azure_vm_body(&r, "-bad", &p, &err));
	assert_int_equal(err.cls, GB_ERR_INVALID);
	p.image = "Canonical:ubuntu:22_04";
	assert_null(azure_vm_body(&r, "pool-a-0", &p, &err));
	assert_string_equal(err.code, "InvalidImage");
}

static void test_create_polls_and_emits(void **state)
{
	fakehost *fh = mk(1);
	void *ctx;
	gb_create_req r = base_req(1);
	got g;
	gb_error err;
	const fakehost_req *put;
	int64_t t0;
	(void)state;

	/* a per-region subnet wins over subnet_id */
	fakehost_option(fh, "subnet_id.eastus",
	                "/subscriptions/sub1/resourceGroups/net/providers/"
	                "Microsoft.Network/virtualNetworks/v2/subnets/gpu-eastus");
	ctx = init(fh);
	token_route(TOK1, 3600, -1);
	create_routes("pool-a-0", "op-0", "{\"status\":\"Succeeded\"}", 2);
	memset(&g, 0, sizeof(g));
	t0 = fakehost_host(fh)->now_ms(fakehost_host(fh)->ctx);
	assert_int_equal(azure_driver_desc.create(ctx, &r, collect, &g, &err),
	                 0);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.ids[0], "pool-a-0");
	assert_int_equal(g.st[0], GB_INST_RUNNING);
	assert_string_equal(g.priv[0], "10.0.0.4");
	/* The VM itself is read, not the operation: three reads (Creating,
	 * Creating, Succeeded), the PUT's Retry-After: 7 before the first and
	 * between them.  No GET before the PUT (If-None-Match: * guards the
	 * name), and the operation is never read when the VM succeeds. */
	assert_int_equal(fakehost_count(fh, "GET", "virtualMachines/pool-a-0?"), 3);
	assert_int_equal(fakehost_count(fh, "GET", "operations/op-0"), 0);
	assert_true(fakehost_host(fh)->now_ms(fakehost_host(fh)->ctx) - t0 >=
	            21000);
	assert_int_equal(fakehost_count(fh, "PUT", "virtualMachines/pool-a-0?"), 1);
	put = find_req(fh, "PUT", "virtualMachines/pool-a-0?", 0);
	assert_non_null(put);
	assert_string_equal(fakehost_req_header(put, "If-None-Match"), "*");
	assert_string_equal(put->url, VMS "/pool-a-0?api-version=2024-07-01");
	assert_string_equal(put->rate_class, "arm-write");
	assert_string_equal(fakehost_req_header(put, "Authorization"),
	                    "Bearer " TOK1);
	{
		json_t *j = json_loads(put->body, 0, NULL);
		json_t *tags = json_object_get(j, "tags");
		assert_string_equal(
			json_string_value(json_object_get(tags, "gpubroker-token")),
			"tok-abc123");
		assert_string_equal(
			json_string_value(json_object_get(
				json_object_get(
					json_object_get(json_object_get(j, "properties"),
					                "storageProfile"),
					"imageReference"),
				"publisher")),
			"microsoft-dsvm");
		assert_non_null(strstr(put->body, "subnets/gpu-eastus\""));
		assert_null(strstr(put->body, "subnets/default\""));
		json_decref(j);
	}
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines"), 0);
	assert_int_equal(unmatched, 0);
	assert_clean(fh, &err);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_create_all_or_nothing(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_create_req r = base_req(2);
	got g;
	gb_error err;
	(void)state;

	token_route(TOK1, 3600, -1);
	create_routes("pool-a-0", "op-0", "{\"status\":\"Succeeded\"}", 1);
	create_routes("pool-a-1", "op-1",
	              "{\"status\":\"Failed\",\"error\":{\"code\":"
	              "\"AllocationFailed\",\"message\":\"Allocation failed. We "
	              "do not have sufficient capacity for the requested VM "
	              "size in this region.\"}}",
	              1);
	on("DELETE", "virtualMachines/pool-a-", -1, 202, "", NULL, NULL);
	memset(&g, 0, sizeof(g));
	assert_int_equal(azure_driver_desc.create(ctx, &r, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_CAPACITY);
	assert_string_equal(err.code, "AllocationFailed");
	assert_non_null(strstr(err.message, "pool-a-1"));
	assert_non_null(strstr(err.message, "cleanup"));
	assert_int_equal(g.n, 0);
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines/pool-a-0?"),
	                 1);
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines/pool-a-1?"),
	                 1);
	assert_string_equal(
		find_req(fh, "DELETE", "pool-a-0", 0)->rate_class, "arm-delete");
	/* the failed VM's operation was read for its error, the other's not */
	assert_int_equal(fakehost_count(fh, "GET", "operations/op-1"), 1);
	assert_int_equal(fakehost_count(fh, "GET", "operations/op-0"), 0);

	/* The VM ends provisioningState Failed and its operation says
	 * nothing more: deleted and reported as capacity. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("PUT", "virtualMachines/pool-a-0?", -1, 201, "{}",
	   "Azure-AsyncOperation: " OPS "op-9?api-version=2024-07-01", NULL);
	on("GET", "operations/op-9?", -1, 200, "{\"status\":\"Succeeded\"}",
	   NULL, NULL);
	{
		char *vm = vm_json("pool-a-0", "Failed", "stopped", "Regular",
		                   "tok-abc123", "train-42");
		on("GET", "virtualMachines/pool-a-0?", -1, 200, vm, NULL, NULL);
		free(vm);
	}
	on("DELETE", "virtualMachines/pool-a-0?", -1, 200, "", NULL, NULL);
	r.count = 1;
	assert_int_equal(azure_driver_desc.create(ctx, &r, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_CAPACITY);
	assert_string_equal(err.code, "VMProvisioningFailed");
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines/pool-a-0?"),
	                 2);

	/* A synchronous SkuNotAvailable on the 2nd PUT: the 1st is deleted. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("PUT", "virtualMachines/pool-a-0?", -1, 201, "{}",
	   "Azure-AsyncOperation: " OPS "op-0?api-version=2024-07-01", NULL);
	on("PUT", "virtualMachines/pool-a-1?", -1, 409,
	   "{\"error\":{\"code\":\"SkuNotAvailable\",\"message\":\"The "
	   "requested VM size Standard_NC24ads_A100_v4 is currently not "
	   "available in location 'eastus'.\"}}",
	   NULL, NULL);
	on("DELETE", "virtualMachines/pool-a-", -1, 202, "", NULL, NULL);
	r.count = 2;
	{
		size_t polls = fakehost_count(fh, "GET", "operations/");
		assert_int_equal(
			azure_driver_desc.create(ctx, &r, collect, &g, &err), -1);
		assert_int_equal(fakehost_count(fh, "GET", "operations/"), polls);
	}
	assert_int_equal(err.cls, GB_ERR_CAPACITY);
	assert_string_equal(err.code, "SkuNotAvailable");
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines/pool-a-0?"),
	                 3);
	assert_int_equal(g.n, 0);
	assert_clean(fh, &err);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

#define PRECONDITION_FAILED                                                \
	"{\"error\":{\"code\":\"PreconditionFailed\",\"message\":\"The "   \
	"condition specified using HTTP conditional header(s) is not met.\"}}"

/* An existing VM of ours (token tok-abc123): the create-only PUT gets
 * 412, GET finds it; were it PUT again, ARM would answer 200. */
static void own_vm_routes(const char *name, const char *prov)
{
	char path[96];
	char *vm = vm_json(name, prov, "running", "Regular", "tok-abc123",
	                   "train-42");
	snprintf(path, sizeof(path), "virtualMachines/%s?", name);
	on("PUT-INM", path, -1, 412, PRECONDITION_FAILED, NULL, NULL);
	on("GET", path, -1, 200, vm, NULL, NULL);
	on("PUT", path, -1, 200, vm, NULL, NULL);
	free(vm);
}

static void test_create_name_conflict_and_retry(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_create_req r = base_req(1);
	got g;
	gb_error err;
	char *vm;
	(void)state;

	/* Someone else's VM holds the name: the create-only PUT gets 412,
	 * the GET shows another token: CONFLICT, no second (updating) PUT,
	 * nothing deleted. */
	token_route(TOK1, 3600, -1);
	vm = vm_json("pool-a-0", "Succeeded", "running", "Regular", "other",
	             "other-pool");
	on("PUT-INM", "virtualMachines/pool-a-0?", -1, 412, PRECONDITION_FAILED,
	   NULL, NULL);
	on("GET", "virtualMachines/pool-a-0?", -1, 200, vm, NULL, NULL);
	free(vm);
	memset(&g, 0, sizeof(g));
	assert_int_equal(azure_driver_desc.create(ctx, &r, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_CONFLICT);
	assert_string_equal(err.code, "VMNameTaken");
	assert_int_equal(fakehost_count(fh, "PUT", "virtualMachines"), 1);
	assert_string_equal(
		fakehost_req_header(find_req(fh, "PUT", "virtualMachines", 0),
		                    "If-None-Match"),
		"*");
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines"), 0);

	/* Our own VM from an earlier try, Succeeded: found and emitted with
	 * no second PUT (a replay must not spend ARM writes on what exists) */
	routes_reset();
	token_route(TOK1, 3600, -1);
	own_vm_routes("pool-a-0", "Succeeded");
	nic_route("pool-a-0", "10.0.0.9");
	{
		size_t puts = fakehost_count(fh, "PUT", "virtualMachines");
		assert_int_equal(
			azure_driver_desc.create(ctx, &r, collect, &g, &err), 0);
		assert_int_equal(fakehost_count(fh, "PUT", "virtualMachines"),
		                 puts + 1); /* the create-only one */
	}
	assert_int_equal(g.n, 1);
	assert_string_equal(g.priv[0], "10.0.0.9");
	assert_int_equal(unmatched, 0);

	/* Ours but Failed: PUT again (ARM provisions it anew), then read
	 * until Succeeded */
	routes_reset();
	token_route(TOK1, 3600, -1);
	{
		char *failed = vm_json("pool-a-0", "Failed", "", "Regular",
		                       "tok-abc123", "train-42");
		char *ok = vm_json("pool-a-0", "Succeeded", "running", "Regular",
		                   "tok-abc123", "train-42");
		size_t puts = fakehost_count(fh, "PUT", "virtualMachines");
		on("PUT-INM", "virtualMachines/pool-a-0?", -1, 412,
		   PRECONDITION_FAILED, NULL, NULL);
		on("GET", "virtualMachines/pool-a-0?", 1, 200, failed, NULL, NULL);
		on("PUT", "virtualMachines/pool-a-0?", -1, 200, ok, NULL, NULL);
		on("GET", "virtualMachines/pool-a-0?", -1, 200, ok, NULL, NULL);
		nic_route("pool-a-0", "10.0.0.9");
		memset(&g, 0, sizeof(g));
		assert_int_equal(
			azure_driver_desc.create(ctx, &r, collect, &g, &err), 0);
		assert_int_equal(g.n, 1);
		assert_int_equal(fakehost_count(fh, "PUT", "virtualMachines"),
		                 puts + 2);
		free(failed);
		free(ok);
	}
	assert_int_equal(unmatched, 0);

	/* The same retry for two VMs: pool-a-0 is ours from the earlier try
	 * (the host may have recorded it), pool-a-1's PUT is refused (ARM
	 * made nothing): the cleanup deletes neither.  Only what a PUT of
	 * this call created is this call's to delete. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	own_vm_routes("pool-a-0", "Succeeded");
	on("PUT", "virtualMachines/pool-a-1?", -1, 409,
	   "{\"error\":{\"code\":\"SkuNotAvailable\",\"message\":\"not "
	   "available\"}}", NULL, NULL);
	on("DELETE", "virtualMachines/pool-a-", -1, 202, "", NULL, NULL);
	r.count = 2;
	memset(&g, 0, sizeof(g));
	assert_int_equal(azure_driver_desc.create(ctx, &r, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_CAPACITY);
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines/pool-a-0?"),
	                 0);
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines/pool-a-1?"),
	                 0);

	/* Ours but Deleting (an earlier try's cleanup): not a result, a
	 * transient error; no PUT, nothing deleted by this call. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	own_vm_routes("pool-a-0", "Deleting"); /* no updating PUT */
	r.count = 1;
	memset(&g, 0, sizeof(g));
	{
		size_t puts = fakehost_count(fh, "PUT", "virtualMachines");
		size_t dels = fakehost_count(fh, "DELETE", "virtualMachines");
		assert_int_equal(
			azure_driver_desc.create(ctx, &r, collect, &g, &err), -1);
		assert_int_equal(err.cls, GB_ERR_TRANSIENT);
		assert_string_equal(err.code, "VMBeingDeleted");
		/* the create-only PUT (412) and no other */
		assert_int_equal(fakehost_count(fh, "PUT", "virtualMachines"),
		                 puts + 1);
		assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines"), dels);
	}

	/* 412, then the GET finds no VM (deleted in between): a transient
	 * error for the host to replay, no updating PUT, nothing deleted. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("PUT-INM", "virtualMachines/pool-a-0?", -1, 412, PRECONDITION_FAILED,
	   NULL, NULL);
	on("GET", "virtualMachines/pool-a-0?", -1, 404,
	   "{\"error\":{\"code\":\"ResourceNotFound\",\"message\":\"x\"}}",
	   NULL, NULL);
	{
		size_t puts = fakehost_count(fh, "PUT", "virtualMachines");
		size_t dels = fakehost_count(fh, "DELETE", "virtualMachines");
		assert_int_equal(
			azure_driver_desc.create(ctx, &r, collect, &g, &err), -1);
		assert_int_equal(err.cls, GB_ERR_TRANSIENT);
		assert_string_equal(err.code, "VMNameRace");
		assert_int_equal(fakehost_count(fh, "PUT", "virtualMachines"),
		                 puts + 1);
		assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines"), dels);
	}
	assert_int_equal(unmatched, 0);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

/* The VM is read until provisioningState is terminal: not yet visible
 * (404) and Creating mean "again later" (poll_interval_ms without a
 * Retry-After); Deleting is a transient failure; a VM still Creating at
 * create_timeout_s is a transient OperationTimeout (no cleanup: the host
 * replays the create, which finds it by name). */
static void test_create_reads_vm_until_terminal(void **state)
{
	fakehost *fh = mk(1);
	void *ctx;
	gb_create_req r = base_req(1);
	got g;
	gb_error err;
	int64_t t0;
	char *cr = vm_json("pool-a-0", "Creating", "starting", "Regular",
	                   "tok-abc123", "train-42");
	char *ok = vm_json("pool-a-0", "Succeeded", "running", "Regular",
	                   "tok-abc123", "train-42");
	char *del = vm_json("pool-a-0", "Deleting", "running", "Regular",
	                    "tok-abc123", "train-42");
	(void)state;
	fakehost_option(fh, "create_timeout_s", "5");
	ctx = init(fh);

	token_route(TOK1, 3600, -1);
	on("PUT", "virtualMachines/pool-a-0?", -1, 201, "{}",
	   "Azure-AsyncOperation: " OPS "op-0?api-version=2024-07-01", NULL);
	on("GET", "virtualMachines/pool-a-0?", 1, 404,
	   "{\"error\":{\"code\":\"ResourceNotFound\",\"message\":\"x\"}}",
	   NULL, NULL);
	on("GET", "virtualMachines/pool-a-0?", 1, 200, cr, NULL, NULL);
	on("GET", "virtualMachines/pool-a-0?", -1, 200, ok, NULL, NULL);
	nic_route("pool-a-0", "10.0.0.4");
	memset(&g, 0, sizeof(g));
	t0 = fakehost_host(fh)->now_ms(fakehost_host(fh)->ctx);
	assert_int_equal(azure_driver_desc.create(ctx, &r, collect, &g, &err),
	                 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.st[0], GB_INST_RUNNING);
	assert_int_equal(fakehost_count(fh, "GET", "virtualMachines/pool-a-0?"), 3);
	assert_int_equal(fakehost_count(fh, "GET", "operations/"), 0);
	/* no Retry-After: read at once, then every poll_interval_ms (1 s) */
	assert_true(fakehost_host(fh)->now_ms(fakehost_host(fh)->ctx) - t0 >=
	            2000);
	assert_int_equal(unmatched, 0);

	/* Deleting while being created */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("PUT", "virtualMachines/pool-a-0?", -1, 201, "{}", NULL, NULL);
	on("GET", "virtualMachines/pool-a-0?", -1, 200, del, NULL, NULL);
	assert_int_equal(azure_driver_desc.create(ctx, &r, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_TRANSIENT);
	assert_string_equal(err.code, "VMDeletedDuringCreate");
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines"), 0);

	/* Creating past create_timeout_s (5 s) */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("PUT", "virtualMachines/pool-a-0?", -1, 201, "{}", "Retry-After: 2",
	   NULL);
	on("GET", "virtualMachines/pool-a-0?", -1, 200, cr, NULL, NULL);
	{
		size_t reads = fakehost_count(fh, "GET", "virtualMachines/pool-a-0?");
		assert_int_equal(
			azure_driver_desc.create(ctx, &r, collect, &g, &err), -1);
		assert_int_equal(err.cls, GB_ERR_TRANSIENT);
		assert_string_equal(err.code, "OperationTimeout");
		/* at 2 s and 4 s; the next (6 s) would pass the deadline */
		assert_int_equal(fakehost_count(fh, "GET", "virtualMachines/pool-a-0?"),
		                 reads + 2);
	}
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines"), 0);
	assert_int_equal(unmatched, 0);
	free(cr);
	free(ok);
	free(del);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

/* A read of the VM refused while waiting (throttled or 5xx, after the
 * client's own 3 attempts) is waited out, not the end of the create:
 * ending it made the engine replay every create, and under throttling the
 * replays kept ARM's read bucket empty (the fault storm).  Other errors
 * still end it at once; refusals until the deadline end it as
 * OperationTimeout naming the refusal. */
static void test_create_survives_refused_reads(void **state)
{
	fakehost *fh = mk(1);
	void *ctx;
	gb_create_req r = base_req(1);
	got g;
	gb_error err;
	int64_t t0;
	const gb_host *h;
	char *ok = vm_json("pool-a-0", "Succeeded", "running", "Regular",
	                   "tok-abc123", "train-42");
	(void)state;
	fakehost_option(fh, "create_timeout_s", "120");
	ctx = init(fh);
	h = fakehost_host(fh);

	/* throttled twice (Retry-After: 3), then a 503 (no Retry-After:
	 * twice the poll interval, then four times), then the VM */
	token_route(TOK1, 3600, -1);
	on("PUT", "virtualMachines/pool-a-0?", -1, 201, "{}", NULL, NULL);
	on("GET", "virtualMachines/pool-a-0?", 6, 429, "", "Retry-After: 3",
	   NULL);
	on("GET", "virtualMachines/pool-a-0?", 6, 503, "", NULL, NULL);
	on("GET", "virtualMachines/pool-a-0?", -1, 200, ok, NULL, NULL);
	nic_route("pool-a-0", "10.0.0.4");
	memset(&g, 0, sizeof(g));
	t0 = h->now_ms(h->ctx);
	if (azure_driver_desc.create(ctx, &r, collect, &g, &err) != 0)
		fail_msg("create: %d %s: %s", err.cls, err.code, err.message);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.st[0], GB_INST_RUNNING);
	assert_int_equal(fakehost_count(fh, "GET", "virtualMachines/pool-a-0?"),
	                 13);
	assert_int_equal(fakehost_count(fh, "PUT", "virtualMachines"), 1);
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines"), 0);
	/* 3 + 3 s (Retry-After) + 2 + 4 s (backoff) at least */
	assert_true(h->now_ms(h->ctx) - t0 >= 12000);
	assert_int_equal(unmatched, 0);

	/* refused until the deadline: OperationTimeout, naming the refusal */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("PUT", "virtualMachines/pool-a-0?", -1, 201, "{}", NULL, NULL);
	on("GET", "virtualMachines/pool-a-0?", -1, 429, "", "Retry-After: 2",
	   NULL);
	assert_int_equal(azure_driver_desc.create(ctx, &r, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_TRANSIENT);
	assert_string_equal(err.code, "OperationTimeout");
	assert_non_null(strstr(err.message, "the last read was refused"));
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines"), 0);

	/* any other error ends it at once, and the VM this call created is
	 * deleted (as for any create that failed for good) */
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("PUT", "virtualMachines/pool-a-0?", -1, 201, "{}", NULL, NULL);
	on("GET", "virtualMachines/pool-a-0?", -1, 403,
	   "{\"error\":{\"code\":\"AuthorizationFailed\",\"message\":\"no\"}}",
	   NULL, NULL);
	on("DELETE", "virtualMachines/pool-a-0?", -1, 202, "", NULL, NULL);
	{
		size_t reads = fakehost_count(fh, "GET", "virtualMachines/pool-a-0?");
		assert_int_equal(
			azure_driver_desc.create(ctx, &r, collect, &g, &err), -1);
		assert_int_equal(err.cls, GB_ERR_AUTH);
		assert_int_equal(fakehost_count(fh, "GET", "virtualMachines/pool-a-0?"),
		                 reads + 1);
		assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines"), 1);
	}
	assert_int_equal(unmatched, 0);
	free(ok);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

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
		{409, "{\"error\":{\"code\":\"SkuNotAvailable\",\"message\":\"x\"}}",
		 NULL, GB_ERR_CAPACITY, "SkuNotAvailable", 0, 0},
		{200 + 0, "", NULL, GB_ERR_NONE, "", 0, 0},
		{400, "{\"error\":{\"code\":\"ZonalAllocationFailed\",\"message\":"
		      "\"x\"}}", NULL, GB_ERR_CAPACITY, "ZonalAllocationFailed", 0, 0},
		{409, "{\"error\":{\"code\":\"OperationNotAllowed\",\"message\":"
		      "\"Operation could not be completed as it results in "
		      "exceeding approved Total Regional Cores quota.\"}}",
		 NULL, GB_ERR_QUOTA, "OperationNotAllowed", 0, 0},
		{409, "{\"error\":{\"code\":\"OperationNotAllowed\",\"message\":"
		      "\"x\",\"details\":[{\"code\":\"QuotaExceeded\",\"message\":"
		      "\"Quota exceeded for LowPriorityCores\"}]}}",
		 NULL, GB_ERR_QUOTA, "QuotaExceeded", 0, 0},
		{429, "{\"code\":\"OperationNotAllowed\",\"message\":\"The server "
		      "rejected the request because too many requests have been "
		      "received for this subscription.\",\"details\":[{\"code\":"
		      "\"TooManyRequests\",\"target\":\"HighCostGet30Min\"}]}",
		 "Retry-After: 17", GB_ERR_THROTTLED, "OperationNotAllowed", 17000,
		 0},
		{429, "", "Retry-After: 3", GB_ERR_THROTTLED, "TooManyRequests", 3000,
		 0},
		{500, "{\"error\":{\"code\":\"InternalServerError\"}}", NULL,
		 GB_ERR_TRANSIENT, "InternalServerError", 0, 0},
		{503, "<html>busy</html>", "Retry-After: 2", GB_ERR_TRANSIENT, "",
		 2000, 0},
		{401, "{\"error\":{\"code\":\"ExpiredAuthenticationToken\"}}", NULL,
		 GB_ERR_AUTH, "ExpiredAuthenticationToken", 0, 1},
		{403, "{\"error\":{\"code\":\"AuthorizationFailed\",\"message\":"
		      "\"no\"}}", NULL, GB_ERR_AUTH, "AuthorizationFailed", 0, 0},
		{404, "{\"error\":{\"code\":\"ResourceNotFound\"}}", NULL,
		 GB_ERR_NOT_FOUND, "ResourceNotFound", 0, 0},
		{404, "{\"error\":{\"code\":\"ResourceGroupNotFound\"}}", NULL,
		 GB_ERR_INVALID, "ResourceGroupNotFound", 0, 0},
		{409, "{\"error\":{\"code\":\"PropertyChangeNotAllowed\"}}", NULL,
		 GB_ERR_CONFLICT, "PropertyChangeNotAllowed", 0, 0},
		{400, "{\"error\":{\"code\":\"InvalidParameter\"}}", NULL,
		 GB_ERR_INVALID, "InvalidParameter", 0, 0},
		{400, "{\"error\":{\"code\":\"AzureSpotIsNotSupportedForThisVMSize\"}}",
		 NULL, GB_ERR_CAPACITY, "AzureSpotIsNotSupportedForThisVMSize", 0, 0},
	};
	fakehost *fh = mk(1);
	azure_ctx c;
	azure_what w;
	(void)state;
	memset(&c, 0, sizeof(c));
	c.host = fakehost_host(fh);
	w.c = &c;
	w.what = "PUT VM x";
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *hdrs[1] = {(char *)cases[i].hdr};
		gb_http_resp resp = {cases[i].status, (char *)cases[i].body,
		                     strlen(cases[i].body), cases[i].hdr ? hdrs : NULL,
		                     cases[i].hdr ? 1 : 0, 1};
		gb_error err;
		int expired = -1;
		memset(&err, 0, sizeof(err));
		assert_int_equal(azure_classify(&w, &resp, &err, &expired),
		                 cases[i].cls);
		if (cases[i].cls == GB_ERR_NONE)
			continue;
		assert_string_equal(err.code, cases[i].code);
		assert_int_equal(err.retry_after_ms, cases[i].retry_ms);
		assert_int_equal(expired, cases[i].expired);
		assert_non_null(strstr(err.message, "PUT VM x"));
	}
	fakehost_free(fh);
}

static void test_throttle_end_to_end(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	const gb_instance_ref ref = {"vm-1", "eastus", ""};
	gb_error err;
	(void)state;
	token_route(TOK1, 3600, -1);
	on("DELETE", "virtualMachines/vm-1?", -1, 429, "", "Retry-After: 30",
	   NULL);
	assert_int_equal(azure_driver_desc.terminate(ctx, &ref, 1, &err), -1);
	assert_int_equal(err.cls, GB_ERR_THROTTLED);
	assert_int_equal(err.retry_after_ms, 30000);
	/* the host retried it (fakehost: 3 attempts) */
	assert_int_equal(fakehost_count(fh, "DELETE", "vm-1"), 3);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static char *page_json(const char *const *vms, size_t n, const char *next)
{
	size_t cap = 1 << 16;
	char *s = malloc(cap);
	size_t o = (size_t)snprintf(s, cap, "{\"value\":[");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(s + o, cap - o, "%s%s", i ? "," : "", vms[i]);
	if (next)
		snprintf(s + o, cap - o, "],\"nextLink\":\"%s\"}", next);
	else
		snprintf(s + o, cap - o, "]}");
	return s;
}

static void test_describe_paging_and_states(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_describe_req d;
	got g;
	gb_error err;
	char *a = vm_json("p-0", "Succeeded", "running", "Regular", "t1", "train-42");
	char *b = vm_json("p-1", "Succeeded", "deallocated", "Spot", "t1", "train-42");
	char *c2 = vm_json("p-2", "Creating", "", "Regular", "t1", "train-42");
	char *other = vm_json("x-0", "Succeeded", "running", "Regular", "t9", "other");
	char *e = vm_json("p-3", "Deleting", "running", "Regular", "t1", "train-42");
	char *f = vm_json("p-4", "Succeeded", "deallocated", "Regular", "t1", "train-42");
	char *h = vm_json("p-5", "Failed", "", "Spot", "t1", "train-42");
	const char *p1[] = {a, other}, *p2[] = {b, c2}, *p3[] = {e, f, h};
	char *pg1 = page_json(p1, 2, ARM "/list?page=2");
	char *pg2 = page_json(p2, 2, ARM "/list?page=3");
	char *pg3 = page_json(p3, 3, NULL);
	(void)state;

	token_route(TOK1, 3600, -1);
	on("GET", "virtualMachines?api-version=2024-07-01&$expand=instanceView",
	   1, 200, pg1, NULL, NULL);
	on("GET", "/list?page=2", 1, 200, pg2, NULL, NULL);
	on("GET", "/list?page=3", 1, 200, pg3, NULL, NULL);
	nic_route("p-0", "10.1.0.1");
	memset(&d, 0, sizeof(d));
	memset(&g, 0, sizeof(g));
	d.region = "eastus";
	d.pool = "train-42";
	d.broker_id = "b1";
	assert_int_equal(azure_driver_desc.describe(ctx, &d, collect, &g, &err),
	                 0);
	assert_int_equal(g.n, 6);
	assert_string_equal(g.ids[0], "p-0");
	assert_int_equal(g.st[0], GB_INST_RUNNING);
	assert_string_equal(g.priv[0], "10.1.0.1");
	assert_string_equal(g.ids[1], "p-1");
	assert_int_equal(g.st[1], GB_INST_PREEMPTED);
	assert_string_equal(g.reason[1], "Azure.SpotEviction");
	assert_int_equal(g.cap[1], GB_CAPACITY_SPOT);
	assert_int_equal(g.st[2], GB_INST_PENDING);
	assert_int_equal(g.st[3], GB_INST_STOPPING);
	assert_int_equal(g.st[4], GB_INST_FAILED);
	assert_string_equal(g.reason[4], "Azure.Deallocated");
	assert_int_equal(g.st[5], GB_INST_FAILED);
	assert_int_equal(fakehost_count(fh, "GET", "/list?page="), 2);
	/* Addresses fetched once, then cached. */
	memset(&g, 0, sizeof(g));
	routes[1].times = routes[2].times = routes[3].times = 1;
	assert_int_equal(azure_driver_desc.describe(ctx, &d, collect, &g, &err),
	                 0);
	assert_int_equal(fakehost_count(fh, "GET", "networkInterfaces/p-0-nic"), 1);
	assert_string_equal(g.priv[0], "10.1.0.1");

	/* A nextLink to another host never gets our token. */
	routes_reset();
	token_route(TOK1, 3600, -1);
	free(pg1);
	pg1 = page_json(p1, 2, "https://evil.test/steal");
	on("GET", "virtualMachines?api-version", -1, 200, pg1, NULL, NULL);
	assert_int_equal(azure_driver_desc.describe(ctx, &d, collect, &g, &err),
	                 -1);
	assert_string_equal(err.code, "UntrustedNextLink");
	assert_int_equal(fakehost_count(fh, "GET", "evil.test"), 0);
	assert_int_equal(unmatched, 0);

	free(a);
	free(b);
	free(c2);
	free(other);
	free(e);
	free(f);
	free(h);
	free(pg1);
	free(pg2);
	free(pg3);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_malformed_answers(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	const char *ids[] = {"vm-1"};
	gb_describe_req d;
	got g;
	gb_error err;
	char *big;
	size_t bign = 20u << 20;
	(void)state;

	memset(&d, 0, sizeof(d));
	d.region = "eastus";
	d.ids = ids;
	d.nids = 1;
	token_route(TOK1, 3600, -1);

	on("GET", "virtualMachines/vm-1?", 1, 200, "{\"name\":\"vm-1\",\"prop",
	   NULL, NULL);
	assert_int_equal(azure_driver_desc.describe(ctx, &d, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_string_equal(err.code, "MalformedResponse");

	on("GET", "virtualMachines/vm-1?", 1, 200,
	   "{\"name\":42,\"properties\":[1,2]}", NULL, NULL);
	assert_int_equal(azure_driver_desc.describe(ctx, &d, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);

	/* Wrong types inside a VM: parsed defensively, state UNKNOWN. */
	on("GET", "virtualMachines/vm-1?", 1, 200,
	   "{\"name\":\"vm-1\",\"tags\":{\"a\":1},\"zones\":\"1\",\"properties\":"
	   "{\"provisioningState\":7,\"instanceView\":{\"statuses\":{}},"
	   "\"hardwareProfile\":null}}",
	   NULL, NULL);
	memset(&g, 0, sizeof(g));
	assert_int_equal(azure_driver_desc.describe(ctx, &d, collect, &g, &err),
	                 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.st[0], GB_INST_UNKNOWN);

	big = malloc(bign + 1);
	memset(big, 'x', bign);
	big[0] = '{';
	big[bign] = '\0';
	on("GET", "virtualMachines/vm-1?", 1, 200, big, NULL, NULL);
	free(big);
	assert_int_equal(azure_driver_desc.describe(ctx, &d, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_string_equal(err.code, "ResponseTooLarge");

	on("GET", "virtualMachines/vm-1?", 1, 200,
	   "<html><body>Proxy login</body></html>",
	   "Content-Type: text/html; charset=utf-8", NULL);
	assert_int_equal(azure_driver_desc.describe(ctx, &d, collect, &g, &err),
	                 -1);
	assert_string_equal(err.code, "UnexpectedContentType");
	assert_non_null(strstr(err.message, "text/html"));

	/* Operation status that is not JSON. */
	assert_int_equal(
		azure_parse_op("<html>", 6, (char[32]){0}, 32, (char[96]){0}, 96,
		               (char[512]){0}, 512),
		-1);
	azure_driver_desc.fini(ctx);

	/* Token endpoint: HTML, truncated, wrong types, secrets echoed. */
	routes_reset();
	ctx = init(fh);
	on("POST", "oauth2/v2.0/token", 1, 200, "<html>sign in</html>",
	   "Content-Type: text/html", NULL);
	on("POST", "oauth2/v2.0/token", 1, 200, "{\"access_token\":", NULL,
	   NULL);
	on("POST", "oauth2/v2.0/token", 1, 200,
	   "{\"access_token\":12,\"expires_in\":\"soon\"}", NULL, NULL);
	on("POST", "oauth2/v2.0/token", 1, 401,
	   "{\"error\":\"invalid_client\",\"error_description\":\"AADSTS7000215: "
	   "Invalid client secret provided: " SECRET "\"}",
	   NULL, NULL);
	size_t gets = fakehost_count(fh, "GET", "virtualMachines");
	for (int i = 0; i < 4; i++) {
		assert_int_equal(
			azure_driver_desc.describe(ctx, &d, collect, &g, &err), -1);
		assert_true(err.cls == GB_ERR_INVALID || err.cls == GB_ERR_AUTH);
		assert_clean(fh, &err);
	}
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_string_equal(err.code, "invalid_client");
	assert_non_null(strstr(err.message, "AADSTS7000215"));
	assert_non_null(strstr(err.message, "[redacted]"));
	assert_int_equal(fakehost_count(fh, "GET", "virtualMachines"), gets);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_missing_credentials(void **state)
{
	fakehost *fh = mk(0);
	void *ctx = init(fh);
	gb_create_req r = base_req(1);
	gb_error err;
	got g;
	char path[300];
	FILE *f;
	(void)state;

	assert_int_equal(azure_driver_desc.create(ctx, &r, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_non_null(strstr(err.message, "AZURE_TENANT_ID"));
	assert_non_null(strstr(err.message, "AZURE_CLIENT_ID"));
	assert_non_null(strstr(err.message, "env:AZURE_CLIENT_SECRET"));
	assert_non_null(strstr(err.message, "credentials.client_secret"));
	assert_int_equal(fakehost_nrequests(fh), 0);

	/* offers still work without credentials */
	snprintf(path, sizeof(path), "%s/azure-offers.json", tmpdir);
	f = fopen(path, "w");
	fputs("{\"format\":1,\"cloud\":\"azure\",\"source\":\"test\","
	      "\"fetched_at\":\"2026-01-01\",\"types\":[{\"type\":"
	      "\"Standard_NC24ads_A100_v4\",\"gpu\":\"A100-80GB\",\"gpus\":1,"
	      "\"gpu_memory_gb\":80,\"vcpus\":24,\"ram_gb\":220,\"regions\":{"
	      "\"eastus\":{\"on_demand\":3.673,\"spot\":1.1,\"zones\":[\"1\","
	      "\"2\"]}}}]}",
	      f);
	fclose(f);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static int count_offer(void *ud, const gb_offer *o)
{
	(void)o;
	(*(size_t *)ud)++;
	return 0;
}

static void test_offers_without_credentials(void **state)
{
	fakehost *fh = mk(0);
	char path[300];
	void *ctx;
	gb_error err;
	size_t n = 0;
	(void)state;
	snprintf(path, sizeof(path), "%s/azure-offers.json", tmpdir);
	fakehost_option(fh, "catalog", path);
	ctx = init(fh);
	assert_int_equal(azure_driver_desc.list_offers(ctx, count_offer, &n,
	                                               &err),
	                 0);
	assert_int_equal(n, 4); /* 2 zones x (on-demand, spot) */
	assert_int_equal(fakehost_nrequests(fh), 0);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

typedef struct offers {
	size_t n;
	char type[8][64];
	char zone[8][8];
	gb_capacity cap[8];
	double price[8];
	char source[128];
	int64_t fetched;
} offers;

static int take_offer(void *ud, const gb_offer *o)
{
	offers *of = ud;
	if (of->n < 8) {
		snprintf(of->type[of->n], 64, "%s", o->instance_type);
		snprintf(of->zone[of->n], 8, "%s", o->zone);
		of->cap[of->n] = o->capacity;
		of->price[of->n] = o->price_per_hour;
		snprintf(of->source, sizeof(of->source), "%s", o->source);
		of->fetched = o->fetched_at;
	}
	of->n++;
	return 0;
}

static void test_refresh_prices(void **state)
{
	fakehost *fh = mk(0);
	char path[300];
	void *ctx;
	gb_error err;
	offers of;
	const fakehost_req *r;
	(void)state;

	snprintf(path, sizeof(path), "%s/azure-offers.json", tmpdir);
	fakehost_option(fh, "catalog", path);
	ctx = init(fh);
	on("GET", "prices.test/api/retail/prices?api-version=2023-01-01-preview",
	   1, 200,
	   "{\"BillingCurrency\":\"USD\",\"Items\":["
	   "{\"currencyCode\":\"USD\",\"retailPrice\":3.673,\"armRegionName\":"
	   "\"eastus\",\"armSkuName\":\"Standard_NC24ads_A100_v4\",\"productName\":"
	   "\"NCadsA100v4 Series\",\"skuName\":\"NC24ads A100 v4\",\"meterName\":"
	   "\"NC24ads A100 v4\",\"type\":\"Consumption\",\"unitOfMeasure\":"
	   "\"1 Hour\",\"effectiveStartDate\":\"2023-01-01T00:00:00Z\"},"
	   "{\"currencyCode\":\"USD\",\"retailPrice\":5.0,\"armRegionName\":"
	   "\"eastus\",\"armSkuName\":\"Standard_NC24ads_A100_v4\",\"productName\":"
	   "\"NCadsA100v4 Series Windows\",\"skuName\":\"NC24ads A100 v4\","
	   "\"type\":\"Consumption\",\"unitOfMeasure\":\"1 Hour\"}],"
	   "\"NextPageLink\":\"https://prices.test/api/retail/prices?page=2\","
	   "\"Count\":2}",
	   "Content-Type: application/json", NULL);
	on("GET", "prices.test/api/retail/prices?page=2", 1, 200,
	   "{\"Items\":["
	   "{\"currencyCode\":\"USD\",\"retailPrice\":0.9,\"armRegionName\":"
	   "\"eastus\",\"armSkuName\":\"Standard_NC24ads_A100_v4\",\"productName\":"
	   "\"NCadsA100v4 Series\",\"skuName\":\"NC24ads A100 v4 Low Priority\","
	   "\"type\":\"Consumption\",\"unitOfMeasure\":\"1 Hour\"},"
	   "{\"currencyCode\":\"USD\",\"retailPrice\":1.4692,\"armRegionName\":"
	   "\"eastus\",\"armSkuName\":\"Standard_NC24ads_A100_v4\",\"productName\":"
	   "\"NCadsA100v4 Series\",\"skuName\":\"NC24ads A100 v4 Spot\","
	   "\"meterName\":\"NC24ads A100 v4 Spot\",\"type\":\"Consumption\","
	   "\"unitOfMeasure\":\"1 Hour\"},"
	   "{\"retailPrice\":\"wrong\",\"armSkuName\":7}],"
	   "\"NextPageLink\":null}",
	   NULL, NULL);
	memset(&of, 0, sizeof(of));
	assert_int_equal(azure_driver_desc.refresh_prices(ctx, NULL, take_offer,
	                                                  &of, &err),
	                 0);
	assert_int_equal(of.n, 4);
	assert_int_equal(of.cap[0], GB_CAPACITY_ON_DEMAND);
	assert_true(of.price[0] == 3.673);
	assert_int_equal(of.cap[1], GB_CAPACITY_SPOT);
	assert_true(of.price[1] == 1.4692);
	assert_string_equal(of.zone[2], "2");
	assert_string_equal(of.source, "azure-retail-prices "
	                               "https://prices.test/api/retail/prices");
	assert_int_equal(of.fetched, 1700000000);
	r = fakehost_request(fh, 0);
	assert_string_equal(r->rate_class, "retail-prices");
	assert_null(fakehost_req_header(r, "Authorization"));
	assert_non_null(strstr(r->url, "armRegionName%20eq%20%27eastus%27"));
	assert_non_null(
		strstr(r->url, "armSkuName%20eq%20%27Standard_NC24ads_A100_v4%27"));
	assert_non_null(strstr(r->url, "priceType%20eq%20%27Consumption%27"));
	assert_int_equal(unmatched, 0);
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_terminate(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	const gb_instance_ref refs[] = {{"vm-1", "eastus", ""},
	                                {"vm-2", "eastus", ""},
	                                {"vm-3", "eastus", ""}};
	gb_error err;
	(void)state;
	token_route(TOK1, 3600, -1);
	on("DELETE", "virtualMachines/vm-1?", -1, 202, "", NULL, NULL);
	on("DELETE", "virtualMachines/vm-2?", -1, 404, "{}", NULL, NULL);
	on("DELETE", "virtualMachines/vm-3?", -1, 204, "", NULL, NULL);
	assert_int_equal(azure_driver_desc.terminate(ctx, refs, 3, &err), 0);
	assert_int_equal(fakehost_count(fh, "DELETE", "virtualMachines"), 3);
	routes_reset();
	token_route(TOK1, 3600, -1);
	on("DELETE", "virtualMachines/", -1, 500,
	   "{\"error\":{\"code\":\"InternalServerError\",\"message\":\"oops\"}}",
	   NULL, NULL);
	assert_int_equal(azure_driver_desc.terminate(ctx, refs, 3, &err), -1);
	assert_int_equal(err.cls, GB_ERR_TRANSIENT);
	assert_non_null(strstr(err.message, "vm-1"));
	assert_non_null(strstr(err.message, "2 more"));
	azure_driver_desc.fini(ctx);
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
		{"os_disk_gb", "big", "option os_disk_gb"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fakehost *fh = mk(1);
		char *why = fakehost_init_refusal(fh, &azure_driver_desc, cases[i][0],
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
	assert_string_equal(azure_image_for(ctx, "westeurope"), AZURE_DEFAULT_IMAGE);
	assert_string_equal(azure_image_for(ctx, NULL), AZURE_DEFAULT_IMAGE);
	azure_driver_desc.fini(ctx);
	fakehost_option(fh, "image", "img-everywhere");
	fakehost_option(fh, "image.westeurope", "img-regional");
	ctx = init(fh);
	assert_string_equal(azure_image_for(ctx, "westeurope"), "img-regional");
	assert_string_equal(azure_image_for(ctx, "eastus"), "img-everywhere");
	azure_driver_desc.fini(ctx);
	fakehost_free(fh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_response_parse),
		cmocka_unit_test(test_token_request_shape),
		cmocka_unit_test(test_token_cache_and_refresh),
		cmocka_unit_test(test_expired_token_refreshed_once),
		cmocka_unit_test(test_put_body_exact),
		cmocka_unit_test(test_create_polls_and_emits),
		cmocka_unit_test(test_create_all_or_nothing),
		cmocka_unit_test(test_create_name_conflict_and_retry),
		cmocka_unit_test(test_create_reads_vm_until_terminal),
		cmocka_unit_test(test_create_survives_refused_reads),
		cmocka_unit_test(test_image_choice),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_error_classes),
		cmocka_unit_test(test_throttle_end_to_end),
		cmocka_unit_test(test_describe_paging_and_states),
		cmocka_unit_test(test_malformed_answers),
		cmocka_unit_test(test_missing_credentials),
		cmocka_unit_test(test_offers_without_credentials),
		cmocka_unit_test(test_refresh_prices),
		cmocka_unit_test(test_terminate),
	};
	const char *t = getenv("TMPDIR");
	int rc;
	unsetenv("AZURE_TENANT_ID");
	unsetenv("AZURE_CLIENT_ID");
	unsetenv("AZURE_CLIENT_SECRET");
	unsetenv("AZURE_SUBSCRIPTION_ID");
	unsetenv("AZURE_RESOURCE_GROUP");
	unsetenv("AZURE_SUBNET_ID");
	unsetenv("AZURE_ARM_ENDPOINT");
	unsetenv("AZURE_AUTHORITY_HOST");
	unsetenv("AZURE_PRICES_ENDPOINT");
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_azure.XXXXXX",
	         t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	{
		char p[300];
		snprintf(p, sizeof(p), "%s/azure-offers.json", tmpdir);
		unlink(p);
		rmdir(tmpdir);
	}
	routes_reset();
	return rc;
}
