/*
 * test_conformance.c -- one driver conformance suite, run against the
 * real aws, azure, gcp and lambda drivers (loaded with gb_drv_open/gb_drv_init,
 * so with the real host table: libcurl transport, retries, backoff,
 * redacting log) talking to a real cloudsim process.  The drivers read
 * their endpoint and credential variables from the environment exactly
 * as in production; /_sim/env provides them.  cloudsim's control API
 * (/_sim/instances, /_sim/counters) is the independent truth every case
 * checks the driver's answers against.
 *
 * Each cloud gets a fresh cloudsim (tests/drivers/scenarios/
 * conformance.yaml) and the same cases:
 *   create_tagged      create N with a token: N emitted, N in cloudsim,
 *                      with the broker's tags/labels
 *   idempotent         the same create again returns the same ids; a
 *                      create whose response is lost (applied, client gets
 *                      a 500) is retried by the transport and returns the
 *                      original instances, nothing duplicated
 *   describe_pool      describe by pool tag returns exactly that pool
 *   terminate          terminate, terminate again, terminate unknown: all
 *                      succeed; cloudsim shows the instances going
 *   capacity           no capacity for the type in the zone: CAPACITY with
 *                      the provider's code, nothing left running
 *   quota              a quota below the request: QUOTA, nothing left
 *   throttle_5xx       tight buckets and 30% 5xx: every call succeeds;
 *                      cloudsim counted throttled and failed requests
 *   auth               a wrong secret: AUTH with a useful message and no
 *                      secret in it or in the log
 *   spot_reclaim       a reclaimed spot instance is PREEMPTED with the
 *                      provider's reason (clouds with spot)
 *   paging             describe of more than one page returns each
 *                      instance once; cloudsim saw more than one list call
 *                      (clouds whose listing is paged)
 *   eventual           EC2: instances invisible for a while after create
 *                      are neither an error nor reported gone
 *   no_leaks           nothing of ours still pending or running
 *
 * The whole run logs at debug level into a temporary file; every group
 * ends by checking that no configured secret (AWS secret key, Azure
 * client secret, lines of the GCP private key, the Lambda API key, the
 * wrong secrets of the auth case) and no bearer token or SigV4 signature appears in it.
 *
 * Environment: GB_BUILD (build dir), GB_SRC (source tree), set by
 * tests/run.sh.  GB_CONF_CLOUDS=aws,gcp limits the clouds;
 * GB_CONF_SHOW_LOG=1 copies the captured driver log to stderr.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "drivers.h"
#include "log.h"
#include "simproc.h"
#include "util.h"

#define BROKER "conf-broker"
#define TEAM "conf-team"
#define SSH_KEY                                                              \
	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMsiu1mT0B2d3Nx6L3K8kRzvXoV5e8l" \
	"0cW8Q3a1YpQ9m conformance@gpubroker"
#define N_CREATE 3u

/* ------------------------------------------------------------------ */
/* Per-cloud facts                                                     */
/* ------------------------------------------------------------------ */

typedef struct cloud_cfg {
	const char *name;
	const char *region;
	const char *zone;   /* the zone most cases use */
	const char *zone2;  /* the paging case's zone */
	const char *type;   /* sold on-demand and spot in both zones */
	const char *catalog; /* under tests/cloudsim/scenarios/ */
	/* capacity for one instance only, so a create of 3 fails part-way */
	const char *cap_json;
	const char *cap_codes[5];
	/* a quota for two instances only */
	const char *quota_json, *quota_reset;
	const char *quota_codes[4];
	const char *lost_on, *lost_off; /* lost responses on create */
	const char *throttle_json, *throttle_reset;
	const char *preempt_reason;
	const char *list_op;   /* the call describe-by-pool pages over */
	unsigned page_count;   /* instances that need more than one page */
	const char *page_why;
	int eventual;          /* cloudsim models eventual consistency */
	const char *auth_codes[4];
	int no_spot;           /* the cloud sells no spot capacity */
	const char *rates[5];  /* driver options: fast buckets for the run */
} cloud_cfg;

static const cloud_cfg clouds[] = {
	{
		.name = "aws",
		.region = "us-east-1",
		.zone = "us-east-1a",
		.zone2 = "us-east-1b",
		.type = "g5.xlarge",
		.catalog = "test-catalog-aws.json",
		.cap_json = "{\"capacity\":[{\"cloud\":\"aws\",\"region\":"
		            "\"us-east-1\",\"zone\":\"us-east-1a\",\"type\":"
		            "\"g5.xlarge\",\"count\":1}]}",
		.cap_codes = {"InsufficientInstanceCapacity"},
		.quota_json = "{\"quotas\":{\"aws\":{\"vcpus\":{\"G\":8}}}}",
		.quota_reset = "{\"quotas\":{\"aws\":{\"vcpus\":{\"G\":"
		               "10000000}}}}",
		.quota_codes = {"VcpuLimitExceeded", "InstanceLimitExceeded"},
		.lost_on = "{\"lost_response\":{\"aws\":{\"RunInstances\":1}}}",
		.lost_off = "{\"lost_response\":{\"aws\":{\"RunInstances\":0}}}",
		.throttle_json =
			"{\"throttling\":{\"aws\":{"
			"\"RunInstances\":{\"capacity\":1,\"refill_per_s\":3},"
			"\"TerminateInstances\":{\"capacity\":1,"
			"\"refill_per_s\":3},"
			"\"Describe\":{\"capacity\":2,\"refill_per_s\":5}}},"
			"\"error_rates\":{\"aws\":{\"*\":0.3}}}",
		.throttle_reset =
			"{\"throttling\":{\"aws\":{"
			"\"RunInstances\":{\"capacity\":1000,"
			"\"refill_per_s\":1000},"
			"\"TerminateInstances\":{\"capacity\":1000,"
			"\"refill_per_s\":1000},"
			"\"Describe\":{\"capacity\":1000,\"refill_per_s\":1000}}},"
			"\"error_rates\":{\"aws\":{\"*\":0}}}",
		.preempt_reason = "Server.SpotInstanceTermination",
		.list_op = "DescribeInstances",
		.page_count = 510,
		.page_why = "the driver asks DescribeInstances for 500 per page",
		.eventual = 1,
		.auth_codes = {"SignatureDoesNotMatch", "AuthFailure"},
	},
	{
		.name = "azure",
		.region = "eastus",
		.zone = "1",
		.zone2 = "2",
		.type = "Standard_NC4as_T4_v3",
		.catalog = "test-catalog-azure.json",
		.cap_json = "{\"capacity\":[{\"cloud\":\"azure\",\"region\":"
		            "\"eastus\",\"zone\":\"1\",\"type\":"
		            "\"Standard_NC4as_T4_v3\",\"count\":1}]}",
		.cap_codes = {"ZonalAllocationFailed", "AllocationFailed",
		              "SkuNotAvailable"},
		.quota_json = "{\"quotas\":{\"azure\":{\"cores\":{\"total\":8}}}}",
		.quota_reset = "{\"quotas\":{\"azure\":{\"cores\":{\"total\":"
		               "10000000}}}}",
		.quota_codes = {"OperationNotAllowed", "QuotaExceeded"},
		.lost_on = "{\"lost_response\":{\"azure\":{\"PutVM\":1}}}",
		.lost_off = "{\"lost_response\":{\"azure\":{\"PutVM\":0}}}",
		.throttle_json =
			"{\"throttling\":{\"azure\":{"
			"\"reads\":{\"capacity\":10,\"refill_per_s\":10},"
			"\"writes\":{\"capacity\":2,\"refill_per_s\":2},"
			"\"deletes\":{\"capacity\":1,\"refill_per_s\":2}}},"
			"\"error_rates\":{\"azure\":{\"*\":0.3}}}",
		.throttle_reset =
			"{\"throttling\":{\"azure\":{"
			"\"reads\":{\"capacity\":100000,\"refill_per_s\":10000},"
			"\"writes\":{\"capacity\":100000,\"refill_per_s\":10000},"
			"\"deletes\":{\"capacity\":100000,"
			"\"refill_per_s\":10000}}},"
			"\"error_rates\":{\"azure\":{\"*\":0}}}",
		.preempt_reason = "Azure.SpotEviction",
		.list_op = "ListVMs",
		.page_count = 7,
		.page_why = "the scenario has ARM list 5 VMs per page",
		.eventual = 0,
		.auth_codes = {"invalid_client", "AADSTS7000215"},
	},
	{
		.name = "gcp",
		.region = "us-central1",
		.zone = "us-central1-a",
		.zone2 = "us-central1-b",
		.type = "g2-standard-4",
		.catalog = "test-catalog-gcp.json",
		.cap_json = "{\"capacity\":[{\"cloud\":\"gcp\",\"region\":"
		            "\"us-central1\",\"zone\":\"us-central1-a\",\"type\":"
		            "\"g2-standard-4\",\"count\":1}]}",
		.cap_codes = {"ZONE_RESOURCE_POOL_EXHAUSTED",
		              "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"},
		.quota_json = "{\"quotas\":{\"gcp\":{\"gpus\":"
		              "{\"NVIDIA_L4_GPUS\":2}}}}",
		.quota_reset = "{\"quotas\":{\"gcp\":{\"gpus\":"
		               "{\"NVIDIA_L4_GPUS\":10000000}}}}",
		.quota_codes = {"QUOTA_EXCEEDED", "quotaExceeded"},
		.lost_on = "{\"lost_response\":{\"gcp\":"
		           "{\"instances.bulkInsert\":1}}}",
		.lost_off = "{\"lost_response\":{\"gcp\":"
		            "{\"instances.bulkInsert\":0}}}",
		.throttle_json =
			"{\"throttling\":{\"gcp\":{"
			"\"mutations\":{\"per_minute\":2,\"window_s\":1},"
			"\"reads\":{\"per_minute\":6,\"window_s\":1},"
			"\"lists\":{\"per_minute\":2,\"window_s\":1},"
			"\"operations\":{\"per_minute\":4,\"window_s\":1}}},"
			"\"error_rates\":{\"gcp\":{\"*\":0.3}}}",
		.throttle_reset =
			"{\"throttling\":{\"gcp\":{"
			"\"mutations\":{\"per_minute\":1000000,\"window_s\":60},"
			"\"reads\":{\"per_minute\":1000000,\"window_s\":60},"
			"\"lists\":{\"per_minute\":1000000,\"window_s\":60},"
			"\"operations\":{\"per_minute\":1000000,"
			"\"window_s\":60}}},"
			"\"error_rates\":{\"gcp\":{\"*\":0}}}",
		.preempt_reason = "compute.instances.preempted",
		.list_op = "instances.aggregatedList",
		.page_count = 501,
		.page_why = "the driver asks aggregatedList for 500 per page",
		.eventual = 0,
		.auth_codes = {"invalid_grant"},
	},
	{
		.name = "lambda",
		.region = "us-east-1",
		.zone = "",
		.zone2 = "",
		.type = "gpu_1x_a10",
		.catalog = "test-catalog-lambda.json",
		.cap_json = "{\"capacity\":[{\"cloud\":\"lambda\",\"region\":"
		            "\"us-east-1\",\"zone\":\"\",\"type\":"
		            "\"gpu_1x_a10\",\"count\":1}]}",
		.cap_codes = {"instance-operations/launch/insufficient-capacity"},
		.quota_json = "{\"quotas\":{\"lambda\":{\"instances\":2}}}",
		.quota_reset = "{\"quotas\":{\"lambda\":{\"instances\":"
		               "10000000}}}",
		.quota_codes = {"global/quota-exceeded"},
		.lost_on = "{\"lost_response\":{\"lambda\":"
		           "{\"launchInstance\":1}}}",
		.lost_off = "{\"lost_response\":{\"lambda\":"
		            "{\"launchInstance\":0}}}",
		.throttle_json =
			"{\"throttling\":{\"lambda\":{"
			"\"requests\":{\"capacity\":2,\"refill_per_s\":5},"
			"\"launch\":{\"capacity\":1,\"refill_per_s\":2}}},"
			"\"error_rates\":{\"lambda\":{\"*\":0.3}}}",
		.throttle_reset =
			"{\"throttling\":{\"lambda\":{"
			"\"requests\":{\"capacity\":100000,"
			"\"refill_per_s\":10000},"
			"\"launch\":{\"capacity\":100000,"
			"\"refill_per_s\":10000}}},"
			"\"error_rates\":{\"lambda\":{\"*\":0}}}",
		.preempt_reason = NULL,
		.list_op = "listInstances",
		.page_count = 0,
		.page_why = "Lambda's GET /instances is not paged",
		.eventual = 0,
		.auth_codes = {"global/invalid-api-key"},
		.no_spot = 1,
		/* the documented limits (1/s, a launch per 10 s) would make
		 * the run minutes long; cloudsim's own limits are off too
		 * (conformance.yaml) except in the throttle case */
		.rates = {"rate.lambda-api", "1000/1000", "rate.lambda-launch",
		          "1000/1000", NULL},
	},
};

/* ------------------------------------------------------------------ */
/* Secrets the captured log and every error message must not contain   */
/* ------------------------------------------------------------------ */

typedef struct secret {
	char *label; /* printed; never the value */
	char *value;
} secret;

static secret *g_secrets;
static size_t g_nsecrets;
static FILE *g_log;  /* everything gb_log writes, at debug level */
static int g_show_log;

static void secret_add(const char *label, const char *value)
{
	if (!value || strlen(value) < 8)
		return;
	g_secrets = gb_xrealloc(g_secrets, (g_nsecrets + 1) * sizeof(secret));
	g_secrets[g_nsecrets].label = gb_xstrdup(label);
	g_secrets[g_nsecrets].value = gb_xstrdup(value);
	g_nsecrets++;
}

/* The base64 body of a PEM key as 40-character chunks. */
static void secret_add_pem(const char *label, const char *pem)
{
	const char *p = pem;
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len >= 40 && strncmp(p, "-----", 5) != 0) {
			char *chunk = gb_xstrndup(p, 40);
			secret_add(label, chunk);
			free(chunk);
		}
		p = nl ? nl + 1 : NULL;
	}
}

static void secrets_free(void)
{
	for (size_t i = 0; i < g_nsecrets; i++) {
		free(g_secrets[i].label);
		free(g_secrets[i].value);
	}
	free(g_secrets);
	g_secrets = NULL;
	g_nsecrets = 0;
}

static int tokenish(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
	       c == '~' || c == '+' || c == '/';
}

/* Says (on stderr, by label) which secret or credential-looking value
 * text contains; returns how many findings. */
static int leaks_in(const char *text, const char *where)
{
	int found = 0;
	const char *p;
	for (size_t i = 0; i < g_nsecrets; i++) {
		if (strstr(text, g_secrets[i].value)) {
			fprintf(stderr, "LEAK: %s appears in %s\n",
			        g_secrets[i].label, where);
			found++;
		}
	}
	/* A bearer token: "Bearer " then 16+ token characters. */
	for (p = text; (p = strstr(p, "Bearer ")); p += 7) {
		size_t n = 0;
		while (tokenish(p[7 + n]))
			n++;
		if (n >= 16) {
			fprintf(stderr, "LEAK: a bearer token appears in %s\n",
			        where);
			found++;
			break;
		}
	}
	/* A SigV4 signature: "Signature=" then hex. */
	for (p = text; (p = strstr(p, "Signature=")); p += 10) {
		size_t n = 0;
		while (strchr("0123456789abcdef", p[10 + n]) && p[10 + n])
			n++;
		if (n >= 16) {
			fprintf(stderr, "LEAK: a SigV4 signature appears in %s\n",
			        where);
			found++;
			break;
		}
	}
	/* An OAuth answer: "access_token":"<value>". */
	for (p = text; (p = strstr(p, "access_token")); p += 12) {
		const char *v = p + 12;
		size_t n = 0;
		while (*v == '"' || *v == ':' || *v == ' ' || *v == '=')
			v++;
		while (tokenish(v[n]))
			n++;
		if (n >= 16) {
			fprintf(stderr, "LEAK: an access token appears in %s\n",
			        where);
			found++;
			break;
		}
	}
	return found;
}

/* Everything logged so far; caller frees. */
static char *log_text(void)
{
	long n;
	char *s;
	fflush(g_log);
	n = ftell(g_log);
	if (n < 0)
		return gb_xstrdup("");
	s = gb_xmalloc((size_t)n + 1);
	rewind(g_log);
	n = (long)fread(s, 1, (size_t)n, g_log);
	s[n] = '\0';
	fseek(g_log, 0, SEEK_END);
	return s;
}

/* ------------------------------------------------------------------ */
/* Instances as the driver reports them                                */
/* ------------------------------------------------------------------ */

typedef struct rec {
	char *id, *name, *zone, *reason;
	gb_instance_state st;
	gb_capacity cap;
	gb_kvs tags;
} rec;

typedef struct recs {
	rec *v;
	size_t n;
} recs;

static int collect(void *ud, const gb_instance *in)
{
	recs *r = ud;
	rec *x;
	r->v = gb_xrealloc(r->v, (r->n + 1) * sizeof(rec));
	x = &r->v[r->n++];
	memset(x, 0, sizeof(*x));
	x->id = gb_xstrdup(in->id ? in->id : "");
	x->name = gb_xstrdup(in->name ? in->name : "");
	x->zone = gb_xstrdup(in->zone ? in->zone : "");
	x->reason = in->state_reason ? gb_xstrdup(in->state_reason) : NULL;
	x->st = in->state;
	x->cap = in->capacity;
	for (size_t i = 0; i < in->ntags; i++)
		gb_kvs_set(&x->tags, in->tags[i].key, in->tags[i].value);
	return 0;
}

static void recs_free(recs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].id);
		free(r->v[i].name);
		free(r->v[i].zone);
		free(r->v[i].reason);
		gb_kvs_free(&r->v[i].tags);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

static const rec *recs_find(const recs *r, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].id, id) == 0)
			return &r->v[i];
	return NULL;
}

static int recs_distinct(const recs *r)
{
	for (size_t i = 0; i < r->n; i++)
		for (size_t j = i + 1; j < r->n; j++)
			if (strcmp(r->v[i].id, r->v[j].id) == 0)
				return 0;
	return 1;
}

static int recs_same_ids(const recs *a, const recs *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (!recs_find(b, a->v[i].id))
			return 0;
	return 1;
}

static size_t recs_count_state(const recs *r, gb_instance_state st)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->v[i].st == st;
	return n;
}

static int live_state(gb_instance_state st)
{
	return st == GB_INST_PENDING || st == GB_INST_RUNNING;
}

/* ------------------------------------------------------------------ */
/* The per-cloud fixture                                               */
/* ------------------------------------------------------------------ */

typedef struct suite {
	const cloud_cfg *c;
	simproc *sp;
	gb_drv *drv;
	char src[PATH_MAX / 2], build[PATH_MAX];
	char tmpdir[PATH_MAX / 2];
} suite;

static gb_error g_err; /* the last driver error, for messages */

static void fail_err(const char *what, const gb_error *e)
{
	print_error("%s failed: class %s, HTTP %d, code '%s': %s\n", what,
	            gb_err_class_name(e->cls), e->http_status, e->code,
	            e->message);
}

static void base_options(const suite *s, gb_kvs *o)
{
	char *cat = gb_xasprintf("%s/tests/cloudsim/scenarios/%s", s->src,
	                         s->c->catalog);
	char *data = gb_xasprintf("%s/share/gpubroker", s->build);
	gb_kvs_set(o, "catalog", cat);
	gb_kvs_set(o, "data_dir", data);
	gb_kvs_set(o, "broker_id", BROKER);
	/* Keep the host's retries quick: the faults are many and fast. */
	gb_kvs_set(o, "http_attempts", "10");
	gb_kvs_set(o, "backoff_base_ms", "20");
	gb_kvs_set(o, "backoff_cap_ms", "200");
	gb_kvs_set(o, "http_timeout_ms", "30000");
	gb_kvs_set(o, "poll_interval_ms", "100");
	gb_kvs_set(o, "create_timeout_s", "120");
	for (size_t i = 0; s->c->rates[i] && s->c->rates[i + 1]; i += 2)
		gb_kvs_set(o, s->c->rates[i], s->c->rates[i + 1]);
	free(cat);
	free(data);
}

static gb_drv *open_driver(const suite *s, const gb_kvs *opts)
{
	char path[PATH_MAX + 64], err[700];
	gb_drv *drv = NULL;
	snprintf(path, sizeof(path), "%s/lib/gpubroker/drivers/%s.so",
	         s->build, s->c->name);
	if (gb_drv_open(path, s->c->name, &drv, err, sizeof(err)) != 0) {
		print_error("%s\n", err);
		return NULL;
	}
	if (gb_drv_init(drv, opts, err, sizeof(err)) != 0) {
		print_error("%s\n", err);
		gb_drv_close(drv);
		return NULL;
	}
	return drv;
}

/* Registers this cloudsim's credentials as secrets to look for. */
static void collect_secrets(const suite *s)
{
	const char *kf = simproc_env(s->sp, "GOOGLE_APPLICATION_CREDENTIALS");
	secret_add("the AWS secret access key",
	           simproc_env(s->sp, "AWS_SECRET_ACCESS_KEY"));
	secret_add("the Azure client secret",
	           simproc_env(s->sp, "AZURE_CLIENT_SECRET"));
	secret_add("the Lambda API key", simproc_env(s->sp, "LAMBDA_API_KEY"));
	if (kf) {
		json_t *k = json_load_file(kf, 0, NULL);
		secret_add_pem("a line of the GCP private key",
		               json_string_value(json_object_get(k,
		                                                 "private_key")));
		json_decref(k);
	}
}

static int setup_cloud(void **state, const cloud_cfg *c)
{
	suite *s = gb_xcalloc(1, sizeof(*s));
	const char *src = getenv("GB_SRC"), *build = getenv("GB_BUILD");
	char scen[PATH_MAX + 64], err[1024];
	gb_kvs opts = {0};
	s->c = c;
	snprintf(s->src, sizeof(s->src), "%s", src && *src ? src : ".");
	if (build && *build)
		snprintf(s->build, sizeof(s->build), "%s", build);
	else
		snprintf(s->build, sizeof(s->build), "%s/build", s->src);
	snprintf(s->tmpdir, sizeof(s->tmpdir), "%.1000s/gbconf-%s.XXXXXX",
	         getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR")
	                                               : "/tmp",
	         c->name);
	if (!mkdtemp(s->tmpdir)) {
		print_error("mkdtemp failed\n");
		free(s);
		return -1;
	}
	snprintf(scen, sizeof(scen), "%s/tests/drivers/scenarios/"
	         "conformance.yaml", s->src);
	s->sp = simproc_start(NULL, scen, err, sizeof(err));
	if (!s->sp) {
		print_error("%s: %s\n", c->name, err);
		free(s);
		return -1;
	}
	simproc_apply_env(s->sp);
	collect_secrets(s);
	base_options(s, &opts);
	s->drv = open_driver(s, &opts);
	gb_kvs_free(&opts);
	if (!s->drv) {
		simproc_stop(s->sp);
		free(s);
		return -1;
	}
	print_message("[%s] cloudsim pid %d, control %s; region %s, zone %s, "
	              "type %s\n", c->name, (int)simproc_pid(s->sp),
	              simproc_url(s->sp, "control"), c->region, c->zone,
	              c->type);
	*state = s;
	return 0;
}

static int rmrf_tmp(const char *dir)
{
	char *cmd;
	int rc;
	if (!*dir || strncmp(dir, "/", 1) != 0 || !strstr(dir, "/gbconf-"))
		return -1;
	cmd = gb_xasprintf("rm -rf '%s'", dir);
	rc = system(cmd);
	free(cmd);
	return rc;
}

static int teardown_cloud(void **state)
{
	suite *s = *state;
	char *text, *where;
	int leaks, rc;
	gb_drv_close(s->drv);
	rc = simproc_stop(s->sp);
	text = log_text();
	where = gb_xasprintf("the debug log of the %s run", s->c->name);
	leaks = leaks_in(text, where);
	if (g_show_log)
		fprintf(stderr, "----- captured log (%s) -----\n%s-----\n",
		        s->c->name, text);
	print_message("[%s] captured %zu bytes of debug log; %d secret "
	              "finding(s); cloudsim exit status %d\n", s->c->name,
	              strlen(text), leaks, rc);
	free(where);
	free(text);
	rmrf_tmp(s->tmpdir);
	free(s);
	if (leaks)
		print_error("secrets leaked into the log (see LEAK lines)\n");
	if (rc != 0)
		print_error("cloudsim exited with status %d (a crash or a "
		            "sanitizer report: see its stderr above)\n", rc);
	return leaks || rc != 0 ? -1 : 0;
}

static int setup_aws(void **state) { return setup_cloud(state, &clouds[0]); }
static int setup_azure(void **state) { return setup_cloud(state, &clouds[1]); }
static int setup_gcp(void **state) { return setup_cloud(state, &clouds[2]); }
static int setup_lambda(void **state)
{
	return setup_cloud(state, &clouds[3]);
}

/* ------------------------------------------------------------------ */
/* Driver calls                                                        */
/* ------------------------------------------------------------------ */

static int drv_create(suite *s, gb_drv *drv, const char *pool,
                      const char *token, unsigned count, gb_capacity cap,
                      const char *zone, recs *out, gb_error *e)
{
	static const gb_kv extra[] = {{"project", "conformance"}};
	static const char *const keys[] = {SSH_KEY};
	gb_create_req r;
	memset(&r, 0, sizeof(r));
	r.pool = pool;
	r.broker_id = BROKER;
	r.team = TEAM;
	r.region = s->c->region;
	r.zone = zone ? zone : s->c->zone;
	r.instance_type = s->c->type;
	r.capacity = cap;
	r.count = count;
	r.token = token;
	r.name_prefix = pool;
	r.first_index = 0;
	r.tags = extra;
	r.ntags = 1;
	r.ssh_keys = keys;
	r.nssh_keys = 1;
	memset(e, 0, sizeof(*e));
	return drv->d->create(drv->ctx, &r, collect, out, e);
}

static int create(suite *s, const char *pool, const char *token,
                  unsigned count, gb_capacity cap, const char *zone,
                  recs *out)
{
	return drv_create(s, s->drv, pool, token, count, cap, zone, out,
	                  &g_err);
}

static int drv_describe_pool(suite *s, gb_drv *drv, const char *pool,
                             int include_terminated, recs *out, gb_error *e)
{
	gb_describe_req r;
	memset(&r, 0, sizeof(r));
	r.region = s->c->region;
	r.pool = pool;
	r.include_terminated = include_terminated;
	memset(e, 0, sizeof(*e));
	return drv->d->describe(drv->ctx, &r, collect, out, e);
}

static int describe_pool(suite *s, const char *pool, recs *out)
{
	return drv_describe_pool(s, s->drv, pool, 0, out, &g_err);
}

static int describe_ids(suite *s, const recs *of, recs *out)
{
	const char **ids = gb_xcalloc(of->n + 1, sizeof(char *));
	gb_describe_req r;
	int rc;
	for (size_t i = 0; i < of->n; i++)
		ids[i] = of->v[i].id;
	memset(&r, 0, sizeof(r));
	r.region = s->c->region;
	r.ids = ids;
	r.nids = of->n;
	memset(&g_err, 0, sizeof(g_err));
	rc = s->drv->d->describe(s->drv->ctx, &r, collect, out, &g_err);
	free(ids);
	return rc;
}

static int terminate(suite *s, const recs *of)
{
	gb_instance_ref *refs = gb_xcalloc(of->n + 1, sizeof(*refs));
	int rc;
	for (size_t i = 0; i < of->n; i++) {
		refs[i].id = of->v[i].id;
		refs[i].region = s->c->region;
		refs[i].zone = of->v[i].zone;
	}
	memset(&g_err, 0, sizeof(g_err));
	rc = s->drv->d->terminate(s->drv->ctx, refs, of->n, &g_err);
	free(refs);
	return rc;
}

/* Terminates what a case made (cleanup; asserts it worked). */
static void cleanup(suite *s, const recs *of)
{
	if (of->n == 0)
		return;
	if (terminate(s, of) != 0) {
		fail_err("terminate (cleanup)", &g_err);
		fail();
	}
}

/* ------------------------------------------------------------------ */
/* cloudsim, the truth                                                 */
/* ------------------------------------------------------------------ */

/* cloudsim's instances of this cloud tagged with pool (every state,
 * including deleted ones it still remembers).  Caller decrefs. */
static json_t *sim_pool(suite *s, const char *pool)
{
	char path[128];
	json_t *all, *out = json_array(), *v;
	size_t i;
	snprintf(path, sizeof(path), "/_sim/instances?cloud=%s", s->c->name);
	all = simproc_get_json(s->sp, path);
	assert_non_null(all);
	json_array_foreach(json_object_get(all, "instances"), i, v) {
		const char *p = json_string_value(json_object_get(
			json_object_get(v, "tags"), GB_TAG_POOL));
		if (p && strcmp(p, pool) == 0)
			json_array_append(out, v);
	}
	json_decref(all);
	return out;
}

static const char *sim_state(const json_t *inst)
{
	const char *st = json_string_value(json_object_get(inst, "state"));
	return st ? st : "?";
}

/* How many of pool's instances cloudsim has in one of states ("|"
 * separated, e.g. "pending|running"); NULL = any state. */
static size_t sim_count(suite *s, const char *pool, const char *states)
{
	json_t *v = sim_pool(s, pool), *it;
	size_t i, n = 0;
	json_array_foreach(v, i, it) {
		char pat[64];
		snprintf(pat, sizeof(pat), "|%s|", sim_state(it));
		if (!states) {
			n++;
		} else {
			char *hay = gb_xasprintf("|%s|", states);
			n += strstr(hay, pat) != NULL;
			free(hay);
		}
	}
	json_decref(v);
	return n;
}

static json_t *sim_find(json_t *pool, const char *id)
{
	json_t *it;
	size_t i;
	json_array_foreach(pool, i, it)
		if (strcmp(json_string_value(json_object_get(it, "id")), id) == 0)
			return it;
	return NULL;
}

/* What "still running" means for all-or-nothing: anything not being
 * deleted and not gone. */
#define SIM_LEFT "pending|running|failed|stopped"

#define POLL_UNTIL(cond, ms)                                                 \
	do {                                                                 \
		int64_t end_ = gb_mono_ms() + (ms);                          \
		while (!(cond) && gb_mono_ms() < end_)                       \
			gb_sleep_ms(50);                                     \
	} while (0)

static void scenario(suite *s, const char *json)
{
	assert_int_equal(simproc_scenario(s->sp, json), 0);
}

static void tok(char *buf, size_t cap, const suite *s, const char *what)
{
	snprintf(buf, cap, "tok-%s-%s-1", s->c->name, what);
}

/* ------------------------------------------------------------------ */
/* The cases                                                           */
/* ------------------------------------------------------------------ */

static void test_create_tagged(void **state)
{
	suite *s = *state;
	const char *pool = "conf-create";
	char t[64];
	recs got = {0};
	json_t *sim;
	size_t i;
	json_t *it;
	tok(t, sizeof(t), s, "create");
	if (create(s, pool, t, N_CREATE, GB_CAPACITY_ON_DEMAND, NULL, &got)) {
		fail_err("create", &g_err);
		fail();
	}
	assert_int_equal(got.n, N_CREATE);
	assert_true(recs_distinct(&got));
	for (i = 0; i < got.n; i++) {
		assert_true(got.v[i].id[0] != '\0');
		assert_true(live_state(got.v[i].st));
	}
	sim = sim_pool(s, pool);
	assert_int_equal(json_array_size(sim), N_CREATE);
	json_array_foreach(sim, i, it) {
		const json_t *tg = json_object_get(it, "tags");
		const char *id = json_string_value(json_object_get(it, "id"));
		assert_non_null(recs_find(&got, id));
		assert_string_equal(json_string_value(json_object_get(
			tg, GB_TAG_POOL)), pool);
		assert_string_equal(json_string_value(json_object_get(
			tg, GB_TAG_BROKER)), BROKER);
		assert_string_equal(json_string_value(json_object_get(
			tg, GB_TAG_TOKEN)), t);
		assert_string_equal(json_string_value(json_object_get(
			tg, GB_TAG_TEAM)), TEAM);
		assert_string_equal(json_string_value(json_object_get(
			tg, "project")), "conformance");
		assert_string_equal(json_string_value(json_object_get(it,
		                                                      "type")),
		                    s->c->type);
		assert_string_equal(json_string_value(json_object_get(
			it, "capacity")), "on-demand");
	}
	print_message("[%s] create: %zu instances, cloudsim holds %zu "
	              "with the pool/broker/token/team tags\n", s->c->name,
	              got.n, json_array_size(sim));
	json_decref(sim);
	cleanup(s, &got);
	recs_free(&got);
}

typedef struct bg_create {
	suite *s;
	const char *pool, *token;
	recs out;
	gb_error err;
	int rc;
} bg_create;

static void *bg_create_fn(void *ud)
{
	bg_create *b = ud;
	b->rc = drv_create(b->s, b->s->drv, b->pool, b->token, N_CREATE,
	                   GB_CAPACITY_ON_DEMAND, NULL, &b->out, &b->err);
	return NULL;
}

static void test_idempotent(void **state)
{
	suite *s = *state;
	const char *pool = "conf-idem", *lpool = "conf-lost";
	char t[64], lt[64];
	recs a = {0}, b = {0}, c = {0};
	bg_create bg;
	pthread_t th;
	long long lost0, lost = 0;
	int64_t end;

	/* The same create twice. */
	tok(t, sizeof(t), s, "idem");
	if (create(s, pool, t, N_CREATE, GB_CAPACITY_ON_DEMAND, NULL, &a)) {
		fail_err("create", &g_err);
		fail();
	}
	if (create(s, pool, t, N_CREATE, GB_CAPACITY_ON_DEMAND, NULL, &b)) {
		fail_err("create again with the same token", &g_err);
		fail();
	}
	assert_int_equal(a.n, N_CREATE);
	assert_true(recs_same_ids(&a, &b));
	assert_int_equal(sim_count(s, pool, NULL), N_CREATE);
	print_message("[%s] idempotent: the repeated create returned the "
	              "same %zu ids; cloudsim holds %zu\n", s->c->name, b.n,
	              sim_count(s, pool, NULL));

	/* A lost response: every create mutation is applied but answered
	 * 500 until cloudsim has counted one loss; then answers flow again
	 * and the transport's retry must find the originals. */
	tok(lt, sizeof(lt), s, "lost");
	lost0 = simproc_faults(s->sp, s->c->name, "lost_response");
	scenario(s, s->c->lost_on);
	memset(&bg, 0, sizeof(bg));
	bg.s = s;
	bg.pool = lpool;
	bg.token = lt;
	assert_int_equal(pthread_create(&th, NULL, bg_create_fn, &bg), 0);
	end = gb_mono_ms() + 30000;
	while (gb_mono_ms() < end) {
		lost = simproc_faults(s->sp, s->c->name, "lost_response");
		if (lost > lost0)
			break;
		gb_sleep_ms(5);
	}
	scenario(s, s->c->lost_off);
	pthread_join(th, NULL);
	if (bg.rc != 0) {
		fail_err("create with a lost response", &bg.err);
		fail();
	}
	assert_true(lost > lost0);
	assert_int_equal(bg.out.n, N_CREATE);
	assert_true(recs_distinct(&bg.out));
	assert_int_equal(sim_count(s, lpool, NULL), N_CREATE);
	assert_int_equal(sim_count(s, lpool, "pending|running"), N_CREATE);
	if (create(s, lpool, lt, N_CREATE, GB_CAPACITY_ON_DEMAND, NULL, &c)) {
		fail_err("create again after the lost response", &g_err);
		fail();
	}
	assert_true(recs_same_ids(&bg.out, &c));
	assert_int_equal(sim_count(s, lpool, NULL), N_CREATE);
	print_message("[%s] lost response: cloudsim lost %lld answer(s); "
	              "the retried create returned the original %zu "
	              "instances, cloudsim holds exactly %zu\n", s->c->name,
	              lost - lost0, bg.out.n, sim_count(s, lpool, NULL));
	cleanup(s, &a);
	cleanup(s, &bg.out);
	recs_free(&a);
	recs_free(&b);
	recs_free(&c);
	recs_free(&bg.out);
}

static void test_describe_pool(void **state)
{
	suite *s = *state;
	char ta[64], tb[64];
	recs a = {0}, b = {0}, da = {0}, db = {0}, di = {0};
	tok(ta, sizeof(ta), s, "desc-a");
	tok(tb, sizeof(tb), s, "desc-b");
	if (create(s, "conf-desc-a", ta, N_CREATE, GB_CAPACITY_ON_DEMAND, NULL,
	           &a) ||
	    create(s, "conf-desc-b", tb, 2, GB_CAPACITY_ON_DEMAND, NULL, &b)) {
		fail_err("create", &g_err);
		fail();
	}
	if (describe_pool(s, "conf-desc-a", &da) ||
	    describe_pool(s, "conf-desc-b", &db)) {
		fail_err("describe by pool", &g_err);
		fail();
	}
	assert_true(recs_same_ids(&a, &da));
	assert_true(recs_same_ids(&b, &db));
	for (size_t i = 0; i < da.n; i++) {
		const char *p = gb_kvs_get(&da.v[i].tags, GB_TAG_POOL);
		assert_true(live_state(da.v[i].st));
		assert_non_null(p);
		assert_string_equal(p, "conf-desc-a");
		assert_string_equal(da.v[i].zone[0] ? da.v[i].zone : "?",
		                    a.v[0].zone[0] ? a.v[0].zone : "?");
	}
	/* by ids, too */
	if (describe_ids(s, &a, &di)) {
		fail_err("describe by ids", &g_err);
		fail();
	}
	assert_true(recs_same_ids(&a, &di));
	print_message("[%s] describe: pool a -> %zu of %zu, pool b -> %zu "
	              "of %zu, by ids -> %zu\n", s->c->name, da.n, a.n, db.n,
	              b.n, di.n);
	cleanup(s, &a);
	cleanup(s, &b);
	recs_free(&a);
	recs_free(&b);
	recs_free(&da);
	recs_free(&db);
	recs_free(&di);
}

static void test_terminate(void **state)
{
	suite *s = *state;
	const char *pool = "conf-term";
	char t[64];
	recs a = {0}, after = {0}, byid = {0}, unknown = {0};
	json_t *sim;
	size_t live = 1;
	tok(t, sizeof(t), s, "term");
	if (create(s, pool, t, 2, GB_CAPACITY_ON_DEMAND, NULL, &a)) {
		fail_err("create", &g_err);
		fail();
	}
	if (terminate(s, &a)) {
		fail_err("terminate", &g_err);
		fail();
	}
	sim = sim_pool(s, pool);
	for (size_t i = 0; i < a.n; i++) {
		json_t *it = sim_find(sim, a.v[i].id);
		const char *st = it ? sim_state(it) : "gone";
		if (strcmp(st, "stopping") != 0 &&
		    strcmp(st, "terminated") != 0 && strcmp(st, "gone") != 0) {
			print_error("%s is %s in cloudsim after terminate\n",
			            a.v[i].id, st);
			fail();
		}
	}
	json_decref(sim);
	if (terminate(s, &a)) {
		fail_err("terminate again", &g_err);
		fail();
	}
	/* An id nobody ever created. */
	unknown.v = gb_xcalloc(1, sizeof(rec));
	unknown.n = 1;
	unknown.v[0].id = gb_xstrdup(strcmp(s->c->name, "aws") == 0
	                                     ? "i-0123456789abcdef0"
	                                     : "conf-never-created-0");
	unknown.v[0].name = gb_xstrdup(unknown.v[0].id);
	unknown.v[0].zone = gb_xstrdup(s->c->zone);
	if (terminate(s, &unknown)) {
		fail_err("terminate of an unknown id", &g_err);
		fail();
	}
	/* The driver stops reporting them as live. */
	POLL_UNTIL((recs_free(&after),
	            describe_pool(s, pool, &after) == 0 &&
	                    (live = recs_count_state(&after, GB_INST_PENDING) +
	                            recs_count_state(&after,
	                                             GB_INST_RUNNING)) == 0),
	           15000);
	assert_int_equal(live, 0);
	for (size_t i = 0; i < after.n; i++)
		assert_true(after.v[i].st == GB_INST_STOPPING ||
		            after.v[i].st == GB_INST_TERMINATED);
	if (describe_ids(s, &a, &byid)) {
		fail_err("describe by ids after terminate", &g_err);
		fail();
	}
	for (size_t i = 0; i < byid.n; i++)
		assert_false(live_state(byid.v[i].st));
	assert_int_equal(sim_count(s, pool, "pending|running"), 0);
	print_message("[%s] terminate: twice and an unknown id all succeed; "
	              "cloudsim shows none of them live; describe reports "
	              "%zu (none live)\n", s->c->name, after.n);
	recs_free(&a);
	recs_free(&after);
	recs_free(&byid);
	recs_free(&unknown);
}

static int code_in(const char *code, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n && set[i]; i++)
		if (strcmp(code, set[i]) == 0)
			return 1;
	return 0;
}

/* A create that must fail with cls and one of codes, leaving nothing. */
static void expect_refused(suite *s, const char *pool, gb_err_class cls,
                           const char *const *codes, size_t ncodes,
                           const char *fault)
{
	char t[64];
	recs got = {0};
	long long f0 = simproc_faults(s->sp, s->c->name, fault);
	size_t left = 1, seen;
	tok(t, sizeof(t), s, pool);
	assert_int_equal(create(s, pool, t, N_CREATE, GB_CAPACITY_ON_DEMAND,
	                        NULL, &got),
	                 -1);
	if (g_err.cls != cls || !code_in(g_err.code, codes, ncodes)) {
		fail_err("the refused create", &g_err);
		print_error("expected class %s and code %s%s\n",
		            gb_err_class_name(cls), codes[0],
		            ncodes > 1 && codes[1] ? " (or another listed)" : "");
		fail();
	}
	assert_true(strlen(g_err.message) > 10);
	assert_true(simproc_faults(s->sp, s->c->name, fault) > f0);
	seen = sim_count(s, pool, NULL);
	/* An atomic create is refused before anything is made (nothing
	 * billed); the others may make some and delete them again. */
	if ((s->drv->d->caps & GB_DRV_CAP_ATOMIC_CREATE) && seen) {
		print_error("the driver has ATOMIC_CREATE, yet cloudsim made "
		            "%zu instance(s) of the refused create\n", seen);
		fail();
	}
	POLL_UNTIL((left = sim_count(s, pool, SIM_LEFT)) == 0, 15000);
	if (left) {
		print_error("%zu instance(s) of the refused create are still "
		            "there in cloudsim\n", left);
		fail();
	}
	print_message("[%s] %s: %s %s (\"%.120s\"); cloudsim had %zu "
	              "instance(s) of the request, none left\n", s->c->name,
	              fault, gb_err_class_name(g_err.cls), g_err.code,
	              g_err.message, seen);
	recs_free(&got);
}

static void test_capacity(void **state)
{
	suite *s = *state;
	scenario(s, s->c->cap_json);
	expect_refused(s, "conf-cap", GB_ERR_CAPACITY, s->c->cap_codes,
	               GB_ARRAY_LEN(s->c->cap_codes), "capacity");
	scenario(s, "{\"capacity\":[]}");
}

static void test_quota(void **state)
{
	suite *s = *state;
	scenario(s, s->c->quota_json);
	expect_refused(s, "conf-quota", GB_ERR_QUOTA, s->c->quota_codes,
	               GB_ARRAY_LEN(s->c->quota_codes), "quota");
	scenario(s, s->c->quota_reset);
}

/* Terminates whatever the driver still reports for pool (after a failed
 * case, so the next cases start clean). */
static void cleanup_pool(suite *s, const char *pool)
{
	recs d = {0};
	gb_error keep = g_err;
	if (describe_pool(s, pool, &d) == 0 && d.n)
		terminate(s, &d);
	recs_free(&d);
	g_err = keep;
}

static void test_throttle_5xx(void **state)
{
	suite *s = *state;
	const char *pool = "conf-throttle";
	char t[64];
	recs a = {0}, d = {0};
	long long th0 = simproc_faults(s->sp, s->c->name, "throttled");
	long long er0 = simproc_faults(s->sp, s->c->name, "error");
	long long th, er;
	int64_t t0 = gb_mono_ms();
	gb_kvs opts = {0};
	gb_drv *main_drv = s->drv, *patient;
	const char *failed = NULL;
	/* A driver configured to be patient, as a production config would
	 * be: EC2 and GCE send no Retry-After, and cloudsim's GCE windows
	 * are a second long. */
	base_options(s, &opts);
	gb_kvs_set(&opts, "http_attempts", "25");
	gb_kvs_set(&opts, "backoff_base_ms", "50");
	gb_kvs_set(&opts, "backoff_cap_ms", "500");
	patient = open_driver(s, &opts);
	gb_kvs_free(&opts);
	assert_non_null(patient);
	s->drv = patient;
	tok(t, sizeof(t), s, "throttle");
	scenario(s, s->c->throttle_json);
	if (create(s, pool, t, N_CREATE, GB_CAPACITY_ON_DEMAND, NULL, &a)) {
		failed = "create";
		goto out;
	}
	for (int i = 0; i < 5; i++) {
		recs_free(&d);
		if (describe_ids(s, &a, &d)) {
			failed = "describe by ids";
			goto out;
		}
		if (!recs_same_ids(&a, &d)) {
			print_error("describe by ids returned %zu of %zu\n", d.n,
			            a.n);
			failed = "describe by ids";
			goto out;
		}
	}
	recs_free(&d);
	if (describe_pool(s, pool, &d)) {
		failed = "describe by pool";
		goto out;
	}
	if (!recs_same_ids(&a, &d)) {
		print_error("describe by pool returned %zu of %zu\n", d.n, a.n);
		failed = "describe by pool";
		goto out;
	}
	/* retried creates made nothing twice */
	if (sim_count(s, pool, NULL) != N_CREATE) {
		print_error("cloudsim holds %zu instances of the pool\n",
		            sim_count(s, pool, NULL));
		failed = "create (duplicates)";
		goto out;
	}
	if (terminate(s, &a))
		failed = "terminate";
out:
	scenario(s, s->c->throttle_reset);
	s->drv = main_drv;
	gb_drv_close(patient);
	if (failed) {
		char what[128];
		snprintf(what, sizeof(what), "%s under throttling and 5xx",
		         failed);
		fail_err(what, &g_err);
		cleanup_pool(s, pool);
		recs_free(&a);
		recs_free(&d);
		fail();
	}
	th = simproc_faults(s->sp, s->c->name, "throttled") - th0;
	er = simproc_faults(s->sp, s->c->name, "error") - er0;
	print_message("[%s] throttling + 30%% 5xx: create, 6 describes and "
	              "terminate all succeeded in %lld ms; cloudsim "
	              "throttled %lld and failed %lld requests\n", s->c->name,
	              (long long)(gb_mono_ms() - t0), th, er);
	assert_true(th > 0);
	assert_true(er > 0);
	assert_int_equal(sim_count(s, pool, "pending|running"), 0);
	recs_free(&a);
	recs_free(&d);
}

/* A service-account key file like the real one but with another RSA
 * key; returns its path (caller frees) and registers the key as a
 * secret. */
static char *wrong_gcp_key(suite *s)
{
	const char *real = simproc_env(s->sp, "GOOGLE_APPLICATION_CREDENTIALS");
	json_t *k = json_load_file(real, 0, NULL);
	EVP_PKEY *pk = EVP_RSA_gen(2048);
	BIO *bio = BIO_new(BIO_s_mem());
	char *pem, *path;
	long n;
	const char *p;
	assert_non_null(k);
	assert_non_null(pk);
	assert_int_equal(PEM_write_bio_PrivateKey(bio, pk, NULL, NULL, 0, NULL,
	                                          NULL),
	                 1);
	n = BIO_get_mem_data(bio, &p);
	pem = gb_xstrndup(p, (size_t)n);
	secret_add_pem("a line of the wrong GCP private key", pem);
	json_object_set_new(k, "private_key", json_string(pem));
	path = gb_xasprintf("%s/wrong-key.json", s->tmpdir);
	assert_int_equal(json_dump_file(k, path, JSON_INDENT(2)), 0);
	free(pem);
	BIO_free(bio);
	EVP_PKEY_free(pk);
	json_decref(k);
	return path;
}

static void test_auth(void **state)
{
	suite *s = *state;
	static const char wrong_aws[] = "WrongConformanceSecretKey/0000000000000";
	static const char wrong_az[] = "wrong-conformance-client-secret~42";
	static const char wrong_lambda[] = "secret_wrong-conformance-lambda-key";
	gb_kvs opts = {0};
	gb_drv *bad;
	gb_error e;
	recs got = {0};
	char *keyfile = NULL, *msgs, *logs, *src = NULL;
	long long auth0 = simproc_faults(s->sp, s->c->name, "auth_refused");
	int found = 0;
	base_options(s, &opts);
	if (strcmp(s->c->name, "aws") == 0) {
		setenv("GB_CONF_WRONG_AWS_SECRET", wrong_aws, 1);
		secret_add("the wrong AWS secret", wrong_aws);
		gb_kvs_set(&opts, "credentials.access_key_id",
		           "env:AWS_ACCESS_KEY_ID");
		gb_kvs_set(&opts, "credentials.secret_access_key",
		           "env:GB_CONF_WRONG_AWS_SECRET");
	} else if (strcmp(s->c->name, "azure") == 0) {
		setenv("GB_CONF_WRONG_AZ_SECRET", wrong_az, 1);
		secret_add("the wrong Azure client secret", wrong_az);
		gb_kvs_set(&opts, "credentials.client_secret",
		           "env:GB_CONF_WRONG_AZ_SECRET");
	} else if (strcmp(s->c->name, "lambda") == 0) {
		setenv("GB_CONF_WRONG_LAMBDA_KEY", wrong_lambda, 1);
		secret_add("the wrong Lambda API key", wrong_lambda);
		gb_kvs_set(&opts, "api_key", "env:GB_CONF_WRONG_LAMBDA_KEY");
	} else {
		keyfile = wrong_gcp_key(s);
		src = gb_xasprintf("file:%s", keyfile);
		gb_kvs_set(&opts, "credentials.key_file", src);
	}
	bad = open_driver(s, &opts);
	gb_kvs_free(&opts);
	assert_non_null(bad);

	assert_int_equal(drv_describe_pool(s, bad, "conf-auth", 0, &got, &e),
	                 -1);
	msgs = gb_xasprintf("describe: %s %s %s", gb_err_class_name(e.cls),
	                    e.code, e.message);
	if (e.cls != GB_ERR_AUTH) {
		fail_err("describe with a wrong secret", &e);
		fail();
	}
	print_message("[%s] auth, describe: %s %s: %s\n", s->c->name,
	              gb_err_class_name(e.cls), e.code, e.message);
	assert_true(strlen(e.message) > 20);
	assert_true(code_in(e.code, s->c->auth_codes,
	                    GB_ARRAY_LEN(s->c->auth_codes)) ||
	            strstr(e.message, s->c->auth_codes[0]) != NULL);

	assert_int_equal(drv_create(s, bad, "conf-auth", "tok-auth-1", 1,
	                            GB_CAPACITY_ON_DEMAND, NULL, &got, &e),
	                 -1);
	if (e.cls != GB_ERR_AUTH) {
		fail_err("create with a wrong secret", &e);
		fail();
	}
	print_message("[%s] auth, create: %s %s: %s\n", s->c->name,
	              gb_err_class_name(e.cls), e.code, e.message);
	{
		char *m2 = gb_xasprintf("%s\ncreate: %s %s", msgs, e.code,
		                        e.message);
		free(msgs);
		msgs = m2;
	}
	assert_int_equal(got.n, 0);
	assert_int_equal(sim_count(s, "conf-auth", NULL), 0);
	assert_true(simproc_faults(s->sp, s->c->name, "auth_refused") > auth0);
	gb_drv_close(bad);

	found += leaks_in(msgs, "the auth error messages");
	logs = log_text();
	found += leaks_in(logs, "the debug log");
	assert_int_equal(found, 0);
	if (strcmp(s->c->name, "aws") == 0)
		unsetenv("GB_CONF_WRONG_AWS_SECRET");
	else if (strcmp(s->c->name, "azure") == 0)
		unsetenv("GB_CONF_WRONG_AZ_SECRET");
	else if (strcmp(s->c->name, "lambda") == 0)
		unsetenv("GB_CONF_WRONG_LAMBDA_KEY");
	free(msgs);
	free(logs);
	free(keyfile);
	free(src);
	recs_free(&got);
}

static void test_spot_reclaim(void **state)
{
	suite *s = *state;
	const char *pool = "conf-spot";
	char t[64];
	recs a = {0}, d = {0};
	const rec *victim = NULL, *other = NULL;
	long long r0 = simproc_faults(s->sp, s->c->name, "reclaimed");
	json_t *sim;
	if (s->c->no_spot) {
		/* a spot create must then be refused, making nothing */
		gb_error keep;
		tok(t, sizeof(t), s, "spot");
		assert_int_equal(create(s, pool, t, 1, GB_CAPACITY_SPOT, NULL,
		                        &a), -1);
		assert_int_equal(g_err.cls, GB_ERR_INVALID);
		assert_int_equal(sim_count(s, pool, NULL), 0);
		keep = g_err;
		print_message("[%s] spot reclaim: no spot market; a spot create "
		              "is refused (%s: %s)\n", s->c->name, keep.code,
		              keep.message);
		recs_free(&a);
		return;
	}
	tok(t, sizeof(t), s, "spot");
	if (create(s, pool, t, 2, GB_CAPACITY_SPOT, NULL, &a)) {
		fail_err("spot create", &g_err);
		fail();
	}
	assert_int_equal(a.n, 2);
	sim = sim_pool(s, pool);
	for (size_t i = 0; i < json_array_size(sim); i++)
		assert_string_equal(json_string_value(json_object_get(
			json_array_get(sim, i), "capacity")), "spot");
	json_decref(sim);
	assert_int_equal(simproc_reclaim(s->sp, a.v[0].id), 0);
	assert_true(simproc_faults(s->sp, s->c->name, "reclaimed") > r0);
	POLL_UNTIL((recs_free(&d), describe_pool(s, pool, &d) == 0 &&
	                                   (victim = recs_find(&d, a.v[0].id)) &&
	                                   victim->st == GB_INST_PREEMPTED),
	           15000);
	if (!victim || victim->st != GB_INST_PREEMPTED) {
		print_error("the reclaimed %s is reported %s (%s), not "
		            "PREEMPTED\n", a.v[0].id,
		            victim ? gb_instance_state_name(victim->st)
		                   : "not at all",
		            victim && victim->reason ? victim->reason : "-");
		fail();
	}
	assert_non_null(victim->reason);
	assert_string_equal(victim->reason, s->c->preempt_reason);
	other = recs_find(&d, a.v[1].id);
	assert_non_null(other);
	assert_true(live_state(other->st));
	assert_true(a.v[0].cap == GB_CAPACITY_SPOT);
	print_message("[%s] spot reclaim: %s reported PREEMPTED (%s); the "
	              "other is %s\n", s->c->name, victim->id, victim->reason,
	              gb_instance_state_name(other->st));
	cleanup(s, &a);
	recs_free(&a);
	recs_free(&d);
}

static void test_paging(void **state)
{
	suite *s = *state;
	const char *pool = "conf-page";
	char t[64];
	recs a = {0}, d = {0};
	long long c0, calls;
	int64_t t0 = gb_mono_ms(), t1;
	if (s->c->page_count == 0) {
		print_message("[%s] paging: nothing to page (%s)\n", s->c->name,
		              s->c->page_why);
		return;
	}
	tok(t, sizeof(t), s, "page");
	if (create(s, pool, t, s->c->page_count, GB_CAPACITY_ON_DEMAND,
	           s->c->zone2, &a)) {
		fail_err("create for paging", &g_err);
		fail();
	}
	t1 = gb_mono_ms();
	assert_int_equal(a.n, s->c->page_count);
	assert_int_equal(sim_count(s, pool, NULL), s->c->page_count);
	c0 = simproc_calls(s->sp, s->c->name, s->c->list_op);
	if (describe_pool(s, pool, &d)) {
		fail_err("describe by pool over pages", &g_err);
		fail();
	}
	calls = simproc_calls(s->sp, s->c->name, s->c->list_op) - c0;
	assert_true(recs_distinct(&d));
	assert_true(recs_same_ids(&a, &d));
	print_message("[%s] paging: %u instances (%s) described with %lld "
	              "%s calls, each once (create took %lld ms)\n",
	              s->c->name, s->c->page_count, s->c->page_why, calls,
	              s->c->list_op, (long long)(t1 - t0));
	assert_true(calls >= 2);
	cleanup(s, &a);
	recs_free(&a);
	recs_free(&d);
}

static void test_eventual(void **state)
{
	suite *s = *state;
	const char *pool = "conf-eventual";
	char t[64];
	recs a = {0}, d1 = {0}, d2 = {0}, d3 = {0};
	int64_t t0;
	size_t first;
	if (!s->c->eventual) {
		print_message("[%s] eventual consistency: SKIPPED: cloudsim "
		              "models it for EC2 only (eventual_consistency_ms); "
		              "ARM and Compute Engine show a resource as soon as "
		              "its create is accepted\n", s->c->name);
		skip();
	}
	scenario(s, "{\"eventual_consistency_ms\": 3000}");
	tok(t, sizeof(t), s, "eventual");
	t0 = gb_mono_ms();
	if (create(s, pool, t, 2, GB_CAPACITY_ON_DEMAND, NULL, &a)) {
		fail_err("create", &g_err);
		scenario(s, "{\"eventual_consistency_ms\": 0}");
		fail();
	}
	assert_int_equal(a.n, 2);
	assert_int_equal(sim_count(s, pool, "pending|running"), 2);
	/* Right away: not yet visible. */
	if (describe_ids(s, &a, &d1)) {
		fail_err("describe by ids right after create", &g_err);
		scenario(s, "{\"eventual_consistency_ms\": 0}");
		fail();
	}
	if (describe_pool(s, pool, &d2)) {
		fail_err("describe by pool right after create", &g_err);
		scenario(s, "{\"eventual_consistency_ms\": 0}");
		fail();
	}
	first = d1.n;
	if (gb_mono_ms() - t0 < 3000) {
		/* still in the window: cloudsim hid them */
		assert_true(d1.n < 2);
	}
	for (size_t i = 0; i < d1.n; i++)
		assert_true(live_state(d1.v[i].st));
	for (size_t i = 0; i < d2.n; i++)
		assert_true(live_state(d2.v[i].st));
	POLL_UNTIL((recs_free(&d3),
	            describe_ids(s, &a, &d3) == 0 && d3.n == 2), 15000);
	scenario(s, "{\"eventual_consistency_ms\": 0}");
	assert_true(recs_same_ids(&a, &d3));
	for (size_t i = 0; i < d3.n; i++)
		assert_true(live_state(d3.v[i].st));
	print_message("[%s] eventual consistency: right after create "
	              "describe by ids gave %zu/2 and by pool %zu/2 with no "
	              "error and nothing reported gone; after %lld ms both "
	              "are %s\n", s->c->name, first, d2.n,
	              (long long)(gb_mono_ms() - t0),
	              gb_instance_state_name(d3.v[0].st));
	cleanup(s, &a);
	recs_free(&a);
	recs_free(&d1);
	recs_free(&d2);
	recs_free(&d3);
}

/* cloudsim's pending or running instances of this cloud, any pool. */
static size_t sim_live(suite *s)
{
	char path[128];
	json_t *j, *v;
	size_t i, live = 0;
	snprintf(path, sizeof(path), "/_sim/instances?live=1&cloud=%s",
	         s->c->name);
	j = simproc_get_json(s->sp, path);
	assert_non_null(j);
	json_array_foreach(json_object_get(j, "instances"), i, v) {
		const char *st = sim_state(v);
		live += strcmp(st, "pending") == 0 || strcmp(st, "running") == 0;
	}
	json_decref(j);
	return live;
}

/* Azure: network interfaces whose VM is gone (cloudsim keeps a NIC with
 * deleteOption Detach after its VM). */
static size_t sim_detached_nics(suite *s)
{
	json_t *j = simproc_get_json(s->sp, "/_sim/azure/nics");
	size_t n;
	assert_non_null(j);
	n = (size_t)json_integer_value(json_object_get(j, "detached"));
	json_decref(j);
	return n;
}

static void test_no_leaks(void **state)
{
	suite *s = *state;
	size_t live = 1;
	POLL_UNTIL((live = sim_live(s)) == 0, 15000);
	assert_int_equal(live, 0);
	if (strcmp(s->c->name, "azure") == 0) {
		size_t nics = 1;
		POLL_UNTIL((nics = sim_detached_nics(s)) == 0, 15000);
		assert_int_equal(nics, 0);
	}
	print_message("[%s] no leaks: cloudsim has no pending or running "
	              "instance left%s\n", s->c->name,
	              strcmp(s->c->name, "azure") == 0
	                      ? ", and no network interface without its VM"
	                      : "");
}

/* ------------------------------------------------------------------ */

static int want(const char *cloud)
{
	const char *only = getenv("GB_CONF_CLOUDS");
	char buf[64];
	if (!only || !*only)
		return 1;
	snprintf(buf, sizeof(buf), ",%s,", cloud);
	{
		char *hay = gb_xasprintf(",%s,", only);
		int r = strstr(hay, buf) != NULL;
		free(hay);
		return r;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_tagged),
		cmocka_unit_test(test_idempotent),
		cmocka_unit_test(test_describe_pool),
		cmocka_unit_test(test_terminate),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_quota),
		cmocka_unit_test(test_throttle_5xx),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_spot_reclaim),
		cmocka_unit_test(test_paging),
		cmocka_unit_test(test_eventual),
		cmocka_unit_test(test_no_leaks),
	};
	const char *build = getenv("GB_BUILD");
	char sim[PATH_MAX], drv[PATH_MAX];
	int rc = 0;
	snprintf(sim, sizeof(sim), "%s/bin/cloudsim",
	         build && *build ? build : "build");
	snprintf(drv, sizeof(drv), "%s/lib/gpubroker/drivers/aws.so",
	         build && *build ? build : "build");
	if (access(sim, X_OK) != 0 || access(drv, R_OK) != 0) {
		printf("SKIP: %s or %s is missing: build them (make BUILD=... "
		       "all) and set GB_BUILD\n", sim, drv);
		return 77;
	}
	g_show_log = getenv("GB_CONF_SHOW_LOG") != NULL;
	g_log = tmpfile();
	if (!g_log) {
		perror("tmpfile");
		return 1;
	}
	gb_log_set_file(g_log);
	gb_log_set_level(GB_LOG_DEBUG);
	if (want("aws"))
		rc |= cmocka_run_group_tests_name("conformance/aws", tests,
		                                  setup_aws, teardown_cloud);
	if (want("azure"))
		rc |= cmocka_run_group_tests_name("conformance/azure", tests,
		                                  setup_azure, teardown_cloud);
	if (want("gcp"))
		rc |= cmocka_run_group_tests_name("conformance/gcp", tests,
		                                  setup_gcp, teardown_cloud);
	if (want("lambda"))
		rc |= cmocka_run_group_tests_name("conformance/lambda", tests,
		                                  setup_lambda, teardown_cloud);
	gb_log_set_file(NULL);
	fclose(g_log);
	secrets_free();
	return rc ? 1 : 0;
}
