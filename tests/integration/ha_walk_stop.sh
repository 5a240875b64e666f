#!/bin/sh
# ha_walk_stop.sh -- issue 31, point 1, across replicas: a destroy asked
# through one replica stops the failover walk another replica is making
# of the pool (the walk stops before its next candidate when another
# replica asks for the pool's lease), so the destroy is done in seconds,
# not after every candidate was tried.
#
# Needs PostgreSQL's server binaries (Debian postgresql; make deps):
# skipped, saying so, without them.
. "$GB_SRC/tests/lib/integration.sh"
. "$GB_SRC/tests/lib/pg.sh"

gb_pg_start "$T/pg" || exit $?
trap '_rc=$?; set +e; for _p in $BG_PIDS; do kill -TERM "$_p"; done 2>/dev/null; sleep 1; gb_pg_stop >/dev/null 2>&1; (exit $_rc); lib_cleanup' EXIT
export PGPASSWORD="$GB_PG_PASSWORD"
GPUBROKER_STATE=$(gb_pg_createdb gbws) || fail "cannot create the database"
export GPUBROKER_STATE GPUBROKER_LEASE=3s GPUBROKER_RECONCILE_PERIOD=1s
export GPUBROKER_TOKEN=demo-ci-token

sim_start
# every A10G zone of aws refuses, each after 500 ms: a walk over the 36
# candidates takes well over 30 s
sim_post /_sim/scenario '{"capacity": [{"cloud": "aws", "type": "g5.*", "count": 0}], "latency": {"aws": {"RunInstances": {"base_ms": 500, "jitter_ms": 0}}}}'

for i in 1 2; do
	"$GB" -c "$CONF" serve >"$T/r$i.out" 2>>"$T/replica$i.log" &
	BG_PIDS="$BG_PIDS $!"
	wait_until 20 "test -s '$T/r$i.out'" || fail "replica $i did not start"
done
U1=$(head -n 1 "$T/r1.out" | jq -r .listen)
U2=$(head -n 1 "$T/r2.out" | jq -r .listen)

write_spec "$T/w.yaml" ws-pool aws A10G 2
"$GB" -c "$CONF" --server "$U1" apply -f "$T/w.yaml" --auto-approve >/dev/null 2>"$T/a.err" ||
	grep -q 'ws-pool' "$T/a.err" || fail "apply through replica 1: $(cat "$T/a.err")"
wait_until 30 "\"$GB\" -c \"$CONF\" --server $U1 events --pool ws-pool -o json | jq -e '[.[] | select(.kind == \"failover\")] | length > 1'" ||
	fail "replica 1 did not start walking: $(tail -5 "$T/replica1.log")"
start=$(date +%s)
"$GB" -c "$CONF" --server "$U2" destroy ws-pool --auto-approve --timeout 60s >/dev/null 2>"$T/d.err" ||
	fail "destroy through replica 2: $(cat "$T/d.err")"
took=$(($(date +%s) - start))
check "[ $took -le 15 ]" "a destroy through replica 2 stopped replica 1's walk: done in $took s (a whole walk takes over 30 s)"
check "grep -q 'another replica asks for the pool' $T/replica1.log" "replica 1 logged why its walk stopped"
check "[ \"\$(sim_live ws-pool)\" = 0 ]" "nothing of the pool is left in cloudsim"
