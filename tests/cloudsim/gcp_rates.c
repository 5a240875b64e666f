/*
 * gcp_rates.c -- the GCP catalog's whole-VM prices as the component rates
 * the Cloud Billing catalog publishes: per (family, region, usage) a
 * vCPU-hour "Instance Core" rate and a GiB-hour "Instance Ram" rate, per
 * (GPU model, region, usage) a GPU-hour rate, such that for every type
 *
 *     vcpus x core + ram_gb x ram + gpus x gpu  ==  the price cloudsim bills
 *
 * (up to rounding, see below).  How the rates are chosen, per region and
 * usage (OnDemand = the on-demand price, Preemptible = the spot price):
 *
 *  1. A family's core/RAM rates start from fixed illustrative defaults
 *     (Spot: SPOT_FACTOR of them), i.e. a host price h(t) per type.
 *  2. When two types of the family have the same GPU but a different
 *     host-per-GPU shape (g2-standard-4 has 4 vCPUs per L4, the larger G2
 *     types 12), the catalog determines the host price: the defaults are
 *     scaled by s and the GPU rate solved from the pair exactly.
 *  3. The scale is lowered where a type's GPUs would be left less than
 *     MIN_GPU_SHARE of its price (keeps every rate positive).
 *  4. A GPU rate is the least-squares fit over all types with that GPU in
 *     the region: exact when the types are proportional (N1, A2 and the
 *     G2 types above 4 vCPUs are, up to the catalog's 5-decimal rounding).
 *
 * Rates are rounded to nanos (the API's unit), host first, so the GPU
 * rate absorbs the host rounding.  With the shipped catalog the sum is
 * off the billed price by at most 1.3e-5 of it for G2 (Spot
 * g2-standard-4 in a few regions: the catalog's 5-decimal prices of
 * g2-standard-{24,48,96} are not exactly proportional), 3.4e-6 for A2
 * (1g vs 8g, the same rounding) and ~1e-16 for N1 and A3.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gce.h"

#define SPOT_FACTOR 0.3
#define MIN_GPU_SHARE 0.1

typedef struct family {
	const char *machine;   /* machine-type prefix, most specific first */
	const char *name;      /* "<name> Instance Core|Ram" */
	double core, ram;      /* default OnDemand USD per vCPU-h, per GiB-h */
	const char *gpu;       /* GPU SKU name when the family has its own */
} family;

static const family families[] = {
	{"n1-", "N1 Predefined", 0.031611, 0.004237, NULL},
	{"a2-", "A2", 0.031611, 0.004237, NULL},
	{"a3-megagpu", "A3 Mega", 0.0295, 0.00396, "Nvidia H100 80GB Mega GPU"},
	{"a3-ultragpu", "A3 Ultra", 0.0295, 0.00396, NULL},
	{"a3-", "A3", 0.0295, 0.00396, NULL},
	{"g2-", "G2", 0.02186, 0.00256, NULL},
};

/* Catalog GPU model -> GPU SKU name. */
static const char *const gpu_skus[][2] = {
	{"T4", "Nvidia Tesla T4 GPU"},       {"V100", "Nvidia Tesla V100 GPU"},
	{"P100", "Nvidia Tesla P100 GPU"},   {"P4", "Nvidia Tesla P4 GPU"},
	{"L4", "Nvidia L4 GPU"},             {"A100", "Nvidia Tesla A100 GPU"},
	{"A100-80GB", "Nvidia Tesla A100 80GB GPU"},
	{"H100", "Nvidia H100 80GB GPU"},    {"H200", "Nvidia H200 141GB GPU"},
};

/* One catalog type sold in the region being priced. */
typedef struct member {
	const sim_ctype *t;
	const family *f;
	const char *gpu;
	double price;
	double host;           /* at the family's current rates */
} member;

typedef struct fam_rates {
	const family *f;
	double core, ram;
} fam_rates;

static const family *family_of(const sim_ctype *t)
{
	const char *m = t->machine ? t->machine : t->type;
	for (size_t i = 0; i < GB_ARRAY_LEN(families); i++)
		if (strncmp(m, families[i].machine,
		            strlen(families[i].machine)) == 0)
			return &families[i];
	return NULL;
}

static const char *gpu_sku_of(const sim_ctype *t, const family *f)
{
	if (f->gpu)
		return f->gpu;
	for (size_t i = 0; i < GB_ARRAY_LEN(gpu_skus); i++)
		if (t->gpu && strcmp(t->gpu, gpu_skus[i][0]) == 0)
			return gpu_skus[i][1];
	return NULL;
}

static double nano_round(double v)
{
	double r = floor(v * 1e9 + 0.5) / 1e9;
	return r < 1e-9 ? 1e-9 : r;
}

static void push(gcp_rate **v, size_t *n, int kind, const char *name,
                 const char *region, int spot, double price)
{
	gcp_rate *r;
	*v = gb_xrealloc(*v, (*n + 1) * sizeof(**v));
	r = &(*v)[(*n)++];
	r->kind = kind;
	r->name = name;
	r->region = region;
	r->spot = spot;
	r->price = price;
}

/* Members of the catalog sold in region at the usage; *n of them. */
static member *members(const sim_catalog *cat, const char *region, int spot,
                       size_t *n)
{
	member *v = gb_xcalloc(cat->ntypes + 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; i < cat->ntypes; i++) {
		const sim_ctype *t = &cat->types[i];
		const sim_creg *r = sim_ctype_region(t, region);
		const family *f = family_of(t);
		const char *gpu = f ? gpu_sku_of(t, f) : NULL;
		double p = r ? (spot ? r->spot : r->on_demand) : -1;
		if (!gpu || p <= 0 || t->gpus <= 0)
			continue;
		v[*n].t = t;
		v[*n].f = f;
		v[*n].gpu = gpu;
		v[*n].price = p;
		(*n)++;
	}
	return v;
}

/* Scale of the family's default host rates (step 2 and 3 above). */
static double host_scale(member *m, size_t n, const family *f)
{
	double s = 1;
	int solved = 0;
	for (size_t i = 0; i < n && !solved; i++) {
		for (size_t j = i + 1; j < n && !solved; j++) {
			const member *a = &m[i], *b = &m[j];
			double det, sc, x;
			if (a->f != f || b->f != f || strcmp(a->gpu, b->gpu) != 0)
				continue;
			det = a->host * b->t->gpus - b->host * a->t->gpus;
			if (fabs(det) < 1e-9 * a->host * b->t->gpus)
				continue;  /* proportional: no information */
			sc = (a->price * b->t->gpus - b->price * a->t->gpus) / det;
			x = (a->host * b->price - b->host * a->price) / det;
			if (sc > 0 && x > 0) {
				s = sc;
				solved = 1;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		if (m[i].f == f && m[i].price - s * m[i].host < MIN_GPU_SHARE *
		                                                   m[i].price)
			s = (1 - MIN_GPU_SHARE) * m[i].price / m[i].host;
	return s;
}

/* The rates of one (region, usage), appended to *v. */
static void price_region(const sim_catalog *cat, const char *region, int spot,
                         gcp_rate **v, size_t *nv)
{
	size_t n, nf = 0;
	member *m = members(cat, region, spot, &n);
	fam_rates *fr = gb_xcalloc(GB_ARRAY_LEN(families), sizeof(*fr));
	double k = spot ? SPOT_FACTOR : 1;
	for (size_t i = 0; i < n; i++)
		m[i].host = k * (m[i].t->vcpus * m[i].f->core +
		                 m[i].t->ram_gb * m[i].f->ram);
	for (size_t i = 0; i < n; i++) {
		const family *f = m[i].f;
		size_t j;
		double s;
		for (j = 0; j < nf && fr[j].f != f; j++)
			;
		if (j < nf)
			continue;
		s = host_scale(m, n, f);
		fr[nf].f = f;
		fr[nf].core = nano_round(s * k * f->core);
		fr[nf].ram = nano_round(s * k * f->ram);
		push(v, nv, GCP_RATE_CORE, f->name, region, spot, fr[nf].core);
		push(v, nv, GCP_RATE_RAM, f->name, region, spot, fr[nf].ram);
		nf++;
	}
	for (size_t i = 0; i < n; i++) {
		double num = 0, den = 0;
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(m[j].gpu, m[i].gpu) == 0;
		if (seen)
			continue;
		for (size_t j = 0; j < n; j++) {
			size_t q;
			if (strcmp(m[j].gpu, m[i].gpu) != 0)
				continue;
			for (q = 0; fr[q].f != m[j].f; q++)
				;
			num += m[j].t->gpus * (m[j].price - m[j].t->vcpus * fr[q].core -
			                       m[j].t->ram_gb * fr[q].ram);
			den += (double)m[j].t->gpus * m[j].t->gpus;
		}
		push(v, nv, GCP_RATE_GPU, m[i].gpu, region, spot,
		     nano_round(num / den));
	}
	free(fr);
	free(m);
}

size_t gcp_rates_build(const sim_catalog *cat, gcp_rate **out)
{
	gcp_rate *v = NULL;
	size_t n = 0;
	for (size_t i = 0; i < cat->ntypes; i++) {
		for (size_t j = 0; j < cat->types[i].nregs; j++) {
			const char *region = cat->types[i].regs[j].region;
			int seen = 0;
			/* each region once, in order of first appearance */
			for (size_t a = 0; a <= i && !seen; a++)
				for (size_t b = 0; b < cat->types[a].nregs && !seen; b++) {
					if (a == i && b == j)
						break;
					seen = strcmp(cat->types[a].regs[b].region,
					              region) == 0;
				}
			if (seen)
				continue;
			price_region(cat, region, 0, &v, &n);
			price_region(cat, region, 1, &v, &n);
		}
	}
	*out = v;
	return n;
}
