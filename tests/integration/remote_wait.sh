#!/bin/sh
# remote_wait.sh -- waits through a daemon (--server) behave like local
# waits: `apply --wait` and `destroy` print the pool's events, and on a
# terminal the live progress line under them (off one: the event lines
# only, no escape codes); a wait rides out a daemon that is killed and
# started again (it says once that it lost the daemon and once that it
# is back, and ends with exit 0); a daemon that does not come back
# before the timeout ends the wait with exit 4, for apply and destroy,
# and the CI examples' release steps say what that means; README and
# --help list exit 4.
. "$GB_SRC/tests/lib/integration.sh"

command -v script >/dev/null 2>&1 ||
	fail "script(1) is not installed (Debian bsdutils; make deps installs it)"
sim_start
daemon_start
SERVER=$GPUBROKER_SERVER
PORT=${SERVER##*:}
unset GPUBROKER_SERVER
export GPUBROKER_TOKEN=demo-ci-token
remote_gb() { GPUBROKER_SERVER=$SERVER gb "$@"; }
# instances take a while to run, so waits last long enough to watch
sim_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 2500}}}'

# on_tty OUT CMD...: gpubroker CMD through the daemon on a
# pseudo-terminal; the terminal's output (stdout and stderr) goes to OUT
on_tty() {
	_out=$1
	shift
	_cmd="\"$GB\" -c \"$CONF\" --server \"$SERVER\""
	for _a in "$@"; do
		_cmd="$_cmd \"$_a\""
	done
	env -u GB_NO_TTY -u NO_COLOR TERM=xterm script -qefc "$_cmd" /dev/null </dev/null >"$_out" 2>&1
}
ESC=$(printf '\033')

# restart_daemon: a daemon again on the same address, as after a crash
# and a restart (or a failover behind one address)
restart_daemon() {
	"$GB" -c "$CONF" serve --listen "127.0.0.1:$PORT" >"$T/daemon.out" 2>>"$T/daemon.log" &
	D_PID=$!
	wait_until 15 "curl -sf $SERVER/healthz" || fail "the daemon did not start again on port $PORT"
}

# apply_bg NAME COUNT TIMEOUT: apply --wait of a pool of COUNT A10G
# through the daemon, in the background (A_PID; stdout $T/NAME.json,
# stderr $T/NAME.err), once its instances are created
apply_bg() {
	write_spec "$T/$1.yaml" "$1" aws A10G "$2"
	remote_gb apply -f "$T/$1.yaml" --auto-approve --wait --timeout "$3" -o json >"$T/$1.json" 2>"$T/$1.err" &
	A_PID=$!
	BG_PIDS="$BG_PIDS $A_PID"
	wait_until 20 "grep -q '$1 created .*$1-$(($2 - 1))' $T/$1.err" ||
		fail "pool $1 was not created: $(cat "$T/$1.err")"
}

# kill_daemon: as a crash
kill_daemon() {
	kill -KILL "$D_PID"
	wait "$D_PID" 2>/dev/null || true
	D_PID=""
}

check "\"\$GB\" --help | grep -q '^  4  lost the daemon: a wait through --server'" "--help lists exit 4"
check "grep -q '^| 4 | lost the daemon: a wait through \`--server\`' $GB_SRC/README.md" "and so does README's table"

# 1. apply --wait on a terminal: the events and the progress line
write_spec "$T/a.yaml" rw-a aws A10G 2
on_tty "$T/a.out" apply -f "$T/a.yaml" --auto-approve --wait --timeout 60s ||
	fail "apply --wait --server on a terminal: $(tail -5 "$T/a.out")"
check "[ \"\$(sim_live rw-a)\" = 2 ]" "2 instances made"
check "grep -q 'rw-a created .*rw-a-0' $T/a.out && grep -q 'rw-a created .*rw-a-1' $T/a.out" \
	"the daemon's 'created' events are printed as lines"
check "grep -q 'rw-a running ' $T/a.out" "and its 'running' events"
check "grep -q \"\$(printf '\\r\\033\\\\[K')  requested [0-9] | pending [0-9] | running [0-9] | failed 0 | terminated 0 | failovers 0\" $T/a.out" \
	"a progress line, redrawn in place (CR, erase line)"
check "grep -q 'requested 2 | pending 2 | running 0' $T/a.out" "showing both pending first"
check "grep -q 'requested 2 | pending 0 | running 2' $T/a.out" "and both running at the end"
check "[ \"\$(grep -c ' created ' $T/a.out)\" = 2 ]" "each event printed once"
check "! grep -q 'HTTP 404' $T/a.out" "and no error about the pool not existing yet"
check "t=\$(remote_gb events --pool rw-a -o json | jq -r '[.[] | select(.kind == \"created\")][0].time[11:19]') && [ -n \"\$t\" ] && grep -q \"\${t}Z rw-a created \" $T/a.out" \
	"each line carries its event's time as the daemon records it"

# 2. destroy on a terminal: its events too
on_tty "$T/d.out" destroy rw-a --auto-approve ||
	fail "destroy --server on a terminal: $(tail -5 "$T/d.out")"
check "grep -q 'rw-a terminated ' $T/d.out && grep -q 'terminated 2 | failovers 0' $T/d.out" \
	"destroy through the daemon prints its events and counts the terminations"
check "grep -q 'pool rw-a destroyed' $T/d.out && [ \"\$(sim_live rw-a)\" = 0 ]" "and the pool is gone"

# 3. off a terminal: the event lines, no escape codes
write_spec "$T/b.yaml" rw-b aws A10G 1
remote_gb apply -f "$T/b.yaml" --auto-approve --wait --timeout 60s -o json >"$T/b.json" 2>"$T/b.err" ||
	fail "apply --wait --server off a terminal: $(cat "$T/b.err")"
check "grep -q 'rw-b created ' $T/b.err && grep -q 'rw-b running ' $T/b.err" \
	"off a terminal the events are printed too"
check "! grep -q \"\$ESC\" $T/b.err && ! grep -q 'requested 1' $T/b.err" \
	"with no escape codes and no progress line"
check "[ \"\$(jq -r '.[0].running' $T/b.json)\" = 1 ]" "stdout is the pool, running"

# an interrupted wait (SIGINT, as Ctrl-C) ends at once and says so, as
# locally; the daemon goes on with the pool

# interrupt_at NAME PATTERN ARGS...: gpubroker ARGS through the daemon in
# the background (stderr $T/NAME.err), sent SIGINT once PATTERN is on its
# stderr; rc: its exit status
interrupt_at() {
	_n=$1 _pat=$2
	shift 2
	"$GB" -c "$CONF" --server "$SERVER" "$@" >/dev/null 2>"$T/$_n.err" &
	_pid=$!
	BG_PIDS="$BG_PIDS $_pid"
	wait_until 20 "grep -q '$_pat' $T/$_n.err" || fail "$1: no '$_pat' in: $(cat "$T/$_n.err")"
	kill -INT "$_pid"
	rc=0
	wait "$_pid" || rc=$?
}

write_spec "$T/i.yaml" rw-i aws A10G 1
interrupt_at i 'rw-i created ' apply -f "$T/i.yaml" --auto-approve --wait --timeout 60s
check "[ \$rc = 130 ] && grep -q 'interrupted: the journal is consistent' $T/i.err && ! grep -q 'rw-i running' $T/i.err" \
	"SIGINT ends apply --wait through a daemon before the pool runs (exit $rc)"
wait_until 20 "[ \"\$(remote_gb status rw-i -o json | jq .running)\" = 1 ]" ||
	fail "the daemon did not go on with rw-i after the CLI was interrupted"
echo "ok: the daemon went on with the pool"
# and so does destroy's
sim_post /_sim/scenario '{"lifecycle": {"aws": {"stopping_ms": 4000}}}'
interrupt_at di 'rw-i terminating ' destroy rw-i --auto-approve
check "[ \$rc = 130 ] && grep -q \"pool rw-i: interrupted; termination was asked for and the daemon goes on with it ('gpubroker status rw-i')\" $T/di.err" \
	"SIGINT ends destroy through a daemon, saying the daemon goes on (exit $rc)"
wait_until 20 "[ \"\$(remote_gb status --all rw-i -o json | jq -r .state)\" = destroyed ]" ||
	fail "the daemon did not go on destroying rw-i"
echo "ok: the daemon destroyed the pool"
sim_post /_sim/scenario '{"lifecycle": {"aws": {"stopping_ms": 400}}}'

# 4. the daemon is killed during a wait and started again: the wait
# goes on and ends well
sim_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 6000}}}'
apply_bg rw-c 2 90s
kill_daemon
wait_until 10 "grep -q 'lost the gpubroker daemon at $SERVER' $T/rw-c.err" ||
	fail "the CLI did not say it lost the daemon: $(cat "$T/rw-c.err")"
sleep 2
check "kill -0 $A_PID" "apply --wait is still waiting while the daemon is down"
restart_daemon
rc=0
wait "$A_PID" || rc=$?
check "[ \$rc = 0 ]" "the wait ended with exit 0 after the restart (exit $rc): $(tr '\n' '|' <"$T/rw-c.err")"
check "[ \"\$(grep -c 'lost the gpubroker daemon' $T/rw-c.err)\" = 1 ] && [ \"\$(grep -c 'reconnected to the gpubroker daemon at $SERVER after [0-9]*s' $T/rw-c.err)\" = 1 ]" \
	"it said once that it lost the daemon, and once that it is back"
check "[ \"\$(grep -c 'rw-c running ' $T/rw-c.err)\" = 2 ]" "the events after the restart are printed (each once)"
check "[ \"\$(jq -r '.[0].running' $T/rw-c.json)\" = 2 ] && [ \"\$(sim_live rw-c)\" = 2 ]" \
	"both instances run"

# destroy rides out a restart too
sim_post /_sim/scenario '{"lifecycle": {"aws": {"stopping_ms": 6000}}}'
remote_gb destroy rw-c --auto-approve --timeout 90s >"$T/dc.out" 2>"$T/dc.err" &
A_PID=$!
BG_PIDS="$BG_PIDS $A_PID"
wait_until 20 "grep -q 'rw-c destroying ' $T/dc.err" || fail "destroy did not start: $(cat "$T/dc.err")"
kill_daemon
wait_until 10 "grep -q 'lost the gpubroker daemon' $T/dc.err" ||
	fail "destroy did not say it lost the daemon: $(cat "$T/dc.err")"
restart_daemon
rc=0
wait "$A_PID" || rc=$?
check "[ \$rc = 0 ] && grep -q 'pool rw-c destroyed' $T/dc.out" \
	"destroy through a daemon restarted meanwhile: exit 0 (exit $rc): $(tr '\n' '|' <"$T/dc.err")"
check "grep -q 'reconnected to the gpubroker daemon' $T/dc.err && [ \"\$(grep -c 'rw-c terminated ' $T/dc.err)\" = 2 ]" \
	"it came back and printed both terminations"
check "[ \"\$(sim_live rw-c)\" = 0 ]" "nothing of rw-c left in cloudsim"

# 5. the daemon does not come back: exit 4 at the timeout, for apply...
sim_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 60000, "stopping_ms": 400}}}'
apply_bg rw-e 1 8s
kill_daemon
start=$(date +%s)
rc=0
wait "$A_PID" || rc=$?
took=$(($(date +%s) - start))
check "[ \$rc = 4 ]" "apply --wait: a daemon that does not come back ends it with exit 4 (exit $rc)"
check "[ $took -le 12 ]" "at the timeout ($took s after the kill, --timeout 8s)"
check "grep -q 'gave up: the gpubroker daemon at $SERVER has not answered for [0-9]*s' $T/rw-e.err" \
	"saying it gave up: $(tr '\n' '|' <"$T/rw-e.err")"
check "grep -q \"pool rw-e: the daemon goes on converging it when it is back ('gpubroker status rw-e')\" $T/rw-e.err" \
	"and what happens to the pool"
check "! grep -q 'timed out waiting' $T/rw-e.err" "not mistaken for a timeout (exit 3)"

# ... and for destroy
rc=0
remote_gb destroy rw-b --auto-approve --timeout 3s >"$T/f.out" 2>"$T/f.err" || rc=$?
check "[ \$rc = 4 ] && grep -q 'lost the gpubroker daemon' $T/f.err && grep -q 'gave up' $T/f.err && grep -q 'pool rw-b: not destroyed: the daemon could not be asked' $T/f.err" \
	"destroy through a daemon that is gone: exit 4 after retrying (exit $rc)"

# the CI examples' release steps say what exit 4 means (their --timeout
# shortened; the daemon is still gone)
/usr/bin/python3 -c 'import yaml' 2>/dev/null || fail "python3-yaml is missing (make deps)"
/usr/bin/python3 - "$GB_SRC/examples/ci" "$T" <<'PY' || fail "cannot read the CI examples' release steps"
import sys, yaml
ci, out = sys.argv[1], sys.argv[2]
gh = yaml.safe_load(open(ci + "/github-actions.yml"))
steps = next(iter(gh["jobs"].values()))["steps"]
rel = [s["run"] for s in steps if s.get("name") == "release GPUs"][0]
open(out + "/gh-release.sh", "w").write(rel.replace("--timeout 15m", "--timeout 2s"))
gl = yaml.safe_load(open(ci + "/gitlab-ci.yml"))
job = next(v for v in gl.values() if isinstance(v, dict) and "after_script" in v)
after = "\n".join(job["after_script"])
open(out + "/gl-release.sh", "w").write(after.replace("--timeout 4m", "--timeout 2s"))
PY
mkdir -p "$T/bin"
printf '#!/bin/sh\nexec "%s" -c "%s" ${GPUBROKER_SERVER:+--server "$GPUBROKER_SERVER"} "$@"\n' "$GB" "$CONF" >"$T/bin/gpubroker"
chmod +x "$T/bin/gpubroker"
for ci in gh gl; do
	grep -q -- '--timeout 2s' "$T/$ci-release.sh" || fail "$ci: the release step's destroy --timeout was not found"
	rc=0
	(cd "$T" && PATH="$T/bin:$PATH" GPUBROKER_SERVER=$SERVER CI_JOB_ID=rw-b-ci \
		GPUBROKER_SSH_PUBLIC_KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3RrZXl0ZXN0a2V5dGVzdGtleXRlc3RrZXk1 test" \
		POOL_SPEC="$GB_SRC/examples/ci/pool.yaml" bash -eo pipefail "$T/$ci-release.sh") >"$T/$ci-rel.out" 2>&1 || rc=$?
	check "[ \$rc = 1 ] && grep -q 'not released: the gpubroker daemon did not answer for' $T/$ci-rel.out" \
		"$ci: the CI release step says the daemon is down (exit 4 from destroy): $(tr '\n' '|' <"$T/$ci-rel.out")"
done
echo PASS
