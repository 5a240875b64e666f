#!/bin/sh
# scale_wait.sh -- `scale NAME N --wait [--timeout]` waits as `apply
# --wait` does (issue 19, point 6), locally and through a daemon:
#   1. scale up --wait returns once every instance runs: exit 0, the pool
#      as JSON with running == N (and the table with their addresses);
#   2. with instances that take longer to boot than --timeout: exit 3,
#      "timed out waiting", the pool still there;
#   3. --timeout without --wait, or a bad duration: usage errors (exit 2);
#   4. scale-down --wait returns once the cloud confirms the removed
#      instances terminated (issue 40, point 6), exit 3 if not in time.
. "$GB_SRC/tests/lib/integration.sh"

sim_start

scale_wait() { # $1: where (local or daemon), $2: pool
	p=$2
	write_spec "$T/$p.yaml" "$p" aws A10G 1
	gb apply -f "$T/$p.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/a.log" ||
		fail "$1: apply failed: $(cat "$T/a.log")"

	rc=0
	gb scale "$p" 3 --wait --timeout 60s -o json >"$T/s.json" 2>"$T/s.log" || rc=$?
	check "[ $rc = 0 ]" "$1: scale --wait exits 0 (exit $rc: $(cat "$T/s.log"))"
	check "jq -e '.[0].running == 3 and .[0].desired == 3 and ([.[0].instances[] | select(.state == \"running\" and .private_ip != null)] | length) == 3' $T/s.json >/dev/null" \
		"$1: and prints the pool with its 3 instances running, with addresses"
	check "[ \"\$(store_live $p)\" = 3 ] && [ \"\$(sim_live $p)\" = 3 ]" "$1: 3 instances live in the store and the cloud"

	rc=0
	gb scale "$p" 4 --wait >"$T/s.out" 2>"$T/s.log" || rc=$?
	check "[ $rc = 0 ] && [ \"\$(grep -c ' running ' $T/s.out)\" -ge 4 ]" "$1: without --timeout too, the table lists the 4 running instances (exit $rc)"

	# a scale-down waits, as destroy does, until the cloud confirms the
	# removed instances terminated: with a 2 s shutdown, the wait
	# returns once cloudsim has only the 2 kept ones live
	sim_post /_sim/scenario '{"lifecycle": {"aws": {"stopping_ms": 2000}}}'
	t0=$(date +%s%N)
	rc=0
	gb scale "$p" 2 --wait --timeout 60s -o json >"$T/d.json" 2>"$T/d.log" || rc=$?
	el=$((($(date +%s%N) - t0) / 1000000))
	live=$(sim_live "$p")
	check "[ $rc = 0 ]" "$1: scale-down --wait exits 0 (exit $rc: $(cat "$T/d.log"))"
	check "[ $live = 2 ]" "$1: and returns once the 2 removed instances terminated in the cloud ($live live after ${el} ms)"
	check "[ $el -ge 1500 ]" "$1: so it waited for their shutdown (${el} ms of a 2000 ms one)"
	check "jq -e '.[0].running == 2 and ([.[0].instances[] | select(.state != \"running\")] | length) == 0' $T/d.json >/dev/null" \
		"$1: and prints the pool with 2 running and nothing terminating"
	# a shutdown longer than --timeout: exit 3, saying what is left
	sim_post /_sim/scenario '{"lifecycle": {"aws": {"stopping_ms": 5000}}}'
	rc=0
	gb scale "$p" 1 --wait --timeout 2s >/dev/null 2>"$T/d.log" || rc=$?
	check "[ $rc = 3 ] && grep -q '1 instance still terminating' $T/d.log" \
		"$1: a scale-down whose shutdown outlasts --timeout exits 3 and says 1 instance is still terminating (exit $rc: $(cat "$T/d.log"))"
	sim_post /_sim/scenario '{"lifecycle": {"aws": {"stopping_ms": 400}}}'

	# boots that take a minute: --timeout 2s gives up with exit 3
	sim_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 60000}}}'
	rc=0
	gb scale "$p" 5 --wait --timeout 2s >"$T/t.out" 2>"$T/t.log" || rc=$?
	check "[ $rc = 3 ]" "$1: scale --wait --timeout 2s on a slow boot exits 3 (exit $rc: $(cat "$T/t.log"))"
	check "grep -q 'pool $p: timed out waiting' $T/t.log" "$1: and says it timed out waiting"
	check "[ \"\$(gb status $p -o json | jq .desired)\" = 5 ]" "$1: the pool keeps its new size"
	sim_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 400}}}'
	gb destroy "$p" --auto-approve >/dev/null 2>&1 || fail "$1: destroy failed"
}

rc=0
gb scale x 2 --timeout 5m >/dev/null 2>"$T/u.log" || rc=$?
check "[ $rc = 2 ] && grep -q -- '--timeout is for --wait' $T/u.log" "--timeout without --wait is a usage error (exit $rc)"
rc=0
gb scale x 2 --wait --timeout soon >/dev/null 2>"$T/u.log" || rc=$?
check "[ $rc = 2 ] && grep -q 'expected a duration' $T/u.log" "a bad --timeout is a usage error (exit $rc)"

scale_wait local sw-local
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
scale_wait daemon sw-daemon
