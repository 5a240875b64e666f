#!/usr/bin/env python3
"""probe_check.py -- compare gpuprobe's figures with PyTorch on one GPU.

Run through bench/probe_check.sh, which skips cleanly when there is no GPU,
no PyTorch or no probe binary.

1. Device-to-device copy.  gpuprobe reports d2d_copy_gbps = size/time for a
   cudaMemcpyAsync of params.d2d_bytes (and d2d_gbps = 2*size/time, bytes
   read + written).  Here torch copies a uint8 tensor of exactly that size
   with dst.copy_(src) -- for contiguous same-device tensors PyTorch issues
   the same cudaMemcpyAsync -- timed with CUDA events after warm-up, and the
   MEDIAN sample is used, as in the probe.  Target: probe/torch >= 0.9.
2. FP32: the probe's FMA-kernel TFLOP/s against the data-sheet peak of the
   detected GPU (the probe's own table, health.datasheet), plus a PyTorch
   FP32 matmul (TF32 disabled) and an FP16 matmul for reference.

Exit 0 when the copy ratio meets the target, 1 when it does not, 2 when the
probe could not be run.
"""
import argparse
import json
import statistics
import subprocess
import sys

TARGET = 0.9


def run_probe(probe, device, quick):
    cmd = [probe, "--device", str(device), "--compact"]
    if quick:
        cmd.append("--quick")
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        print("probe_check: cannot run %s: %s" % (probe, e))
        sys.exit(2)
    try:
        report = json.loads(p.stdout.decode("utf-8"))
    except ValueError:
        print("probe_check: %s exited %d without a JSON report; stderr:\n%s"
              % (probe, p.returncode, p.stderr.decode("utf-8", "replace")[-2000:]))
        sys.exit(2)
    if p.returncode == 3:
        print("probe_check: SKIP (the probe sees no GPU: %s)" % report.get("error"))
        sys.exit(0)
    if p.returncode not in (0, 1):  # 1 = unhealthy, figures still valid
        print("probe_check: probe exited %d: %s" % (p.returncode, json.dumps(report)[:2000]))
        sys.exit(2)
    return report


def timed_median_ms(torch, fn, warmup, samples):
    """Median time of fn() in ms, each call bracketed by CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(samples):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def torch_copy_gbps(torch, device, nbytes, samples):
    src = torch.empty(nbytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    src.fill_(0x3C)
    dst.zero_()
    ms = timed_median_ms(torch, lambda: dst.copy_(src), 2, samples)
    del src, dst
    torch.cuda.empty_cache()
    return nbytes / (ms * 1e-3) / 1e9


def torch_matmul_tflops(torch, device, dtype, n, samples):
    free, _ = torch.cuda.mem_get_info(device)
    elem = torch.tensor([], dtype=dtype).element_size()
    while n > 1024 and 3 * n * n * elem > free // 2:
        n //= 2
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    c = torch.empty(n, n, device=device, dtype=dtype)
    ms = timed_median_ms(torch, lambda: torch.matmul(a, b, out=c), 2, samples)
    del a, b, c
    torch.cuda.empty_cache()
    return 2.0 * n ** 3 / (ms * 1e-3) / 1e12, n


def pct(x, of):
    return "%.1f%%" % (100.0 * x / of) if of else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--probe", required=True, help="path of the gpuprobe binary")
    ap.add_argument("--device", type=int, default=0, help="CUDA ordinal (default 0)")
    ap.add_argument("--quick", action="store_true", help="run the probe with --quick")
    ap.add_argument("--samples", type=int, default=30, help="torch copy samples (default 30)")
    args = ap.parse_args()

    import torch  # checked by probe_check.sh

    report = run_probe(args.probe, args.device, args.quick)
    g = report["gpus"][0]
    ds = g["health"]["datasheet"]
    print("probe_check: GPU %d: %s (data sheet: %s); probe %s, driver %s, CUDA runtime %s"
          % (g["index"], g["name"], ds["model"] if ds else "none",
             report["probe_version"], report["driver_version"], report["cuda_runtime_version"]))

    device = torch.device("cuda", args.device)
    torch.cuda.set_device(device)
    tname = torch.cuda.get_device_name(device)
    if tname != g["name"]:
        print("probe_check: warning: torch sees %r, the probe %r" % (tname, g["name"]))

    # 1. d2d copy, same size, same convention, both medians.
    nbytes = g["params"]["d2d_bytes"]
    probe_copy = g["d2d_copy_gbps"]
    if not nbytes or probe_copy is None:
        print("probe_check: the probe has no d2d figure: %s" % "; ".join(g["notes"] + g["errors"]))
        return 2
    torch_copy = torch_copy_gbps(torch, device, nbytes, args.samples)
    ratio = probe_copy / torch_copy
    verdict = "PASS" if ratio >= TARGET else "MISS"
    print("probe_check: d2d copy of %d MiB, one direction (size/time), median of samples:"
          % (nbytes >> 20))
    print("  probe  %9.1f GB/s   (read+write convention: %.1f GB/s)" % (probe_copy, g["d2d_gbps"]))
    print("  torch  %9.1f GB/s   (dst.copy_(src), %d samples)" % (torch_copy, args.samples))
    print("  ratio  %9.3f        target >= %.2f  %s" % (ratio, TARGET, verdict))
    if ds:
        print("  data sheet memory bandwidth %.0f GB/s: probe read+write = %s of it"
              % (ds["mem_bw_gbps"], pct(g["d2d_gbps"], ds["mem_bw_gbps"])))

    # 2. FP32 against the data sheet; torch matmuls for reference.
    fp32 = g["fp32_tflops"]
    peak = ds["fp32_tflops"] if ds else None
    if fp32 is None:
        print("probe_check: fp32: the probe has no figure")
    elif peak:
        print("probe_check: fp32: probe %.1f TFLOP/s = %s of the %.1f TFLOP/s data-sheet peak (%s)"
              % (fp32, pct(fp32, peak), peak, ds["model"]))
    else:
        print("probe_check: fp32: probe %.1f TFLOP/s (no data-sheet entry for this GPU)" % fp32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    t32, n32 = torch_matmul_tflops(torch, device, torch.float32, 8192, 10)
    print("  torch fp32 matmul %dx%d (TF32 off): %.1f TFLOP/s%s"
          % (n32, n32, t32, (" = %s of peak" % pct(t32, peak)) if peak else ""))
    t16, n16 = torch_matmul_tflops(torch, device, torch.float16, 8192, 10)
    fp16 = g["fp16_tflops"]
    print("probe_check: fp16 tensor: probe %s (%s, gemm_n %d); torch fp16 matmul %dx%d: %.1f TFLOP/s"
          % ("%.1f TFLOP/s" % fp16 if fp16 is not None else "n/a", g["tensor_method"],
             g["params"]["gemm_n"], n16, n16, t16))

    print("probe_check: RESULT d2d_copy_ratio=%.3f target=%.2f %s" % (ratio, TARGET, verdict))
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
