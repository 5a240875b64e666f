#!/bin/sh
# serving_mix.sh -- a serving pool's spot/on-demand mix and zone spread
# (issue 42 point 2): capacity: {on_demand_base, spot_share} places the
# base and the rest's share on-demand and the share on spot; an inference
# pool spreads over zones by default (at most ceil(n / zones) each); a
# zone whose spot was reclaimed cools down and the replacements go to
# the other zones; validate's errors for the new keys are located, with
# did-you-mean; the list form of capacity still works.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_RECONCILE_PERIOD=1s
export GPUBROKER_INVENTORY="$GB_SRC/examples/demo-inventory.yaml"

sim_start
# --- validate: located errors, suggestions
bad() { # NAME LINE... : validate must fail, stderr in $T/NAME.err
	_n=$1
	shift
	write_spec "$T/$_n.yaml" "$_n" aws A10G 6 on-demand "purpose: inference" "$@"
	sed -i '/^  capacity: \[on-demand\]$/d' "$T/$_n.yaml"
	if gb validate "$T/$_n.yaml" >"$T/$_n.out" 2>"$T/$_n.err"; then
		fail "validate accepted $_n: $(cat "$T/$_n.yaml")"
	fi
}
bad v1 "capacity: {on_demand_base: 2, spot_shar: 0.7}"
check "grep -q 'pool.capacity.spot_shar.*did you mean \"spot_share\"' $T/v1.err || grep -q 'spot_shar.*spot_share' $T/v1.err" \
	"a misspelt mix key gets a suggestion: $(head -1 "$T/v1.err")"
check "grep -q 'v1.yaml:[0-9]*:[0-9]*' $T/v1.err" "and a location"
bad v2 "capacity: {on_demand_base: 2, spot_share: 1.5}"
check "grep -q 'pool.capacity.spot_share' $T/v2.err" "a share over 1 is refused: $(head -1 "$T/v2.err")"
PLACE="{clouds: [aws], spread: zones}" bad v3 "capacity: [spot, on-demand]"
check "grep -q 'pool.placement.spread.*did you mean \"zone\"' $T/v3.err" "a misspelt spread gets a suggestion: $(head -1 "$T/v3.err")"
PLACE="{clouds: [aws], colocate: zone, spread: zone}" bad v4 "capacity: [on-demand]"
check "grep -q 'pool.placement.spread.*choose one' $T/v4.err" "spread with colocate is refused: $(head -1 "$T/v4.err")"
write_spec "$T/ok.yaml" ok-a aws A10G 2 "spot, on-demand" "purpose: inference"
check "gb validate $T/ok.yaml >/dev/null 2>&1" "the list form of capacity still validates"

daemon_start
export GPUBROKER_TOKEN=demo-admin-token
H="Authorization: Bearer $GPUBROKER_TOKEN"
pool() { curl -sf -H "$H" "$GPUBROKER_SERVER/v1/pools/$1"; }
live() { pool "$1" | jq '[.instances[] | select(.state == "running" or .state == "pending")]'; }
events() { curl -sf -H "$H" "$GPUBROKER_SERVER/v1/events?pool=$1&limit=300" | jq -r '.events[] | "\(.kind) \(.message)"'; }

# us-west-2 sells g5.xlarge in 3 zones, spot and on-demand
cat >"$T/mix.yaml" <<EOY
pool:
  name: mix-a
  team: research
  purpose: inference
  count: 6
  gpu: {model: A10G}
  capacity: {on_demand_base: 2, spot_share: 0.5}
  placement: {clouds: [aws], regions: [us-west-2]}
  ssh_keys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3RrZXl0ZXN0a2V5dGVzdGtleXRlc3RrZXk1 test"]
EOY
gb apply -f "$T/mix.yaml" --auto-approve --wait --timeout 60s >"$T/apply.out" 2>"$T/apply.log" ||
	fail "apply mix-a: $(tail -5 "$T/apply.log")"
check "[ \"\$(live mix-a | jq '[.[] | select(.capacity == \"on-demand\")] | length')\" = 4 ]" \
	"base 2 + half of the other 4 on-demand: 4 ($(live mix-a | jq -c '[.[] | .capacity]'))"
check "[ \"\$(live mix-a | jq '[.[] | select(.capacity == \"spot\")] | length')\" = 2 ]" "and 2 on spot"
zones() { live mix-a | jq -c '[group_by(.zone)[] | length] | sort'; }
check "[ \"\$(zones)\" = '[2,2,2]' ]" "6 over 3 zones: 2 in each ($(live mix-a | jq -c '[.[] | .zone]'))"
gb status mix-a -o json | jq -e '.team_budget' >/dev/null || true

# --- reclaim the spot ones of one zone: that zone cools down
z=$(live mix-a | jq -r '[.[] | select(.capacity == "spot")][0].zone')
ids=$(live mix-a | jq -c --arg z "$z" '[.[] | select(.capacity == "spot" and .zone == $z) | .id]')
n=$(echo "$ids" | jq length)
curl -sf -X POST -H 'Content-Type: application/json' -d "{\"ids\": $ids}" "$CONTROL/_sim/reclaim" >/dev/null ||
	fail "cloudsim refused the reclaim"
wait_until 20 "[ \"\$(events mix-a | grep -c '^preempted ')\" -ge $n ]" || fail "the reclaim was not seen ($(events mix-a))"
wait_until 30 "[ \"\$(live mix-a | jq length)\" = 6 ] && [ \"\$(live mix-a | jq '[.[] | select(.state == \"running\")] | length')\" = 6 ]" ||
	fail "the reclaimed instances were not replaced ($(events mix-a | tail -5))"
check "[ \"\$(live mix-a | jq --arg z $z '[.[] | select(.zone == \$z and .capacity == \"spot\")] | length')\" = 0 ]" \
	"no spot replacement went back to the reclaimed zone $z ($(live mix-a | jq -c '[.[] | .zone + "/" + .capacity]'))"
check "[ \"\$(live mix-a | jq '[.[] | select(.capacity == \"on-demand\")] | length')\" = 4 ]" "the mix holds: 4 on-demand ($(events mix-a | tail -12))"
check "[ \"\$(live mix-a | jq '[.[] | select(.capacity == \"spot\")] | length')\" = 2 ]" "and 2 spot, now in the other zones"

# --- the list form, purpose inference: spread over zones by default
# (us-east-2: 3 zones; us-west-2b's spot is cooling down now)
cat >"$T/list.yaml" <<EOY
pool:
  name: list-a
  team: research
  purpose: inference
  count: 3
  gpu: {model: A10G}
  capacity: [spot, on-demand]
  placement: {clouds: [aws], regions: [us-east-2]}
  ssh_keys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3RrZXl0ZXN0a2V5dGVzdGtleXRlc3RrZXk1 test"]
EOY
gb apply -f "$T/list.yaml" --auto-approve --wait --timeout 60s >"$T/apply2.out" 2>"$T/apply2.log" ||
	fail "apply list-a: $(tail -5 "$T/apply2.log")"
check "[ \"\$(live list-a | jq '[.[] | .zone] | unique | length')\" = 3 ]" \
	"an inference pool of 3 with capacity [spot, on-demand] is in 3 zones ($(live list-a | jq -c '[.[] | .zone + "/" + .capacity]'))"
check "[ \"\$(live list-a | jq '[.[] | select(.capacity == \"spot\")] | length')\" = 3 ]" "all on spot, the list's first kind"
echo "PASS"
