#!/bin/sh
# terminate_times.sh -- the start and end of billing the store records
# for each instance are the cloud's own: the start is the creation time
# the cloud reports (to the ms: GCE creationTimestamp, ARM timeCreated,
# EC2 launchTime), not when the create call began (a fresh CLI first
# fetches an OAuth token, Azure checks the VM name: ~1 s earlier here);
# the end is when that instance's own terminate call returned, not when
# the first of a batch began (GCE and Azure delete one instance per
# request; the engine sends them in parallel, one call each; EC2 ends a
# batch with one TerminateInstances).  With 300-400 ms per cloud call, a
# pool of 5 per cloud is applied and destroyed: every instance's start
# and end must be within 0.3 s of cloudsim's bill (before: starts 1 s,
# ends up to 1.5 s off) and the total within 0.5%.
. "$GB_SRC/tests/lib/integration.sh"

TRUTH="/usr/bin/python3 $GB_SRC/tests/reliability/truth.py"
sim_start
sim_post /_sim/scenario '{"latency": {"aws": {"*": {"base_ms": 300, "jitter_ms": 100}}, "gcp": {"*": {"base_ms": 300, "jitter_ms": 100}}, "azure": {"*": {"base_ms": 300, "jitter_ms": 100}}}}'
for c in gcp azure aws; do
	g=L4
	[ "$c" = azure ] && g=A10
	write_spec "$T/$c.yaml" "tt-$c" "$c" "$g" 5
	gb apply -f "$T/$c.yaml" --auto-approve >>"$T/apply.log" 2>&1 || fail "apply tt-$c: $(tail -3 "$T/apply.log")"
done
sleep 2
for c in gcp azure aws; do
	gb destroy "tt-$c" --auto-approve >>"$T/apply.log" 2>&1 || fail "destroy tt-$c"
done
check "[ \"\$(sim_live)\" = 0 ]" "nothing left"
$TRUTH costdiff "$GPUBROKER_STATE" "$CONTROL" 300 300 >"$T/costdiff.txt" && crc=0 || crc=$?
head -n 8 "$T/costdiff.txt"
grep '^largest\|^BAD' "$T/costdiff.txt" || true
check "[ $crc = 0 ]" "15 instances: each billed once, at its price, start and end within 0.3 s of cloudsim's bill"
bill=$(curl -sf "$CONTROL/_sim/bill" | jq -r .total)
ours=$(gb cost -o json | jq -r .total)
check "awk -v a=$bill -v b=$ours 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d / a < 0.005) }'" \
	"cost $ours equals cloudsim's bill $bill within 0.5%"
echo PASS
