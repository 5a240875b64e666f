#!/bin/sh
# engine_faults.sh -- a fault storm: 30% of every API call answered with
# the cloud's 5xx, tight throttling buckets, and "lost responses" (the
# cloud does the work but the answer is a 500).  Pools must converge with
# no duplicates: cloudsim's count per pool == the spec, == the store.
. "$GB_SRC/tests/lib/integration.sh"

sim_start
sim_post /_sim/scenario '{
  "error_rates": {"aws": {"*": 0.3}, "azure": {"*": 0.3}, "gcp": {"*": 0.3}},
  "lost_response": {"aws": {"RunInstances": 0.3}, "azure": {"PutVM": 0.3}, "gcp": {"instances.bulkInsert": 0.3}},
  "throttling": {
    "aws": {"RunInstances": {"capacity": 1, "refill_per_s": 1},
            "Describe": {"capacity": 2, "refill_per_s": 2}},
    "azure": {"writes": {"capacity": 1, "refill_per_s": 1},
              "reads": {"capacity": 3, "refill_per_s": 3}},
    "gcp": {"mutations": {"per_minute": 3, "window_s": 2},
            "reads": {"per_minute": 6, "window_s": 2}}
  }
}'

write_spec "$T/aws.yaml" fs-aws aws A10G 3
write_spec "$T/azure.yaml" fs-azure azure T4 3
write_spec "$T/gcp.yaml" fs-gcp gcp L4 3
{ cat "$T/aws.yaml"; echo ---; cat "$T/azure.yaml"; echo ---; cat "$T/gcp.yaml"; } >"$T/all.yaml"

# Some creates may exhaust their retries and fail over or give up; the
# reconciler (here: apply again) keeps converging.  Never duplicates.
for attempt in 1 2 3 4 5; do
	gb apply -f "$T/all.yaml" --auto-approve --wait --timeout 60s >"$T/apply-$attempt.out" 2>"$T/apply-$attempt.log" && break
	echo "apply attempt $attempt did not fully converge under the storm; applying again. It said:"
	grep -v '^ ' "$T/apply-$attempt.log" | grep -iE 'error|unknown|placed|timed out' | tail -3 | sed 's/^/  | /'
done
for p in fs-aws fs-azure fs-gcp; do
	wait_until 30 "[ \"\$(store_live $p)\" = 3 ] && [ \"\$(sim_live $p)\" = 3 ]" ||
		fail "$p: store $(store_live $p) / cloudsim $(sim_live $p), want exactly 3"
	echo "ok: $p converged to exactly 3 in the store and in cloudsim"
done
curl -sf "$CONTROL/_sim/counters" >"$T/counters.json"
for k in error lost_response throttled; do
	check "[ \"\$(jq '[.. | objects | .[\"$k\"]? // empty | numbers] | add // 0' $T/counters.json)\" -gt 0 ]" \
		"cloudsim really injected '$k' faults"
done
# no duplicates anywhere: every live instance in cloudsim is in the store
gb status -o json >"$T/status.json"
for id in $(curl -sf "$CONTROL/_sim/instances?live=1" | jq -r '.instances[].id'); do
	jq -e --arg id "$id" '[.[].instances[]?.id] | index($id) != null' "$T/status.json" >/dev/null 2>&1 ||
		gb status -o json | jq -e --arg id "$id" '.. | objects | select(.id? == $id)' >/dev/null 2>&1 ||
		fail "cloudsim instance $id is unknown to the store (a duplicate or a leak)"
done
echo "ok: every live cloudsim instance is known to the store"

sim_post /_sim/scenario '{"error_rates": {"aws": {"*": 0}, "azure": {"*": 0}, "gcp": {"*": 0}}, "lost_response": {"aws": {"RunInstances": 0}, "azure": {"PutVM": 0}, "gcp": {"instances.bulkInsert": 0}}}'
for p in fs-aws fs-azure fs-gcp; do
	gb destroy $p --auto-approve >/dev/null 2>>"$T/destroy.log" || fail "destroy $p"
done
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
echo PASS
