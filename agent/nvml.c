/* nvml.c -- the GPUs through NVML, loaded with dlopen() at run time: the
 * agent has no build dependency on the NVIDIA driver.  The functions and
 * their C signatures are NVML's (nvml.h); only the few used are
 * declared here. */
#include "agent.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef void *nvml_dev;
typedef struct {
	unsigned long long total, free, used;
} nvml_memory;
typedef struct {
	unsigned int gpu, memory;
} nvml_util;

/* NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC */
#define NVML_UNCORRECTED 1
#define NVML_VOLATILE 0

typedef int (*f_init)(void);
typedef int (*f_count)(unsigned int *);
typedef int (*f_handle)(unsigned int, nvml_dev *);
typedef int (*f_name)(nvml_dev, char *, unsigned int);
typedef int (*f_mem)(nvml_dev, nvml_memory *);
typedef int (*f_util)(nvml_dev, nvml_util *);
typedef int (*f_ecc)(nvml_dev, int, int, unsigned long long *);
typedef int (*f_shutdown)(void);

/* dlsym's void * to a function pointer, without the cast -Wpedantic
 * refuses */
static void *sym(void *h, const char *name)
{
	return dlsym(h, name);
}

#define LOAD(var, type, name)                                          \
	do {                                                           \
		void *p_ = sym(h, name);                               \
		if (!p_) {                                             \
			snprintf(err, cap, "%s has no %s", lib, name); \
			goto fail;                                     \
		}                                                      \
		memcpy(&var, &p_, sizeof(var));                        \
	} while (0)

int gba_nvml_read(const char *lib, gba_gpu *out, int max, char *err,
                  size_t cap)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	f_init init;
	f_count count;
	f_handle handle;
	f_name name;
	f_mem mem;
	f_util util;
	f_ecc ecc;
	f_shutdown shutdown;
	unsigned int n = 0;
	int rc;
	if (!h) {
		snprintf(err, cap, "cannot load NVML (%s): %s; is the NVIDIA "
		         "driver installed?", lib, dlerror());
		return -1;
	}
	LOAD(init, f_init, "nvmlInit_v2");
	LOAD(count, f_count, "nvmlDeviceGetCount_v2");
	LOAD(handle, f_handle, "nvmlDeviceGetHandleByIndex_v2");
	LOAD(name, f_name, "nvmlDeviceGetName");
	LOAD(mem, f_mem, "nvmlDeviceGetMemoryInfo");
	LOAD(util, f_util, "nvmlDeviceGetUtilizationRates");
	LOAD(ecc, f_ecc, "nvmlDeviceGetTotalEccErrors");
	LOAD(shutdown, f_shutdown, "nvmlShutdown");
	if ((rc = init()) != 0) {
		snprintf(err, cap, "nvmlInit_v2 failed (NVML error %d)", rc);
		goto fail;
	}
	if ((rc = count(&n)) != 0) {
		snprintf(err, cap, "nvmlDeviceGetCount_v2 failed (NVML error "
		         "%d)", rc);
		shutdown();
		goto fail;
	}
	if ((int)n > max)
		n = (unsigned)max;
	for (unsigned i = 0; i < n; i++) {
		nvml_dev d;
		nvml_memory m;
		nvml_util u;
		gba_gpu *g = &out[i];
		memset(g, 0, sizeof(*g));
		if (handle(i, &d) != 0) {
			snprintf(err, cap, "GPU %u: no NVML handle", i);
			shutdown();
			goto fail;
		}
		if (name(d, g->name, sizeof(g->name)) != 0)
			snprintf(g->name, sizeof(g->name), "unknown");
		if (mem(d, &m) == 0) {
			g->mem_total = m.total;
			g->mem_used = m.used;
		}
		if (util(d, &u) == 0)
			g->util_gpu = u.gpu;
		g->ecc_known = ecc(d, NVML_UNCORRECTED, NVML_VOLATILE,
		                   &g->ecc_errors) == 0;
	}
	shutdown();
	dlclose(h);
	return (int)n;
fail:
	dlclose(h);
	return -1;
}
