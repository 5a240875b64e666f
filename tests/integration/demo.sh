#!/bin/sh
# demo.sh -- `make run`'s demo (scripts/demo.sh) as a test: cloudsim and
# the daemon as real processes on ephemeral ports, an apply/status/scale/
# spot-reclaim/destroy cycle, nothing left in cloudsim, and gpubroker's
# cost within the demo's bound of cloudsim's bill.  The demo exits 1 on
# any of these failing.  It runs as `make run KEEP_RUNNING=1` does: once
# done, its daemon stays up (the console answers at the URL it printed,
# with the demo's pools) until a signal, and then nothing is left running.
set -u
out=$(mktemp)
demo_pid=""
trap '[ -n "$demo_pid" ] && kill -TERM "$demo_pid" 2>/dev/null; rm -f "$out"' EXIT INT TERM
BUILD=$GB_BUILD KEEP_RUNNING=1 timeout 300 sh "$GB_SRC/scripts/demo.sh" >"$out" 2>&1 &
demo_pid=$!
i=0
while [ $i -lt 600 ] && kill -0 "$demo_pid" 2>/dev/null &&
	! grep -q 'stay up until Ctrl-C' "$out"; do
	sleep 0.5
	i=$((i + 1))
done
if grep -q 'stay up until Ctrl-C' "$out"; then
	url=$(sed -n 's|^  web console:  \(http://[^ ]*\)/ .*|\1|p' "$out")
	dpid=$(pgrep -f "gpubroker -c $GB_SRC/examples/cloudsim-broker.yaml serve" | head -n 1)
	[ -n "$url" ] || { tail -n 20 "$out"; echo "FAIL: no console URL in the kept demo's last lines"; exit 1; }
	curl -sf "$url/" | grep -qi '<html' || { echo "FAIL: the kept daemon's console at $url/ does not answer"; exit 1; }
	n=$(curl -sf -H "Authorization: Bearer demo-ci-token" "$url/v1/events?pool=demo-train" | jq '[.events[] | select(.kind == "failover" or .kind == "replace")] | length')
	[ "${n:-0}" -ge 2 ] || { echo "FAIL: the kept daemon does not give the demo's failover and replacement events (got ${n:-none})"; exit 1; }
	echo "ok: make run KEEP_RUNNING=1 keeps the daemon up: its console answers at $url/, with the demo's failover and replacement events"
	kill -TERM "$demo_pid" # as Ctrl-C would (a background job ignores SIGINT)
	i=0
	while [ $i -lt 40 ] && kill -0 "$demo_pid" 2>/dev/null; do sleep 0.5; i=$((i + 1)); done
	if [ -n "$dpid" ] && kill -0 "$dpid" 2>/dev/null; then
		echo "FAIL: the daemon (pid $dpid) still runs after the kept demo was stopped"
		exit 1
	fi
fi
wait "$demo_pid"
rc=$?
demo_pid=""
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
