#!/bin/sh
# fault_storm.sh -- the daemon under the shipped fault-storm scenario
# (tests/cloudsim/scenarios/fault-storm.yaml: 30% of every call of every
# cloud answered 5xx, 5% lost responses on creates and deletes, 50-200 ms
# latency, tight throttling on every API, 2 s EC2 eventual consistency).
# FAULT_POOLS pools spread over aws, azure and gcp are applied at once
# through the API, then some are scaled up and down, then all are
# destroyed -- every step under the storm.  After each step the state DB
# equals cloudsim's truth (tests/reliability/truth.py check): every pool
# at its size, 0 duplicated, 0 leaked, no open intent; at the end nothing
# is live.  cloudsim's counters prove the faults were really injected.
# Env: FAULT_POOLS (9), FAULT_CONVERGE_S (240).
. "$GB_SRC/tests/lib/integration.sh"

NP=${FAULT_POOLS:-9}
CONV=${FAULT_CONVERGE_S:-240}
TRUTH="/usr/bin/python3 $GB_SRC/tests/reliability/truth.py"
[ -x /usr/bin/python3 ] || { echo "SKIP: /usr/bin/python3 is missing"; exit 77; }

export GPUBROKER_RECONCILE_PERIOD=3s
sim_start "$GB_SRC/tests/cloudsim/scenarios/fault-storm.yaml"
daemon_start
export GPUBROKER_TOKEN=demo-ci-token
now() { date +%s; }

clouds="aws azure gcp"
gpus="A10G T4 L4"
: >"$T/pools.txt"
for i in $(seq 1 "$NP"); do
	k=$(( (i - 1) % 3 + 1 ))
	c=$(echo $clouds | cut -d' ' -f$k)
	g=$(echo $gpus | cut -d' ' -f$k)
	n=$(( i % 3 + 2 ))
	write_spec "$T/fs-$i.yaml" "fs-$i" "$c" "$g" "$n"
	echo "fs-$i $n" >>"$T/pools.txt"
done
expect_json() {
	awk 'BEGIN { printf "{" } { printf "%s\"%s\": %d", (NR > 1 ? ", " : ""), $1, $2 }
	     END { print "}" }' "$T/pools.txt" >"$T/expect.json"
}
converged() { $TRUTH check "$GPUBROKER_STATE" "$CONTROL" "$GPUBROKER_BROKER_ID" "$T/expect.json" >"$T/why.txt" 2>&1; }
# the CLI's own calls to the daemon are not faulted; a refused apply
# (e.g. planning while every price source is failing) is retried
apply_retry() { # FILE
	for _a in 1 2 3 4 5; do
		gb apply -f "$1" --auto-approve >/dev/null 2>>"$T/apply.log" && return 0
		sleep 2
	done
	return 1
}

# 1. every pool applied at once
t0=$(now)
pids=""
for i in $(seq 1 "$NP"); do
	apply_retry "$T/fs-$i.yaml" &
	pids="$pids $!"
done
for p in $pids; do wait "$p" || fail "an apply was refused 5 times: $(tail -n 5 "$T/apply.log")"; done
expect_json
wait_until "$CONV" converged || { cat "$T/why.txt"; fail "the pools did not converge under the storm"; }
echo "ok: $NP pools ($(awk '{ s += $2 } END { print s }' "$T/pools.txt") instances) converged under the storm in $(( $(now) - t0 ))s: store == cloudsim, 0 duplicated, 0 leaked"

# 2. scale a third of them up and a third down
t0=$(now)
for i in $(seq 1 "$NP"); do
	case $((i % 3)) in
	0) n=5 ;;
	1) n=1 ;;
	*) continue ;;
	esac
	gb scale "fs-$i" "$n" >/dev/null 2>>"$T/apply.log" || fail "scale fs-$i: $(tail -n 3 "$T/apply.log")"
	sed -i "s/^fs-$i .*/fs-$i $n/" "$T/pools.txt"
done
expect_json
wait_until "$CONV" converged || { cat "$T/why.txt"; fail "the scaled pools did not converge under the storm"; }
echo "ok: scaled up and down under the storm, converged in $(( $(now) - t0 ))s, no duplicates"

# 3. destroy everything, still under the storm
t0=$(now)
pids=""
for i in $(seq 1 "$NP"); do
	gb destroy "fs-$i" --auto-approve >/dev/null 2>>"$T/destroy.log" &
	pids="$pids $!"
	sed -i "s/^fs-$i .*/fs-$i 0/" "$T/pools.txt"
done
for p in $pids; do wait "$p" || fail "a destroy failed under the storm: $(tail -n 5 "$T/destroy.log")"; done
expect_json
wait_until "$CONV" converged || { cat "$T/why.txt"; fail "destroy did not converge under the storm"; }
check "[ \"\$(sim_live)\" = 0 ]" "everything destroyed under the storm in $(( $(now) - t0 ))s; nothing live in cloudsim"

curl -sf "$CONTROL/_sim/counters" >"$T/counters.json"
echo "injected faults: $(jq -c .faults "$T/counters.json")"
for k in error lost_response throttled; do
	check "[ \"\$(jq '.faults.$k // 0' $T/counters.json)\" -gt 0 ]" "cloudsim really injected '$k' faults"
done
calls=$(jq '[.calls[][]] | add' "$T/counters.json")
echo "cloud calls: $calls; 5xx: $(jq .faults.error "$T/counters.json"); throttled: $(jq .faults.throttled "$T/counters.json"); lost responses: $(jq .faults.lost_response "$T/counters.json")"
bill=$(curl -sf "$CONTROL/_sim/bill" | jq -r .total)
ours=$(gb cost -o json | jq -r .total)
echo "bill $bill, ours $ours ($(awk -v a="$bill" -v b="$ours" 'BEGIN { printf "%+.2f%%", (b - a) / a * 100 }'); informational: lost responses and retries move the recorded times)"
daemon_stop
echo PASS
