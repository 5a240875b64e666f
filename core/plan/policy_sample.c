/*
 * policy_sample.c -- the sample offers: a fixed handful of offers (three
 * clouds and on-prem, spot and on-demand, whole GPUs and a MIG slice,
 * with and without the probe's bench) that policy tests reach as
 * sample_offers() and `gpubroker policy check --sample` runs a policy
 * on, through the same evaluation a plan uses.
 *
 * The cloud figures are rows of the shipped catalogs (AWS and GCP of
 * 2024-12/2025-01, Azure of 2024-06: see each driver's data/SOURCES.md);
 * the on-prem ones are an example node of drivers/onprem/README.md.
 * They are examples to exercise a policy with, not prices to plan with.
 */
#include "policy.h"
#include "policy_int.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "diag.h"
#include "regions.h"
#include "spec.h"

#define SAMPLE_AT 1733011200 /* 2024-12-01T00:00:00Z */

typedef struct sample {
	const char *cloud;
	gb_offer o;
} sample;

static const sample samples[] = {
	{"aws", {"us-east-1", "us-east-1a", "p5.48xlarge", "H100", 8, 80, 192,
	         2048, GB_CAPACITY_ON_DEMAND, 98.32, "sample", SAMPLE_AT, NULL,
	         NULL, 0}},
	{"aws", {"us-east-1", "us-east-1a", "p5.48xlarge", "H100", 8, 80, 192,
	         2048, GB_CAPACITY_SPOT, 20.9934, "sample", SAMPLE_AT, NULL,
	         NULL, 0}},
	{"aws", {"eu-central-1", "eu-central-1a", "p4d.24xlarge", "A100", 8,
	         40, 96, 1152, GB_CAPACITY_ON_DEMAND, 40.94475, "sample",
	         SAMPLE_AT, NULL, NULL, 0}},
	{"gcp", {"europe-west4", "europe-west4-b", "a3-highgpu-8g", "H100", 8,
	         80, 208, 1872, GB_CAPACITY_SPOT, 20.1192, "sample", SAMPLE_AT,
	         NULL, NULL, 0}},
	{"gcp", {"us-central1", "us-central1-a", "g2-standard-4", "L4", 1, 24,
	         4, 16, GB_CAPACITY_SPOT, 0.28184, "sample", SAMPLE_AT, NULL,
	         NULL, 0}},
	{"azure", {"westeurope", "", "Standard_NC24ads_A100_v4", "A100-80GB", 1,
	           80, 24, 220, GB_CAPACITY_ON_DEMAND, 4.5927, "sample",
	           SAMPLE_AT, NULL, NULL, 0}},
	{"onprem", {"lab", "", "lab-4xa100", "A100-80GB", 4, 80, 64, 512,
	            GB_CAPACITY_ON_DEMAND, 8.0, "sample", SAMPLE_AT,
	            "{\"source\": \"gpuprobe\", \"per\": \"gpu\", "
	            "\"nodes_free\": 2, \"nodes_measured\": 2, "
	            "\"probe_age_s\": 3600, \"fp32_tflops\": 18.7, "
	            "\"fp16_tflops\": 250.3, \"bf16_tflops\": 249.8, "
	            "\"d2d_gbps\": 1690, \"h2d_gbps\": 24.0, "
	            "\"d2h_gbps\": 24.9}",
	            "nvlink", 2}},
	{"onprem", {"lab", "", "lab-4xa100-mig-1g.10gb", "A100-80GB", 1, 10, 0,
	            0, GB_CAPACITY_ON_DEMAND, 0.29, "sample", SAMPLE_AT,
	            "{\"source\": \"gpuprobe\", \"per\": \"gpu\", "
	            "\"nodes_free\": 2, \"nodes_measured\": 2, "
	            "\"probe_age_s\": 3600, \"fp32_tflops\": 2.67, "
	            "\"fp16_tflops\": 35.76, \"bf16_tflops\": 35.69, "
	            "\"d2d_gbps\": 241.43, \"h2d_gbps\": 24.0, "
	            "\"d2h_gbps\": 24.9, \"mig_profile\": \"1g.10gb\", "
	            "\"slice_fraction\": 0.1429, \"slices_free\": 14}",
	            "nvlink,mig", 14}},
};
#define NSAMPLES (sizeof(samples) / sizeof(samples[0]))

/* The on-prem samples' site, as an inventory's `sites:` entry registers
 * one (examples/onprem-inventory.yaml's iad-lab), so gb.region(offer)
 * answers for them as it does in a plan.  Kept out of the process's
 * region registry: only the sample offers point at it. */
static const gb_region_info lab_site = {
	"onprem", "lab", "Sample lab (Ashburn)", "US", "US", 39.04, -77.49,
	"hipaa", 310, "sample site (PJM grid average)"};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static gb_catalog *cat; /* kept for the process */
static const gb_coffer *offers[NSAMPLES];

static void build(void)
{
	cat = gb_catalog_new();
	for (size_t i = 0; i < NSAMPLES; i++) {
		offers[i] = gb_catalog_add(cat, samples[i].cloud, &samples[i].o);
		/* the catalog's own offer (this private catalog's) */
		if (!offers[i]->rinfo && strcmp(samples[i].cloud, "onprem") == 0)
			((gb_coffer *)(uintptr_t)offers[i])->rinfo = &lab_site;
	}
}

const gb_coffer *const *gb_policy_sample_offers(size_t *n)
{
	pthread_once(&once, build);
	*n = NSAMPLES;
	return offers;
}

/* The pool whose req the samples are evaluated with. */
static const char sample_pool[] =
	"pool:\n"
	"  name: sample\n"
	"  gpu: {model: H100}\n";

int gb_policy_sample_run(const char *path, const gb_policy_limits *lim,
                         gb_policy_sample_report *out, char *err,
                         size_t errcap)
{
	gb_strv none = {0}, pool = {0};
	gb_policy_set *ps = NULL;
	gb_spec_set specs;
	gb_diags d;
	size_t n;
	const gb_coffer *const *v = gb_policy_sample_offers(&n);
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&specs, 0, sizeof(specs));
	memset(&d, 0, sizeof(d));
	gb_strv_push(&pool, path);
	if (gb_policy_set_new(&ps, &none, &pool, &none, lim, err, errcap) != 0)
		goto out;
	if (gb_spec_load_buf("(sample pool)", sample_pool, strlen(sample_pool),
	                     NULL, &specs, &d) != 0 || specs.n != 1) {
		char *why = gb_diags_str(&d);
		snprintf(err, errcap, "the sample pool does not load: %s", why);
		free(why);
		goto out;
	}
	gb_policy_lock(ps);
	if (gb_policy_set_request(ps, &specs.pools[0], NULL, err, errcap)) {
		gb_policy_unlock(ps);
		goto out;
	}
	out->has = gb_policy_has(ps, 0);
	out->rows = gb_xcalloc(n, sizeof(*out->rows));
	out->n = n;
	/* one offer at a time, so an error is that offer's alone */
	for (size_t i = 0; i < n; i++) {
		gb_policy_sample_row *r = &out->rows[i];
		gb_policy_result res;
		char msg[1024];
		size_t nl;
		const char *const *logs;
		r->offer = v[i];
		gb_obj_offer_label(v[i], r->label, sizeof(r->label));
		if (gb_policy_eval(ps, &v[i], 1, &res, msg, sizeof(msg)) != 0) {
			r->error = 1;
			r->reason = gb_xstrdup(msg);
		} else if (res.refused_by >= 0) {
			r->refused = 1;
			r->reason = gb_xstrdup(res.reason);
		} else {
			r->score = res.score;
		}
		logs = gb_policy_logs(ps, &nl);
		for (size_t k = 0; k < nl; k++)
			gb_strv_push(&r->logs, logs[k]);
	}
	gb_policy_unlock(ps);
	rc = 0;
out:
	gb_policy_set_free(ps);
	gb_spec_set_free(&specs);
	gb_diags_free(&d);
	gb_strv_free(&pool);
	return rc;
}

void gb_policy_sample_report_free(gb_policy_sample_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->rows[i].reason);
		gb_strv_free(&r->rows[i].logs);
	}
	free(r->rows);
	memset(r, 0, sizeof(*r));
}
