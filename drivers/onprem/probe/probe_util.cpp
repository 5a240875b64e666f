// probe_util.cpp -- small helpers shared by gpuprobe's files.
#include <cstdarg>
#include <cstdio>
#include <ctime>

#include "probe.h"

double mono_now()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

std::string strf(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return buf;
}

std::string cuda_version_str(int v)
{
	if (v <= 0)
		return "";
	return strf("%d.%d", v / 1000, (v % 1000) / 10);
}

std::string cuda_err_text(cudaError_t e)
{
	return strf("%s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
}

// Errors that say "this build/GPU cannot do that", not "the GPU broke".
bool err_unsupported(cudaError_t e)
{
	return e == cudaErrorNoKernelImageForDevice ||
	       e == cudaErrorInvalidDeviceFunction ||
	       e == cudaErrorUnsupportedPtxVersion ||
	       e == cudaErrorInvalidPtx || e == cudaErrorJitCompilerNotFound ||
	       e == cudaErrorNotSupported;
}

// Allocates up to `want` bytes of device memory, halving on out-of-memory
// down to `floor`.  The size obtained is in *got.
CudaErr alloc_dev(DevMem &m, size_t want, size_t floor, size_t *got)
{
	size_t n = want;
	for (;;) {
		cudaError_t e = cudaMalloc(&m.p, n);
		if (e == cudaSuccess) {
			*got = n;
			return {};
		}
		m.p = nullptr;
		if (e != cudaErrorMemoryAllocation || n / 2 < floor)
			return CudaErr{e, strf("cudaMalloc(%zu MiB)", n / MiB)};
		(void)cudaGetLastError();
		n /= 2;
	}
}

std::string utc_timestamp()
{
	time_t now = time(nullptr);
	struct tm tm;
	char buf[32] = "";
	if (gmtime_r(&now, &tm))
		strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}
