/* fake_nvml.c -- a stand-in for libnvidia-ml.so.1 with NVML's C API
 * (the few functions gpubroker-agent calls), so the agent's real dlopen
 * path runs without a GPU.  The GPUs come from the file named by
 * $FAKE_NVML_FILE, read at every nvmlInit_v2, one GPU a line:
 *     NAME-WITHOUT-SPACES MEMORY_TOTAL_MIB MEMORY_USED_MIB UTIL_PERCENT
 * Built by the tests as $(BUILD)/tests/libnvidia-ml.so.1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MAX 16

typedef struct {
	unsigned long long total, free, used;
} fake_memory;
typedef struct {
	unsigned int gpu, memory;
} fake_util;

static struct {
	char name[96];
	unsigned long long total_mib, used_mib;
	unsigned util;
} gpus[FAKE_MAX];
static unsigned ngpus;

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned int *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev);
int nvmlDeviceGetName(void *dev, char *out, unsigned int len);
int nvmlDeviceGetMemoryInfo(void *dev, fake_memory *m);
int nvmlDeviceGetUtilizationRates(void *dev, fake_util *u);
int nvmlDeviceGetTotalEccErrors(void *dev, int type, int counter,
                                unsigned long long *n);

int nvmlInit_v2(void)
{
	const char *file = getenv("FAKE_NVML_FILE");
	FILE *f;
	char line[256];
	ngpus = 0;
	if (!file || !(f = fopen(file, "r")))
		return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
	while (ngpus < FAKE_MAX && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%95s %llu %llu %u", gpus[ngpus].name,
		           &gpus[ngpus].total_mib, &gpus[ngpus].used_mib,
		           &gpus[ngpus].util) == 4)
			ngpus++;
	}
	fclose(f);
	return 0;
}

int nvmlShutdown(void)
{
	return 0;
}

int nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = ngpus;
	return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev)
{
	if (i >= ngpus)
		return 2; /* NVML_ERROR_INVALID_ARGUMENT */
	*dev = &gpus[i];
	return 0;
}

static unsigned idx(void *dev)
{
	return (unsigned)(((char *)dev - (char *)gpus) / sizeof(gpus[0]));
}

int nvmlDeviceGetName(void *dev, char *out, unsigned int len)
{
	/* underscores in the file stand for spaces ("NVIDIA_H100") */
	snprintf(out, len, "%s", gpus[idx(dev)].name);
	for (char *p = out; *p; p++)
		if (*p == '_')
			*p = ' ';
	return 0;
}

int nvmlDeviceGetMemoryInfo(void *dev, fake_memory *m)
{
	unsigned i = idx(dev);
	m->total = gpus[i].total_mib << 20;
	m->used = gpus[i].used_mib << 20;
	m->free = m->total - m->used;
	return 0;
}

int nvmlDeviceGetUtilizationRates(void *dev, fake_util *u)
{
	u->gpu = gpus[idx(dev)].util;
	u->memory = 0;
	return 0;
}

int nvmlDeviceGetTotalEccErrors(void *dev, int type, int counter,
                                unsigned long long *n)
{
	(void)dev;
	(void)type;
	(void)counter;
	*n = 0;
	return 0;
}
