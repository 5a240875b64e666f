// probe_datasheet.h -- data-sheet figures of common data-center GPUs, used
// to derive gpuprobe's default health thresholds (50 % of these figures).
//
// Figures are NVIDIA's published peak numbers (boost clock, dense -- i.e.
// without 2:4 sparsity -- tensor throughput with FP32 accumulate).  Units:
// memory bandwidth in GB/s (1e9 bytes/s), throughput in TFLOP/s (1e12).
// 0 means "the data sheet lists no such figure" (e.g. BF16 before Ampere).
// The README of this directory carries the same table with its sources;
// keep the two in step.
#ifndef GPUPROBE_DATASHEET_H
#define GPUPROBE_DATASHEET_H

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

struct Datasheet {
	const char *model;      // our canonical name
	const char *tokens[3];  // all must be name tokens (case-insensitive)
	double mem_bw_gbps;     // memory bandwidth, GB/s
	double fp32_tflops;     // FP32 (non-tensor) peak
	double fp16_tflops;     // FP16 tensor, dense, FP32 accumulate
	double bf16_tflops;     // BF16 tensor, dense, FP32 accumulate
	const char *source;
};

// Ordered: the first entry whose tokens all appear in the device name wins,
// so the more specific variants come first.  Device names as CUDA reports
// them, e.g. "NVIDIA H100 80GB HBM3" (SXM), "NVIDIA H100 PCIe",
// "NVIDIA A100-SXM4-40GB", "NVIDIA A100 80GB PCIe", "Tesla T4",
// "Tesla V100-SXM2-16GB", "Tesla V100S-PCIE-32GB".
static const Datasheet kDatasheets[] = {
	{"H100 NVL", {"H100", "NVL", nullptr}, 3900, 60.0, 835, 835,
	 "NVIDIA H100 Tensor Core GPU datasheet"},
	{"H100 PCIe", {"H100", "PCIE", nullptr}, 2000, 51.0, 756, 756,
	 "NVIDIA H100 Tensor Core GPU datasheet"},
	{"H100 SXM", {"H100", nullptr, nullptr}, 3350, 67.0, 989, 989,
	 "NVIDIA H100 Tensor Core GPU datasheet"},
	{"H200 NVL", {"H200", "NVL", nullptr}, 4800, 60.0, 835, 835,
	 "NVIDIA H200 Tensor Core GPU datasheet"},
	{"H200 SXM", {"H200", nullptr, nullptr}, 4800, 67.0, 989, 989,
	 "NVIDIA H200 Tensor Core GPU datasheet"},
	{"A100 80GB PCIe", {"A100", "80GB", "PCIE"}, 1935, 19.5, 312, 312,
	 "NVIDIA A100 Tensor Core GPU datasheet"},
	{"A100 40GB PCIe", {"A100", "PCIE", nullptr}, 1555, 19.5, 312, 312,
	 "NVIDIA A100 Tensor Core GPU datasheet"},
	{"A100 80GB SXM", {"A100", "80GB", nullptr}, 2039, 19.5, 312, 312,
	 "NVIDIA A100 Tensor Core GPU datasheet"},
	{"A100 40GB SXM", {"A100", nullptr, nullptr}, 1555, 19.5, 312, 312,
	 "NVIDIA A100 Tensor Core GPU datasheet"},
	{"A10G", {"A10G", nullptr, nullptr}, 600, 31.5, 70, 70,
	 "no public NVIDIA data sheet; figures as published for AWS G5 (lower confidence)"},
	{"A10", {"A10", nullptr, nullptr}, 600, 31.2, 125, 125,
	 "NVIDIA A10 Tensor Core GPU datasheet"},
	{"L40S", {"L40S", nullptr, nullptr}, 864, 91.6, 362, 362,
	 "NVIDIA L40S GPU datasheet"},
	{"L40", {"L40", nullptr, nullptr}, 864, 90.5, 181, 181,
	 "NVIDIA L40 GPU datasheet"},
	{"L4", {"L4", nullptr, nullptr}, 300, 30.3, 121, 121,
	 "NVIDIA L4 Tensor Core GPU datasheet"},
	{"T4", {"T4", nullptr, nullptr}, 320, 8.1, 65, 0,
	 "NVIDIA T4 Tensor Core GPU datasheet"},
	{"V100S PCIe", {"V100S", nullptr, nullptr}, 1134, 16.4, 130, 0,
	 "NVIDIA V100 Tensor Core GPU datasheet"},
	{"V100 PCIe", {"V100", "PCIE", nullptr}, 900, 14.0, 112, 0,
	 "NVIDIA V100 Tensor Core GPU datasheet"},
	{"V100 SXM2", {"V100", nullptr, nullptr}, 900, 15.7, 125, 0,
	 "NVIDIA V100 Tensor Core GPU datasheet"},
};

// Upper-cased alphanumeric runs of a device name: "NVIDIA A100-SXM4-40GB"
// -> {NVIDIA, A100, SXM4, 40GB}.  Whole tokens are compared so that "A10"
// does not match "A100" or "RTX A1000", nor "H200" match "GH200".
static inline std::vector<std::string> name_tokens(const char *name)
{
	std::vector<std::string> toks;
	std::string cur;
	for (const char *p = name; *p; p++) {
		unsigned char c = static_cast<unsigned char>(*p);
		if (std::isalnum(c)) {
			cur += static_cast<char>(std::toupper(c));
		} else if (!cur.empty()) {
			toks.push_back(cur);
			cur.clear();
		}
	}
	if (!cur.empty())
		toks.push_back(cur);
	return toks;
}

// The data-sheet entry for a device name, or nullptr when none matches.
// Borrowed: points into the static table.
static inline const Datasheet *datasheet_lookup(const char *name)
{
	std::vector<std::string> toks = name_tokens(name);
	for (const Datasheet &d : kDatasheets) {
		bool all = true;
		for (const char *t : d.tokens) {
			if (!t)
				break;
			bool found = false;
			for (const std::string &tok : toks)
				if (tok == t)
					found = true;
			if (!found) {
				all = false;
				break;
			}
		}
		if (all)
			return &d;
	}
	return nullptr;
}

// True when the device name says it is a MIG slice ("... MIG 1g.10gb").
static inline bool name_is_mig(const char *name)
{
	for (const std::string &tok : name_tokens(name))
		if (tok == "MIG")
			return true;
	return false;
}

#endif
