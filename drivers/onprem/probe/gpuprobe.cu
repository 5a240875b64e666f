// gpuprobe.cu -- inventory and micro-benchmarks of the GPUs of one node, as
// JSON, with a health verdict.  Used by the on-prem driver to describe a
// node's measured performance (offers carry these figures as `bench`).
//
// See drivers/onprem/probe/README.md for usage, the JSON schema, units,
// exit codes and the thresholds.  In short:
//   * device inventory from the CUDA runtime, plus NVML (dlopen'ed) when
//     the driver provides it;
//   * host<->device bandwidth (pinned memory), device->device bandwidth,
//     FP32 FMA throughput, FP16/BF16 tensor throughput (cuBLAS through
//     dlopen when present, else a WMMA kernel), a peer-to-peer matrix;
//   * every figure is the MEDIAN of several samples timed with CUDA events
//     after warm-up; sample counts are bounded by a time budget (default
//     run <= ~15 s, --quick <= ~3 s on one GPU).
//
// Built with the CUDA runtime linked statically (nvcc's default), so the
// binary needs only the NVIDIA driver on the node.
//
// Exit codes: 0 ran and healthy; 1 ran, some GPU unhealthy; 2 usage error;
// 3 no usable GPU or driver; 4 CUDA error during a measurement.
//
// This file holds the CUDA part: the kernels and every measurement.  The
// other files are listed in probe.h.
//
// Every figure is the MEDIAN of several samples, each bracketed by CUDA
// events on a non-blocking stream, after untimed warm-up runs.  How many
// samples are taken is bounded by the run's time budget (Budget in
// probe.h).  Units: GB/s = 1e9 bytes/s, TFLOP/s = 1e12 FLOP/s.

#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>

#include <cstring>
#include <functional>

#include "probe.h"

// ================================================================ kernels


// FP32 FMA throughput.  Each thread runs FMA_CHAINS independent dependency
// chains (instruction-level parallelism hides the FMA latency), the grid is
// exactly one full wave at maximum occupancy so every SM is busy for the
// whole kernel.  x = x*a + b converges to b/(1-a): no overflow, no
// denormals.  `store` is 0 at run time; the compiler cannot know that, so
// the chains are not dead code.
#define FMA_CHAINS 8
#define FMA_UNROLL 16

__global__ void __launch_bounds__(256)
fma_kernel(float *sink, float a, float b, int iters, int store)
{
	float x[FMA_CHAINS];
#pragma unroll
	for (int k = 0; k < FMA_CHAINS; k++)
		x[k] = 1e-3f * (threadIdx.x + k);
	for (int i = 0; i < iters; i++) {
#pragma unroll
		for (int u = 0; u < FMA_UNROLL; u++) {
#pragma unroll
			for (int k = 0; k < FMA_CHAINS; k++)
				x[k] = fmaf(x[k], a, b);
		}
	}
	float s = 0.0f;
#pragma unroll
	for (int k = 0; k < FMA_CHAINS; k++)
		s += x[k];
	if (store)
		sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Tensor-core fallback when cuBLAS is absent: warp-level WMMA 16x16x16
// multiply-accumulate on register fragments (no memory traffic), 4
// independent accumulators per warp.  This measures the mma.sync path; on
// Hopper that path does not reach the wgmma peak that cuBLAS uses (see the
// README), which is why tensor_method is reported.
#define MMA_CHAINS 4

template <typename T>
__device__ inline T to_elem(float f);
template <>
__device__ inline __half to_elem<__half>(float f) { return __float2half(f); }
template <>
__device__ inline __nv_bfloat16 to_elem<__nv_bfloat16>(float f) { return __float2bfloat16(f); }

template <typename T>
__device__ inline void mma_body(float *sink, float va, float vb, int iters, int store)
{
	using namespace nvcuda;
	wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
	wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[MMA_CHAINS];
	wmma::fill_fragment(fa, to_elem<T>(va));
	wmma::fill_fragment(fb, to_elem<T>(vb));
	// Distinct starting values: identical chains would be legal to merge
	// into one (ptxas does), which would cut the work by MMA_CHAINS.
#pragma unroll
	for (int c = 0; c < MMA_CHAINS; c++)
		wmma::fill_fragment(acc[c], 0.25f * float(c + 1));
	for (int i = 0; i < iters; i++) {
#pragma unroll
		for (int c = 0; c < MMA_CHAINS; c++)
			wmma::mma_sync(acc[c], fa, fb, acc[c]);
	}
	// Every element is consumed: a wmma 16x16x16 is several mma
	// instructions, and one whose results were never read would be dropped.
	float s = 0.0f;
#pragma unroll
	for (int c = 0; c < MMA_CHAINS; c++)
		for (int e = 0; e < acc[c].num_elements; e++)
			s += acc[c].x[e];
	if (store)
		sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void __launch_bounds__(256)
mma_fp16_kernel(float *sink, float va, float vb, int iters, int store)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
	mma_body<__half>(sink, va, vb, iters, store);
#else
	(void)sink, (void)va, (void)vb, (void)iters, (void)store;
#endif
}

__global__ void __launch_bounds__(256)
mma_bf16_kernel(float *sink, float va, float vb, int iters, int store)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
	mma_body<__nv_bfloat16>(sink, va, vb, iters, store);
#else
	(void)sink, (void)va, (void)vb, (void)iters, (void)store;
#endif
}

// Fills n 16-bit FP16 or BF16 values with pseudo-random numbers in
// [-0.5, 0.5) (GEMM inputs: realistic data, not zeros).
__global__ void fill16_kernel(unsigned short *p, size_t n, int bf16, unsigned seed)
{
	size_t stride = size_t(gridDim.x) * blockDim.x;
	for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
		unsigned h = unsigned(i) * 2654435761u ^ seed;
		h ^= h >> 15;
		h *= 2246822519u;
		h ^= h >> 13;
		float f = float(h & 0xffffu) / 65536.0f - 0.5f;
		p[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16(f))
		            : __half_as_ushort(__float2half(f));
	}
}

// ================================================================ timing

// Records the outcome of a failed measurement: an "unsupported" or
// out-of-memory error leaves the metric null with a note; anything else is
// a CUDA error (exit 4) and ends the measurements on that GPU.
static void record_failure(GpuResult &g, Metric &m, const char *what, const CudaErr &e)
{
	if (err_unsupported(e.code) || e.code == cudaErrorMemoryAllocation) {
		m.why = strf("%s: %s", what, e.text().c_str());
		g.notes.push_back(m.why);
		(void)cudaGetLastError();
		return;
	}
	m.why = strf("%s failed, see errors", what);
	g.errors.push_back(strf("%s: %s", what, e.text().c_str()));
	g.fatal = true;
	(void)cudaGetLastError();
}

// Times `enqueue` (which queues one sample's work on `s`): `warmup` untimed
// runs, then samples until at least min_n and either max_n samples or
// budget_s seconds of wall time.  Each sample is bracketed by CUDA events.
// *median_ms is the median sample.
static CudaErr time_samples(cudaStream_t s, int warmup, int min_n, int max_n,
                            double budget_s,
                            const std::function<cudaError_t()> &enqueue,
                            double *median_ms, int *n_out)
{
	Event e0, e1;
	TRY(cudaEventCreate(&e0.e));
	TRY(cudaEventCreate(&e1.e));
	double t0 = mono_now();
	for (int i = 0; i < warmup; i++)
		TRY(enqueue());
	TRY(cudaStreamSynchronize(s));
	std::vector<double> ms;
	while (int(ms.size()) < max_n) {
		if (int(ms.size()) >= min_n && mono_now() - t0 >= budget_s)
			break;
		TRY(cudaEventRecord(e0.e, s));
		TRY(enqueue());
		TRY(cudaEventRecord(e1.e, s));
		TRY(cudaEventSynchronize(e1.e));
		float t = 0;
		TRY(cudaEventElapsedTime(&t, e0.e, e1.e));
		ms.push_back(double(t));
	}
	std::sort(ms.begin(), ms.end());
	size_t n = ms.size();
	*median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
	*n_out = int(n);
	return {};
}

// ================================================================ measurements

static double gbps(size_t bytes, double ms) { return double(bytes) / (ms * 1e-3) / 1e9; }

static CudaErr ensure_host_buffer(Probe &P)
{
	if (P.host_buf_tried)
		return {};
	P.host_buf_tried = true;
	size_t n = P.plan.host_bytes;
	for (;;) {
		cudaError_t e = cudaHostAlloc(&P.host_buf, n, cudaHostAllocPortable);
		if (e == cudaSuccess) {
			P.host_buf_bytes = n;
			memset(P.host_buf, 0x5a, n);
			return {};
		}
		P.host_buf = nullptr;
		if (e != cudaErrorMemoryAllocation || n / 2 < 16 * MiB) {
			P.host_buf_err = strf("cudaHostAlloc(%zu MiB): %s", n / MiB,
			                      cuda_err_text(e).c_str());
			return CudaErr{e, strf("cudaHostAlloc(%zu MiB)", n / MiB)};
		}
		(void)cudaGetLastError();
		n /= 2;
	}
}

static void measure_host_copies(Probe &P, GpuResult &g, cudaStream_t s)
{
	double slice_h2d = P.budget.take(P.plan.cap_h2d);
	double slice_d2h = P.budget.take(P.plan.cap_d2h);
	CudaErr e = ensure_host_buffer(P);
	if (!P.host_buf) {
		g.h2d.why = g.d2h.why = "no pinned host buffer: " + P.host_buf_err;
		if (e.failed() && !err_unsupported(e.code) && e.code != cudaErrorMemoryAllocation)
			record_failure(g, g.h2d, "h2d", e);
		else
			g.notes.push_back(g.h2d.why);
		return;
	}
	DevMem d;
	size_t n = 0;
	e = alloc_dev(d, P.host_buf_bytes, 16 * MiB, &n);
	if (e.failed()) {
		record_failure(g, g.h2d, "h2d", e);
		g.d2h.why = g.h2d.why;
		return;
	}
	g.host_bytes = n;
	const Plan &pl = P.plan;
	double ms = 0;
	int k = 0;
	e = time_samples(s, 1, 3, pl.max_copy_samples, slice_h2d, [&]() {
		return cudaMemcpyAsync(d.p, P.host_buf, n, cudaMemcpyHostToDevice, s);
	}, &ms, &k);
	if (e.failed()) {
		record_failure(g, g.h2d, "h2d", e);
		return;
	}
	g.h2d.set(gbps(n, ms), k);
	e = time_samples(s, 1, 3, pl.max_copy_samples, slice_d2h, [&]() {
		return cudaMemcpyAsync(P.host_buf, d.p, n, cudaMemcpyDeviceToHost, s);
	}, &ms, &k);
	if (e.failed()) {
		record_failure(g, g.d2h, "d2h", e);
		return;
	}
	g.d2h.set(gbps(n, ms), k);
}

// Device-to-device copy with cudaMemcpyAsync -- the path PyTorch's
// tensor.copy_() takes for contiguous same-device tensors.  Reported both
// as (bytes read + bytes written)/time = 2*size/time (d2d_gbps) and as
// size/time (d2d_copy_gbps).
static void measure_d2d(Probe &P, GpuResult &g, cudaStream_t s)
{
	double slice = P.budget.take(P.plan.cap_d2d);
	size_t free_b = 0, total_b = 0;
	CudaErr e;
	cudaError_t ce = cudaMemGetInfo(&free_b, &total_b);
	if (ce != cudaSuccess) {
		record_failure(g, g.d2d, "d2d", CudaErr{ce, "cudaMemGetInfo"});
		g.d2d_copy.why = g.d2d.why;
		return;
	}
	size_t want = std::min(P.plan.d2d_cap, free_b / 8);
	if (want < 64 * MiB)
		want = std::min(P.plan.d2d_cap, free_b / 4);
	want = want / MiB * MiB;
	if (want < 4 * MiB) {
		g.d2d.why = g.d2d_copy.why =
			strf("d2d: only %zu MiB of device memory free", free_b / MiB);
		g.notes.push_back(g.d2d.why);
		return;
	}
	DevMem src, dst;
	size_t n1 = 0, n2 = 0;
	e = alloc_dev(src, want, 4 * MiB, &n1);
	if (!e.failed())
		e = alloc_dev(dst, n1, 4 * MiB, &n2);
	if (e.failed()) {
		record_failure(g, g.d2d, "d2d", e);
		g.d2d_copy.why = g.d2d.why;
		return;
	}
	size_t n = std::min(n1, n2);
	g.d2d_bytes = n;
	ce = cudaMemsetAsync(src.p, 0x3c, n, s);
	if (ce == cudaSuccess)
		ce = cudaMemsetAsync(dst.p, 0, n, s);
	if (ce != cudaSuccess) {
		record_failure(g, g.d2d, "d2d", CudaErr{ce, "cudaMemsetAsync"});
		g.d2d_copy.why = g.d2d.why;
		return;
	}
	double ms = 0;
	int k = 0;
	e = time_samples(s, 2, 5, P.plan.max_copy_samples * 2, slice, [&]() {
		return cudaMemcpyAsync(dst.p, src.p, n, cudaMemcpyDeviceToDevice, s);
	}, &ms, &k);
	if (e.failed()) {
		record_failure(g, g.d2d, "d2d", e);
		g.d2d_copy.why = g.d2d.why;
		return;
	}
	g.d2d.set(2.0 * gbps(n, ms), k);
	g.d2d_copy.set(gbps(n, ms), k);
}

// One full wave of 256-thread blocks at the kernel's maximum occupancy.
static CudaErr full_wave(const void *kernel, const GpuResult &g, int *blocks)
{
	int per_sm = 0;
	TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0));
	*blocks = std::max(1, per_sm) * std::max(1, g.sm_count);
	return {};
}

// A throughput kernel timed at a calibrated length: `launch(iters)` queues
// one kernel; iterations are scaled so a sample lasts about kernel_ms.
// Returns the median time and the iteration count used.
static CudaErr time_kernel(Probe &P, cudaStream_t s, double slice,
                           const std::function<cudaError_t(int)> &launch,
                           double *ms, int *iters_out, int *samples)
{
	Event e0, e1;
	TRY(cudaEventCreate(&e0.e));
	TRY(cudaEventCreate(&e1.e));
	TRY(launch(16));  // warm-up; also fails fast without a kernel image
	TRY(cudaStreamSynchronize(s));
	int iters = 64;
	float t = 0;
	for (;;) {
		TRY(cudaEventRecord(e0.e, s));
		TRY(launch(iters));
		TRY(cudaEventRecord(e1.e, s));
		TRY(cudaEventSynchronize(e1.e));
		TRY(cudaEventElapsedTime(&t, e0.e, e1.e));
		if (t >= 1.0f || iters >= (1 << 24))
			break;
		iters *= 4;
	}
	double scaled = double(iters) * P.plan.kernel_ms / std::max(double(t), 1e-3);
	iters = int(std::min(std::max(scaled, 16.0), double(1 << 26)));
	*iters_out = iters;
	return time_samples(s, 1, 3, P.plan.max_kernel_samples, slice,
	                    [&]() { return launch(iters); }, ms, samples);
}

static void measure_fp32(Probe &P, GpuResult &g, cudaStream_t s)
{
	double slice = P.budget.take(P.plan.cap_fp32);
	int blocks = 0;
	CudaErr e = full_wave(reinterpret_cast<const void *>(fma_kernel), g, &blocks);
	DevMem sink;
	size_t got = 0;
	if (!e.failed())
		e = alloc_dev(sink, size_t(blocks) * 256 * sizeof(float), size_t(blocks) * 256 * sizeof(float), &got);
	if (e.failed()) {
		record_failure(g, g.fp32, "fp32", e);
		return;
	}
	float *out = static_cast<float *>(sink.p);
	auto launch = [&](int iters) -> cudaError_t {
		fma_kernel<<<blocks, 256, 0, s>>>(out, 0.999f, 1e-3f, iters, 0);
		return cudaGetLastError();
	};
	double ms = 0;
	int iters = 0, k = 0;
	e = time_kernel(P, s, slice, launch, &ms, &iters, &k);
	if (e.failed()) {
		record_failure(g, g.fp32, "fp32", e);
		return;
	}
	double flops = 2.0 * double(blocks) * 256.0 * double(iters) * FMA_UNROLL * FMA_CHAINS;
	g.fp32.set(flops / (ms * 1e-3) / 1e12, k);
}

static void measure_wmma(Probe &P, GpuResult &g, cudaStream_t s, bool bf16,
                         Metric &m, double slice)
{
	const char *what = bf16 ? "bf16 (wmma)" : "fp16 (wmma)";
	const void *kern = bf16 ? reinterpret_cast<const void *>(mma_bf16_kernel)
	                        : reinterpret_cast<const void *>(mma_fp16_kernel);
	int blocks = 0;
	CudaErr e = full_wave(kern, g, &blocks);
	DevMem sink;
	size_t got = 0;
	if (!e.failed())
		e = alloc_dev(sink, size_t(blocks) * 256 * sizeof(float), size_t(blocks) * 256 * sizeof(float), &got);
	if (e.failed()) {
		record_failure(g, m, what, e);
		return;
	}
	float *out = static_cast<float *>(sink.p);
	auto launch = [&](int iters) -> cudaError_t {
		if (bf16)
			mma_bf16_kernel<<<blocks, 256, 0, s>>>(out, 1.0f / 64, 1.0f / 64, iters, 0);
		else
			mma_fp16_kernel<<<blocks, 256, 0, s>>>(out, 1.0f / 64, 1.0f / 64, iters, 0);
		return cudaGetLastError();
	};
	double ms = 0;
	int iters = 0, k = 0;
	e = time_kernel(P, s, slice, launch, &ms, &iters, &k);
	if (e.failed()) {
		record_failure(g, m, what, e);
		return;
	}
	double warps = double(blocks) * 256.0 / 32.0;
	double flops = 2.0 * 16 * 16 * 16 * MMA_CHAINS * double(iters) * warps;
	m.set(flops / (ms * 1e-3) / 1e12, k);
	(bf16 ? g.bf16_via : g.fp16_via) = "wmma";
}

// cuBLAS GemmEx, C = A*B with A, B, C in FP16 or BF16, FP32 compute.
// Returns false (with *why) when cuBLAS itself refused -- the caller then
// falls back to WMMA; CUDA errors go through record_failure.
static bool measure_cublas(Probe &P, GpuResult &g, cudaStream_t s, cublasHandle_t h,
                           bool bf16, Metric &m, double slice, std::string *why)
{
	const char *what = bf16 ? "bf16 (cublas)" : "fp16 (cublas)";
	size_t free_b = 0, total_b = 0;
	cudaError_t ce = cudaMemGetInfo(&free_b, &total_b);
	if (ce != cudaSuccess) {
		record_failure(g, m, what, CudaErr{ce, "cudaMemGetInfo"});
		return true;
	}
	int n = P.plan.gemm_n;
	while (n > 1024 && 3.0 * n * n * 2 > 0.5 * double(free_b))
		n /= 2;
	size_t bytes = size_t(n) * n * 2;
	DevMem a, b, c;
	size_t got = 0;
	CudaErr e = alloc_dev(a, bytes, bytes, &got);
	if (!e.failed())
		e = alloc_dev(b, bytes, bytes, &got);
	if (!e.failed())
		e = alloc_dev(c, bytes, bytes, &got);
	if (e.failed()) {
		record_failure(g, m, what, e);
		return true;
	}
	size_t elems = size_t(n) * n;
	fill16_kernel<<<1024, 256, 0, s>>>(static_cast<unsigned short *>(a.p), elems, bf16, 1u);
	fill16_kernel<<<1024, 256, 0, s>>>(static_cast<unsigned short *>(b.p), elems, bf16, 2u);
	ce = cudaGetLastError();
	if (ce == cudaSuccess)
		ce = cudaMemsetAsync(c.p, 0, bytes, s);
	if (ce != cudaSuccess) {
		record_failure(g, m, what, CudaErr{ce, "fill16_kernel"});
		return true;
	}
	int type = bf16 ? CUDA_R_16BF_ : CUDA_R_16F_;
	float alpha = 1.0f, beta = 0.0f;
	cublasStatus_t st = CUBLAS_STATUS_SUCCESS_;
	auto gemm = [&]() -> cudaError_t {
		st = P.cublas.gemm_ex(h, CUBLAS_OP_N_, CUBLAS_OP_N_, n, n, n, &alpha,
		                      a.p, type, n, b.p, type, n, &beta, c.p, type, n,
		                      CUBLAS_COMPUTE_32F_, CUBLAS_GEMM_DEFAULT_);
		if (st != CUBLAS_STATUS_SUCCESS_)
			return cudaErrorUnknown;  // sentinel, see below
		return cudaGetLastError();
	};
	double ms = 0;
	int k = 0;
	e = time_samples(s, 2, 3, P.plan.max_kernel_samples, slice, gemm, &ms, &k);
	if (st != CUBLAS_STATUS_SUCCESS_) {
		*why = strf("cublasGemmEx (%s): %s", bf16 ? "BF16" : "FP16",
		            cublas_status_name(st));
		(void)cudaGetLastError();
		return false;
	}
	if (e.failed()) {
		record_failure(g, m, what, e);
		return true;
	}
	g.gemm_n = n;
	m.set(2.0 * double(n) * n * n / (ms * 1e-3) / 1e12, k);
	(bf16 ? g.bf16_via : g.fp16_via) = "cublas";
	return true;
}

// Creates a cuBLAS handle for the current device, walking the candidate
// libraries until one works.  Returns nullptr (with notes) when none does.
static cublasHandle_t cublas_handle(Probe &P, GpuResult &g, cudaStream_t s)
{
	for (;;) {
		if (!P.cublas.loaded() && !P.cublas.load_next()) {
			g.notes.push_back("cuBLAS: " + P.cublas.why);
			return nullptr;
		}
		cublasHandle_t h = nullptr;
		cublasStatus_t st = P.cublas.create(&h);
		if (st == CUBLAS_STATUS_SUCCESS_) {
			if (P.cublas.set_stream(h, s) == CUBLAS_STATUS_SUCCESS_)
				return h;
			P.cublas.destroy(h);
			st = -1;
		}
		g.notes.push_back(strf("cuBLAS %s: cublasCreate/SetStream failed (%s); trying the next library",
		                       P.cublas.soname.c_str(), cublas_status_name(st)));
		(void)cudaGetLastError();
		P.cublas.lib = nullptr;  // stays mapped, see Cublas::load_next
	}
}

static void measure_tensor(Probe &P, GpuResult &g, cudaStream_t s)
{
	double slice16 = P.budget.take(P.plan.cap_fp16);
	double slice_bf = P.budget.take(P.plan.cap_bf16);
	int cc = g.cc_major * 10 + g.cc_minor;
	bool want_bf16 = cc >= 80;
	if (!want_bf16)
		g.bf16.why = strf("bf16 tensor cores need compute capability >= 8.0 (this GPU: %d.%d)",
		                  g.cc_major, g.cc_minor);
	if (P.opt.tensor == TP_NONE) {
		g.fp16.why = "disabled by --tensor-method none";
		if (want_bf16)
			g.bf16.why = g.fp16.why;
		return;
	}
	if (P.opt.tensor == TP_AUTO || P.opt.tensor == TP_CUBLAS) {
		cublasHandle_t h = cublas_handle(P, g, s);
		if (h) {
			std::string why16, why_bf;
			bool ok16 = measure_cublas(P, g, s, h, false, g.fp16, slice16, &why16);
			bool ok_bf = true;
			if (want_bf16 && !g.fatal)
				ok_bf = measure_cublas(P, g, s, h, true, g.bf16, slice_bf, &why_bf);
			P.cublas.destroy(h);
			if (!ok16) {
				g.notes.push_back(why16 + "; using wmma for fp16");
				g.fp16.why = why16;
			}
			if (!ok_bf) {
				g.notes.push_back(why_bf + "; using wmma for bf16");
				g.bf16.why = why_bf;
			}
			if (P.opt.tensor == TP_CUBLAS || g.fatal)
				return;
			if (!ok16 && !g.fatal)
				measure_wmma(P, g, s, false, g.fp16, slice16);
			if (!ok_bf && !g.fatal)
				measure_wmma(P, g, s, true, g.bf16, slice_bf);
			return;
		}
		if (P.opt.tensor == TP_CUBLAS) {
			g.fp16.why = "--tensor-method cublas: cuBLAS unavailable (see notes)";
			if (want_bf16)
				g.bf16.why = g.fp16.why;
			return;
		}
	}
	if (cc < 70) {
		g.fp16.why = "no tensor cores below compute capability 7.0";
		return;
	}
	measure_wmma(P, g, s, false, g.fp16, slice16);
	if (want_bf16 && !g.fatal)
		measure_wmma(P, g, s, true, g.bf16, slice_bf);
}

static void skip_rest(GpuResult &g)
{
	Metric *all[] = {&g.h2d, &g.d2h, &g.d2d, &g.d2d_copy, &g.fp32, &g.fp16, &g.bf16};
	for (Metric *m : all)
		if (!m->ok && m->why == "not measured")
			m->why = "skipped after an earlier CUDA error on this GPU";
}

void measure_gpu(Probe &P, GpuResult &g)
{
	double t0 = mono_now();
	cudaError_t ce = cudaSetDevice(g.index);
	if (ce == cudaSuccess)
		ce = cudaFree(nullptr);  // creates the context now, not mid-timing
	if (ce != cudaSuccess) {
		g.errors.push_back(strf("cudaSetDevice(%d): %s", g.index, cuda_err_text(ce).c_str()));
		g.fatal = true;
		skip_rest(g);
		P.budget.skip(PHASES_PER_GPU);
		return;
	}
	CudaErr e = inventory(P, g);
	if (e.failed()) {
		g.errors.push_back(e.text());
		g.fatal = true;
	}
	g.ds = datasheet_lookup(g.name.c_str());
	cudaStream_t s = nullptr;
	if (!g.fatal) {
		ce = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
		if (ce != cudaSuccess) {
			g.errors.push_back("cudaStreamCreate: " + cuda_err_text(ce));
			g.fatal = true;
		}
	}
	if (g.fatal) {
		skip_rest(g);
		P.budget.skip(PHASES_PER_GPU);
		return;
	}
	measure_host_copies(P, g, s);
	sample_pcie(P, g);
	if (!g.fatal)
		measure_d2d(P, g, s);
	else
		P.budget.take(0);
	if (!g.fatal)
		measure_fp32(P, g, s);
	else
		P.budget.take(0);
	if (!g.fatal)
		measure_tensor(P, g, s);
	else
		P.budget.skip(2);
	sample_sensors(P, g);
	skip_rest(g);
	g.tensor_method = !g.fp16_via.empty() ? g.fp16_via
	                : !g.bf16_via.empty() ? g.bf16_via : "none";
	if (!g.fp16_via.empty() && !g.bf16_via.empty() && g.fp16_via != g.bf16_via)
		g.notes.push_back("fp16 measured with " + g.fp16_via + ", bf16 with " + g.bf16_via);
	(void)cudaStreamDestroy(s);
	(void)cudaGetLastError();
	g.elapsed_s = mono_now() - t0;
}

// Peer-to-peer copy bandwidth between every ordered pair of the probed GPUs
// (one direction: bytes/time).  Without peer access the runtime stages the
// copy through the host; the figure is still reported and p2p_access says
// which pairs had direct access.
void measure_p2p(Probe &P)
{
	size_t ng = P.gpus.size();
	P.p2p.assign(ng, std::vector<double>(ng, -1.0));
	P.p2p_access.assign(ng, std::vector<int>(ng, -1));
	double slice = P.budget.take(P.plan.cap_p2p);
	size_t bytes = P.opt.quick ? 32 * MiB : (ng <= 4 ? 256 * MiB : 128 * MiB);
	std::vector<DevMem> buf(ng);
	std::vector<cudaStream_t> streams(ng, nullptr);
	for (size_t i = 0; i < ng; i++) {
		if (P.gpus[i].fatal)
			continue;
		int dev = P.gpus[i].index;
		size_t got = 0;
		cudaError_t ce = cudaSetDevice(dev);
		if (ce == cudaSuccess)
			ce = cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking);
		CudaErr e = ce == cudaSuccess ? alloc_dev(buf[i], bytes, bytes, &got)
		                              : CudaErr{ce, "cudaSetDevice/cudaStreamCreate"};
		if (e.failed()) {
			P.p2p_notes.push_back(strf("GPU %d: %s", dev, e.text().c_str()));
			(void)cudaGetLastError();
			buf[i].release();
		}
	}
	int pairs = int(ng * (ng - 1));
	double per_pair = slice / std::max(1, pairs);
	for (size_t i = 0; i < ng; i++) {
		for (size_t j = 0; j < ng; j++) {
			if (i == j || !buf[i].p || !buf[j].p)
				continue;
			int di = P.gpus[i].index, dj = P.gpus[j].index;
			int can = 0;
			cudaError_t ce = cudaSetDevice(di);
			if (ce == cudaSuccess)
				ce = cudaDeviceCanAccessPeer(&can, di, dj);
			if (ce == cudaSuccess && can) {
				cudaError_t pe = cudaDeviceEnablePeerAccess(dj, 0);
				if (pe != cudaSuccess && pe != cudaErrorPeerAccessAlreadyEnabled) {
					P.p2p_notes.push_back(strf("enable peer access %d->%d: %s", di, dj,
					                           cuda_err_text(pe).c_str()));
					can = 0;
				}
				(void)cudaGetLastError();
			}
			if (ce != cudaSuccess) {
				P.p2p_notes.push_back(strf("p2p %d->%d: %s", di, dj, cuda_err_text(ce).c_str()));
				P.p2p_fatal = true;
				continue;
			}
			P.p2p_access[i][j] = can ? 1 : 0;
			double ms = 0;
			int k = 0;
			cudaStream_t s = streams[i];
			void *src = buf[i].p, *dst = buf[j].p;
			CudaErr e = time_samples(s, 1, 2, 5, per_pair, [&]() {
				return cudaMemcpyPeerAsync(dst, dj, src, di, bytes, s);
			}, &ms, &k);
			if (e.failed()) {
				P.p2p_notes.push_back(strf("p2p %d->%d: %s", di, dj, e.text().c_str()));
				if (!err_unsupported(e.code) && e.code != cudaErrorMemoryAllocation)
					P.p2p_fatal = true;
				(void)cudaGetLastError();
				continue;
			}
			P.p2p[i][j] = gbps(bytes, ms);
		}
	}
	for (size_t i = 0; i < ng; i++) {
		if (streams[i]) {
			(void)cudaSetDevice(P.gpus[i].index);
			(void)cudaStreamDestroy(streams[i]);
		}
		if (buf[i].p) {
			(void)cudaSetDevice(P.gpus[i].index);
			buf[i].release();
		}
	}
	(void)cudaGetLastError();
}
