#!/bin/sh
# engine_burst.sh -- one pool across on-prem nodes and the cloud: the two
# lab nodes (local transport) are the cheapest, so they are leased first;
# the rest of the pool bursts to a cloud (`colocate: none`); destroy frees
# the nodes and the cloud instances.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_INVENTORY="$GB_SRC/examples/demo-inventory.yaml"
sim_start
gb apply -f "$GB_SRC/examples/demo-burst.yaml" --auto-approve --wait --timeout 90s -o json \
	>"$T/burst.json" 2>"$T/burst.log" || fail "the burst pool did not come up"
check "[ \"\$(jq '[.[0].instances[] | select(.cloud==\"onprem\")] | length' $T/burst.json)\" = 2 ]" \
	"both lab nodes leased"
check "[ \"\$(jq '[.[0].instances[] | select(.cloud!=\"onprem\")] | length' $T/burst.json)\" = 2 ]" \
	"the other two burst to a cloud"
check "grep -q 'partial.*had room for 2' $T/burst.log" "the split is explained"
check "gb nodes -o json | jq -e '[.[] | select(.lease != null)] | length == 2' >/dev/null" \
	"gpubroker nodes shows both nodes leased"
gb destroy lab-burst --auto-approve >/dev/null 2>"$T/destroy.log" || fail "destroy failed"
check "gb nodes -o json | jq -e '[.[] | select(.lease != null)] | length == 0' >/dev/null" "the nodes are free again"
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
echo PASS
