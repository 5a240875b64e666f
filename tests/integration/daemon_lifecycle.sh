#!/bin/sh
# daemon_lifecycle.sh -- what the reconciler does on its own: a pool past
# its TTL is destroyed (counted from creation, also across a daemon
# restart); a pool with no GPU use for idle_timeout is destroyed while
# heartbeats showing use keep another alive; an inference pool idles down
# to its min; a reclaimed spot instance is replaced within one period,
# also when the passes before skipped its pool's converge (steady);
# an orphan carrying the broker id is garbage-collected.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_RECONCILE_PERIOD=2s
PERIOD=2
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-ci-token

state() { gb status --all "$1" -o json 2>/dev/null | jq -r .state; }
reason() { gb status --all "$1" -o json 2>/dev/null | jq -r '.reason // empty'; }

# --- TTL, across a restart ---
write_spec "$T/ttl.yaml" lc-ttl gcp L4 1 on-demand "lifecycle: {ttl: 8s}"
gb apply -f "$T/ttl.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/ttl.log" || fail "apply ttl pool"
daemon_stop
echo "daemon stopped; waiting past the TTL"
sleep 9
daemon_start
wait_until $((PERIOD * 3 + 10)) "[ \"\$(state lc-ttl)\" = destroyed ]" || fail "the TTL pool was not destroyed after the restart"
check "[ \"\$(reason lc-ttl)\" = ttl ]" "TTL counted from creation survived a daemon restart; destroyed with reason ttl"
check "[ \"\$(sim_live lc-ttl)\" = 0 ]" "nothing of it left in cloudsim"
check "gb events --pool lc-ttl | grep -q 'TTL of 8s reached'" "the TTL teardown is an event"

# --- idle: heartbeats with GPU use keep a pool, silence destroys one ---
write_spec "$T/busy.yaml" lc-busy aws A10G 1 on-demand "lifecycle: {idle_timeout: 6s}"
write_spec "$T/quiet.yaml" lc-quiet aws A10G 1 on-demand "lifecycle: {idle_timeout: 6s}"
gb apply -f "$T/busy.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/idle.log" || fail "apply busy"
gb apply -f "$T/quiet.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>>"$T/idle.log" || fail "apply quiet"
busy_id=$(gb status lc-busy -o json | jq -r '.instances[0].id')
for i in 1 2 3 4 5 6; do
	curl -sf -X POST -H "Authorization: Bearer $GPUBROKER_TOKEN" -H 'Content-Type: application/json' \
		-d '{"gpu_util": 0.87}' "$GPUBROKER_SERVER/v1/instances/$busy_id/heartbeat" >/dev/null ||
		fail "heartbeat refused"
	sleep 2
done
check "[ \"\$(state lc-quiet)\" = destroyed ] || [ \"\$(state lc-quiet)\" = destroying ]" "the pool without GPU use was torn down"
check "[ \"\$(reason lc-quiet)\" = idle ]" "with reason idle"
check "[ \"\$(state lc-busy)\" = active ]" "the pool reporting GPU use is kept"
# a heartbeat with the GPUs idle does not count as use
curl -sf -X POST -H "Authorization: Bearer $GPUBROKER_TOKEN" -H 'Content-Type: application/json' \
	-d '{"gpu_util": 0.01}' "$GPUBROKER_SERVER/v1/instances/$busy_id/heartbeat" >/dev/null
wait_until 15 "[ \"\$(state lc-busy)\" = destroyed ]" || fail "the busy pool was not torn down after its GPUs went idle"
echo "ok: an idle heartbeat (1% GPU) does not keep a pool alive"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer $GPUBROKER_TOKEN' -H 'Content-Type: application/json' -d '{\"gpu_util\": 7}' $GPUBROKER_SERVER/v1/instances/$busy_id/heartbeat)\" = 400 ]" \
	"a heartbeat outside 0..1 is refused"

# --- inference pool idles down to its min ---
cat >"$T/inf.yaml" <<YAML
pool:
  name: lc-inf
  team: research
  purpose: inference
  min: 1
  max: 3
  count: 2
  gpu: {model: L4}
  placement: {clouds: [gcp]}
  lifecycle: {idle_timeout: 5s}
YAML
gb apply -f "$T/inf.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/inf.log" || fail "apply inference pool"
wait_until 20 "[ \"\$(gb status lc-inf -o json | jq .desired)\" = 1 ] && [ \"\$(sim_live lc-inf)\" = 1 ]" ||
	fail "the idle inference pool was not scaled to its min"
check "[ \"\$(state lc-inf)\" = active ]" "an idle inference pool scales to min 1 instead of being destroyed"

# --- spot reclaimed -> replaced within one period ---
write_spec "$T/spot.yaml" lc-spot aws A10G 2 spot
gb apply -f "$T/spot.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/spot.log" || fail "apply spot pool"
victim=$(gb status lc-spot -o json | jq -r '.instances[0].id')
# a pass finds every pool steady and settled and skips their converges
# (lc-spot's too): a reclaim must still be replaced
skipped() { curl -sf -H "Authorization: Bearer $GPUBROKER_TOKEN" "$GPUBROKER_SERVER/metrics" |
	sed -n 's/^gpubroker_reconcile_pools{converge="\([a-z]*\)"} \([0-9]*\)$/\1 \2/p' | tr '\n' ' '; }
wait_until $((PERIOD * 4 + 10)) "skipped | grep -Eq 'done 0 skipped [2-9]'" ||
	fail "no pass skipped the converges of the steady pools: $(skipped)"
echo "ok: a pass skipped the converge of every steady pool ($(skipped))"
t0=$(date +%s)
sim_post /_sim/reclaim "{\"ids\": [\"$victim\"]}"
wait_until 30 "gb status lc-spot -o json | jq -e --arg v $victim '[.instances[] | select(.state==\"running\" and .id != \$v)] | length == 2' >/dev/null" ||
	fail "the reclaimed spot instance was not replaced"
t1=$(date +%s)
echo "replaced after $((t1 - t0))s (period ${PERIOD}s)"
created=$(gb events --pool lc-spot -o json | jq -r "$JQ_TIME"' [.[] | select(.kind=="created")] | last | .time | ms')
preempt=$(gb events --pool lc-spot -o json | jq -r "$JQ_TIME"' [.[] | select(.kind=="preempted")] | first | .time | ms')
check "[ \$(( (created - t0 * 1000) )) -le $(( (PERIOD + 2) * 1000 )) ]" \
	"the replacement was created within one period (+2s for the calls) of the reclaim"
check "[ \"\$preempt\" != null ] && [ \$(( created - preempt )) -le 2000 ]" "the preemption was noticed and replaced in the same pass"
check "gb events --pool lc-spot | grep -q 'Server.SpotInstanceTermination'" "EC2's reason is in the events"

# --- orphan GC by the reconciler ---
orphan=$(curl -sf --aws-sigv4 "aws:amz:us-east-1:ec2" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
	-H 'Content-Type: application/x-www-form-urlencoded; charset=utf-8' \
	--data-urlencode Action=RunInstances --data-urlencode Version=2016-11-15 \
	--data-urlencode ImageId=ami-0123456789abcdef0 --data-urlencode InstanceType=g5.xlarge \
	--data-urlencode MinCount=1 --data-urlencode MaxCount=1 \
	--data-urlencode TagSpecification.1.ResourceType=instance \
	--data-urlencode TagSpecification.1.Tag.1.Key=gpubroker-broker --data-urlencode "TagSpecification.1.Tag.1.Value=$GPUBROKER_BROKER_ID" \
	"$AWS_ENDPOINT_URL_EC2/" | sed -n 's:.*<instanceId>\(i-[0-9a-f]*\)</instanceId>.*:\1:p' | head -n 1)
[ -n "$orphan" ] || fail "could not create the orphan"
wait_until $((PERIOD * 4 + 12)) "curl -sf '$CONTROL/_sim/instances?live=1' | jq -e --arg id $orphan '[.instances[] | select(.id==\$id)] | length == 0'" ||
	fail "the reconciler did not collect the orphan"
echo "ok: the reconciler garbage-collected the orphan"
curl -sf -H "Authorization: Bearer $GPUBROKER_TOKEN" "$GPUBROKER_SERVER/metrics" >"$T/metrics.txt"
check "grep -q 'gpubroker_gc_total{action=\"terminated\"} [1-9]' $T/metrics.txt" "the gc shows in /metrics"
# the gc pass looks through the listing its pass's refresh just made of
# aws/us-east-1 (where lc-spot lives, and the orphan was) instead of
# listing it again; every other region of the catalog it lists itself
check "grep -q 'gpubroker_gc_listings_total{source=\"reused\"} [1-9]' $T/metrics.txt" "the gc reused the refresh's listings"
check "grep -q 'gpubroker_gc_listings_total{source=\"listed\"} [1-9]' $T/metrics.txt" "and listed the regions the refresh did not"
check "grep -q 'gpubroker_preemptions_total [1-9]' $T/metrics.txt" "the preemption shows in /metrics"
check "grep -q 'gpubroker_teardowns_total{reason=\"idle\"} [1-9]' $T/metrics.txt" "idle teardowns show in /metrics"

for p in lc-inf lc-spot; do gb destroy $p --auto-approve >/dev/null 2>&1 || fail "destroy $p"; done
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
echo PASS
