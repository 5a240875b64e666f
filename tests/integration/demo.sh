#!/bin/sh
# demo.sh -- `make run`'s demo (scripts/demo.sh) as a test: cloudsim and
# the daemon as real processes on ephemeral ports, an apply/status/scale/
# spot-reclaim/destroy cycle, nothing left in cloudsim, and gpubroker's
# cost within the demo's bound of cloudsim's bill.  The demo exits 1 on
# any of these failing.
set -u
out=$(mktemp)
trap 'rm -f "$out"' EXIT INT TERM
BUILD=$GB_BUILD timeout 300 sh "$GB_SRC/scripts/demo.sh" >"$out" 2>&1
rc=$?
if [ "$rc" != 0 ]; then
	tail -n 40 "$out"
	echo "FAIL: the demo exited $rc"
	exit 1
fi
grep -q 'Done: nothing leaked; the cost matches' "$out" || {
	tail -n 20 "$out"
	echo "FAIL: the demo did not reach its last step"
	exit 1
}
grep -q 'live instances in cloudsim: 0' "$out" || { echo "FAIL: cloudsim still has live instances"; exit 1; }
# it reads well in a log file: no escape codes, each status table once
# (apply --wait prints it; the spot replacement shows it changed), and the
# cost compared in plain figures with the reason for any difference
if grep -q "$(printf '\033')" "$out"; then
	echo "FAIL: escape codes in the demo's output to a file"
	exit 1
fi
n=$(grep -c '^demo-train  *research' "$out")
[ "$n" = 2 ] || { grep -n '^demo-train  *research' "$out"; echo "FAIL: demo-train's status printed $n times, expected 2 (after apply, after the replacement)"; exit 1; }
n=$(grep -c '^lab-burst  *research' "$out")
[ "$n" = 1 ] || { echo "FAIL: lab-burst's status printed $n times, expected 1"; exit 1; }
grep -Eq '^cloudsim bill \$[0-9]+\.[0-9]{6}, gpubroker cost \$[0-9]+\.[0-9]{6}: \$[0-9]+\.[0-9]{6} apart \(allowed \$[0-9]+\.[0-9]{6}: ' "$out" || {
	grep -n 'bill' "$out"
	echo "FAIL: the cost comparison is not one plain line with its reason"
	exit 1
}
echo "ok: make run's demo: $(grep -c '^.*== ' "$out") steps, nothing leaked, cost within the bill's bound"
echo PASS
