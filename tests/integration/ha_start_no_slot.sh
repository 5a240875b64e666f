#!/bin/sh
# ha_start_no_slot.sh -- a replica started while PostgreSQL has no free
# connection slot for it does not exit: it says so in its log and tries
# again with a backoff, as a running replica reconnects, and starts
# serving once a slot is free.  The slot is taken away with the role's
# CONNECTION LIMIT 0 (the server's own limit works alike: the same
# SQLSTATE 53300).  Needs PostgreSQL's server binaries (make deps):
# skipped, saying so, without them.
. "$GB_SRC/tests/lib/integration.sh"
. "$GB_SRC/tests/lib/pg.sh"

gb_pg_start "$T/pg" || exit $?
trap '_rc=$?; set +e; for _p in $BG_PIDS; do kill -TERM "$_p"; done 2>/dev/null; sleep 1; gb_pg_stop >/dev/null 2>&1; (exit $_rc); lib_cleanup' EXIT
gb_pg_psql "CREATE ROLE gbslot LOGIN PASSWORD 'slot-pw-1' CONNECTION LIMIT 0" || fail "create role"
gb_pg_psql "CREATE DATABASE gbslot OWNER gbslot" || fail "create database"
export PGPASSWORD=slot-pw-1
export GPUBROKER_STATE="postgresql://gbslot@127.0.0.1:$GB_PG_PORT/gbslot?sslmode=disable"
sim_start

"$GB" -c "$CONF" serve >"$T/r.out" 2>>"$T/replica.log" &
R=$!
BG_PIDS="$BG_PIDS $R"
wait_until 20 "grep -q 'trying again in' '$T/replica.log'" ||
	fail "the replica did not say it is waiting for a connection slot (alive: $(kill -0 $R 2>/dev/null && echo yes || echo no))"
check "kill -0 $R 2>/dev/null" "a replica started with no free connection slot keeps trying"
check "grep -q 'too many connections' '$T/replica.log'" "its log says why"
gb_pg_psql "ALTER ROLE gbslot CONNECTION LIMIT -1" || fail "free a slot"
wait_until 30 "test -s '$T/r.out'" || fail "the replica did not start once a slot was free"
U=$(head -n 1 "$T/r.out" | jq -r .listen)
wait_until 10 "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $U/readyz)\" = 200 ]" || fail "the replica is not ready"
echo "ok: the replica serves once a slot is free"
# stopped while waiting: SIGTERM ends it
gb_pg_psql "ALTER ROLE gbslot CONNECTION LIMIT 0" || fail "take the slots again"
"$GB" -c "$CONF" serve >"$T/r2.out" 2>>"$T/replica2.log" &
R2=$!
BG_PIDS="$BG_PIDS $R2"
wait_until 20 "grep -q 'trying again in' '$T/replica2.log'" || fail "the second replica did not wait"
kill -TERM "$R2"
wait_until 10 "! kill -0 $R2 2>/dev/null" || fail "SIGTERM did not stop a replica waiting for a slot"
echo "ok: SIGTERM stops a replica that waits for a slot"
echo PASS
