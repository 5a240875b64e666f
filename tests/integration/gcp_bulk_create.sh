#!/bin/sh
# gcp_bulk_create.sh -- GCE creates are one instances.bulkInsert with
# minCount = count, refused whole when the zone cannot hold them: on the
# capacity-tight scenario (2 A100 VMs per GCE zone) a co-located pool of 4
# is refused in every zone it tries and nothing is ever made -- no
# instance, not even a terminated one, no bill, no insert or delete call
# -- while a pool of 3 L4s (4 per zone) is made by one bulkInsert.
. "$GB_SRC/tests/lib/integration.sh"

sim_start "$GB_SRC/tests/cloudsim/scenarios/capacity-tight.yaml"
calls() { # OP -> how many GCE OP calls cloudsim answered
	curl -sf "$CONTROL/_sim/counters" | jq --arg op "$1" '.calls.gcp[$op] // 0'
}
made() { # POOL -> GCE instances cloudsim ever made for the pool: its bill
	# lists every one, deleted ones too (GCE forgets a deleted instance)
	curl -sf "$CONTROL/_sim/bill" |
		jq --arg p "$1-" '[.instances[] | select(.cloud == "gcp" and (.id | startswith($p)))] | length'
}

# 1. 4 x A100 in one zone: no GCE zone holds more than 2
PLACE='{clouds: [gcp], colocate: zone}' write_spec "$T/big.yaml" bulk-big gcp A100 4
gb plan -f "$T/big.yaml" -o json >"$T/big.plan" 2>&1 || fail "plan bulk-big: $(cat "$T/big.plan")"
type=$(jq -r '.[0].candidates[0].instance_type' "$T/big.plan")
zones=$(jq '[.[0].candidates[] | select(.cloud == "gcp")] | length' "$T/big.plan")
echo "first choice type $type, $zones gcp candidate(s)"
check "[ \"$type\" = a2-highgpu-1g ]" "the plan asks for a2-highgpu-1g (the scenario's 'a*' rule: 2 per zone)"
gb apply -f "$T/big.yaml" --auto-approve --wait --timeout 60s >"$T/big.out" 2>"$T/big.log" &&
	fail "apply of 4 co-located A100s succeeded although no zone holds more than 2"
check "grep -q ZONE_RESOURCE_POOL_EXHAUSTED $T/big.log" "the refusal names GCE's capacity code"
check "! grep -q rollback $T/big.log" "nothing to roll back"
bulks=$(calls instances.bulkInsert)
echo "cloudsim answered $bulks bulkInsert call(s)"
check "[ $bulks -ge 1 ] && [ $bulks -le $zones ]" "one bulkInsert per zone tried"
check "[ \"\$(made bulk-big)\" = 0 ]" "cloudsim never made an instance of the pool (none in /_sim/bill)"
check "[ \"\$(sim_live bulk-big)\" = 0 ]" "and none is live (/_sim/instances?live=1)"
check "[ \"\$(calls instances.insert)\" = 0 ] && [ \"\$(calls instances.delete)\" = 0 ]" \
	"no per-instance insert, no delete"
check "[ \"\$(curl -sf \"$CONTROL/_sim/counters\" | jq '.faults_by_cloud.gcp.capacity')\" = $bulks ]" \
	"each bulkInsert was a capacity refusal"
gb destroy bulk-big --auto-approve >/dev/null 2>&1 || :

# 2. 3 x L4 fit one zone (every A100 zone is cooling down now): one
#    bulkInsert makes all 3
PLACE='{clouds: [gcp], colocate: zone}' write_spec "$T/small.yaml" bulk-small gcp L4 3
gb apply -f "$T/small.yaml" --auto-approve --wait --timeout 60s -o json >"$T/small.json" 2>"$T/small.log" ||
	fail "apply of 3 co-located L4s failed: $(tail -3 "$T/small.log")"
check "[ \"\$(calls instances.bulkInsert)\" = $((bulks + 1)) ]" "one more bulkInsert for the 3 instances"
check "[ \"\$(sim_live bulk-small)\" = 3 ] && [ \"\$(made bulk-small)\" = 3 ]" "cloudsim made exactly 3"
check "[ \"\$(jq -r '.[0].instances | map(.zone) | unique | length' $T/small.json)\" = 1 ]" "in one zone"
check "[ \"\$(jq -r '[.[0].instances[].name] | sort | join(\",\")' $T/small.json)\" = bulk-small-0,bulk-small-1,bulk-small-2 ]" \
	"named as the engine asked (<pool>-<index>)"
check "[ \"\$(calls instances.insert)\" = 0 ]" "still no per-instance insert"
gb destroy bulk-small --auto-approve >/dev/null 2>&1 || fail "destroy bulk-small"
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
echo PASS
