/*
 * test_onprem.c -- the on-prem driver, linked statically and called
 * through its descriptor (onprem_descriptor), with the fake host table and
 * real processes for the local transport:
 *   - inventory errors: exact file:line:col, key path and message for
 *     every kind of mistake, all errors of a file reported;
 *   - offers from recorded probe reports (tests/data/onprem/probe-*.json,
 *     from gpuprobe 1.0.0) written into a temporary state_dir: health,
 *     staleness, minimum figures, grouping by site/shape/capacity;
 *   - lease atomicity: 8 processes create a 1-node pool at once on a
 *     3-node site: exactly 3 succeed, the others get CAPACITY, no node is
 *     leased twice;
 *   - create: idempotent tokens, setup/teardown with GPUBROKER_*
 *     variables, failed setup and short capacity leave nothing leased;
 *   - describe: by pool/token/ids, FAILED after an unhealthy probe;
 *   - MIG through a fake nvidia-smi on PATH that records its arguments;
 *   - the probe verb with a fake probe, the recorded no-GPU report and,
 *     when it has been built, the real gpuprobe;
 *   - the ssh command line, timeouts and unreachable nodes.
 */
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../drivers/onprem/onprem.h"
#include "fakehost.h"

/* ---------------------------------------------------------------- files */

static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	p = malloc((size_t)n + 1);
	assert_non_null(p);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void spit(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

/* text with every "@DIR@" replaced by dir (caller frees) */
static char *subst(const char *text, const char *dir)
{
	size_t cap = strlen(text) * 4 + 4096, o = 0;
	char *out = malloc(cap);
	for (const char *p = text; *p;) {
		if (!strncmp(p, "@DIR@", 5)) {
			o += (size_t)snprintf(out + o, cap - o, "%s", dir);
			p += 5;
		} else {
			out[o++] = *p++;
		}
	}
	out[o] = '\0';
	return out;
}

static int rm_one(const char *p, const struct stat *st, int flag,
                  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void rm_rf(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *src_path(const char *rel)
{
	const char *src = getenv("GB_SRC");
	if (rel[0] == '/')
		return xasprintf("%s", rel);
	return xasprintf("%s/%s", src && *src ? src : ".", rel);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

static size_t count_files(const char *dir, const char *suffix)
{
	char *cmd = xasprintf("ls -1 '%s' 2>/dev/null | grep -c '%s$'", dir,
	                      suffix);
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	if (p) {
		if (fscanf(p, "%zu", &n) != 1)
			n = 0;
		pclose(p);
	}
	free(cmd);
	return n;
}

/* ---------------------------------------------------------------- env */

typedef struct env {
	char *dir;
	char *state;
	char *inv_path;
	fakehost *fh;
	const gb_driver *d;
	void *ctx;
	int64_t now;
} env;

static const gb_driver *D(void)
{
	return onprem_descriptor();
}

/* Opens the driver on inventory text (with @DIR@ = the temp dir) and
 * options (key, value, ..., NULL).  Returns init's result. */
static int env_open_rc(env *E, const char *inventory, gb_error *err, ...)
{
	char tmpl[] = "/tmp/gb-onprem-XXXXXX";
	va_list ap;
	const char *k;
	char *text;
	memset(E, 0, sizeof(*E));
	assert_non_null(mkdtemp(tmpl));
	E->dir = strdup(tmpl);
	E->state = xasprintf("%s/state", E->dir);
	E->inv_path = xasprintf("%s/inventory.yaml", E->dir);
	text = subst(inventory, E->dir);
	spit(E->inv_path, text, 0644);
	free(text);
	E->fh = fakehost_new();
	E->now = (int64_t)time(NULL);
	fakehost_set_now(E->fh, E->now * 1000);
	fakehost_option(E->fh, "inventory", E->inv_path);
	fakehost_option(E->fh, "state_dir", E->state);
	fakehost_option(E->fh, "broker_id", "test-broker");
	va_start(ap, err);
	while ((k = va_arg(ap, const char *))) {
		const char *v = va_arg(ap, const char *);
		char *vv = subst(v, E->dir);
		fakehost_option(E->fh, k, vv);
		free(vv);
	}
	va_end(ap);
	E->d = D();
	memset(err, 0, sizeof(*err));
	return E->d->init(fakehost_host(E->fh), &E->ctx, err);
}

#define env_open(E, inv, ...)                                                 \
	do {                                                                  \
		gb_error e_;                                                  \
		int rc_ = env_open_rc((E), (inv), &e_, __VA_ARGS__);          \
		if (rc_ != 0)                                                 \
			fail_msg("init failed: %s", e_.message);              \
	} while (0)

static void env_close(env *E)
{
	if (E->ctx)
		E->d->fini(E->ctx);
	fakehost_free(E->fh);
	rm_rf(E->dir);
	free(E->dir);
	free(E->state);
	free(E->inv_path);
	memset(E, 0, sizeof(*E));
}

/* Store a recorded probe report for node as if probed age_s ago. */
static void put_probe(env *E, const char *node, const char *fixture,
                      int exit_code, int64_t age_s)
{
	char *src = src_path(fixture);
	json_error_t je;
	json_t *doc = json_load_file(src, 0, &je);
	char *dir = xasprintf("%s/probe", E->state);
	char *dst = xasprintf("%s/%s.json", dir, node);
	if (!doc)
		fail_msg("cannot load %s: %s", src, je.text);
	json_object_set_new(doc, "probed_at", json_integer(E->now - age_s));
	json_object_set_new(doc, "exit_code", json_integer(exit_code));
	json_object_set_new(doc, "reachable", json_true());
	json_object_set_new(doc, "node", json_string(node));
	mkdir(dir, 0755);
	assert_int_equal(json_dump_file(doc, dst, 0), 0);
	json_decref(doc);
	free(src);
	free(dir);
	free(dst);
}

static void put_unreachable(env *E, const char *node, int64_t age_s)
{
	char *dst = xasprintf("%s/probe/%s.json", E->state, node);
	char *text = xasprintf("{\"node\":\"%s\",\"probed_at\":%lld,"
	                       "\"reachable\":false,\"driver_error\":\"ssh to "
	                       "10.0.0.9:22 failed: Connection refused\"}",
	                       node, (long long)(E->now - age_s));
	spit(dst, text, 0644);
	free(dst);
	free(text);
}

/* ---------------------------------------------------------------- offers */

typedef struct offer {
	char *region, *itype, *model, *source, *tags;
	int count, mem, vcpus, available;
	double ram, price;
	gb_capacity cap;
	int64_t fetched_at;
	json_t *bench;
} offer;

typedef struct offers {
	offer v[64];
	size_t n;
} offers;

static int offer_cb(void *ud, const gb_offer *o)
{
	offers *os = ud;
	offer *x = &os->v[os->n++];
	json_error_t je;
	x->region = strdup(o->region);
	x->itype = strdup(o->instance_type);
	x->model = strdup(o->gpu_model);
	x->source = strdup(o->source);
	x->tags = o->tags ? strdup(o->tags) : NULL;
	x->count = o->gpu_count;
	x->mem = o->gpu_memory_gb;
	x->vcpus = o->vcpus;
	x->ram = o->ram_gb;
	x->price = o->price_per_hour;
	x->cap = o->capacity;
	x->available = o->available;
	x->fetched_at = o->fetched_at;
	x->bench = o->bench_json ? json_loads(o->bench_json, 0, &je) : NULL;
	assert_true(o->zone && !*o->zone);
	return 0;
}

static void offers_free(offers *os)
{
	for (size_t i = 0; i < os->n; i++) {
		free(os->v[i].region);
		free(os->v[i].itype);
		free(os->v[i].model);
		free(os->v[i].source);
		free(os->v[i].tags);
		json_decref(os->v[i].bench);
	}
	os->n = 0;
}

static void list_offers(env *E, offers *os)
{
	gb_error e;
	memset(os, 0, sizeof(*os));
	memset(&e, 0, sizeof(e));
	if (E->d->list_offers(E->ctx, offer_cb, os, &e) != 0)
		fail_msg("list_offers: %s", e.message);
}

static const offer *find_offer(const offers *os, const char *region,
                               const char *itype, gb_capacity cap)
{
	for (size_t i = 0; i < os->n; i++)
		if (!strcmp(os->v[i].region, region) &&
		    !strcmp(os->v[i].itype, itype) && os->v[i].cap == cap)
			return &os->v[i];
	return NULL;
}

static double bnum(const offer *o, const char *key)
{
	json_t *v = json_object_get(o->bench, key);
	if (!json_is_number(v))
		fail_msg("bench of %s has no number %s", o->itype, key);
	return json_number_value(v);
}

/* ---------------------------------------------------------------- instances */

typedef struct inst {
	char *id, *name, *region, *itype, *reason, *ip, *pool, *token, *team;
	char *label;
	gb_instance_state state;
	int64_t created_at;
} inst;

typedef struct insts {
	inst v[64];
	size_t n;
} insts;

static const char *tag(const gb_instance *in, const char *key)
{
	for (size_t i = 0; i < in->ntags; i++)
		if (!strcmp(in->tags[i].key, key))
			return in->tags[i].value;
	return NULL;
}

static char *dupn(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int inst_cb(void *ud, const gb_instance *in)
{
	insts *is = ud;
	inst *x = &is->v[is->n++];
	x->id = strdup(in->id);
	x->name = strdup(in->name);
	x->region = strdup(in->region);
	x->itype = strdup(in->instance_type);
	x->reason = dupn(in->state_reason);
	x->ip = dupn(in->private_ip);
	x->pool = dupn(tag(in, GB_TAG_POOL));
	x->token = dupn(tag(in, GB_TAG_TOKEN));
	x->team = dupn(tag(in, GB_TAG_TEAM));
	x->label = dupn(tag(in, "project"));
	x->state = in->state;
	x->created_at = in->created_at;
	return 0;
}

static void insts_free(insts *is)
{
	for (size_t i = 0; i < is->n; i++) {
		inst *x = &is->v[i];
		free(x->id), free(x->name), free(x->region), free(x->itype);
		free(x->reason), free(x->ip), free(x->pool), free(x->token);
		free(x->team), free(x->label);
	}
	is->n = 0;
}

static int create(env *E, const char *site, const char *itype, unsigned count,
                  const char *pool, const char *token, insts *out,
                  gb_error *err)
{
	static const gb_kv extra[] = {{"project", "llm"}};
	gb_create_req r;
	memset(&r, 0, sizeof(r));
	memset(err, 0, sizeof(*err));
	memset(out, 0, sizeof(*out));
	r.pool = pool;
	r.broker_id = "test-broker";
	r.team = "research";
	r.region = site;
	r.zone = "";
	r.instance_type = itype;
	r.capacity = GB_CAPACITY_ON_DEMAND;
	r.count = count;
	r.token = token;
	r.name_prefix = pool;
	r.first_index = 0;
	r.tags = extra;
	r.ntags = 1;
	return E->d->create(E->ctx, &r, inst_cb, out, err);
}

static int describe_pool(env *E, const char *site, const char *pool,
                         insts *out)
{
	gb_describe_req r;
	gb_error e;
	memset(&r, 0, sizeof(r));
	memset(out, 0, sizeof(*out));
	r.region = site;
	r.pool = pool;
	return E->d->describe(E->ctx, &r, inst_cb, out, &e);
}

static int terminate(env *E, const char *site, const char *id, gb_error *e)
{
	gb_instance_ref ref = {id, site, ""};
	memset(e, 0, sizeof(*e));
	return E->d->terminate(E->ctx, &ref, 1, e);
}

static void collect(void *ud, const char *json)
{
	json_error_t je;
	*(json_t **)ud = json_loads(json, 0, &je);
}

static json_t *command(env *E, const char *verb, int argc,
                       const char *const *argv, gb_error *err)
{
	json_t *out = NULL;
	memset(err, 0, sizeof(*err));
	if (E->d->command(E->ctx, verb, argc, argv, collect, &out, err) != 0)
		return NULL;
	assert_non_null(out);
	return out;
}

static json_t *node_of(json_t *nodes, const char *name)
{
	size_t i;
	json_t *n;
	json_array_foreach(nodes, i, n)
		if (!strcmp(json_string_value(json_object_get(n, "name")), name))
			return n;
	fail_msg("node %s not in the list", name);
	return NULL;
}

/* ================================================================ tests */

/* ---------------------------------------------------------------- inventory */

#define BASE_SITES                                                            \
	"sites:\n"                                                            \
	"  - {name: s1, lat: 50, lon: 8, jurisdiction: EU, country: DE}\n"

typedef struct bad_case {
	const char *yaml;
	const char *expect; /* one full line of the errors */
} bad_case;

static const bad_case bad_cases[] = {
	/* 1. unknown key with a suggestion */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s1\n"
	            "    transport: local\n"
	            "    gpu: {model: H100, count: 8}\n"
	            "    price_per_gpu_hour: 2\n",
	 "t.yaml:7:5: error: nodes[0].gpu: unknown key \"gpu\"; did you mean "
	 "\"gpus\"?"},
	/* 2. wrong type */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s1\n"
	            "    transport: local\n"
	            "    gpus: {model: H100, count: eight}\n"
	            "    price_per_gpu_hour: 2\n",
	 "t.yaml:7:32: error: nodes[0].gpus.count: expected an integer from 1 "
	 "to 64, found the string \"eight\""},
	/* 3. a site that does not exist */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s2\n"
	            "    transport: local\n"
	            "    price_per_gpu_hour: 2\n",
	 "t.yaml:5:11: error: nodes[0].site: no site named \"s2\" in sites; "
	 "did you mean \"s1\"?"},
	/* 4. an enum typo */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s1\n"
	            "    transport: shh\n"
	            "    price_per_gpu_hour: 2\n",
	 "t.yaml:6:16: error: nodes[0].transport: expected ssh or local, found "
	 "the string \"shh\"; did you mean \"ssh\"?"},
	/* 5. price must be > 0 */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s1\n"
	            "    transport: local\n"
	            "    price_per_gpu_hour: 0\n",
	 "t.yaml:7:25: error: nodes[0].price_per_gpu_hour: expected a number "
	 "greater than 0 and at most 10000, found the number 0"},
	/* 6. shell metacharacters in an address */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s1\n"
	            "    address: \"10.0.0.1;reboot\"\n"
	            "    price_per_gpu_hour: 2\n",
	 "t.yaml:6:14: error: nodes[0].address: \"10.0.0.1;reboot\" is not a "
	 "host name or IP address (letters, digits, '.', '-', ':' and '_' "
	 "only; no blanks or shell characters)"},
	/* 7. MIG on a GPU without MIG */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s1\n"
	            "    transport: local\n"
	            "    gpus: {model: L4, count: 1}\n"
	            "    price_per_gpu_hour: 2\n"
	            "    mig: {enabled: true, profiles: [1g.10gb]}\n",
	 "t.yaml:9:20: error: nodes[0].mig.enabled: L4 GPUs do not support MIG "
	 "(A100, A100-80GB, H100 and H200 do)"},
	/* 8. a MIG profile the GPU does not have */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s1\n"
	            "    transport: local\n"
	            "    gpus: {model: H100, count: 1}\n"
	            "    price_per_gpu_hour: 2\n"
	            "    mig:\n"
	            "      enabled: true\n"
	            "      profiles: [3g.40gb, 1g.5gb]\n",
	 "t.yaml:11:27: error: nodes[0].mig.profiles[1]: H100 has no MIG "
	 "profile \"1g.5gb\"; did you mean \"1g.10gb\"?"},
	/* 9. a number out of range */
	{"sites:\n"
	 "  - name: s1\n"
	 "    lat: 95\n"
	 "    lon: 8\n"
	 "    jurisdiction: EU\n"
	 "    country: DE\n"
	 "nodes: []\n",
	 "t.yaml:3:10: error: sites[0].lat: expected a number from -90 to 90, "
	 "found the number 95"},
	/* 10. YAML syntax */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: [s1\n",
	 "t.yaml:6:1: error: YAML syntax: did not find expected ',' or ']' "
	 "while parsing a flow sequence"},
	/* 11. duplicate node names */
	{BASE_SITES "nodes:\n"
	            "  - {name: n1, site: s1, transport: local, "
	            "price_per_gpu_hour: 1}\n"
	            "  - {name: n1, site: s1, transport: local, "
	            "price_per_gpu_hour: 1}\n",
	 "t.yaml:5:12: error: nodes[1].name: duplicate node name \"n1\" (first "
	 "at line 4)"},
	/* 12. a required key */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s1\n"
	            "    transport: local\n",
	 "t.yaml:4:5: error: nodes[0]: required key \"price_per_gpu_hour\" is "
	 "missing (amortised USD per GPU-hour, e.g. 1.85)"},
	/* 13. an unknown GPU model */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s1\n"
	            "    transport: local\n"
	            "    gpus:\n"
	            "      model: H10\n"
	            "      count: 8\n"
	            "    price_per_gpu_hour: 2\n",
	 "t.yaml:8:14: error: nodes[0].gpus.model: unknown GPU model \"H10\"; "
	 "did you mean \"H100\"?"},
	/* 14. one shape sold at two prices */
	{BASE_SITES "nodes:\n"
	            "  - {name: n1, site: s1, transport: local, shape: big, "
	            "gpus: {model: H100, count: 8}, price_per_gpu_hour: 2}\n"
	            "  - {name: n2, site: s1, transport: local, shape: big, "
	            "gpus: {model: H100, count: 8}, price_per_gpu_hour: 3}\n",
	 "t.yaml:5:5: error: nodes[1]: shape \"big\" at site s1 is already "
	 "defined by nodes[0] (line 4) with other GPUs, price, vcpus or "
	 "ram_gb; nodes sold as one shape must match: give this node its own "
	 "shape name"},
	/* 15. a malformed country code */
	{"sites:\n"
	 "  - {name: s1, lat: 50, lon: 8, jurisdiction: EU, country: de}\n"
	 "nodes: []\n",
	 "t.yaml:2:60: error: sites[0].country: \"de\" is not an ISO 3166-1 "
	 "alpha-2 country code (two upper-case letters, e.g. DE)"},
	/* 16. ssh settings on a local node */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s1\n"
	            "    transport: local\n"
	            "    ssh: {user: root}\n"
	            "    price_per_gpu_hour: 2\n",
	 "t.yaml:7:10: error: nodes[0].ssh: only used with transport: ssh "
	 "(this node's transport is local)"},
	/* 17. a duplicate key */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s1\n"
	            "    site: s1\n"
	            "    transport: local\n"
	            "    price_per_gpu_hour: 2\n",
	 "t.yaml:6:5: error: nodes[0].site: duplicate key (first given at "
	 "line 5)"},
	/* 18. a top-level typo */
	{BASE_SITES "node: []\n",
	 "t.yaml:3:1: error: node: unknown key \"node\"; did you mean "
	 "\"nodes\"?"},
	/* 19. a mapping where a list belongs */
	{BASE_SITES "nodes: {name: n1}\n",
	 "t.yaml:3:8: error: nodes: expected a list of nodes, found a mapping"},
	/* 20. an invalid node name */
	{BASE_SITES "nodes:\n"
	            "  - {name: N_1, site: s1, transport: local, "
	            "price_per_gpu_hour: 1}\n",
	 "t.yaml:4:12: error: nodes[0].name: \"N_1\" is not a valid node name "
	 "(lower-case letters, digits and '-', at most 63)"},
	/* 21. an ssh option without a value */
	{BASE_SITES "nodes:\n"
	            "  - name: n1\n"
	            "    site: s1\n"
	            "    address: 10.0.0.1\n"
	            "    ssh: {user: root, options: [\"-oProxyCommand\"]}\n"
	            "    price_per_gpu_hour: 2\n",
	 "t.yaml:7:33: error: nodes[0].ssh.options[0]: \"-oProxyCommand\" is "
	 "not an ssh option: write Name=value (see ssh_config(5))"},
	/* 22. an empty file */
	{"", "t.yaml:1:1: error: the inventory is empty: expected a mapping "
	     "with sites and nodes"},
};

static void test_inventory_errors(void **state)
{
	int bad = 0;
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		onprem_inventory inv;
		char *errors = NULL;
		int rc;
		memset(&inv, 0, sizeof(inv));
		rc = onprem_inventory_parse("t.yaml", bad_cases[i].yaml,
		                            strlen(bad_cases[i].yaml), &inv,
		                            &errors);
		if (rc != -1 || !errors)
			fail_msg("case %zu: the inventory was accepted", i + 1);
		if (!strstr(errors, bad_cases[i].expect)) {
			print_error("case %zu: expected the line\n  %s\ngot:\n%s",
			            i + 1, bad_cases[i].expect, errors);
			bad++;
		}
		free(errors);
		onprem_inventory_free(&inv);
	}
	assert_int_equal(bad, 0);
}

static void expect_line(const char *errors, const char *line)
{
	if (!strstr(errors, line))
		fail_msg("expected the line\n  %sgot:\n%s", line, errors);
}

static void test_inventory_all_errors(void **state)
{
	static const char yaml[] =
		"sites:\n"
		"  - {name: s1, lat: 50, lon: 800, jurisdiction: EU, country: DE}\n"
		"nodes:\n"
		"  - name: n1\n"
		"    site: s1\n"
		"    transport: local\n"
		"    gpus: {model: H100, count: 0}\n"
		"    price_per_gpu_hour: -1\n"
		"    capacity: spot\n";
	onprem_inventory inv;
	char *errors = NULL;
	(void)state;
	memset(&inv, 0, sizeof(inv));
	assert_int_equal(onprem_inventory_parse("t.yaml", yaml, strlen(yaml),
	                                        &inv, &errors), -1);
	expect_line(errors, "t.yaml:2:30: error: sites[0].lon: expected a "
	                    "number from -180 to 180, found the number 800\n");
	expect_line(errors, "t.yaml:7:32: error: nodes[0].gpus.count: expected "
	                    "an integer from 1 to 64, found the number 0\n");
	expect_line(errors, "t.yaml:8:25: error: nodes[0].price_per_gpu_hour: "
	                    "expected a number greater than 0 and at most "
	                    "10000, found the number -1\n");
	expect_line(errors, "t.yaml:9:15: error: nodes[0].capacity: expected "
	                    "on-demand or reserved, found the string "
	                    "\"spot\"\n");
	assert_int_equal(count_lines(errors), 4);
	free(errors);
	onprem_inventory_free(&inv);
}

static void test_inventory_example(void **state)
{
	char *path = src_path("examples/onprem-inventory.yaml");
	onprem_inventory inv;
	char *errors = NULL;
	const onprem_node *n;
	(void)state;
	memset(&inv, 0, sizeof(inv));
	if (onprem_inventory_load(path, &inv, &errors) != 0)
		fail_msg("%s", errors);
	assert_int_equal(inv.nsites, 2);
	assert_string_equal(inv.sites[0].jurisdiction, "EU");
	assert_true(onprem_strv_has(&inv.sites[0].tags, "gdpr"));
	n = onprem_node_find(&inv, "fra-mig-01");
	assert_non_null(n);
	assert_true(n->mig_enabled);
	assert_int_equal(n->mig_profiles.n, 2);
	n = onprem_node_find(&inv, "iad-a100-01");
	assert_string_equal(n->gpu->name, "A100-80GB");
	assert_int_equal(n->gpu_memory_gb, 80);
	assert_true(onprem_strv_has(&n->tags, "hipaa"));
	/* the YAML alias shares the ssh block */
	n = onprem_node_find(&inv, "fra-dgx-02");
	assert_string_equal(n->ssh_user, "gpubroker");
	assert_int_equal(n->ssh_options.n, 1);
	onprem_inventory_free(&inv);
	free(path);
}

static void test_init_reports_inventory_errors(void **state)
{
	env E;
	gb_error e;
	(void)state;
	assert_int_equal(env_open_rc(&E,
	                             BASE_SITES "nodes:\n"
	                             "  - {name: n1, site: s9, transport: local,"
	                             " price_per_gpu_hour: 1}\n"
	                             "  - {name: n2, site: s1, transport: local,"
	                             " price_per_gpu_hour: x}\n",
	                             &e, NULL),
	                 -1);
	assert_int_equal(e.cls, GB_ERR_INVALID);
	{
		char *want = xasprintf("the on-prem inventory %s has 2 errors: "
		                       "%s:4:22: error: nodes[0].site: no site "
		                       "named \"s9\" in sites; did you mean "
		                       "\"s1\"?; %s:5:64: error: "
		                       "nodes[1].price_per_gpu_hour: expected a "
		                       "number greater than 0 and at most 10000, "
		                       "found the string \"x\"",
		                       E.inv_path, E.inv_path, E.inv_path);
		if (strncmp(e.message, want, strlen(want)) != 0)
			fail_msg("got: %s\nwant prefix: %s", e.message, want);
		free(want);
	}
	assert_non_null(strstr(fakehost_logs(E.fh), "[error] "));
	E.ctx = NULL;
	env_close(&E);
}

static void test_no_inventory(void **state)
{
	fakehost *fh = fakehost_new();
	void *ctx = NULL;
	gb_error e;
	offers os;
	json_t *out = NULL;
	(void)state;
	memset(&e, 0, sizeof(e));
	fakehost_option(fh, "state_dir", "/nonexistent/gb-onprem-state");
	assert_int_equal(D()->init(fakehost_host(fh), &ctx, &e), 0);
	memset(&os, 0, sizeof(os));
	assert_int_equal(D()->list_offers(ctx, offer_cb, &os, &e), 0);
	assert_int_equal(os.n, 0);
	assert_int_equal(D()->command(ctx, "nodes", 0, NULL, collect, &out, &e),
	                 -1);
	assert_int_equal(e.cls, GB_ERR_NOT_FOUND);
	assert_non_null(strstr(e.message, "onprem: {inventory: PATH}"));
	assert_int_equal(D()->command(ctx, "sites", 0, NULL, collect, &out, &e),
	                 0);
	assert_int_equal(json_array_size(out), 0);
	json_decref(out);
	D()->fini(ctx);
	fakehost_free(fh);
}

/* ---------------------------------------------------------------- offers */

static const char offers_inv[] =
	"sites:\n"
	"  - {name: s1, lat: 50.1, lon: 8.7, jurisdiction: EU, country: DE,\n"
	"     tags: [gdpr], carbon_g_per_kwh: 380}\n"
	"  - {name: s2, lat: 39.0, lon: -77.5, jurisdiction: US, country: US}\n"
	"nodes:\n"
	"  - &a\n"
	"    name: a1\n"
	"    site: s1\n"
	"    transport: local\n"
	"    gpus: {model: A100-80GB, count: 4}\n"
	"    vcpus: 64\n"
	"    ram_gb: 512\n"
	"    price_per_gpu_hour: 1.5\n"
	"    tags: [gdpr]\n"
	"  - {name: a2, site: s1, transport: local, gpus: {model: A100-80GB, "
	"count: 4}, vcpus: 64, ram_gb: 512, price_per_gpu_hour: 1.5, tags: "
	"[gdpr, fast]}\n"
	"  - {name: a3, site: s1, transport: local, gpus: {model: A100-80GB, "
	"count: 4}, vcpus: 64, ram_gb: 512, price_per_gpu_hour: 1.5, tags: "
	"[gdpr, nvme]}\n"
	"  - {name: a4, site: s1, transport: local, gpus: {model: A100-80GB, "
	"count: 4}, vcpus: 64, ram_gb: 512, price_per_gpu_hour: 1.5}\n"
	"  - {name: u1, site: s1, transport: local, gpus: {model: A100-80GB, "
	"count: 4}, vcpus: 64, ram_gb: 512, price_per_gpu_hour: 1.5}\n"
	"  - {name: d1, site: s2, transport: local, price_per_gpu_hour: 3}\n"
	"  - {name: d2, site: s2, transport: local, price_per_gpu_hour: 3}\n"
	"  - {name: r1, site: s2, transport: local, shape: dgx, capacity: "
	"reserved, gpus: {model: H100, count: 8}, price_per_gpu_hour: 1}\n";

/* A real H100 80GB (../shared/data/probe-h100-80gb-real.json, the
 * report of gpuprobe on real hardware): 81,079 MiB usable, offered by
 * the model's nominal 80 GB like a cloud's H100, so memory_gb: 80 takes
 * it; the measured figures come through. */
static void test_real_h100_nominal_memory(void **state)
{
	const char *shared = getenv("GB_SHARED");
	char *real;
	env E;
	offers os;
	const offer *o;
	(void)state;
	if (!shared || !*shared) {
		print_message("skipped: GB_SHARED is not set (../shared holds "
		              "the real H100 probe report this test reads)\n");
		skip();
	}
	real = xasprintf("%s/data/probe-h100-80gb-real.json", shared);
	if (access(real, R_OK) != 0) {
		print_message("skipped: %s is missing\n", real);
		free(real);
		skip();
	}
	env_open(&E, offers_inv, NULL);
	put_probe(&E, "d1", real, 0, 60);
	list_offers(&E, &os);
	o = find_offer(&os, "s2", "1xH100", GB_CAPACITY_ON_DEMAND);
	assert_non_null(o);
	assert_string_equal(o->model, "H100");
	assert_int_equal(o->mem, 80);
	assert_true(fabs(bnum(o, "bf16_tflops") - 787.04) < 1e-9);
	assert_true(fabs(bnum(o, "d2d_gbps") - 2996.47) < 1e-9);
	offers_free(&os);
	env_close(&E);
	free(real);
}

static void test_offers_from_probes(void **state)
{
	env E;
	offers os;
	const offer *o;
	(void)state;
	env_open(&E, offers_inv, NULL);
	put_probe(&E, "a1", "tests/data/onprem/probe-a100x4-healthy.json", 0, 60);
	put_probe(&E, "a2", "tests/data/onprem/probe-a100x4-unhealthy.json", 1,
	          30);
	/* a3: never probed, GPUs declared: offered */
	put_probe(&E, "a4", "tests/data/onprem/probe-a100x4-healthy.json", 0,
	          2 * 86400);
	put_unreachable(&E, "u1", 10);
	put_probe(&E, "d1", "tests/data/onprem/probe-h100x1-mig.json", 0, 120);
	/* d2: never probed, GPUs unknown: not offered */
	list_offers(&E, &os);
	assert_int_equal(os.n, 3);

	o = find_offer(&os, "s1", "4xA100-80GB", GB_CAPACITY_ON_DEMAND);
	assert_non_null(o);
	assert_string_equal(o->model, "A100-80GB");
	assert_int_equal(o->count, 4);
	assert_int_equal(o->mem, 80);
	assert_int_equal(o->vcpus, 64);
	assert_true(o->ram == 512);
	assert_true(fabs(o->price - 6.0) < 1e-9);
	assert_string_equal(o->tags, "gdpr,nvme"); /* a1, a3, a4: not a2 */
	{
		char *src = xasprintf("inventory %s", E.inv_path);
		struct stat st;
		assert_string_equal(o->source, src);
		assert_int_equal(stat(E.inv_path, &st), 0);
		assert_int_equal(o->fetched_at, (int64_t)st.st_mtime);
		free(src);
	}
	/* a1, a3 and a4 are free; a1 and a4 measured (a4's report is two
	 * days old but its GPUs are declared and require_probe is off) */
	assert_int_equal((int)bnum(o, "nodes_free"), 3);
	assert_int_equal(o->available, 3); /* what a create can have now */
	assert_int_equal((int)bnum(o, "nodes_measured"), 2);
	assert_int_equal((int)bnum(o, "probe_age_s"), 2 * 86400);
	/* minimum over the GPUs of the measured nodes */
	assert_true(fabs(bnum(o, "fp32_tflops") - 18.7) < 1e-9);
	assert_true(fabs(bnum(o, "bf16_tflops") - 279.5) < 1e-9);
	assert_true(fabs(bnum(o, "fp16_tflops") - 280.1) < 1e-9);
	assert_true(fabs(bnum(o, "d2d_gbps") - 1690.0) < 1e-9);
	assert_true(fabs(bnum(o, "h2d_gbps") - 24.0) < 1e-9);
	assert_true(fabs(bnum(o, "d2h_gbps") - 24.9) < 1e-9);
	assert_string_equal(json_string_value(json_object_get(o->bench, "per")),
	                    "gpu");

	/* discovered GPUs: the shape is named after them */
	o = find_offer(&os, "s2", "1xH100", GB_CAPACITY_ON_DEMAND);
	assert_non_null(o);
	assert_string_equal(o->model, "H100");
	assert_int_equal(o->mem, 80);
	assert_true(fabs(o->price - 3.0) < 1e-9);
	assert_true(fabs(bnum(o, "bf16_tflops") - 720.9) < 1e-9);
	assert_null(o->tags);

	o = find_offer(&os, "s2", "dgx", GB_CAPACITY_RESERVED);
	assert_non_null(o);
	assert_true(fabs(o->price - 8.0) < 1e-9);
	assert_int_equal((int)bnum(o, "nodes_measured"), 0);
	assert_null(json_object_get(o->bench, "bf16_tflops"));
	offers_free(&os);

	/* the nodes command says why the others are not offered */
	{
		gb_error e;
		json_t *nodes = command(&E, "nodes", 0, NULL, &e), *n;
		assert_non_null(nodes);
		n = node_of(nodes, "a2");
		assert_string_equal(json_string_value(json_object_get(n, "status")),
		                    "unhealthy");
		assert_non_null(strstr(json_string_value(json_object_get(n, "reason")),
		                       "unhealthy: GPU 2 (NVIDIA A100-SXM4-80GB): "
		                       "bf16 tensor throughput 95.00"));
		n = node_of(nodes, "u1");
		assert_string_equal(json_string_value(json_object_get(n, "status")),
		                    "unreachable");
		assert_false(json_is_true(json_object_get(
			json_object_get(n, "health"), "reachable")));
		n = node_of(nodes, "d2");
		assert_true(json_is_null(json_object_get(n, "health")));
		assert_string_equal(json_string_value(json_object_get(n, "status")),
		                    "unprobed");
		n = node_of(nodes, "a1");
		assert_string_equal(json_string_value(json_object_get(n, "status")),
		                    "free");
		assert_int_equal(json_integer_value(json_object_get(
			json_object_get(n, "health"), "age_s")), 60);
		assert_true(fabs(json_number_value(json_object_get(
			json_object_get(n, "figures"), "d2d_gbps")) - 1690) < 1e-9);
		n = node_of(nodes, "d1");
		assert_string_equal(json_string_value(json_object_get(n, "gpus_from")),
		                    "probe");
		json_decref(nodes);
	}
	env_close(&E);

	/* gpuprobe --self-test: an H100 and an unknown GPU: healthy, but
	 * no single model to sell unless the inventory declares the GPUs */
	env_open(&E,
	         "sites:\n"
	         "  - {name: s1, lat: 50, lon: 8, jurisdiction: EU, country: DE}\n"
	         "nodes:\n"
	         "  - {name: x1, site: s1, transport: local, "
	         "price_per_gpu_hour: 1}\n"
	         "  - {name: x2, site: s1, transport: local, "
	         "price_per_gpu_hour: 1, gpus: {model: H100, count: 2}}\n",
	         NULL);
	put_probe(&E, "x1", "tests/data/onprem/probe-selftest.json", 0, 5);
	put_probe(&E, "x2", "tests/data/onprem/probe-selftest.json", 0, 5);
	list_offers(&E, &os);
	assert_int_equal(os.n, 1);
	o = find_offer(&os, "s1", "2xH100", GB_CAPACITY_ON_DEMAND);
	assert_non_null(o);
	assert_true(fabs(bnum(o, "bf16_tflops") - 720.9) < 1e-9);
	offers_free(&os);
	{
		gb_error e;
		json_t *nodes = command(&E, "nodes", 0, NULL, &e), *n;
		n = node_of(nodes, "x1");
		assert_string_equal(json_string_value(json_object_get(n, "reason")),
		                    "the probe could not name the GPU model: "
		                    "declare gpus in the inventory");
		assert_string_equal(json_string_value(json_object_get(
			json_object_get(n, "health"), "state")), "healthy");
		json_decref(nodes);
	}
	env_close(&E);

	/* require_probe: only fresh healthy reports count */
	env_open(&E, offers_inv, "require_probe", "true", NULL);
	put_probe(&E, "a1", "tests/data/onprem/probe-a100x4-healthy.json", 0, 60);
	put_probe(&E, "a4", "tests/data/onprem/probe-a100x4-healthy.json", 0,
	          2 * 86400);
	list_offers(&E, &os);
	o = find_offer(&os, "s1", "4xA100-80GB", GB_CAPACITY_ON_DEMAND);
	assert_non_null(o);
	assert_int_equal((int)bnum(o, "nodes_free"), 1);
	assert_int_equal(o->available, 1);
	assert_null(find_offer(&os, "s2", "dgx", GB_CAPACITY_RESERVED));
	offers_free(&os);
	env_close(&E);
}

/* ---------------------------------------------------------------- leases */

static const char three_inv[] =
	"sites:\n"
	"  - {name: s1, lat: 50, lon: 8, jurisdiction: EU, country: DE}\n"
	"  - {name: s2, lat: 40, lon: -75, jurisdiction: US, country: US}\n"
	"nodes:\n"
	"  - {name: n1, site: s1, transport: local, gpus: {model: L4, count: 1},"
	" price_per_gpu_hour: 0.5}\n"
	"  - {name: n2, site: s1, transport: local, gpus: {model: L4, count: 1},"
	" price_per_gpu_hour: 0.5}\n"
	"  - {name: n3, site: s1, transport: local, gpus: {model: L4, count: 1},"
	" price_per_gpu_hour: 0.5}\n"
	"  - {name: other, site: s2, transport: local, gpus: {model: L4, "
	"count: 1}, price_per_gpu_hour: 0.5}\n";

static void test_lease_atomicity(void **state)
{
	env E;
	int go[2];
	pid_t pids[8];
	int ok = 0, capacity = 0;
	json_t *pools = json_object();
	(void)state;
	env_open(&E, three_inv, NULL);
	assert_int_equal(pipe(go), 0);
	for (int i = 0; i < 8; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			char pool[16], token[16], c;
			insts out;
			gb_error e;
			int rc;
			close(go[1]);
			/* wait until every child is ready, then go at once */
			if (read(go[0], &c, 1) < 0)
				_exit(90);
			snprintf(pool, sizeof(pool), "p%d", i);
			snprintf(token, sizeof(token), "t%d", i);
			rc = create(&E, "s1", "1xL4", 1, pool, token, &out, &e);
			if (rc == 0)
				_exit(out.n == 1 ? 0 : 91);
			_exit(e.cls == GB_ERR_CAPACITY ? 10 : 92);
		}
	}
	close(go[0]);
	close(go[1]); /* EOF releases every child together */
	for (int i = 0; i < 8; i++) {
		int st;
		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		if (WEXITSTATUS(st) == 0)
			ok++;
		else if (WEXITSTATUS(st) == 10)
			capacity++;
		else
			fail_msg("child %d exited %d", i, WEXITSTATUS(st));
	}
	assert_int_equal(ok, 3);
	assert_int_equal(capacity, 5);
	/* three lease files, three nodes, three different pools */
	{
		char *dir = xasprintf("%s/leases", E.state);
		onprem_leases all;
		gb_error e;
		onprem_ctx *c = E.ctx;
		assert_int_equal(count_files(dir, ".json"), 3);
		assert_int_equal(onprem_leases_list(c, NULL, &all, &e), 0);
		assert_int_equal(all.n, 3);
		assert_string_equal(all.v[0].node, "n1");
		assert_string_equal(all.v[1].node, "n2");
		assert_string_equal(all.v[2].node, "n3");
		for (size_t i = 0; i < all.n; i++) {
			assert_null(json_object_get(pools, all.v[i].pool));
			json_object_set_new(pools, all.v[i].pool, json_true());
			assert_string_equal(all.v[i].state, "ready");
		}
		onprem_leases_free(&all);
		free(dir);
	}
	json_decref(pools);
	/* the other site's node was never touched, and s1 has nothing left */
	{
		offers os;
		list_offers(&E, &os);
		assert_int_equal(os.n, 1);
		assert_string_equal(os.v[0].region, "s2");
		offers_free(&os);
	}
	env_close(&E);
}

static const char hooks_inv[] =
	"sites:\n"
	"  - {name: s1, lat: 50, lon: 8, jurisdiction: EU, country: DE}\n"
	"nodes:\n"
	"  - &n\n"
	"    name: n1\n"
	"    address: 10.1.0.1\n"
	"    site: s1\n"
	"    transport: local\n"
	"    gpus: {model: L4, count: 1}\n"
	"    price_per_gpu_hour: 0.5\n"
	"    setup: |\n"
	"      echo \"$GPUBROKER_POOL $GPUBROKER_TOKEN $GPUBROKER_NAME "
	"$GPUBROKER_NODE $GPUBROKER_BROKER\" >> @DIR@/setup.log\n"
	"    teardown: echo \"$GPUBROKER_NAME $GPUBROKER_NODE\" >> "
	"@DIR@/teardown.log\n"
	"  - {name: n2, address: 10.1.0.2, site: s1, transport: local, "
	"gpus: {model: L4, count: 1}, price_per_gpu_hour: 0.5,\n"
	"     setup: \"echo \\\"$GPUBROKER_POOL $GPUBROKER_TOKEN "
	"$GPUBROKER_NAME $GPUBROKER_NODE $GPUBROKER_BROKER\\\" >> "
	"@DIR@/setup.log\",\n"
	"     teardown: \"echo \\\"$GPUBROKER_NAME $GPUBROKER_NODE\\\" >> "
	"@DIR@/teardown.log\"}\n";

static char *file_in(env *E, const char *name)
{
	char *p = xasprintf("%s/%s", E->dir, name);
	char *s = slurp(p);
	free(p);
	return s ? s : strdup("");
}

static void test_create_idempotent_describe_terminate(void **state)
{
	env E;
	insts a, b;
	gb_error e;
	char *log;
	(void)state;
	env_open(&E, hooks_inv, NULL);
	assert_int_equal(create(&E, "s1", "1xL4", 2, "train", "tok-1", &a, &e),
	                 0);
	assert_int_equal(a.n, 2);
	assert_string_equal(a.v[0].id, "n1");
	assert_string_equal(a.v[0].name, "train-0");
	assert_string_equal(a.v[1].id, "n2");
	assert_string_equal(a.v[1].name, "train-1");
	assert_int_equal(a.v[0].state, GB_INST_RUNNING);
	assert_string_equal(a.v[0].region, "s1");
	assert_string_equal(a.v[0].itype, "1xL4");
	assert_string_equal(a.v[0].ip, "10.1.0.1");
	assert_string_equal(a.v[0].pool, "train");
	assert_string_equal(a.v[0].token, "tok-1");
	assert_string_equal(a.v[0].team, "research");
	assert_string_equal(a.v[0].label, "llm");
	assert_true(a.v[0].created_at >= E.now);
	log = file_in(&E, "setup.log");
	assert_int_equal(count_lines(log), 2);
	assert_non_null(strstr(log, "train tok-1 train-0 n1 test-broker\n"));
	assert_non_null(strstr(log, "train tok-1 train-1 n2 test-broker\n"));
	free(log);

	/* the same token again: the same instances, nothing new, no setup */
	assert_int_equal(create(&E, "s1", "1xL4", 2, "train", "tok-1", &b, &e),
	                 0);
	assert_int_equal(b.n, 2);
	assert_string_equal(b.v[0].id, "n1");
	assert_string_equal(b.v[1].id, "n2");
	assert_string_equal(b.v[1].name, "train-1");
	insts_free(&b);
	log = file_in(&E, "setup.log");
	assert_int_equal(count_lines(log), 2);
	free(log);
	/* a token belongs to one pool */
	assert_int_equal(create(&E, "s1", "1xL4", 1, "other", "tok-1", &b, &e),
	                 -1);
	assert_int_equal(e.cls, GB_ERR_CONFLICT);
	/* the site is full */
	assert_int_equal(create(&E, "s1", "1xL4", 1, "other", "tok-2", &b, &e),
	                 -1);
	assert_int_equal(e.cls, GB_ERR_CAPACITY);
	assert_string_equal(e.message,
	                    "only 0 of 1 nodes of shape 1xL4 free at site s1");

	assert_int_equal(describe_pool(&E, "s1", "train", &b), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.v[0].state, GB_INST_RUNNING);
	insts_free(&b);
	assert_int_equal(describe_pool(&E, "s2", "train", &b), 0);
	assert_int_equal(b.n, 0);
	{
		gb_describe_req r;
		memset(&r, 0, sizeof(r));
		r.region = "s1";
		r.broker_id = "test-broker";
		r.token = "tok-1";
		memset(&b, 0, sizeof(b));
		assert_int_equal(E.d->describe(E.ctx, &r, inst_cb, &b, &e), 0);
		assert_int_equal(b.n, 2);
		insts_free(&b);
		r.token = "nope";
		assert_int_equal(E.d->describe(E.ctx, &r, inst_cb, &b, &e), 0);
		assert_int_equal(b.n, 0);
	}

	/* the node's probe turns unhealthy after it was leased: FAILED */
	put_probe(&E, "n2", "tests/data/onprem/probe-nogpu.json", 3, -5);
	assert_int_equal(describe_pool(&E, "s1", "train", &b), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.v[0].state, GB_INST_RUNNING);
	assert_int_equal(b.v[1].state, GB_INST_FAILED);
	assert_non_null(strstr(b.v[1].reason, "node n2 unhealthy: no usable "
	                                      "GPU: cudaGetDeviceCount failed"));
	insts_free(&b);

	/* terminate: teardown runs, the lease goes, twice is fine */
	assert_int_equal(terminate(&E, "s1", "n1", &e), 0);
	assert_int_equal(terminate(&E, "s1", "n1", &e), 0);
	log = file_in(&E, "teardown.log");
	assert_string_equal(log, "train-0 n1\n");
	free(log);
	assert_int_equal(describe_pool(&E, "s1", "train", &b), 0);
	assert_int_equal(b.n, 1);
	assert_string_equal(b.v[0].id, "n2");
	insts_free(&b);
	{
		gb_describe_req r;
		const char *ids[] = {"n1", "n2"};
		memset(&r, 0, sizeof(r));
		r.region = "s1";
		r.ids = ids;
		r.nids = 2;
		memset(&b, 0, sizeof(b));
		assert_int_equal(E.d->describe(E.ctx, &r, inst_cb, &b, &e), 0);
		assert_int_equal(b.n, 1);
		assert_string_equal(b.v[0].id, "n2");
		insts_free(&b);
		r.include_terminated = 1;
		assert_int_equal(E.d->describe(E.ctx, &r, inst_cb, &b, &e), 0);
		assert_int_equal(b.n, 2);
		assert_string_equal(b.v[0].id, "n1");
		assert_int_equal(b.v[0].state, GB_INST_TERMINATED);
		insts_free(&b);
	}
	assert_int_equal(terminate(&E, "s1", "n2", &e), 0);
	assert_int_equal(count_files(E.state, "leases"), 1);
	{
		char *dir = xasprintf("%s/leases", E.state);
		assert_int_equal(count_files(dir, ".json"), 0);
		free(dir);
	}
	insts_free(&a);
	env_close(&E);
}

static void test_create_failures_release(void **state)
{
	env E;
	insts a;
	gb_error e;
	char *dir;
	(void)state;
	env_open(&E,
	         "sites:\n"
	         "  - {name: s1, lat: 50, lon: 8, jurisdiction: EU, country: DE}\n"
	         "nodes:\n"
	         "  - {name: ok1, site: s1, transport: local, gpus: {model: L4, "
	         "count: 1}, price_per_gpu_hour: 0.5, setup: 'true', teardown: "
	         "'echo $GPUBROKER_NODE >> @DIR@/teardown.log'}\n"
	         "  - {name: bad1, site: s1, transport: local, gpus: {model: L4, "
	         "count: 1}, price_per_gpu_hour: 0.5, setup: 'echo disk full >&2;"
	         " exit 3'}\n",
	         NULL);
	dir = xasprintf("%s/leases", E.state);
	/* more than there is: CAPACITY, nothing left leased */
	assert_int_equal(create(&E, "s1", "1xL4", 5, "big", "tb", &a, &e), -1);
	assert_int_equal(e.cls, GB_ERR_CAPACITY);
	assert_string_equal(e.message,
	                    "only 2 of 5 nodes of shape 1xL4 free at site s1");
	assert_int_equal(count_files(dir, ".json"), 0);
	/* a failed setup: CAPACITY/NodeUnhealthy with its stderr, the node
	 * marked unhealthy; the node whose setup worked is torn down;
	 * nothing left leased */
	assert_int_equal(create(&E, "s1", "1xL4", 2, "p", "tp", &a, &e), -1);
	assert_int_equal(e.cls, GB_ERR_CAPACITY);
	assert_string_equal(e.code, GB_ERR_CODE_NODE_UNHEALTHY);
	assert_string_equal(e.message,
	                    "setup on node bad1 failed (exit 3): disk full; "
	                    "node bad1 is marked unhealthy and not offered "
	                    "until 'gpubroker nodes probe bad1' finds it "
	                    "healthy or 'gpubroker nodes clear bad1'");
	assert_int_equal(count_files(dir, ".json"), 0);
	{
		char *log = file_in(&E, "teardown.log");
		assert_string_equal(log, "ok1\n");
		free(log);
	}
	/* the marked node is not leased again: the next create gets ok1
	 * alone, and then there is no room */
	{
		offers os;
		list_offers(&E, &os);
		assert_int_equal(os.n, 1);
		assert_int_equal(os.v[0].available, 1);
		offers_free(&os);
	}
	assert_int_equal(create(&E, "s1", "1xL4", 2, "p", "tr", &a, &e), -1);
	assert_int_equal(e.cls, GB_ERR_CAPACITY);
	assert_string_equal(e.message,
	                    "only 1 of 2 nodes of shape 1xL4 free at site s1");
	/* cleared: offered again */
	{
		const char *nm[] = {"bad1"};
		json_t *res = command(&E, "clear", 1, nm, &e);
		offers os;
		assert_non_null(res);
		assert_string_equal(json_string_value(json_object_get(
			json_array_get(res, 0), "status")), "free");
		json_decref(res);
		list_offers(&E, &os);
		assert_int_equal(os.v[0].available, 2);
		offers_free(&os);
	}
	/* unknown shape / site / capacity are INVALID */
	assert_int_equal(create(&E, "s1", "8xH100", 1, "p", "tq", &a, &e), -1);
	assert_int_equal(e.cls, GB_ERR_INVALID);
	assert_string_equal(e.message, "no nodes of shape 8xH100 at site s1 "
	                               "(shapes there: 1xL4)");
	assert_int_equal(create(&E, "nowhere", "1xL4", 1, "p", "tq", &a, &e), -1);
	assert_int_equal(e.cls, GB_ERR_INVALID);
	{
		gb_create_req r;
		memset(&r, 0, sizeof(r));
		r.pool = "p";
		r.region = "s1";
		r.instance_type = "1xL4";
		r.capacity = GB_CAPACITY_SPOT;
		r.count = 1;
		r.token = "ts";
		assert_int_equal(E.d->create(E.ctx, &r, inst_cb, &a, &e), -1);
		assert_int_equal(e.cls, GB_ERR_INVALID);
		assert_string_equal(e.message, "shape 1xL4 at site s1 is not sold "
		                               "as spot capacity");
	}
	free(dir);
	env_close(&E);
}

/* ---------------------------------------------------------------- MIG */

static const char fake_smi[] =
	"#!/bin/sh\n"
	"echo \"$*\" >> @DIR@/smi.log\n"
	"case \"$*\" in\n"
	"*-cgi*)\n"
	/* the driver sets slices up in parallel: the counter is locked */
	"  exec 9>@DIR@/gi.lock; flock 9\n"
	"  n=$(cat @DIR@/gi 2>/dev/null || echo 7)\n"
	"  echo $((n + 1)) > @DIR@/gi\n"
	"  flock -u 9\n"
	"  p=$5\n"
	"  echo \"Successfully created GPU instance ID  $n on GPU  $3 using "
	"profile MIG $p (ID 19)\"\n"
	"  echo \"Successfully created compute instance ID  0 on GPU  $3 GPU "
	"instance ID  $n using profile MIG $p (ID  0)\" ;;\n"
	"*-dci*) echo \"Successfully destroyed compute instance ID  0 from GPU "
	" $3 GPU instance ID  $5\" ;;\n"
	"*-dgi*) echo \"Successfully destroyed GPU instance ID  $5 from GPU  "
	"$3\" ;;\n"
	"*) echo \"unexpected: $*\" >&2; exit 2 ;;\n"
	"esac\n";

static const char mig_inv[] =
	"sites:\n"
	"  - {name: s1, lat: 50, lon: 8, jurisdiction: EU, country: DE}\n"
	"nodes:\n"
	"  - name: m1\n"
	"    site: s1\n"
	"    transport: local\n"
	"    gpus: {model: H100, count: 1}\n"
	"    price_per_gpu_hour: 2.1\n"
	"    tags: [gdpr]\n"
	"    mig: {enabled: true, profiles: [1g.10gb, 3g.40gb]}\n";

static void test_mig(void **state)
{
	env E;
	offers os;
	const offer *o;
	insts a, b;
	gb_error e;
	char *script, *path, *oldpath, *newpath, *log;
	int gi0 = 0;
	(void)state;
	env_open(&E, mig_inv, NULL);
	/* a fake nvidia-smi first on PATH, recording its arguments */
	path = xasprintf("%s/bin", E.dir);
	mkdir(path, 0755);
	script = subst(fake_smi, E.dir);
	{
		char *p = xasprintf("%s/nvidia-smi", path);
		spit(p, script, 0755);
		free(p);
	}
	free(script);
	oldpath = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	newpath = xasprintf("%s:%s", path, oldpath);
	setenv("PATH", newpath, 1);
	put_probe(&E, "m1", "tests/data/onprem/probe-h100x1-mig.json", 0, 60);

	list_offers(&E, &os);
	assert_int_equal(os.n, 3);
	o = find_offer(&os, "s1", "1xH100", GB_CAPACITY_ON_DEMAND);
	assert_non_null(o);
	assert_true(fabs(o->price - 2.1) < 1e-9);
	o = find_offer(&os, "s1", "1xH100-mig-1g.10gb", GB_CAPACITY_ON_DEMAND);
	assert_non_null(o);
	assert_string_equal(o->model, "H100");
	assert_int_equal(o->count, 1);
	assert_int_equal(o->mem, 10);
	assert_true(fabs(o->price - 0.3) < 1e-9);          /* 2.1 x 1/7 */
	assert_int_equal((int)bnum(o, "slices_free"), 7);
	assert_true(fabs(bnum(o, "slice_fraction") - 0.1429) < 1e-9);
	assert_true(fabs(bnum(o, "bf16_tflops") - 102.99) < 1e-9); /* 720.9/7 */
	assert_true(fabs(bnum(o, "h2d_gbps") - 53.2) < 1e-9);      /* unscaled */
	assert_string_equal(o->tags, "gdpr,mig");
	o = find_offer(&os, "s1", "1xH100-mig-3g.40gb", GB_CAPACITY_ON_DEMAND);
	assert_non_null(o);
	assert_true(fabs(o->price - 0.9) < 1e-9);          /* 2.1 x 3/7 */
	assert_int_equal(o->mem, 40);
	assert_int_equal((int)bnum(o, "slices_free"), 2);
	offers_free(&os);

	/* two 1g slices */
	assert_int_equal(create(&E, "s1", "1xH100-mig-1g.10gb", 2, "inf", "ti",
	                        &a, &e), 0);
	assert_int_equal(a.n, 2);
	assert_string_equal(a.v[0].id, "m1/mig0");
	assert_string_equal(a.v[1].id, "m1/mig1");
	assert_string_equal(a.v[0].itype, "1xH100-mig-1g.10gb");
	assert_int_equal(a.v[0].state, GB_INST_RUNNING);
	log = file_in(&E, "smi.log");
	assert_string_equal(log, "mig -i 0 -cgi 1g.10gb -C\n"
	                         "mig -i 0 -cgi 1g.10gb -C\n");
	free(log);
	{
		/* the two slices are set up in parallel: each got its own GPU
		 * instance, 7 and 8 in either order */
		onprem_lease l, l0;
		assert_int_equal(onprem_lease_read_id(E.ctx, "m1/mig0", &l0), 0);
		assert_int_equal(onprem_lease_read_id(E.ctx, "m1/mig1", &l), 0);
		assert_true((l0.gi == 7 && l.gi == 8) || (l0.gi == 8 && l.gi == 7));
		gi0 = l0.gi;
		onprem_lease_clear(&l0);
		assert_int_equal(l.ci, 0);
		assert_int_equal(l.gpu, 0);
		assert_string_equal(l.profile, "1g.10gb");
		onprem_lease_clear(&l);
	}
	/* the whole node is no longer offered; the rest of the GPU is */
	list_offers(&E, &os);
	assert_null(find_offer(&os, "s1", "1xH100", GB_CAPACITY_ON_DEMAND));
	o = find_offer(&os, "s1", "1xH100-mig-1g.10gb", GB_CAPACITY_ON_DEMAND);
	assert_int_equal((int)bnum(o, "slices_free"), 5);
	assert_int_equal(o->available, 5); /* a MIG offer: its free slices */
	o = find_offer(&os, "s1", "1xH100-mig-3g.40gb", GB_CAPACITY_ON_DEMAND);
	assert_int_equal((int)bnum(o, "slices_free"), 1); /* 5 slices left */
	assert_int_equal(o->available, 1);
	offers_free(&os);
	assert_int_equal(create(&E, "s1", "1xH100", 1, "whole", "tw", &b, &e),
	                 -1);
	assert_int_equal(e.cls, GB_ERR_CAPACITY);
	/* two 3g slices do not fit: nothing is created or kept */
	assert_int_equal(create(&E, "s1", "1xH100-mig-3g.40gb", 2, "big", "t3",
	                        &b, &e), -1);
	assert_int_equal(e.cls, GB_ERR_CAPACITY);
	assert_string_equal(e.message, "only 1 of 2 MIG 3g.40gb slices of shape "
	                               "1xH100 free at site s1");
	log = file_in(&E, "smi.log");
	assert_int_equal(count_lines(log), 2);
	free(log);
	/* terminate destroys the compute and GPU instance it recorded */
	assert_int_equal(terminate(&E, "s1", "m1/mig0", &e), 0);
	log = file_in(&E, "smi.log");
	{
		char want[256];
		snprintf(want, sizeof(want),
		         "mig -i 0 -cgi 1g.10gb -C\nmig -i 0 -cgi 1g.10gb -C\n"
		         "mig -i 0 -gi %d -ci 0 -dci\nmig -i 0 -gi %d -dgi\n", gi0,
		         gi0);
		assert_string_equal(log, want);
	}
	free(log);
	assert_int_equal(terminate(&E, "s1", "m1/mig1", &e), 0);
	list_offers(&E, &os);
	assert_non_null(find_offer(&os, "s1", "1xH100", GB_CAPACITY_ON_DEMAND));
	offers_free(&os);
	/* the nodes command lists the slices while they are leased */
	assert_int_equal(create(&E, "s1", "1xH100-mig-3g.40gb", 1, "inf3", "t4",
	                        &b, &e), 0);
	{
		json_t *nodes = command(&E, "nodes", 0, NULL, &e);
		json_t *m = json_object_get(node_of(nodes, "m1"), "mig");
		assert_int_equal(json_array_size(json_object_get(m, "slices")), 1);
		assert_string_equal(json_string_value(json_object_get(
			node_of(nodes, "m1"), "status")), "partly-leased");
		json_decref(nodes);
	}
	insts_free(&b);
	insts_free(&a);
	setenv("PATH", oldpath, 1);
	free(oldpath);
	free(newpath);
	free(path);
	env_close(&E);
}

static void test_mig_room(void **state)
{
	static const onprem_mig_profile one = {"1g.10gb", 1, 10, 7};
	static const onprem_mig_profile four = {"4g.40gb", 4, 40, 1};
	onprem_lease v[3];
	onprem_leases ls = {v, 0};
	(void)state;
	memset(v, 0, sizeof(v));
	assert_int_equal(onprem_mig_room(&ls, &one, 2), 14);
	assert_int_equal(onprem_mig_room(&ls, &four, 2), 2);
	v[0].mig = 1, v[0].gpu = 0, v[0].slices = 4, v[0].profile = "4g.40gb";
	ls.n = 1;
	assert_int_equal(onprem_mig_room(&ls, &four, 2), 1);
	assert_int_equal(onprem_mig_room(&ls, &one, 2), 3 + 7);
	v[1].mig = 0; /* a whole-node lease */
	ls.n = 2;
	assert_int_equal(onprem_mig_room(&ls, &one, 2), 0);
}

/* ---------------------------------------------------------------- probe */

static char *fake_probe(env *E, const char *fixture, int exit_code)
{
	char *src = src_path(fixture);
	char *path = xasprintf("%s/fake-gpuprobe", E->dir);
	char *text = xasprintf("#!/bin/sh\n"
	                       "echo \"$*\" > %s/probe-args\n"
	                       "cat '%s'\n"
	                       "echo 'probe: done' >&2\n"
	                       "exit %d\n",
	                       E->dir, src, exit_code);
	spit(path, text, 0755);
	free(text);
	free(src);
	return path;
}

static void test_probe_command(void **state)
{
	env E;
	gb_error e;
	json_t *res, *n, *stored;
	const char *argv1[] = {"n1"};
	const char *typo[] = {"m1"};
	char *probe, *p, *real;
	offers os;
	(void)state;
	env_open(&E, three_inv, "probe_path", "@DIR@/fake-gpuprobe", NULL);
	/* no probe binary yet */
	assert_null(command(&E, "probe", 1, argv1, &e));
	assert_int_equal(e.cls, GB_ERR_INVALID);
	assert_non_null(strstr(e.message, "fake-gpuprobe does not exist"));

	probe = fake_probe(&E, "tests/data/onprem/probe-a100x4-healthy.json", 0);
	res = command(&E, "probe", 1, argv1, &e);
	assert_non_null(res);
	assert_int_equal(json_array_size(res), 1);
	n = json_array_get(res, 0);
	assert_string_equal(json_string_value(json_object_get(n, "name")), "n1");
	assert_true(json_is_true(json_object_get(json_object_get(n, "health"),
	                                         "healthy")));
	assert_int_equal(json_integer_value(json_object_get(
		json_object_get(n, "probe"), "exit_code")), 0);
	json_decref(res);
	p = file_in(&E, "probe-args");
	assert_string_equal(p, "--quick --compact\n");
	free(p);
	{
		char *f = xasprintf("%s/probe/n1.json", E.state);
		json_error_t je;
		stored = json_load_file(f, 0, &je);
		assert_non_null(stored);
		assert_int_equal(json_integer_value(json_object_get(stored,
		                                                    "probed_at")),
		                 E.now);
		assert_string_equal(json_string_value(json_object_get(stored,
		                                                      "stderr_tail")),
		                    "probe: done");
		assert_int_equal(json_integer_value(json_object_get(stored,
		                                                    "gpu_count")), 4);
		json_decref(stored);
		free(f);
	}

	/* the recorded no-GPU report, exit 3: unhealthy, not offered */
	free(probe);
	probe = fake_probe(&E, "tests/data/onprem/probe-nogpu.json", 3);
	res = command(&E, "probe", 1, argv1, &e);
	n = json_array_get(res, 0);
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(n, "health"), "state")), "unhealthy");
	assert_string_equal(json_string_value(json_array_get(json_object_get(
		json_object_get(n, "health"), "failures"), 0)),
		"no usable GPU: cudaGetDeviceCount failed: "
		"cudaErrorInsufficientDriver (CUDA driver version is insufficient "
		"for CUDA runtime version): no NVIDIA driver found: libcuda.so.1 "
		"could not be loaded (install the NVIDIA driver, or run in a "
		"container with the GPU runtime hooks)");
	assert_false(json_is_true(json_object_get(n, "offered")));
	json_decref(res);
	list_offers(&E, &os);
	{
		const offer *o = find_offer(&os, "s1", "1xL4", GB_CAPACITY_ON_DEMAND);
		assert_non_null(o);
		assert_int_equal((int)bnum(o, "nodes_free"), 2); /* n2, n3 */
	}
	offers_free(&os);

	/* garbage output */
	free(probe);
	probe = xasprintf("%s/fake-gpuprobe", E.dir);
	spit(probe, "#!/bin/sh\necho 'Segmentation fault' >&2\nexit 139\n", 0755);
	res = command(&E, "probe", 1, argv1, &e);
	n = json_array_get(res, 0);
	assert_string_equal(json_string_value(json_array_get(json_object_get(
		json_object_get(n, "health"), "failures"), 0)),
		"the probe's output is not a JSON object (exit 139): "
		"Segmentation fault");
	json_decref(res);

	/* unknown node */
	assert_null(command(&E, "probe", 1, typo, &e));
	assert_int_equal(e.cls, GB_ERR_NOT_FOUND);
	assert_non_null(strstr(e.message, "no node \"m1\" in the inventory"));
	assert_non_null(strstr(e.message, "did you mean \"n1\"?"));
	free(probe);

	/* the real probe, when it was built: here without a GPU it must
	 * report "no usable GPU" (exit 3); on a GPU machine, a verdict */
	real = getenv("GB_BUILD") ? xasprintf("%s/bin/gpuprobe",
	                                      getenv("GB_BUILD"))
	                          : strdup("build/bin/gpuprobe");
	if (access(real, X_OK) == 0) {
		onprem_ctx *c = E.ctx;
		char *saved = c->probe_path;
		const char *argv3[] = {"n3"};
		json_t *h;
		int exit_code;
		c->probe_path = real;
		res = command(&E, "probe", 1, argv3, &e);
		assert_non_null(res);
		n = json_array_get(res, 0);
		h = json_object_get(n, "health");
		exit_code = (int)json_integer_value(json_object_get(
			json_object_get(n, "probe"), "exit_code"));
		print_message("real gpuprobe: exit %d, %s\n", exit_code,
		              json_string_value(json_object_get(h, "state")));
		if (exit_code == 3)
			assert_int_equal(strncmp(json_string_value(json_array_get(
				json_object_get(h, "failures"), 0)),
				"no usable GPU: ", 15), 0);
		else
			assert_true(exit_code == 0 || exit_code == 1);
		json_decref(res);
		c->probe_path = saved;
	} else {
		print_message("real gpuprobe not built at %s: skipped that part\n",
		              real);
	}
	free(real);
	env_close(&E);
}

/* ---------------------------------------------------------------- transport */

static void test_ssh_argv(void **state)
{
	onprem_ctx c;
	onprem_node n;
	char *opts[] = {"ServerAliveInterval=15", NULL};
	char **argv;
	const char *want[] = {
		"ssh", "-o", "ServerAliveInterval=15", "-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=accept-new", "-o",
		"UserKnownHostsFile=/st/known_hosts", "-o", "ConnectTimeout=10",
		"-o", "LogLevel=ERROR", "-p", "2222", "-i", "/keys/id", "-o",
		"IdentitiesOnly=yes", "-l", "gpu", "--", "10.0.0.5",
		"echo 'it'\\''s'", NULL,
	};
	char *q = onprem_shquote("it's");
	char *cmd = xasprintf("echo %s", q);
	size_t i;
	(void)state;
	memset(&c, 0, sizeof(c));
	memset(&n, 0, sizeof(n));
	c.ssh_bin = "ssh";
	c.known_hosts = "/st/known_hosts";
	c.ssh_connect_timeout_s = 10;
	n.name = "x";
	n.address = "10.0.0.5";
	n.transport = ONPREM_SSH;
	n.ssh_user = "gpu";
	n.ssh_port = 2222;
	n.ssh_key = "/keys/id";
	n.ssh_options.v = opts;
	n.ssh_options.n = 1;
	argv = onprem_argv(&c, &n, cmd);
	for (i = 0; want[i]; i++) {
		assert_non_null(argv[i]);
		assert_string_equal(argv[i], want[i]);
	}
	assert_null(argv[i]);
	onprem_argv_free(argv);
	free(cmd);
	free(q);
	/* the variables prefix */
	{
		const char *kv[] = {"GPUBROKER_POOL", "a b", "GPUBROKER_TOKEN",
		                    "x'y", NULL};
		char *s = onprem_with_env("run", kv);
		assert_string_equal(s, "export GPUBROKER_POOL='a b' "
		                       "GPUBROKER_TOKEN='x'\\''y'; run");
		free(s);
	}
}

static void test_transport_local(void **state)
{
	onprem_ctx c;
	onprem_node n;
	onprem_runres r;
	time_t t0;
	(void)state;
	memset(&c, 0, sizeof(c));
	memset(&n, 0, sizeof(n));
	n.name = "l";
	n.address = "127.0.0.1";
	n.transport = ONPREM_LOCAL;
	/* stdin, stdout, stderr and the exit status */
	assert_int_equal(onprem_run(&c, &n, "tr a-z A-Z; echo oops >&2; exit 4",
	                            "hello", 5, 10, &r), 0);
	assert_int_equal(r.exit_code, 4);
	assert_string_equal(r.out, "HELLO");
	assert_string_equal(r.err, "oops\n");
	onprem_runres_free(&r);
	/* a large stdin (more than a pipe holds) to a child that reads it */
	{
		size_t len = 1 << 20;
		char *big = malloc(len);
		memset(big, 'x', len);
		assert_int_equal(onprem_run(&c, &n, "wc -c", big, len, 10, &r), 0);
		assert_int_equal(atoi(r.out), (int)len);
		onprem_runres_free(&r);
		/* ... and to one that does not: no SIGPIPE death */
		assert_int_equal(onprem_run(&c, &n, "exit 0", big, len, 10, &r), 0);
		assert_int_equal(r.exit_code, 0);
		onprem_runres_free(&r);
		free(big);
	}
	/* the timeout kills the whole process group */
	t0 = time(NULL);
	assert_int_equal(onprem_run(&c, &n, "sleep 30 & sleep 30; echo no", NULL,
	                            0, 1, &r), -1);
	assert_true(r.timed_out);
	assert_string_equal(r.what, "timed out after 1 s");
	assert_true(time(NULL) - t0 < 10);
	onprem_runres_free(&r);
	/* a background child keeping the pipes open does not hold us */
	t0 = time(NULL);
	assert_int_equal(onprem_run(&c, &n, "(sleep 20 &) ; echo started", NULL,
	                            0, 30, &r), 0);
	assert_string_equal(r.out, "started\n");
	assert_true(time(NULL) - t0 < 10);
	onprem_runres_free(&r);
}

/* One ssh node r1 (10.9.9.9:2200) whose ssh is $DIR/fake-ssh and probe
 * $DIR/probe (both written by the test). */
static void ssh_node_env(env *E)
{
	env_open(E,
	         "sites:\n"
	         "  - {name: s1, lat: 50, lon: 8, jurisdiction: EU, country: DE}\n"
	         "nodes:\n"
	         "  - {name: r1, site: s1, address: 10.9.9.9, ssh: {user: gpu, "
	         "port: 2200}, gpus: {model: L4, count: 1}, "
	         "price_per_gpu_hour: 0.5, setup: 'true'}\n",
	         "ssh", "@DIR@/fake-ssh", "probe_path", "@DIR@/probe", NULL);
}

static void test_transport_ssh_unreachable(void **state)
{
	env E;
	gb_error e;
	json_t *res, *h;
	const char *argv1[] = {"r1"};
	char *fake;
	(void)state;
	ssh_node_env(&E);
	/* an ssh that records its arguments and cannot connect */
	fake = xasprintf("%s/fake-ssh", E.dir);
	{
		char *t = xasprintf("#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; "
		                    "done > %s/ssh-args\necho 'ssh: connect to "
		                    "host 10.9.9.9 port 2200: Connection refused' "
		                    ">&2\nexit 255\n", E.dir);
		spit(fake, t, 0755);
		free(t);
	}
	{
		char *p = xasprintf("%s/probe", E.dir);
		spit(p, "#!/bin/sh\necho {}\n", 0755);
		free(p);
	}
	res = command(&E, "probe", 1, argv1, &e);
	assert_non_null(res);
	h = json_object_get(json_array_get(res, 0), "health");
	assert_string_equal(json_string_value(json_object_get(h, "state")),
	                    "unreachable");
	assert_string_equal(json_string_value(json_array_get(json_object_get(
		h, "failures"), 0)),
		"ssh to 10.9.9.9:2200 failed: ssh: connect to host 10.9.9.9 port "
		"2200: Connection refused");
	json_decref(res);
	{
		char *args = file_in(&E, "ssh-args");
		char *want = xasprintf("UserKnownHostsFile=%s/known_hosts\n",
		                       E.state);
		assert_non_null(strstr(args, "-o\nBatchMode=yes\n"));
		assert_non_null(strstr(args, want));
		assert_non_null(strstr(args, "-p\n2200\n-l\ngpu\n--\n10.9.9.9\n"
		                             "sha256sum -- '.gpubroker/gpuprobe'"));
		free(want);
		free(args);
	}
	/* an unreachable node is not offered nor leased */
	{
		offers os;
		insts a;
		list_offers(&E, &os);
		assert_int_equal(os.n, 0);
		assert_int_equal(create(&E, "s1", "1xL4", 1, "p", "t", &a, &e), -1);
		assert_int_equal(e.cls, GB_ERR_CAPACITY);
	}
	/* the probe has not run since: setup meets the dead node: the
	 * node is marked unreachable, naming ssh's error; nothing is
	 * leased, so the outcome is known (CAPACITY, not TRANSIENT) */
	{
		char *f = xasprintf("%s/probe/r1.json", E.state);
		insts a;
		unlink(f);
		free(f);
		assert_int_equal(create(&E, "s1", "1xL4", 1, "p", "t", &a, &e), -1);
		assert_int_equal(e.cls, GB_ERR_CAPACITY);
		assert_string_equal(e.code, GB_ERR_CODE_NODE_UNHEALTHY);
		assert_non_null(strstr(e.message, "setup on node r1: ssh to "
		                                  "10.9.9.9:2200 failed: ssh: "
		                                  "connect to host"));
		assert_non_null(strstr(e.message, "node r1 is marked "
		                                  "unreachable"));
		f = xasprintf("%s/leases", E.state);
		assert_int_equal(count_files(f, ".json"), 0);
		free(f);
	}
	free(fake);
	env_close(&E);
}

/* A changed SSH host key is named, not retried as "Unreachable": the
 * node turns unhealthy (not offered) with how to re-pin it; setup meets
 * it as HostKeyChanged (AUTH). */
static void test_transport_ssh_host_key_changed(void **state)
{
	env E;
	gb_error e;
	json_t *res, *h;
	const char *argv1[] = {"r1"};
	const char *fail0;
	char *fake, *want;
	(void)state;
	ssh_node_env(&E);
	fake = xasprintf("%s/fake-ssh", E.dir);
	spit(fake, "#!/bin/sh\n"
	     "echo '@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@' >&2\n"
	     "echo '@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @' >&2\n"
	     "echo 'Host key verification failed.' >&2\nexit 255\n", 0755);
	{
		char *p = xasprintf("%s/probe", E.dir);
		spit(p, "#!/bin/sh\necho {}\n", 0755);
		free(p);
	}
	res = command(&E, "probe", 1, argv1, &e);
	assert_non_null(res);
	h = json_object_get(json_array_get(res, 0), "health");
	assert_string_equal(json_string_value(json_object_get(h, "state")),
	                    "unhealthy");
	fail0 = json_string_value(json_array_get(json_object_get(h,
	                                                         "failures"), 0));
	assert_non_null(fail0);
	want = xasprintf("ssh to 10.9.9.9:2200 refused: the node's SSH host "
	                 "key is not the one pinned in %s/known_hosts", E.state);
	if (!strstr(fail0, want) ||
	    !strstr(fail0, "ssh-keygen -R '[10.9.9.9]:2200' -f "))
		fail_msg("failure lacks the host key and the re-pin: %s", fail0);
	free(want);
	json_decref(res);
	{
		offers os;
		list_offers(&E, &os);
		assert_int_equal(os.n, 0);
	}
	/* setup meets it (no probe stored): named, AUTH, and the node is
	 * stored unhealthy */
	{
		char *f = xasprintf("%s/probe/r1.json", E.state);
		insts a;
		unlink(f);
		assert_int_equal(create(&E, "s1", "1xL4", 1, "p", "t", &a, &e), -1);
		assert_int_equal(e.cls, GB_ERR_AUTH);
		assert_string_equal(e.code, "HostKeyChanged");
		assert_non_null(strstr(e.message, "setup on node r1: ssh to "
		                                  "10.9.9.9:2200 refused"));
		assert_int_equal(access(f, F_OK), 0);
		free(f);
	}
	free(fake);
	env_close(&E);
}

/* Commands on a local node see a small environment, not gpubroker's
 * (cloud credentials, PGPASSWORD). */
static void test_transport_clean_env(void **state)
{
	onprem_ctx c;
	onprem_node n;
	onprem_runres r;
	(void)state;
	memset(&c, 0, sizeof(c));
	memset(&n, 0, sizeof(n));
	n.name = "l";
	n.address = "127.0.0.1";
	n.transport = ONPREM_LOCAL;
	setenv("AWS_SECRET_ACCESS_KEY", "gb-test-not-for-nodes", 1);
	setenv("PGPASSWORD", "gb-test-pg-secret", 1);
	setenv("LANG", "C.UTF-8", 1);
	assert_int_equal(onprem_run(&c, &n, "env", NULL, 0, 10, &r), 0);
	assert_int_equal(r.exit_code, 0);
	assert_null(strstr(r.out, "gb-test-not-for-nodes"));
	assert_null(strstr(r.out, "gb-test-pg-secret"));
	assert_non_null(strstr(r.out, "PATH="));
	assert_non_null(strstr(r.out, "LANG=C.UTF-8"));
	onprem_runres_free(&r);
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("PGPASSWORD");
}

static void test_sites_json(void **state)
{
	env E;
	gb_error e;
	json_t *s, *x;
	(void)state;
	env_open(&E, offers_inv, NULL);
	s = command(&E, "sites", 0, NULL, &e);
	assert_int_equal(json_array_size(s), 2);
	x = json_array_get(s, 0);
	assert_string_equal(json_string_value(json_object_get(x, "name")), "s1");
	assert_string_equal(json_string_value(json_object_get(x, "country")),
	                    "DE");
	assert_string_equal(json_string_value(json_object_get(x,
	                                                      "jurisdiction")),
	                    "EU");
	assert_true(fabs(json_number_value(json_object_get(x, "lat")) - 50.1) <
	            1e-9);
	assert_true(fabs(json_number_value(json_object_get(x, "lon")) - 8.7) <
	            1e-9);
	assert_string_equal(json_string_value(json_array_get(
		json_object_get(x, "tags"), 0)), "gdpr");
	assert_true(fabs(json_number_value(json_object_get(
		x, "carbon_g_per_kwh")) - 380) < 1e-9);
	x = json_array_get(s, 1);
	assert_true(json_is_null(json_object_get(x, "carbon_g_per_kwh")));
	assert_string_equal(json_string_value(json_object_get(x, "display")),
	                    "s2");
	json_decref(s);
	assert_null(command(&E, "reboot", 0, NULL, &e));
	assert_int_equal(e.cls, GB_ERR_INVALID);
	env_close(&E);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inventory_errors),
		cmocka_unit_test(test_inventory_all_errors),
		cmocka_unit_test(test_inventory_example),
		cmocka_unit_test(test_init_reports_inventory_errors),
		cmocka_unit_test(test_no_inventory),
		cmocka_unit_test(test_offers_from_probes),
		cmocka_unit_test(test_real_h100_nominal_memory),
		cmocka_unit_test(test_lease_atomicity),
		cmocka_unit_test(test_create_idempotent_describe_terminate),
		cmocka_unit_test(test_create_failures_release),
		cmocka_unit_test(test_mig),
		cmocka_unit_test(test_mig_room),
		cmocka_unit_test(test_probe_command),
		cmocka_unit_test(test_ssh_argv),
		cmocka_unit_test(test_transport_local),
		cmocka_unit_test(test_transport_ssh_unreachable),
		cmocka_unit_test(test_transport_ssh_host_key_changed),
		cmocka_unit_test(test_transport_clean_env),
		cmocka_unit_test(test_sites_json),
	};
	return cmocka_run_group_tests_name("onprem", tests, NULL, NULL);
}
