#!/bin/sh
# no_silent_pools.sh -- a pool short of instances says why (issue 19,
# point 1), locally and through the daemon:
#   1. apply --wait --timeout says the pool still exists, that it is still
#      worked on, and how to destroy it (exit 3);
#   2. a spec no offer can ever match (a GPU model nobody sells, a price
#      limit under every offer) fails apply with exit 1 and the plan's
#      reasons, with or without --wait, and stores nothing;
#   3. a pool whose offers are all cooling down after capacity errors is
#      stored and waits: `status` (table and JSON) and one event say
#      "no candidate: N offers refused by capacity cooldown ...; next
#      attempt T", once per change of reason (or apply), not every pass;
#   4. through the daemon: the same status, refusals (also of a PUT
#      straight to the API) and timeout message; a pool of offers all
#      cooling down is accepted (exit 0) and does not crash the daemon;
#      a stored pool that stops matching (its policy closed) says so in
#      status; the daemon's log gives a reason once, not every pass.
. "$GB_SRC/tests/lib/integration.sh"

# cooldowns outlast the test; reconcile passes every second
export GPUBROKER_FAILOVER_COOLDOWN=120s
export GPUBROKER_RECONCILE_PERIOD=1s
# the test's policies: "gate" lets every offer through until the test
# closes it
export GPUBROKER_INVENTORY="$GB_SRC/examples/demo-inventory.yaml"
mkdir -p "$T/policies"
printf 'return { filter = function(req, offer) return true end }\n' >"$T/policies/gate.lua"
{
	cat "$GB_SRC/examples/cloudsim-broker.yaml"
	echo "policy_path: [$T/policies]"
} >"$T/broker.yaml"
CONF="$T/broker.yaml"
sim_start

waiting_events() { # POOL: its "waiting" events
	gb events --pool "$1" -o json 2>/dev/null | jq '[.[] | select(.kind == "waiting")] | length'
}
COOLDOWN_RE='no candidate: [0-9]+ offers? refused by capacity cooldown \(InsufficientInstanceCapacity\); next attempt 20'

# ---- 1. the --wait timeout (local): an instance that stays pending
sim_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 120000}}}'
write_spec "$T/slow.yaml" wait-slow aws A10G 1
rc=0
gb apply -f "$T/slow.yaml" --auto-approve --wait --timeout 2s >/dev/null 2>"$T/slow.err" || rc=$?
cat "$T/slow.err" | tail -n 3
check "[ $rc = 3 ]" "apply --wait --timeout: exit 3 (got $rc)"
check "grep -q 'pool wait-slow: timed out waiting: 0 of the pool.s instances running' '$T/slow.err'" "the timeout says how far it got"
check "grep -q 'The pool still exists: a daemon on this state (.gpubroker serve.) keeps trying to place it, as does the next apply' '$T/slow.err'" \
	"... that the pool still exists and what keeps trying"
check "grep -q \"'gpubroker destroy wait-slow' removes it\" '$T/slow.err'" "... and how to destroy it"
gb destroy wait-slow --auto-approve >/dev/null 2>&1 || fail "destroy wait-slow"
sim_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 400}}}'

# ---- 2. can never match (local)
PLACE='{colocate: none}' write_spec "$T/gpu.yaml" never-gpu aws MI300X 1
write_spec "$T/price.yaml" never-price aws A10G 1 on-demand "limits: {max_price_per_hour: 0.01}"
never() { # LABEL SPEC REFUSAL ARGS...: apply fails at once with exit 1, the reasons, nothing stored
	_label=$1 _spec=$2 _why=$3
	shift 3
	_rc=0
	_t0=$(date +%s)
	gb apply -f "$_spec" --auto-approve "$@" >"$T/never.out" 2>"$T/never.err" || _rc=$?
	check "[ $_rc = 1 ]" "$_label: apply $* exits 1 (got $_rc)"
	check "[ $(( $(date +%s) - _t0 )) -lt 20 ]" "$_label: ... at once, without waiting"
	check "grep -q 'not applied (nothing stored): no offer can match this spec' '$T/never.err'" \
		"$_label: ... saying no offer can match"
	check "grep -q 'no offer qualifies for pool' '$T/never.err' && grep -q '$_why' '$T/never.err'" \
		"$_label: ... with the plan's reasons ($_why)"
	check "! grep -q 'timed out' '$T/never.err'" "$_label: ... not a timeout"
	_name=$(sed -n 's/^  name: //p' "$_spec")
	check "! gb status '$_name' >/dev/null 2>&1" "$_label: ... and the pool was not stored"
}
never "model nobody sells" "$T/gpu.yaml" "refused by gpu-model"
never "model nobody sells" "$T/gpu.yaml" "refused by gpu-model" --wait --timeout 60s
never "price under every offer" "$T/price.yaml" "refused by price" -q
never "price under every offer" "$T/price.yaml" "refused by price" -q --wait --timeout 60s

# ---- 3. temporarily no capacity (local): stored, waiting, said once
# no room for any EC2 instance
sim_post /_sim/scenario '{"capacity": [{"cloud": "aws", "count": 0}]}'

PLACE='{clouds: [aws], regions: [us-east-1], colocate: none}' write_spec "$T/a.yaml" wait-a aws A10G 2
PLACE='{clouds: [aws], regions: [us-east-1], colocate: none}' write_spec "$T/b.yaml" wait-b aws A10G 2
gb apply -f "$T/a.yaml" --auto-approve >/dev/null 2>"$T/a.err" || :
check "grep -q 'no room left for 2 x g5.xlarge' '$T/a.err'" "wait-a: every zone refused it (every zone now cools down)"
check "grep -q \"The pool still exists: a daemon on this state .* 'gpubroker destroy wait-a' removes it\" '$T/a.err'" \
	"wait-a: apply (exit 1 without --wait) says the pool stays, and how to destroy it"
rc=0
gb apply -f "$T/b.yaml" --auto-approve >/dev/null 2>"$T/b.err" || rc=$?
cat "$T/b.err"
check "! grep -q 'not applied' '$T/b.err'" "wait-b: only cooldowns in the way: not refused as unmatchable"
check "grep -Eq '$COOLDOWN_RE' '$T/b.err'" "wait-b: apply says no candidate is left for the cooldowns, and the next attempt"
gb status wait-b -o json >"$T/b.json"
check "[ \"\$(jq -r .state '$T/b.json')\" = active ]" "wait-b: the pool is stored"
check "jq -e --arg re \"\$COOLDOWN_RE\" '.waiting.reason | test(\$re)' '$T/b.json' >/dev/null" "status -o json: waiting.reason"
check "[ \"\$(jq '.waiting.next_attempt_at - now | floor' '$T/b.json')\" -gt 0 ]" "status -o json: waiting.next_attempt_at in the future"
gb status >"$T/table"
check "grep -Eq '^wait-b: waiting: $COOLDOWN_RE' '$T/table'" "the status table says it"
check "[ \"\$(waiting_events wait-b)\" = 1 ]" "one waiting event"
gb events --pool wait-b >"$T/b.events"
check "grep -Eq 'waiting +$COOLDOWN_RE' '$T/b.events'" "... saying the same"
# an apply starts over (it clears the note and walks at once): it says
# the reason again, once
gb apply -f "$T/b.yaml" --auto-approve >/dev/null 2>&1 || :
check "[ \"\$(waiting_events wait-b)\" = 2 ]" "another apply: one more waiting event"

# ---- 4. through the daemon
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
gb status >"$T/rtable"
check "grep -Eq '^wait-b: waiting: $COOLDOWN_RE' '$T/rtable'" "--server: the status table says it"
gb status -o json >"$T/rall.json"
check "[ \"\$(jq -r '.[] | select(.name == \"wait-b\") | .waiting.reason' '$T/rall.json')\" = \"\$(jq -r .waiting.reason '$T/b.json')\" ]" \
	"--server: status -o json carries the same reason"
gb status wait-b -o json >"$T/rb.json"
check "jq -e --arg re \"\$COOLDOWN_RE\" '.waiting.reason | test(\$re)' '$T/rb.json' >/dev/null" "--server: status NAME -o json too"

# can never match, through the daemon
never "--server, model nobody sells" "$T/gpu.yaml" "refused by gpu-model"
never "--server, model nobody sells" "$T/gpu.yaml" "refused by gpu-model" --wait --timeout 60s
never "--server, price under every offer" "$T/price.yaml" "refused by price" -q --wait --timeout 60s
gb_spec_json "$T/gpu.yaml" >"$T/gpu.json"
code=$(curl -s -o "$T/put.json" -w '%{http_code}' -X PUT -H "Authorization: Bearer $GPUBROKER_TOKEN" \
	-H 'Content-Type: application/json' --data-binary @"$T/gpu.json" "$GPUBROKER_SERVER/v1/pools/never-gpu")
check "[ $code = 422 ] && jq -e '.error.message | test(\"no offer qualifies for pool .never-gpu.\")' '$T/put.json' >/dev/null" \
	"a PUT straight to the API is refused too (422, with the reasons; got $code)"
check "! gb status never-gpu >/dev/null 2>&1" "... and stores nothing"

# temporarily no capacity, through the daemon: accepted, waiting
PLACE='{clouds: [aws], regions: [us-east-1], colocate: none}' write_spec "$T/c.yaml" wait-c aws A10G 1
rc=0
gb apply -f "$T/c.yaml" --auto-approve >/dev/null 2>"$T/c.err" || rc=$?
check "[ $rc = 0 ]" "--server: a pool of offers all cooling down is accepted (got $rc: $(tail -n 2 "$T/c.err"))"
wait_until 10 "gb status wait-c -o json | jq -e --arg re \"\$COOLDOWN_RE\" '.waiting.reason | test(\$re)'" ||
	fail "--server: wait-c should say it waits for the cooldowns: $(gb status wait-c -o json | jq -c .waiting)"
echo "ok: --server: wait-c says it waits for the cooldowns"
check "kill -0 $D_PID" "the daemon is still up (its converge of a kept plan without candidates used to crash it)"
rc=0
gb apply -f "$T/c.yaml" --auto-approve --wait --timeout 3s >/dev/null 2>"$T/c2.err" || rc=$?
cat "$T/c2.err" | tail -n 3
check "[ $rc = 3 ]" "--server: apply --wait --timeout exits 3 (got $rc)"
check "grep -Eq 'pool wait-c: timed out waiting: 0 of 1 instances running; waiting: $COOLDOWN_RE' '$T/c2.err'" \
	"... saying how far it got and why"
check "grep -q \"The pool still exists and the daemon keeps trying to place it; 'gpubroker destroy wait-c' removes it\" '$T/c2.err'" \
	"... that the pool still exists, the daemon keeps trying, and how to destroy it"

# a stored pool no offer can match any more (its policy closed after it
# was placed; then scaled up): its reason is in status and said once --
# one event, one log line -- though every pass converges it
write_spec "$T/gate.yaml" never-later azure T4 1 on-demand "policy: [gate]"
gb apply -f "$T/gate.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/gate.err" ||
	fail "apply never-later: $(tail -n 3 "$T/gate.err")"
printf 'return { filter = function(req, offer) return false, "the gate is closed" end }\n' >"$T/policies/gate.lua"
gb scale never-later 2 >/dev/null 2>&1 || :
NOMATCH_RE='^no offer qualifies \([0-9]+ considered: .*[0-9]+ refused by policy'
wait_until 10 "gb status never-later -o json | jq -e --arg re \"\$NOMATCH_RE\" '.waiting.reason | test(\$re)'" ||
	fail "never-later should say no offer qualifies: $(gb status never-later -o json | jq -c .waiting)"
echo "ok: a stored pool no offer can match says so in status"
check "gb status never-later -o json | jq -e '.waiting.next_attempt_at == null' >/dev/null" "... with no next attempt"
log_lines() { grep -c "$1" "$T/daemon.log" || :; }
n1=$(log_lines "no offer qualifies for pool 'never-later'")
c1=$(log_lines "wait-c: no candidate")
passes() { # reconcile passes the daemon made
	curl -sf -H "Authorization: Bearer $GPUBROKER_TOKEN" "$GPUBROKER_SERVER/metrics" |
		awk '/^gpubroker_reconcile_duration_seconds_count/ {print $2}'
}
p0=$(passes)
wait_until 20 "[ \"\$(passes)\" -ge $((p0 + 4)) ]" || fail "the daemon should make 4 more reconcile passes"
n2=$(log_lines "no offer qualifies for pool 'never-later'")
c2=$(log_lines "wait-c: no candidate")
sed -n '/never-later/p' "$T/daemon.log" | cut -c1-160
check "[ $n1 = 1 ] && [ $n2 = 1 ]" "the daemon log says why never-later cannot be placed once, not every pass ($n1, then $n2)"
check "[ $c2 = $c1 ]" "... and wait-c's reason no more often than it was applied ($c1, then $c2)"
check "[ \"\$(waiting_events never-later)\" = 1 ]" "never-later: one waiting event"
check "[ \"\$(log_lines 'refused by unavailable')\" = 0 ]" "no cooldown is logged as a plan refusal"
gb destroy never-later --auto-approve >/dev/null 2>&1 || fail "destroy never-later"
check "[ \"\$(sim_live)\" = 0 ]" "nothing runs in cloudsim"
echo PASS
