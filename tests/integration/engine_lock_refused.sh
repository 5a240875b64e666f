#!/bin/sh
# engine_lock_refused.sh -- "one pool, one writer, also between a CLI and
# a daemon" holds only while the flock beside the state database can be
# taken.  When it cannot ($GPUBROKER_STATE.locks is a file, or a folder
# this user cannot write), apply, scale and destroy are refused -- by the
# CLI and by the daemon, in its requests and in its background jobs --
# with the lock's path, the OS's reason and how to fix it: no store
# change, no cloud call.  Before, the engine logged it and carried on with
# only its in-process lock (apply made the instances).  Once the folder
# is usable again, everything goes on as usual and nothing is left.
. "$GB_SRC/tests/lib/integration.sh"

LOCKS="$GPUBROKER_STATE.locks"
sim_start

# runs the CLI, expecting exit 1 and a message naming PATH and REASON
# refused NAME PATH REASON ARGS...
refused() {
	_n=$1 _p=$2 _r=$3
	shift 3
	if gb "$@" >"$T/$_n.out" 2>"$T/$_n.err"; then
		fail "$_n: 'gpubroker $*' succeeded without the pool lock: $(cat "$T/$_n.err")"
	else
		_rc=$?
	fi
	check "[ $_rc = 1 ]" "$_n: 'gpubroker $*' exits 1"
	check "grep -qF 'cannot take the lock for pool' '$T/$_n.err' && grep -qF '$_p' '$T/$_n.err' && grep -qF '$_r' '$T/$_n.err'" \
		"$_n: the error names the lock ($_p) and the reason ($_r)"
	check "grep -qF 'then retry' '$T/$_n.err'" "$_n: the error says how to fix it"
}

# store_count SQL: a number read from the state database (read-only)
store_count() {
	/usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
print(c.execute(sys.argv[2]).fetchone()[0])' "$GPUBROKER_STATE" "$1"
}

# a pool made while the lock works
write_spec "$T/a.yaml" lk-a aws A10G 2
gb apply -f "$T/a.yaml" --auto-approve >"$T/apply-a.out" 2>"$T/apply-a.log" || fail "apply lk-a: $(tail -3 "$T/apply-a.log")"
check "[ \"\$(sim_live lk-a)\" = 2 ]" "lk-a has 2 instances while the lock works"
check "[ -d '$LOCKS' ]" "the lock folder exists beside the state database"

# ---- the lock folder is a file: mkdir says EEXIST, open ENOTDIR (root too)
rm -rf "$LOCKS"
echo "not a folder" >"$LOCKS"
write_spec "$T/b.yaml" lk-b aws A10G 2
refused apply-b "$LOCKS/lk-b" "Not a directory" apply -f "$T/b.yaml" --auto-approve
check "[ \"\$(sim_live lk-b)\" = 0 ]" "no instance of lk-b in cloudsim"
check "[ \"\$(store_count \"SELECT count(*) FROM pools WHERE name='lk-b'\")\" = 0 ]" "lk-b is not in the store"
check "grep -qF 'must be a folder' '$T/apply-b.err'" "the fix says the lock path must be a folder"

calls_before=$(curl -sf "$CONTROL/_sim/counters" | jq '[.calls.aws // {} | to_entries[] | select(.key == "RunInstances" or .key == "TerminateInstances") | .value] | add // 0')
refused scale-a "$LOCKS/lk-a" "Not a directory" scale lk-a 3
check "[ \"\$(store_count \"SELECT desired FROM pools WHERE name='lk-a'\")\" = 2 ]" "scale refused: lk-a still wants 2"
refused destroy-a "$LOCKS/lk-a" "Not a directory" destroy lk-a --auto-approve
check "[ \"\$(store_count \"SELECT state FROM pools WHERE name='lk-a'\")\" = active ]" "destroy refused: lk-a is still active"
check "[ \"\$(store_count \"SELECT count(*) FROM instances WHERE pool='lk-a' AND state IN ('running','pending')\")\" = 2 ]" \
	"destroy refused: lk-a's instances are not marked terminating"
check "[ \"\$(sim_live lk-a)\" = 2 ]" "lk-a still has its 2 instances in cloudsim"
calls_after=$(curl -sf "$CONTROL/_sim/counters" | jq '[.calls.aws // {} | to_entries[] | select(.key == "RunInstances" or .key == "TerminateInstances") | .value] | add // 0')
check "[ '$calls_before' = '$calls_after' ]" "no create or terminate call reached EC2 while refused ($calls_before before, $calls_after after)"

# ---- the same through the daemon
daemon_start
export GPUBROKER_TOKEN=demo-ci-token
refused d-apply-b "$LOCKS/lk-b" "Not a directory" apply -f "$T/b.yaml" --auto-approve
refused d-scale-a "$LOCKS/lk-a" "Not a directory" scale lk-a 3
# DELETE is refused the same way (422): the pool stays active, nothing
# is marked; the reconcile passes' converges of lk-a are refused too
# (logged)
logged=$(wc -l <"$T/daemon.log")
refused d-destroy-a "$LOCKS/lk-a" "Not a directory" destroy lk-a --auto-approve --timeout 3s
check "[ \"\$(store_count \"SELECT state FROM pools WHERE name='lk-a'\")\" = active ]" "DELETE refused: lk-a is still active"
wait_until 20 "[ \"\$(tail -n +$((logged + 1)) '$T/daemon.log' | grep -c 'cannot take the lock for pool lk-a: $LOCKS/lk-a: Not a directory')\" -ge 2 ]" ||
	fail "the daemon's reconcile passes did not log the refused lock for lk-a"
echo "ok: the daemon log names the lock, its path and the reason (reconcile passes)"
check "grep -qF 'cannot take the lock for pool lk-b: $LOCKS/lk-b: Not a directory' '$T/daemon.log'" \
	"the daemon log names the lock refused for the apply of lk-b"
check "[ \"\$(sim_live lk-a)\" = 2 ] && [ \"\$(sim_live lk-b)\" = 0 ]" \
	"through the daemon too: lk-a keeps its 2 instances, lk-b has none"
check "[ \"\$(store_count \"SELECT count(*) FROM instances WHERE pool='lk-a' AND state IN ('running','pending')\")\" = 2 ]" \
	"the daemon did not mark lk-a's instances terminating"
calls_after=$(curl -sf "$CONTROL/_sim/counters" | jq '[.calls.aws // {} | to_entries[] | select(.key == "RunInstances" or .key == "TerminateInstances") | .value] | add // 0')
check "[ '$calls_before' = '$calls_after' ]" "the daemon made no create or terminate call either"

# ---- repaired: destroy and apply work, nothing is left
rm -f "$LOCKS"
gb destroy lk-a --auto-approve --timeout 60s >"$T/d-destroy-a2.out" 2>"$T/d-destroy-a2.err" ||
	fail "destroy lk-a after the repair: $(cat "$T/d-destroy-a2.err")"
check "[ \"\$(sim_live lk-a)\" = 0 ]" "once the lock can be taken, destroy through the daemon works"
check "[ -d '$LOCKS' ]" "the daemon made the lock folder again"
gb apply -f "$T/b.yaml" --auto-approve >"$T/d-apply-b2.out" 2>"$T/d-apply-b2.err" || fail "apply lk-b after the repair: $(cat "$T/d-apply-b2.err")"
wait_until 30 "[ \"\$(sim_live lk-b)\" = 2 ]" || fail "lk-b did not get its 2 instances after the repair"
echo "ok: apply through the daemon works again"
gb destroy lk-b --auto-approve --timeout 60s >"$T/d-destroy-b.out" 2>"$T/d-destroy-b.err" || fail "destroy lk-b: $(cat "$T/d-destroy-b.err")"
daemon_stop
unset GPUBROKER_SERVER GPUBROKER_TOKEN

# ---- a folder this user cannot write (root ignores the mode bits)
if [ "$(id -u)" != 0 ]; then
	rm -rf "$LOCKS"
	mkdir -m 0500 "$LOCKS"
	write_spec "$T/c.yaml" lk-c aws A10G 1
	refused apply-c "$LOCKS/lk-c" "Permission denied" apply -f "$T/c.yaml" --auto-approve
	check "grep -qF 'writable by this user' '$T/apply-c.err'" "the fix says to make the folder writable"
	check "[ \"\$(sim_live lk-c)\" = 0 ]" "no instance of lk-c in cloudsim"
	chmod 0700 "$LOCKS"
else
	echo "note: running as root, which ignores mode bits: the read-only folder case is skipped (the file case above covers the refusal)"
fi

check "[ \"\$(sim_live)\" = 0 ]" "cloudsim has no live instance at the end"
check "[ \"\$(store_count \"SELECT count(*) FROM intents WHERE state='open'\")\" = 0 ]" "no open intent is left"
echo PASS
