/*
 * test_lambda.c -- the Lambda driver against the fake host and a small
 * stateful fake of the Lambda API written here (instances, SSH keys,
 * launch with quantity and a capacity limit, terminate that refuses an
 * unknown id as Lambda does): instance names that carry pool, broker and
 * token (round trip, hashing when too long), SSH key names, status
 * mapping, error classes, the exact launch body, a replayed create that
 * finds what the first one made and launches nothing, a partial launch
 * that is refused and cleaned up, SSH key registration, describe
 * filters and tags read back from names, idempotent terminate, price
 * refresh, and that the API key never reaches an error or a log line.
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

#include "../../drivers/lambda/lambda.h"
#include "fakehost.h"

#define API "https://lambda.test/api/v1"
#define KEY "secret_lambda-api-key-0123456789abcdef"
#define SSHKEY "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILambdaTestKey test@ci"

static char tmpdir[256];
static char catalog[300];

/* ------------------------------------------------------- fake Lambda */

typedef struct fake {
	json_t *insts;       /* [instance] */
	json_t *keys;        /* [{id, name, public_key}] */
	int room;            /* instances a launch may still make */
	int room_next;       /* when > 0: room after the next launch */
	int lost;            /* launches applied but answered 500 */
	int next_id;
	long fail_status;    /* next launch fails with this ... */
	const char *fail_code;
	int fail_times;
	long list_status;    /* GET /instances answers this when non-zero */
	int launches, terminates, lists, key_posts;
} fake;

static fake F;

static void fake_reset(void)
{
	json_decref(F.insts);
	json_decref(F.keys);
	memset(&F, 0, sizeof(F));
	F.insts = json_array();
	F.keys = json_array();
	F.room = 1000;
	F.next_id = 1;
}

static char *data(json_t *v)
{
	json_t *o = json_pack("{s:o}", "data", v);
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static char *error_body(const char *code, const char *msg)
{
	char *s = malloc(512);
	snprintf(s, 512,
	         "{\"error\":{\"code\":\"%s\",\"message\":\"%s\","
	         "\"suggestion\":\"Try again.\"}}",
	         code, msg);
	return s;
}

static json_t *find_inst(const char *id)
{
	size_t i;
	json_t *v;
	json_array_foreach(F.insts, i, v)
		if (strcmp(json_string_value(json_object_get(v, "id")), id) == 0)
			return v;
	return NULL;
}

static void launch(const fakehost_req *req, long *status, char **body)
{
	json_t *b = json_loads(req->body, 0, NULL), *ids = json_array();
	int q = (int)json_integer_value(json_object_get(b, "quantity"));
	F.launches++;
	if (F.fail_times > 0) {
		F.fail_times--;
		*status = F.fail_status;
		*body = error_body(F.fail_code, "refused");
		json_decref(b);
		json_decref(ids);
		return;
	}
	if (F.room <= 0) {
		*status = 400;
		*body = error_body("instance-operations/launch/insufficient-capacity",
		                   "Not enough capacity to fulfill launch request.");
		json_decref(b);
		json_decref(ids);
		return;
	}
	for (int i = 0; i < q && F.room > 0; i++, F.room--) {
		char id[40];
		json_t *tags = json_object_get(b, "tags");
		snprintf(id, sizeof(id), "%032x", F.next_id++);
		json_array_append_new(
			F.insts,
			json_pack("{s:s,s:O,s:s,s:{s:O},s:{s:O},s:n,s:O}", "id", id,
			          "name", json_object_get(b, "name"), "status",
			          "booting", "region", "name",
			          json_object_get(b, "region_name"), "instance_type",
			          "name", json_object_get(b, "instance_type_name"),
			          "ip", "tags", tags ? tags : json_null()));
		json_array_append_new(ids, json_string(id));
	}
	json_decref(b);
	if (F.room_next > 0) {
		F.room = F.room_next;
		F.room_next = 0;
	}
	if (F.lost > 0) {
		F.lost--;
		json_decref(ids);
		*status = 500;
		*body = error_body("global/unknown", "Something unexpected occurred.");
		return;
	}
	*status = 200;
	*body = data(json_pack("{s:o}", "instance_ids", ids));
}

static void terminate(const fakehost_req *req, long *status, char **body)
{
	json_t *b = json_loads(req->body, 0, NULL), *v;
	json_t *ids = json_object_get(b, "instance_ids"), *out = json_array();
	size_t i;
	F.terminates++;
	json_array_foreach(ids, i, v) {
		if (!find_inst(json_string_value(v))) {
			*status = 404;
			*body = error_body("global/object-does-not-exist",
			                   "Specified instance does not exist.");
			json_decref(b);
			json_decref(out);
			return;
		}
	}
	json_array_foreach(ids, i, v) {
		json_t *in = find_inst(json_string_value(v));
		json_object_set_new(in, "status", json_string("terminating"));
		json_array_append(out, in);
	}
	json_decref(b);
	*status = 200;
	*body = data(json_pack("{s:o}", "terminated_instances", out));
}

static void handler(void *ud, const fakehost_req *req, long *status,
                    char **body, char ***headers, size_t *nh)
{
	const char *auth = fakehost_req_header(req, "Authorization");
	const char *path = req->url + strlen(API);
	(void)ud;
	*headers = NULL;
	*nh = 0;
	if (strncmp(req->url, API, strlen(API)) != 0) {
		*status = 599;
		*body = strdup("{}");
		return;
	}
	if (!auth || strcmp(auth, "Bearer " KEY) != 0) {
		*status = 401;
		*body = error_body("global/invalid-api-key",
		                   "API key was invalid, expired, or deleted.");
		return;
	}
	if (strcmp(req->method, "GET") == 0 && strcmp(path, "/instances") == 0) {
		F.lists++;
		if (F.list_status) {
			*status = F.list_status;
			*body = error_body("global/unknown", "boom");
			return;
		}
		*status = 200;
		*body = data(json_deep_copy(F.insts));
	} else if (strcmp(path, "/instance-operations/launch") == 0) {
		launch(req, status, body);
	} else if (strcmp(path, "/instance-operations/terminate") == 0) {
		terminate(req, status, body);
	} else if (strcmp(path, "/ssh-keys") == 0 &&
	           strcmp(req->method, "GET") == 0) {
		*status = 200;
		*body = data(json_deep_copy(F.keys));
	} else if (strcmp(path, "/ssh-keys") == 0) {
		json_t *b = json_loads(req->body, 0, NULL);
		F.key_posts++;
		json_object_set_new(b, "id", json_string("key-1"));
		json_array_append(F.keys, b);
		*status = 200;
		*body = data(b);
	} else if (strcmp(path, "/instance-types") == 0) {
		*status = 200;
		*body = strdup(
			"{\"data\":{\"gpu_1x_a10\":{\"instance_type\":{\"name\":"
			"\"gpu_1x_a10\",\"description\":\"1x A10 (24 GB PCIe)\","
			"\"price_cents_per_hour\":80,\"specs\":{\"vcpus\":30,"
			"\"memory_gib\":200,\"storage_gib\":1400,\"gpus\":1}},"
			"\"regions_with_capacity_available\":[{\"name\":"
			"\"us-east-1\"},{\"name\":\"europe-central-1\"}]},"
			"\"gpu_8x_b300_sxm6\":{\"instance_type\":{\"name\":"
			"\"gpu_8x_b300_sxm6\",\"description\":\"8x B300 (288 GB "
			"SXM6)\",\"price_cents_per_hour\":4999,\"specs\":{"
			"\"vcpus\":240,\"memory_gib\":2900,\"gpus\":8}},"
			"\"regions_with_capacity_available\":[{\"name\":"
			"\"us-south-1\"}]},"
			"\"cpu_4x_general\":{\"instance_type\":{\"name\":"
			"\"cpu_4x_general\",\"description\":\"CPU\","
			"\"price_cents_per_hour\":10,\"specs\":{\"vcpus\":4}},"
			"\"regions_with_capacity_available\":[{\"name\":"
			"\"us-east-1\"}]}}}");
	} else {
		*status = 404;
		*body = error_body("global/object-does-not-exist", "no route");
	}
}

/* ------------------------------------------------------------ helpers */

static fakehost *mk(int with_key)
{
	fakehost *fh = fakehost_new();
	fake_reset();
	fakehost_set_handler(fh, handler, NULL);
	fakehost_option(fh, "endpoint", API "/");
	fakehost_option(fh, "catalog", catalog);
	if (with_key)
		fakehost_secret(fh, "env:LAMBDA_API_KEY", KEY);
	return fh;
}

static void *init(fakehost *fh)
{
	void *ctx = NULL;
	gb_error err;
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_driver_desc.init(fakehost_host(fh), &ctx, &err),
	                 0);
	assert_non_null(ctx);
	return ctx;
}

typedef struct got {
	size_t n;
	char ids[16][40];
	char names[16][80];
	gb_instance_state st[16];
	char region[16][32];
	char pool[16][80], token[16][80], broker[16][80], team[16][80];
} got;

static const char *tagv(const gb_instance *in, const char *k)
{
	for (size_t i = 0; i < in->ntags; i++)
		if (strcmp(in->tags[i].key, k) == 0)
			return in->tags[i].value;
	return "";
}

static int collect(void *ud, const gb_instance *in)
{
	got *g = ud;
	if (g->n < 16) {
		snprintf(g->ids[g->n], 40, "%s", in->id);
		snprintf(g->names[g->n], 80, "%s", in->name ? in->name : "");
		snprintf(g->region[g->n], 32, "%s", in->region);
		g->st[g->n] = in->state;
		snprintf(g->pool[g->n], 80, "%s", tagv(in, GB_TAG_POOL));
		snprintf(g->broker[g->n], 80, "%s", tagv(in, GB_TAG_BROKER));
		snprintf(g->token[g->n], 80, "%s", tagv(in, GB_TAG_TOKEN));
		snprintf(g->team[g->n], 80, "%s", tagv(in, GB_TAG_TEAM));
	}
	g->n++;
	return 0;
}

static const char *const keys[] = {SSHKEY};
static const gb_kv extra[] = {{"project", "llm"}, {GB_TAG_POOL, "spoof"}};

static gb_create_req base_req(unsigned count)
{
	gb_create_req r;
	memset(&r, 0, sizeof(r));
	r.pool = "train-42";
	r.broker_id = "b1";
	r.team = "research";
	r.region = "us-east-1";
	r.zone = "";
	r.instance_type = "gpu_1x_a10";
	r.capacity = GB_CAPACITY_ON_DEMAND;
	r.count = count;
	r.token = "gb0123456789abcdef0123456789abcdef01234567";
	r.name_prefix = "train-42";
	r.first_index = 3;
	r.tags = extra;
	r.ntags = 2;
	r.ssh_keys = keys;
	r.nssh_keys = 1;
	return r;
}

static void no_key_anywhere(fakehost *fh, const gb_error *err)
{
	assert_null(strstr(err->message, KEY));
	assert_null(strstr(fakehost_logs(fh), KEY));
}

/* ------------------------------------------------------------- tests */

static void test_names(void **state)
{
	char name[LAMBDA_NAME_MAX + 1], again[LAMBDA_NAME_MAX + 1];
	char p[LAMBDA_NAME_MAX + 1], b[LAMBDA_NAME_MAX + 1], t[LAMBDA_NAME_MAX + 1];
	const char *tok = "gb0123456789abcdef0123456789abcdef01234567";
	(void)state;
	/* short enough: readable, and read back exactly */
	lambda_name_encode("web", "b1", tok, name);
	assert_string_equal(name, "gb.web.b1.gb0123456789abcdef0123456789abcdef01234567");
	assert_true(strlen(name) <= LAMBDA_NAME_MAX);
	assert_int_equal(lambda_name_decode(name, p, b, t), 1);
	assert_string_equal(p, "web");
	assert_string_equal(b, "b1");
	assert_string_equal(t, tok);
	assert_true(lambda_name_ours(name));
	/* too long: hashed, deterministic, within the limit, not readable */
	lambda_name_encode("train-llm-very-long-pool-name-0123456789", "gpubroker",
	                   tok, name);
	lambda_name_encode("train-llm-very-long-pool-name-0123456789", "gpubroker",
	                   tok, again);
	assert_string_equal(name, again);
	assert_true(strlen(name) <= LAMBDA_NAME_MAX);
	assert_int_equal(strncmp(name, "gb~train-llm-very-long-pool~", 28), 0);
	assert_int_equal(strlen(name), 3 + 24 + 1 + 24);
	assert_int_equal(lambda_name_decode(name, p, b, t), 0);
	assert_true(lambda_name_ours(name));
	/* a different token or broker: a different name */
	lambda_name_encode("train-llm-very-long-pool-name-0123456789", "gpubroker",
	                   "gb1", again);
	assert_string_not_equal(name, again);
	lambda_name_encode("web", "b2", tok, again);
	assert_string_not_equal(again, "gb.web.b1.gb0123456789abcdef0123456789abcdef01234567");
	/* a '.' in a part cannot be read back: hashed */
	lambda_name_encode("web", "b1", "tok.en", name);
	assert_int_equal(strncmp(name, "gb~web~", 7), 0);
	/* not ours */
	assert_int_equal(lambda_name_decode("my-notebook", p, b, t), 0);
	assert_int_equal(lambda_name_decode("gb.a.b", p, b, t), 0);
	assert_int_equal(lambda_name_decode("gb.a..c", p, b, t), 0);
	assert_int_equal(lambda_name_decode(NULL, p, b, t), 0);
	assert_false(lambda_name_ours("gpu-box"));
}

static void test_ssh_key_name(void **state)
{
	char a[32], b[32], c[32];
	(void)state;
	lambda_ssh_key_name(SSHKEY, a);
	lambda_ssh_key_name("  ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILambdaTestKey "
	                    "other comment\n", b);
	lambda_ssh_key_name("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOtherKey x", c);
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	assert_int_equal(strncmp(a, "gpubroker-", 10), 0);
	assert_int_equal(strlen(a), 26);
}

static void test_states_and_classes(void **state)
{
	(void)state;
	assert_int_equal(lambda_state("booting"), GB_INST_PENDING);
	assert_int_equal(lambda_state("active"), GB_INST_RUNNING);
	assert_int_equal(lambda_state("unhealthy"), GB_INST_FAILED);
	assert_int_equal(lambda_state("terminating"), GB_INST_STOPPING);
	assert_int_equal(lambda_state("terminated"), GB_INST_TERMINATED);
	assert_int_equal(lambda_state("preempted"), GB_INST_PREEMPTED);
	assert_int_equal(lambda_state("weird"), GB_INST_UNKNOWN);
	assert_int_equal(lambda_state(NULL), GB_INST_UNKNOWN);

	assert_int_equal(lambda_code_class(
		"instance-operations/launch/insufficient-capacity", 400),
		GB_ERR_CAPACITY);
	assert_int_equal(lambda_code_class("global/quota-exceeded", 400),
	                 GB_ERR_QUOTA);
	assert_int_equal(lambda_code_class("global/rate-limited", 429),
	                 GB_ERR_THROTTLED);
	assert_int_equal(lambda_code_class("", 429), GB_ERR_THROTTLED);
	assert_int_equal(lambda_code_class("global/unknown", 500),
	                 GB_ERR_TRANSIENT);
	assert_int_equal(lambda_code_class("", 503), GB_ERR_TRANSIENT);
	assert_int_equal(lambda_code_class("global/invalid-api-key", 401),
	                 GB_ERR_AUTH);
	assert_int_equal(lambda_code_class("global/account-inactive", 403),
	                 GB_ERR_AUTH);
	assert_int_equal(lambda_code_class("global/invalid-parameters", 400),
	                 GB_ERR_INVALID);
	assert_int_equal(lambda_code_class("global/object-does-not-exist", 404),
	                 GB_ERR_NOT_FOUND);
	assert_int_equal(lambda_code_class("global/duplicate", 400),
	                 GB_ERR_CONFLICT);
	assert_int_equal(lambda_code_class("ssh-keys/key-in-use", 400),
	                 GB_ERR_CONFLICT);
	assert_int_equal(lambda_code_class(NULL, 418), GB_ERR_INVALID);
}

static void test_create_body_and_replay(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_create_req r = base_req(3);
	got g1 = {0}, g2 = {0};
	gb_error err;
	const fakehost_req *lr = NULL;
	char kname[32], want[1024];
	(void)state;
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_create(ctx, &r, collect, &g1, &err), 0);
	assert_int_equal(g1.n, 3);
	assert_int_equal(F.launches, 1);
	assert_int_equal(F.key_posts, 1);
	/* the listing before the launch, the key lookup, the key, the launch */
	assert_int_equal(fakehost_count(fh, "GET", "/instances"), 1);
	assert_int_equal(fakehost_count(fh, "GET", "/ssh-keys"), 1);
	for (size_t i = 0; i < fakehost_nrequests(fh); i++)
		if (strstr(fakehost_request(fh, i)->url, "/launch"))
			lr = fakehost_request(fh, i);
	assert_non_null(lr);
	assert_string_equal(lr->rate_class, LAMBDA_RATE_LAUNCH);
	lambda_ssh_key_name(SSHKEY, kname);
	snprintf(want, sizeof(want),
	         "{\"instance_type_name\":\"gpu_1x_a10\","
	         "\"name\":\"gb.train-42.b1.gb0123456789abcdef0123456789abcdef01234567\","
	         "\"quantity\":3,\"region_name\":\"us-east-1\","
	         "\"ssh_key_names\":[\"%s\"],\"tags\":["
	         "{\"key\":\"gpubroker-pool\",\"value\":\"train-42\"},"
	         "{\"key\":\"gpubroker-broker\",\"value\":\"b1\"},"
	         "{\"key\":\"gpubroker-token\",\"value\":"
	         "\"gb0123456789abcdef0123456789abcdef01234567\"},"
	         "{\"key\":\"gpubroker-team\",\"value\":\"research\"},"
	         "{\"key\":\"project\",\"value\":\"llm\"}]}", kname);
	assert_string_equal(lr->body, want);
	/* the key was registered with the request's public key */
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(F.keys, 0), "public_key")), SSHKEY);
	assert_string_equal(g1.names[0], "train-42-3");
	assert_string_equal(g1.names[2], "train-42-5");
	assert_string_equal(g1.token[1], r.token);
	assert_string_equal(g1.pool[1], "train-42");
	assert_int_equal(g1.st[0], GB_INST_PENDING);
	/* the same token again: the same three, nothing launched, the key
	 * found by name */
	assert_int_equal(lambda_create(ctx, &r, collect, &g2, &err), 0);
	assert_int_equal(g2.n, 3);
	assert_int_equal(F.launches, 1);
	assert_int_equal(json_array_size(F.insts), 3);
	for (int i = 0; i < 3; i++)
		assert_string_equal(g1.ids[i], g2.ids[i]);
	/* one of three lost (made, then terminated elsewhere): a replay
	 * launches only what is missing */
	json_object_set_new(json_array_get(F.insts, 1), "status",
	                    json_string("terminated"));
	memset(&g2, 0, sizeof(g2));
	assert_int_equal(lambda_create(ctx, &r, collect, &g2, &err), 0);
	assert_int_equal(g2.n, 3);
	assert_int_equal(F.launches, 2);
	assert_int_equal(F.key_posts, 1);
	/* the key's name is remembered: not looked up again */
	assert_int_equal(fakehost_count(fh, "GET", "/ssh-keys"), 1);
	assert_int_equal(json_array_size(F.insts), 4);
	lr = fakehost_request(fh, fakehost_nrequests(fh) - 1);
	assert_non_null(strstr(lr->body, "\"quantity\":1,"));
	no_key_anywhere(fh, &err);
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_create_partial_and_refusals(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_create_req r = base_req(3);
	got g = {0};
	gb_error err;
	(void)state;
	/* room for two of three: Lambda launches two, refuses the third;
	 * the create fails with Lambda's reason and terminates both */
	F.room = 2;
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(F.launches, 2);
	assert_non_null(strstr(fakehost_request(fh, fakehost_nrequests(fh) - 2)->body,
	                       "\"quantity\":1,"));
	assert_int_equal(err.cls, GB_ERR_CAPACITY);
	assert_string_equal(err.code,
	                    "instance-operations/launch/insufficient-capacity");
	assert_non_null(strstr(err.message, "[cleanup: terminated the 2"));
	assert_int_equal(g.n, 0);
	assert_int_equal(json_array_size(F.insts), 2);
	for (size_t i = 0; i < 2; i++)
		assert_string_equal(json_string_value(json_object_get(
			json_array_get(F.insts, i), "status")), "terminating");
	/* no room at all: Lambda's own capacity error, nothing made */
	F.room = 0;
	r.token = "gb-other-token";
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_CAPACITY);
	assert_string_equal(err.code,
	                    "instance-operations/launch/insufficient-capacity");
	assert_int_equal(err.http_status, 400);
	assert_non_null(strstr(err.message, "Not enough capacity"));
	/* room for two of three, then room again: one create, two
	 * launches (the second for the one missing), all three */
	F.room = 2;
	F.room_next = 5;
	r.token = "gb-partial-ok";
	memset(&g, 0, sizeof(g));
	{
		int l0 = F.launches;
		assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), 0);
		assert_int_equal(F.launches, l0 + 2);
		assert_int_equal(g.n, 3);
	}
	/* quota */
	F.room = 100;
	F.fail_times = 1;
	F.fail_status = 400;
	F.fail_code = "global/quota-exceeded";
	r.token = "gb-quota";
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_QUOTA);
	/* a 500 on every try: TRANSIENT, and what an earlier attempt of the
	 * token made is left for the replay */
	F.fail_times = 100;
	F.fail_status = 500;
	F.fail_code = "global/unknown";
	r.token = "gb-third";
	r.count = 1;
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_TRANSIENT);
	F.fail_times = 0;
	/* spot and zones are refused before any request */
	{
		size_t before = fakehost_nrequests(fh);
		gb_create_req s = base_req(1);
		s.capacity = GB_CAPACITY_SPOT;
		assert_int_equal(lambda_create(ctx, &s, collect, &g, &err), -1);
		assert_int_equal(err.cls, GB_ERR_INVALID);
		s = base_req(1);
		s.zone = "us-east-1a";
		assert_int_equal(lambda_create(ctx, &s, collect, &g, &err), -1);
		assert_int_equal(err.cls, GB_ERR_INVALID);
		assert_int_equal(fakehost_nrequests(fh), before);
	}
	/* no SSH key anywhere: INVALID saying how to fix it */
	r = base_req(1);
	r.token = "gb-fourth";
	r.nssh_keys = 0;
	r.ssh_keys = NULL;
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_string_equal(err.code, "SshKeyMissing");
	assert_non_null(strstr(err.message, "ssh_key_name"));
	no_key_anywhere(fh, &err);
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_create_lost_answer(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_create_req r = base_req(3);
	got g = {0};
	gb_error err;
	(void)state;
	/* the launch is applied but its answer lost (500): the host does not
	 * repeat it; the driver lists by name, finds the three, launches
	 * nothing more */
	F.lost = 1;
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(F.launches, 1);
	assert_int_equal(json_array_size(F.insts), 3);
	assert_int_equal(fakehost_count(fh, "POST", "/launch"), 1);
	assert_int_equal(fakehost_count(fh, "GET", "/instances"), 2);
	/* a 429 on the launch: tried again after the delay, no listing */
	r.token = "gb-throttled";
	F.fail_times = 1;
	F.fail_status = 429;
	F.fail_code = "global/rate-limited";
	memset(&g, 0, sizeof(g));
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(F.launches, 3);
	assert_int_equal(fakehost_count(fh, "GET", "/instances"), 3);
	assert_int_equal(json_array_size(F.insts), 6);
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_ssh_key_option_and_existing(void **state)
{
	fakehost *fh = mk(1);
	void *ctx;
	gb_create_req r = base_req(1);
	got g = {0};
	gb_error err;
	(void)state;
	/* the same public key already registered under another name: used */
	json_array_append_new(F.keys, json_pack("{s:s,s:s,s:s}", "id", "k0",
	                                        "name", "laptop", "public_key",
	                                        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5"
	                                        "AAAAILambdaTestKey me@laptop"));
	ctx = init(fh);
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), 0);
	assert_int_equal(F.key_posts, 0);
	assert_non_null(strstr(fakehost_request(fh, fakehost_nrequests(fh) - 1)->body,
	                       "\"ssh_key_names\":[\"laptop\"]"));
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
	/* option ssh_key_name: used as is, no key calls */
	fh = mk(1);
	fakehost_option(fh, "ssh_key_name", "team-key");
	ctx = init(fh);
	r.nssh_keys = 0;
	r.ssh_keys = NULL;
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), 0);
	assert_int_equal(fakehost_count(fh, "GET", "/ssh-keys"), 0);
	assert_non_null(strstr(fakehost_request(fh, fakehost_nrequests(fh) - 1)->body,
	                       "\"ssh_key_names\":[\"team-key\"]"));
	/* a key name Lambda does not know: INVALID, naming the option */
	r.token = "gb-unknown-key";
	F.fail_times = 1;
	F.fail_status = 404;
	F.fail_code = "global/object-does-not-exist";
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_string_equal(err.code, "global/object-does-not-exist");
	assert_non_null(strstr(err.message, "SSH key 'team-key'"));
	assert_non_null(strstr(err.message, "ssh_key_name"));
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
	/* option tags: false: the launch carries none */
	fh = mk(1);
	fakehost_option(fh, "tags", "false");
	ctx = init(fh);
	r = base_req(1);
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), 0);
	assert_null(strstr(fakehost_request(fh, fakehost_nrequests(fh) - 1)->body,
	                   "\"tags\""));
	assert_non_null(strstr(fakehost_request(fh, fakehost_nrequests(fh) - 1)->body,
	                       "\"name\":\"gb.train-42.b1."));
	/* ... and a name too long to read back is refused, saying why */
	r.pool = "a-pool-with-a-rather-long-name";
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_string_equal(err.code, "NameTooLong");
	assert_non_null(strstr(err.message, "tags: true"));
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void answer(void *ud, const char *json)
{
	snprintf(ud, 512, "%s", json);
}

/* The host's "requirements" verb (driver.h): an SSH key, unless the
 * option ssh_key_name names a registered one */
static void test_requirements_verb(void **state)
{
	char out[512] = "";
	gb_error err;
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	(void)state;
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_driver_desc.command(ctx, "requirements", 0,
	                                            NULL, answer, out, &err),
	                 0);
	assert_non_null(strstr(out, "\"ssh_key\""));
	assert_non_null(strstr(out, "ssh_key_name"));
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
	fh = mk(1);
	fakehost_option(fh, "ssh_key_name", "team-key");
	ctx = init(fh);
	assert_int_equal(lambda_driver_desc.command(ctx, "requirements", 0,
	                                            NULL, answer, out, &err),
	                 0);
	assert_string_equal(out, "{}");
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void add_inst(const char *id, const char *name, const char *status,
                     const char *region, json_t *tags)
{
	json_array_append_new(F.insts,
	                      json_pack("{s:s,s:s,s:s,s:{s:s},s:{s:s},s:s,s:s,s:o}",
	                                "id", id, "name", name, "status", status,
	                                "region", "name", region, "instance_type",
	                                "name", "gpu_1x_a10", "ip", "129.1.2.3",
	                                "private_ip", "10.0.0.9", "tags",
	                                tags ? tags : json_array()));
}

static void test_describe(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_describe_req d;
	got g = {0};
	gb_error err;
	const char *ids[] = {"i3", "nope"};
	(void)state;
	/* tags from the name only (no tags on the instance) */
	add_inst("i1", "gb.web.b1.tok1", "active", "us-east-1", NULL);
	add_inst("i2", "gb.web.b1.tok2", "booting", "us-west-1", NULL);
	add_inst("i3", "gb.api.b1.tok3", "unhealthy", "us-east-1", NULL);
	add_inst("i4", "gb.web.b2.tok4", "active", "us-east-1", NULL);
	add_inst("i5", "gb.web.b1.tok5", "terminated", "us-east-1", NULL);
	add_inst("i6", "someone-elses-box", "active", "us-east-1", NULL);
	/* hashed name, tags carry the values */
	add_inst("i7", "gb~long~0123", "terminating", "us-east-1",
	         json_pack("[{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s}]", "key",
	                   GB_TAG_POOL, "value", "web", "key", GB_TAG_BROKER,
	                   "value", "b1", "key", GB_TAG_TOKEN, "value", "tok7",
	                   "key", GB_TAG_TEAM, "value", "research"));
	memset(&d, 0, sizeof(d));
	memset(&err, 0, sizeof(err));
	d.pool = "web";
	d.broker_id = "b1";
	assert_int_equal(lambda_describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(g.n, 3); /* i1, i2, i7: every region, not terminated */
	assert_string_equal(g.ids[0], "i1");
	assert_int_equal(g.st[0], GB_INST_RUNNING);
	assert_string_equal(g.token[0], "tok1");
	assert_string_equal(g.broker[0], "b1");
	assert_string_equal(g.names[0], "gb.web.b1.tok1");
	assert_string_equal(g.ids[1], "i2");
	assert_string_equal(g.region[1], "us-west-1");
	assert_int_equal(g.st[1], GB_INST_PENDING);
	assert_string_equal(g.ids[2], "i7");
	assert_int_equal(g.st[2], GB_INST_STOPPING);
	assert_string_equal(g.token[2], "tok7");
	assert_string_equal(g.team[2], "research");
	/* one request for all of it */
	assert_int_equal(fakehost_count(fh, "GET", "/instances"), 1);
	/* region, token, include_terminated */
	memset(&g, 0, sizeof(g));
	d.region = "us-east-1";
	d.include_terminated = 1;
	assert_int_equal(lambda_describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(g.n, 3); /* i1, i5, i7 */
	assert_string_equal(g.ids[1], "i5");
	assert_int_equal(g.st[1], GB_INST_TERMINATED);
	memset(&g, 0, sizeof(g));
	d.token = "tok5";
	assert_int_equal(lambda_describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.ids[0], "i5");
	/* by broker only */
	memset(&g, 0, sizeof(g));
	memset(&d, 0, sizeof(d));
	d.broker_id = "b2";
	assert_int_equal(lambda_describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.ids[0], "i4");
	/* by ids */
	memset(&g, 0, sizeof(g));
	memset(&d, 0, sizeof(d));
	d.ids = ids;
	d.nids = 2;
	assert_int_equal(lambda_describe(ctx, &d, collect, &g, &err), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.st[0], GB_INST_FAILED);
	/* no filter: refused */
	memset(&d, 0, sizeof(d));
	assert_int_equal(lambda_describe(ctx, &d, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	/* the listing fails: TRANSIENT after the host's retries */
	F.list_status = 500;
	d.pool = "web";
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_describe(ctx, &d, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_TRANSIENT);
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_terminate(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	gb_instance_ref refs[3] = {{"i1", "us-east-1", ""},
	                           {"i2", "us-east-1", ""},
	                           {"i1", "us-east-1", ""}};
	gb_instance_ref unknown[2] = {{"i2", "us-east-1", ""},
	                              {"gone", "us-east-1", ""}};
	gb_error err;
	(void)state;
	add_inst("i1", "gb.web.b1.t", "active", "us-east-1", NULL);
	add_inst("i2", "gb.web.b1.t", "active", "us-east-1", NULL);
	add_inst("i3", "gb.web.b1.t", "active", "us-east-1", NULL);
	memset(&err, 0, sizeof(err));
	/* one request for both (the duplicate dropped) */
	assert_int_equal(lambda_terminate(ctx, refs, 3, &err), 0);
	assert_int_equal(F.terminates, 1);
	assert_string_equal(fakehost_request(fh, 0)->body,
	                    "{\"instance_ids\":[\"i1\",\"i2\"]}");
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(F.insts, 2), "status")), "active");
	/* again: still success */
	assert_int_equal(lambda_terminate(ctx, refs, 2, &err), 0);
	/* an unknown id with a terminating one: Lambda refuses the batch
	 * (404); the driver lists, finds nothing alive to end: success */
	assert_int_equal(lambda_terminate(ctx, unknown, 2, &err), 0);
	assert_int_equal(err.cls, GB_ERR_NONE);
	/* an unknown id with a live one: the live one is ended */
	unknown[0].id = "i3";
	F.terminates = 0;
	assert_int_equal(lambda_terminate(ctx, unknown, 2, &err), 0);
	assert_int_equal(F.terminates, 2);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(F.insts, 2), "status")), "terminating");
	assert_string_equal(fakehost_request(fh, fakehost_nrequests(fh) - 1)->body,
	                    "{\"instance_ids\":[\"i3\"]}");
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_auth_and_secrets(void **state)
{
	fakehost *fh = mk(0);
	void *ctx = init(fh);
	gb_describe_req d;
	gb_create_req r = base_req(1);
	got g = {0};
	gb_error err;
	(void)state;
	/* no key: AUTH naming where to put one, no request made */
	memset(&d, 0, sizeof(d));
	d.pool = "web";
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_describe(ctx, &d, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_non_null(strstr(err.message, "LAMBDA_API_KEY"));
	assert_int_equal(fakehost_nrequests(fh), 0);
	/* offers still work without a key */
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
	/* a wrong key: Lambda's 401 -> AUTH, the key in no message or log */
	fh = mk(0);
	fakehost_option(fh, "api_key", "file:/keys/lambda");
	fakehost_secret(fh, "file:/keys/lambda", "wrong-key-abcdef0123456789\n");
	ctx = init(fh);
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_create(ctx, &r, collect, &g, &err), -1);
	assert_int_equal(err.cls, GB_ERR_AUTH);
	assert_int_equal(err.http_status, 401);
	assert_string_equal(err.code, "global/invalid-api-key");
	assert_non_null(strstr(err.message, "API key was invalid"));
	assert_null(strstr(err.message, "wrong-key-abcdef"));
	assert_null(strstr(fakehost_logs(fh), "wrong-key-abcdef"));
	/* the key went as a bearer token, without the file's newline */
	assert_string_equal(fakehost_req_header(fakehost_request(fh, 0),
	                                        "Authorization"),
	                    "Bearer wrong-key-abcdef0123456789");
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
}

static void test_options(void **state)
{
	fakehost *fh = fakehost_new();
	char *why;
	(void)state;
	why = fakehost_init_refusal(fh, &lambda_driver_desc, "max_quantity",
	                            "0", "max_quantity");
	assert_null(why);
	fakehost_free(fh);
	fh = fakehost_new();
	why = fakehost_init_refusal(fh, &lambda_driver_desc, "tags", "maybe",
	                            "tags");
	assert_null(why);
	fakehost_free(fh);
	fh = fakehost_new();
	why = fakehost_init_refusal(fh, &lambda_driver_desc, "endpoint",
	                            "ftp://x", "endpoint");
	if (why)
		fprintf(stderr, "%s\n", why);
	assert_null(why);
	fakehost_free(fh);
	/* every option read is declared */
	for (const char *const *o = lambda_driver_desc.options; *o; o++)
		assert_true(strlen(*o) > 0);
	assert_int_equal(lambda_driver_desc.billing_minimum_s, 60);
	assert_false(lambda_driver_desc.caps & GB_DRV_CAP_ATOMIC_CREATE);
	assert_true(lambda_driver_desc.caps & GB_DRV_CAP_BATCH_TERMINATE);
	assert_true(lambda_driver_desc.caps & GB_DRV_CAP_DESCRIBE_ALL_REGIONS);
}

typedef struct offers {
	size_t n;
	char rows[32][160];
} offers;

static int offer_fn(void *ud, const gb_offer *o)
{
	offers *of = ud;
	if (of->n < 32)
		snprintf(of->rows[of->n], 160, "%s %s %s %d %d %.2f", o->instance_type,
		         o->region, o->gpu_model, o->gpu_count, o->gpu_memory_gb,
		         o->price_per_hour);
	of->n++;
	return 0;
}

static void test_offers_and_refresh(void **state)
{
	fakehost *fh = mk(1);
	void *ctx = init(fh);
	offers of = {0};
	gb_error err;
	char model[32];
	int n, mem;
	(void)state;
	memset(&err, 0, sizeof(err));
	assert_int_equal(lambda_driver_desc.list_offers(ctx, offer_fn, &of, &err), 0);
	assert_int_equal(of.n, 3);
	assert_int_equal(fakehost_nrequests(fh), 0); /* offline */
	memset(&of, 0, sizeof(of));
	assert_int_equal(lambda_refresh_prices(ctx, NULL, offer_fn, &of, &err), 0);
	/* the catalog's two a10 regions repriced, the live region added; the
	 * H100 type the answer lacks dropped; the new B300 type read from its
	 * name and specs; the CPU type skipped */
	assert_int_equal(of.n, 4);
	assert_string_equal(of.rows[0], "gpu_1x_a10 us-east-1 A10 1 24 0.80");
	assert_string_equal(of.rows[1], "gpu_1x_a10 us-west-1 A10 1 24 0.80");
	assert_string_equal(of.rows[2], "gpu_1x_a10 europe-central-1 A10 1 24 0.80");
	assert_string_equal(of.rows[3], "gpu_8x_b300_sxm6 us-south-1 B300 8 288 49.99");
	memset(&of, 0, sizeof(of));
	assert_int_equal(lambda_refresh_prices(ctx, "us-west-1", offer_fn, &of,
	                                       &err), 0);
	assert_int_equal(of.n, 1);
	/* GPU names */
	assert_int_equal(lambda_parse_gpu("gpu_8x_a100_80gb_sxm4",
	                                  "8x A100 (80 GB SXM4)", model,
	                                  sizeof(model), &n, &mem), 0);
	assert_string_equal(model, "A100-80GB");
	assert_int_equal(n, 8);
	assert_int_equal(mem, 80);
	assert_int_equal(lambda_parse_gpu("gpu_1x_a6000", "1x RTX A6000 (48 GB)",
	                                  model, sizeof(model), &n, &mem), 0);
	assert_string_equal(model, "RTX-A6000");
	assert_int_equal(lambda_parse_gpu("cpu_4x_general", "CPU", model,
	                                  sizeof(model), &n, &mem), -1);
	lambda_driver_desc.fini(ctx);
	fakehost_free(fh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_ssh_key_name),
		cmocka_unit_test(test_states_and_classes),
		cmocka_unit_test(test_create_body_and_replay),
		cmocka_unit_test(test_create_partial_and_refusals),
		cmocka_unit_test(test_create_lost_answer),
		cmocka_unit_test(test_ssh_key_option_and_existing),
		cmocka_unit_test(test_requirements_verb),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_terminate),
		cmocka_unit_test(test_auth_and_secrets),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_offers_and_refresh),
	};
	FILE *f;
	int rc;
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_lambda.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(catalog, sizeof(catalog), "%s/lambda-offers.json", tmpdir);
	f = fopen(catalog, "w");
	if (!f)
		return 1;
	fputs("{\"format\":1,\"cloud\":\"lambda\",\"source\":\"test\","
	      "\"fetched_at\":\"2026-11-01\",\"currency\":\"USD\",\"types\":["
	      "{\"type\":\"gpu_1x_a10\",\"gpu\":\"A10\",\"gpus\":1,"
	      "\"gpu_memory_gb\":24,\"vcpus\":30,\"ram_gb\":200,\"regions\":{"
	      "\"us-east-1\":{\"on_demand\":0.75},"
	      "\"us-west-1\":{\"on_demand\":0.75}}},"
	      "{\"type\":\"gpu_1x_h100_pcie\",\"gpu\":\"H100\",\"gpus\":1,"
	      "\"gpu_memory_gb\":80,\"vcpus\":26,\"ram_gb\":200,\"regions\":{"
	      "\"us-east-1\":{\"on_demand\":2.49}}}]}", f);
	fclose(f);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(catalog);
	rmdir(tmpdir);
	json_decref(F.insts);
	json_decref(F.keys);
	return rc;
}
