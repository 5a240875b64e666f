#!/bin/sh
# spot_storm.sh -- a Spot pool of SPOT_N instances on each of aws, azure
# and gcp, through the daemon; half of every pool is reclaimed at the
# same instant (POST /_sim/reclaim, fraction 0.5, three pools at once).
# Asserted, per pool and storm:
#   - every reclaimed instance is recorded preempted once (one event,
#     gpubroker_preemptions_total) and replaced: the
#     pool is back to SPOT_N running instances, none of them reclaimed;
#   - the replacements are CREATED within one reconcile period + PASS_S
#     (2 s: the pass itself -- one describe per driver and region, the
#     converge of every pool -- and the create calls) of the reclaim;
#   - the pool is FULL (all running) within period + PASS_S + the time
#     the clouds take to boot them (cloudsim pending_ms 400 + one
#     describe; measured and printed, asserted <= BOOT_S = 3 s);
#   - then: store == cloudsim, 0 leaked, 0 duplicated (truth.py), and
#     the Azure VMs evicted with Deallocate (still billed disks) and GCE
#     instances stopped by preemption are deleted, not left behind.
# Env: SPOT_N (10), SPOT_STORMS (2), SPOT_PERIOD (3: reconcile period, s).
. "$GB_SRC/tests/lib/integration.sh"

N=${SPOT_N:-10}
STORMS=${SPOT_STORMS:-2}
PERIOD=${SPOT_PERIOD:-3}
PASS_S=2
BOOT_S=3
HALF=$(( (N + 1) / 2 ))
TRUTH="/usr/bin/python3 $GB_SRC/tests/reliability/truth.py"
[ -x /usr/bin/python3 ] || { echo "SKIP: /usr/bin/python3 is missing"; exit 77; }

export GPUBROKER_RECONCILE_PERIOD=${PERIOD}s
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-ci-token
now_ms() { date +%s%3N; }

pools="storm-aws storm-azure storm-gcp"
write_spec "$T/storm-aws.yaml" storm-aws aws A10G "$N" spot
write_spec "$T/storm-azure.yaml" storm-azure azure T4 "$N" spot
write_spec "$T/storm-gcp.yaml" storm-gcp gcp L4 "$N" spot
t0=$(now_ms)
for p in $pools; do
	gb apply -f "$T/$p.yaml" --auto-approve --wait --timeout 120s >/dev/null 2>"$T/apply-$p.log" &
	eval "pid_$(echo $p | tr - _)=\$!"
done
for p in $pools; do
	eval "wait \$pid_$(echo $p | tr - _)" || fail "apply $p: $(cat "$T/apply-$p.log")"
done
echo "3 x $N spot instances running after $(( $(now_ms) - t0 )) ms"
echo "{\"storm-aws\": $N, \"storm-azure\": $N, \"storm-gcp\": $N}" >"$T/expect.json"
converged() { $TRUTH check "$GPUBROKER_STATE" "$CONTROL" "$GPUBROKER_BROKER_ID" "$T/expect.json" >"$T/why.txt" 2>&1; }
wait_until 30 converged || { cat "$T/why.txt"; fail "the spot pools did not settle"; }
for p in $pools; do
	check "gb status $p -o json | jq -e '[.instances[] | select(.capacity==\"spot\" and .state==\"running\")] | length == $N' >/dev/null" \
		"$p: $N spot instances running"
done

# full POOL RECLAIMED_FILE: N running, none of them reclaimed
full() {
	gb status "$1" -o json 2>/dev/null | jq -e --slurpfile gone "$2" \
		"[.instances[] | select(.state==\"running\") | .id] as \$up |
		 (\$up | length) == $N and ([\$up[] | select(. as \$i | \$gone[0] | index(\$i))] | length) == 0" >/dev/null
}

# the create time of each cloud, measured at the first apply (issue ->
# the driver's answer: EC2 answers at once, GCE after its operation,
# Azure after the ARM long-running operation, polled every 5 s when ARM
# gives no Retry-After)
for p in $pools; do
	set -- $($TRUTH creates "$GPUBROKER_STATE" "$p" 0)
	eval "create_ms_$(echo $p | tr - _)=$(( $5 - $3 ))"
	echo "$p: the first create of $N took $(( $5 - $3 )) ms"
done

worst_issue=0 worst_full=0
for s in $(seq 1 "$STORMS"); do
	t0=$(now_ms)
	cpids=""
	for p in $pools; do
		curl -sf -X POST -H 'Content-Type: application/json' \
			-d "{\"cloud\": \"any\", \"pool\": \"$p\", \"fraction\": 0.5}" \
			"$CONTROL/_sim/reclaim" >"$T/reclaim-$p.json" &
		cpids="$cpids $!"
	done
	for c in $cpids; do wait "$c" || fail "POST /_sim/reclaim failed"; done
	check "[ \$(cat $T/reclaim-storm-*.json | jq -s 'map(.reclaimed | length) | add') = $((HALF * 3)) ]" \
		"storm $s: cloudsim reclaimed $HALF of each pool within $(( $(now_ms) - t0 )) ms"
	for p in $pools; do
		jq '.reclaimed' "$T/reclaim-$p.json" >"$T/gone-$p.json"
		eval "full_$(echo $p | tr - _)=0"
	done
	# poll every pool together; note when each is full again
	left=3
	deadline=$(( t0 + (2 * PERIOD + PASS_S + BOOT_S + 15) * 1000 ))
	while [ "$left" -gt 0 ] && [ "$(now_ms)" -lt "$deadline" ]; do
		left=0
		for p in $pools; do
			v=full_$(echo $p | tr - _)
			eval "f=\$$v"
			[ "$f" != 0 ] && continue
			if full "$p" "$T/gone-$p.json"; then
				eval "$v=$(( $(now_ms) - t0 ))"
			else
				left=$((left + 1))
			fi
		done
		[ "$left" -gt 0 ] && sleep 0.2
	done
	for p in $pools; do
		u=$(echo $p | tr - _)
		eval "f=\$full_$u; cms=\$create_ms_$u"
		[ "$f" != 0 ] || fail "storm $s: $p not back to $N running: $(gb status $p -o json | jq -c '[.instances[] | {id, state}]')"
		gb events --pool "$p" -o json >"$T/ev.json"
		# every reclaimed instance seen as preempted (once, whatever
		# state it is first seen in: GCE's are often still STOPPING)
		# and replaced
		npre=0
		for id in $(jq -r '.[]' "$T/gone-$p.json"); do
			jq -e --arg id "$id" --argjson t "$t0" \
				"$JQ_TIME"' [.[] | select(.kind=="replace" and .instance==$id and (.time | ms) >= $t)] | length == 1' \
				"$T/ev.json" >/dev/null || fail "storm $s: $p: reclaimed $id was not replaced"
			jq -e --arg id "$id" --argjson t "$t0" \
				"$JQ_TIME"' [.[] | select(.kind=="preempted" and .instance==$id and (.time | ms) >= $t)] | length == 1' \
				"$T/ev.json" >/dev/null && npre=$((npre + 1))
		done
		check "[ $npre = $HALF ]" "storm $s: $p: $HALF reclaimed, each replaced once and recorded preempted once ($npre)"
		preempt=$(jq --argjson t "$t0" "$JQ_TIME"' [.[] | select((.kind=="preempted" or .kind=="replace") and (.time | ms) >= $t) | .time | ms] | min' "$T/ev.json")
		set -- $($TRUTH creates "$GPUBROKER_STATE" "$p" "$t0")
		check "[ $2 = $HALF ]" "storm $s: $p: every reclaimed instance replaced, no more ($2 created in $1 calls)"
		issue=$(( $4 - t0 )) took=$(( $5 - $4 ))
		echo "storm $s: $p: preemption seen after $((preempt - t0)) ms; replacements issued after $issue ms, the create took $took ms; full after $f ms"
		check "[ $issue -le $(( (PERIOD + PASS_S) * 1000 )) ]" \
			"storm $s: $p: replacements issued within one period (${PERIOD}s) + ${PASS_S}s of the reclaim"
		bound=$(( (PERIOD + PASS_S + BOOT_S) * 1000 + cms ))
		check "[ $f -le $bound ]" \
			"storm $s: $p: full again within period + ${PASS_S}s + this cloud's create time (${cms} ms at the first apply) + ${BOOT_S}s boot = $bound ms"
		[ "$issue" -gt "$worst_issue" ] && worst_issue=$issue
		[ "$f" -gt "$worst_full" ] && worst_full=$f
	done
	wait_until 30 converged || { cat "$T/why.txt"; fail "storm $s: store != cloudsim after the replacement"; }
	echo "ok: storm $s: store == cloudsim, 0 leaked, 0 duplicated; evicted VMs cleaned up"
done
echo "worst: replacements issued after ${worst_issue} ms, a pool full after ${worst_full} ms (period ${PERIOD}s)"
npre=$(curl -sf -H "Authorization: Bearer $GPUBROKER_TOKEN" "$GPUBROKER_SERVER/metrics" |
	awk '$1 == "gpubroker_preemptions_total" { print $2 }')
check "[ "$npre" = $((HALF * 3 * STORMS)) ]" "gpubroker_preemptions_total counts each reclaim once ($npre of $((HALF * 3 * STORMS)))"

for p in $pools; do
	gb destroy "$p" --auto-approve >/dev/null 2>>"$T/destroy.log" || fail "destroy $p"
done
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
daemon_stop
echo PASS
