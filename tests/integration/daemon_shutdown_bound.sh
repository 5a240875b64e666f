#!/bin/sh
# daemon_shutdown_bound.sh -- SIGTERM stops the daemon in bounded time
# whatever a worker is doing: with a cloud call hanging (cloudsim holds
# every EC2 call for 120 s), the daemon exits once its shutdown grace has
# passed (shortened here with GB_SHUTDOWN_GRACE_MS), saying so; a second
# SIGTERM ends it at once.
. "$GB_SRC/tests/lib/integration.sh"

sim_start
sim_post /_sim/scenario '{"latency": {"aws": {"RunInstances": {"base_ms": 120000, "jitter_ms": 0}, "DescribeInstances": {"base_ms": 120000, "jitter_ms": 0}}}}'
export GPUBROKER_TOKEN=demo-admin-token
# the create's intent is open: the engine opens it right before its
# first cloud call, which hangs
runs() {
	/usr/bin/python3 - "$GPUBROKER_STATE" <<'PY'
import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10)
sys.exit(0 if c.execute("SELECT count(*) FROM intents WHERE state = 'open'").fetchone()[0] else 1)
PY
}

# 1. the grace runs out
GB_SHUTDOWN_GRACE_MS=1500 daemon_start
write_spec "$T/p.yaml" hang-a aws A10G 1
gb apply -f "$T/p.yaml" --auto-approve >/dev/null 2>"$T/apply.err" || fail "apply: $(cat "$T/apply.err")"
wait_until 20 runs || fail "no create intent was opened"
t0=$(date +%s)
kill -TERM "$D_PID"
wait_until 15 "! kill -0 $D_PID" || fail "the daemon still runs 15 s after SIGTERM"
echo "ok: SIGTERM with a cloud call in flight: the daemon exits after its grace ($(($(date +%s) - t0))s)"
wait "$D_PID" 2>/dev/null && rc=0 || rc=$?
D_PID=""
check "[ \$rc = 1 ] && grep -q 'still busy 1500 ms after the shutdown signal' $T/daemon.log" "exit status 1, and the log says why ($rc)"

# 2. a second signal
rm -f "$T/daemon.out"
# a new state: the first one's open intent would be resolved at start,
# through a hanging call
export GPUBROKER_STATE=$T/state2.db
daemon_start
write_spec "$T/q.yaml" hang-b aws A10G 1
gb apply -f "$T/q.yaml" --auto-approve >/dev/null 2>"$T/apply.err" || fail "apply: $(cat "$T/apply.err")"
wait_until 20 runs || fail "no create intent was opened"
kill -TERM "$D_PID"
wait_until 10 "grep -q 'signal 15: shutting down' $T/daemon.log" || fail "no shutdown line"
kill -TERM "$D_PID" 2>/dev/null || true
check "wait_until 10 '! kill -0 $D_PID'" "a second SIGTERM ends it at once"
check "grep -q 'signal 15 again: exiting now' $T/daemon.log" "and the log says so"
wait "$D_PID" 2>/dev/null || true
D_PID=""
echo PASS
