#!/bin/sh
# onprem_available.sh -- on-prem offers say how many nodes are free (driver
# ABI 1.6, gb_offer.available), and the plan and the engine use it:
#  - `make run`'s burst pool (count 4, colocate none, a lab of 2 nodes) is
#    planned as 2 on-prem + 2 in the cloud, at the sum of the parts, in
#    `plan`, `plan -o json` and apply's plan of change;
#  - the same pool co-located is refused on-prem with the numbers, but a
#    co-located lab pool scaled back up counts its own node as room;
#  - applied, its names run on without gaps (lab-burst-0, -1 on-prem, -2,
#    -3 in the cloud): nothing is asked that cannot be made;
#  - through a daemon whose catalog was read before another pool took a
#    node (2 listed free, 1 is), the names an attempt spent are named in
#    the `partial` event, so a gap in the numbering is explained.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_INVENTORY="$GB_SRC/examples/demo-inventory.yaml"
BURST=$GB_SRC/examples/demo-burst.yaml
sim_start "$GB_SRC/tests/cloudsim/scenarios/demo.yaml"

names() { # POOL CLOUD-FILTER: the pool's instance names, sorted by number
	gb status "$1" -o json | jq -r "[.instances[] | select($2)] |
		sort_by(.name | ltrimstr(\"$1-\") | tonumber) | map(.name) | join(\" \")"
}

echo "== plan: the lab's 2 free nodes, then the cloud"
gb plan -f "$BURST" >"$T/plan.out" 2>"$T/plan.log" || fail "plan failed: $(cat "$T/plan.log")"
cat "$T/plan.out"
check "grep -q '^Chosen: 2 x onprem demo-lab lab-4xa100 on-demand + 2 x azure [a-z0-9]* Standard_NC96ads_A100_v4 on-demand, \$38.18/h for the pool' '$T/plan.out'" \
	"plan: the first choice is 2 on-prem + 2 in the cloud, at the parts' sum"
gb plan -f "$BURST" -o json >"$T/plan.json" || fail "plan -o json failed"
check "jq -e '.[0].placement | map(.count) == [2, 2]' '$T/plan.json' >/dev/null" \
	"plan -o json: placement has two parts of 2"
check "jq -e '.[0].placement[0].cloud == \"onprem\" and .[0].placement[1].cloud == \"azure\"' '$T/plan.json' >/dev/null" \
	"plan -o json: on-prem first, then azure"
check "jq -e '(.[0].placement_price_per_hour * 100 | round) == 3818' '$T/plan.json' >/dev/null" \
	"plan -o json: placement_price_per_hour is 2 x 4.40 + 2 x 14.69"
check "jq -e '.[0].candidates[0].available == 2' '$T/plan.json' >/dev/null" \
	"plan -o json: the on-prem candidate says 2 are free"

echo "== the same pool co-located: the lab cannot hold it"
sed 's/colocate: none/colocate: zone/' "$BURST" >"$T/zone.yaml"
gb plan -f "$T/zone.yaml" --explain >"$T/zone.out" 2>&1 || fail "plan --explain failed: $(cat "$T/zone.out")"
check "grep -q 'onprem demo-lab lab-4xa100 on-demand: only 2 free; the pool needs 4 in one zone' '$T/zone.out'" \
	"plan --explain: the on-prem offer is refused with the numbers"
check "grep -q '^  room  *1\$' '$T/zone.out'" "plan --explain: counted as kind room"
check "grep -q '^Chosen: azure [a-z0-9]* Standard_NC96ads_A100_v4 on-demand, \$58.77/h' '$T/zone.out'" \
	"plan: the co-located pool goes whole to the cloud"

echo "== apply: the plan of change in parts, names without gaps"
gb apply -f "$BURST" --auto-approve --wait --timeout 90s >"$T/apply.out" 2>&1 ||
	fail "the burst pool did not come up"
cat "$T/apply.out"
check "grep -q '^  + create  2 x lab-4xa100 (onprem demo-lab, on-demand, \$4.40/h each)\$' '$T/apply.out'" \
	"apply's plan: 2 x lab-4xa100 on-prem"
check "grep -q '^  + create  2 x Standard_NC96ads_A100_v4 (azure [a-z0-9]*, on-demand, \$14.69/h each)\$' '$T/apply.out'" \
	"apply's plan: 2 x Standard_NC96ads_A100_v4 in an azure region (the cheapest)"
check "grep -q '^Plan: 4 to create, .* \$0.00/h -> \$38.18/h' '$T/apply.out'" \
	"apply's plan: the pool's price is the parts' sum"
check "[ \"\$(names lab-burst '.cloud == \"onprem\"')\" = 'lab-burst-0 lab-burst-1' ]" \
	"the lab's nodes are lab-burst-0 and -1"
check "[ \"\$(names lab-burst '.cloud != \"onprem\"')\" = 'lab-burst-2 lab-burst-3' ]" \
	"the cloud's instances are lab-burst-2 and -3"
gb events --pool lab-burst >"$T/events.out"
check "grep -q 'partial .*onprem/demo-lab lab-4xa100 on-demand had room for 2; the other 2 go to the next candidates\$' '$T/events.out'" \
	"the split is explained"
check "! grep -q 'failover\\|made nothing' '$T/events.out'" "no attempt failed"
gb destroy lab-burst --auto-approve >/dev/null 2>"$T/destroy.log" || fail "destroy failed"

echo "== a co-located lab pool scaled back up: its own node counts as room"
sed 's/colocate: none/colocate: zone/; s/name: lab-burst/name: lab-co/; s/count: 4$/count: 2/; s/clouds: \[onprem, aws, gcp, azure\]/clouds: [onprem]/' \
	"$BURST" >"$T/co.yaml"
gb apply -f "$T/co.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/co.log" ||
	fail "the co-located lab pool did not come up: $(cat "$T/co.log")"
gb scale lab-co 1 >/dev/null 2>>"$T/co.log" || fail "scale to 1 failed: $(cat "$T/co.log")"
gb scale lab-co 2 >/dev/null 2>>"$T/co.log" || fail "scale back to 2 failed: $(cat "$T/co.log")"
check "[ \"\$(names lab-co '.cloud == \"onprem\" and .state == \"running\"')\" = 'lab-co-0 lab-co-2' ]" \
	"1 free + 1 held make room for 2 in one place"
check "! gb events --pool lab-co | grep -q move" "the pool did not move"
gb destroy lab-co --auto-approve >/dev/null 2>>"$T/destroy.log" || fail "destroy failed"

echo "== through a daemon whose catalog says 2 are free when 1 is"
daemon_start
export GPUBROKER_TOKEN=demo-ci-token # team research (examples/cloudsim-broker.yaml)
write_spec "$T/one.yaml" lab-one onprem A100-80GB 1 on-demand
sed -i 's/gpu: {model: A100-80GB}/gpu: {model: A100-80GB, count: 4}/' "$T/one.yaml"
gb apply -f "$T/one.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/one.log" ||
	fail "the one-node pool did not come up: $(cat "$T/one.log")"
sed 's/name: lab-burst/name: lab-stale/' "$BURST" >"$T/stale.yaml"
gb apply -f "$T/stale.yaml" --auto-approve --wait --timeout 90s >"$T/apply2.out" 2>"$T/apply2.log" ||
	fail "the burst pool did not come up through the daemon"
gb events --pool lab-stale >"$T/events2.out"
cat "$T/events2.out"
check "[ \"\$(names lab-stale '.cloud == \"onprem\"')\" = 'lab-stale-0' ]" \
	"the one free node was found by asking for fewer (the refused ask spent no names: on-prem creates are all-or-nothing)"
# the node was lab-burst's before: its creation is still an event
check "grep -q 'created  *created lab-stale-0 lab-4xa100 in demo-lab' '$T/events2.out'" \
	"the re-leased node's creation is in the events"
check "grep -q 'partial .*had room for 1 (2 listed free); the other 3 go to the next candidates\$' '$T/events2.out'" \
	"the split is explained, and no name is said to be spent"
check "[ \"\$(names lab-stale '.cloud != \"onprem\"')\" = 'lab-stale-1 lab-stale-2 lab-stale-3' ]" \
	"the cloud's instances follow on"
check "! grep -q failover '$T/events2.out'" "the partial event says it all: no failover event repeats it"
gb destroy lab-stale --auto-approve >/dev/null 2>>"$T/destroy.log" || fail "destroy failed"
gb destroy lab-one --auto-approve >/dev/null 2>>"$T/destroy.log" || fail "destroy failed"
check "gb nodes -o json | jq -e '[.[] | select(.lease != null)] | length == 0' >/dev/null" "the nodes are free again"
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
echo PASS
