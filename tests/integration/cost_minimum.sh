#!/bin/sh
# cost_minimum.sh -- rollbacks cost what they cost.  Clouds bill each
# instance at least their minimum (EC2, Compute Engine and Lambda: 60 s;
# Azure: none); cloudsim's bill and `gpubroker cost` both do, from their own
# figures (the scenario's billing.<cloud>.minimum_s; the driver's
# billing_minimum_s), and must agree:
#   1. an instance created and destroyed within seconds costs 60 s x its
#      price in /_sim/bill and in `gpubroker cost -o json` (EC2, GCE,
#      Lambda);
#   2. a co-located Azure pool whose first zone has room for fewer than
#      its count is rolled back there and placed elsewhere: `cost --by
#      pool` counts the rolled-back instances (rolled_back) and what they
#      cost (rolled_back_cost, part of cost) -- the bill's entries for
#      those VMs, Azure billing no minimum.
. "$GB_SRC/tests/lib/integration.sh"

sim_start

first_choice() { # SPEC -> {cloud, region, zone, type, market} (a zone may be "")
	gb plan -f "$1" -o json | jq -c '.[0].candidates[0] | {cloud, region,
		zone, type: .instance_type, market: .capacity}'
}

# within A B [EPS]: |A - B| <= EPS (default: a cent)
within() {
	awk -v a="$1" -v b="$2" -v e="${3:-0.01}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= e) }'
}

gb drivers -o json >"$T/drivers.json" 2>"$T/drivers.log" || fail "gpubroker drivers failed"
for c in aws:60 gcp:60 azure:0 lambda:60; do
	check "[ \"\$(jq -r --arg n ${c%:*} '.[] | select(.name == \$n) | .billing_minimum_s' $T/drivers.json)\" = ${c#*:} ]" \
		"gpubroker drivers: ${c%:*} bills at least ${c#*:} s"
done
check "[ \"\$(curl -sf $CONTROL/_sim/bill | jq -c .billing)\" = '{\"aws\":{\"minimum_s\":60},\"azure\":{\"minimum_s\":0},\"gcp\":{\"minimum_s\":60},\"lambda\":{\"minimum_s\":60}}' ]" \
	"cloudsim's bill states the documented minimums"

# ---- 1. seconds-long instances cost the minimum on both sides ----------------
for c in aws:A10G gcp:L4 lambda:A10; do
	cl=${c%:*}
	write_spec "$T/m-$cl.yaml" min-$cl $cl ${c#*:} 1
	gb apply -f "$T/m-$cl.yaml" --auto-approve --wait --timeout 60s >"$T/m-$cl.out" 2>"$T/m-$cl.log" ||
		fail "apply min-$cl failed"
	gb destroy min-$cl --auto-approve >"$T/md-$cl.out" 2>"$T/md-$cl.log" || fail "destroy min-$cl failed"
	curl -sf "$CONTROL/_sim/bill" | jq --arg c $cl '[.instances[] | select(.cloud == $c)]' >"$T/bill-$cl.json"
	check "[ \"\$(jq length $T/bill-$cl.json)\" = 1 ]" "$cl: one billed instance"
	check "jq -e '.[0] | .ended != null and .seconds < 30 and .billed_seconds == 60' $T/bill-$cl.json >/dev/null" \
		"$cl: it lived $(jq '.[0].seconds' "$T/bill-$cl.json") s and is billed 60 s"
	billed=$(jq '.[0].cost' "$T/bill-$cl.json")
	price=$(jq '.[0].price_per_hour' "$T/bill-$cl.json")
	check "within $billed \$(awk -v p=$price 'BEGIN { print p * 60 / 3600 }') 0.000002" \
		"$cl: the bill charges 60 s x \$$price/h = \$$billed"
	ours=$(gb cost -o json | jq --arg p min-$cl '.groups[] | select(.key == $p) | .cost')
	check "within '$ours' $billed" "$cl: gpubroker cost \$$ours = the bill's \$$billed (within a cent)"
done
# a live instance already costs the minimum
write_spec "$T/live.yaml" min-live aws A10G 1
gb apply -f "$T/live.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/live.log" || fail "apply min-live failed"
gb status min-live -o json >"$T/live.json"
price=$(jq '.instances[0].price_per_hour' "$T/live.json")
check "within \"\$(jq '.instances[0].cost' $T/live.json)\" \$(awk -v p=$price 'BEGIN { print p * 60 / 3600 }') 0.000001" \
	"a live instance of a few seconds shows the minimum's cost in status"
gb destroy min-live --auto-approve >/dev/null 2>"$T/live-d.log" || fail "destroy min-live failed"

# ---- 2. an Azure rollback is counted and costs what the bill says ------------
PLACE='{clouds: [azure], colocate: zone}' write_spec "$T/rb.yaml" rb-az azure T4 3 on-demand
fc=$(first_choice "$T/rb.yaml")
echo "first choice: $fc"
[ "$(echo "$fc" | jq -r .cloud)" = azure ] || fail "the first choice of an Azure pool is not on Azure: $fc"
# room for one VM there (the other two fail their allocation)
sim_post /_sim/scenario "{\"capacity\": [$(echo "$fc" | jq -c '. + {count: 1}')]}"
gb apply -f "$T/rb.yaml" --auto-approve --wait --timeout 90s -o json >"$T/rb.json" 2>"$T/rb.log" ||
	fail "apply of a co-located Azure pool that does not fit its first zone failed"
check "grep -q 'rollback' $T/rb.log" "the partial zone was rolled back (event)"
wait_until 20 "[ \"\$(sim_live rb-az)\" = 3 ]" || fail "cloudsim should end with exactly 3 live rb-az VMs"
curl -sf "$CONTROL/_sim/bill" >"$T/rb-bill.json"
# the rolled-back VMs: rb-az's are this test's only Azure VMs, and while
# the pool lives the ones that ended are those the rollback deleted (an
# ARM VM deleted is no longer listed; its bill entry stays)
jq '[.instances[] | select(.cloud == "azure" and .ended != null)]' "$T/rb-bill.json" >"$T/rb-billed.json"
jq -c '.[] | {id, seconds, billed_seconds, cost}' "$T/rb-billed.json"
nbilled=$(jq length "$T/rb-billed.json")
bill_rb=$(jq '[.[].cost] | add // 0' "$T/rb-billed.json")
check "[ $nbilled -ge 1 ]" "cloudsim billed $nbilled rolled-back VM(s): \$$bill_rb"
check "jq -e 'all(.[]; .billed_seconds == .seconds)' $T/rb-billed.json >/dev/null" \
	"Azure bills no minimum: billed_seconds = seconds"
gb cost --by pool -o json >"$T/cost.json"
grp() { # POOL FIELD: that group's field in cost.json
	jq -r --arg k "$1" ".groups[] | select(.key == \$k) | .$2" "$T/cost.json"
}
check "[ \"\$(grp rb-az rolled_back)\" = $nbilled ]" \
	"cost --by pool: rolled_back = $nbilled, the VMs cloudsim billed and deleted"
ours_rb=$(grp rb-az rolled_back_cost)
price=$(jq '.[0].price_per_hour' "$T/rb-billed.json")
# a second of difference between the two clocks would be $price / 3600
check "within '$ours_rb' '$bill_rb' \$(awk -v p=$price -v n=$nbilled 'BEGIN { print n * p / 3600 }')" \
	"rolled_back_cost \$$ours_rb = the bill's \$$bill_rb (within a second's price)"
check "awk -v c=\$(grp rb-az cost) -v r=$ours_rb 'BEGIN { exit !(c > r && r > 0) }'" \
	"the rollback's cost is part of the pool's cost"
check "[ \"\$(jq '[.groups[] | select(.key != \"rb-az\") | .rolled_back] | add' $T/cost.json)\" = 0 ]" \
	"no other pool has a rollback"
gb cost --by pool >"$T/cost.txt"
check "grep -qi 'rolled back' $T/cost.txt && grep -q 'rb-az' $T/cost.txt" "the table has the rollback columns"
cat "$T/cost.txt"
gb destroy rb-az --auto-approve >/dev/null 2>"$T/rb-d.log" || fail "destroy rb-az failed"

# ---- 3. a GCE rollback: each rolled-back instance costs the 60 s minimum ---
# One insert per VM today: the zone's first instance is made, the next
# refused, the one made deleted again within seconds.  (Where creates are
# all-or-nothing, GB_DRV_CAP_ATOMIC_CREATE, the refusal makes nothing:
# then nothing may be counted as rolled back.)
PLACE='{clouds: [gcp], colocate: zone}' write_spec "$T/rg.yaml" rb-gcp gcp L4 3 on-demand
fc=$(first_choice "$T/rg.yaml")
echo "first choice: $fc"
sim_post /_sim/scenario "{\"capacity\": [$(echo "$fc" | jq -c '. + {count: 1}')]}"
gb apply -f "$T/rg.yaml" --auto-approve --wait --timeout 90s >"$T/rg.out" 2>"$T/rg.log" ||
	fail "apply of a co-located GCE pool that does not fit its first zone failed"
curl -sf "$CONTROL/_sim/bill" | jq '[.instances[] | select(.cloud == "gcp" and .ended != null and (.id | startswith("rb-gcp")))]' >"$T/rg-billed.json"
ng=$(jq length "$T/rg-billed.json")
gb cost --by pool -o json >"$T/cost.json"
check "[ \"\$(grp rb-gcp rolled_back)\" = $ng ]" "rb-gcp: rolled_back = $ng, the instances cloudsim billed and deleted"
if grep -q 'rollback' "$T/rg.log"; then
	check "[ $ng -ge 1 ] && jq -e 'all(.[]; .seconds < 30 and .billed_seconds == 60)' $T/rg-billed.json >/dev/null" \
		"rb-gcp: the bill charges each rolled-back instance the 60 s minimum"
	bill_rg=$(jq '[.[].cost] | add' "$T/rg-billed.json")
	check "within \"\$(grp rb-gcp rolled_back_cost)\" $bill_rg 0.00001" \
		"rb-gcp: rolled_back_cost = the bill's \$$bill_rg for them (60 s each)"
else
	check "[ $ng = 0 ]" "rb-gcp: no rollback, nothing billed and deleted"
fi
gb destroy rb-gcp --auto-approve >/dev/null 2>"$T/rg-d.log" || fail "destroy rb-gcp failed"

# ---- the whole bill and the whole cost agree ---------------------------------
bill=$(curl -sf "$CONTROL/_sim/bill" | jq -r .total)
ours=$(gb cost -o json | jq -r .total)
check "within $ours $bill" "gpubroker cost \$$ours = cloudsim's bill \$$bill (within a cent)"

# ---- the daemon's GET /v1/cost hands out the same groups ---------------------
shape='[.groups[] | {key, instances, cost, rolled_back, rolled_back_cost}] | sort_by(.key)'
gb cost --by pool -o json | jq -c "$shape" >"$T/local.json"
daemon_start
GPUBROKER_TOKEN=demo-admin-token gb cost --by pool -o json >"$T/remote.json" 2>"$T/remote.log" ||
	fail "cost through the daemon failed: $(cat "$T/remote.log")"
daemon_stop
unset GPUBROKER_SERVER
check "[ \"\$(jq -c '$shape' $T/remote.json)\" = \"\$(cat $T/local.json)\" ]" \
	"GET /v1/cost: the same groups, rolled_back and rolled_back_cost as local mode"
check "jq -e '[.groups[].rolled_back] | add == $((nbilled + ng))' $T/remote.json >/dev/null" \
	"GET /v1/cost counts the rollbacks ($((nbilled + ng)))"

echo PASS
