// probe_inventory.cpp -- what a GPU is: CUDA device properties, and the
// NVML facts (ECC, MIG, PCIe link, clocks, temperature, power) when NVML is
// there.
#include <cstdio>
#include <cstring>

#include "probe.h"

static std::string format_uuid(const cudaUUID_t &u)
{
	const unsigned char *b = reinterpret_cast<const unsigned char *>(u.bytes);
	std::string s = "GPU-";
	for (int i = 0; i < 16; i++) {
		s += strf("%02x", b[i]);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			s += '-';
	}
	return s;
}

// Reads the kernel module version from /proc (a fallback when NVML is not
// there): the first version-shaped token (digits and dots) of a line like
//   NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar ...
//   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  ...
// Returns "" when unknown.
std::string proc_driver_version()
{
	FILE *f = fopen("/proc/driver/nvidia/version", "r");
	if (!f)
		return "";
	char line[512] = {0};
	std::string found;
	if (fgets(line, sizeof line, f)) {
		char *save = nullptr;
		for (char *tok = strtok_r(line, " \t\n", &save); tok && found.empty();
		     tok = strtok_r(nullptr, " \t\n", &save)) {
			bool digits = tok[0] >= '0' && tok[0] <= '9', dot = false;
			for (const char *c = tok; *c && digits; c++) {
				if (*c == '.')
					dot = true;
				else if (*c < '0' || *c > '9')
					digits = false;
			}
			if (digits && dot)
				found = tok;
		}
	}
	fclose(f);
	return found;
}

CudaErr inventory(Probe &P, GpuResult &g)
{
	cudaDeviceProp prop;
	TRY(cudaGetDeviceProperties(&prop, g.index));
	g.name = prop.name;
	g.uuid = format_uuid(prop.uuid);
	g.cc_major = prop.major;
	g.cc_minor = prop.minor;
	g.sm_count = prop.multiProcessorCount;
	g.mem_total_mib = (long long)(prop.totalGlobalMem / MiB);
	int v = 0;
	if (cudaDeviceGetAttribute(&v, cudaDevAttrEccEnabled, g.index) == cudaSuccess)
		g.ecc = v ? 1 : 0;
	if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, g.index) == cudaSuccess && v > 0)
		g.max_sm_mhz = v / 1000;
	char bus[32] = {0};
	if (cudaDeviceGetPCIBusId(bus, sizeof bus, g.index) == cudaSuccess)
		g.pci_bus_id = bus;
	(void)cudaGetLastError();

	size_t free_b = 0, total_b = 0;
	TRY(cudaMemGetInfo(&free_b, &total_b));
	g.mem_free_mib = (long long)(free_b / MiB);

	const Nvml &n = P.nvml;
	if (!g.pci_bus_id.empty() && n.handle(g.pci_bus_id.c_str(), &g.nvdev)) {
		g.nvml = true;
		int cur = 0, pend = 0;
		if (n.ecc_mode && n.ecc_mode(g.nvdev, &cur, &pend) == NVML_SUCCESS_)
			g.ecc = cur == NVML_FEATURE_ENABLED_ ? 1 : 0;
		unsigned int mc = 0, mp = 0;
		if (n.mig_mode && n.mig_mode(g.nvdev, &mc, &mp) == NVML_SUCCESS_)
			g.mig = mc == NVML_DEVICE_MIG_ENABLE_ ? 1 : 0;
		unsigned int u = 0;
		if (n.pcie_max_gen && n.pcie_max_gen(g.nvdev, &u) == NVML_SUCCESS_)
			g.pcie_max_gen = int(u);
		if (n.pcie_max_width && n.pcie_max_width(g.nvdev, &u) == NVML_SUCCESS_)
			g.pcie_max_width = int(u);
		if (n.max_clock && n.max_clock(g.nvdev, NVML_CLOCK_SM_, &u) == NVML_SUCCESS_)
			g.max_sm_mhz = int(u);
		unsigned long long ec = 0;
		if (g.ecc == 1 && n.ecc_total &&
		    n.ecc_total(g.nvdev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED_,
		                NVML_VOLATILE_ECC_, &ec) == NVML_SUCCESS_)
			g.ecc_uncorrected = (long long)ec;
	}
	return {};
}

// Link state right after the transfers (an idle link trains down to save
// power, so sampling it at rest would under-report).
void sample_pcie(const Probe &P, GpuResult &g)
{
	const Nvml &n = P.nvml;
	unsigned int u = 0;
	if (!g.nvml)
		return;
	if (n.pcie_gen && n.pcie_gen(g.nvdev, &u) == NVML_SUCCESS_)
		g.pcie_gen = int(u);
	if (n.pcie_width && n.pcie_width(g.nvdev, &u) == NVML_SUCCESS_)
		g.pcie_width = int(u);
}

// Clocks, temperature and power right after the compute measurements.
void sample_sensors(const Probe &P, GpuResult &g)
{
	const Nvml &n = P.nvml;
	unsigned int u = 0;
	if (!g.nvml)
		return;
	if (n.clock && n.clock(g.nvdev, NVML_CLOCK_SM_, &u) == NVML_SUCCESS_)
		g.sm_mhz = int(u);
	if (n.clock && n.clock(g.nvdev, NVML_CLOCK_MEM_, &u) == NVML_SUCCESS_)
		g.mem_mhz = int(u);
	if (n.temperature && n.temperature(g.nvdev, NVML_TEMPERATURE_GPU_, &u) == NVML_SUCCESS_)
		g.temp_c = int(u);
	if (n.power && n.power(g.nvdev, &u) == NVML_SUCCESS_)
		g.power_w = u / 1000.0;
}
