/*
 * test_aws_ec2.c -- the AWS driver against the fake host table: request
 * building (exact form fields), response parsing (real-shaped EC2 XML),
 * error classes and host retries, malformed answers, credentials,
 * endpoints, price refresh, and that no secret ever reaches an error
 * message or a log line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../drivers/aws/aws.h"
#include "../../drivers/aws/aws_creds.h"
#include "../../drivers/aws/aws_ec2.h"
#include "../../drivers/aws/aws_errors.h"
#include "../../drivers/aws/aws_sigv4.h"
#include "../../drivers/aws/aws_xml.h"
#include "drvc_enc.h"
#include "fakehost.h"

#define AKID "AKIDTESTEXAMPLE01"
#define SECRET "Zk3s9SECRETkeyDoNotLeak/0123456789abcdef"
#define TOKEN "FQoGZXIvYXdzSESSIONtokenDoNotLeak0123456789"
#define XMLCT "Content-Type: text/xml;charset=UTF-8"
#define NS "xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\""

static const char *const xml_h[] = {XMLCT, NULL};

/* ------------------------------------------------------------ helpers */

static void clean_env(void)
{
	unsetenv("AWS_ENDPOINT_URL");
	unsetenv("AWS_ENDPOINT_URL_EC2");
	unsetenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
	setenv("HOME", "/nonexistent-gpubroker-test-home", 1);
}

typedef struct env {
	fakehost *fh;
	const gb_host *host;
	void *ctx;
} env;

/* A driver with env-source credentials (and a session token when tok). */
static void start(env *e, int tok)
{
	gb_error err;
	clean_env();
	e->fh = fakehost_new();
	fakehost_secret(e->fh, "env:AWS_ACCESS_KEY_ID", AKID);
	fakehost_secret(e->fh, "env:AWS_SECRET_ACCESS_KEY", SECRET);
	if (tok)
		fakehost_secret(e->fh, "env:AWS_SESSION_TOKEN", TOKEN);
	e->host = fakehost_host(e->fh);
	memset(&err, 0, sizeof(err));
	assert_int_equal(aws_driver.init(e->host, &e->ctx, &err), 0);
}

static void start_bare(env *e)
{
	clean_env();
	e->fh = fakehost_new();
	e->host = fakehost_host(e->fh);
}

static void init_bare(env *e)
{
	gb_error err;
	memset(&err, 0, sizeof(err));
	assert_int_equal(aws_driver.init(e->host, &e->ctx, &err), 0);
}

/* Signature of every recorded request (Signature=<hex>). */
static void assert_no_secret_in(const env *e, const char *text)
{
	assert_null(strstr(text, SECRET));
	assert_null(strstr(text, TOKEN));
	for (size_t i = 0; i < fakehost_nrequests(e->fh); i++) {
		const char *a = fakehost_req_header(fakehost_request(e->fh, i),
		                                    "Authorization");
		const char *sig = a ? strstr(a, "Signature=") : NULL;
		if (sig)
			assert_null(strstr(text, sig + 10));
	}
}

static void stop(env *e, const gb_error *err)
{
	assert_no_secret_in(e, fakehost_logs(e->fh));
	if (err) {
		assert_no_secret_in(e, err->message);
		assert_no_secret_in(e, err->code);
	}
	if (e->ctx)
		aws_driver.fini(e->ctx);
	fakehost_free(e->fh);
	memset(e, 0, sizeof(*e));
}

/* Decoded value of form field `name` in body, or NULL (static buffer). */
static const char *form_get(const char *body, const char *name)
{
	static char out[8192];
	size_t nl = strlen(name);
	const char *p = body;
	while (p && *p) {
		const char *amp = strchr(p, '&');
		size_t len = amp ? (size_t)(amp - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		drvc_buf k = DRVC_BUF_INIT;
		if (eq) {
			drvc_pct_decode(&k, p, (size_t)(eq - p), 0);
			if (k.len == nl && memcmp(k.data, name, nl) == 0) {
				drvc_buf v = DRVC_BUF_INIT;
				drvc_pct_decode(&v, eq + 1,
				                len - (size_t)(eq + 1 - p), 0);
				snprintf(out, sizeof(out), "%s",
				         v.data ? v.data : "");
				drvc_buf_free(&v);
				drvc_buf_free(&k);
				return out;
			}
		}
		drvc_buf_free(&k);
		p = amp ? amp + 1 : NULL;
	}
	return NULL;
}

static size_t form_count(const char *body)
{
	size_t n = *body ? 1 : 0;
	for (const char *p = body; *p; p++)
		n += *p == '&';
	return n;
}

/* Asserts body holds exactly these fields, in this order. */
static void assert_form(const char *body, const char *const *kv, size_t n)
{
	const char *p = body;
	for (size_t i = 0; i < n; i++) {
		const char *amp = strchr(p, '&');
		size_t len = amp ? (size_t)(amp - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		drvc_buf k = DRVC_BUF_INIT, v = DRVC_BUF_INIT;
		assert_non_null(eq);
		assert_int_equal(drvc_pct_decode(&k, p, (size_t)(eq - p), 0),
		                 0);
		assert_int_equal(drvc_pct_decode(&v, eq + 1,
		                                 len - (size_t)(eq + 1 - p),
		                                 0), 0);
		if (strcmp(k.data, kv[2 * i]) != 0 ||
		    strcmp(v.data ? v.data : "", kv[2 * i + 1]) != 0)
			fail_msg("field %zu: got %s=%s, want %s=%s", i + 1,
			         k.data, v.data ? v.data : "", kv[2 * i],
			         kv[2 * i + 1]);
		drvc_buf_free(&k);
		drvc_buf_free(&v);
		p = amp ? amp + 1 : p + len;
	}
	assert_int_equal(form_count(body), n);
}

/* Collected instances. */
typedef struct got {
	size_t n;
	char id[64][32];
	char name[64][64];
	char zone[64][32];
	char reason[64][64];
	char priv[64][32];
	char pub[64][32];
	char type[64][32];
	gb_instance_state state[64];
	gb_capacity cap[64];
	int64_t created[64];
	char tagdump[64][256];
	int stop_after;
} got;

static int collect(void *ud, const gb_instance *in)
{
	got *g = ud;
	size_t i = g->n++;
	assert_true(i < 64);
	snprintf(g->id[i], 32, "%s", in->id);
	snprintf(g->name[i], 64, "%s", in->name ? in->name : "(null)");
	snprintf(g->zone[i], 32, "%s", in->zone);
	snprintf(g->reason[i], 64, "%s",
	         in->state_reason ? in->state_reason : "(null)");
	snprintf(g->priv[i], 32, "%s", in->private_ip ? in->private_ip : "-");
	snprintf(g->pub[i], 32, "%s", in->public_ip ? in->public_ip : "-");
	snprintf(g->type[i], 32, "%s",
	         in->instance_type ? in->instance_type : "-");
	g->state[i] = in->state;
	g->cap[i] = in->capacity;
	g->created[i] = in->created_at;
	g->tagdump[i][0] = '\0';
	for (size_t t = 0; t < in->ntags; t++) {
		size_t l = strlen(g->tagdump[i]);
		snprintf(g->tagdump[i] + l, 256 - l, "%s=%s;", in->tags[t].key,
		         in->tags[t].value);
	}
	assert_string_equal(in->region, "us-east-1");
	return g->stop_after && g->n >= (size_t)g->stop_after;
}

static gb_create_req base_req(void)
{
	static const gb_kv tags[] = {
		{"project", "llm"},
		{"cost center", "R&D 4411"},
		{"Name", "must-not-override"},
		{"gpubroker-pool", "must-not-override"},
	};
	gb_create_req r;
	memset(&r, 0, sizeof(r));
	r.pool = "train";
	r.broker_id = "brk-1";
	r.team = "research";
	r.region = "us-east-1";
	r.zone = "us-east-1a";
	r.instance_type = "p5.48xlarge";
	r.capacity = GB_CAPACITY_SPOT;
	r.count = 2;
	r.token = "tok-123";
	r.name_prefix = "train";
	r.first_index = 4;
	r.tags = tags;
	r.ntags = 4;
	r.user_data = "#!/bin/sh\necho hello\n";
	r.max_price = 12.5;
	return r;
}

static const char run_answer[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<RunInstancesResponse " NS ">\n"
	"  <requestId>59dbff89-35bd-4eac-99ed-be587EXAMPLE</requestId>\n"
	"  <reservationId>r-0123456789abcdef0</reservationId>\n"
	"  <ownerId>123456789012</ownerId>\n"
	"  <groupSet/>\n"
	"  <instancesSet>\n"
	"    <item>\n"
	"      <instanceId>i-0aaa11112222333a</instanceId>\n"
	"      <imageId>ami-0abc</imageId>\n"
	"      <instanceState><code>0</code><name>pending</name>"
	"</instanceState>\n"
	"      <privateDnsName/>\n"
	"      <amiLaunchIndex>0</amiLaunchIndex>\n"
	"      <instanceType>p5.48xlarge</instanceType>\n"
	"      <launchTime>2023-11-14T22:13:20.000Z</launchTime>\n"
	"      <placement><availabilityZone>us-east-1a</availabilityZone>"
	"<tenancy>default</tenancy></placement>\n"
	"      <privateIpAddress>10.0.0.5</privateIpAddress>\n"
	"      <instanceLifecycle>spot</instanceLifecycle>\n"
	"      <tagSet>\n"
	"        <item><key>Name</key><value>train</value></item>\n"
	"        <item><key>gpubroker-index-base</key><value>4</value></item>\n"
	"        <item><key>cost center</key><value>R&amp;D 4411</value>"
	"</item>\n"
	"      </tagSet>\n"
	"    </item>\n"
	"    <item>\n"
	"      <instanceId>i-0bbb11112222333b</instanceId>\n"
	"      <instanceState><code>0</code><name>pending</name>"
	"</instanceState>\n"
	"      <amiLaunchIndex>1</amiLaunchIndex>\n"
	"      <instanceType>p5.48xlarge</instanceType>\n"
	"      <launchTime>2023-11-14T22:13:20.000Z</launchTime>\n"
	"      <placement><availabilityZone>us-east-1a</availabilityZone>"
	"</placement>\n"
	"      <instanceLifecycle>spot</instanceLifecycle>\n"
	"      <tagSet><item><key>Name</key><value>train</value></item>"
	"<item><key>gpubroker-index-base</key><value>4</value></item>"
	"</tagSet>\n"
	"    </item>\n"
	"  </instancesSet>\n"
	"</RunInstancesResponse>\n";

static char *ec2_error(const char *code, const char *msg)
{
	static char buf[2048];
	snprintf(buf, sizeof(buf),
	         "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response>"
	         "<Errors><Error><Code>%s</Code><Message>%s</Message></Error>"
	         "</Errors><RequestID>ea966190-f9aa-478e-9ede-example"
	         "</RequestID></Response>", code, msg);
	return buf;
}

/* ------------------------------------------------------ request bodies */

static void test_run_body_exact(void **state)
{
	gb_create_req r = base_req();
	aws_run_params p;
	gb_error err;
	char *body;
	static const char *const want[] = {
		"Action", "RunInstances",
		"Version", "2016-11-15",
		"ClientToken", "tok-123",
		"ImageId", AWS_DEFAULT_IMAGE,
		"InstanceType", "p5.48xlarge",
		"MinCount", "2",
		"MaxCount", "2",
		"Placement.AvailabilityZone", "us-east-1a",
		"SubnetId", "subnet-1",
		"SecurityGroupId.1", "sg-1",
		"SecurityGroupId.2", "sg-2",
		"KeyName", "ops",
		"IamInstanceProfile.Arn", "arn:aws:iam::1:instance-profile/x",
		"UserData", "IyEvYmluL3NoCmVjaG8gaGVsbG8K",
		"InstanceMarketOptions.MarketType", "spot",
		"InstanceMarketOptions.SpotOptions.SpotInstanceType", "one-time",
		"InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior",
		"terminate",
		"InstanceMarketOptions.SpotOptions.MaxPrice", "12.5",
		"TagSpecification.1.ResourceType", "instance",
		"TagSpecification.1.Tag.1.Key", "Name",
		"TagSpecification.1.Tag.1.Value", "train",
		"TagSpecification.1.Tag.2.Key", "gpubroker-pool",
		"TagSpecification.1.Tag.2.Value", "train",
		"TagSpecification.1.Tag.3.Key", "gpubroker-broker",
		"TagSpecification.1.Tag.3.Value", "brk-1",
		"TagSpecification.1.Tag.4.Key", "gpubroker-token",
		"TagSpecification.1.Tag.4.Value", "tok-123",
		"TagSpecification.1.Tag.5.Key", "gpubroker-team",
		"TagSpecification.1.Tag.5.Value", "research",
		"TagSpecification.1.Tag.6.Key", "gpubroker-index-base",
		"TagSpecification.1.Tag.6.Value", "4",
		"TagSpecification.1.Tag.7.Key", "project",
		"TagSpecification.1.Tag.7.Value", "llm",
		"TagSpecification.1.Tag.8.Key", "cost center",
		"TagSpecification.1.Tag.8.Value", "R&D 4411",
		"TagSpecification.2.ResourceType", "volume",
		"TagSpecification.2.Tag.1.Key", "Name",
		"TagSpecification.2.Tag.1.Value", "train",
		"TagSpecification.2.Tag.2.Key", "gpubroker-pool",
		"TagSpecification.2.Tag.2.Value", "train",
		"TagSpecification.2.Tag.3.Key", "gpubroker-broker",
		"TagSpecification.2.Tag.3.Value", "brk-1",
		"TagSpecification.2.Tag.4.Key", "gpubroker-token",
		"TagSpecification.2.Tag.4.Value", "tok-123",
		"TagSpecification.2.Tag.5.Key", "gpubroker-team",
		"TagSpecification.2.Tag.5.Value", "research",
		"TagSpecification.2.Tag.6.Key", "gpubroker-index-base",
		"TagSpecification.2.Tag.6.Value", "4",
		"TagSpecification.2.Tag.7.Key", "project",
		"TagSpecification.2.Tag.7.Value", "llm",
		"TagSpecification.2.Tag.8.Key", "cost center",
		"TagSpecification.2.Tag.8.Value", "R&D 4411",
	};
	(void)state;
	memset(&p, 0, sizeof(p));
	p.req = &r;
	p.image = AWS_DEFAULT_IMAGE;
	p.subnet_id = "subnet-1";
	p.security_group_ids = "sg-1, sg-2";
	p.key_name = "ops";
	p.iam_instance_profile = "arn:aws:iam::1:instance-profile/x";
	body = aws_ec2_run_body(&p, &err);
	assert_non_null(body);
	assert_form(body, want, sizeof(want) / sizeof(want[0]) / 2);
	/* RFC 3986 encoding: space %20, '&' %26, ':' and '/' escaped */
	assert_non_null(strstr(body, "cost%20center"));
	assert_non_null(strstr(body, "R%26D%204411"));
	assert_non_null(strstr(body, "ImageId=resolve%3Assm%3A%2Faws%2F"));
	assert_null(strchr(body, '+'));
	free(body);

	/* on-demand, no zone, no user data, an instance profile name */
	r.capacity = GB_CAPACITY_ON_DEMAND;
	r.zone = "";
	r.user_data = NULL;
	r.team = NULL;
	p.iam_instance_profile = "gpu-node";
	body = aws_ec2_run_body(&p, &err);
	assert_null(form_get(body, "Placement.AvailabilityZone"));
	assert_null(form_get(body, "InstanceMarketOptions.MarketType"));
	assert_null(form_get(body, "UserData"));
	assert_string_equal(form_get(body, "IamInstanceProfile.Name"),
	                    "gpu-node");
	assert_string_equal(form_get(body, "TagSpecification.1.Tag.5.Key"),
	                    "gpubroker-index-base");
	free(body);

	/* ssh keys without user data become a cloud-config */
	{
		const char *keys[] = {"ssh-ed25519 AAAAC3Nz it's me"};
		size_t outlen;
		unsigned char *dec;
		r.ssh_keys = keys;
		r.nssh_keys = 1;
		body = aws_ec2_run_body(&p, &err);
		dec = drvc_b64_decode(form_get(body, "UserData"),
		                      strlen(form_get(body, "UserData")),
		                      &outlen);
		assert_non_null(dec);
		assert_memory_equal(dec,
		                    "#cloud-config\nssh_authorized_keys:\n"
		                    "  - 'ssh-ed25519 AAAAC3Nz it''s me'\n",
		                    outlen);
		free(dec);
		free(body);
		keys[0] = "ssh-rsa AAA\nruncmd: [evil]";
		assert_null(aws_ec2_run_body(&p, &err));
		assert_int_equal(err.cls, GB_ERR_INVALID);
	}
}

static void test_other_bodies(void **state)
{
	const char *ids[] = {"i-1", "i-2"};
	const char *types[] = {"p5.48xlarge", "g5.xlarge"};
	char *b;
	(void)state;
	b = aws_ec2_describe_body(ids, 2, "ignored", NULL, NULL, NULL);
	{
		static const char *const w[] = {
			"Action", "DescribeInstances", "Version", "2016-11-15",
			"InstanceId.1", "i-1", "InstanceId.2", "i-2"};
		assert_form(b, w, 4);
	}
	free(b);
	b = aws_ec2_describe_body(NULL, 0, "train", "brk-1", "tok", "NT==");
	{
		static const char *const w[] = {
			"Action", "DescribeInstances", "Version", "2016-11-15",
			"Filter.1.Name", "tag:gpubroker-pool",
			"Filter.1.Value.1", "train",
			"Filter.2.Name", "tag:gpubroker-broker",
			"Filter.2.Value.1", "brk-1",
			"Filter.3.Name", "tag:gpubroker-token",
			"Filter.3.Value.1", "tok",
			"MaxResults", "500", "NextToken", "NT=="};
		assert_form(b, w, 10);
	}
	free(b);
	b = aws_ec2_terminate_body(ids, 2);
	{
		static const char *const w[] = {
			"Action", "TerminateInstances", "Version", "2016-11-15",
			"InstanceId.1", "i-1", "InstanceId.2", "i-2"};
		assert_form(b, w, 4);
	}
	free(b);
	b = aws_ec2_types_body(types, 2, NULL);
	{
		static const char *const w[] = {
			"Action", "DescribeInstanceTypes",
			"Version", "2016-11-15",
			"Filter.1.Name", "instance-type",
			"Filter.1.Value.1", "p5.48xlarge",
			"Filter.1.Value.2", "g5.xlarge",
			"MaxResults", "100"};
		assert_form(b, w, 6);
	}
	free(b);
	b = aws_ec2_spot_body(types, 2, 1700000000000LL, "x");
	{
		static const char *const w[] = {
			"Action", "DescribeSpotPriceHistory",
			"Version", "2016-11-15",
			"InstanceType.1", "p5.48xlarge",
			"InstanceType.2", "g5.xlarge",
			"ProductDescription.1", "Linux/UNIX",
			"StartTime", "2023-11-14T22:13:20Z",
			"EndTime", "2023-11-14T22:13:20Z",
			"MaxResults", "1000", "NextToken", "x"};
		assert_form(b, w, 9);
	}
	free(b);
}

/* -------------------------------------------------------------- create */

static const char *want_akid = AKID;

static void check_signed(const env *e, const fakehost_req *r,
                         const char *region, int with_token)
{
	const char *auth = fakehost_req_header(r, "Authorization");
	const char *date = fakehost_req_header(r, "X-Amz-Date");
	const char *host = fakehost_req_header(r, "Host");
	gb_kv h[4];
	size_t nh = 0;
	aws_sigv4_req sr;
	aws_sigv4_key k;
	aws_sigv4_out o;
	char err[128], scope[256];
	(void)e;
	assert_non_null(auth);
	assert_non_null(date);
	assert_non_null(host);
	assert_string_equal(fakehost_req_header(r, "Content-Type"),
	                    "application/x-www-form-urlencoded; "
	                    "charset=utf-8");
	assert_string_equal(date, "20231114T221320Z");
	snprintf(scope, sizeof(scope), "Credential=%s/20231114/%s/ec2/"
	         "aws4_request, SignedHeaders=content-type;host;x-amz-date%s, "
	         "Signature=", want_akid, region,
	         with_token ? ";x-amz-security-token" : "");
	assert_non_null(strstr(auth, scope));
	if (with_token)
		assert_string_equal(
			fakehost_req_header(r, "X-Amz-Security-Token"), TOKEN);
	else
		assert_null(fakehost_req_header(r, "X-Amz-Security-Token"));
	/* recompute independently from what went on the wire */
	h[nh].key = "Content-Type";
	h[nh++].value = fakehost_req_header(r, "Content-Type");
	h[nh].key = "Host";
	h[nh++].value = host;
	h[nh].key = "X-Amz-Date";
	h[nh++].value = date;
	if (with_token) {
		h[nh].key = "X-Amz-Security-Token";
		h[nh++].value = TOKEN;
	}
	memset(&sr, 0, sizeof(sr));
	sr.method = r->method;
	{
		const char *p = strchr(strstr(r->url, "://") + 3, '/');
		sr.path = p;
	}
	sr.headers = h;
	sr.nheaders = nh;
	sr.body = r->body;
	sr.body_len = r->body_len;
	sr.normalize_path = 1;
	k.access_key = want_akid;
	k.secret_key = SECRET;
	k.region = region;
	k.service = "ec2";
	k.amz_date = date;
	assert_int_equal(aws_sigv4_sign(&sr, &k, &o, err, sizeof(err)), 0);
	assert_string_equal(auth, o.authorization);
	aws_sigv4_out_free(&o);
}

static void test_create_batch(void **state)
{
	env e;
	gb_create_req r = base_req();
	gb_error err;
	got g;
	const fakehost_req *q;
	(void)state;
	start(&e, 1);
	memset(&g, 0, sizeof(g));
	memset(&err, 0, sizeof(err));
	fakehost_push(e.fh, 200, run_answer, xml_h);
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), 0);
	assert_int_equal(fakehost_nrequests(e.fh), 1);
	q = fakehost_request(e.fh, 0);
	assert_string_equal(q->method, "POST");
	assert_string_equal(q->url, "https://ec2.us-east-1.amazonaws.com/");
	assert_string_equal(q->rate_class, "RunInstances");
	assert_string_equal(fakehost_req_header(q, "Host"),
	                    "ec2.us-east-1.amazonaws.com");
	check_signed(&e, q, "us-east-1", 1);
	assert_string_equal(form_get(q->body, "Action"), "RunInstances");
	assert_string_equal(form_get(q->body, "ClientToken"), "tok-123");
	assert_string_equal(form_get(q->body, "MinCount"), "2");
	assert_string_equal(form_get(q->body, "MaxCount"), "2");
	assert_string_equal(form_get(q->body, "ImageId"), AWS_DEFAULT_IMAGE);
	assert_string_equal(form_get(q->body,
	                             "InstanceMarketOptions.MarketType"),
	                    "spot");
	assert_string_equal(form_get(q->body, "Placement.AvailabilityZone"),
	                    "us-east-1a");

	assert_int_equal(g.n, 2);
	assert_string_equal(g.id[0], "i-0aaa11112222333a");
	assert_string_equal(g.name[0], "train-4");
	assert_string_equal(g.name[1], "train-5");
	assert_int_equal(g.state[0], GB_INST_PENDING);
	assert_int_equal(g.cap[0], GB_CAPACITY_SPOT);
	assert_string_equal(g.zone[1], "us-east-1a");
	assert_string_equal(g.priv[0], "10.0.0.5");
	assert_string_equal(g.pub[0], "-");
	assert_int_equal(g.created[0], 1700000000);
	assert_non_null(strstr(g.tagdump[0], "cost center=R&D 4411;"));
	stop(&e, &err);
}

static void test_create_image_choice(void **state)
{
	env e;
	gb_create_req r = base_req();
	gb_error err;
	got g;
	(void)state;
	start(&e, 0);
	memset(&err, 0, sizeof(err));
	fakehost_option(e.fh, "image", "ami-global");
	fakehost_option(e.fh, "image.us-east-1", "ami-regional");
	fakehost_option(e.fh, "subnet_id.us-east-1", "subnet-east");
	fakehost_option(e.fh, "subnet_id", "subnet-any");
	fakehost_option(e.fh, "security_group_ids", "sg-a,sg-b");
	fakehost_option(e.fh, "key_name", "ops-key");
	r.capacity = GB_CAPACITY_ON_DEMAND;
	for (int i = 0; i < 2; i++) {
		memset(&g, 0, sizeof(g));
		fakehost_push(e.fh, 200, run_answer, xml_h);
		r.image = i == 0 ? NULL : "ami-from-spec";
		assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g,
		                                   &err), 0);
	}
	{
		const char *b0 = fakehost_request(e.fh, 0)->body;
		const char *b1 = fakehost_request(e.fh, 1)->body;
		assert_string_equal(form_get(b0, "ImageId"), "ami-regional");
		assert_string_equal(form_get(b1, "ImageId"), "ami-from-spec");
		assert_string_equal(form_get(b0, "SubnetId"), "subnet-east");
		assert_string_equal(form_get(b0, "SecurityGroupId.2"), "sg-b");
		assert_string_equal(form_get(b0, "KeyName"), "ops-key");
		assert_null(form_get(b0, "InstanceMarketOptions.MarketType"));
		check_signed(&e, fakehost_request(e.fh, 0), "us-east-1", 0);
	}
	stop(&e, &err);
}

static int count_sink(void *ud, const gb_instance *in)
{
	(void)in;
	++*(size_t *)ud;
	return 0;
}

static void test_create_region_fallback(void **state)
{
	env e;
	gb_create_req r = base_req();
	gb_error err;
	size_t n = 0;
	const fakehost_req *q;
	(void)state;
	start(&e, 0);
	memset(&err, 0, sizeof(err));
	fakehost_option(e.fh, "image", "ami-global");
	fakehost_option(e.fh, "image.us-east-1", "ami-regional");
	r.region = "eu-west-1";
	r.zone = "";
	r.image = "";
	fakehost_push(e.fh, 200, run_answer, xml_h);
	assert_int_equal(aws_driver.create(e.ctx, &r, count_sink, &n, &err),
	                 0);
	assert_int_equal(n, 2);
	q = fakehost_request(e.fh, 0);
	assert_string_equal(q->url, "https://ec2.eu-west-1.amazonaws.com/");
	assert_string_equal(form_get(q->body, "ImageId"), "ami-global");
	check_signed(&e, q, "eu-west-1", 0);
	stop(&e, &err);
}

/* class, status, code, retried by the host? */
typedef struct errcase {
	const char *code;
	long status;
	gb_err_class cls;
} errcase;

static const errcase errcases[] = {
	{"InsufficientInstanceCapacity", 500, GB_ERR_CAPACITY},
	{"Unsupported", 400, GB_ERR_CAPACITY},
	{"SpotMaxPriceTooLow", 400, GB_ERR_CAPACITY},
	{"InstanceLimitExceeded", 400, GB_ERR_QUOTA},
	{"VcpuLimitExceeded", 400, GB_ERR_QUOTA},
	{"MaxSpotInstanceCountExceeded", 400, GB_ERR_QUOTA},
	{"RequestLimitExceeded", 503, GB_ERR_THROTTLED},
	{"AuthFailure", 401, GB_ERR_AUTH},
	{"UnauthorizedOperation", 403, GB_ERR_AUTH},
	{"SignatureDoesNotMatch", 403, GB_ERR_AUTH},
	{"InvalidClientTokenId", 403, GB_ERR_AUTH},
	{"IncompleteSignature", 400, GB_ERR_AUTH},
	{"MissingAuthenticationToken", 403, GB_ERR_AUTH},
	{"RequestExpired", 400, GB_ERR_AUTH},
	{"OptInRequired", 401, GB_ERR_AUTH},
	{"IdempotentParameterMismatch", 400, GB_ERR_CONFLICT},
	{"InvalidInstanceID.NotFound", 400, GB_ERR_NOT_FOUND},
	{"InvalidParameterValue", 400, GB_ERR_INVALID},
	{"InvalidAMIID.NotFound", 400, GB_ERR_INVALID},
	{"SomethingNew", 400, GB_ERR_INVALID},
	{"InternalError", 500, GB_ERR_TRANSIENT},
	{"Unavailable", 503, GB_ERR_TRANSIENT},
	{"SomethingNew", 500, GB_ERR_TRANSIENT},
	{"Server.InternalError", 500, GB_ERR_TRANSIENT},
	{"Client.UnauthorizedOperation", 403, GB_ERR_AUTH},
};

static void test_error_classes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(errcases) / sizeof(errcases[0]); i++) {
		gb_http_resp resp;
		gb_error err;
		const char *body = ec2_error(errcases[i].code, "it &amp; went "
		                             "wrong");
		memset(&resp, 0, sizeof(resp));
		memset(&err, 0, sizeof(err));
		resp.status = errcases[i].status;
		resp.body = (char *)body;
		resp.body_len = strlen(body);
		if (aws_classify_answer("RunInstances", "us-east-1", "u",
		                        &resp, NULL, 0, &err) !=
		    errcases[i].cls)
			fail_msg("%s (HTTP %ld): class %d, want %d",
			         errcases[i].code, errcases[i].status, err.cls,
			         errcases[i].cls);
		assert_int_equal(err.cls, errcases[i].cls);
		assert_int_equal(err.http_status, errcases[i].status);
		assert_string_equal(err.code, errcases[i].code);
		assert_non_null(strstr(err.message, errcases[i].code));
		assert_non_null(strstr(err.message, "it & went wrong"));
		assert_non_null(strstr(err.message, "RunInstances"));
		assert_non_null(strstr(err.message, "ea966190"));
	}
	/* bodies that are not EC2 error documents */
	{
		static const struct {
			long status;
			const char *body;
			gb_err_class cls;
		} raw[] = {
			{502, "<html><body>Bad Gateway</body></html>",
			 GB_ERR_TRANSIENT},
			{503, "", GB_ERR_THROTTLED},
			{500, "<Response><Errors></Errors></Response>",
			 GB_ERR_TRANSIENT},
			{403, "Forbidden", GB_ERR_AUTH},
			{404, "<html>Not Found</html>", GB_ERR_INVALID},
			{429, "slow down", GB_ERR_THROTTLED},
		};
		for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
			gb_http_resp resp;
			gb_error err;
			char *hdr[] = {"Content-Type: text/html",
			               "Retry-After: 7"};
			memset(&resp, 0, sizeof(resp));
			memset(&err, 0, sizeof(err));
			resp.status = raw[i].status;
			resp.body = (char *)raw[i].body;
			resp.body_len = strlen(raw[i].body);
			resp.headers = hdr;
			resp.nheaders = 2;
			assert_int_equal(aws_classify_answer("DescribeInstances",
			                                     "us-east-1",
			                                     "https://x/",
			                                     &resp, NULL, 0,
			                                     &err),
			                 raw[i].cls);
			assert_non_null(strstr(err.message, "text/html"));
			assert_int_equal(err.retry_after_ms, 7000);
		}
	}
}

static void test_host_retries(void **state)
{
	env e;
	gb_create_req r = base_req();
	gb_error err;
	got g;
	(void)state;
	start(&e, 0);

	/* InsufficientInstanceCapacity: CAPACITY, never retried */
	memset(&err, 0, sizeof(err));
	memset(&g, 0, sizeof(g));
	fakehost_push(e.fh, 500, ec2_error("InsufficientInstanceCapacity",
	                                   "We currently do not have "
	                                   "sufficient p5.48xlarge capacity "
	                                   "in the Availability Zone you "
	                                   "requested (us-east-1a)."),
	              xml_h);
	fakehost_push(e.fh, 200, run_answer, xml_h);
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_CAPACITY);
	assert_string_equal(err.code, "InsufficientInstanceCapacity");
	assert_int_equal(err.http_status, 500);
	assert_int_equal(fakehost_nrequests(e.fh), 1);
	assert_int_equal(g.n, 0);
	assert_int_equal(fakehost_pending(e.fh), 1);
	stop(&e, &err);

	/* RequestLimitExceeded then success: retried, same token, re-signed */
	start(&e, 0);
	memset(&err, 0, sizeof(err));
	fakehost_push(e.fh, 503, ec2_error("RequestLimitExceeded",
	                                   "Request limit exceeded."), xml_h);
	fakehost_push(e.fh, 500, ec2_error("InternalError", "oops"), xml_h);
	fakehost_push(e.fh, 200, run_answer, xml_h);
	memset(&g, 0, sizeof(g));
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), 0);
	assert_int_equal(fakehost_nrequests(e.fh), 3);
	for (size_t i = 0; i < 3; i++) {
		const fakehost_req *q = fakehost_request(e.fh, i);
		assert_string_equal(form_get(q->body, "ClientToken"),
		                    "tok-123");
		check_signed(&e, q, "us-east-1", 0);
	}
	assert_int_equal(g.n, 2);
	stop(&e, &err);

	/* throttled until the host gives up: THROTTLED */
	start(&e, 0);
	memset(&err, 0, sizeof(err));
	for (int i = 0; i < 3; i++)
		fakehost_push(e.fh, 503, ec2_error("RequestLimitExceeded",
		                                   "Request limit exceeded."),
		              xml_h);
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_THROTTLED);
	assert_int_equal(fakehost_nrequests(e.fh), 3);
	stop(&e, &err);

	/* an HTML 502 from a proxy: TRANSIENT, retried */
	start(&e, 0);
	memset(&err, 0, sizeof(err));
	{
		static const char *const html[] = {
			"Content-Type: text/html; charset=iso-8859-1", NULL};
		for (int i = 0; i < 3; i++)
			fakehost_push(e.fh, 502, "<html><head><title>502 Bad "
			              "Gateway</title></head></html>", html);
	}
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_TRANSIENT);
	assert_int_equal(fakehost_nrequests(e.fh), 3);
	assert_non_null(strstr(err.message, "502"));
	stop(&e, &err);

	/* IdempotentParameterMismatch: CONFLICT, names the token */
	start(&e, 0);
	memset(&err, 0, sizeof(err));
	fakehost_push(e.fh, 400, ec2_error("IdempotentParameterMismatch",
	                                   "The client token you have "
	                                   "provided is associated with a "
	                                   "resource that is already "
	                                   "deleted."), xml_h);
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_CONFLICT);
	assert_non_null(strstr(err.message, "tok-123"));
	assert_int_equal(fakehost_nrequests(e.fh), 1);
	stop(&e, &err);
}

static void test_create_garbage_answer_undoes(void **state)
{
	env e;
	gb_create_req r = base_req();
	gb_error err;
	got g;
	static const char descr[] =
		"<DescribeInstancesResponse " NS "><requestId>x</requestId>"
		"<reservationSet><item><reservationId>r-1</reservationId>"
		"<instancesSet><item><instanceId>i-0ccc</instanceId>"
		"<instanceState><code>0</code><name>pending</name>"
		"</instanceState><tagSet><item><key>gpubroker-token</key>"
		"<value>tok-123</value></item></tagSet></item></instancesSet>"
		"</item></reservationSet></DescribeInstancesResponse>";
	static const char term[] =
		"<TerminateInstancesResponse " NS "><requestId>x</requestId>"
		"<instancesSet><item><instanceId>i-0ccc</instanceId>"
		"<currentState><code>32</code><name>shutting-down</name>"
		"</currentState><previousState><code>0</code><name>pending"
		"</name></previousState></item></instancesSet>"
		"</TerminateInstancesResponse>";
	(void)state;
	start(&e, 0);
	memset(&err, 0, sizeof(err));
	memset(&g, 0, sizeof(g));
	fakehost_push(e.fh, 200, "<RunInstancesResponse " NS "><instancesSet>"
	              "<item><instanceId>i-0ccc</instanceId>", xml_h);
	fakehost_push(e.fh, 200, descr, xml_h);
	fakehost_push(e.fh, 200, term, xml_h);
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_int_equal(g.n, 0);
	assert_non_null(strstr(err.message, "truncated"));
	assert_non_null(strstr(err.message, "were terminated"));
	assert_int_equal(fakehost_nrequests(e.fh), 3);
	assert_string_equal(fakehost_request(e.fh, 1)->rate_class,
	                    "DescribeInstances");
	assert_string_equal(form_get(fakehost_request(e.fh, 1)->body,
	                             "Filter.3.Value.1"), "tok-123");
	assert_string_equal(fakehost_request(e.fh, 2)->rate_class,
	                    "TerminateInstances");
	assert_string_equal(form_get(fakehost_request(e.fh, 2)->body,
	                             "InstanceId.1"), "i-0ccc");
	stop(&e, &err);
}

static void test_create_validation(void **state)
{
	env e;
	gb_create_req r = base_req();
	gb_error err;
	got g;
	char longtok[80];
	(void)state;
	start(&e, 0);
	memset(&g, 0, sizeof(g));
	memset(longtok, 'a', sizeof(longtok) - 1);
	longtok[sizeof(longtok) - 1] = '\0';
	r.token = longtok;
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	r.token = "tok";
	r.count = 0;
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	r.count = 1;
	r.capacity = GB_CAPACITY_RESERVED;
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	r.capacity = GB_CAPACITY_SPOT;
	r.region = "us-east-1/../x";
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_int_equal(fakehost_nrequests(e.fh), 0);
	stop(&e, &err);
}

/* ------------------------------------------------------------ describe */

static char *describe_page(const char *ids_csv, const char *next)
{
	static char buf[16384];
	size_t n = 0;
	char ids[512];
	snprintf(ids, sizeof(ids), "%s", ids_csv);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n,
	                      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	                      "<DescribeInstancesResponse " NS ">"
	                      "<requestId>r</requestId><reservationSet>");
	for (char *save = NULL, *id = strtok_r(ids, ",", &save); id;
	     id = strtok_r(NULL, ",", &save))
		n += (size_t)snprintf(
			buf + n, sizeof(buf) - n,
			"<item><reservationId>r-%s</reservationId><instancesSet>"
			"<item><instanceId>%s</instanceId><instanceState><code>"
			"16</code><name>running</name></instanceState>"
			"<instanceType>g5.xlarge</instanceType><placement>"
			"<availabilityZone>us-east-1b</availabilityZone>"
			"</placement><ipAddress>3.3.3.3</ipAddress>"
			"</item></instancesSet></item>", id, id);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "</reservationSet>");
	if (next)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
		                      "<nextToken>%s</nextToken>", next);
	snprintf(buf + n, sizeof(buf) - n, "</DescribeInstancesResponse>");
	return buf;
}

static void test_describe_paging(void **state)
{
	env e;
	gb_describe_req d;
	gb_error err;
	got g;
	(void)state;
	start(&e, 0);
	memset(&err, 0, sizeof(err));
	memset(&g, 0, sizeof(g));
	fakehost_push(e.fh, 200, describe_page("i-01,i-02", "page+2/=="),
	              xml_h);
	fakehost_push(e.fh, 200, describe_page("i-03", "page3"), xml_h);
	fakehost_push(e.fh, 200, describe_page("i-04,i-05", NULL), xml_h);
	memset(&d, 0, sizeof(d));
	d.region = "us-east-1";
	d.pool = "train";
	d.broker_id = "brk-1";
	assert_int_equal(aws_driver.describe(e.ctx, &d, collect, &g, &err),
	                 0);
	assert_int_equal(g.n, 5);
	assert_string_equal(g.id[4], "i-05");
	assert_int_equal(g.state[2], GB_INST_RUNNING);
	assert_string_equal(g.pub[0], "3.3.3.3");
	assert_string_equal(g.name[0], "(null)");
	assert_int_equal(fakehost_nrequests(e.fh), 3);
	for (size_t i = 0; i < 3; i++) {
		const char *b = fakehost_request(e.fh, i)->body;
		assert_string_equal(fakehost_request(e.fh, i)->rate_class,
		                    "DescribeInstances");
		assert_string_equal(form_get(b, "Filter.1.Name"),
		                    "tag:gpubroker-pool");
		assert_string_equal(form_get(b, "Filter.1.Value.1"), "train");
		assert_string_equal(form_get(b, "Filter.2.Name"),
		                    "tag:gpubroker-broker");
		assert_null(form_get(b, "Filter.3.Name"));
		assert_string_equal(form_get(b, "MaxResults"), "500");
		assert_null(form_get(b, "InstanceId.1"));
	}
	assert_null(form_get(fakehost_request(e.fh, 0)->body, "NextToken"));
	assert_string_equal(form_get(fakehost_request(e.fh, 1)->body,
	                             "NextToken"), "page+2/==");
	assert_non_null(strstr(fakehost_request(e.fh, 1)->body,
	                       "NextToken=page%2B2%2F%3D%3D"));
	assert_string_equal(form_get(fakehost_request(e.fh, 2)->body,
	                             "NextToken"), "page3");

	/* the caller stops early: no further page is fetched */
	memset(&g, 0, sizeof(g));
	g.stop_after = 1;
	fakehost_push(e.fh, 200, describe_page("i-01,i-02", "more"), xml_h);
	assert_int_equal(aws_driver.describe(e.ctx, &d, collect, &g, &err),
	                 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(fakehost_nrequests(e.fh), 4);

	/* a server repeating its nextToken is caught */
	fakehost_push(e.fh, 200, describe_page("i-01", "same"), xml_h);
	fakehost_push(e.fh, 200, describe_page("i-02", "same"), xml_h);
	memset(&g, 0, sizeof(g));
	assert_int_equal(aws_driver.describe(e.ctx, &d, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);

	/* no ids, no pool, no broker: refused, nothing sent */
	memset(&d, 0, sizeof(d));
	d.region = "us-east-1";
	assert_int_equal(aws_driver.describe(e.ctx, &d, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_int_equal(fakehost_nrequests(e.fh), 6);
	stop(&e, &err);
}

static const char states_answer[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<ec2:DescribeInstancesResponse xmlns:ec2=\"http://ec2.amazonaws.com/"
	"doc/2016-11-15/\">\n"
	"<!-- a comment -->\n"
	"<ec2:requestId>abc</ec2:requestId>\n"
	"<ec2:reservationSet>\n"
	" <ec2:item><ec2:instancesSet>\n"
	"  <ec2:item><ec2:instanceId>i-pend</ec2:instanceId>"
	"<ec2:instanceState><ec2:code>0</ec2:code><ec2:name>pending"
	"</ec2:name></ec2:instanceState></ec2:item>\n"
	"  <ec2:item><ec2:instanceId>i-run</ec2:instanceId>"
	"<ec2:instanceState><ec2:code>272</ec2:code><ec2:name>running"
	"</ec2:name></ec2:instanceState>"
	"<ec2:launchTime>2024-02-29T23:59:59Z</ec2:launchTime></ec2:item>\n"
	"  <ec2:item><ec2:instanceId>i-spotgone</ec2:instanceId>"
	"<ec2:instanceState><ec2:code>48</ec2:code><ec2:name>terminated"
	"</ec2:name></ec2:instanceState><ec2:stateReason><ec2:code>"
	"Server.SpotInstanceTermination</ec2:code><ec2:message>Server."
	"SpotInstanceTermination: Spot instance termination</ec2:message>"
	"</ec2:stateReason><ec2:instanceLifecycle>spot"
	"</ec2:instanceLifecycle></ec2:item>\n"
	"  <ec2:item><ec2:instanceId>i-spotgoing</ec2:instanceId>"
	"<ec2:instanceState><ec2:code>32</ec2:code></ec2:instanceState>"
	"<ec2:stateReason><ec2:code>Server.SpotInstanceTermination"
	"</ec2:code></ec2:stateReason></ec2:item>\n"
	"  <ec2:item><ec2:instanceId>i-byus</ec2:instanceId>"
	"<ec2:instanceState><ec2:code>48</ec2:code><ec2:name>terminated"
	"</ec2:name></ec2:instanceState><ec2:stateReason><ec2:code>"
	"Client.UserInitiatedShutdown</ec2:code></ec2:stateReason></ec2:item>\n"
	"  <ec2:item><ec2:instanceId>i-broken</ec2:instanceId>"
	"<ec2:instanceState><ec2:code>48</ec2:code><ec2:name>terminated"
	"</ec2:name></ec2:instanceState><ec2:stateReason><ec2:code>"
	"Server.InternalError</ec2:code></ec2:stateReason></ec2:item>\n"
	"  <ec2:item><ec2:instanceId>i-stopped</ec2:instanceId>"
	"<ec2:instanceState><ec2:name>stopped</ec2:name>"
	"</ec2:instanceState></ec2:item>\n"
	"  <ec2:item><ec2:instanceId>i-stopping</ec2:instanceId>"
	"<ec2:instanceState><ec2:code>64</ec2:code></ec2:instanceState>"
	"<ec2:tagSet><ec2:item><ec2:key>Name</ec2:key><ec2:value>a&lt;b&gt;"
	"&quot;c&quot;&apos;&#233;&#x1F600;<![CDATA[<raw>&amp;]]>"
	"</ec2:value></ec2:item><ec2:item><ec2:key>empty</ec2:key>"
	"<ec2:value/></ec2:item></ec2:tagSet></ec2:item>\n"
	" </ec2:instancesSet></ec2:item>\n"
	"</ec2:reservationSet>\n"
	"</ec2:DescribeInstancesResponse>\n";

static void test_describe_states(void **state)
{
	env e;
	gb_describe_req d;
	gb_error err;
	got g;
	(void)state;
	start(&e, 0);
	memset(&err, 0, sizeof(err));
	memset(&d, 0, sizeof(d));
	d.region = "us-east-1";
	d.pool = "p";
	d.include_terminated = 1;
	memset(&g, 0, sizeof(g));
	fakehost_push(e.fh, 200, states_answer, xml_h);
	assert_int_equal(aws_driver.describe(e.ctx, &d, collect, &g, &err),
	                 0);
	assert_int_equal(g.n, 8);
	assert_int_equal(g.state[0], GB_INST_PENDING);
	assert_int_equal(g.state[1], GB_INST_RUNNING); /* 272 & 0xFF = 16 */
	assert_int_equal(g.created[1], 1709251199);
	assert_int_equal(g.state[2], GB_INST_PREEMPTED);
	assert_string_equal(g.reason[2], "Server.SpotInstanceTermination");
	assert_int_equal(g.cap[2], GB_CAPACITY_SPOT);
	assert_int_equal(g.state[3], GB_INST_PREEMPTED);
	assert_int_equal(g.state[4], GB_INST_TERMINATED);
	assert_int_equal(g.state[5], GB_INST_FAILED);
	assert_int_equal(g.state[6], GB_INST_FAILED);
	assert_int_equal(g.state[7], GB_INST_STOPPING);
	assert_string_equal(g.name[7], "a<b>\"c\"'\xc3\xa9\xf0\x9f\x98\x80"
	                               "<raw>&amp;");
	assert_non_null(strstr(g.tagdump[7], "empty=;"));
	assert_string_equal(g.reason[0], "(null)");
	assert_string_equal(g.zone[0], "");
	assert_string_equal(g.type[0], "-");

	/* without include_terminated only the one terminated at our
	 * request disappears: preempted and failed ones still show */
	d.include_terminated = 0;
	memset(&g, 0, sizeof(g));
	fakehost_push(e.fh, 200, states_answer, xml_h);
	assert_int_equal(aws_driver.describe(e.ctx, &d, collect, &g, &err),
	                 0);
	assert_int_equal(g.n, 7);
	for (size_t i = 0; i < g.n; i++)
		assert_string_not_equal(g.id[i], "i-byus");
	stop(&e, &err);
}

static void test_describe_ids_eventual(void **state)
{
	env e;
	gb_describe_req d;
	gb_error err;
	got g;
	const char *ids[] = {"i-0aa1", "i-0bb2", "i-0cc3"};
	(void)state;
	start(&e, 0);
	memset(&err, 0, sizeof(err));
	memset(&g, 0, sizeof(g));
	memset(&d, 0, sizeof(d));
	d.region = "us-east-1";
	d.ids = ids;
	d.nids = 3;
	fakehost_push(e.fh, 400, ec2_error("InvalidInstanceID.NotFound",
	                                   "The instance ID 'i-0bb2' does not "
	                                   "exist"), xml_h);
	fakehost_push(e.fh, 200, describe_page("i-0aa1,i-0cc3", NULL), xml_h);
	assert_int_equal(aws_driver.describe(e.ctx, &d, collect, &g, &err),
	                 0);
	assert_int_equal(g.n, 2);
	assert_int_equal(fakehost_nrequests(e.fh), 2);
	{
		const char *b0 = fakehost_request(e.fh, 0)->body;
		const char *b1 = fakehost_request(e.fh, 1)->body;
		assert_string_equal(form_get(b0, "InstanceId.3"), "i-0cc3");
		assert_null(form_get(b0, "MaxResults"));
		assert_null(form_get(b0, "Filter.1.Name"));
		assert_string_equal(form_get(b1, "InstanceId.1"), "i-0aa1");
		assert_string_equal(form_get(b1, "InstanceId.2"), "i-0cc3");
		assert_null(form_get(b1, "InstanceId.3"));
		assert_null(form_get(b1, "MaxResults"));
	}
	stop(&e, &err);

	/* a NotFound that names none of them: one call per id */
	start(&e, 0);
	memset(&g, 0, sizeof(g));
	fakehost_push(e.fh, 400, ec2_error("InvalidInstanceID.NotFound",
	                                   "Some instances do not exist"),
	              xml_h);
	fakehost_push(e.fh, 200, describe_page("i-0aa1", NULL), xml_h);
	fakehost_push(e.fh, 400, ec2_error("InvalidInstanceID.NotFound",
	                                   "gone"), xml_h);
	fakehost_push(e.fh, 200, describe_page("i-0cc3", NULL), xml_h);
	assert_int_equal(aws_driver.describe(e.ctx, &d, collect, &g, &err),
	                 0);
	assert_int_equal(g.n, 2);
	assert_int_equal(fakehost_nrequests(e.fh), 4);
	assert_string_equal(form_get(fakehost_request(e.fh, 2)->body,
	                             "InstanceId.1"), "i-0bb2");
	assert_null(form_get(fakehost_request(e.fh, 2)->body,
	                     "InstanceId.2"));
	stop(&e, &err);

	/* other errors are reported */
	start(&e, 0);
	fakehost_push(e.fh, 403, ec2_error("UnauthorizedOperation",
	                                   "You are not authorized to "
	                                   "perform this operation."), xml_h);
	assert_int_equal(aws_driver.describe(e.ctx, &d, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	stop(&e, &err);
}

/* ----------------------------------------------------------- terminate */

static const char term_ok[] =
	"<TerminateInstancesResponse " NS "><requestId>x</requestId>"
	"<instancesSet><item><instanceId>i-0aa1</instanceId><currentState>"
	"<code>32</code><name>shutting-down</name></currentState>"
	"<previousState><code>16</code><name>running</name></previousState>"
	"</item></instancesSet></TerminateInstancesResponse>";

static void test_terminate_grouping(void **state)
{
	env e;
	gb_error err;
	gb_instance_ref refs[] = {
		{"i-0aa1", "us-east-1", "us-east-1a"},
		{"i-0ee1", "eu-west-1", ""},
		{"i-0aa2", "us-east-1", "us-east-1b"},
		{"i-0ee2", "eu-west-1", ""},
		{"i-0aa3", "us-east-1", ""},
	};
	(void)state;
	start(&e, 0);
	memset(&err, 0, sizeof(err));
	/* us-east-1: one id is long gone -> retried without it */
	fakehost_push(e.fh, 400, ec2_error("InvalidInstanceID.NotFound",
	                                   "The instance IDs 'i-0aa2, i-0zz9' "
	                                   "do not exist"), xml_h);
	fakehost_push(e.fh, 200, term_ok, xml_h);
	fakehost_push(e.fh, 200, term_ok, xml_h);
	assert_int_equal(aws_driver.terminate(e.ctx, refs, 5, &err), 0);
	assert_int_equal(fakehost_nrequests(e.fh), 3);
	{
		const fakehost_req *q0 = fakehost_request(e.fh, 0);
		const fakehost_req *q1 = fakehost_request(e.fh, 1);
		const fakehost_req *q2 = fakehost_request(e.fh, 2);
		assert_string_equal(q0->url,
		                    "https://ec2.us-east-1.amazonaws.com/");
		assert_string_equal(q0->rate_class, "TerminateInstances");
		assert_string_equal(form_get(q0->body, "InstanceId.1"),
		                    "i-0aa1");
		assert_string_equal(form_get(q0->body, "InstanceId.2"),
		                    "i-0aa2");
		assert_string_equal(form_get(q0->body, "InstanceId.3"),
		                    "i-0aa3");
		assert_string_equal(form_get(q1->body, "InstanceId.2"),
		                    "i-0aa3");
		assert_null(form_get(q1->body, "InstanceId.3"));
		assert_string_equal(q2->url,
		                    "https://ec2.eu-west-1.amazonaws.com/");
		assert_string_equal(form_get(q2->body, "InstanceId.1"),
		                    "i-0ee1");
		assert_string_equal(form_get(q2->body, "InstanceId.2"),
		                    "i-0ee2");
		check_signed(&e, q2, "eu-west-1", 0);
	}
	stop(&e, &err);

	/* all gone already: success */
	start(&e, 0);
	fakehost_push(e.fh, 400, ec2_error("InvalidInstanceID.NotFound",
	                                   "The instance ID 'i-0aa1' does not "
	                                   "exist"), xml_h);
	assert_int_equal(aws_driver.terminate(e.ctx, refs, 1, &err), 0);
	assert_int_equal(fakehost_nrequests(e.fh), 1);
	/* a malformed id is INVALID */
	fakehost_push(e.fh, 400, ec2_error("InvalidInstanceID.Malformed",
	                                   "Invalid id: \"x\""), xml_h);
	assert_int_equal(aws_driver.terminate(e.ctx, refs, 1, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	stop(&e, &err);
}

/* ------------------------------------------------------ malformed input */

static void test_malformed_answers(void **state)
{
	static const char *const html_h[] = {"Content-Type: text/html", NULL};
	gb_describe_req d;
	gb_error err;
	got g;
	env e;
	static const char *const bad[] = {
		/* truncated */
		"<DescribeInstancesResponse " NS "><reservationSet><item>",
		/* wrong root */
		"<RunInstancesResponse " NS "><instancesSet/>"
		"</RunInstancesResponse>",
		/* wrong type: state code */
		"<DescribeInstancesResponse><reservationSet><item><instancesSet>"
		"<item><instanceId>i-1</instanceId><instanceState><code>abc"
		"</code></instanceState></item></instancesSet></item>"
		"</reservationSet></DescribeInstancesResponse>",
		/* wrong type: launchTime */
		"<DescribeInstancesResponse><reservationSet><item><instancesSet>"
		"<item><instanceId>i-1</instanceId><instanceState><code>16"
		"</code></instanceState><launchTime>yesterday</launchTime>"
		"</item></instancesSet></item></reservationSet>"
		"</DescribeInstancesResponse>",
		/* missing instanceId */
		"<DescribeInstancesResponse><reservationSet><item><instancesSet>"
		"<item><instanceState><code>16</code></instanceState></item>"
		"</instancesSet></item></reservationSet>"
		"</DescribeInstancesResponse>",
		/* no state at all */
		"<DescribeInstancesResponse><reservationSet><item><instancesSet>"
		"<item><instanceId>i-1</instanceId></item></instancesSet>"
		"</item></reservationSet></DescribeInstancesResponse>",
		/* no reservationSet */
		"<DescribeInstancesResponse/>",
		/* not XML */
		"{\"Reservations\": []}",
		/* empty */
		"",
		/* mismatched tags */
		"<DescribeInstancesResponse><reservationSet></item>"
		"</DescribeInstancesResponse>",
		/* DOCTYPE / entity expansion */
		"<!DOCTYPE x [<!ENTITY a \"aaaa\">]><DescribeInstancesResponse>"
		"<reservationSet/></DescribeInstancesResponse>",
		/* unknown entity */
		"<DescribeInstancesResponse><reservationSet><item><instancesSet>"
		"<item><instanceId>&bogus;</instanceId></item></instancesSet>"
		"</item></reservationSet></DescribeInstancesResponse>",
	};
	(void)state;
	start(&e, 0);
	memset(&d, 0, sizeof(d));
	d.region = "us-east-1";
	d.pool = "p";
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		memset(&g, 0, sizeof(g));
		fakehost_push(e.fh, 200, bad[i], xml_h);
		if (aws_driver.describe(e.ctx, &d, collect, &g, &err) != -1)
			fail_msg("bad answer %zu accepted", i);
		assert_int_equal(err.cls, GB_ERR_INVALID);
		assert_true(strlen(err.message) > 10);
		assert_no_secret_in(&e, err.message);
	}
	/* HTML with 200 and the wrong content type */
	fakehost_push(e.fh, 200, "<html><body>Login required</body></html>",
	              html_h);
	assert_int_equal(aws_driver.describe(e.ctx, &d, collect, &g, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_non_null(strstr(err.message, "text/html"));
	/* a 20 MB answer */
	{
		size_t big = 20u * 1024 * 1024;
		char *b = malloc(big + 1);
		memset(b, ' ', big);
		memcpy(b, "<DescribeInstancesResponse>", 27);
		b[big] = '\0';
		fakehost_push(e.fh, 200, b, xml_h);
		free(b);
		assert_int_equal(aws_driver.describe(e.ctx, &d, collect, &g,
		                                     &err), -1);
		assert_int_equal(err.cls, GB_ERR_INVALID);
		assert_non_null(strstr(err.message, "exceeds"));
	}
	/* a huge error body is still classified cleanly */
	{
		size_t big = 20u * 1024 * 1024;
		char *b = malloc(big + 1);
		memset(b, 'x', big);
		b[big] = '\0';
		for (int i = 0; i < 3; i++)
			fakehost_push(e.fh, 500, b, html_h);
		free(b);
		assert_int_equal(aws_driver.describe(e.ctx, &d, collect, &g,
		                                     &err), -1);
		assert_int_equal(err.cls, GB_ERR_TRANSIENT);
		assert_true(strlen(err.message) < sizeof(err.message));
	}
	stop(&e, &err);
}

/* every prefix of a valid answer is rejected cleanly (or, for the whole
 * document, accepted) */
static void test_truncation_sweep(void **state)
{
	size_t n = strlen(states_answer);
	(void)state;
	for (size_t len = 0; len <= n; len++) {
		size_t cnt = 0;
		gb_error err;
		char *copy = malloc(len + 1);
		int r;
		memcpy(copy, states_answer, len);
		copy[len] = '\0';
		memset(&err, 0, sizeof(err));
		r = aws_ec2_parse_instances(copy, len,
		                            "DescribeInstancesResponse",
		                            "us-east-1", count_sink, &cnt, NULL,
		                            &err);
		free(copy);
		/* trailing whitespace after the root may be cut harmlessly */
		if (len >= n - 1) {
			assert_int_equal(r, 8);
		} else {
			if (r != -1)
				fail_msg("prefix of %zu bytes accepted", len);
			assert_int_equal(err.cls, GB_ERR_INVALID);
		}
	}
}

/* -------------------------------------------------------- XML reader */

static void test_xml_reader(void **state)
{
	char err[200];
	aws_xml_doc *d;
	const aws_xml_node *r;
	long long v;
	double dv;
	(void)state;
	{
		static const char doc[] =
			"<?xml version='1.0'?><a:r xmlns:a='x' b=\"1>2\">"
			"<x>1</x><x> 2 </x><y/><z>t&#65;&#x42;&amp;"
			"<!-- c -->u</z><n> -7 </n><f>0.125</f></a:r>";
		d = aws_xml_parse(doc, strlen(doc), err, sizeof(err));
		if (!d)
			fail_msg("%s", err);
	}
	assert_non_null(d);
	r = aws_xml_root(d);
	assert_string_equal(r->name, "r");
	assert_string_equal(aws_xml_text(r, "x"), "1");
	assert_string_equal(aws_xml_next_named(aws_xml_child(r, "x"))->text,
	                    " 2 ");
	assert_null(aws_xml_next_named(
		aws_xml_next_named(aws_xml_child(r, "x"))));
	assert_string_equal(aws_xml_text(r, "y"), "");
	assert_string_equal(aws_xml_text(r, "z"), "tAB&u");
	assert_null(aws_xml_text(r, "missing"));
	assert_int_equal(aws_xml_int(r, "n", &v), 0);
	assert_int_equal(v, -7);
	assert_int_equal(aws_xml_int(r, "z", &v), -2);
	assert_int_equal(aws_xml_int(r, "none", &v), -1);
	assert_int_equal(aws_xml_double(r, "f", &dv), 0);
	assert_true(dv == 0.125);
	aws_xml_free(d);

	{
		static const char *const bad[] = {
			"", "   ", "<a>", "<a></b>", "<a/><b/>", "text",
			"<a>&#0;</a>", "<a>&#xD800;</a>", "<a>&#1114112;</a>",
			"<a>&amp</a>", "<a b></a>", "<a b=c></a>",
			"<a b='<'></a>", "<!DOCTYPE a><a/>", "<a><!-- x</a>",
			"<a><![CDATA[x</a>", "<a>\x01</a>", "<a/>trailing",
			"<1a/>", "<a></a >x", "<a>&#x;</a>", "<a x='1'y='2'/>",
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			d = aws_xml_parse(bad[i], strlen(bad[i]), err,
			                  sizeof(err));
			if (d)
				fail_msg("accepted bad XML %zu: %s", i, bad[i]);
			assert_true(strlen(err) > 0);
		}
		/* a NUL byte inside */
		d = aws_xml_parse("<a>\0</a>", 8, err, sizeof(err));
		assert_null(d);
	}
	/* depth bound */
	{
		drvc_buf b = DRVC_BUF_INIT;
		for (int i = 0; i < AWS_XML_MAX_DEPTH + 1; i++)
			drvc_buf_adds(&b, "<a>");
		for (int i = 0; i < AWS_XML_MAX_DEPTH + 1; i++)
			drvc_buf_adds(&b, "</a>");
		d = aws_xml_parse(b.data, b.len, err, sizeof(err));
		assert_null(d);
		assert_non_null(strstr(err, "deeper"));
		drvc_buf_free(&b);
	}
	/* node bound */
	{
		drvc_buf b = DRVC_BUF_INIT;
		drvc_buf_adds(&b, "<r>");
		for (unsigned i = 0; i < AWS_XML_MAX_NODES + 1; i++)
			drvc_buf_adds(&b, "<a/>");
		drvc_buf_adds(&b, "</r>");
		d = aws_xml_parse(b.data, b.len, err, sizeof(err));
		assert_null(d);
		assert_non_null(strstr(err, "elements"));
		drvc_buf_free(&b);
	}
	/* fed in pieces (a streamed body): byte by byte, same tree */
	{
		static const char doc[] =
			"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			"<DescribeInstancesResponse xmlns=\"http://ec2\">"
			"<nextToken>t&amp;1</nextToken><a><b>x</b><c/></a>"
			"</DescribeInstancesResponse>";
		aws_xml_reader *rd = aws_xml_begin();
		for (size_t i = 0; i < sizeof(doc) - 1; i++)
			assert_int_equal(aws_xml_feed(rd, doc + i, 1, err,
			                              sizeof(err)), 0);
		d = aws_xml_end(rd, err, sizeof(err));
		assert_non_null(d);
		r = aws_xml_root(d);
		assert_string_equal(r->name, "DescribeInstancesResponse");
		assert_string_equal(aws_xml_text(r, "nextToken"), "t&1");
		assert_string_equal(aws_xml_text(r, "a/b"), "x");
		assert_non_null(aws_xml_path(r, "a/c"));
		aws_xml_free(d);
		/* a failure is sticky and names the byte */
		rd = aws_xml_begin();
		assert_int_equal(aws_xml_feed(rd, "<a><b></a>", 10, err,
		                              sizeof(err)), -1);
		assert_non_null(strstr(err, "byte"));
		assert_int_equal(aws_xml_feed(rd, "</b>", 4, err, sizeof(err)),
		                 -1);
		assert_null(aws_xml_end(rd, err, sizeof(err)));
		/* an entity declaration (billion laughs) is refused */
		d = aws_xml_parse("<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>",
		                  40, err, sizeof(err));
		assert_null(d);
		assert_non_null(strstr(err, "DOCTYPE"));
	}
}

/* --------------------------------------------------------- credentials */

static char tmpdir[64];

static char *write_tmp(const char *name, const char *text)
{
	static char path[128];
	FILE *f;
	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/gbawsXXXXXX");
		assert_non_null(mkdtemp(tmpdir));
	}
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static const char creds_ini[] =
	"# comment line\n"
	"; another\n"
	"[default]\n"
	"aws_access_key_id = AKIDDEFAULT\n"
	"aws_secret_access_key=defaultsecretdefaultsecret\n"
	"\n"
	"  [ ci ]  \n"
	"\taws_access_key_id\t=\tAKIDCI  \n"
	"aws_secret_access_key = " SECRET " # trailing comment\n"
	"aws_session_token = " TOKEN "\n"
	"[profile broken]\n"
	"aws_access_key_id = AKIDBROKEN\n";

static void test_creds_file(void **state)
{
	env e;
	gb_create_req r = base_req();
	gb_error err;
	got g;
	char *path;
	aws_creds c;
	(void)state;

	/* the INI reader alone */
	memset(&c, 0, sizeof(c));
	assert_int_equal(aws_creds_parse_ini(creds_ini, strlen(creds_ini),
	                                     "ci", &c), 1);
	assert_string_equal(c.access_key, "AKIDCI");
	assert_string_equal(c.secret_key, SECRET);
	assert_string_equal(c.session_token, TOKEN);
	memset(&c, 0, sizeof(c));
	assert_int_equal(aws_creds_parse_ini(creds_ini, strlen(creds_ini),
	                                     "nope", &c), 0);

	/* through the driver: AWS_SHARED_CREDENTIALS_FILE + AWS_PROFILE */
	start_bare(&e);
	path = write_tmp("credentials", creds_ini);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	setenv("AWS_PROFILE", "ci", 1);
	init_bare(&e);
	memset(&err, 0, sizeof(err));
	memset(&g, 0, sizeof(g));
	fakehost_push(e.fh, 200, run_answer, xml_h);
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), 0);
	{
		const fakehost_req *q = fakehost_request(e.fh, 0);
		assert_non_null(strstr(fakehost_req_header(q, "Authorization"),
		                       "Credential=AKIDCI/"));
		assert_string_equal(
			fakehost_req_header(q, "X-Amz-Security-Token"), TOKEN);
	}
	assert_non_null(strstr(fakehost_logs(e.fh), "profile [ci]"));
	stop(&e, &err);

	/* profile from the option when AWS_PROFILE is unset; default
	 * otherwise */
	start_bare(&e);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	fakehost_option(e.fh, "profile", "default");
	init_bare(&e);
	fakehost_push(e.fh, 200, run_answer, xml_h);
	memset(&g, 0, sizeof(g));
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), 0);
	assert_non_null(strstr(fakehost_req_header(fakehost_request(e.fh, 0),
	                                           "Authorization"),
	                       "Credential=AKIDDEFAULT/"));
	assert_null(fakehost_req_header(fakehost_request(e.fh, 0),
	                                "X-Amz-Security-Token"));
	stop(&e, NULL);

	/* a profile without a secret: AUTH, says which file and profile */
	start_bare(&e);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	setenv("AWS_PROFILE", "broken", 1);
	init_bare(&e);
	memset(&err, 0, sizeof(err));
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_non_null(strstr(err.message, path));
	assert_non_null(strstr(err.message, "[broken]"));
	assert_non_null(strstr(err.message, "aws_secret_access_key"));
	assert_int_equal(fakehost_nrequests(e.fh), 0);
	stop(&e, &err);
	unlink(path);
}

static void test_creds_none_and_options(void **state)
{
	env e;
	gb_create_req r = base_req();
	gb_describe_req d;
	gb_instance_ref ref = {"i-1", "us-east-1", ""};
	gb_error err;
	got g;
	size_t n = 0;
	(void)state;

	/* none: init works (offers need no credentials); calls fail AUTH */
	start_bare(&e);
	init_bare(&e);
	memset(&err, 0, sizeof(err));
	memset(&g, 0, sizeof(g));
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_string_equal(err.code, "NoCredentials");
	assert_non_null(strstr(err.message, "AWS_ACCESS_KEY_ID"));
	assert_non_null(strstr(err.message, "AWS_SECRET_ACCESS_KEY"));
	assert_non_null(strstr(err.message, "AWS_PROFILE"));
	assert_non_null(strstr(err.message, "/nonexistent-gpubroker-test-home/"
	                                    ".aws/credentials"));
	memset(&d, 0, sizeof(d));
	d.region = "us-east-1";
	d.pool = "p";
	assert_int_equal(aws_driver.describe(e.ctx, &d, count_sink, &n, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_int_equal(aws_driver.terminate(e.ctx, &ref, 1, &err), -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_int_equal(fakehost_nrequests(e.fh), 0);
	stop(&e, &err);

	/* only the access key in the environment is not enough */
	start_bare(&e);
	fakehost_secret(e.fh, "env:AWS_ACCESS_KEY_ID", AKID);
	init_bare(&e);
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	stop(&e, &err);

	/* sources named in the broker config win over the environment */
	start_bare(&e);
	fakehost_secret(e.fh, "env:AWS_ACCESS_KEY_ID", "AKIDFROMENV");
	fakehost_secret(e.fh, "env:AWS_SECRET_ACCESS_KEY", "envsecretenvsecret");
	fakehost_option(e.fh, "credentials.access_key_id", "env:MY_AK");
	fakehost_option(e.fh, "credentials.secret_access_key",
	                "file:/run/secrets/aws");
	fakehost_option(e.fh, "credentials.session_token", "env:MY_TOK");
	fakehost_secret(e.fh, "env:MY_AK", "AKIDFROMOPTION");
	fakehost_secret(e.fh, "file:/run/secrets/aws", SECRET);
	fakehost_secret(e.fh, "env:MY_TOK", TOKEN);
	init_bare(&e);
	fakehost_push(e.fh, 200, run_answer, xml_h);
	memset(&g, 0, sizeof(g));
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), 0);
	assert_non_null(strstr(fakehost_req_header(fakehost_request(e.fh, 0),
	                                           "Authorization"),
	                       "Credential=AKIDFROMOPTION/"));
	want_akid = "AKIDFROMOPTION";
	check_signed(&e, fakehost_request(e.fh, 0), "us-east-1", 1);
	want_akid = AKID;
	stop(&e, NULL);
}

/* ------------------------------------------------------------ endpoint */

static void test_endpoints(void **state)
{
	env e;
	gb_describe_req d;
	gb_error err;
	size_t n = 0;
	(void)state;
	memset(&d, 0, sizeof(d));
	d.region = "eu-central-1";
	d.pool = "p";

	start(&e, 0);
	aws_driver.fini(e.ctx);
	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9/", 1);
	setenv("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:4566/", 1);
	fakehost_option(e.fh, "endpoint", "http://127.0.0.1:1");
	init_bare(&e);
	fakehost_push(e.fh, 200, describe_page("i-1", NULL), xml_h);
	assert_int_equal(aws_driver.describe(e.ctx, &d, count_sink, &n, &err),
	                 0);
	{
		const fakehost_req *q = fakehost_request(e.fh, 0);
		assert_string_equal(q->url, "http://127.0.0.1:4566/");
		assert_string_equal(fakehost_req_header(q, "Host"),
		                    "127.0.0.1:4566");
		/* signing keeps the real region and service */
		check_signed(&e, q, "eu-central-1", 0);
	}
	aws_driver.fini(e.ctx);

	unsetenv("AWS_ENDPOINT_URL_EC2");
	init_bare(&e);
	fakehost_push(e.fh, 200, describe_page("i-1", NULL), xml_h);
	assert_int_equal(aws_driver.describe(e.ctx, &d, count_sink, &n, &err),
	                 0);
	assert_string_equal(fakehost_request(e.fh, 1)->url,
	                    "http://127.0.0.1:9/");
	aws_driver.fini(e.ctx);

	/* ignored env -> the broker config's endpoint, with a path */
	setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
	fakehost_option(e.fh, "endpoint", "https://gw.example.com:443/ec2/");
	init_bare(&e);
	fakehost_push(e.fh, 200, describe_page("i-1", NULL), xml_h);
	assert_int_equal(aws_driver.describe(e.ctx, &d, count_sink, &n, &err),
	                 0);
	{
		const fakehost_req *q = fakehost_request(e.fh, 2);
		assert_string_equal(q->url,
		                    "https://gw.example.com:443/ec2/");
		assert_string_equal(fakehost_req_header(q, "Host"),
		                    "gw.example.com");
		check_signed(&e, q, "eu-central-1", 0);
	}
	aws_driver.fini(e.ctx);
	e.ctx = NULL;

	/* a bad endpoint fails init with a clear message */
	fakehost_option(e.fh, "endpoint", "ftp://x");
	memset(&err, 0, sizeof(err));
	assert_int_equal(aws_driver.init(e.host, &e.ctx, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_non_null(strstr(err.message, "option endpoint"));
	e.ctx = NULL;
	stop(&e, &err);

	/* China regions */
	start(&e, 0);
	d.region = "cn-north-1";
	fakehost_push(e.fh, 200, describe_page("i-1", NULL), xml_h);
	assert_int_equal(aws_driver.describe(e.ctx, &d, count_sink, &n, &err),
	                 0);
	assert_string_equal(fakehost_request(e.fh, 0)->url,
	                    "https://ec2.cn-north-1.amazonaws.com.cn/");
	stop(&e, &err);
}

/* ------------------------------------------------------ secrets hygiene */

static void echo_handler(void *ud, const fakehost_req *req, long *status,
                         char **body, char ***headers, size_t *nheaders)
{
	const char *auth = fakehost_req_header(req, "Authorization");
	const char *tok = fakehost_req_header(req, "X-Amz-Security-Token");
	char *b = malloc(8192);
	(void)ud;
	/* a hostile or buggy endpoint echoes what it got */
	snprintf(b, 8192, "<Response><Errors><Error><Code>AuthFailure</Code>"
	         "<Message>bad request: Authorization: %s token %s secret %s"
	         "</Message></Error></Errors></Response>", auth, tok, SECRET);
	*status = 401;
	*body = b;
	*headers = NULL;
	*nheaders = 0;
}

static void test_no_secret_leaks(void **state)
{
	env e;
	gb_create_req r = base_req();
	gb_error err;
	got g;
	(void)state;
	start(&e, 1);
	fakehost_set_handler(e.fh, echo_handler, NULL);
	memset(&err, 0, sizeof(err));
	memset(&g, 0, sizeof(g));
	assert_int_equal(aws_driver.create(e.ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_non_null(strstr(err.message, "[redacted]"));
	assert_non_null(strstr(err.message, "Credential=" AKID));
	assert_int_equal(fakehost_nrequests(e.fh), 1);
	stop(&e, &err); /* checks message, code and logs */

	/* a message cut at the buffer's end in the middle of a secret */
	{
		char msg[64];
		const char *scrub[] = {SECRET};
		snprintf(msg, sizeof(msg), "%.50s%.13s",
		         "prefix prefix prefix prefix prefix prefix prefix",
		         SECRET);
		aws_scrub(msg, sizeof(msg), scrub, 1);
		assert_null(strstr(msg, "Zk3s9SECRET"));
		assert_non_null(strstr(msg, "[redacted]"));
	}
}

/* --------------------------------------------------------- price refresh */

static const char catalog_json[] =
	"{\"format\": 1, \"cloud\": \"aws\", \"source\": \"test catalog\","
	" \"fetched_at\": \"2026-01-01\", \"currency\": \"USD\", \"types\": ["
	" {\"type\": \"p4de.24xlarge\", \"gpu\": \"A100\", \"gpus\": 8,"
	"  \"gpu_memory_gb\": 40, \"vcpus\": 96, \"ram_gb\": 1100,"
	"  \"regions\": {\"us-east-1\": {\"on_demand\": 40.96, \"spot\": 20.0,"
	"   \"zones\": [\"us-east-1a\", \"us-east-1b\"]},"
	"   \"eu-west-1\": {\"on_demand\": 45.0}}},"
	" {\"type\": \"g5.xlarge\", \"gpu\": \"A10G\", \"gpus\": 1,"
	"  \"gpu_memory_gb\": 24, \"vcpus\": 4, \"ram_gb\": 16,"
	"  \"regions\": {\"us-east-1\": {\"on_demand\": 1.006,"
	"   \"zones\": [\"us-east-1a\"]}}},"
	" {\"type\": \"p9.fake\", \"gpu\": \"H100\", \"gpus\": 8,"
	"  \"gpu_memory_gb\": 80, \"vcpus\": 192, \"ram_gb\": 2048,"
	"  \"regions\": {\"us-east-1\": {\"on_demand\": 99.0}}}"
	"]}";

static const char types_answer[] =
	"<DescribeInstanceTypesResponse " NS "><requestId>r</requestId>"
	"<instanceTypeSet>"
	"<item><instanceType>p4de.24xlarge</instanceType>"
	"<vCpuInfo><defaultVCpus>96</defaultVCpus></vCpuInfo>"
	"<memoryInfo><sizeInMiB>1179648</sizeInMiB></memoryInfo>"
	"<gpuInfo><gpus><item><name>A100</name><manufacturer>NVIDIA"
	"</manufacturer><count>8</count><memoryInfo><sizeInMiB>81920"
	"</sizeInMiB></memoryInfo></item></gpus><totalGpuMemoryInMiB>655360"
	"</totalGpuMemoryInMiB></gpuInfo></item>"
	"<item><instanceType>g5.xlarge</instanceType>"
	"<vCpuInfo><defaultVCpus>4</defaultVCpus></vCpuInfo>"
	"<memoryInfo><sizeInMiB>16384</sizeInMiB></memoryInfo>"
	"<gpuInfo><gpus><item><name>A10G</name><manufacturer>NVIDIA"
	"</manufacturer><count>1</count><memoryInfo><sizeInMiB>22888"
	"</sizeInMiB></memoryInfo></item></gpus></gpuInfo></item>"
	"</instanceTypeSet></DescribeInstanceTypesResponse>";

static const char spot_page1[] =
	"<DescribeSpotPriceHistoryResponse " NS "><requestId>r</requestId>"
	"<spotPriceHistorySet>"
	"<item><instanceType>p4de.24xlarge</instanceType><productDescription>"
	"Linux/UNIX</productDescription><spotPrice>19.500000</spotPrice>"
	"<timestamp>2023-11-14T20:00:00.000Z</timestamp><availabilityZone>"
	"us-east-1a</availabilityZone></item>"
	"<item><instanceType>p4de.24xlarge</instanceType><productDescription>"
	"Linux/UNIX</productDescription><spotPrice>18.250000</spotPrice>"
	"<timestamp>2023-11-14T21:00:00.000Z</timestamp><availabilityZone>"
	"us-east-1a</availabilityZone></item>"
	"</spotPriceHistorySet><nextToken>p2</nextToken>"
	"</DescribeSpotPriceHistoryResponse>";

static const char spot_page2[] =
	"<DescribeSpotPriceHistoryResponse " NS "><requestId>r</requestId>"
	"<spotPriceHistorySet>"
	"<item><instanceType>g5.xlarge</instanceType><productDescription>"
	"Linux/UNIX</productDescription><spotPrice>0.4123</spotPrice>"
	"<timestamp>2023-11-14T21:30:00.000Z</timestamp><availabilityZone>"
	"us-east-1c</availabilityZone></item>"
	"</spotPriceHistorySet><nextToken></nextToken>"
	"</DescribeSpotPriceHistoryResponse>";

typedef struct offers {
	size_t n;
	char line[32][200];
} offers;

static int collect_offer(void *ud, const gb_offer *o)
{
	offers *of = ud;
	assert_true(of->n < 32);
	snprintf(of->line[of->n++], 200, "%s|%s|%s|%s|%d|%d|%d|%.0f|%s|%.4f|"
	         "%s|%lld", o->region, o->zone, o->instance_type, o->gpu_model,
	         o->gpu_count, o->gpu_memory_gb, o->vcpus, o->ram_gb,
	         o->capacity == GB_CAPACITY_SPOT ? "spot" : "od",
	         o->price_per_hour, o->source, (long long)o->fetched_at);
	return 0;
}

static void test_refresh_prices(void **state)
{
	env e;
	gb_error err;
	offers of;
	char *cat;
	(void)state;
	start(&e, 0);
	cat = write_tmp("offers.json", catalog_json);
	fakehost_option(e.fh, "catalog", cat);
	memset(&err, 0, sizeof(err));

	/* list_offers: the shipped catalog as is */
	memset(&of, 0, sizeof(of));
	assert_int_equal(aws_driver.list_offers(e.ctx, collect_offer, &of,
	                                        &err), 0);
	assert_int_equal(of.n, 7);

	memset(&of, 0, sizeof(of));
	fakehost_push(e.fh, 200, types_answer, xml_h);
	fakehost_push(e.fh, 200, spot_page1, xml_h);
	fakehost_push(e.fh, 200, spot_page2, xml_h);
	assert_int_equal(aws_driver.refresh_prices(e.ctx, "us-east-1",
	                                           collect_offer, &of, &err),
	                 0);
	assert_int_equal(fakehost_nrequests(e.fh), 3);
	{
		const char *b0 = fakehost_request(e.fh, 0)->body;
		const char *b2 = fakehost_request(e.fh, 2)->body;
		assert_string_equal(fakehost_request(e.fh, 0)->rate_class,
		                    "DescribeInstanceTypes");
		assert_string_equal(form_get(b0, "Filter.1.Value.3"),
		                    "p9.fake");
		assert_string_equal(fakehost_request(e.fh, 1)->rate_class,
		                    "DescribeSpotPriceHistory");
		assert_string_equal(form_get(b2, "NextToken"), "p2");
		assert_string_equal(form_get(b2, "StartTime"),
		                    "2023-11-14T22:13:20Z");
	}
	{
		static const char *const want[] = {
			"us-east-1|us-east-1a|p4de.24xlarge|A100-80GB|8|80|96|"
			"1152|od|40.9600|test catalog|1767225600",
			"us-east-1|us-east-1b|p4de.24xlarge|A100-80GB|8|80|96|"
			"1152|od|40.9600|test catalog|1767225600",
			"us-east-1|us-east-1a|p4de.24xlarge|A100-80GB|8|80|96|"
			"1152|spot|18.2500|ec2:DescribeSpotPriceHistory "
			"https://ec2.us-east-1.amazonaws.com/|1700000000",
			"us-east-1|us-east-1a|g5.xlarge|A10G|1|22|4|16|od|1.0060|"
			"test catalog|1767225600",
			"us-east-1|us-east-1c|g5.xlarge|A10G|1|22|4|16|spot|"
			"0.4123|ec2:DescribeSpotPriceHistory "
			"https://ec2.us-east-1.amazonaws.com/|1700000000",
		};
		assert_int_equal(of.n, 5);
		for (size_t i = 0; i < 5; i++)
			assert_string_equal(of.line[i], want[i]);
	}
	assert_non_null(strstr(fakehost_logs(e.fh), "p9.fake is not offered"));

	/* all regions of the catalog when none is given */
	memset(&of, 0, sizeof(of));
	fakehost_push(e.fh, 200, types_answer, xml_h);
	fakehost_push(e.fh, 200, spot_page2, xml_h);
	fakehost_push(e.fh, 200, types_answer, xml_h);
	fakehost_push(e.fh, 200, spot_page2, xml_h);
	assert_int_equal(aws_driver.refresh_prices(e.ctx, NULL, collect_offer,
	                                           &of, &err), 0);
	assert_int_equal(fakehost_nrequests(e.fh), 7);
	assert_string_equal(fakehost_request(e.fh, 5)->url,
	                    "https://ec2.eu-west-1.amazonaws.com/");

	/* a broken answer is an error, not a silent empty refresh */
	fakehost_push(e.fh, 200, "<DescribeInstanceTypesResponse><instance"
	              "TypeSet><item><instanceType>g5.xlarge</instanceType>"
	              "<vCpuInfo><defaultVCpus>four</defaultVCpus></vCpuInfo>"
	              "</item></instanceTypeSet>"
	              "</DescribeInstanceTypesResponse>", xml_h);
	assert_int_equal(aws_driver.refresh_prices(e.ctx, "us-east-1",
	                                           collect_offer, &of, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_non_null(strstr(err.message, "defaultVCpus"));
	stop(&e, &err);
	unlink(cat);
}

/* list_offers over the catalog shipped in drivers/aws/data */
static int check_shipped(void *ud, const gb_offer *o)
{
	size_t *n = ud;
	assert_non_null(o->region);
	assert_non_null(o->zone);
	assert_non_null(o->instance_type);
	assert_non_null(o->gpu_model);
	assert_true(o->gpu_count >= 1);
	assert_true(o->price_per_hour > 0);
	assert_true(o->capacity == GB_CAPACITY_ON_DEMAND ||
	            o->capacity == GB_CAPACITY_SPOT);
	++*n;
	return 0;
}

static void test_shipped_catalog(void **state)
{
	const char *src = getenv("GB_SRC");
	char path[1024];
	env e;
	gb_error err;
	size_t n = 0;
	(void)state;
	snprintf(path, sizeof(path), "%s/drivers/aws/data/offers.json",
	         src && *src ? src : ".");
	if (access(path, R_OK) != 0) {
		if (src && *src)
			fail_msg("%s is missing", path);
		return; /* run outside the tree without GB_SRC */
	}
	start(&e, 0);
	fakehost_option(e.fh, "catalog", path);
	memset(&err, 0, sizeof(err));
	if (aws_driver.list_offers(e.ctx, check_shipped, &n, &err) != 0)
		fail_msg("%s", err.message);
	assert_true(n > 100);
	stop(&e, &err);

	/* without a catalog option or data_dir: NOT_FOUND, says what to set */
	start(&e, 0);
	assert_int_equal(aws_driver.list_offers(e.ctx, check_shipped, &n,
	                                        &err), -1);
	assert_int_equal(err.cls, GB_ERR_NOT_FOUND);
	assert_non_null(strstr(err.message, "data_dir"));
	stop(&e, &err);
}

/* ---------------------------------------------------------- small units */

static void test_small_units(void **state)
{
	char out[32];
	const char *ids[] = {"i-0abc", "i-0def", "i-0123456789abcdef0"};
	unsigned char gone[3] = {0, 0, 0};
	(void)state;
	aws_gpu_canonical("A100", 81920, out, sizeof(out));
	assert_string_equal(out, "A100-80GB");
	aws_gpu_canonical("A100", 40960, out, sizeof(out));
	assert_string_equal(out, "A100");
	aws_gpu_canonical("l40s", 46068, out, sizeof(out));
	assert_string_equal(out, "L40S");
	aws_gpu_canonical("H100", 81559, out, sizeof(out));
	assert_string_equal(out, "H100");
	aws_gpu_canonical(NULL, 0, out, sizeof(out));
	assert_string_equal(out, "unknown");

	assert_int_equal(aws_ec2_missing_ids("The instance IDs 'i-0abc, "
	                                     "i-0123456789abcdef0' do not "
	                                     "exist", ids, 3, gone), 2);
	assert_int_equal(gone[0], 1);
	assert_int_equal(gone[1], 0);
	assert_int_equal(gone[2], 1);
	memset(gone, 0, 3);
	/* a prefix of a longer id is not a match */
	assert_int_equal(aws_ec2_missing_ids("'i-0abcd' and xi-0def", ids, 3,
	                                     gone), 0);

	assert_int_equal(aws_ec2_map_state(0x1200, NULL, NULL),
	                 GB_INST_PENDING);
	assert_int_equal(aws_ec2_map_state(80, NULL,
	                                   "Server.SpotInstanceShutdown"),
	                 GB_INST_PREEMPTED);
	assert_int_equal(aws_ec2_map_state(-1, "weird", NULL),
	                 GB_INST_UNKNOWN);
	assert_int_equal(aws_ec2_map_state(48, NULL,
	                                   "Client.InstanceInitiatedShutdown"),
	                 GB_INST_TERMINATED);
}

static void test_descriptor(void **state)
{
	(void)state;
	assert_int_equal(aws_driver.abi_major, GB_DRIVER_ABI_MAJOR);
	assert_string_equal(aws_driver.name, "aws");
	assert_int_equal(aws_driver.caps,
	                 GB_DRV_CAP_SPOT | GB_DRV_CAP_BATCH_CREATE |
	                         GB_DRV_CAP_PRICE_REFRESH | GB_DRV_CAP_ZONES |
	                         GB_DRV_CAP_BATCH_TERMINATE |
	                         GB_DRV_CAP_ATOMIC_CREATE);
	assert_non_null(aws_driver.refresh_prices);
	assert_null(aws_driver.quota);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_descriptor),
		cmocka_unit_test(test_run_body_exact),
		cmocka_unit_test(test_other_bodies),
		cmocka_unit_test(test_create_batch),
		cmocka_unit_test(test_create_image_choice),
		cmocka_unit_test(test_create_region_fallback),
		cmocka_unit_test(test_error_classes),
		cmocka_unit_test(test_host_retries),
		cmocka_unit_test(test_create_garbage_answer_undoes),
		cmocka_unit_test(test_create_validation),
		cmocka_unit_test(test_describe_paging),
		cmocka_unit_test(test_describe_states),
		cmocka_unit_test(test_describe_ids_eventual),
		cmocka_unit_test(test_terminate_grouping),
		cmocka_unit_test(test_malformed_answers),
		cmocka_unit_test(test_truncation_sweep),
		cmocka_unit_test(test_xml_reader),
		cmocka_unit_test(test_creds_file),
		cmocka_unit_test(test_creds_none_and_options),
		cmocka_unit_test(test_endpoints),
		cmocka_unit_test(test_no_secret_leaks),
		cmocka_unit_test(test_refresh_prices),
		cmocka_unit_test(test_shipped_catalog),
		cmocka_unit_test(test_small_units),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (tmpdir[0])
		rmdir(tmpdir);
	return rc;
}
