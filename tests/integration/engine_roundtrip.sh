#!/bin/sh
# engine_roundtrip.sh -- apply / scale / destroy on each cloud and across
# clouds with the CLI in local mode, against cloudsim as a real process;
# cloudsim's own view is the truth, and the cost must match its bill.
. "$GB_SRC/tests/lib/integration.sh"

sim_start

# one pool per cloud, in one file: the three are applied together
write_spec "$T/aws.yaml" rt-aws aws A10G 2
write_spec "$T/azure.yaml" rt-azure azure T4 2
write_spec "$T/gcp.yaml" rt-gcp gcp L4 2
{ cat "$T/aws.yaml"; echo ---; cat "$T/azure.yaml"; echo ---; cat "$T/gcp.yaml"; } >"$T/all.yaml"

gb apply -f "$T/all.yaml" --auto-approve --wait --timeout 90s -o json >"$T/apply.json" 2>"$T/apply.log" ||
	fail "apply of three pools on three clouds failed"
for c in aws azure gcp; do
	check "[ \"\$(jq --arg p rt-$c '.[] | select(.name==\$p) | .running' $T/apply.json)\" = 2 ]" \
		"rt-$c: 2 instances running after apply --wait"
	check "[ \"\$(sim_live rt-$c)\" = 2 ]" "rt-$c: cloudsim has exactly 2 live instances"
	check "jq -e --arg p rt-$c '[.[] | select(.name==\$p) | .instances[] | select(.private_ip != null)] | length == 2' $T/apply.json >/dev/null" \
		"rt-$c: every instance has an address"
done

# idempotent: the same apply again changes nothing
gb apply -f "$T/all.yaml" --auto-approve >"$T/apply2.out" 2>"$T/apply2.log" || fail "second apply failed"
check "grep -q 'Plan: 0 to create, 0 to replace, 0 to destroy' $T/apply2.log" "re-apply plans no change"
for c in aws azure gcp; do
	check "[ \"\$(sim_live rt-$c)\" = 2 ]" "rt-$c: still exactly 2 in cloudsim after re-apply"
done

# scale up and down (scale-down: newest first)
gb scale rt-gcp 4 >"$T/scale.out" 2>"$T/scale.log" || fail "scale up failed"
check "[ \"\$(sim_live rt-gcp)\" = 4 ]" "rt-gcp scaled up to 4 in cloudsim"
gb scale rt-gcp 1 >"$T/scale2.out" 2>"$T/scale2.log" || fail "scale down failed"
wait_until 20 "[ \"\$(sim_live rt-gcp)\" = 1 ]" || fail "rt-gcp did not shrink to 1 in cloudsim"
echo "ok: rt-gcp scaled down to 1 in cloudsim"
check "gb status rt-gcp -o json | jq -e '[.instances[] | select(.state==\"running\")][0].name == \"rt-gcp-0\"' >/dev/null" \
	"scale-down kept the oldest instance (rt-gcp-0)"

# give the instances some life so the cost comparison is meaningful
sleep 8

for c in aws azure gcp; do
	gb destroy rt-$c --auto-approve >"$T/destroy-$c.out" 2>"$T/destroy-$c.log" ||
		fail "destroy rt-$c failed"
	check "[ \"\$(sim_live rt-$c)\" = 0 ]" "rt-$c: nothing left in cloudsim after destroy"
done
check "[ \"\$(gb status -o json | jq length)\" = 0 ]" "no pools left in the store"
check "[ \"\$(sim_live)\" = 0 ]" "cloudsim has no live instance at all"

# a destroyed pool is gone (issue 31): destroying it again finds no
# pool, which --ignore-not-found lets a clean-up step ignore
rc=0
gb destroy rt-aws --auto-approve >/dev/null 2>"$T/destroy-again.log" || rc=$?
check "[ \$rc = 1 ] && grep -q 'no pool named rt-aws' $T/destroy-again.log" "a second destroy finds no pool (exit $rc)"
gb destroy rt-aws --auto-approve --ignore-not-found >/dev/null 2>&1 || fail "second destroy with --ignore-not-found failed"
echo "ok: with --ignore-not-found it succeeds"

bill=$(curl -sf "$CONTROL/_sim/bill" | jq -r .total)
ours=$(gb cost -o json | jq -r .total)
echo "cloudsim bill: $bill, gpubroker cost: $ours"
check "awk -v a=$bill -v b=$ours 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d / a < 0.005) }'" \
	"cost equals cloudsim's bill within 0.5%"
check "[ \"\$(gb cost --by cloud -o json | jq '.groups | length')\" = 3 ]" "cost --by cloud has the three clouds"
gb events >"$T/events.txt"
check "grep -q 'rt-aws.*created' $T/events.txt && grep -q 'rt-gcp.*terminated' $T/events.txt" \
	"events record creation and termination"
echo PASS
