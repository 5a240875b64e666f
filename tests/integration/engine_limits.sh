#!/bin/sh
# engine_limits.sh -- what the engine refuses before any cloud call (team
# GPU quota, team $/h, monthly budget, a pool's own limits), apply --wait
# running out of time, make-before-break replacement after a spec change,
# events --follow on local state, cost --since and --by team, and a
# destroy whose terminate calls all fail.
. "$GB_SRC/tests/lib/integration.sh"

# the example config with a small team "research"
team_limits 4 5 50

sim_start
calls() { # creates cloudsim was asked for so far, on every cloud
	curl -sf "$CONTROL/_sim/counters" |
		jq '[.. | objects | (.RunInstances?, .PutVM?, .["instances.insert"]?, .["instances.bulkInsert"]?) | numbers] | add // 0'
}

# 1. 3 x A10G on aws for 2 h: 3 GPUs, $3.02/h, $6.04 -- inside every limit
#    (without a TTL the budget counts the rest of the month)
write_spec "$T/a.yaml" lim-a aws A10G 3 on-demand "lifecycle: {ttl: 2h}"
gb apply -f "$T/a.yaml" --auto-approve --wait --timeout 60s >"$T/a.out" 2>"$T/a.log" ||
	fail "apply lim-a (inside the limits)"
check "[ \"\$(sim_live lim-a)\" = 3 ]" "lim-a runs 3 instances"
gb status >"$T/status.txt" || fail "status"
check "head -1 $T/status.txt | grep -q '^POOL  *TEAM  *PURPOSE  *STATE  *DESIRED  *RUNNING  *CLOUDS  *\$/H  *AGE  *TTL LEFT$'" \
	"status shows pool, team, purpose, state, desired/running, clouds, \$/h, age, TTL left"
check "awk '\$1 == \"lim-a\" && \$2 == \"research\" && \$4 == \"active\" && \$5 == 3 && \$6 == 3 && \$7 == \"aws\" && \$8 == \"3.02\" && \$10 ~ /^1h5[0-9]m\$/ { ok = 1 } END { exit !ok }' $T/status.txt" \
	"lim-a's row: research, active, 3/3, aws, \$3.02/h, under 2 h left"
c0=$(calls)
check "[ $c0 -ge 1 ]" "cloudsim counted lim-a's create call ($c0)"

# events --follow on the local state: prints what is there, then follows
# (the binary itself in the background, so $! is its pid)
"$GB" -c "$CONF" events --follow >"$T/follow.out" 2>"$T/follow.err" &
FOLLOW=$!
BG_PIDS=$FOLLOW

# 2. two more GPUs would bring the team to 5 of 4
write_spec "$T/b.yaml" lim-b aws A10G 2 on-demand "lifecycle: {ttl: 1h}"
gb apply -f "$T/b.yaml" --auto-approve >"$T/b.out" 2>"$T/b.log" && fail "the GPU quota was not enforced"
check "grep -q 'would bring team research to 5 GPUs, over its quota of 4 (teams\[\].max_gpus' $T/b.log" \
	"the GPU quota refusal says what, how much and which setting"
check "! gb status lim-b >/dev/null 2>&1" "the refused pool was not stored"

# 3. one H100 (\$6.98/h) would bring the team over \$5/h
write_spec "$T/c.yaml" lim-c azure H100 1 on-demand "lifecycle: {ttl: 1h}"
gb apply -f "$T/c.yaml" --auto-approve >"$T/c.out" 2>"$T/c.log" && fail "the team's \$/h limit was not enforced"
check "grep -q 'would bring team research to \$[0-9.]*/h, over its limit of \$5.00/h' $T/c.log" \
	"the team \$/h refusal names the limit"

# 4. the monthly budget: 1 x T4 for a 100 h TTL (\$52.60) is over \$50; 1 h is not
write_spec "$T/d.yaml" lim-d azure T4 1 on-demand "lifecycle: {ttl: 100h}"
gb apply -f "$T/d.yaml" --auto-approve >"$T/d.out" 2>"$T/d.log" && fail "the monthly budget was not enforced"
check "grep -q 'for 100.0 h) would bring team research to \$5[0-9.]* this month, over its budget of \$50.00' $T/d.log" \
	"the budget refusal shows the projection and the budget"
check "grep -q 'set a shorter lifecycle.ttl, shrink the pool or raise teams\[\].monthly_budget' $T/d.log" "and how to fix it"

# 5. a pool's own price cap leaves no candidate
write_spec "$T/e.yaml" lim-e aws A10G 1 on-demand "limits: {max_price_per_hour: 0.5}"
gb apply -f "$T/e.yaml" --auto-approve >"$T/e.out" 2>"$T/e.log" && fail "limits.max_price_per_hour was not enforced"
check "grep -q 'limits.max_price_per_hour \$0.50' $T/e.log" "the pool's own limit is named"
check "[ \"\$(calls)\" = $c0 ]" "none of the refusals made a cloud call"
check "! gb status lim-e >/dev/null 2>&1" "a spec no offer can match is not stored (issue 19)"

write_spec "$T/d1.yaml" lim-d azure T4 1 on-demand "lifecycle: {ttl: 1h}"
gb apply -f "$T/d1.yaml" --auto-approve --wait --timeout 60s >"$T/d1.out" 2>"$T/d1.log" ||
	fail "1 x T4 for 1 h is inside the budget: $(tail -3 "$T/d1.log")"
gb destroy lim-d --auto-approve >/dev/null 2>>"$T/destroy.log" || fail "destroy lim-d"

# 6. --wait runs out of time: instances that stay pending -> exit 3
sim_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 120000}}}'
write_spec "$T/w.yaml" lim-w aws A10G 1 on-demand "lifecycle: {ttl: 1h}"
rc=0
gb apply -f "$T/w.yaml" --auto-approve --wait --timeout 2s >"$T/w.out" 2>"$T/w.log" || rc=$?
check "[ $rc = 3 ]" "apply --wait --timeout 2s exits 3 when instances are still pending (got $rc)"
check "grep -q 'pool lim-w: timed out waiting: 0 of the pool.s instances running' $T/w.log" "and says how far it got"
check "[ \"\$(store_live lim-w)\" = 1 ]" "the pending instance is kept, recorded"
sim_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 300}}}'
gb destroy lim-w --auto-approve >/dev/null 2>>"$T/destroy.log" || fail "destroy lim-w"

# 7. a spec change that the running instances cannot meet (A10G -> L4):
#    make before break -- the new ones are placed, then the old released
ids_before=$(gb status lim-a -o json | jq -r '[.instances[] | select(.state=="running") | .id] | sort | join(" ")')
write_spec "$T/a2.yaml" lim-a aws L4 3 on-demand "lifecycle: {ttl: 2h}"
gb apply -f "$T/a2.yaml" --auto-approve --wait --timeout 60s >"$T/a2.out" 2>"$T/a2.log" ||
	fail "apply of the changed spec: $(tail -3 "$T/a2.log")"
check "grep -q '3 to replace' $T/a2.log" "the diff shows 3 replacements"
gb status lim-a -o json >"$T/a2.json"
check "[ \"\$(jq '[.instances[] | select(.state==\"running\" and .instance_type==\"g6.xlarge\")] | length' $T/a2.json)\" = 3 ]" \
	"3 new L4 instances (g6.xlarge) run"
for id in $ids_before; do
	check "[ \"\$(curl -sf \"\$CONTROL/_sim/instances\" | jq -r --arg id $id '.instances[] | select(.id==\$id) | .state')\" != running ]" \
		"old instance $id was released"
done
gb events --pool lim-a >"$T/a.events" 2>&1
first_created=$(grep -n 'created .*g6.xlarge' "$T/a.events" | head -1 | cut -d: -f1)
first_released=$(grep -n 'replaced (spec changed)' "$T/a.events" | head -1 | cut -d: -f1)
check "[ -n \"$first_created\" ] && [ -n \"$first_released\" ] && [ $first_created -lt ${first_released:-0} ]" \
	"the new instances were created before the old ones were released (make before break)"
wait_until 30 "[ \"\$(sim_live lim-a)\" = 3 ]" || fail "cloudsim still has $(sim_live lim-a) live lim-a instances, want 3"
echo "ok: cloudsim holds exactly the 3 new instances"

# 8. events --follow printed what happened while it ran
wait_until 10 "grep -q 'lim-a.*replaced (spec changed)' $T/follow.out" ||
	fail "events --follow did not print the replacement: $(tail -3 "$T/follow.out")"
echo "ok: events --follow streamed the events as they happened"
kill "$FOLLOW" 2>/dev/null
wait "$FOLLOW" 2>/dev/null
check "grep -q 'lim-a.*created.*g5.xlarge' $T/follow.out && ! grep -q lim-b $T/follow.out" \
	"the followed stream has the first creates and nothing for the refused pool"

# 9. cost --since: an instance that ran 9-10 days ago counts in an
#    unbounded report but not in the last 7 days
gb destroy lim-a --auto-approve >/dev/null 2>>"$T/destroy.log" || fail "destroy lim-a"
/usr/bin/python3 - "$GPUBROKER_STATE" <<'EOF'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
now = int(time.time() * 1000)
day = 86400 * 1000
n = db.execute("UPDATE instances SET launched_ms = ?, running_ms = ?, terminated_ms = ?"
               " WHERE id = (SELECT min(id) FROM instances WHERE instance_type = 'g5.xlarge')",
               (now - 10 * day, now - 10 * day, now - 9 * day)).rowcount
assert n == 1, n
db.commit()
EOF
gb cost -o json >"$T/cost-all.json" || fail "cost"
gb cost --since 7d -o json >"$T/cost-7d.json" || fail "cost --since 7d"
all=$(jq '.total' "$T/cost-all.json")
week=$(jq '.total' "$T/cost-7d.json")
check "awk -v a=$all -v w=$week 'BEGIN { d = a - w; exit !(d > 24 * 1.006 - 0.01 && d < 24 * 1.006 + 0.01) }'" \
	"the aged instance's 24 h x \$1.006 counts without --since and not with --since 7d (all \$$all, 7d \$$week)"
check "[ \"\$(jq \"\$JQ_TIME\"' .since | secs | . > now - 7 * 86400 - 60 and . < now - 7 * 86400 + 60' $T/cost-7d.json)\" = true ]" \
	"the report says where it starts (7 days ago)"
rc=0
gb cost --since yesterday >/dev/null 2>"$T/since.err" || rc=$?
check "[ $rc = 2 ] && grep -q 'expected a duration like' $T/since.err" "a bad --since is a usage error"

# 10. destroy while every terminate call fails: not confirmed, so the
#     instances stay 'terminating' (and billed); a second destroy once the
#     cloud answers again finishes the job.  Team "product" for cost --by team.
write_spec "$T/x.yaml" lim-x aws A10G 2 on-demand "lifecycle: {ttl: 1h}"
sed -i 's/^  team: research$/  team: product/' "$T/x.yaml"
gb apply -f "$T/x.yaml" --auto-approve --wait --timeout 60s >"$T/x.out" 2>"$T/x.log" ||
	fail "apply lim-x: $(tail -3 "$T/x.log")"
sim_post /_sim/scenario '{"error_rates": {"aws": {"TerminateInstances": 1}}}'
rc=0
gb destroy lim-x --auto-approve --timeout 5s >"$T/x-d1.out" 2>"$T/x-d1.log" || rc=$?
check "[ $rc = 1 ] && grep -q '2 instances are not yet confirmed terminated by their cloud' $T/x-d1.log" \
	"destroy says the terminations are not confirmed (exit $rc)"
check "grep -q \"terminate lim-x-0 failed (transient InternalError)\" $T/x-d1.log" "and why, with EC2's code"
check "[ \"\$(sim_live lim-x)\" = 2 ] && [ \"\$(gb status lim-x -o json | jq '[.instances[] | select(.state==\"terminating\")] | length')\" = 2 ]" \
	"both still run in cloudsim and are 'terminating' in the store, not gone"
sim_post /_sim/scenario '{"error_rates": {"aws": {"TerminateInstances": 0}}}'
gb destroy lim-x --auto-approve >"$T/x-d2.out" 2>"$T/x-d2.log" || fail "second destroy of lim-x: $(tail -3 "$T/x-d2.log")"
check "[ \"\$(sim_live lim-x)\" = 0 ]" "the second destroy terminated them"
gb cost --by team -o json >"$T/cost-team.json" || fail "cost --by team"
check "[ \"\$(jq -r '[.groups[].key] | sort | join(\",\")' $T/cost-team.json)\" = product,research ]" \
	"cost --by team has a group per team"
check "jq -e '([.groups[].cost] | add) - .total | fabs < 0.000001' $T/cost-team.json >/dev/null" \
	"the teams add up to the total"
check "jq -e '[.groups[] | select(.key==\"product\")][0] | .instances == 2 and .cost > 0' $T/cost-team.json >/dev/null" \
	"product's group is lim-x's 2 instances"
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
echo PASS
