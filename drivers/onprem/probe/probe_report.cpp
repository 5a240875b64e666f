// probe_report.cpp -- gpuprobe's JSON report (schema in README.md), the
// report for a node without a usable GPU, and the --self-test data.
#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "probe.h"
#include "probe_json.h"

static std::string hostname()
{
	char buf[256] = {0};
	if (gethostname(buf, sizeof buf - 1) != 0)
		return "";
	return buf;
}

static void put_metric(JsonWriter &j, const char *key, const Metric &m, int decimals)
{
	if (m.ok)
		j.kv_num(key, m.v, decimals);
	else
		j.kv_null(key);
}

static void put_opt_int(JsonWriter &j, const char *key, long long v)
{
	if (v >= 0)
		j.kv_int(key, v);
	else
		j.kv_null(key);
}

static void put_strings(JsonWriter &j, const char *key, const std::vector<std::string> &v)
{
	j.key(key);
	j.begin_array();
	for (const std::string &s : v)
		j.str(s);
	j.end_array();
}

static void put_header(JsonWriter &j, const Probe &P, int rt_ver, int drv_ver,
                       const std::string &driver_version)
{
	j.kv("probe_version", PROBE_VERSION);
	j.kv_int("schema_version", PROBE_SCHEMA);
	j.kv("timestamp", P.started_at);
	j.kv("host", hostname());
	j.kv("mode", P.opt.quick ? "quick" : "default");
	if (driver_version.empty())
		j.kv_null("driver_version");
	else
		j.kv("driver_version", driver_version);
	j.kv("cuda_runtime_version", cuda_version_str(rt_ver));
	if (drv_ver > 0)
		j.kv("cuda_driver_version", cuda_version_str(drv_ver));
	else
		j.kv_null("cuda_driver_version");
	j.kv_bool("nvml", P.nvml.ok);
}

static void put_gpu(JsonWriter &j, const GpuResult &g)
{
	j.begin_object();
	j.kv_int("index", g.index);
	j.kv("name", g.name);
	j.kv("uuid", g.uuid);
	j.kv("pci_bus_id", g.pci_bus_id);
	j.kv("compute_capability", strf("%d.%d", g.cc_major, g.cc_minor));
	j.kv_int("sm_count", g.sm_count);
	j.kv_int("memory_total_mib", g.mem_total_mib);
	put_opt_int(j, "memory_free_mib", g.mem_free_mib);
	j.key("ecc");
	if (g.ecc < 0) j.null(); else j.boolean(g.ecc == 1);
	put_opt_int(j, "ecc_uncorrected_errors", g.ecc_uncorrected);
	j.key("mig_mode");
	if (g.mig < 0) j.null(); else j.str(g.mig ? "enabled" : "disabled");
	j.key("pcie");
	if (!g.nvml) {
		j.null();
	} else {
		j.begin_object();
		put_opt_int(j, "gen", g.pcie_gen);
		put_opt_int(j, "width", g.pcie_width);
		put_opt_int(j, "max_gen", g.pcie_max_gen);
		put_opt_int(j, "max_width", g.pcie_max_width);
		j.end_object();
	}
	j.key("clocks");
	j.begin_object();
	put_opt_int(j, "sm_mhz", g.sm_mhz);
	put_opt_int(j, "mem_mhz", g.mem_mhz);
	put_opt_int(j, "max_sm_mhz", g.max_sm_mhz);
	j.end_object();
	put_opt_int(j, "temperature_c", g.temp_c);
	if (g.power_w >= 0)
		j.kv_num("power_w", g.power_w, 1);
	else
		j.kv_null("power_w");
	put_metric(j, "h2d_gbps", g.h2d, 2);
	put_metric(j, "d2h_gbps", g.d2h, 2);
	put_metric(j, "d2d_gbps", g.d2d, 2);
	put_metric(j, "d2d_copy_gbps", g.d2d_copy, 2);
	put_metric(j, "fp32_tflops", g.fp32, 2);
	put_metric(j, "fp16_tflops", g.fp16, 2);
	put_metric(j, "bf16_tflops", g.bf16, 2);
	j.kv("tensor_method", g.tensor_method);
	j.key("params");
	j.begin_object();
	j.kv_int("host_bytes", (long long)g.host_bytes);
	j.kv_int("d2d_bytes", (long long)g.d2d_bytes);
	j.kv_int("gemm_n", g.gemm_n);
	j.key("samples");
	j.begin_object();
	j.kv_int("h2d", g.h2d.samples);
	j.kv_int("d2h", g.d2h.samples);
	j.kv_int("d2d", g.d2d.samples);
	j.kv_int("fp32", g.fp32.samples);
	j.kv_int("fp16", g.fp16.samples);
	j.kv_int("bf16", g.bf16.samples);
	j.end_object();
	j.end_object();
	j.key("health");
	j.begin_object();
	j.kv_bool("healthy", g.healthy);
	put_strings(j, "failures", g.failures);
	j.key("thresholds");
	j.begin_object();
	for (int t = 0; t < T_COUNT; t++) {
		j.key(kThr[t].key);
		if (!g.thr[t].active) {
			j.null();
			continue;
		}
		j.begin_object();
		j.kv_num("value", g.thr[t].v, 2);
		j.kv("source", g.thr[t].source);
		j.end_object();
	}
	j.end_object();
	j.key("datasheet");
	if (!g.ds) {
		j.null();
	} else {
		j.begin_object();
		j.kv("model", g.ds->model);
		j.kv_num("mem_bw_gbps", g.ds->mem_bw_gbps, 1);
		j.kv_num("fp32_tflops", g.ds->fp32_tflops, 1);
		if (g.ds->fp16_tflops > 0) j.kv_num("fp16_tflops", g.ds->fp16_tflops, 1);
		else j.kv_null("fp16_tflops");
		if (g.ds->bf16_tflops > 0) j.kv_num("bf16_tflops", g.ds->bf16_tflops, 1);
		else j.kv_null("bf16_tflops");
		j.kv("source", g.ds->source);
		j.end_object();
	}
	j.end_object();
	put_strings(j, "notes", g.notes);
	put_strings(j, "errors", g.errors);
	j.kv_num("elapsed_s", g.elapsed_s, 3);
	j.end_object();
}

static bool emit(const JsonWriter &j)
{
	const std::string &t = j.text();
	bool ok = fwrite(t.data(), 1, t.size(), stdout) == t.size();
	ok = fputc('\n', stdout) != EOF && ok;
	ok = fflush(stdout) == 0 && ok;
	return ok;
}

// What a failure to see any GPU means, in words an operator can act on.
static std::string explain_no_gpu(cudaError_t e, int rt_ver, int drv_ver)
{
	std::string rt = cuda_version_str(rt_ver);
	switch (e) {
	case cudaErrorInsufficientDriver:
		if (drv_ver <= 0)
			return "no NVIDIA driver found: libcuda.so.1 could not be loaded (install the "
			       "NVIDIA driver, or run in a container with the GPU runtime hooks)";
		return "the NVIDIA driver supports CUDA " + cuda_version_str(drv_ver) +
		       " but this probe was built with CUDA " + rt +
		       "; upgrade the driver or rebuild the probe with an older CUDA toolkit";
	case cudaErrorNoDevice:
		return "the NVIDIA driver is loaded but sees no GPU (check nvidia-smi, "
		       "CUDA_VISIBLE_DEVICES, and the container's --gpus setting)";
	case cudaErrorSystemDriverMismatch:
		return "the NVIDIA kernel module and user-space driver versions differ "
		       "(reboot or reinstall the driver)";
	case cudaErrorDevicesUnavailable:
		return "every GPU is busy or unavailable (exclusive-process compute mode "
		       "taken by another process, or compute prohibited)";
	case cudaErrorCompatNotSupportedOnDevice:
		return "the CUDA forward-compatibility package is not supported on this GPU";
	case cudaErrorInitializationError:
		return "the CUDA driver failed to initialise (see dmesg for NVRM messages)";
	default:
		return "CUDA could not enumerate GPUs";
	}
}

int no_gpu(const Probe &P, cudaError_t e, int rt_ver, int drv_ver,
                  const std::string &driver_version)
{
	JsonWriter j(P.opt.pretty);
	j.begin_object();
	std::string msg;
	if (e == cudaSuccess)
		msg = "cudaGetDeviceCount returned 0 devices: no GPU is visible to CUDA";
	else
		msg = strf("cudaGetDeviceCount failed: %s: %s", cuda_err_text(e).c_str(),
		           explain_no_gpu(e, rt_ver, drv_ver).c_str());
	j.kv("error", msg);
	j.kv("error_code", e == cudaSuccess ? "cudaErrorNoDevice" : cudaGetErrorName(e));
	j.kv_int("gpus", 0);
	j.kv_bool("healthy", false);
	put_header(j, P, rt_ver, drv_ver, driver_version);
	if (!P.nvml.ok)
		j.kv("nvml_error", P.nvml.why);
	j.end_object();
	emit(j);
	return EXIT_NO_GPU;
}

// Health verdicts, the JSON report and the exit code.
int finish(Probe &P, double t_start, int count, int rt_ver, int drv_ver,
                  const std::string &driver_version)
{
	bool any_fatal = P.p2p_fatal, all_healthy = !P.p2p_fatal;
	for (GpuResult &g : P.gpus) {
		evaluate_health(P, g);
		any_fatal = any_fatal || g.fatal;
		all_healthy = all_healthy && g.healthy;
	}

	JsonWriter j(P.opt.pretty);
	j.begin_object();
	put_header(j, P, rt_ver, drv_ver, driver_version);
	if (P.opt.self_test)
		j.kv_bool("synthetic", true);
	if (!P.nvml.ok)
		j.kv("nvml_error", P.nvml.why);
	if (P.cublas.soname.empty())
		j.kv_null("cublas");
	else
		j.kv("cublas", P.cublas.soname);
	j.kv("statistic", "median");
	j.kv_int("gpu_count", count);
	j.key("gpus");
	j.begin_array();
	for (const GpuResult &g : P.gpus)
		put_gpu(j, g);
	j.end_array();
	j.key("p2p_gbps");
	if (P.p2p.empty()) {
		j.null();
	} else {
		j.begin_array();
		for (const auto &row : P.p2p) {
			j.begin_array();
			for (double v : row)
				if (v > 0) j.number(v, 2); else j.null();
			j.end_array();
		}
		j.end_array();
	}
	j.key("p2p_access");
	if (P.p2p_access.empty()) {
		j.null();
	} else {
		j.begin_array();
		for (const auto &row : P.p2p_access) {
			j.begin_array();
			for (int v : row)
				if (v >= 0) j.boolean(v == 1); else j.null();
			j.end_array();
		}
		j.end_array();
	}
	put_strings(j, "p2p_notes", P.p2p_notes);
	if (any_fatal) {
		// Exit 4: the first CUDA error, for readers of the top level only.
		std::string first;
		for (const GpuResult &g : P.gpus)
			if (first.empty() && !g.errors.empty())
				first = strf("GPU %d: %s", g.index, g.errors[0].c_str());
		if (first.empty() && !P.p2p_notes.empty())
			first = "p2p: " + P.p2p_notes[0];
		j.kv("error", "CUDA error during the measurements: " + first);
	}
	j.kv_bool("healthy", all_healthy);
	j.kv_num("elapsed_s", mono_now() - t_start, 3);
	j.end_object();
	bool written = emit(j);

	if (P.host_buf)
		(void)cudaFreeHost(P.host_buf);
	P.nvml.unload();
	if (!written || any_fatal)
		return EXIT_CUDA_ERROR;
	return all_healthy ? EXIT_OK : EXIT_UNHEALTHY;
}

// --self-test: two made-up GPUs pushed through the same health rules and
// JSON writer as a real run, without touching CUDA -- so that machines
// without a GPU (CI) can check the schema and the threshold logic.  The
// figures are invented; the report says "synthetic": true.
void synthetic_gpus(Probe &P)
{
	GpuResult a;
	a.index = 0;
	a.name = "NVIDIA H100 80GB HBM3";
	a.uuid = "GPU-00000000-0000-0000-0000-000000000000";
	a.pci_bus_id = "00000000:18:00.0";
	a.cc_major = 9;
	a.sm_count = 132;
	a.mem_total_mib = 81559;
	a.mem_free_mib = 81000;
	a.ecc = 1;
	a.ecc_uncorrected = 0;
	a.mig = 0;
	a.nvml = true;
	a.pcie_gen = a.pcie_max_gen = 5;
	a.pcie_width = a.pcie_max_width = 16;
	a.sm_mhz = 1980;
	a.mem_mhz = 2619;
	a.max_sm_mhz = 1980;
	a.temp_c = 61;
	a.power_w = 512.3;
	a.h2d.set(53.2, 12);
	a.d2h.set(52.8, 12);
	a.d2d.set(2900.0, 30);
	a.d2d_copy.set(1450.0, 30);
	a.fp32.set(58.1, 9);
	a.fp16.set(712.4, 10);
	a.bf16.set(720.9, 10);
	a.tensor_method = a.fp16_via = a.bf16_via = "cublas";
	a.host_bytes = 256 * MiB;
	a.d2d_bytes = 1024 * MiB;
	a.gemm_n = 8192;
	a.elapsed_s = 3.2;
	a.ds = datasheet_lookup(a.name.c_str());

	GpuResult b;
	b.index = 1;
	b.name = "Test \"quoted\"\tGPU \xff";  // escaping and invalid UTF-8
	b.uuid = "GPU-11111111-1111-1111-1111-111111111111";
	b.pci_bus_id = "00000000:3b:00.0";
	b.cc_major = 7;
	b.cc_minor = 5;
	b.sm_count = 40;
	b.mem_total_mib = 15360;
	b.mem_free_mib = 14900;
	b.max_sm_mhz = 1590;
	b.h2d.set(12.1, 5);
	b.d2h.set(12.9, 5);
	b.d2d.set(480.0, 20);
	b.d2d_copy.set(240.0, 20);
	b.fp32.set(7.4, 5);
	b.fp16.set(41.0, 5);
	b.bf16.why = "bf16 tensor cores need compute capability >= 8.0 (this GPU: 7.5)";
	b.tensor_method = b.fp16_via = "wmma";
	b.host_bytes = 256 * MiB;
	b.d2d_bytes = 1024 * MiB;
	b.elapsed_s = 2.9;
	b.notes.push_back("cuBLAS: synthetic note");
	b.ds = datasheet_lookup(b.name.c_str());

	P.gpus.push_back(a);
	P.gpus.push_back(b);
	P.p2p = {{-1.0, 350.5}, {349.9, -1.0}};
	P.p2p_access = {{-1, 1}, {1, -1}};
}
