#!/bin/sh
# wait_ends.sh -- how waits end (issue 31, points 1 and 5):
#   1. a TTL that fires during a long failover walk interrupts the walk
#      at once (the "destroying" event follows the "ttl" event within
#      seconds, not after every candidate was tried), and apply --wait
#      through the daemon ends as soon as the pool is destroyed: exit 1,
#      saying so (not a timeout "the daemon keeps trying");
#   2. a destroy through the daemon during such a walk answers at once,
#      and a scale --wait through the daemon ends when its pool is
#      destroyed;
#   3. locally, apply --wait and scale --wait end (exit 1) when another
#      process destroys the pool;
#   4. SIGINT/SIGTERM during a wait exit 130/143, locally and through a
#      daemon; locally without "timed out waiting", saying what is left
#      running, how to remove it and that nothing enforces its TTL
#      without a daemon.
. "$GB_SRC/tests/lib/integration.sh"

sim_start
# every A10G zone of aws refuses (capacity), each refusal after 500 ms:
# a walk over the 36 candidates takes well over 30 s
no_room='{"capacity": [{"cloud": "aws", "type": "g5.*", "count": 0}], "latency": {"aws": {"RunInstances": {"base_ms": 500, "jitter_ms": 0}}}}'
room='{"capacity": [], "latency": {"aws": {"RunInstances": {"base_ms": 0, "jitter_ms": 0}}}}'

# signal_at SIG NAME COND ARGS...: gpubroker ARGS in the background
# (stderr $T/NAME.err), sent SIG once the shell condition COND holds;
# rc: its exit status
signal_at() {
	_sig=$1 _n=$2 _cond=$3
	shift 3
	"$GB" -c "$CONF" ${GPUBROKER_SERVER:+--server "$GPUBROKER_SERVER"} "$@" >/dev/null 2>"$T/$_n.err" &
	_pid=$!
	BG_PIDS="$BG_PIDS $_pid"
	wait_until 20 "$_cond" || fail "$_n: not ready to signal: $(cat "$T/$_n.err")"
	kill "-$_sig" "$_pid"
	rc=0
	wait "$_pid" || rc=$?
}

# ev_ms POOL KIND: the unix ms of the pool's first event of KIND
ev_ms() {
	gb events --pool "$1" -o json | jq -r "$JQ_TIME [.[] | select(.kind == \"$2\")][0].time | ms"
}

# --- 3. locally: a destroy from another process ends the waits -------
sim_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 60000}}}'
write_spec "$T/l.yaml" we-local aws A10G 1
gb apply -f "$T/l.yaml" --auto-approve --wait --timeout 60s >"$T/l.out" 2>"$T/l.err" &
A_PID=$!
BG_PIDS="$BG_PIDS $A_PID"
wait_until 20 "grep -q 'we-local created ' $T/l.err" || fail "we-local was not created: $(cat "$T/l.err")"
gb destroy we-local --auto-approve >/dev/null 2>"$T/ld.err" &
wait_until 20 "! kill -0 $A_PID" || fail "apply --wait did not end after the pool was destroyed: $(cat "$T/l.err")"
rc=0
wait "$A_PID" || rc=$?
check "[ \$rc = 1 ] && grep -q 'pool we-local: stopped waiting: the pool .* destroyed (a destroy was asked for), so it will not run' $T/l.err" \
	"local apply --wait ends with exit 1 when another process destroys its pool (exit $rc): $(tail -2 "$T/l.err")"
check "! grep -q 'timed out waiting' $T/l.err" "and it is not called a timeout"
wait_until 30 "[ \"\$(sim_live we-local)\" = 0 ]" || fail "we-local was not destroyed"

# --- 4. locally: SIGINT/SIGTERM during a wait ------------------------
write_spec "$T/i.yaml" we-int aws A10G 1 on-demand "lifecycle: {ttl: 2h}"
signal_at INT i "grep -q 'we-int created ' $T/i.err" apply -f "$T/i.yaml" --auto-approve --wait --timeout 60s
check "[ \$rc = 130 ]" "SIGINT during a local apply --wait exits 130 (exit $rc): $(tail -3 "$T/i.err")"
check "! grep -q 'timed out waiting' $T/i.err" "without saying it timed out"
check "grep -q \"pool we-int: left as it is: 0 running, 1 pending (billed until removed); 'gpubroker destroy we-int' removes it\" $T/i.err" \
	"it says what is left running and how to remove it"
check "grep -q \"Nothing converges it unless a daemon ('gpubroker serve') runs on this state; its TTL (1h59m left)\" $T/i.err && grep -q 'is enforced by that daemon only' $T/i.err" \
	"and that only a daemon enforces its TTL"
# scale --wait, SIGTERM
signal_at TERM is "[ \"\$(sim_live we-int)\" = 2 ] && grep -q 'we-int created ' $T/is.err" scale we-int 2 --wait --timeout 60s
check "[ \$rc = 143 ] && ! grep -q 'timed out waiting' $T/is.err && grep -q 'pool we-int: left as it is' $T/is.err" \
	"SIGTERM during a local scale --wait exits 143 (exit $rc): $(tail -2 "$T/is.err")"
gb destroy we-int --auto-approve >/dev/null 2>&1 || fail "destroy we-int failed"
sim_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 400}}}'

# --- 1. through the daemon: a TTL during a failover walk --------------
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
sim_post /_sim/scenario "$no_room"
write_spec "$T/t.yaml" we-ttl aws A10G 2 on-demand "lifecycle: {ttl: 3s}"
start=$(date +%s)
rc=0
gb apply -f "$T/t.yaml" --auto-approve --wait --timeout 60s -o json >"$T/t.json" 2>"$T/t.err" || rc=$?
took=$(($(date +%s) - start))
check "[ \$rc = 1 ]" "apply --wait of a pool whose TTL fires during the walk exits 1 (exit $rc): $(tail -3 "$T/t.err")"
check "grep -q 'pool we-ttl: stopped waiting: the pool .* destroyed (its TTL passed), so it will not run' $T/t.err" \
	"saying the pool was destroyed by its TTL"
check "! grep -q 'keeps trying' $T/t.err && ! grep -q 'timed out' $T/t.err" "not that the daemon keeps trying"
check "[ $took -le 15 ]" "as soon as the TTL fired ($took s; a whole walk takes over 30 s)"
check "jq -e '.[0].state != \"active\" and .[0].waiting == null and .[0].ttl_left_s == null' $T/t.json >/dev/null" \
	"its JSON has no stale waiting note or TTL left: $(jq -c '.[0] | {state, waiting, ttl_left_s}' "$T/t.json")"
wait_until 20 "[ -n \"\$(ev_ms we-ttl destroying)\" ] && [ \"\$(ev_ms we-ttl destroying)\" != null ]" ||
	fail "no destroying event for we-ttl"
gap=$(($(ev_ms we-ttl destroying) - $(ev_ms we-ttl ttl)))
check "[ $gap -le 3000 ]" "the walk was interrupted: 'destroying' $gap ms after the 'ttl' event"

# --- 2. a destroy during a walk answers at once; scale --wait ends ----
write_spec "$T/d.yaml" we-del aws A10G 2
gb apply -f "$T/d.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/d.err" &
A_PID=$!
BG_PIDS="$BG_PIDS $A_PID"
wait_until 20 "gb events --pool we-del -o json | jq -e '[.[] | select(.kind == \"failover\")] | length > 0'" ||
	fail "we-del did not start walking: $(cat "$T/d.err")"
start=$(date +%s)
gb destroy we-del --auto-approve --timeout 30s >/dev/null 2>"$T/dd.err" || fail "destroy we-del failed: $(cat "$T/dd.err")"
took=$(($(date +%s) - start))
check "[ $took -le 8 ]" "destroy during a failover walk is done in $took s (the walk stops)"
rc=0
wait "$A_PID" || rc=$?
check "[ \$rc = 1 ] && grep -q 'pool we-del: stopped waiting: the pool .* destroyed (a destroy was asked for)' $T/d.err" \
	"and the apply --wait on it ends with exit 1 (exit $rc): $(tail -2 "$T/d.err")"

sim_post /_sim/scenario "$room"
write_spec "$T/s.yaml" we-scale aws A10G 1
gb apply -f "$T/s.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/s.err" || fail "apply we-scale: $(cat "$T/s.err")"
sim_post /_sim/scenario "$no_room"
gb scale we-scale 3 --wait --timeout 60s >/dev/null 2>"$T/ss.err" &
A_PID=$!
BG_PIDS="$BG_PIDS $A_PID"
wait_until 20 "grep -q 'we-scale failover ' $T/ss.err" || fail "we-scale did not start walking: $(cat "$T/ss.err")"
gb destroy we-scale --auto-approve --timeout 30s >/dev/null 2>&1 || fail "destroy we-scale failed"
wait_until 10 "! kill -0 $A_PID" || fail "scale --wait did not end after its pool was destroyed"
rc=0
wait "$A_PID" || rc=$?
check "[ \$rc = 1 ] && grep -q 'pool we-scale: stopped waiting: the pool .* destroyed' $T/ss.err" \
	"scale --wait through the daemon ends with exit 1 when its pool is destroyed (exit $rc)"

# --- 4. through the daemon: SIGTERM exits 143 -------------------------
sim_post /_sim/scenario "$room"
sim_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 60000}}}'
write_spec "$T/r.yaml" we-term aws A10G 1 on-demand "lifecycle: {ttl: 1h}"
signal_at TERM r "grep -q 'we-term created ' $T/r.err" apply -f "$T/r.yaml" --auto-approve --wait --timeout 60s
check "[ \$rc = 143 ]" "SIGTERM during apply --wait through a daemon exits 143 (exit $rc): $(tail -2 "$T/r.err")"
check "grep -q 'pool we-term: left as it is: .*The daemon goes on converging it and destroys it when its TTL ends (in ' $T/r.err" \
	"saying the daemon goes on with it and enforces its TTL"
