/* onprem_gpu.c -- GPU model names, device-name matching and MIG profile
 * facts for the on-prem driver.
 *
 * Canonical names and nominal memory match the core's table (core
 * cannot be linked into a driver, so the facts are repeated here).  MIG
 * profiles are NVIDIA's, from the "Supported MIG Profiles" tables of the
 * NVIDIA Multi-Instance GPU User Guide: every MIG-capable GPU listed has
 * 7 compute slices; `max_per_gpu` is the "Number of Instances Available"
 * column. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "drvc_mem.h"
#include "onprem.h"

static const onprem_mig_profile mig_a100_40[] = {
	{"1g.5gb", 1, 5, 7},   {"1g.10gb", 1, 10, 4}, {"2g.10gb", 2, 10, 3},
	{"3g.20gb", 3, 20, 2}, {"4g.20gb", 4, 20, 1}, {"7g.40gb", 7, 40, 1},
	{NULL, 0, 0, 0},
};
/* A100 80GB and H100 80GB share the profile names and counts. */
static const onprem_mig_profile mig_80[] = {
	{"1g.10gb", 1, 10, 7}, {"1g.20gb", 1, 20, 4}, {"2g.20gb", 2, 20, 3},
	{"3g.40gb", 3, 40, 2}, {"4g.40gb", 4, 40, 1}, {"7g.80gb", 7, 80, 1},
	{NULL, 0, 0, 0},
};
static const onprem_mig_profile mig_h200[] = {
	{"1g.18gb", 1, 18, 7}, {"1g.35gb", 1, 35, 4}, {"2g.35gb", 2, 35, 3},
	{"3g.71gb", 3, 71, 2}, {"4g.71gb", 4, 71, 1}, {"7g.141gb", 7, 141, 1},
	{NULL, 0, 0, 0},
};

/* Aliases are normalised spellings (upper case, '-' for '_' and ' ',
 * without an NVIDIA-/AMD- prefix). */
static const onprem_gpu_model models[] = {
	{"B200", 192, {"B200-192GB", "B200-SXM", NULL}, NULL},
	{"H200", 141, {"H200-141GB", "H200-SXM", NULL}, mig_h200},
	{"H100", 80, {"H100-80GB", "H100-SXM", "H100-SXM5", "H100-PCIE", NULL},
	 mig_80},
	{"A100-80GB", 80, {"A100-80G", "A100-SXM4-80GB", "A10080GB", NULL},
	 mig_80},
	{"A100", 40,
	 {"A100-40GB", "A100-40G", "A100-SXM4-40GB", "A100-PCIE-40GB", NULL},
	 mig_a100_40},
	{"L40S", 48, {"L40S-48GB", NULL}, NULL},
	{"L40", 48, {"L40-48GB", NULL}, NULL},
	{"L4", 24, {"L4-24GB", NULL}, NULL},
	{"A10G", 24, {"A10G-24GB", NULL}, NULL},
	{"A10", 24, {"A10-24GB", NULL}, NULL},
	{"T4", 16, {"T4-16GB", "TESLA-T4", NULL}, NULL},
	{"V100", 16, {"V100-16GB", "TESLA-V100", NULL}, NULL},
	{"V100-32GB", 32, {"V100-32G", NULL}, NULL},
	{"RTX-A6000", 48, {"A6000", "RTXA6000", NULL}, NULL},
	{"MI300X", 192, {"MI300X-192GB", "INSTINCT-MI300X", NULL}, NULL},
	{"MI250X", 128, {"MI250X-128GB", "INSTINCT-MI250X", NULL}, NULL},
};
#define NMODELS (sizeof(models) / sizeof(models[0]))

static const char *const model_names[] = {
	"B200", "H200", "H100", "A100-80GB", "A100", "L40S", "L40", "L4",
	"A10G", "A10", "T4", "V100", "V100-32GB", "RTX-A6000", "MI300X",
	"MI250X", NULL,
};

const char *const *onprem_gpu_names(void)
{
	return model_names;
}

static void normalise(const char *s, char *out, size_t cap)
{
	size_t o = 0;
	for (; *s && o + 1 < cap; s++) {
		char ch = *s;
		if (ch == '_' || ch == ' ')
			ch = '-';
		out[o++] = (char)toupper((unsigned char)ch);
	}
	out[o] = '\0';
	if (strncmp(out, "NVIDIA-", 7) == 0)
		memmove(out, out + 7, strlen(out + 7) + 1);
	else if (strncmp(out, "AMD-", 4) == 0)
		memmove(out, out + 4, strlen(out + 4) + 1);
}

const onprem_gpu_model *onprem_gpu_lookup(const char *name)
{
	char n[64];
	if (!name || strlen(name) >= sizeof(n))
		return NULL;
	normalise(name, n, sizeof(n));
	for (size_t i = 0; i < NMODELS; i++) {
		if (strcmp(models[i].name, n) == 0)
			return &models[i];
		for (size_t k = 0; models[i].aliases[k]; k++)
			if (strcmp(models[i].aliases[k], n) == 0)
				return &models[i];
	}
	return NULL;
}

static const onprem_gpu_model *by_name(const char *canonical)
{
	for (size_t i = 0; i < NMODELS; i++)
		if (strcmp(models[i].name, canonical) == 0)
			return &models[i];
	return NULL;
}

/* 1 when `tok` is one of the upper-cased alphanumeric runs of s. */
static int has_token(const char *s, const char *tok)
{
	size_t tl = strlen(tok);
	const char *p = s;
	while (*p) {
		const char *start;
		size_t len = 0, i;
		while (*p && !isalnum((unsigned char)*p))
			p++;
		start = p;
		while (p[len] && isalnum((unsigned char)p[len]))
			len++;
		p += len;
		if (len != tl)
			continue;
		for (i = 0; i < len; i++)
			if (toupper((unsigned char)start[i]) != tok[i])
				break;
		if (i == len)
			return 1;
	}
	return 0;
}

const onprem_gpu_model *onprem_gpu_from_device(const char *device,
                                               int64_t memory_mib)
{
	/* Ordered so that "A10" does not take "A100" (whole tokens only)
	 * and memory tells the 40/80 GB and 16/32 GB variants apart. */
	if (!device)
		return NULL;
	if (has_token(device, "B200"))
		return by_name("B200");
	if (has_token(device, "H200"))
		return by_name("H200");
	if (has_token(device, "H100"))
		return by_name("H100");
	if (has_token(device, "A100"))
		return by_name(memory_mib > 60 * 1024 || has_token(device, "80GB")
		                       ? "A100-80GB" : "A100");
	if (has_token(device, "L40S"))
		return by_name("L40S");
	if (has_token(device, "L40"))
		return by_name("L40");
	if (has_token(device, "L4"))
		return by_name("L4");
	if (has_token(device, "A10G"))
		return by_name("A10G");
	if (has_token(device, "A10"))
		return by_name("A10");
	if (has_token(device, "T4"))
		return by_name("T4");
	if (has_token(device, "V100") || has_token(device, "V100S"))
		return by_name(memory_mib > 20 * 1024 || has_token(device, "32GB")
		                       ? "V100-32GB" : "V100");
	if (has_token(device, "A6000"))
		return by_name("RTX-A6000");
	if (has_token(device, "MI300X"))
		return by_name("MI300X");
	if (has_token(device, "MI250X"))
		return by_name("MI250X");
	return NULL;
}

const onprem_mig_profile *onprem_mig_find(const onprem_gpu_model *m,
                                          const char *name)
{
	if (!m || !m->mig || !name)
		return NULL;
	for (const onprem_mig_profile *p = m->mig; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

int onprem_mig_syntax(const char *s)
{
	/* <1-7>g.<digits>gb */
	if (!s || s[0] < '1' || s[0] > '7' || s[1] != 'g' || s[2] != '.')
		return 0;
	s += 3;
	if (!isdigit((unsigned char)*s))
		return 0;
	while (isdigit((unsigned char)*s))
		s++;
	return strcmp(s, "gb") == 0;
}

/* Optimal string alignment distance (a swap of neighbours is one edit),
 * case-insensitive; strings longer than 64 bytes are "far". */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), res;
	size_t *d;
	if (la > 64 || lb > 64)
		return la > lb ? la : lb;
	d = drvc_xmalloc((la + 1) * (lb + 1) * sizeof(*d));
#define D(i, j) d[(i) * (lb + 1) + (j)]
	for (size_t i = 0; i <= la; i++)
		D(i, 0) = i;
	for (size_t j = 0; j <= lb; j++)
		D(0, j) = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			int ai = tolower((unsigned char)a[i - 1]);
			int bj = tolower((unsigned char)b[j - 1]);
			size_t best = D(i - 1, j - 1) + (ai != bj);
			if (D(i - 1, j) + 1 < best)
				best = D(i - 1, j) + 1;
			if (D(i, j - 1) + 1 < best)
				best = D(i, j - 1) + 1;
			if (i > 1 && j > 1 &&
			    ai == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == bj &&
			    D(i - 2, j - 2) + 1 < best)
				best = D(i - 2, j - 2) + 1;
			D(i, j) = best;
		}
	}
	res = D(la, lb);
#undef D
	free(d);
	return res;
}

const char *onprem_nearest(const char *s, const char *const *cands)
{
	const char *best = NULL;
	size_t bestd = (size_t)-1, len = strlen(s);
	size_t limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
	for (size_t i = 0; cands[i]; i++) {
		size_t dd = distance(s, cands[i]);
		if (dd < bestd) {
			bestd = dd;
			best = cands[i];
		}
	}
	return bestd <= limit ? best : NULL;
}

void onprem_strv_push(onprem_strv *s, const char *str)
{
	s->v = drvc_xrealloc(s->v, (s->n + 2) * sizeof(char *));
	s->v[s->n++] = drvc_xstrdup(str);
	s->v[s->n] = NULL;
}

void onprem_strv_free(onprem_strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int onprem_strv_has(const onprem_strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], str) == 0)
			return 1;
	return 0;
}
