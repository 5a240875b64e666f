#!/bin/sh
# tests/integration/probe.sh -- the CUDA probe (drivers/onprem/probe).
#
# Without a GPU (CI): the probe must answer {"error": ..., "gpus": 0} on
# stdout with exit 3 and nothing on stderr; the command line must behave
# (--help 0, bad usage 2); --self-test must produce the full schema and
# apply the health rules.  With a GPU (nvidia-smi works): a --quick run must
# produce the full schema, and hiding the GPUs must give the exit-3 answer.
# Skipped (77) when gpuprobe was not built because nvcc is missing.
set -u
GB_BUILD=${GB_BUILD:-build}
probe="$GB_BUILD/bin/gpuprobe"
py=/usr/bin/python3
[ -x "$py" ] || py=python3

if [ ! -x "$probe" ]; then
	if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
		echo "FAIL: nvcc is present but $probe was not built (make probe)"
		exit 1
	fi
	echo "SKIP: nvcc not found (PATH or /usr/local/cuda/bin), so gpuprobe was not built"
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# run NAME ARGS...: stdout, stderr and exit code to $tmp/NAME.{out,err,rc}
run() {
	name=$1
	shift
	"$probe" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
rc_of() { cat "$tmp/$1.rc"; }

expect_rc() { # NAME WANT
	got=$(rc_of "$1")
	[ "$got" = "$2" ] || {
		fail "$1: exit $got, want $2"
		sed 's/^/  stdout: /' "$tmp/$1.out" | head -n 20
		sed 's/^/  stderr: /' "$tmp/$1.err" | head -n 20
	}
}

# No crash text anywhere: the probe must never die on a signal.
no_crash() { # NAME
	if grep -Eqi 'segmentation|core dumped|aborted|terminate called|stack smashing' \
		"$tmp/$1.out" "$tmp/$1.err"; then
		fail "$1: crash text in output"
	fi
	rc=$(rc_of "$1")
	[ "$rc" -lt 128 ] || fail "$1: killed by a signal (exit $rc)"
}

# Validates a report.  KIND: error | full.  Extra python conditions may
# follow (each an expression over `d`, the parsed object).
validate() { # NAME KIND [EXPR...]
	name=$1
	kind=$2
	shift 2
	"$py" - "$tmp/$name.out" "$kind" "$@" <<'EOF' || fail "$name: report does not validate"
import json, sys
path, kind, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(path, encoding="utf-8").read()
errs = []
try:
    d = json.loads(text)
except ValueError as e:
    print("  not one JSON object:", e)
    sys.exit(1)
if not isinstance(d, dict):
    print("  top level is not an object")
    sys.exit(1)

def need(obj, key, types, where):
    if key not in obj:
        errs.append("%s: missing %r" % (where, key))
        return None
    v = obj[key]
    if not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
        errs.append("%s: %r has type %s" % (where, key, type(v).__name__))
    return v

num = (int, float)
opt_num = (int, float, type(None))
opt_str = (str, type(None))
opt_bool = (bool, type(None))
for k, t in [("probe_version", (str,)), ("schema_version", (int,)),
             ("timestamp", (str,)), ("host", (str,)), ("mode", (str,)),
             ("driver_version", opt_str), ("cuda_runtime_version", (str,)),
             ("cuda_driver_version", opt_str), ("nvml", (bool,)),
             ("healthy", (bool,))]:
    need(d, k, t, "top")
ts = d.get("timestamp", "")
if not (len(ts) == 20 and ts[10] == "T" and ts.endswith("Z")):
    errs.append("timestamp %r is not UTC ISO-8601" % ts)

if kind == "error":
    need(d, "error", (str,), "top")
    if d.get("gpus") != 0 or isinstance(d.get("gpus"), bool):
        errs.append('"gpus" is %r, want 0' % d.get("gpus"))
    if not str(d.get("error", "")).strip():
        errs.append('"error" is empty')
    if d.get("healthy") is not False:
        errs.append('"healthy" should be false')
else:
    for k, t in [("statistic", (str,)), ("gpu_count", (int,)),
                 ("gpus", (list,)), ("elapsed_s", num), ("cublas", opt_str),
                 ("p2p_notes", (list,))]:
        need(d, k, t, "top")
    gpus = d.get("gpus") or []
    if not gpus:
        errs.append("no GPUs in a full report")
    for i, g in enumerate(gpus):
        w = "gpus[%d]" % i
        for k, t in [("index", (int,)), ("name", (str,)), ("uuid", (str,)),
                     ("pci_bus_id", (str,)), ("compute_capability", (str,)),
                     ("sm_count", (int,)), ("memory_total_mib", (int,)),
                     ("memory_free_mib", (int, type(None))), ("ecc", opt_bool),
                     ("ecc_uncorrected_errors", (int, type(None))),
                     ("mig_mode", opt_str), ("pcie", (dict, type(None))),
                     ("clocks", (dict,)), ("temperature_c", (int, type(None))),
                     ("power_w", opt_num), ("h2d_gbps", opt_num),
                     ("d2h_gbps", opt_num), ("d2d_gbps", opt_num),
                     ("d2d_copy_gbps", opt_num), ("fp32_tflops", opt_num),
                     ("fp16_tflops", opt_num), ("bf16_tflops", opt_num),
                     ("tensor_method", (str,)), ("params", (dict,)),
                     ("health", (dict,)), ("notes", (list,)),
                     ("errors", (list,)), ("elapsed_s", num)]:
            need(g, k, t, w)
        if g.get("tensor_method") not in ("cublas", "wmma", "none"):
            errs.append("%s: tensor_method %r" % (w, g.get("tensor_method")))
        if g.get("mig_mode") not in ("enabled", "disabled", None):
            errs.append("%s: mig_mode %r" % (w, g.get("mig_mode")))
        if isinstance(g.get("pcie"), dict):
            for k in ("gen", "width", "max_gen", "max_width"):
                need(g["pcie"], k, (int, type(None)), w + ".pcie")
        for k in ("sm_mhz", "mem_mhz", "max_sm_mhz"):
            need(g.get("clocks", {}), k, (int, type(None)), w + ".clocks")
        for k in ("host_bytes", "d2d_bytes", "gemm_n"):
            need(g.get("params", {}), k, (int,), w + ".params")
        if g.get("d2d_gbps") is not None and g.get("d2d_copy_gbps") is not None:
            if abs(g["d2d_gbps"] - 2 * g["d2d_copy_gbps"]) > 0.02:
                errs.append("%s: d2d_gbps != 2 * d2d_copy_gbps" % w)
        h = g.get("health", {})
        need(h, "healthy", (bool,), w + ".health")
        need(h, "failures", (list,), w + ".health")
        need(h, "thresholds", (dict,), w + ".health")
        need(h, "datasheet", (dict, type(None)), w + ".health")
        if h.get("healthy") is not (len(h.get("failures", [])) == 0):
            errs.append("%s: healthy disagrees with failures" % w)
        for k in ("min_d2d_gbps", "min_h2d_gbps", "min_d2h_gbps", "min_fp32_tflops",
                  "min_fp16_tflops", "min_bf16_tflops", "max_temp_c"):
            v = need(h.get("thresholds", {}), k, (dict, type(None)), w + ".thresholds")
            if isinstance(v, dict):
                need(v, "value", num, w + ".thresholds." + k)
                need(v, "source", (str,), w + ".thresholds." + k)
    if d.get("healthy") is not all(g.get("health", {}).get("healthy") for g in gpus) \
            and not d.get("p2p_notes"):
        errs.append("top-level healthy disagrees with the GPUs")
    n = len(gpus)
    for key in ("p2p_gbps", "p2p_access"):
        m = d.get(key, "missing")
        if m == "missing":
            errs.append("missing %r" % key)
        elif n < 2 and m is not None:
            errs.append("%s should be null with one GPU" % key)
        elif n >= 2 and not (isinstance(m, list) and len(m) == n and
                             all(isinstance(r, list) and len(r) == n for r in m)):
            errs.append("%s is not an %dx%d matrix" % (key, n, n))

for expr in extra:
    try:
        ok = eval(expr, {"d": d})
    except Exception as e:
        ok = False
        errs.append("check %r raised %s" % (expr, e))
    if not ok:
        errs.append("check failed: %s" % expr)
for e in errs:
    print("  " + e)
sys.exit(1 if errs else 0)
EOF
}

# ---------------------------------------------------------------- command line
run help --help
expect_rc help 0
grep -q '^usage: gpuprobe' "$tmp/help.out" || fail "--help: no usage text on stdout"
grep -q -- '--min-d2d-gbps' "$tmp/help.out" || fail "--help does not list the threshold flags"

run version --version
expect_rc version 0
grep -q '^gpuprobe [0-9]' "$tmp/version.out" || fail "--version: unexpected output"

run badflag --bogus
expect_rc badflag 2
grep -q -- "--bogus" "$tmp/badflag.err" || fail "bad flag: stderr does not name it"
[ ! -s "$tmp/badflag.out" ] || fail "bad flag: something on stdout"

for args in "--device abc" "--device 0,0" "--device" "--min-d2d-gbps -1" \
	"--min-fp32-tflops abc" "--max-temp-c" "--quick=1" "--tensor-method fast" \
	"--config $tmp/does-not-exist.conf"; do
	# shellcheck disable=SC2086 # word splitting is the point
	run usage $args
	[ "$(rc_of usage)" = 2 ] || fail "'$args': exit $(rc_of usage), want 2"
	[ -s "$tmp/usage.err" ] || fail "'$args': no message on stderr"
	no_crash usage
done

printf '# thresholds\nmin_d2d_gbps = 100\nbogus_key = 3\n' >"$tmp/bad.conf"
run badconf --config "$tmp/bad.conf"
expect_rc badconf 2
grep -q "bad.conf:3: unknown key 'bogus_key'" "$tmp/badconf.err" ||
	fail "bad config: no file:line message ($(cat "$tmp/badconf.err"))"

printf 'max-temp-c = hot\n' >"$tmp/badval.conf"
run badval --config "$tmp/badval.conf"
expect_rc badval 2
grep -q "badval.conf:1:" "$tmp/badval.err" || fail "bad config value: no file:line message"

# ---------------------------------------------------------------- --self-test
# Synthetic GPU 0 is an H100 SXM with plausible figures (healthy against its
# data-sheet defaults); GPU 1 has an unknown name with a quote, a tab and an
# invalid UTF-8 byte, no NVML, and a wmma tensor figure.
run st --self-test
expect_rc st 0
no_crash st
validate st full \
	'd["synthetic"] is True' \
	'd["gpus"][0]["health"]["datasheet"]["model"] == "H100 SXM"' \
	'd["gpus"][0]["health"]["thresholds"]["min_d2d_gbps"] == {"value": 1675.0, "source": "datasheet"}' \
	'd["gpus"][0]["health"]["thresholds"]["min_h2d_gbps"]["source"] == "pcie"' \
	'd["gpus"][1]["name"] == "Test \"quoted\"\tGPU \ufffd"' \
	'd["gpus"][1]["health"]["datasheet"] is None' \
	'd["gpus"][1]["health"]["thresholds"]["min_fp16_tflops"] is None'

run stc --self-test --compact
expect_rc stc 0
[ "$(wc -l <"$tmp/stc.out")" = 1 ] || fail "--compact: not one line"
validate stc full

run st_d2d --self-test --min-d2d-gbps 5000
expect_rc st_d2d 1
validate st_d2d full 'd["healthy"] is False' \
	'any("d2d bandwidth" in f and "5000" in f for f in d["gpus"][0]["health"]["failures"])' \
	'd["gpus"][0]["health"]["thresholds"]["min_d2d_gbps"]["source"] == "flag"'

# The temperature threshold: GPU 0 reads 61 C, GPU 1 has no NVML (a check
# that cannot be made is a failure).
printf 'max_temp_c = 70\n' >"$tmp/temp.conf"
run st_temp --self-test --config "$tmp/temp.conf"
expect_rc st_temp 1
validate st_temp full 'd["gpus"][0]["health"]["healthy"] is True' \
	'd["gpus"][0]["health"]["thresholds"]["max_temp_c"]["source"] == "config"' \
	'any("temperature not measured" in f for f in d["gpus"][1]["health"]["failures"])'

# Flags win over the config file; 0 disables a default check.
printf 'min_d2d_gbps = 5000\nmin-fp32-tflops = 60\n' >"$tmp/strict.conf"
run st_over --self-test --config "$tmp/strict.conf" --min-d2d-gbps 0 --min-fp32-tflops 1
expect_rc st_over 0
validate st_over full 'd["gpus"][0]["health"]["thresholds"]["min_d2d_gbps"] is None' \
	'd["gpus"][0]["health"]["thresholds"]["min_fp32_tflops"] == {"value": 1.0, "source": "flag"}'
run st_strict --self-test --config "$tmp/strict.conf"
expect_rc st_strict 1
validate st_strict full \
	'sum(len(g["health"]["failures"]) for g in d["gpus"]) == 4'

# ---------------------------------------------------------------- real run
gpu_present=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	gpu_present=1
fi

if [ "$gpu_present" = 1 ]; then
	echo "a GPU is present: running --quick"
	start=$(date +%s)
	run quick --quick --compact
	took=$(( $(date +%s) - start ))
	no_crash quick
	case "$(rc_of quick)" in
	0 | 1) ;;
	*) fail "--quick: exit $(rc_of quick) (stderr: $(head -c 400 "$tmp/quick.err"))" ;;
	esac
	# the budget: --quick <= 3 s per GPU, as the probe measures itself
	validate quick full 'all(g["d2d_gbps"] for g in d["gpus"])' \
		'all(g["fp32_tflops"] for g in d["gpus"])' \
		'all(g["elapsed_s"] <= 3.0 for g in d["gpus"])'
	echo "--quick took ${took}s"
	# Hidden GPUs: the no-GPU answer.
	CUDA_VISIBLE_DEVICES= "$probe" >"$tmp/hidden.out" 2>"$tmp/hidden.err"
	echo $? >"$tmp/hidden.rc"
	expect_rc hidden 3
	validate hidden error
else
	echo "no GPU here: checking the no-GPU answer"
	for mode in "" "--quick" "--compact"; do
		# shellcheck disable=SC2086
		run nogpu $mode
		expect_rc nogpu 3
		no_crash nogpu
		[ ! -s "$tmp/nogpu.err" ] || fail "no GPU ($mode): stderr not empty: $(head -c 300 "$tmp/nogpu.err")"
		validate nogpu error
	done
	cat "$tmp/nogpu.out"
fi

if [ "$fails" -gt 0 ]; then
	echo "probe: $fails failure(s)"
	exit 1
fi
echo "probe: all checks passed"
exit 0
