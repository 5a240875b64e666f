#!/bin/sh
# engine_churn.sh -- no wasted work (issue 17): a colocated pool that no
# zone can hold.
#   A. Per-VM creates (ARM: one PUT per VM): the first zone makes 2 of 4,
#      they are rolled back, and the walk stops there instead of making
#      and deleting 2 more in every region; the pool says why and when it
#      tries again; a second apply inside the backoff makes nothing; the
#      daemon's next partial waits for the backoff and goes to another
#      region; once there is room the pool is placed and the note clears.
#   B. Atomic creates (EC2 RunInstances, MinCount = count): every zone is
#      tried, each refusal makes nothing, the bill stays empty.
. "$GB_SRC/tests/lib/integration.sh"

# A 60 s failover cooldown: the partial backoff starts at 10 s (a sixth)
export GPUBROKER_FAILOVER_COOLDOWN=60s
export GPUBROKER_RECONCILE_PERIOD=1s
sim_start

calls() { # CLOUD API: cloudsim's count of that call
	curl -sf "$CONTROL/_sim/counters" | jq --arg c "$1" --arg a "$2" '.calls[$c][$a] // 0'
}
billed() { # CLOUD: instances the bill lists for that cloud
	curl -sf "$CONTROL/_sim/bill" | jq --arg c "$1" '[.instances[] | select(.cloud == $c)] | length'
}
rollbacks() { # POOL: rollback events
	gb events --pool "$1" -o json 2>/dev/null | jq '[.[] | select(.kind == "rollback")] | length'
}

# ---- A. per-VM: Azure, room for 2 of 4 in every region
sim_post /_sim/scenario '{"capacity": [{"cloud": "azure", "count": 2}]}'
PLACE='{clouds: [azure], regions: [eastus, westus2, westeurope, northeurope], colocate: zone}' \
	write_spec "$T/az.yaml" churn-az azure T4 4
if gb apply -f "$T/az.yaml" --auto-approve >"$T/az1.out" 2>"$T/az1.log"; then
	fail "apply of a pool no zone can hold succeeded"
fi
cat "$T/az1.log"
check "grep -q 'no zone could hold 4 x ' '$T/az1.log'" "apply says no zone could hold the pool"
check "grep -q 'best: 2 in ' '$T/az1.log'" "... and where it came closest (best: 2)"
check "grep -q 'next attempt 20' '$T/az1.log'" "... and when it tries again"
check "[ \"\$(rollbacks churn-az)\" = 1 ]" "exactly one partial attempt was made (one rollback)"
check "[ \"\$(billed azure)\" = 2 ]" "the clouds made 2 VMs in all, not 2 per region"
wait_until 20 "[ \"\$(sim_live churn-az)\" = 0 ]" || fail "the rolled-back VMs should be deleted"
echo "ok: the 2 rolled-back VMs are gone"
gb status churn-az -o json >"$T/az.status"
check "jq -e '.waiting.reason | test(\"no zone could hold 4 x\")' '$T/az.status' >/dev/null" \
	"status carries the reason (waiting.reason)"
check "[ \"\$(jq \"\$JQ_TIME\"' .waiting.next_attempt_at | secs - now | floor' '$T/az.status')\" -gt 0 ]" \
	"status carries a next attempt in the future"
gb events --pool churn-az >"$T/az.events"
check "grep -q 'waiting .*no zone could hold' '$T/az.events'" "a waiting event says it"
gb status >"$T/az.table"
check "grep -q 'churn-az: waiting: no zone could hold' '$T/az.table'" "the status table prints it"

# inside the backoff, applying again makes nothing
puts=$(calls azure PutVM)
gb apply -f "$T/az.yaml" --auto-approve >/dev/null 2>"$T/az2.log" && fail "the second apply should not place the pool"
check "[ \"\$(calls azure PutVM)\" = \"$puts\" ]" "a second apply inside the backoff sent no PUT ($puts before and after)"
check "grep -q 'no zone could hold' '$T/az2.log'" "... and says why"

# the daemon: the next partial waits for the backoff, in another region
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
sleep 3
check "[ \"\$(rollbacks churn-az)\" = 1 ]" "the daemon does not churn inside the backoff"
wait_until 40 "[ \"\$(rollbacks churn-az)\" -ge 2 ]" || fail "the daemon should try again once the backoff ends"
gb events --pool churn-az -o json >"$T/az.ev.json"
jq -r '.[] | select(.kind == "rollback") | .message' "$T/az.ev.json"
check "[ \"\$(jq -r '[.[] | select(.kind == \"rollback\") | .message | capture(\" in (?<r>[a-z0-9]+)\") | .r] | unique | length' '$T/az.ev.json')\" = 2 ]" \
	"the two partial attempts were in two regions (one per region per window)"
check "[ \"\$(jq \"\$JQ_TIME\"' [.[] | select(.kind == \"rollback\") | .time | ms] | ((max - min) / 1000 | floor)' '$T/az.ev.json')\" -ge 9 ]" \
	"the second came after the backoff (10 s)"
check "[ \"\$(billed azure)\" = 4 ]" "4 VMs made in all"
# the budget: 4 made and rolled back = the pool's shortfall, so the next
# attempt waits until the first partial leaves the 60 s window (the
# backoff alone would allow one 20 s after the second, about 30-35 s
# after the first).  The window counts from the create's journal entry,
# a few seconds before its rollback event, hence 45 s here.
first_s=$(jq "$JQ_TIME"' [.[] | select(.kind == "rollback") | .time | ms] | min / 1000 | floor' "$T/az.ev.json")
# (the note is written when the walk that made the second partial ends)
wait_until 20 "gb status churn-az -o json | jq -e '.waiting.reason | test(\"4 instances made\")'" ||
	fail "the note should count the 4 instances made and rolled back"
gb status churn-az -o json >"$T/az.status1"
jq -r .waiting.reason "$T/az.status1"
check "[ \"\$(jq \"\$JQ_TIME\"' .waiting.next_attempt_at | secs' '$T/az.status1')\" -ge $((first_s + 45)) ]" \
	"the rollback budget holds the next attempt until the first partial leaves the window"
# room now: placed at the next attempt, and the note clears
sim_post /_sim/scenario '{"capacity": [{"cloud": "azure", "count": 10}]}'
wait_until 60 "[ \"\$(store_live churn-az)\" = 4 ]" || fail "the pool should be placed once there is room"
gb status churn-az -o json >"$T/az.status2"
check "jq -e '.waiting == null' '$T/az.status2' >/dev/null" "the note is cleared once the pool is whole"
check "[ \"\$(jq -r '.instances | map(.region) | unique | length' '$T/az.status2')\" = 1 ]" "all 4 in one place"
gb destroy churn-az --auto-approve >/dev/null 2>&1 || fail "destroy churn-az"
daemon_stop
unset GPUBROKER_SERVER GPUBROKER_TOKEN

# ---- B. atomic: EC2, room for 2 of 4 in every zone
sim_post /_sim/scenario '{"capacity": [{"cloud": "aws", "count": 2}]}'
PLACE='{clouds: [aws], regions: [us-east-1, us-west-2], colocate: zone}' \
	write_spec "$T/aws.yaml" churn-aws aws A10G 4
runs=$(calls aws RunInstances)
if gb apply -f "$T/aws.yaml" --auto-approve >/dev/null 2>"$T/aws.log"; then
	fail "apply of an EC2 pool no zone can hold succeeded"
fi
cat "$T/aws.log" | head -n 3
tried=$(( $(calls aws RunInstances) - runs ))
check "[ $tried -gt 2 ]" "every zone was tried at once ($tried RunInstances): refusals cost nothing"
check "[ \"\$(billed aws)\" = 0 ]" "nothing billed on EC2"
check "[ \"\$(rollbacks churn-aws)\" = 0 ]" "nothing to roll back"
check "grep -q 'no zone could hold 4 x ' '$T/aws.log'" "the message says no zone could hold it"
gb destroy churn-aws --auto-approve >/dev/null 2>&1 || fail "destroy churn-aws"
check "[ \"\$(sim_live)\" = 0 ]" "nothing left running in cloudsim"
echo PASS
