#!/bin/sh
# onprem_consolidate.sh -- consolidation (issue 41 point 3): a pool that
# burst to AWS while the on-prem node was taken moves onto the node when
# it frees up, make before break (the node is set up before the AWS
# instance is terminated); a pool with lifecycle.consolidate: false
# stays where it is.
. "$GB_SRC/tests/lib/integration.sh"

cat >"$T/nodes.yaml" <<EOF
sites:
  - {name: lab, lat: 50.11, lon: 8.68, jurisdiction: EU, country: DE}
nodes:
  - name: lab-node
    site: lab
    transport: local
    gpus: {model: A10G, count: 1, memory_gb: 24}
    price_per_gpu_hour: 0.05
    setup: echo "setup \$GPUBROKER_POOL" >>"$T/markers"
EOF
export GPUBROKER_INVENTORY="$T/nodes.yaml"
sim_start
spec() { # FILE NAME CLOUDS [LIFECYCLE]
	cat >"$1" <<EOF
pool:
  name: $2
  team: research
  count: 1
  gpu: {model: A10G}
  capacity: [on-demand]
  placement: {clouds: [$3], colocate: none}
${4:-}
EOF
}
live() { gb status "$1" -o json | jq -r '[.instances[] | select(.state == "running" or .state == "pending") | .cloud] | sort | join(",")'; }

spec "$T/holder.yaml" holder onprem
gb apply -f "$T/holder.yaml" --auto-approve >"$T/out" 2>&1 || fail "apply holder: $(cat "$T/out")"
spec "$T/burst.yaml" burst "onprem, aws"
spec "$T/stay.yaml" stay "onprem, aws" "  lifecycle: {consolidate: false}"
gb apply -f "$T/burst.yaml" --auto-approve >"$T/out" 2>&1 || fail "apply burst: $(cat "$T/out")"
gb apply -f "$T/stay.yaml" --auto-approve >"$T/out" 2>&1 || fail "apply stay: $(cat "$T/out")"
check "[ \"\$(live burst)\" = aws ] && [ \"\$(live stay)\" = aws ]" "the node is taken: both pools burst to AWS"

echo "== the node frees up: stay keeps its AWS instance"
gb destroy holder --auto-approve >"$T/out" 2>&1 || fail "destroy holder: $(cat "$T/out")"
gb apply -f "$T/stay.yaml" --auto-approve >"$T/out" 2>&1 || fail "apply stay: $(cat "$T/out")"
check "[ \"\$(live stay)\" = aws ]" "lifecycle.consolidate: false: stay does not move"

echo "== burst moves onto the node, make before break"
gb apply -f "$T/burst.yaml" --auto-approve >"$T/out" 2>&1 || fail "apply burst again: $(cat "$T/out")"
cat "$T/out"
check "[ \"\$(live burst)\" = onprem ]" "burst consolidated onto the on-prem node (got $(live burst))"
check "grep -q 'setup burst' '$T/markers'" "the node was set up for burst"
gb events --pool burst -o json >"$T/ev.json"
check "jq -e '[.[] | select(.kind == \"consolidate\")] | length == 1' '$T/ev.json' >/dev/null" "one consolidate event"
check "[ \"\$(jq -r '[.[] | select(.kind == \"created\" or .kind == \"terminating\") | .kind] | .[-2:] | join(\",\")' '$T/ev.json')\" = created,terminating ]" \
	"make before break: the node's create comes before the AWS instance's termination"
check "gb events --pool burst | grep -q 'consolidate .*moving burst-0 (aws/.*) onto onprem/lab 1xA10G on-demand (\$0.0500/h, owned capacity)'" \
	"the event says what moved where and why"

for p in burst stay; do gb destroy "$p" --auto-approve >/dev/null 2>&1 || fail "destroy $p"; done
check "[ \"\$(sim_live)\" = 0 ]" "nothing runs in cloudsim"
echo PASS
