/* gpu_models.c -- the canonical GPU model names specs may ask for, the
 * spellings users write for them, and their memory per GPU. */
#include <ctype.h>
#include <string.h>

#include "spec.h"

typedef struct gpu_model {
	const char *name;   /* canonical */
	int memory_gb;      /* per GPU */
	const char *vendor;
	const char *aliases[6]; /* normalised spellings (see normalise) */
} gpu_model;

/* Memory figures are the vendors' nominal sizes per GPU. */
static const gpu_model models[] = {
	{"B200", 192, "nvidia", {"B200-192GB", "B200-SXM", NULL}},
	{"H200", 141, "nvidia", {"H200-141GB", "H200-SXM", NULL}},
	{"GH200", 96, "nvidia", {"GH200-96GB", "GH200-480GB", NULL}},
	{"H100", 80, "nvidia",
	 {"H100-80GB", "H100-SXM", "H100-SXM5", "H100-PCIE", NULL}},
	{"A100-80GB", 80, "nvidia",
	 {"A100-80G", "A100-SXM4-80GB", "A10080GB", NULL}},
	{"A100", 40, "nvidia",
	 {"A100-40GB", "A100-40G", "A100-SXM4-40GB", "A100-PCIE-40GB", NULL}},
	{"L40S", 48, "nvidia", {"L40S-48GB", NULL}},
	{"L40", 48, "nvidia", {"L40-48GB", NULL}},
	{"L4", 24, "nvidia", {"L4-24GB", NULL}},
	{"A10G", 24, "nvidia", {"A10G-24GB", NULL}},
	{"A10", 24, "nvidia", {"A10-24GB", NULL}},
	{"T4", 16, "nvidia", {"T4-16GB", "TESLA-T4", NULL}},
	{"V100", 16, "nvidia", {"V100-16GB", "TESLA-V100", NULL}},
	{"V100-32GB", 32, "nvidia", {"V100-32G", NULL}},
	{"RTX-A6000", 48, "nvidia", {"A6000", "RTXA6000", NULL}},
	{"RTX6000", 24, "nvidia",
	 {"RTX-6000", "QUADRO-RTX-6000", "QUADRO-RTX6000", NULL}},
	{"MI300X", 192, "amd", {"MI300X-192GB", "INSTINCT-MI300X", NULL}},
	{"MI250X", 128, "amd", {"MI250X-128GB", "INSTINCT-MI250X", NULL}},
};

/* Upper case, '_' and ' ' as '-', without an "NVIDIA-"/"AMD-" prefix. */
static void normalise(const char *s, char *out, size_t cap)
{
	size_t o = 0;
	for (; *s && o + 1 < cap; s++) {
		char c = *s;
		if (c == '_' || c == ' ')
			c = '-';
		out[o++] = (char)toupper((unsigned char)c);
	}
	out[o] = '\0';
	if (strncmp(out, "NVIDIA-", 7) == 0)
		memmove(out, out + 7, strlen(out + 7) + 1);
	else if (strncmp(out, "AMD-", 4) == 0)
		memmove(out, out + 4, strlen(out + 4) + 1);
}

const char *gb_gpu_canonical(const char *s)
{
	char n[64];
	if (!s || strlen(s) >= sizeof(n))
		return NULL;
	normalise(s, n, sizeof(n));
	for (size_t i = 0; i < GB_ARRAY_LEN(models); i++) {
		if (strcmp(models[i].name, n) == 0)
			return models[i].name;
		for (size_t k = 0; models[i].aliases[k]; k++)
			if (strcmp(models[i].aliases[k], n) == 0)
				return models[i].name;
	}
	return NULL;
}

int gb_gpu_memory_gb(const char *canonical)
{
	for (size_t i = 0; i < GB_ARRAY_LEN(models); i++)
		if (strcmp(models[i].name, canonical) == 0)
			return models[i].memory_gb;
	return 0;
}

size_t gb_gpu_model_count(void)
{
	return GB_ARRAY_LEN(models);
}

const char *gb_gpu_model_at(size_t i)
{
	return i < GB_ARRAY_LEN(models) ? models[i].name : NULL;
}

const char *gb_gpu_suggest(const char *s)
{
	const char *names[GB_ARRAY_LEN(models) + 1];
	char n[64];
	if (!s || strlen(s) >= sizeof(n))
		return NULL;
	normalise(s, n, sizeof(n));
	for (size_t i = 0; i < GB_ARRAY_LEN(models); i++)
		names[i] = models[i].name;
	names[GB_ARRAY_LEN(models)] = NULL;
	return gb_nearest(n, names);
}
