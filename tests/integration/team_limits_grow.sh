#!/bin/sh
# team_limits_grow.sh -- the team's $/h limit and monthly budget hold on
# every path that adds capacity, not only on apply (issue 30, point 2).
# Before, scale-ups were checked against the GPU quota only (a pool price
# of 0): product ($200/h) scaled 1 x p5 to 8 ($440/h), research (budget
# $500,000) scaled 1 to 20 after 20 was refused on apply, and a demand
# signal of 8 grew an autoscaled pool to $440/h without an event.  Now,
# through a real daemon (examples/cloudsim-broker.yaml's teams), with
# p5.48xlarge in us-east-1 ($55.04/h on demand, $20.99 spot):
#   - scale over the $/h limit: refused, nothing made; under it: done;
#   - scale over the monthly budget (TTL 500 h, so the projection does
#     not depend on today's date): refused; apply of 20 refused alike;
#   - a demand signal over the limit: an autoscale-refused event, the
#     pool keeps its size;
#   - a failover to a dearer candidate (spot full, on-demand over the
#     limit): the walk asks no cloud for it, the pool says why it waits.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_INVENTORY=${GPUBROKER_INVENTORY:-$GB_SRC/examples/demo-inventory.yaml}
export GPUBROKER_RECONCILE_PERIOD=1s
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
H="Authorization: Bearer $GPUBROKER_TOKEN"
api() { # METHOD PATH [BODY]
	if [ $# -ge 3 ]; then
		curl -sf -X "$1" -H "$H" -H 'Content-Type: application/json' -d "$3" "$GPUBROKER_SERVER$2"
	else
		curl -sf -X "$1" -H "$H" "$GPUBROKER_SERVER$2"
	fi
}
desired() { api GET "/v1/pools/$1" | jq -r .desired; }
events() { api GET "/v1/events?pool=$1&limit=200" | jq -r '.events[] | "\(.kind) \(.message)"'; }
creates() { curl -sf "$CONTROL/_sim/counters" | jq '[.. | objects | .RunInstances? | numbers] | add // 0'; }

# p5 NAME TEAM COUNT CAPACITY [extra lines]: 8 x H100 on aws us-east-1
p5() {
	_n=$1 _t=$2 _k=$3 _c=$4
	shift 4
	{
		echo "pool:"
		echo "  name: $_n"
		echo "  team: $_t"
		echo "  count: $_k"
		echo "  gpu: {model: H100, count: 8}"
		echo "  capacity: [$_c]"
		echo "  placement: {clouds: [aws], regions: [us-east-1], colocate: none}"
		echo "  ssh_keys: [\"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3RrZXl0ZXN0a2V5dGVzdGtleXRlc3RrZXk1 test\"]"
		for _l in "$@"; do echo "  $_l"; done
	} >"$T/$_n.yaml"
}

# 1. product ($200/h): 1 x p5 ($55/h), then scale to 8 ($440/h)
p5 tl-p product 1 on-demand
gb apply -f "$T/tl-p.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/p.log" || fail "apply tl-p: $(cat "$T/p.log")"
check "[ \"\$(sim_live tl-p)\" = 1 ]" "tl-p runs 1 x p5"
c0=$(creates)
gb scale tl-p 8 >"$T/s8.out" 2>&1 && fail "scale tl-p to 8 (\$440/h) was accepted: $(cat "$T/s8.out")"
check "grep -q 'would bring team product to \$440.32/h, over its limit of \$200.00/h' $T/s8.out" \
	"scale to 8: refused over the \$/h limit: $(grep -o 'pool tl-p would.*' "$T/s8.out" | head -1)"
check "[ \"\$(desired tl-p)\" = 1 ] && [ \"\$(creates)\" = $c0 ] && [ \"\$(sim_live tl-p)\" = 1 ]" \
	"nothing changed: desired 1, no create, 1 live"
gb scale tl-p 3 >"$T/s3.out" 2>&1 || fail "scale tl-p to 3 (\$165/h) refused: $(cat "$T/s3.out")"
wait_until 30 "[ \"\$(sim_live tl-p)\" = 3 ]" || fail "tl-p never reached 3"
echo "ok: scale to 3 (\$165.12/h, under the limit) is done"

# 2. research (monthly budget $500,000): 20 x p5 for 500 h is $550,400
p5 tl-r research 20 on-demand "lifecycle: {ttl: 500h}"
gb apply -f "$T/tl-r.yaml" --auto-approve >"$T/r20.out" 2>&1 && fail "apply of 20 x p5 for 500 h accepted"
check "grep -q 'over its budget of \$500000.00' $T/r20.out" "apply of 20: refused over the monthly budget"
p5 tl-r research 1 on-demand "lifecycle: {ttl: 500h}"
gb apply -f "$T/tl-r.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/r.log" || fail "apply tl-r: $(cat "$T/r.log")"
gb scale tl-r 20 >"$T/r20s.out" 2>&1 && fail "scale tl-r to 20 was accepted (the budget was skipped)"
check "grep -q 'would bring team research to \$[0-9.]* this month, over its budget of \$500000.00' $T/r20s.out" \
	"1, then scale to 20: refused as the apply was: $(grep -o 'pool tl-r (.*' "$T/r20s.out" | head -1 | cut -c1-150)"
check "[ \"\$(desired tl-r)\" = 1 ]" "tl-r keeps 1"
gb destroy tl-r --auto-approve >/dev/null 2>&1 || fail "destroy tl-r"

# 3. a demand signal over product's limit: tl-p has $165/h; an
# autoscaled pool of 1 x p5 ($220/h in all) may not grow to 8
gb destroy tl-p --auto-approve >/dev/null 2>&1 || fail "destroy tl-p"
p5 tl-as product 1 on-demand "purpose: inference" "min: 1" "max: 8" "autoscale: {gpu_util_target: 0.5}"
gb apply -f "$T/tl-as.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/as.log" || fail "apply tl-as: $(cat "$T/as.log")"
api POST /v1/pools/tl-as/demand '{"desired": 8, "for": "1m"}' >/dev/null || fail "demand to tl-as refused"
wait_until 15 "events tl-as | grep -q '^autoscale-refused demand signal 8 .*: 1 -> 8 refused: .*over its limit of \\\$200.00/h'" ||
	fail "the demand's refusal is not an autoscale-refused event ($(events tl-as | tail -5))"
echo "ok: $(events tl-as | grep autoscale-refused | head -1 | cut -c1-200)"
check "[ \"\$(desired tl-as)\" = 1 ] && [ \"\$(sim_live tl-as)\" = 1 ]" "tl-as keeps its 1 instance"
gb destroy tl-as --auto-approve >/dev/null 2>&1 || fail "destroy tl-as"

# 4. failover to a dearer candidate: 4 x p5 spot ($84/h) is inside
# product's limit, but spot is full and on demand they are $220/h
sim_post /_sim/scenario '{"capacity": [{"cloud": "aws", "market": "spot", "count": 0}]}'
p5 tl-f product 4 "spot, on-demand"
ondemand() { curl -sf "$CONTROL/_sim/bill" | jq '[.instances[] | select(.capacity == "on-demand")] | length'; }
od0=$(ondemand)
gb apply -f "$T/tl-f.yaml" --auto-approve --wait --timeout 20s >"$T/f.out" 2>&1 && fail "tl-f was placed: $(cat "$T/f.out")"
wait_until 15 "events tl-f | grep -q \"^waiting .*left out by the team's limits: pool tl-f would bring team product to \\\$220.16/h\"" ||
	fail "no waiting event says the team's limits left the dearer candidates out ($(events tl-f | tail -5))"
echo "ok: $(events tl-f | grep '^waiting' | head -1 | cut -c1-200)"
check "gb status tl-f -o json | jq -r .waiting | grep -q \"team's limits\"" "the pool's waiting reason says so too"
check "[ \"\$(sim_live tl-f)\" = 0 ]" "no on-demand instance was made over the limit (was: 4 at \$220/h)"
check "[ \"\$(ondemand)\" = $od0 ]" "cloudsim was never asked for one (its bill lists every allocation)"
echo "PASS: team_limits_grow"
