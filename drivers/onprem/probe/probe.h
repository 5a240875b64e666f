// probe.h -- what the files of gpuprobe share: options, results, the run
// state, and the functions one file offers the others.
//
//   gpuprobe.cu        kernels and every measurement (timing, budgets)
//   probe_main.cpp     main: arguments, GPU enumeration, order of the run
//   probe_options.cpp  command line and --config file
//   probe_inventory.cpp  device facts from the CUDA runtime and NVML
//   probe_health.cpp   thresholds and verdicts
//   probe_report.cpp   the JSON report, the no-GPU report, --self-test
//   probe_util.cpp     small helpers
//   probe_json.h, probe_datasheet.h, probe_dynlib.h  (see each file)
#ifndef GPUPROBE_PROBE_H
#define GPUPROBE_PROBE_H

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "probe_datasheet.h"
#include "probe_dynlib.h"

#define PROBE_VERSION "1.0.0"
#define PROBE_SCHEMA 1

enum ExitCode {
	EXIT_OK = 0,
	EXIT_UNHEALTHY = 1,
	EXIT_USAGE = 2,
	EXIT_NO_GPU = 3,
	EXIT_CUDA_ERROR = 4,
};

static const size_t MiB = size_t(1) << 20;

// ---------------------------------------------------------------- util
double mono_now();
std::string strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string cuda_version_str(int v);        // 12040 -> "12.4"; 0 -> ""
std::string cuda_err_text(cudaError_t e);   // "cudaErrorX (text)"
std::string utc_timestamp();                // "2025-01-31T12:00:00Z"

// A CUDA failure with the call that failed.
struct CudaErr {
	cudaError_t code = cudaSuccess;
	std::string where;
	bool failed() const { return code != cudaSuccess; }
	std::string text() const { return where + ": " + cuda_err_text(code); }
};

#define TRY(call)                                                   \
	do {                                                        \
		cudaError_t e_ = (call);                            \
		if (e_ != cudaSuccess)                              \
			return CudaErr{e_, #call};                  \
	} while (0)

// Errors that say "this build/GPU cannot do that", not "the GPU broke".
bool err_unsupported(cudaError_t e);

// RAII owners so that early returns never leak device memory or events.
struct DevMem {
	void *p = nullptr;
	DevMem() = default;
	DevMem(const DevMem &) = delete;
	DevMem &operator=(const DevMem &) = delete;
	~DevMem() { release(); }
	void release()
	{
		if (p)
			(void)cudaFree(p);
		p = nullptr;
	}
};

struct Event {
	cudaEvent_t e = nullptr;
	Event() = default;
	Event(const Event &) = delete;
	Event &operator=(const Event &) = delete;
	~Event()
	{
		if (e)
			(void)cudaEventDestroy(e);
	}
};

// Allocates up to `want` bytes of device memory, halving on out-of-memory
// down to `floor`; the size obtained is in *got.
CudaErr alloc_dev(DevMem &m, size_t want, size_t floor, size_t *got);

// ---------------------------------------------------------------- options
enum Thr { T_D2D, T_H2D, T_D2H, T_FP32, T_FP16, T_BF16, T_TEMP, T_COUNT };

struct ThrSpec {
	const char *key;   // config key and JSON name
	const char *flag;  // command-line flag
	const char *what;  // in failure messages
	const char *unit;
	bool is_max;       // upper bound (temperature) rather than lower
};
extern const ThrSpec kThr[T_COUNT];

enum ThrSource { SRC_NONE, SRC_CONFIG, SRC_FLAG };
enum TensorPref { TP_AUTO, TP_CUBLAS, TP_WMMA, TP_NONE };

struct Options {
	bool quick = false;
	bool pretty = true;
	bool help = false;
	bool version = false;
	bool self_test = false;
	std::vector<int> devices;  // empty: all
	std::string config;
	TensorPref tensor = TP_AUTO;
	double thr[T_COUNT] = {};
	int thr_src[T_COUNT] = {};
};

extern const char kUsage[];
// Prints the message and a hint to stderr; returns EXIT_USAGE.
int usage_error(const std::string &msg);
// Returns -1 on success, else the exit code to return.
int parse_args(int argc, char **argv, Options &o);
// Reads o.config (flags already parsed win).  "" or an error message.
std::string load_config(Options &o);

// ---------------------------------------------------------------- results
struct Metric {
	bool ok = false;
	double v = 0;
	int samples = 0;
	std::string why = "not measured";  // when !ok
	void set(double value, int n)
	{
		ok = std::isfinite(value) && value > 0;
		v = value;
		samples = n;
		why = ok ? "" : "measurement gave no finite positive value";
	}
};

struct ThrValue {
	bool active = false;
	double v = 0;
	std::string source;  // flag, config, datasheet, pcie, disabled
	std::string detail;  // e.g. "50% of 3350 GB/s data sheet (H100 SXM)"
};

struct GpuResult {
	int index = 0;  // CUDA device ordinal
	std::string name, uuid, pci_bus_id;
	int cc_major = 0, cc_minor = 0, sm_count = 0;
	long long mem_total_mib = 0, mem_free_mib = -1;
	int ecc = -1;  // 1/0, -1 unknown
	int mig = -1;  // 1/0, -1 unknown
	long long ecc_uncorrected = -1;
	bool nvml = false;
	nvmlDevice_t nvdev = nullptr;
	int pcie_gen = -1, pcie_width = -1, pcie_max_gen = -1, pcie_max_width = -1;
	int sm_mhz = -1, mem_mhz = -1, max_sm_mhz = -1;
	int temp_c = -1;
	double power_w = -1;

	Metric h2d, d2h, d2d, d2d_copy, fp32, fp16, bf16;
	std::string tensor_method = "none";  // fp16's method, else bf16's
	std::string fp16_via, bf16_via;      // "cublas", "wmma" or "" (not measured)
	size_t host_bytes = 0, d2d_bytes = 0;
	int gemm_n = 0;

	std::vector<std::string> notes, errors;
	bool fatal = false;  // a CUDA error that is not "unsupported"
	double elapsed_s = 0;

	const Datasheet *ds = nullptr;
	bool healthy = true;
	std::vector<std::string> failures;
	ThrValue thr[T_COUNT];
};

// ---------------------------------------------------------------- run state

// Sizes, sample counts and time caps of one run mode.
struct Plan {
	double target_s;    // whole-run time target (slices shrink to fit)
	size_t host_bytes;  // h2d / d2h transfer size
	size_t d2d_cap;     // d2d buffer size cap (each of src, dst)
	int gemm_n;         // cuBLAS GEMM m = n = k
	double kernel_ms;   // target duration of one FP32 / WMMA sample
	double cap_h2d, cap_d2h, cap_d2d, cap_fp32, cap_fp16, cap_bf16, cap_p2p;
	int max_copy_samples, max_kernel_samples;
};

// Splits what is left of the run's time target between the phases still to
// come; each phase gets at most its own cap.
struct Budget {
	double deadline = 0;
	int phases_left = 0;
	double take(double cap_s)
	{
		double rem = deadline - mono_now();
		double share = phases_left > 0 ? rem / phases_left : rem;
		if (phases_left > 0)
			phases_left--;
		return std::max(0.0, std::min(cap_s, share));
	}
	void skip(int n) { phases_left = std::max(0, phases_left - n); }
};

// Budget phases per GPU: h2d, d2h, d2d, fp32, fp16, bf16.
#define PHASES_PER_GPU 6

struct Probe {
	std::string started_at;  // UTC ISO-8601
	Options opt;
	Plan plan;
	Nvml nvml;
	Cublas cublas;
	Budget budget;
	void *host_buf = nullptr;  // pinned, portable; shared by all GPUs
	size_t host_buf_bytes = 0;
	bool host_buf_tried = false;
	std::string host_buf_err;
	std::vector<GpuResult> gpus;
	std::vector<std::vector<double>> p2p;      // GB/s, < 0: null
	std::vector<std::vector<int>> p2p_access;  // 1/0, -1: null
	std::vector<std::string> p2p_notes;
	bool p2p_fatal = false;
};

// ---------------------------------------------------------------- inventory
std::string proc_driver_version();  // "" when unknown
CudaErr inventory(Probe &P, GpuResult &g);
void sample_pcie(const Probe &P, GpuResult &g);
void sample_sensors(const Probe &P, GpuResult &g);

// ---------------------------------------------------------------- measure
void measure_gpu(Probe &P, GpuResult &g);
void measure_p2p(Probe &P);

// ---------------------------------------------------------------- health
void evaluate_health(const Probe &P, GpuResult &g);

// ---------------------------------------------------------------- report
// Verdicts, the JSON report on stdout, the exit code.
int finish(Probe &P, double t_start, int count, int rt_ver, int drv_ver,
           const std::string &driver_version);
// The {"error": ..., "gpus": 0} report; returns EXIT_NO_GPU.
int no_gpu(const Probe &P, cudaError_t e, int rt_ver, int drv_ver,
           const std::string &driver_version);
void synthetic_gpus(Probe &P);

#endif
