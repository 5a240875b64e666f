#!/bin/sh
# engine_gc.sh -- instances carrying this broker's id that the store does
# not know (made behind gpubroker's back, here with plain curl and SigV4)
# are found by `gc` and terminated; with --adopt, one whose pool tag names
# an active pool joins that pool.  Instances of another broker are left
# alone.
. "$GB_SRC/tests/lib/integration.sh"

sim_start
# RunInstances signed by curl itself: an independent EC2 client
run_ec2() { # region zone name-tag broker pool
	curl -sf --aws-sigv4 "aws:amz:$1:ec2" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
		-H 'Content-Type: application/x-www-form-urlencoded; charset=utf-8' \
		--data-urlencode Action=RunInstances --data-urlencode Version=2016-11-15 \
		--data-urlencode ImageId=ami-0123456789abcdef0 --data-urlencode InstanceType=g5.xlarge \
		--data-urlencode MinCount=1 --data-urlencode MaxCount=1 \
		--data-urlencode "Placement.AvailabilityZone=$2" \
		--data-urlencode TagSpecification.1.ResourceType=instance \
		--data-urlencode TagSpecification.1.Tag.1.Key=Name --data-urlencode "TagSpecification.1.Tag.1.Value=$3" \
		--data-urlencode TagSpecification.1.Tag.2.Key=gpubroker-broker --data-urlencode "TagSpecification.1.Tag.2.Value=$4" \
		--data-urlencode TagSpecification.1.Tag.3.Key=gpubroker-pool --data-urlencode "TagSpecification.1.Tag.3.Value=$5" \
		"$AWS_ENDPOINT_URL_EC2/" | sed -n 's:.*<instanceId>\(i-[0-9a-f]*\)</instanceId>.*:\1:p' | head -n 1
}

orphan=$(run_ec2 us-east-1 us-east-1a leaked "$GPUBROKER_BROKER_ID" ghost-pool)
foreign=$(run_ec2 us-east-1 us-east-1a theirs someone-else ghost-pool)
[ -n "$orphan" ] && [ -n "$foreign" ] || fail "could not create the test instances with curl"
echo "orphan $orphan, another broker's $foreign"

gb gc -o json >"$T/gc.json" 2>"$T/gc.log" || fail "gc failed"
check "jq -e --arg id $orphan '.[] | select(.id==\$id and .action==\"terminated\")' $T/gc.json >/dev/null" \
	"gc terminated the orphan carrying our broker id"
check "! jq -e --arg id $foreign '.[] | select(.id==\$id)' $T/gc.json >/dev/null" \
	"gc left another broker's instance alone"
wait_until 10 "curl -sf '$CONTROL/_sim/instances?live=1' | jq -e --arg id $orphan '[.instances[] | select(.id==\$id)] | length == 0'" ||
	fail "the orphan is still live in cloudsim"
echo "ok: the orphan is gone from cloudsim"
check "curl -sf '$CONTROL/_sim/instances?live=1' | jq -e --arg id $foreign '[.instances[] | select(.id==\$id)] | length == 1' >/dev/null" \
	"the other broker's instance still runs"
gb events >"$T/events.txt"
check "grep -q \"gc .*orphan $orphan\" $T/events.txt" "the gc is explained in the events"

# --adopt: an orphan tagged with an active pool joins it
write_spec "$T/p.yaml" keep-me aws A10G 1
gb apply -f "$T/p.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply.log" || fail "apply failed"
stray=$(run_ec2 us-east-1 us-east-1a stray "$GPUBROKER_BROKER_ID" keep-me)
[ -n "$stray" ] || fail "could not create the stray instance"
gb gc --adopt -o json >"$T/gc2.json" 2>"$T/gc2.log" || fail "gc --adopt failed"
check "jq -e --arg id $stray '.[] | select(.id==\$id and .action==\"adopted\")' $T/gc2.json >/dev/null" \
	"gc --adopt adopted the stray instance into its pool"
check "gb status keep-me -o json | jq -e --arg id $stray '[.instances[] | select(.id==\$id)] | length == 1' >/dev/null" \
	"the adopted instance is in the pool"
# the pool wants 1 and now has 2: converging (apply) scales it back
gb apply -f "$T/p.yaml" --auto-approve >/dev/null 2>>"$T/apply.log" || fail "re-apply failed"
wait_until 15 "[ \"\$(sim_live keep-me)\" = 1 ]" || fail "the pool did not shrink back to 1"
echo "ok: converge removed the extra instance"
gb destroy keep-me --auto-approve >/dev/null 2>&1 || fail "destroy failed"
check "[ \"\$(sim_live keep-me)\" = 0 ]" "nothing of the pool left"

# a listing that fails is not "no orphans": gc says which region it could
# not look at and exits 1 (after the driver's retries give up)
sim_post /_sim/scenario '{"error_rates": {"gcp": {"instances.aggregatedList": 1}}}'
gb gc -o json >"$T/gc3.json" 2>"$T/gc3.log" && rc=0 || rc=$?
check "[ $rc = 1 ]" "gc exits 1 when a listing fails (exit $rc)"
check "jq -e '[.[] | select(.cloud==\"gcp\" and .action==\"unchecked\" and (.error | length > 0))] | length >= 1' $T/gc3.json >/dev/null" \
	"the gcp listing is reported as unchecked, with its error"
check "grep -q 'gc: incomplete' $T/gc3.log" "and says so on stderr: $(head -c 200 "$T/gc3.log")"
sim_post /_sim/scenario '{"error_rates": {"gcp": {"instances.aggregatedList": 0}}}'
gb gc -o json >"$T/gc4.json" 2>"$T/gc4.log" || fail "gc after the fault: $(cat "$T/gc4.log")"
check "[ \"\$(jq length $T/gc4.json)\" = 0 ]" "listings back: gc complete, no orphans"

# --- orphans go through the journaled terminate of every terminate ---
# A fresh cloud and state: N orphans in one region.  While gc's call is in
# flight (2 s in the cloud) the store already holds their terminate intent
# and their rows (terminating); the N go in one TerminateInstances (EC2
# batches); each orphan gets the events of any terminate and its billing
# ends when the cloud accepted, as cloudsim bills it.  Before, gc called
# the driver directly: no intent, no row, one call per orphan.
sql() { # one row of the state database, fields joined by spaces (read-only)
	/usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, timeout=10)
r = c.execute(sys.argv[2]).fetchone()
print(" ".join(str(x) for x in r) if r else "")' "$GPUBROKER_STATE" "$1"
}
term_calls() {
	curl -sf "$CONTROL/_sim/counters" | jq '.calls.aws.TerminateInstances // 0'
}
live_of() { # ids...: how many of them are live in cloudsim
	curl -sf "$CONTROL/_sim/instances?live=1" |
		jq --arg ids "$*" '[.instances[] | select(.id as $i | $ids | split(" ") | index($i))] | length'
}
sim_post /_sim/reset ''
export GPUBROKER_STATE="$T/journal.db"
N=3
ids=""
for i in $(seq 1 $N); do
	id=$(run_ec2 us-east-1 us-east-1b "leak-$i" "$GPUBROKER_BROKER_ID" "ghost-$i")
	[ -n "$id" ] || fail "could not create orphan $i"
	ids="$ids $id"
done
ids=${ids# }
idlist="'$(echo "$ids" | sed "s/ /','/g")'"
echo "orphans: $ids"
sleep 1 # some billed time
sim_post /_sim/scenario '{"latency": {"aws": {"TerminateInstances": {"base_ms": 2000, "jitter_ms": 0}}}}'
gb gc -o json >"$T/gc5.json" 2>"$T/gc5.log" &
GC_PID=$!
BG_PIDS="$BG_PIDS $GC_PID"
wait_until 10 "[ \"\$(sql \"SELECT count(*) FROM intents WHERE kind='terminate' AND state='open' AND count=$N\")\" = 1 ]" ||
	fail "no open terminate intent for the $N orphans while gc ran: $(sql "SELECT count(*), group_concat(kind) FROM intents")"
check "[ \"\$(live_of $ids)\" = $N ]" "the intent was open before the cloud got the call (all $N orphans still live in cloudsim)"
check "[ \"\$(sql \"SELECT count(*) FROM instances WHERE provider_id IN ($idlist) AND state='terminating' AND terminate_requested_ms=0\")\" = $N ]" \
	"with it, the $N orphans are recorded in the store as terminating, none accepted yet"
intent=$(sql "SELECT id FROM intents WHERE kind='terminate' AND state='open'")
check "[ \"\$(sql \"SELECT count(*) FROM instances WHERE provider_id IN ($idlist) AND pool=(SELECT pool FROM intents WHERE id=$intent)\")\" = $N ]" \
	"the rows are in the intent's pool"
for id in $ids; do
	check "sql \"SELECT detail FROM intents WHERE id=$intent\" | grep -q $id" "the intent names $id"
done
wait "$GC_PID" || fail "gc failed: $(cat "$T/gc5.log")"
check "[ \"\$(term_calls)\" = 1 ]" "the $N orphans went in one TerminateInstances ($(term_calls) calls)"
wait_until 10 "[ \"\$(live_of $ids)\" = 0 ]" || fail "the orphans are still live in cloudsim"
echo "ok: the orphans are gone from cloudsim"
check "[ \"\$(jq --arg ids \"$ids\" '[.[] | select(.action==\"terminated\" and .cloud==\"aws\" and .region==\"us-east-1\" and (.pool | startswith(\"ghost-\")) and (.id as \$i | \$ids | split(\" \") | index(\$i)) and (keys == [\"action\", \"cloud\", \"id\", \"pool\", \"region\"]))] | length' $T/gc5.json)\" = $N ]" \
	"gc's report: the $N rows {cloud, region, id, pool, action: terminated} as before"
check "[ \"\$(sql \"SELECT state, error IS NULL FROM intents WHERE id=$intent\")\" = 'done 1' ]" "the intent is closed done"
check "[ \"\$(sql \"SELECT count(*) FROM instances WHERE provider_id IN ($idlist) AND terminate_requested_ms > 0\")\" = $N ]" \
	"each orphan's accepted time is recorded"
gb status >/dev/null 2>>"$T/gc5.log" || fail "status failed" # a refresh: confirms
gb events -o json >"$T/events5.json"
for id in $ids; do
	check "jq -e --arg id $id '[.[] | select(.instance==\$id and .kind==\"terminating\")] | length == 1' $T/events5.json >/dev/null" \
		"$id: a 'terminating' event, as for any terminate"
	check "jq -e --arg id $id '[.[] | select(.instance==\$id and .kind==\"terminated\")] | length == 1' $T/events5.json >/dev/null" \
		"$id: a 'terminated' event once the cloud confirms"
	check "jq -e --arg id $id '[.[] | select(.instance==\$id and .kind==\"gc\" and (.message | test(\"orphan .* terminated\$\")))] | length == 1' $T/events5.json >/dev/null" \
		"$id: the gc event explains it"
done
check "[ \"\$(sql \"SELECT count(*) FROM instances WHERE provider_id IN ($idlist) AND state='terminated' AND terminated_ms=terminate_requested_ms\")\" = $N ]" \
	"billing ended when the cloud accepted the terminate"
/usr/bin/python3 "$GB_SRC/tests/reliability/truth.py" costdiff "$GPUBROKER_STATE" "$CONTROL" 300 300 >"$T/costdiff.txt" && crc=0 || crc=$?
cat "$T/costdiff.txt"
check "[ $crc = 0 ]" "each orphan billed once, at its price, start and end within 0.3 s of cloudsim's bill"
gb gc -o json >"$T/gc6.json" 2>>"$T/gc5.log" || fail "gc again failed"
check "[ \"\$(jq length $T/gc6.json)\" = 0 ]" "a second gc finds nothing"

# a terminate the cloud refuses: the orphan stays recorded (terminating,
# nothing accepted), so it is no longer unknown to the store -- the next
# gc sends it again rather than forgetting it
sim_post /_sim/scenario '{"latency": {"aws": {"TerminateInstances": {"base_ms": 0, "jitter_ms": 0}}}, "error_rates": {"aws": {"TerminateInstances": 1}}}'
stuck=$(run_ec2 us-east-1 us-east-1b leak-stuck "$GPUBROKER_BROKER_ID" ghost-stuck)
[ -n "$stuck" ] || fail "could not create the orphan"
gb gc -o json >"$T/gc8.json" 2>"$T/gc8.log" || fail "gc (a refused terminate is no gc failure): $(cat "$T/gc8.log")"
check "jq -e --arg id $stuck '[.[] | select(.id==\$id and .action==\"terminate-failed\")] | length == 1' $T/gc8.json >/dev/null" \
	"a refused terminate is reported terminate-failed"
check "[ \"\$(sql \"SELECT state, terminate_requested_ms FROM instances WHERE provider_id='$stuck'\")\" = 'terminating 0' ] && [ \"\$(live_of $stuck)\" = 1 ]" \
	"it is recorded, terminating, nothing accepted, still live in cloudsim"
gb events -o json >"$T/events8.json"
check "jq -e --arg id $stuck '[.[] | select(.instance==\$id and .kind==\"error\" and (.message | test(\"terminate .* failed\")))] | length >= 1' $T/events8.json >/dev/null" \
	"with the error event of any failed terminate"
sim_post /_sim/scenario '{"error_rates": {"aws": {"TerminateInstances": 0}}}'
gb gc -o json >"$T/gc9.json" 2>"$T/gc9.log" || fail "gc after the fault: $(cat "$T/gc9.log")"
check "jq -e --arg id $stuck '[.[] | select(.id==\$id and .action==\"terminated\")] | length == 1' $T/gc9.json >/dev/null" \
	"the next gc sends it again: terminated"
wait_until 10 "[ \"\$(live_of $stuck)\" = 0 ]" || fail "$stuck is still live in cloudsim"
check "[ \"\$(sql \"SELECT count(*) FROM instances WHERE provider_id='$stuck'\")\" = 1 ]" "still one row for it"
sim_post /_sim/scenario '{"latency": {"aws": {"TerminateInstances": {"base_ms": 2000, "jitter_ms": 0}}}}'

# a gc killed while its call is in flight: the next start resolves the
# open intent as any terminate's, by describe (the instances carry no
# pool tag of the intent's pool): they are seen terminated, not sent
# again, and billing ends at the journal time
crash=$(run_ec2 us-east-1 us-east-1b leak-crash "$GPUBROKER_BROKER_ID" ghost-crash)
[ -n "$crash" ] || fail "could not create the orphan"
calls0=$(term_calls)
"$GB" -c "$CONF" gc -o json >"$T/gc7.json" 2>"$T/gc7.log" & # its own pid
GC_PID=$!
BG_PIDS="$BG_PIDS $GC_PID"
wait_until 10 "[ \"\$(sql \"SELECT count(*) FROM intents WHERE kind='terminate' AND state='open'\")\" = 1 ]" ||
	fail "no open terminate intent for the orphan"
sleep 0.5 # the call is in flight (2 s in the cloud)
kill -KILL "$GC_PID"
wait "$GC_PID" 2>/dev/null || true
wait_until 10 "[ \"\$(term_calls)\" = $((calls0 + 1)) ]" || fail "the killed gc's call never reached cloudsim"
wait_until 5 "[ \"\$(live_of $crash)\" = 0 ]" || fail "cloudsim did not terminate $crash"
check "[ \"\$(sql \"SELECT count(*) FROM intents WHERE state='open'\")\" = 1 ]" "the killed gc left its intent open"
gb status >/dev/null 2>>"$T/gc7.log" || fail "status (recovery) failed"
check "[ \"\$(sql \"SELECT count(*) FROM intents WHERE state='open'\")\" = 0 ]" "the next start resolved the intent"
check "[ \"\$(term_calls)\" = $((calls0 + 1)) ]" "the recovery saw $crash terminated and did not send it again"
check "[ \"\$(sql \"SELECT state, terminate_requested_ms = (SELECT created_at FROM intents WHERE detail LIKE '%$crash%' ORDER BY id LIMIT 1) FROM instances WHERE provider_id='$crash'\")\" = 'terminated 1' ]" \
	"its billing ended at the journal time, as for any interrupted terminate"
echo PASS
