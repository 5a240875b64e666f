#!/bin/sh
# engine_failover.sh -- capacity and quota errors move a pool down its
# plan: the first choice has no room (EC2 InsufficientInstanceCapacity),
# a co-located pool that only partly fits is refused whole and moved
# (GCE bulkInsert, minCount = count: nothing made, nothing to roll back),
# spot falls back to on-demand, a quota
# error fails over to another cloud; every failover is explained.
. "$GB_SRC/tests/lib/integration.sh"

sim_start

first_choice() { # SPEC -> "cloud region zone type capacity"
	gb plan -f "$1" -o json | jq -r '.[0].candidates[0] |
		"\(.cloud) \(.region) \(.zone) \(.instance_type) \(.capacity)"'
}

# 1. EC2: no capacity in the first-choice zone -> the next candidate
PLACE='{clouds: [aws], regions: [us-east-1], colocate: zone}' write_spec "$T/a.yaml" fo-aws aws A10G 2 spot
set -- $(first_choice "$T/a.yaml")
echo "first choice: $*"
sim_post /_sim/scenario "{\"capacity\": [{\"cloud\": \"$1\", \"region\": \"$2\", \"zone\": \"$3\", \"type\": \"$4\", \"market\": \"$5\", \"count\": 0}]}"
gb apply -f "$T/a.yaml" --auto-approve --wait --timeout 60s -o json >"$T/a.json" 2>"$T/a.log" ||
	fail "apply with a full first-choice zone failed"
check "grep -q \"failover.*InsufficientInstanceCapacity in $3\" $T/a.log" \
	"the failover event names EC2's code and the zone"
check "[ \"\$(jq -r '.[0].instances | map(.zone) | unique | length' $T/a.json)\" = 1 ]" \
	"colocate zone: both instances in one zone"
check "[ \"\$(jq -r '.[0].instances[0].zone' $T/a.json)\" != \"$3\" ]" \
	"placed outside the full zone"
check "[ \"\$(sim_live fo-aws)\" = 2 ]" "cloudsim has exactly 2 (nothing half-made in the full zone)"
gb events --pool fo-aws >"$T/a.events"
check "grep -q failover $T/a.events" "the failover is in the event log"
# the cooldown is shared: a second pool skips the full zone without trying
PLACE='{clouds: [aws], regions: [us-east-1], colocate: zone}' write_spec "$T/a2.yaml" fo-aws2 aws A10G 1 spot
gb plan -f "$T/a2.yaml" --explain >"$T/a2.plan" 2>&1 || true
check "grep -q 'marked unavailable: InsufficientInstanceCapacity' $T/a2.plan" \
	"the cooldown is visible to the next plan (shared, with the reason)"
gb destroy fo-aws --auto-approve >/dev/null 2>&1 || fail "destroy fo-aws"

# 2. GCE co-located pool that only partly fits: refused whole (one
#    bulkInsert with minCount = 3), moved whole
PLACE='{clouds: [gcp], regions: [europe-west4, us-central1], colocate: zone}' write_spec "$T/g.yaml" fo-gcp gcp L4 3 on-demand
set -- $(first_choice "$T/g.yaml")
echo "first choice: $*"
sim_post /_sim/scenario "{\"capacity\": [{\"cloud\": \"gcp\", \"region\": \"$2\", \"zone\": \"$3\", \"type\": \"$4\", \"market\": \"on-demand\", \"count\": 1}]}"
gb apply -f "$T/g.yaml" --auto-approve --wait --timeout 90s -o json >"$T/g.json" 2>"$T/g.log" ||
	fail "apply of a co-located pool that does not fit its first zone failed"
check "! grep -q 'rollback' $T/g.log" "nothing was made in the zone with room for one, so nothing to roll back"
check "[ \"\$(curl -sf \"$CONTROL/_sim/bill\" | jq --arg z \"$3\" '[.instances[] | select(.cloud == \"gcp\" and .zone == \$z)] | length')\" = 0 ]" \
	"cloudsim never made an instance in $3 (its bill lists deleted ones too)"
check "grep -q 'failover.*ZONE_RESOURCE_POOL_EXHAUSTED' $T/g.log" "GCE's capacity code is in the failover event"
check "[ \"\$(jq -r '.[0].instances | map(.zone) | unique | length' $T/g.json)\" = 1 ]" \
	"all 3 instances in one zone"
check "[ \"\$(jq -r '.[0].instances[0].zone' $T/g.json)\" != \"$3\" ]" "not in the zone that had room for one"
check "[ \"\$(sim_live fo-gcp)\" = 3 ]" "cloudsim has exactly 3 live"
gb destroy fo-gcp --auto-approve >/dev/null 2>&1 || fail "destroy fo-gcp"

# 3. spot falls back to on-demand when the capacity order allows
sim_post /_sim/scenario '{"capacity": [{"cloud": "azure", "market": "spot", "count": 0}]}'
PLACE='{clouds: [azure], regions: [eastus, westus2], colocate: none}' write_spec "$T/z.yaml" fo-az azure T4 1 "spot, on-demand"
gb apply -f "$T/z.yaml" --auto-approve --wait --timeout 90s -o json >"$T/z.json" 2>"$T/z.log" ||
	fail "spot -> on-demand apply failed"
check "[ \"\$(jq -r '.[0].instances[0].capacity' $T/z.json)\" = on-demand ]" "no spot anywhere: on-demand was used"
check "grep -q 'failover.*spot); failing over to .* on-demand' $T/z.log" "the spot->on-demand failover is explained"
gb destroy fo-az --auto-approve >/dev/null 2>&1 || fail "destroy fo-az"

# 4. quota: the first-choice cloud has no GPU quota -> another cloud
sim_post /_sim/scenario '{"capacity": []}'
write_spec "$T/q.yaml" fo-q "aws, gcp" L4 1
set -- $(first_choice "$T/q.yaml")
echo "first choice: $*"
if [ "$1" = gcp ]; then
	sim_post /_sim/scenario '{"quotas": {"gcp": {"gpus": {"NVIDIA_L4_GPUS": 0}}}}'
	code=QUOTA_EXCEEDED
else
	sim_post /_sim/scenario '{"quotas": {"aws": {"vcpus": {"G": 0}}}}'
	code=VcpuLimitExceeded
fi
gb apply -f "$T/q.yaml" --auto-approve --wait --timeout 90s -o json >"$T/q.json" 2>"$T/q.log" ||
	fail "quota failover apply failed"
check "[ \"\$(jq -r '.[0].instances[0].cloud' $T/q.json)\" != \"$1\" ]" "placed on the other cloud"
check "grep -q \"failover.*$code\" $T/q.log" "the quota code ($code) is in the failover event"
gb destroy fo-q --auto-approve >/dev/null 2>&1 || fail "destroy fo-q"

check "[ \"\$(sim_live)\" = 0 ]" "nothing left running in cloudsim"
echo PASS
