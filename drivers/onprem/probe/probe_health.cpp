// probe_health.cpp -- thresholds and the health verdict of each GPU.
//
// A threshold comes from a flag, else the --config file, else a default:
// 50 % of the data-sheet figure of the detected GPU (probe_datasheet.h) for
// d2d, fp32 and -- when measured with cuBLAS -- fp16/bf16; 50 % of the PCIe
// link's theoretical rate (NVML) for h2d/d2h.  0 disables a check.  A
// threshold whose metric could not be measured is a failure: a check that
// was asked for and could not be made does not pass.
#include "probe.h"

// Theoretical per-direction PCIe payload rate per lane, GB/s, after line
// encoding (8b/10b for gen 1-2, 128b/130b for gen 3-5, FLIT for gen 6).
static double pcie_lane_gbps(int gen)
{
	switch (gen) {
	case 1: return 0.25;
	case 2: return 0.5;
	case 3: return 0.985;
	case 4: return 1.969;
	case 5: return 3.938;
	case 6: return 7.563;
	default: return 0;
	}
}

static ThrValue resolve_threshold(const Probe &P, const GpuResult &g, int t, bool datasheet_ok)
{
	ThrValue r;
	const Options &o = P.opt;
	if (o.thr_src[t] != SRC_NONE) {
		r.source = o.thr_src[t] == SRC_FLAG ? "flag" : "config";
		if (o.thr[t] == 0) {
			r.source = "disabled";
			return r;
		}
		r.active = true;
		r.v = o.thr[t];
		r.detail = r.source;
		return r;
	}
	const Datasheet *d = datasheet_ok ? g.ds : nullptr;
	auto from_ds = [&](double fig, const char *unit) {
		if (!d || fig <= 0)
			return;
		r.active = true;
		r.v = 0.5 * fig;
		r.source = "datasheet";
		r.detail = strf("50%% of %g %s data sheet (%s)", fig, unit, d->model);
	};
	switch (t) {
	case T_D2D: from_ds(d ? d->mem_bw_gbps : 0, "GB/s"); break;
	case T_FP32: from_ds(d ? d->fp32_tflops : 0, "TFLOP/s"); break;
	case T_FP16:  // the WMMA fallback is not held to cuBLAS data-sheet peaks
		if (g.fp16_via == "cublas")
			from_ds(d ? d->fp16_tflops : 0, "TFLOP/s");
		break;
	case T_BF16:
		if (g.bf16_via == "cublas")
			from_ds(d ? d->bf16_tflops : 0, "TFLOP/s");
		break;
	case T_H2D:
	case T_D2H: {
		double lane = pcie_lane_gbps(g.pcie_max_gen);
		if (lane > 0 && g.pcie_max_width > 0) {
			double link = lane * g.pcie_max_width;
			r.active = true;
			r.v = 0.5 * link;
			r.source = "pcie";
			r.detail = strf("50%% of PCIe gen%d x%d = %.1f GB/s", g.pcie_max_gen,
			                g.pcie_max_width, link);
		}
		break;
	}
	default: break;
	}
	return r;
}

void evaluate_health(const Probe &P, GpuResult &g)
{
	bool mig = g.mig == 1 || name_is_mig(g.name.c_str());
	bool datasheet_ok = g.ds && !mig;
	if (g.ds && mig)
		g.notes.push_back("MIG: data-sheet thresholds not applied (a MIG slice has a fraction of the GPU)");
	else if (!g.ds && !g.name.empty())
		g.notes.push_back("no data-sheet entry for '" + g.name +
		                  "': only explicit thresholds and PCIe defaults apply");
	const Metric *metric[T_COUNT] = {&g.d2d, &g.h2d, &g.d2h, &g.fp32, &g.fp16, &g.bf16, nullptr};
	for (int t = 0; t < T_COUNT; t++) {
		ThrValue r = resolve_threshold(P, g, t, datasheet_ok);
		g.thr[t] = r;
		if (!r.active)
			continue;
		const ThrSpec &sp = kThr[t];
		bool ok;
		double v;
		std::string why;
		if (t == T_TEMP) {
			ok = g.temp_c >= 0;
			v = g.temp_c;
			why = g.nvml ? "NVML gave no temperature" : "needs NVML";
		} else {
			ok = metric[t]->ok;
			v = metric[t]->v;
			why = metric[t]->why;
		}
		if (!ok) {
			g.failures.push_back(strf("%s not measured (%s); threshold %s %.1f %s cannot be checked",
			                          sp.what, why.c_str(), sp.is_max ? "<=" : ">=", r.v, sp.unit));
			continue;
		}
		bool bad = sp.is_max ? v > r.v : v < r.v;
		if (bad)
			g.failures.push_back(strf("%s %.1f %s %s threshold %.1f %s (%s)", sp.what, v, sp.unit,
			                          sp.is_max ? ">" : "<", r.v, sp.unit, r.detail.c_str()));
	}
	if (g.ecc_uncorrected > 0)
		g.failures.push_back(strf("%lld uncorrected ECC errors since the driver loaded (NVML volatile count)",
		                          g.ecc_uncorrected));
	for (const std::string &e : g.errors)
		g.failures.push_back("CUDA error: " + e);
	g.healthy = g.failures.empty();
}
