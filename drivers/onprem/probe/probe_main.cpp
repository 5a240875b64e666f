// probe_main.cpp -- gpuprobe's main: arguments, GPU enumeration, the order
// of the run, the exit code.  Overview of the program: gpuprobe.cu;
// usage, JSON schema, exit codes: README.md.
#include <cstdio>
#include <string>
#include <vector>

#include "probe.h"

// Default: <= ~15 s on one GPU (the phases below add up to ~3.4 s; the
// rest is context creation, NVML and cuBLAS loading).  The whole-run target
// is shared between GPUs, so nodes with many GPUs get shorter phases.
// Fields: target_s, host_bytes, d2d_cap, gemm_n, kernel_ms, time caps of
// h2d d2h d2d fp32 fp16 bf16 p2p (s), max copy / kernel samples.
static const Plan kDefaultPlan = {
	12.0, 256 * MiB, 1024 * MiB, 8192, 20.0,
	0.4, 0.4, 0.4, 0.6, 0.8, 0.8, 2.0, 30, 20,
};
// --quick: <= ~3 s on one GPU.
static const Plan kQuickPlan = {
	2.5, 64 * MiB, 256 * MiB, 4096, 5.0,
	0.08, 0.08, 0.1, 0.12, 0.15, 0.15, 0.3, 10, 8,
};

int main(int argc, char **argv)
{
	double t_start = mono_now();
	Probe P;
	P.started_at = utc_timestamp();
	int rc = parse_args(argc, argv, P.opt);
	if (rc >= 0)
		return rc;
	if (P.opt.help) {
		fputs(kUsage, stdout);
		return EXIT_OK;
	}
	if (P.opt.version) {
		printf("gpuprobe %s (JSON schema %d, built with CUDA %d.%d)\n", PROBE_VERSION,
		       PROBE_SCHEMA, CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
		return EXIT_OK;
	}
	if (!P.opt.config.empty()) {
		std::string err = load_config(P.opt);
		if (!err.empty())
			return usage_error(err);
	}
	P.plan = P.opt.quick ? kQuickPlan : kDefaultPlan;
	if (P.opt.self_test) {
		int rt_ver = 0;
		(void)cudaRuntimeGetVersion(&rt_ver);
		P.nvml.why = "not loaded in --self-test";
		synthetic_gpus(P);
		return finish(P, t_start, int(P.gpus.size()), rt_ver, 0, "");
	}

	P.nvml.load();
	std::string driver_version;
	if (P.nvml.ok && P.nvml.driver_version) {
		char buf[96] = {0};
		if (P.nvml.driver_version(buf, sizeof buf) == NVML_SUCCESS_)
			driver_version = buf;
	}
	if (driver_version.empty())
		driver_version = proc_driver_version();

	int rt_ver = 0, drv_ver = 0;
	if (cudaRuntimeGetVersion(&rt_ver) != cudaSuccess)
		rt_ver = CUDART_VERSION;
	if (cudaDriverGetVersion(&drv_ver) != cudaSuccess)
		drv_ver = 0;
	(void)cudaGetLastError();

	int count = 0;
	cudaError_t ce = cudaGetDeviceCount(&count);
	if (ce != cudaSuccess || count <= 0) {
		rc = no_gpu(P, ce, rt_ver, drv_ver, driver_version);
		P.nvml.unload();
		return rc;
	}

	std::vector<int> devs = P.opt.devices;
	if (devs.empty())
		for (int i = 0; i < count; i++)
			devs.push_back(i);
	for (int d : devs)
		if (d >= count) {
			P.nvml.unload();
			return usage_error(strf("--device %d: only %d GPU(s) visible (ordinals 0..%d)",
			                        d, count, count - 1));
		}

	P.budget.deadline = t_start + P.plan.target_s;
	P.budget.phases_left = int(devs.size()) * PHASES_PER_GPU + (devs.size() >= 2 ? 1 : 0);
	for (int d : devs) {
		GpuResult g;
		g.index = d;
		P.gpus.push_back(g);
	}
	for (GpuResult &g : P.gpus)
		measure_gpu(P, g);
	if (P.gpus.size() >= 2)
		measure_p2p(P);
	return finish(P, t_start, count, rt_ver, drv_ver, driver_version);
}
