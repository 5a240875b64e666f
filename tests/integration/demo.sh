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
echo "ok: make run's demo: $(grep -c '^.*== ' "$out") steps, nothing leaked, cost within the bill's bound"
echo PASS
