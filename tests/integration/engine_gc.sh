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
echo PASS
