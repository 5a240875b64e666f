#!/bin/sh
# daemon_watch.sh -- new instances show as running within seconds, not at
# the next reconcile pass: with a 10-minute period, `apply --wait` through
# the daemon still returns as soon as the clouds report the instances
# running, and `destroy --wait` as soon as they confirm the deletes (the
# daemon watches a pool whose new instances are pending or whose destroy
# is unconfirmed).
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_RECONCILE_PERIOD=600s
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-ci-token
# the first reconcile pass runs at start; wait for it to finish so that
# only the watch can see the new instances
sleep 1
for c in aws gcp azure; do
	write_spec "$T/$c.yaml" "watch-$c" "$c" L4 2
	[ "$c" = azure ] && write_spec "$T/$c.yaml" "watch-$c" "$c" A10 2
	t0=$(date +%s)
	gb apply -f "$T/$c.yaml" --auto-approve --wait --timeout 45s -o json >"$T/$c.json" 2>>"$T/apply.log" ||
		fail "$c: apply --wait did not see the instances running (period 600 s): $(tail -3 "$T/apply.log")"
	t1=$(date +%s)
	check "[ \"\$(jq '.[0].running' $T/$c.json)\" = 2 ]" "$c: 2 running after $((t1 - t0)) s with a 600 s reconcile period"
	check "[ \$((t1 - t0)) -le 30 ]" "$c: within 30 s"
	check "jq -e '[.[0].instances[] | select(.private_ip != null or .public_ip != null)] | length == 2' $T/$c.json >/dev/null" \
		"$c: with addresses"
done
for c in aws gcp azure; do
	t0=$(date +%s)
	gb destroy "watch-$c" --auto-approve --timeout 45s >/dev/null 2>>"$T/apply.log" ||
		fail "destroy watch-$c did not see it confirmed (period 600 s): $(tail -3 "$T/apply.log")"
	t1=$(date +%s)
	check "[ \$((t1 - t0)) -le 30 ]" "$c: destroy confirmed after $((t1 - t0)) s with a 600 s reconcile period"
done
check "[ \"\$(sim_live)\" = 0 ]" "nothing left"
echo PASS
