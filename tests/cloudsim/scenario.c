/*
 * scenario.c -- the scenario file (YAML) and runtime changes to it (a
 * JSON object, which is YAML too, posted to /_sim/scenario).  Every key
 * is documented in tests/cloudsim/README.md; unknown keys and wrong
 * types are errors with file:line:col.
 */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

const char *const sim_ops[SIM_NCLOUD][16] = {
	{"RunInstances", "DescribeInstances", "TerminateInstances",
	 "DescribeInstanceTypes", "DescribeSpotPriceHistory",
	 "DescribeAvailabilityZones", NULL},
	{"token", "PutVM", "GetVM", "ListVMs", "DeleteVM", "GetOperation",
	 "GetNetwork", "RetailPrices", "Usages", NULL},
	{"token", "instances.insert", "instances.bulkInsert", "instances.get",
	 "instances.delete",
	 "instances.list", "instances.aggregatedList", "zoneOperations.get",
	 "zoneOperations.wait", "zoneOperations.list", "regions.get",
	 "skus.list", NULL},
	{"instanceTypes", "listInstances", "getInstance", "launchInstance",
	 "terminateInstance", "listSSHKeys", "addSSHKey", "deleteSSHKey",
	 NULL},
};

const char *const sim_buckets[SIM_NCLOUD][8] = {
	{"RunInstances", "RunInstancesResource", "TerminateInstances",
	 "TerminateInstancesResource", "Describe", "DescribeUnfiltered", NULL},
	{"reads", "writes", "deletes", NULL},
	{"mutations", "reads", "lists", "operations", NULL},
	{"requests", "launch", NULL},
};

/* ------------------------------------------------------------------ */
/* op tables                                                           */

const sim_opval *sim_optab_find(const sim_optab *t, const char *op)
{
	const sim_opval *star = NULL;
	for (size_t i = 0; i < t->n; i++) {
		if (strcmp(t->v[i].op, op) == 0)
			return &t->v[i];
		if (strcmp(t->v[i].op, "*") == 0)
			star = &t->v[i];
	}
	return star;
}

void sim_optab_set(sim_optab *t, const char *op, double a, double b)
{
	for (size_t i = 0; i < t->n; i++) {
		if (strcmp(t->v[i].op, op) == 0) {
			t->v[i].a = a;
			t->v[i].b = b;
			return;
		}
	}
	t->v = gb_xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
	t->v[t->n].op = gb_xstrdup(op);
	t->v[t->n].a = a;
	t->v[t->n].b = b;
	t->n++;
}

void sim_optab_free(sim_optab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].op);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

static void optab_merge(sim_optab *dst, const sim_optab *src)
{
	for (size_t i = 0; i < src->n; i++)
		sim_optab_set(dst, src->v[i].op, src->v[i].a, src->v[i].b);
}

static void regions_free(sim_regions *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		gb_strv_free(&r->v[i].zones);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

static void caps_free(sim_caprule *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].region);
		free(c[i].zone);
		free(c[i].type);
	}
	free(c);
}

static void sched_free(sim_sched *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].pool);
		gb_strv_free(&s[i].ids);
	}
	free(s);
}

void sim_scenario_free(sim_scenario *sc)
{
	free(sc->file);
	free(sc->dir);
	for (int i = 0; i < SIM_NCLOUD; i++) {
		free(sc->catalog_path[i]);
		regions_free(&sc->regions[i]);
		sim_optab_free(&sc->latency[i]);
		sim_optab_free(&sc->errors[i]);
		sim_optab_free(&sc->lost[i]);
		sim_optab_free(&sc->throttle[i]);
	}
	free(sc->aws_key_id);
	free(sc->aws_secret);
	free(sc->aws_account);
	free(sc->az_tenant);
	free(sc->az_client);
	free(sc->az_secret);
	free(sc->az_sub);
	free(sc->az_rg);
	free(sc->gcp_project);
	free(sc->gcp_email);
	free(sc->gcp_key_file);
	free(sc->lambda_key);
	gb_strv_free(&sc->lambda_ssh_keys);
	caps_free(sc->caps, sc->ncaps);
	sim_optab_free(&sc->q_aws_vcpus);
	sim_optab_free(&sc->q_aws_spot_vcpus);
	sim_optab_free(&sc->q_aws_instances);
	sim_optab_free(&sc->q_az_cores);
	sim_optab_free(&sc->q_gcp_gpus);
	sched_free(sc->sched, sc->nsched);
	memset(sc, 0, sizeof(*sc));
}

static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = gb_xstrdup(v);
}

static void defaults(sim_scenario *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->seed = 1;
	set_str(&sc->aws_key_id, "AKIACLOUDSIM00000001");
	set_str(&sc->aws_secret, "cloudsim/Secret+Key0000000000000000000001");
	set_str(&sc->aws_account, "123456789012");
	set_str(&sc->az_tenant, "5f0b6d2e-0000-4000-8000-00000000a001");
	set_str(&sc->az_client, "5f0b6d2e-0000-4000-8000-00000000c001");
	set_str(&sc->az_secret, "cloudsim-client-secret~0001");
	set_str(&sc->az_sub, "5f0b6d2e-0000-4000-8000-00000000b001");
	set_str(&sc->az_rg, "gpubroker-sim");
	sc->az_token_life_s = 3599;
	set_str(&sc->gcp_project, "gpubroker-sim");
	set_str(&sc->gcp_email,
	        "cloudsim@gpubroker-sim.iam.gserviceaccount.com");
	sc->gcp_token_life_s = 3599;
	/* the shape of Lambda's keys: secret_<name>_<32 hex>.<token> */
	set_str(&sc->lambda_key, "secret_cloudsim_5f0b6d2e00004000800000000000"
	        "1a01.cloudsimLambdaApiKey0001");
	gb_strv_push(&sc->lambda_ssh_keys, "gpubroker");
	sc->q_az_lowpri = -1;
	sc->q_lambda_instances = -1;
	/* Throttling defaults from cloud-apis.md 1.6, 2.4, 3.4. */
	sim_optab_set(&sc->throttle[SIM_AWS], "RunInstances", 5, 2);
	sim_optab_set(&sc->throttle[SIM_AWS], "RunInstancesResource", 1000, 2);
	sim_optab_set(&sc->throttle[SIM_AWS], "TerminateInstances", 100, 5);
	sim_optab_set(&sc->throttle[SIM_AWS], "TerminateInstancesResource",
	              1000, 20);
	sim_optab_set(&sc->throttle[SIM_AWS], "Describe", 100, 20);
	sim_optab_set(&sc->throttle[SIM_AWS], "DescribeUnfiltered", 50, 10);
	sim_optab_set(&sc->throttle[SIM_AZURE], "reads", 250, 25);
	sim_optab_set(&sc->throttle[SIM_AZURE], "writes", 200, 10);
	sim_optab_set(&sc->throttle[SIM_AZURE], "deletes", 200, 10);
	for (int i = 0; sim_buckets[SIM_GCP][i]; i++)
		sim_optab_set(&sc->throttle[SIM_GCP], sim_buckets[SIM_GCP][i],
		              1500, 60);
	/* Lambda: "generally limited to 1 request per second", launch "1
	 * request every 10 seconds" (drivers/lambda/API.md); bursts are
	 * cloudsim's. */
	sim_optab_set(&sc->throttle[SIM_LAMBDA], "requests", 5, 1);
	sim_optab_set(&sc->throttle[SIM_LAMBDA], "launch", 1, 0.1);
	sc->eventual_ms = 0;
	sc->pending_ms[SIM_AWS] = 2000;
	sc->stopping_ms[SIM_AWS] = 1000;
	sc->aws_terminated_visible_ms = 60000;
	sc->pending_ms[SIM_AZURE] = 3000;
	sc->stopping_ms[SIM_AZURE] = 2000;
	sc->pending_ms[SIM_GCP] = 3000;
	sc->stopping_ms[SIM_GCP] = 2000;
	sc->pending_ms[SIM_LAMBDA] = 3000;
	sc->stopping_ms[SIM_LAMBDA] = 2000;
	sc->lambda_terminated_visible_ms = 60000;
	/* documented minimums, sources in README.md ("/_sim/bill") */
	sc->bill_min_s[SIM_AWS] = 60;
	sc->bill_min_s[SIM_AZURE] = 0;
	sc->bill_min_s[SIM_GCP] = 60;
	sc->bill_min_s[SIM_LAMBDA] = 60; /* an assumption: API.md */
	sc->max_instances = 100000;
	sc->max_body = 1 << 20;
	sc->az_vm_page = 50;
	sc->az_price_page = 100;
	sc->gcp_wait_max_ms = 120000;
	sc->lambda_max_quantity = 10;
}

/* ------------------------------------------------------------------ */
/* decoding                                                            */

/* What a runtime update sets; -1 / NULL = untouched. */
typedef struct delta {
	int has_caps;
	sim_caprule *caps;
	size_t ncaps;
	sim_optab q_aws_vcpus, q_aws_spot_vcpus, q_aws_instances, q_az_cores,
		q_gcp_gpus;
	double q_az_lowpri;
	int64_t q_lambda_instances;
	sim_optab latency[SIM_NCLOUD], errors[SIM_NCLOUD], lost[SIM_NCLOUD],
		throttle[SIM_NCLOUD];
	int64_t eventual_ms;
	int64_t pending_ms[SIM_NCLOUD], stopping_ms[SIM_NCLOUD];
	int64_t term_visible_ms[SIM_NCLOUD];
	int64_t bill_min_s[SIM_NCLOUD];
	double spot_rate;
	int has_sched;
	sim_sched *sched;
	size_t nsched;
	int64_t az_vm_page, az_price_page;
} delta;

static void delta_init(delta *dl)
{
	memset(dl, 0, sizeof(*dl));
	dl->q_az_lowpri = -2;
	dl->q_lambda_instances = -2;
	dl->eventual_ms = -1;
	for (int i = 0; i < SIM_NCLOUD; i++)
		dl->pending_ms[i] = dl->stopping_ms[i] = -1;
	for (int i = 0; i < SIM_NCLOUD; i++)
		dl->bill_min_s[i] = dl->term_visible_ms[i] = -1;
	dl->spot_rate = -1;
	dl->az_vm_page = dl->az_price_page = -1;
}

static void delta_free(delta *dl)
{
	caps_free(dl->caps, dl->ncaps);
	sim_optab_free(&dl->q_aws_vcpus);
	sim_optab_free(&dl->q_aws_spot_vcpus);
	sim_optab_free(&dl->q_aws_instances);
	sim_optab_free(&dl->q_az_cores);
	sim_optab_free(&dl->q_gcp_gpus);
	for (int i = 0; i < SIM_NCLOUD; i++) {
		sim_optab_free(&dl->latency[i]);
		sim_optab_free(&dl->errors[i]);
		sim_optab_free(&dl->lost[i]);
		sim_optab_free(&dl->throttle[i]);
	}
	sched_free(dl->sched, dl->nsched);
}

static void delta_apply(sim_scenario *sc, delta *dl)
{
	if (dl->has_caps) {
		caps_free(sc->caps, sc->ncaps);
		sc->caps = dl->caps;
		sc->ncaps = dl->ncaps;
		dl->caps = NULL;
		dl->ncaps = 0;
	}
	optab_merge(&sc->q_aws_vcpus, &dl->q_aws_vcpus);
	optab_merge(&sc->q_aws_spot_vcpus, &dl->q_aws_spot_vcpus);
	optab_merge(&sc->q_aws_instances, &dl->q_aws_instances);
	optab_merge(&sc->q_az_cores, &dl->q_az_cores);
	optab_merge(&sc->q_gcp_gpus, &dl->q_gcp_gpus);
	if (dl->q_az_lowpri > -2)
		sc->q_az_lowpri = dl->q_az_lowpri;
	if (dl->q_lambda_instances > -2)
		sc->q_lambda_instances = dl->q_lambda_instances;
	for (int i = 0; i < SIM_NCLOUD; i++) {
		optab_merge(&sc->latency[i], &dl->latency[i]);
		optab_merge(&sc->errors[i], &dl->errors[i]);
		optab_merge(&sc->lost[i], &dl->lost[i]);
		optab_merge(&sc->throttle[i], &dl->throttle[i]);
		if (dl->pending_ms[i] >= 0)
			sc->pending_ms[i] = dl->pending_ms[i];
		if (dl->bill_min_s[i] >= 0)
			sc->bill_min_s[i] = dl->bill_min_s[i];
		if (dl->stopping_ms[i] >= 0)
			sc->stopping_ms[i] = dl->stopping_ms[i];
	}
	if (dl->eventual_ms >= 0)
		sc->eventual_ms = dl->eventual_ms;
	if (dl->term_visible_ms[SIM_AWS] >= 0)
		sc->aws_terminated_visible_ms = dl->term_visible_ms[SIM_AWS];
	if (dl->term_visible_ms[SIM_LAMBDA] >= 0)
		sc->lambda_terminated_visible_ms =
			dl->term_visible_ms[SIM_LAMBDA];
	if (dl->spot_rate >= 0)
		sc->spot_rate_per_hour = dl->spot_rate;
	if (dl->has_sched) {
		sched_free(sc->sched, sc->nsched);
		sc->sched = dl->sched;
		sc->nsched = dl->nsched;
		dl->sched = NULL;
		dl->nsched = 0;
	}
	if (dl->az_vm_page > 0)
		sc->az_vm_page = dl->az_vm_page;
	if (dl->az_price_page > 0)
		sc->az_price_page = dl->az_price_page;
}

static const char *const cloud_keys[] = {"aws", "azure", "gcp", "lambda",
                                         NULL};

#define KP(parent, key) gb_ypath_key(parent, key)

static int dec_clouds(gb_ydec *c, const gb_ynode *n, const char *path)
{
	return gb_ydec_map(c, n, path, cloud_keys);
}

/* Builds the NULL-terminated list of op names plus "*". */
static void op_names(const char *const *ops, const char **out, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; ops[i] && k + 2 < cap; i++)
		out[k++] = ops[i];
	out[k++] = "*";
	out[k] = NULL;
}

/* {op: {base_ms, jitter_ms}} */
static int dec_latency(gb_ydec *c, const gb_ynode *n, const char *path,
                       int cloud, sim_optab *t)
{
	static const char *const lk[] = {"base_ms", "jitter_ms", NULL};
	const char *names[24];
	int rc = 0;
	op_names(sim_ops[cloud], names, GB_ARRAY_LEN(names));
	if (gb_ydec_map(c, n, path, names) != 0)
		return -1;
	for (size_t i = 0; i < n->n; i++) {
		char *p = KP(path, n->keys[i]->str);
		const gb_ynode *v = n->items[i];
		int64_t base = 0, jit = 0;
		if (gb_ydec_map(c, v, p, lk) != 0) {
			rc = -1;
		} else {
			const gb_ynode *b = gb_ymap_get(v, "base_ms");
			const gb_ynode *j = gb_ymap_get(v, "jitter_ms");
			char *pb = KP(p, "base_ms"), *pj = KP(p, "jitter_ms");
			if (b && gb_ydec_int(c, b, pb, 0, 600000, &base))
				rc = -1;
			if (j && gb_ydec_int(c, j, pj, 0, 600000, &jit))
				rc = -1;
			free(pb);
			free(pj);
			sim_optab_set(t, n->keys[i]->str, (double)base,
			              (double)jit);
		}
		free(p);
	}
	return rc;
}

/* {op: fraction} */
static int dec_rates(gb_ydec *c, const gb_ynode *n, const char *path,
                     int cloud, sim_optab *t)
{
	const char *names[24];
	int rc = 0;
	op_names(sim_ops[cloud], names, GB_ARRAY_LEN(names));
	if (gb_ydec_map(c, n, path, names) != 0)
		return -1;
	for (size_t i = 0; i < n->n; i++) {
		char *p = KP(path, n->keys[i]->str);
		double r;
		if (gb_ydec_num(c, n->items[i], p, 0, 1, &r) != 0)
			rc = -1;
		else
			sim_optab_set(t, n->keys[i]->str, r, 0);
		free(p);
	}
	return rc;
}

/* {bucket: {capacity, refill_per_s}} or GCP {group: {per_minute, window_s}} */
static int dec_throttle(gb_ydec *c, const gb_ynode *n, const char *path,
                        int cloud, sim_optab *t)
{
	static const char *const tk[] = {"capacity", "refill_per_s", NULL};
	static const char *const gk[] = {"per_minute", "window_s", NULL};
	int rc = 0;
	if (gb_ydec_map(c, n, path, sim_buckets[cloud]) != 0)
		return -1;
	for (size_t i = 0; i < n->n; i++) {
		char *p = KP(path, n->keys[i]->str);
		const gb_ynode *v = n->items[i];
		const sim_opval *cur = sim_optab_find(&sim_g.sc.throttle[cloud],
		                                      n->keys[i]->str);
		double a = cur ? cur->a : 0, b = cur ? cur->b : 0;
		if (gb_ydec_map(c, v, p, cloud == SIM_GCP ? gk : tk) != 0) {
			rc = -1;
		} else if (cloud == SIM_GCP) {
			const gb_ynode *x = gb_ymap_get(v, "per_minute");
			const gb_ynode *w = gb_ymap_get(v, "window_s");
			char *px = KP(p, "per_minute"), *pw = KP(p, "window_s");
			int64_t iv;
			if (x && gb_ydec_int(c, x, px, 0, 100000000, &iv) == 0)
				a = (double)iv;
			else if (x)
				rc = -1;
			if (w && gb_ydec_int(c, w, pw, 1, 3600, &iv) == 0)
				b = (double)iv;
			else if (w)
				rc = -1;
			if (b <= 0)
				b = 60;
			free(px);
			free(pw);
			sim_optab_set(t, n->keys[i]->str, a, b);
		} else {
			const gb_ynode *x = gb_ymap_get(v, "capacity");
			const gb_ynode *r = gb_ymap_get(v, "refill_per_s");
			char *px = KP(p, "capacity"), *pr = KP(p, "refill_per_s");
			if (x && gb_ydec_num(c, x, px, 0, 1e9, &a) != 0)
				rc = -1;
			if (r && gb_ydec_num(c, r, pr, 0, 1e9, &b) != 0)
				rc = -1;
			free(px);
			free(pr);
			sim_optab_set(t, n->keys[i]->str, a, b);
		}
		free(p);
	}
	return rc;
}

typedef int (*dec_percloud_fn)(gb_ydec *, const gb_ynode *, const char *,
                               int, sim_optab *);

static int dec_percloud(gb_ydec *c, const gb_ynode *n, const char *path,
                        dec_percloud_fn fn, sim_optab *tabs)
{
	int rc = 0;
	if (dec_clouds(c, n, path) != 0)
		return -1;
	for (size_t i = 0; i < n->n; i++) {
		int cl = sim_cloud_parse(n->keys[i]->str);
		char *p = KP(path, n->keys[i]->str);
		if (fn(c, n->items[i], p, cl, &tabs[cl]) != 0)
			rc = -1;
		free(p);
	}
	return rc;
}

static int dec_market(gb_ydec *c, const gb_ynode *n, const char *path,
                      int *out)
{
	static const char *const mk[] = {"any", "on-demand", "spot", NULL};
	return gb_ydec_enum(c, n, path, mk, out);
}

static int dec_capacity(gb_ydec *c, const gb_ynode *n, const char *path,
                        delta *dl)
{
	static const char *const ck[] = {"cloud", "region", "zone", "type",
	                                 "market", "count", NULL};
	int rc = 0;
	dl->has_caps = 1;
	if (n->kind != GB_Y_SEQ) {
		char what[128];
		gb_ydec_err(c, n, path,
		            "expected a list of {cloud, region, zone, type, "
		            "market, count}, found %s",
		            gb_ydescribe(n, what, sizeof(what)));
		return -1;
	}
	dl->caps = gb_xcalloc(n->n + 1, sizeof(sim_caprule));
	for (size_t i = 0; i < n->n; i++) {
		char *p = gb_ypath_idx(path, i);
		const gb_ynode *it = n->items[i], *v;
		sim_caprule *r = &dl->caps[dl->ncaps++];
		r->cloud = -1;
		if (gb_ydec_map(c, it, p, ck) != 0) {
			rc = -1;
			free(p);
			continue;
		}
		if ((v = gb_ymap_get(it, "cloud"))) {
			char *pp = KP(p, "cloud");
			int idx;
			if (gb_ydec_enum(c, v, pp, cloud_keys, &idx) == 0)
				r->cloud = idx;
			else
				rc = -1;
			free(pp);
		}
#define CAPSTR(field, key)                                                   \
	if ((v = gb_ymap_get(it, key))) {                                    \
		char *pp = KP(p, key);                                       \
		if (gb_ydec_str(c, v, pp, &r->field) != 0)                   \
			rc = -1;                                             \
		free(pp);                                                    \
	}                                                                    \
	if (!r->field)                                                       \
		r->field = gb_xstrdup("*");
		CAPSTR(region, "region")
		CAPSTR(zone, "zone")
		CAPSTR(type, "type")
#undef CAPSTR
		if ((v = gb_ymap_get(it, "market"))) {
			char *pp = KP(p, "market");
			if (dec_market(c, v, pp, &r->market) != 0)
				rc = -1;
			free(pp);
		}
		if ((v = gb_ymap_get(it, "count"))) {
			char *pp = KP(p, "count");
			if (gb_ydec_int(c, v, pp, 0, INT64_MAX / 2,
			                &r->count) != 0)
				rc = -1;
			free(pp);
		} else {
			gb_ydec_err(c, it, p, "missing key \"count\"");
			rc = -1;
		}
		free(p);
	}
	return rc;
}

/* map.key, when present, into *dst (lo..hi).  0, or -1 with the error in
 * c. */
static int dec_opt_int(gb_ydec *c, const gb_ynode *map, const char *path,
                       const char *key, int64_t lo, int64_t hi, int64_t *dst)
{
	const gb_ynode *v = gb_ymap_get(map, key);
	char *q;
	int rc;
	if (!v)
		return 0;
	q = KP(path, key);
	rc = gb_ydec_int(c, v, q, lo, hi, dst);
	free(q);
	return rc;
}

/* {key: int} into an optab */
static int dec_limits(gb_ydec *c, const gb_ynode *n, const char *path,
                      sim_optab *t)
{
	int rc = 0;
	if (gb_ydec_map(c, n, path, NULL) != 0)
		return -1;
	for (size_t i = 0; i < n->n; i++) {
		char *p = KP(path, n->keys[i]->str);
		int64_t v;
		if (gb_ydec_int(c, n->items[i], p, 0, INT64_MAX / 4, &v) != 0)
			rc = -1;
		else
			sim_optab_set(t, n->keys[i]->str, (double)v, 0);
		free(p);
	}
	return rc;
}

static int dec_quotas(gb_ydec *c, const gb_ynode *n, const char *path,
                      delta *dl)
{
	static const char *const ak[] = {"vcpus", "spot_vcpus", "instances",
	                                 NULL};
	static const char *const zk[] = {"cores", "low_priority_cores", NULL};
	static const char *const gk[] = {"gpus", NULL};
	static const char *const lk[] = {"instances", NULL};
	const gb_ynode *cn, *v;
	int rc = 0;
	if (dec_clouds(c, n, path) != 0)
		return -1;
	if ((cn = gb_ymap_get(n, "lambda"))) {
		char *p = KP(path, "lambda");
		if (gb_ydec_map(c, cn, p, lk) != 0)
			rc = -1;
		else
			rc |= dec_opt_int(c, cn, p, "instances", 0,
			                  INT64_MAX / 4, &dl->q_lambda_instances);
		free(p);
	}
	if ((cn = gb_ymap_get(n, "aws"))) {
		char *p = KP(path, "aws");
		if (gb_ydec_map(c, cn, p, ak) != 0) {
			rc = -1;
		} else {
			char *q;
			if ((v = gb_ymap_get(cn, "vcpus"))) {
				q = KP(p, "vcpus");
				rc |= dec_limits(c, v, q, &dl->q_aws_vcpus);
				free(q);
			}
			if ((v = gb_ymap_get(cn, "spot_vcpus"))) {
				q = KP(p, "spot_vcpus");
				rc |= dec_limits(c, v, q, &dl->q_aws_spot_vcpus);
				free(q);
			}
			if ((v = gb_ymap_get(cn, "instances"))) {
				q = KP(p, "instances");
				rc |= dec_limits(c, v, q, &dl->q_aws_instances);
				free(q);
			}
		}
		free(p);
	}
	if ((cn = gb_ymap_get(n, "azure"))) {
		char *p = KP(path, "azure");
		if (gb_ydec_map(c, cn, p, zk) != 0) {
			rc = -1;
		} else {
			if ((v = gb_ymap_get(cn, "cores"))) {
				char *q = KP(p, "cores");
				rc |= dec_limits(c, v, q, &dl->q_az_cores);
				free(q);
			}
			if ((v = gb_ymap_get(cn, "low_priority_cores"))) {
				char *q = KP(p, "low_priority_cores");
				int64_t x;
				if (gb_ydec_int(c, v, q, 0, INT64_MAX / 4, &x))
					rc = -1;
				else
					dl->q_az_lowpri = (double)x;
				free(q);
			}
		}
		free(p);
	}
	if ((cn = gb_ymap_get(n, "gcp"))) {
		char *p = KP(path, "gcp");
		if (gb_ydec_map(c, cn, p, gk) != 0) {
			rc = -1;
		} else if ((v = gb_ymap_get(cn, "gpus"))) {
			char *q = KP(p, "gpus");
			rc |= dec_limits(c, v, q, &dl->q_gcp_gpus);
			free(q);
		}
		free(p);
	}
	return rc ? -1 : 0;
}

static int dec_lifecycle(gb_ydec *c, const gb_ynode *n, const char *path,
                         delta *dl)
{
	static const char *const awsk[] = {"pending_ms", "stopping_ms",
	                                   "terminated_visible_ms", NULL};
	static const char *const k[] = {"pending_ms", "stopping_ms", NULL};
	int rc = 0;
	if (dec_clouds(c, n, path) != 0)
		return -1;
	for (size_t i = 0; i < n->n; i++) {
		int cl = sim_cloud_parse(n->keys[i]->str);
		const gb_ynode *cn = n->items[i];
		char *p = KP(path, n->keys[i]->str);
		if (gb_ydec_map(c, cn, p,
		                cl == SIM_AWS || cl == SIM_LAMBDA ? awsk : k)
		    != 0) {
			rc = -1;
			free(p);
			continue;
		}
		rc |= dec_opt_int(c, cn, p, "pending_ms", 0, 86400000,
		                  &dl->pending_ms[cl]);
		rc |= dec_opt_int(c, cn, p, "stopping_ms", 0, 86400000,
		                  &dl->stopping_ms[cl]);
		rc |= dec_opt_int(c, cn, p, "terminated_visible_ms", 0, 86400000,
		                  &dl->term_visible_ms[cl]);
		free(p);
	}
	return rc ? -1 : 0;
}

/* billing: {aws|azure|gcp|lambda: {minimum_s: N}} */
static int dec_billing(gb_ydec *c, const gb_ynode *n, const char *path,
                       delta *dl)
{
	static const char *const k[] = {"minimum_s", NULL};
	int rc = 0;
	if (dec_clouds(c, n, path) != 0)
		return -1;
	for (size_t i = 0; i < n->n; i++) {
		char *p = KP(path, n->keys[i]->str);
		if (gb_ydec_map(c, n->items[i], p, k) != 0)
			rc = -1;
		else
			rc |= dec_opt_int(c, n->items[i], p, "minimum_s", 0, 86400,
			                  &dl->bill_min_s[sim_cloud_parse(
			                          n->keys[i]->str)]);
		free(p);
	}
	return rc ? -1 : 0;
}

static int dec_sched(gb_ydec *c, const gb_ynode *n, const char *path,
                     delta *dl)
{
	static const char *const sk[] = {"at_ms", "cloud", "pool",
	                                 "fraction", "ids", NULL};
	static const char *const clouds_any[] = {"aws", "azure", "gcp",
	                                         "lambda", "any", NULL};
	int rc = 0;
	dl->has_sched = 1;
	if (n->kind != GB_Y_SEQ) {
		char what[128];
		gb_ydec_err(c, n, path,
		            "expected a list of {at_ms, cloud, pool, "
		            "fraction | ids}, found %s",
		            gb_ydescribe(n, what, sizeof(what)));
		return -1;
	}
	dl->sched = gb_xcalloc(n->n + 1, sizeof(sim_sched));
	for (size_t i = 0; i < n->n; i++) {
		const gb_ynode *it = n->items[i], *v;
		char *p = gb_ypath_idx(path, i);
		sim_sched *s = &dl->sched[dl->nsched++];
		s->cloud = -1;
		s->base = sim_now();
		s->fraction = -1;
		if (gb_ydec_map(c, it, p, sk) != 0) {
			rc = -1;
			free(p);
			continue;
		}
		if ((v = gb_ymap_get(it, "at_ms"))) {
			char *q = KP(p, "at_ms");
			rc |= gb_ydec_int(c, v, q, 0, INT64_MAX / 4, &s->at_ms);
			free(q);
		} else {
			gb_ydec_err(c, it, p, "missing key \"at_ms\"");
			rc = -1;
		}
		if ((v = gb_ymap_get(it, "cloud"))) {
			char *q = KP(p, "cloud");
			int idx;
			if (gb_ydec_enum(c, v, q, clouds_any, &idx) == 0)
				s->cloud = idx == SIM_NCLOUD ? -1 : idx;
			else
				rc = -1;
			free(q);
		}
		if ((v = gb_ymap_get(it, "pool"))) {
			char *q = KP(p, "pool");
			rc |= gb_ydec_str(c, v, q, &s->pool);
			free(q);
		}
		if ((v = gb_ymap_get(it, "fraction"))) {
			char *q = KP(p, "fraction");
			rc |= gb_ydec_num(c, v, q, 0, 1, &s->fraction);
			free(q);
		}
		if ((v = gb_ymap_get(it, "ids"))) {
			char *q = KP(p, "ids");
			rc |= gb_ydec_strlist(c, v, q, &s->ids);
			free(q);
		}
		if (s->fraction < 0 && s->ids.n == 0) {
			gb_ydec_err(c, it, p,
			            "give \"fraction\" (0..1) or \"ids\"");
			rc = -1;
		}
		free(p);
	}
	return rc ? -1 : 0;
}

static int dec_spot(gb_ydec *c, const gb_ynode *n, const char *path,
                    delta *dl)
{
	static const char *const k[] = {"reclaim_rate_per_hour", "schedule",
	                                NULL};
	const gb_ynode *v;
	int rc = 0;
	if (gb_ydec_map(c, n, path, k) != 0)
		return -1;
	if ((v = gb_ymap_get(n, "reclaim_rate_per_hour"))) {
		char *q = KP(path, "reclaim_rate_per_hour");
		rc |= gb_ydec_num(c, v, q, 0, 1e6, &dl->spot_rate);
		free(q);
	}
	if ((v = gb_ymap_get(n, "schedule"))) {
		char *q = KP(path, "schedule");
		rc |= dec_sched(c, v, q, dl);
		free(q);
	}
	return rc ? -1 : 0;
}

static int dec_paging(gb_ydec *c, const gb_ynode *n, const char *path,
                      delta *dl)
{
	static const char *const k[] = {"azure_vms", "azure_prices", NULL};
	const gb_ynode *v;
	int rc = 0;
	if (gb_ydec_map(c, n, path, k) != 0)
		return -1;
	if ((v = gb_ymap_get(n, "azure_vms"))) {
		char *q = KP(path, "azure_vms");
		rc |= gb_ydec_int(c, v, q, 1, 1000, &dl->az_vm_page);
		free(q);
	}
	if ((v = gb_ymap_get(n, "azure_prices"))) {
		char *q = KP(path, "azure_prices");
		rc |= gb_ydec_int(c, v, q, 1, 1000, &dl->az_price_page);
		free(q);
	}
	return rc ? -1 : 0;
}

/* The keys both the file and runtime updates accept. */
static int dec_runtime_key(gb_ydec *c, const char *key, const gb_ynode *v,
                           delta *dl)
{
	int rc = 0;
	char *p = gb_xstrdup(key);
	if (strcmp(key, "capacity") == 0) {
		rc = dec_capacity(c, v, p, dl);
	} else if (strcmp(key, "quotas") == 0) {
		rc = dec_quotas(c, v, p, dl);
	} else if (strcmp(key, "latency") == 0) {
		rc = dec_percloud(c, v, p, dec_latency, dl->latency);
	} else if (strcmp(key, "error_rates") == 0) {
		rc = dec_percloud(c, v, p, dec_rates, dl->errors);
	} else if (strcmp(key, "lost_response") == 0) {
		rc = dec_percloud(c, v, p, dec_rates, dl->lost);
	} else if (strcmp(key, "throttling") == 0) {
		rc = dec_percloud(c, v, p, dec_throttle, dl->throttle);
	} else if (strcmp(key, "eventual_consistency_ms") == 0) {
		rc = gb_ydec_int(c, v, p, 0, 3600000, &dl->eventual_ms);
	} else if (strcmp(key, "lifecycle") == 0) {
		rc = dec_lifecycle(c, v, p, dl);
	} else if (strcmp(key, "spot") == 0) {
		rc = dec_spot(c, v, p, dl);
	} else if (strcmp(key, "paging") == 0) {
		rc = dec_paging(c, v, p, dl);
	} else if (strcmp(key, "billing") == 0) {
		rc = dec_billing(c, v, p, dl);
	}
	free(p);
	return rc;
}

#define RUNTIME_KEYS                                                         \
	"capacity", "quotas", "latency", "error_rates", "lost_response",     \
	"throttling", "eventual_consistency_ms", "lifecycle", "spot", "paging", \
	"billing"

static char *resolve_path(const char *dir, const char *p)
{
	if (p[0] == '/')
		return gb_xstrdup(p);
	return gb_xasprintf("%s/%s", dir, p);
}

/* credentials.lambda.ssh_keys: 1..64 names of 1..64 characters, no
 * repeats. */
static int dec_ssh_keys(gb_ydec *c, const gb_ynode *v, sim_scenario *sc)
{
	const char *path = "credentials.lambda.ssh_keys";
	gb_strv names = {NULL, 0};
	if (gb_ydec_strlist(c, v, path, &names) != 0)
		return -1;
	if (names.n == 0 || names.n > 64) {
		gb_ydec_err(c, v, path, "give 1 to 64 key names, found %zu",
		            names.n);
		gb_strv_free(&names);
		return -1;
	}
	for (size_t i = 0; i < names.n; i++) {
		size_t len = strlen(names.v[i]);
		int dup = 0;
		for (size_t j = 0; j < i; j++)
			dup |= strcmp(names.v[i], names.v[j]) == 0;
		if (len == 0 || len > 64 || dup) {
			gb_ydec_err(c, v, path,
			            "key name \"%s\" is %s; names are 1..64 "
			            "characters and distinct", names.v[i],
			            dup ? "repeated" : "empty or too long");
			gb_strv_free(&names);
			return -1;
		}
	}
	gb_strv_free(&sc->lambda_ssh_keys);
	sc->lambda_ssh_keys = names;
	return 0;
}

static int dec_credentials(gb_ydec *c, const gb_ynode *n, sim_scenario *sc)
{
	static const char *const ak[] = {"access_key_id", "secret_access_key",
	                                 "account_id", NULL};
	static const char *const zk[] = {"tenant_id", "client_id",
	                                 "client_secret", "subscription_id",
	                                 "resource_group", "token_lifetime_s",
	                                 NULL};
	static const char *const gk[] = {"project", "client_email", "key_file",
	                                 "token_lifetime_s", NULL};
	static const char *const lk[] = {"api_key", "ssh_keys",
	                                 "account_inactive", NULL};
	const gb_ynode *cn, *v;
	int rc = 0;
	if (dec_clouds(c, n, "credentials") != 0)
		return -1;
#define CSTR(node, path, key, dst)                                           \
	if ((v = gb_ymap_get(node, key))) {                                  \
		char *tmp = NULL;                                            \
		char *pp = KP(path, key);                                    \
		if (gb_ydec_str(c, v, pp, &tmp) == 0 && *tmp) {              \
			free(dst);                                           \
			dst = tmp;                                           \
		} else {                                                     \
			if (tmp)                                             \
				gb_ydec_err(c, v, pp, "must not be empty");  \
			free(tmp);                                           \
			rc = -1;                                             \
		}                                                            \
		free(pp);                                                    \
	}
	if ((cn = gb_ymap_get(n, "aws"))) {
		if (gb_ydec_map(c, cn, "credentials.aws", ak) != 0) {
			rc = -1;
		} else {
			CSTR(cn, "credentials.aws", "access_key_id",
			     sc->aws_key_id)
			CSTR(cn, "credentials.aws", "secret_access_key",
			     sc->aws_secret)
			CSTR(cn, "credentials.aws", "account_id",
			     sc->aws_account)
		}
	}
	if ((cn = gb_ymap_get(n, "azure"))) {
		if (gb_ydec_map(c, cn, "credentials.azure", zk) != 0) {
			rc = -1;
		} else {
			CSTR(cn, "credentials.azure", "tenant_id", sc->az_tenant)
			CSTR(cn, "credentials.azure", "client_id", sc->az_client)
			CSTR(cn, "credentials.azure", "client_secret",
			     sc->az_secret)
			CSTR(cn, "credentials.azure", "subscription_id",
			     sc->az_sub)
			CSTR(cn, "credentials.azure", "resource_group",
			     sc->az_rg)
			if ((v = gb_ymap_get(cn, "token_lifetime_s")))
				rc |= gb_ydec_int(
					c, v,
					"credentials.azure.token_lifetime_s",
					1, 86400, &sc->az_token_life_s);
		}
	}
	if ((cn = gb_ymap_get(n, "gcp"))) {
		if (gb_ydec_map(c, cn, "credentials.gcp", gk) != 0) {
			rc = -1;
		} else {
			char *kf = NULL;
			CSTR(cn, "credentials.gcp", "project", sc->gcp_project)
			CSTR(cn, "credentials.gcp", "client_email",
			     sc->gcp_email)
			CSTR(cn, "credentials.gcp", "key_file", kf)
			if (kf) {
				free(sc->gcp_key_file);
				sc->gcp_key_file = resolve_path(sc->dir, kf);
				free(kf);
			}
			if ((v = gb_ymap_get(cn, "token_lifetime_s")))
				rc |= gb_ydec_int(
					c, v, "credentials.gcp.token_lifetime_s",
					1, 3600, &sc->gcp_token_life_s);
		}
	}
	if ((cn = gb_ymap_get(n, "lambda"))) {
		if (gb_ydec_map(c, cn, "credentials.lambda", lk) != 0) {
			rc = -1;
		} else {
			CSTR(cn, "credentials.lambda", "api_key", sc->lambda_key)
			if ((v = gb_ymap_get(cn, "ssh_keys")))
				rc |= dec_ssh_keys(c, v, sc);
			if ((v = gb_ymap_get(cn, "account_inactive")))
				rc |= gb_ydec_bool(
					c, v, "credentials.lambda.account_inactive",
					&sc->lambda_inactive);
		}
	}
#undef CSTR
	return rc ? -1 : 0;
}

static int dec_regions(gb_ydec *c, const gb_ynode *n, sim_scenario *sc)
{
	int rc = 0;
	if (dec_clouds(c, n, "regions") != 0)
		return -1;
	for (size_t i = 0; i < n->n; i++) {
		int cl = sim_cloud_parse(n->keys[i]->str);
		const gb_ynode *rn = n->items[i];
		char *p = KP("regions", n->keys[i]->str);
		if (gb_ydec_map(c, rn, p, NULL) != 0) {
			rc = -1;
			free(p);
			continue;
		}
		sc->regions[cl].v = gb_xcalloc(rn->n + 1, sizeof(sim_region));
		for (size_t j = 0; j < rn->n; j++) {
			sim_region *r = &sc->regions[cl].v[sc->regions[cl].n++];
			char *q = KP(p, rn->keys[j]->str);
			gb_strv zs = {NULL, 0};
			r->name = gb_xstrdup(rn->keys[j]->str);
			if (!rn->items[j]->is_null &&
			    gb_ydec_strlist(c, rn->items[j], q, &zs) != 0)
				rc = -1;
			for (size_t z = 0; z < zs.n; z++) {
				char buf[128];
				const char *zn = zs.v[z];
				if (cl == SIM_AZURE)
					zn = sim_azure_zone_norm(r->name, zn,
					                         buf,
					                         sizeof(buf));
				gb_strv_push(&r->zones, zn);
			}
			gb_strv_free(&zs);
			free(q);
		}
		free(p);
	}
	return rc;
}

static int dec_catalogs(gb_ydec *c, const gb_ynode *n, sim_scenario *sc)
{
	int rc = 0;
	if (dec_clouds(c, n, "catalogs") != 0)
		return -1;
	for (size_t i = 0; i < n->n; i++) {
		int cl = sim_cloud_parse(n->keys[i]->str);
		char *p = KP("catalogs", n->keys[i]->str);
		char *v = NULL;
		if (gb_ydec_str(c, n->items[i], p, &v) == 0) {
			free(sc->catalog_path[cl]);
			sc->catalog_path[cl] = resolve_path(sc->dir, v);
		} else {
			rc = -1;
		}
		free(v);
		free(p);
	}
	return rc;
}

static int dec_limits_section(gb_ydec *c, const gb_ynode *n,
                              sim_scenario *sc)
{
	static const char *const k[] = {"max_instances", "max_body_bytes",
	                                "gcp_wait_max_ms",
	                                "lambda_max_quantity", NULL};
	const gb_ynode *v;
	int rc = 0;
	if (gb_ydec_map(c, n, "limits", k) != 0)
		return -1;
	if ((v = gb_ymap_get(n, "max_instances")))
		rc |= gb_ydec_int(c, v, "limits.max_instances", 1, 10000000,
		                  &sc->max_instances);
	if ((v = gb_ymap_get(n, "max_body_bytes")))
		rc |= gb_ydec_int(c, v, "limits.max_body_bytes", 1024,
		                  64 << 20, &sc->max_body);
	if ((v = gb_ymap_get(n, "gcp_wait_max_ms")))
		rc |= gb_ydec_int(c, v, "limits.gcp_wait_max_ms", 0, 600000,
		                  &sc->gcp_wait_max_ms);
	if ((v = gb_ymap_get(n, "lambda_max_quantity")))
		rc |= gb_ydec_int(c, v, "limits.lambda_max_quantity", 1, 10000,
		                  &sc->lambda_max_quantity);
	return rc ? -1 : 0;
}

int sim_scenario_load(sim_scenario *sc, const char *path, gb_diags *d)
{
	static const char *const top[] = {"seed", "catalogs", "credentials",
	                                  "regions", "limits", RUNTIME_KEYS,
	                                  NULL};
	gb_yaml_opts yo;
	gb_ydocs docs = {NULL, 0};
	gb_ydec c = {path, d};
	const gb_ynode *root;
	delta dl;
	int rc = 0;
	char *tmp;
	defaults(sc);
	sc->file = gb_xstrdup(path);
	tmp = gb_xstrdup(path);
	sc->dir = gb_xstrdup(dirname(tmp));
	free(tmp);
	memset(&yo, 0, sizeof(yo));
	yo.expand_env = 1;
	if (gb_yaml_load_file(path, &yo, &docs, d) != 0) {
		gb_ydocs_free(&docs);
		return -1;
	}
	if (docs.n != 1 || !docs.docs[0]) {
		gb_diag_add(d, path, 1, 1, "",
		            "a scenario is exactly one YAML document (a "
		            "mapping)");
		gb_ydocs_free(&docs);
		return -1;
	}
	root = docs.docs[0];
	if (gb_ydec_map(&c, root, "", top) != 0)
		rc = -1;
	if (root->kind != GB_Y_MAP) {
		gb_ydocs_free(&docs);
		return -1;
	}
	delta_init(&dl);
	for (size_t i = 0; i < root->n; i++) {
		const char *k = root->keys[i]->str;
		const gb_ynode *v = root->items[i];
		if (strcmp(k, "seed") == 0) {
			int64_t s;
			if (gb_ydec_int(&c, v, "seed", 0, INT64_MAX, &s) == 0)
				sc->seed = (uint64_t)s;
			else
				rc = -1;
		} else if (strcmp(k, "catalogs") == 0) {
			rc |= dec_catalogs(&c, v, sc);
		} else if (strcmp(k, "credentials") == 0) {
			rc |= dec_credentials(&c, v, sc);
		} else if (strcmp(k, "regions") == 0) {
			rc |= dec_regions(&c, v, sc);
		} else if (strcmp(k, "limits") == 0) {
			rc |= dec_limits_section(&c, v, sc);
		} else {
			rc |= dec_runtime_key(&c, k, v, &dl);
		}
	}
	if (rc == 0)
		delta_apply(sc, &dl);
	delta_free(&dl);
	gb_ydocs_free(&docs);
	return rc ? -1 : 0;
}

int sim_scenario_update(sim_scenario *sc, const char *text, size_t len,
                        gb_diags *d)
{
	static const char *const top[] = {RUNTIME_KEYS, NULL};
	const char *file = "POST /_sim/scenario";
	gb_yaml_opts yo;
	gb_ydocs docs = {NULL, 0};
	gb_ydec c = {file, d};
	const gb_ynode *root;
	delta dl;
	int rc = 0;
	memset(&yo, 0, sizeof(yo));
	if (gb_yaml_load(file, text, len, &yo, &docs, d) != 0) {
		gb_ydocs_free(&docs);
		return -1;
	}
	if (docs.n != 1 || !docs.docs[0] || docs.docs[0]->kind != GB_Y_MAP) {
		gb_diag_add(d, file, 1, 1, "", "expected one JSON object");
		gb_ydocs_free(&docs);
		return -1;
	}
	root = docs.docs[0];
	if (gb_ydec_map(&c, root, "", top) != 0) {
		gb_ydocs_free(&docs);
		return -1;
	}
	delta_init(&dl);
	for (size_t i = 0; i < root->n; i++)
		rc |= dec_runtime_key(&c, root->keys[i]->str, root->items[i],
		                      &dl);
	if (rc == 0)
		delta_apply(sc, &dl);
	delta_free(&dl);
	gb_ydocs_free(&docs);
	return rc ? -1 : 0;
}
