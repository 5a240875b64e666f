// probe_dynlib.h -- NVML and cuBLAS, loaded with dlopen at run time.
//
// gpuprobe links only the static CUDA runtime, so it starts on a node that
// has nothing but the NVIDIA driver.  NVML (part of the driver) and cuBLAS
// (part of a toolkit or a framework install) are optional: when they are
// missing the probe reports the affected fields as null / falls back to its
// own kernels.  Only the few entry points used are declared here, with the
// signatures documented in the NVML and cuBLAS API references; enums are
// passed as int (C enums have int size on the ABIs we run on).
#ifndef GPUPROBE_DYNLIB_H
#define GPUPROBE_DYNLIB_H

#include <dlfcn.h>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>

// ---------------------------------------------------------------- NVML
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlReturn_t;

enum {
	NVML_SUCCESS_ = 0,
	NVML_FEATURE_ENABLED_ = 1,      // nvmlEnableState_t
	NVML_DEVICE_MIG_ENABLE_ = 1,
	NVML_CLOCK_SM_ = 1,             // nvmlClockType_t
	NVML_CLOCK_MEM_ = 2,
	NVML_TEMPERATURE_GPU_ = 0,      // nvmlTemperatureSensors_t
	NVML_MEMORY_ERROR_TYPE_UNCORRECTED_ = 1,  // nvmlMemoryErrorType_t
	NVML_VOLATILE_ECC_ = 0,         // nvmlEccCounterType_t
};

struct Nvml {
	void *lib = nullptr;
	bool ok = false;  // loaded and nvmlInit_v2 succeeded
	std::string why;  // why not ok

	nvmlReturn_t (*init)(void) = nullptr;
	nvmlReturn_t (*shutdown)(void) = nullptr;
	const char *(*error_string)(nvmlReturn_t) = nullptr;
	nvmlReturn_t (*driver_version)(char *, unsigned int) = nullptr;
	nvmlReturn_t (*by_pci)(const char *, nvmlDevice_t *) = nullptr;
	nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int *, int *) = nullptr;
	nvmlReturn_t (*ecc_total)(nvmlDevice_t, int, int, unsigned long long *) = nullptr;
	nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned int *, unsigned int *) = nullptr;
	nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned int *) = nullptr;
	nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned int *) = nullptr;
	nvmlReturn_t (*pcie_max_gen)(nvmlDevice_t, unsigned int *) = nullptr;
	nvmlReturn_t (*pcie_max_width)(nvmlDevice_t, unsigned int *) = nullptr;
	nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *) = nullptr;
	nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned int *) = nullptr;
	nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int *) = nullptr;
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *) = nullptr;

	template <typename F>
	void sym(F *fp, const char *name)
	{
		*fp = reinterpret_cast<F>(dlsym(lib, name));
	}

	// Loads libnvidia-ml and initialises it.  Never fails loudly: on any
	// problem ok stays false and why says what happened.
	void load()
	{
		const char *names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
		for (const char *n : names) {
			lib = dlopen(n, RTLD_NOW | RTLD_LOCAL);
			if (lib)
				break;
		}
		if (!lib) {
			why = "libnvidia-ml.so.1 not found";
			return;
		}
		sym(&init, "nvmlInit_v2");
		sym(&shutdown, "nvmlShutdown");
		sym(&error_string, "nvmlErrorString");
		sym(&driver_version, "nvmlSystemGetDriverVersion");
		sym(&by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
		sym(&ecc_mode, "nvmlDeviceGetEccMode");
		sym(&ecc_total, "nvmlDeviceGetTotalEccErrors");
		sym(&mig_mode, "nvmlDeviceGetMigMode");
		sym(&pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
		sym(&pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
		sym(&pcie_max_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
		sym(&pcie_max_width, "nvmlDeviceGetMaxPcieLinkWidth");
		sym(&clock, "nvmlDeviceGetClockInfo");
		sym(&max_clock, "nvmlDeviceGetMaxClockInfo");
		sym(&temperature, "nvmlDeviceGetTemperature");
		sym(&power, "nvmlDeviceGetPowerUsage");
		if (!init || !shutdown || !by_pci) {
			why = "libnvidia-ml lacks nvmlInit_v2/nvmlDeviceGetHandleByPciBusId_v2";
			return;
		}
		nvmlReturn_t r = init();
		if (r != NVML_SUCCESS_) {
			why = std::string("nvmlInit_v2 failed: ") +
			      (error_string ? error_string(r) : "unknown error");
			return;
		}
		ok = true;
	}

	void unload()
	{
		if (ok)
			shutdown();
		ok = false;
		// The library stays mapped: unloading the driver's libraries at
		// exit buys nothing and has bitten other tools.
	}

	// Handle for a CUDA device, found by PCI bus id (NVML and CUDA number
	// devices differently, e.g. under CUDA_VISIBLE_DEVICES).
	bool handle(const char *pci_bus_id, nvmlDevice_t *dev) const
	{
		return ok && by_pci(pci_bus_id, dev) == NVML_SUCCESS_;
	}
};

// ---------------------------------------------------------------- cuBLAS
typedef struct cublasContext *cublasHandle_t;
typedef int cublasStatus_t;

enum {
	CUBLAS_STATUS_SUCCESS_ = 0,
	CUBLAS_OP_N_ = 0,
	CUBLAS_COMPUTE_32F_ = 68,  // cublasComputeType_t (cuBLAS >= 11)
	CUBLAS_GEMM_DEFAULT_ = -1, // cublasGemmAlgo_t
	CUDA_R_16F_ = 2,           // cudaDataType
	CUDA_R_16BF_ = 14,
};

static inline const char *cublas_status_name(cublasStatus_t s)
{
	switch (s) {
	case 0: return "CUBLAS_STATUS_SUCCESS";
	case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
	case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
	case 7: return "CUBLAS_STATUS_INVALID_VALUE";
	case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
	case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
	case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
	case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
	case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
	case 16: return "CUBLAS_STATUS_LICENSE_ERROR";
	default: return "CUBLAS_STATUS_(unknown)";
	}
}

struct Cublas {
	void *lib = nullptr;
	std::string soname;  // what was loaded (a name or a path)
	std::string why;     // why nothing could be loaded
	size_t next = 0;     // next candidate to try

	cublasStatus_t (*create)(cublasHandle_t *) = nullptr;
	cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
	cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t) = nullptr;
	cublasStatus_t (*gemm_ex)(cublasHandle_t, int, int, int, int, int,
	                          const void *, const void *, int, int,
	                          const void *, int, int, const void *, void *,
	                          int, int, int, int) = nullptr;

	// Candidates in order: $GPUPROBE_CUBLAS, then the sonames of cuBLAS
	// 13/12/11 on the loader path, then the default toolkit location.
	// cuBLAS < 11 used another GemmEx compute-type enum and is not tried.
	static std::vector<std::string> candidates()
	{
		std::vector<std::string> c;
		const char *env = getenv("GPUPROBE_CUBLAS");
		if (env && *env)
			c.push_back(env);
		const char *majors[] = {"13", "12", "11"};
		for (const char *m : majors)
			c.push_back(std::string("libcublas.so.") + m);
		c.push_back("libcublas.so");
		for (const char *m : majors)
			c.push_back(std::string("/usr/local/cuda/lib64/libcublas.so.") + m);
		return c;
	}

	template <typename F>
	void sym(F *fp, const char *name)
	{
		*fp = reinterpret_cast<F>(dlsym(lib, name));
	}

	// Loads the next candidate that resolves every symbol.  Returns false
	// when the list is exhausted.  A library that loaded but did not work
	// (see main) stays mapped: unloading a half-initialised cuBLAS is not
	// worth the risk.
	bool load_next()
	{
		std::vector<std::string> c = candidates();
		lib = nullptr;
		while (next < c.size()) {
			const std::string &n = c[next++];
			void *h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
			if (!h)
				continue;
			lib = h;
			sym(&create, "cublasCreate_v2");
			sym(&destroy, "cublasDestroy_v2");
			sym(&set_stream, "cublasSetStream_v2");
			sym(&gemm_ex, "cublasGemmEx");
			if (create && destroy && set_stream && gemm_ex) {
				soname = n;
				return true;
			}
			lib = nullptr;
		}
		soname.clear();
		if (why.empty())
			why = "no usable libcublas.so.{13,12,11} found (set GPUPROBE_CUBLAS=/path/to/libcublas.so.N)";
		return false;
	}

	bool loaded() const { return lib != nullptr; }
};

#endif
