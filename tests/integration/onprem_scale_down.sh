#!/bin/sh
# onprem_scale_down.sh -- a scale-down releases the dearest instance first
# (issue 41 point 3): a pool with an AWS instance (older) and an on-prem
# node (newer, cheaper) scaled from 2 to 1 keeps the on-prem node; the
# old rule (newest first) released the node and kept the cloud bill.
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
EOF
export GPUBROKER_INVENTORY="$T/nodes.yaml"
sim_start
spec() { # FILE COUNT CLOUDS
	cat >"$1" <<EOF
pool:
  name: mixed
  team: research
  count: $2
  gpu: {model: A10G}
  capacity: [on-demand]
  placement: {clouds: [$3], colocate: none}
EOF
}
spec "$T/a.yaml" 1 aws
gb apply -f "$T/a.yaml" --auto-approve >"$T/out" 2>&1 || fail "apply aws: $(cat "$T/out")"
spec "$T/b.yaml" 2 "onprem, aws"
gb apply -f "$T/b.yaml" --auto-approve >"$T/out" 2>&1 || fail "apply 2: $(cat "$T/out")"
live() { gb status mixed -o json | jq -r '[.instances[] | select(.state == "running" or .state == "pending") | .cloud] | sort | join(",")'; }
check "[ \"\$(live)\" = aws,onprem ]" "the pool holds an AWS instance and the on-prem node (got $(live))"
gb scale mixed 1 --wait --timeout 60s >"$T/out" 2>&1 || fail "scale: $(cat "$T/out")"
check "[ \"\$(live)\" = onprem ]" "scaled to 1: the on-prem node is kept, the dearer AWS instance released (got $(live))"
check "[ \"\$(sim_live)\" = 0 ]" "nothing runs in cloudsim"
gb destroy mixed --auto-approve >/dev/null 2>&1 || fail "destroy"
echo PASS
