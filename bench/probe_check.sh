#!/bin/sh
# bench/probe_check.sh -- does gpuprobe measure what PyTorch measures?
#
# On a node with a GPU and PyTorch: runs gpuprobe on device 0 and measures
# the same device-to-device copy (same buffer size, same one-direction
# convention size/time, median of samples timed with CUDA events) with
# torch.Tensor.copy_(), and prints probe/torch (target >= 0.9); then the
# probe's FP32 TFLOP/s against the data-sheet peak of the detected GPU (and
# PyTorch FP32/FP16 matmul figures for reference).  See bench/probe_check.py.
#
# Without a GPU, PyTorch or the probe binary it prints
# "probe_check: SKIP (<reason>)" and exits 0: it is a benchmark, not a test.
# Exit 1 when it ran and the copy ratio missed the target.
#
# Environment: GB_BUILD or BUILD (build dir, default build), GPUPROBE (the
# probe binary), PYTHON (default python3).  Extra arguments go to
# probe_check.py (--help lists them).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$here/$BUILD" ;; esac
GB_BUILD=${GB_BUILD:-$BUILD}
probe=${GPUPROBE:-$GB_BUILD/bin/gpuprobe}
py=${PYTHON:-python3}

skip() {
	echo "probe_check: SKIP ($*)"
	exit 0
}

[ -x "$probe" ] || skip "no probe binary at $probe: build it with 'make probe' (needs nvcc)"
command -v "$py" >/dev/null 2>&1 || skip "$py not found"
"$py" -c 'import torch' >/dev/null 2>&1 || skip "PyTorch is not installed for $py"
"$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' \
	>/dev/null 2>&1 || skip "no GPU visible to PyTorch (torch.cuda.is_available() is False)"
exec "$py" "$here/bench/probe_check.py" --probe "$probe" "$@"
