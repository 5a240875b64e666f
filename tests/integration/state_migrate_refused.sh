#!/bin/sh
# state_migrate_refused.sh -- `state migrate` never copies a state a
# daemon still serves from (the daemon's later writes would stay behind
# in SQLite): refused while a daemon runs, idle or not (test_store covers
# a daemon refused while a migration holds the state, test_store_copy a
# view of endless rows).  No PostgreSQL is needed: the refusal comes
# before the target is opened (the target here is a port nothing listens
# on).
. "$GB_SRC/tests/lib/integration.sh"

TO='postgresql://gb@127.0.0.1:1/gb?sslmode=disable&connect_timeout=2'
sim_start
daemon_start
check "test -f \"\$GPUBROKER_STATE\"" "the daemon made its state"
if (unset GPUBROKER_SERVER; gb state migrate --to "$TO") >"$T/m1.out" 2>"$T/m1.err"; then
	fail "state migrate succeeded while a daemon serves from the state"
fi
cat "$T/m1.err"
check "grep -q 'a gpubroker daemon is serving from' $T/m1.err" \
	"state migrate is refused while an idle daemon runs, saying why"
check "curl -sf $GPUBROKER_SERVER/healthz >/dev/null" "the daemon keeps serving"
daemon_stop

# with the daemon stopped, migrate goes on to the target (and fails
# there, since nothing listens on port 1)
if (unset GPUBROKER_SERVER; gb state migrate --to "$TO") >"$T/m2.out" 2>"$T/m2.err"; then
	fail "state migrate to a closed port succeeded"
fi
check "! grep -q 'daemon is serving' $T/m2.err" "with no daemon the lock is free"

echo PASS
