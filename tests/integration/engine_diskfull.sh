#!/bin/sh
# engine_diskfull.sh -- the disk under the state database fills while a
# destroy's TerminateInstances is in flight: the cloud accepts, the
# instances are gone, but the store refuses the write that closes the
# terminate intent and records when each terminate was accepted.  That
# outcome must be written as soon as the store accepts writes again, and
# each instance's billing must end when the cloud accepted its terminate.
# Before: the intent stayed open until the next start, and billing ended
# when a later describe saw the instances gone (7-9 s late here).  The
# daemon log names the cause ("database or disk is full"), never the
# follow-on "cannot rollback - no transaction is active".
#
# Needs root (a small tmpfs holds the state database, so it can really
# fill).  The fault is proven injected: the instances are still live in
# cloudsim once the disk is full, the daemon logs the post-call write as
# refused for lack of space, and while the disk stays full the database
# shows the intent open and no accepted time.
. "$GB_SRC/tests/lib/integration.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root to mount a tmpfs that can be filled"
	exit 77
fi
MNT="$T/mnt"
mkdir -p "$MNT"
if ! mount -t tmpfs -o size=4m,mode=0700 gbdiskfull "$MNT" 2>"$T/mount.err"; then
	echo "SKIP: cannot mount a tmpfs on $MNT: $(cat "$T/mount.err")"
	exit 77
fi
# the daemon holds files on the tmpfs: stop it, then unmount, then the
# library's cleanup (which takes the exit status from $?: set -e must not
# end the trap at the "(exit 1)" that hands it over)
diskfull_cleanup() {
	_rc=$?
	set +e
	if [ -n "$D_PID" ]; then
		kill -TERM "$D_PID" 2>/dev/null
		wait "$D_PID" 2>/dev/null
		D_PID=""
	fi
	umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	(exit "$_rc")
	lib_cleanup
}
trap diskfull_cleanup EXIT
export GPUBROKER_STATE="$MNT/state.db"

# sql QUERY: one row of the state database, fields joined by spaces
# (read-only: never a write on the full disk)
sql() {
	/usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, timeout=10)
r = c.execute(sys.argv[2]).fetchone()
print(" ".join(str(x) for x in r) if r else "")' "$GPUBROKER_STATE" "$1"
}
now_ms() { /usr/bin/python3 -c 'import time; print(int(time.time() * 1000))'; }

sim_start
daemon_start
export GPUBROKER_TOKEN=demo-ci-token
write_spec "$T/df.yaml" df-aws aws A10G 2
gb apply -f "$T/df.yaml" --auto-approve --wait --timeout 60s >"$T/apply.out" 2>"$T/apply.log" ||
	fail "apply df-aws: $(tail -3 "$T/apply.log")"
check "[ \"\$(sim_live df-aws)\" = 2 ]" "df-aws runs 2 instances"
sleep 2 # some billed time

# Each terminate takes 3 s in the cloud; the WAL is checkpointed and
# truncated, so every later commit must grow it (a WAL reused in place
# could take a commit on a full disk).
sim_post /_sim/scenario '{"latency": {"aws": {"TerminateInstances": {"base_ms": 3000, "jitter_ms": 0}}}}'
/usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=10)
r = c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
sys.exit(0 if r[0] == 0 else 1)' "$GPUBROKER_STATE" || fail "cannot checkpoint the WAL before the test"

gb destroy df-aws --auto-approve --timeout 90s >"$T/destroy.out" 2>"$T/destroy.log" &
DESTROY_PID=$!
BG_PIDS="$BG_PIDS $DESTROY_PID"
# the terminate intent is committed right before the call: then fill
wait_until 20 "[ \"\$(sql \"SELECT count(*) FROM intents WHERE kind='terminate' AND state='open'\")\" = 1 ]" ||
	fail "no terminate intent was journaled"
dd if=/dev/zero of="$MNT/fill" bs=64k 2>"$T/dd.log" && fail "the tmpfs did not fill: $(cat "$T/dd.log")"
grep -q "No space left on device" "$T/dd.log" || fail "dd did not stop at ENOSPC: $(cat "$T/dd.log")"
full_at=$(now_ms)
check "[ \"\$(stat -f -c %a '$MNT')\" = 0 ]" "the tmpfs under the state database is full (0 blocks free)"
live=$(sim_live df-aws)
check "[ '$live' = 2 ]" "the disk was full before the cloud accepted the terminate (still $live live in cloudsim)"

# the cloud accepts; the write after the call is refused
wait_until 15 "[ \"\$(sim_live df-aws)\" = 0 ]" || fail "cloudsim never got the terminate"
wait_until 15 "grep -q 'cannot record the outcome of terminate intent.*database or disk is full' '$T/daemon.log'" ||
	fail "the daemon log has no 'cannot record the outcome of terminate intent ...: database or disk is full': the write after the call was not refused (fault not injected) or its failure went unreported"
echo "ok: the daemon log says the outcome could not be recorded: $(grep -o 'cannot record the outcome of terminate intent.*database or disk is full' "$T/daemon.log" | head -n 1 | cut -c1-160)"
check "[ \"\$(sql \"SELECT count(*) FROM intents WHERE kind='terminate' AND state='open'\")\" = 1 ]" \
	"while the disk is full the terminate intent is still open in the database"
check "[ \"\$(sql \"SELECT count(*) FROM instances WHERE pool='df-aws' AND terminate_requested_ms > 0\")\" = 0 ]" \
	"while the disk is full no accepted time is in the database (the post-call write really failed)"
# later steps (the daemon's watch, reconcile passes) run into the full disk
# too: it stays full a few seconds longer
wait_until 15 "grep -q 'the state database does not accept writes' '$T/daemon.log'" ||
	fail "no later operation met the full disk"
echo "ok: a later operation found the store still refusing writes and held off"
sleep 3

rm -f "$MNT/fill"
freed_at=$(now_ms)
echo "disk full for $((freed_at - full_at)) ms; space is back"
wait_until 10 "[ \"\$(sql \"SELECT count(*) FROM intents WHERE state='open'\")\" = 0 ]" ||
	fail "the terminate intent is still open 10 s after the disk has space again"
closed_after=$(($(now_ms) - freed_at))
echo "ok: no open intent ${closed_after} ms after space came back"
wait_until 20 "[ \"\$(sql \"SELECT state FROM pools WHERE name='df-aws'\")\" = destroyed ]" ||
	fail "df-aws is not destroyed"
echo "ok: df-aws is destroyed"
wait "$DESTROY_PID" || fail "gpubroker destroy through the daemon failed: $(cat "$T/destroy.log")"
echo "ok: gpubroker destroy (through the daemon) finished with exit 0"

# billing ends when the cloud accepted the terminate, to 0.1 s
/usr/bin/python3 "$GB_SRC/tests/reliability/truth.py" costdiff "$GPUBROKER_STATE" "$CONTROL" 300 100 >"$T/costdiff.txt" && crc=0 || crc=$?
cat "$T/costdiff.txt"
check "[ $crc = 0 ]" "each instance's billing starts within 0.3 s and ends within 0.1 s of cloudsim's bill"
check "[ \"\$(sql \"SELECT count(*) FROM instances WHERE pool='df-aws' AND terminated_ms > 0 AND terminated_ms = terminate_requested_ms\")\" = 2 ]" \
	"both instances end at their accepted terminate time"
check "grep -q 'database or disk is full' '$T/daemon.log'" "the daemon log names the cause: database or disk is full"
check "! grep -q 'cannot rollback - no transaction is active' '$T/daemon.log'" \
	"the daemon log never reports the follow-on 'cannot rollback - no transaction is active'"
check "[ \"\$(sim_live)\" = 0 ]" "nothing is left in cloudsim"
echo PASS
