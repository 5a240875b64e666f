#!/bin/sh
# state_migrate.sh -- `gpubroker state migrate --to URL`: a SQLite state
# made by the real CLI and daemon against cloudsim (pools, instances, the
# journal, events, audit) is copied into an empty PostgreSQL database;
# the CLI then shows the same pools, events and audit from the URL, and
# carries on there (new journal rows take ids past the copied ones).  A
# second migrate into the same database is refused; so are a URL with a
# password in it (never echoed), a missing source, a URL source and a
# state another process holds a pool lock of.  The password never shows.
. "$GB_SRC/tests/lib/integration.sh"

[ -f "$GB_SRC/tests/lib/pg.sh" ] || { echo "SKIP: tests/lib/pg.sh is missing"; exit 77; }
# shellcheck disable=SC1091
. "$GB_SRC/tests/lib/pg.sh"
# shellcheck disable=SC2154
trap '_rc=$?; set +e; gb_pg_stop >/dev/null 2>&1; (exit $_rc); lib_cleanup' EXIT
gb_pg_start "$T/pg" || exit $?
export PGPASSWORD="$GB_PG_PASSWORD"
unset PGPASSFILE

# --- a SQLite state with real content ---
sim_start
write_spec "$T/a.yaml" mig-a aws A10G 2
write_spec "$T/b.yaml" mig-b gcp L4 1
write_spec "$T/c.yaml" mig-c azure T4 1
gb apply -f "$T/a.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply-a.log" || fail "apply mig-a"
gb apply -f "$T/c.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply-c.log" || fail "apply mig-c"
gb destroy mig-c --auto-approve >/dev/null 2>"$T/destroy-c.log" || fail "destroy mig-c"
# through the daemon: audit rows
daemon_start
export GPUBROKER_TOKEN=demo-ci-token
gb apply -f "$T/b.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply-b.log" || fail "apply mig-b through the daemon"
daemon_stop
unset GPUBROKER_SERVER GPUBROKER_TOKEN
check "[ \"\$(gb audit -o json | jq length)\" -ge 1 ]" "the SQLite state has audit rows"

# the pools as the CLI shows them (without what moves with the clock)
pools_view() {
	gb "$@" status -o json | jq -S 'map({name, team, state, desired,
		instances: [.instances[]? | {id, name, state, cloud, region,
		instance_type, private_ip}]}) | sort_by(.name)'
}
pools_view >"$T/pools-sqlite.json" || fail "status on SQLite"
gb events -o json >"$T/events-sqlite.json" || fail "events on SQLite"
gb audit -o json >"$T/audit-sqlite.json" || fail "audit on SQLite"
check "[ \"\$(jq length $T/pools-sqlite.json)\" -ge 2 ]" "the SQLite state has pools"

# --- refusals that touch nothing ---
URL=$(gb_pg_createdb gbmig) || fail "cannot create a database"

# a process holding a pool lock (the daemon converging, an apply)
# (one process: the lock goes with it when it is killed)
(exec 9>"$GPUBROKER_STATE.locks/mig-a" && flock 9 && exec sleep 60) >/dev/null 2>&1 &
LOCKER=$!
BG_PIDS="$BG_PIDS $LOCKER"
wait_until 5 "! flock -n '$GPUBROKER_STATE.locks/mig-a' true" || fail "the test's lock holder did not start"
rc=0
gb state migrate --to "$URL" >"$T/locked.out" 2>"$T/locked.err" || rc=$?
check "[ $rc = 1 ]" "migrate while a pool lock is held exits 1"
check "grep -q 'a gpubroker process is using .* (pool mig-a is locked): stop the daemon first' $T/locked.err" \
	"it says a process holds the state"
kill "$LOCKER" 2>/dev/null || true
wait "$LOCKER" 2>/dev/null || true
check "flock -n '$GPUBROKER_STATE.locks/mig-a' true" "the test's lock is released"

rc=0
gb state migrate --to "postgresql://gbadmin:secret@127.0.0.1:$GB_PG_PORT/gbmig?sslmode=disable" \
	>"$T/pwurl.out" 2>"$T/pwurl.err" || rc=$?
check "[ $rc != 0 ]" "a URL with a password is refused (exit $rc)"
check "grep -q 'carries a password' $T/pwurl.err" "it says why"
check "! grep -q secret $T/pwurl.out $T/pwurl.err" "the password in the URL is not echoed"

rc=0
gb --state "$T/nope.db" state migrate --to "$URL" >"$T/nosrc.out" 2>"$T/nosrc.err" || rc=$?
check "[ $rc = 1 ] && grep -q 'no state file at' $T/nosrc.err" "a missing source is refused"
check "[ ! -e '$T/nope.db' ]" "and not created"

rc=0
gb --state "$URL" state migrate --to "$URL" >"$T/urlsrc.out" 2>"$T/urlsrc.err" || rc=$?
check "[ $rc = 1 ] && grep -q 'already a PostgreSQL database' $T/urlsrc.err" "a URL source is refused"

rc=0
gb state migrate --to "$T/other.db" >/dev/null 2>"$T/notdb.err" || rc=$?
check "[ $rc = 2 ]" "--to that is not a URL is a usage error"
rc=0
gb state migrate >/dev/null 2>"$T/noto.err" || rc=$?
check "[ $rc = 2 ] && grep -q 'needs --to' $T/noto.err" "migrate without --to is a usage error"

# --- the migration ---
gb state migrate --to "$URL" >"$T/migrate.out" 2>"$T/migrate.err" ||
	fail "migrate failed: $(cat "$T/migrate.err")"
cat "$T/migrate.out"
npools=$(sqlite3 "$GPUBROKER_STATE" 'SELECT COUNT(*) FROM pools' 2>/dev/null ||
	jq length "$T/pools-sqlite.json")
check "grep -qx 'pools $npools' $T/migrate.out" "the pools are counted ($npools)"
for t in intents instances events audit decisions offers unavailable meta; do
	check "grep -q '^$t [0-9][0-9]*\$' $T/migrate.out" "$t is counted"
done
check "grep -Eq '^instances [1-9]' $T/migrate.out && grep -Eq '^audit [1-9]' $T/migrate.out" \
	"instances and audit rows were copied"
check "grep -qx 'migrated $GPUBROKER_STATE to postgresql://gbadmin@127.0.0.1:$GB_PG_PORT/gbmig (verified: row counts equal)' $T/migrate.out" \
	"it names both sides (the URL without its options) and says it verified"

pools_view --state "$URL" >"$T/pools-pg.json" || fail "status on PostgreSQL"
check "cmp -s $T/pools-sqlite.json $T/pools-pg.json" "status shows the same pools and instances from the URL"
gb --state "$URL" events -o json >"$T/events-pg.json" || fail "events on PostgreSQL"
check "cmp -s $T/events-sqlite.json $T/events-pg.json" "the same events"
gb --state "$URL" audit -o json >"$T/audit-pg.json" || fail "audit on PostgreSQL"
check "cmp -s $T/audit-sqlite.json $T/audit-pg.json" "the same audit"

# --- refused again: the target holds a state now ---
rc=0
gb state migrate --to "$URL" >"$T/again.out" 2>"$T/again.err" || rc=$?
check "[ $rc = 1 ]" "a second migrate into the same database exits 1"
check "grep -q 'already holds a state ($npools pools, .*): migrate only into an empty database' $T/again.err" \
	"it says the target holds a state"
gb --state "$URL" events -o json >"$T/events-pg2.json"
check "cmp -s $T/events-pg.json $T/events-pg2.json" "the refused migrate changed nothing"

# --- work goes on in PostgreSQL: new rows take new ids ---
maxev=$(jq 'map(.id) | max' "$T/events-pg.json")
# (from $T: with a URL state, the engine and the onprem driver still make
# their folders next to "the state", i.e. under ./postgresql:/...)
(cd "$T" && gb --state "$URL" scale mig-a 3) >/dev/null 2>"$T/scale.log" || fail "scale on PostgreSQL: $(cat "$T/scale.log")"
wait_until 30 "[ \"\$(sim_live mig-a)\" = 3 ]" || fail "mig-a did not grow to 3 in cloudsim"
echo "ok: scale works on the migrated state (new intents and instances)"
newer=$(gb --state "$URL" events -o json | jq --argjson m "$maxev" '[.[] | select(.id > $m)] | length')
check "[ '$newer' -ge 1 ]" "new events take ids past the copied ones ($newer)"

# --- the password never showed ---
for f in "$T"/*.out "$T"/*.err "$T"/*.json; do
	if grep -qF "$GB_PG_PASSWORD" "$f"; then
		fail "the database password shows in $f"
	fi
done
echo "ok: the database password shows in no output"
echo PASS
