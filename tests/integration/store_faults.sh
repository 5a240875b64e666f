#!/bin/sh
# store_faults.sh -- the short store fault sweep (issue 29), SQLite:
# three pools of 2, 2 and 1 instances on cloudsim; the store is made to
# fail at one statement at a time (GB_STORE_FAULT, HACKING.md) during
# `scale` (down: every statement) and `destroy` (every 4th) of one pool,
# and
# after every fault: no instance of another pool was terminated, the
# command failed saying the state store failed (or it did its job), and
# after a recovery run cloudsim's live instances are the journal's
# (tests/lib/store_faults.sh).  First issue 29's own case: `scale a 2`
# with the pool's SELECT after the UPDATE failing.  Before the fix the
# zeroed row was converged as every pool at desired 0: b and c went from
# 2 and 1 to 0 live instances and scale exited 0.
# The whole sweep (apply, scale up, reconcile, gc, both backends):
# tests/reliability/store_faults_full.sh.
. "$GB_SRC/tests/lib/integration.sh"
. "$GB_SRC/tests/lib/store_faults.sh"

sim_start
sf_setup

# issue 29: scale a 2 (its size already); the 2nd read of a's row fails
SF_BEFORE=$(sf_sim_map)
if GB_STORE_FAULT="2:SELECT name, team, spec_json" gb scale a 2 >"$T/i29.out" 2>"$T/i29.err"; then
	rc=0
else
	rc=$?
fi
sf_untouched a || fail "issue 29: a failed read of pool a's row after scale terminated other pools' instances: $(sf_report) (scale exit $rc: $(cat "$T/i29.err"))"
check "[ '$rc' != 0 ]" "issue 29: scale with a failed read of its row exits non-zero ($rc)"
check "grep -q 'state store failed: .*disk I/O error (injected' '$T/i29.err'" \
	"issue 29: and says the state store failed: $(grep 'state store failed' "$T/i29.err" | head -c 240)"
check "! grep -q 'no active pool named' '$T/i29.err'" "issue 29: a store error is not 'no active pool named a'"
check "[ '$(sf_live_n a)/$(sf_live_n b)/$(sf_live_n c)' = 2/2/1 ]" "issue 29: every pool still runs 2/2/1 instances"
sf_recover
wait_until 15 sf_all_same || fail "issue 29: after recovery cloudsim differs from the journal: $(sf_report)"

# the cost report: every read of instances made to fail in turn; never
# a report of $0 (before: a failed read printed a total of 0)
SF_MATCH="FROM instances"
ncost=$(sf_count cost -o json)
unset SF_MATCH
costfail=0
n=1
while [ "$n" -le "$ncost" ]; do
	if GB_STORE_FAULT="$n:FROM instances" gb cost -o json >"$T/cost.out" 2>"$T/cost.err"; then
		check "jq -e '.total > 0' '$T/cost.out' >/dev/null" "cost with read $n of instances failing: a real total ($(jq -c .total "$T/cost.out"))"
	else
		grep -q 'state store failed' "$T/cost.err" || fail "cost with read $n failing: exit non-zero without saying the store failed: $(cat "$T/cost.err")"
		costfail=$((costfail + 1))
	fi
	n=$((n + 1))
done
check "[ $costfail -ge 1 ]" "cost: $costfail of $ncost failed reads of instances ended in 'state store failed', none in a \$0 report"

sf_sweep scale_down a scale a 1
SF_STRIDE=${SF_DESTROY_STRIDE:-4} sf_sweep destroy c destroy c --auto-approve
echo "ok: $SF_RUNS faults injected: $SF_FAILED commands failed saying the store failed, $SF_OK did their job anyway"

# through the daemon: its write of a's new size fails; the API answers
# 503 StoreUnavailable (the API's error shape) and the CLI exits
# non-zero saying the state store failed; nothing else is touched
SF_BEFORE=$(sf_sim_map)
GB_STORE_FAULT="1:UPDATE pools SET desired" daemon_start
export GPUBROKER_TOKEN=demo-ci-token
code=$(curl -s -o "$T/dscale.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $GPUBROKER_TOKEN" \
	-H 'Content-Type: application/json' -d '{"count": 1}' "$GPUBROKER_SERVER/v1/pools/a/scale")
check "[ '$code' = 503 ] && jq -e '.error.code == \"StoreUnavailable\" and (.error.message | startswith(\"state store failed: \"))' '$T/dscale.json' >/dev/null" \
	"POST /v1/pools/a/scale with the daemon's store failing: 503 $(jq -c . "$T/dscale.json" | head -c 200)"
daemon_stop
GB_STORE_FAULT="1:UPDATE pools SET desired" daemon_start
if gb scale a 1 >"$T/dscale.out" 2>"$T/dscale.err"; then
	fail "scale through the daemon with its store failing exited 0: $(cat "$T/dscale.out")"
fi
check "grep -q 'state store failed' '$T/dscale.err'" \
	"scale through the daemon: non-zero exit, and it says the state store failed: $(grep 'state store failed' "$T/dscale.err" | head -c 200)"
gb scale a 1 >"$T/dscale2.out" 2>"$T/dscale2.err" || fail "the next scale through the daemon failed: $(cat "$T/dscale2.err")"
check "[ \"\$(sf_desired a)\" = 1 ]" "the next scale through the daemon is stored"
sf_untouched a || fail "scale through the daemon: an instance of b or c was terminated: $(sf_report)"
daemon_stop
