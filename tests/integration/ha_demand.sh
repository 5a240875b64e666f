#!/bin/sh
# ha_demand.sh -- two replicas on one PostgreSQL: a demand signal sent to
# the replica that does NOT converge the pool reaches the one that does
# (the signal is in the store), the pool grows to it, and both replicas
# show the same autoscale block; a replica started afterwards shows it
# too (the state survives a restart).
#
# Needs PostgreSQL's server binaries (Debian postgresql; make deps):
# skipped, saying so, without them.
. "$GB_SRC/tests/lib/integration.sh"
. "$GB_SRC/tests/lib/pg.sh"

gb_pg_start "$T/pg" || exit $?
trap '_rc=$?; set +e; for _p in $BG_PIDS; do kill -TERM "$_p"; done 2>/dev/null; sleep 1; gb_pg_stop >/dev/null 2>&1; (exit $_rc); lib_cleanup' EXIT
export PGPASSWORD="$GB_PG_PASSWORD"
GPUBROKER_STATE=$(gb_pg_createdb gbdemand) || fail "cannot create the database"
export GPUBROKER_STATE
export GPUBROKER_LEASE=5s GPUBROKER_RECONCILE_PERIOD=1s
export GPUBROKER_TOKEN=demo-ci-token
H="Authorization: Bearer $GPUBROKER_TOKEN"
sim_start

replica_start() { # I
	"$GB" -c "$CONF" serve >"$T/r$1.out" 2>>"$T/replica$1.log" &
	eval "R_$1=$!"
	BG_PIDS="$BG_PIDS $!"
	wait_until 20 "test -s '$T/r$1.out'" || fail "replica $1 did not start"
	eval "U_$1=\$(head -n 1 '$T/r$1.out' | jq -r .listen)"
}
url() { eval echo "\$U_$1"; }
pid() { eval echo "\$R_$1"; }
pool() { curl -sf -H "$H" "$(url "$1")/v1/pools/hd-a"; }
replica_start 1
replica_start 2

write_spec "$T/as.yaml" hd-a aws A10G 1 on-demand "purpose: inference" \
	"min: 1" "max: 4" "autoscale: {gpu_util_target: 0.5, up_after: 60s, down_after: 600s}"
GPUBROKER_SERVER=$(url 1) gb apply -f "$T/as.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply.log" ||
	fail "apply hd-a: $(cat "$T/apply.log")"

# the replica that holds the pool's lease (its owner id is host:pid:...)
holder_pid() {
	"$(gb_pg_psql_bin)" -X -w -h 127.0.0.1 -p "$GB_PG_PORT" -U gbadmin -d gbdemand -qAt \
		-c "SELECT owner FROM leases WHERE name = 'pool:hd-a' AND expires_ms > gb_now_ms()" 2>/dev/null |
		cut -d: -f2
}
wait_until 20 "[ -n \"\$(holder_pid)\" ]" || fail "no replica holds hd-a"
hp=$(holder_pid)
if [ "$hp" = "$(pid 1)" ]; then other=2; else other=1; fi
[ "$hp" = "$(pid 1)" ] || [ "$hp" = "$(pid 2)" ] || fail "the holder $hp is neither replica"
echo "replica $other does not hold hd-a; the demand goes there"

curl -sf -X POST -H "$H" -H 'Content-Type: application/json' -d '{"desired": 4, "for": "10m"}' \
	"$(url $other)/v1/pools/hd-a/demand" >"$T/demand.json" || fail "demand refused"
check "jq -e '.effective == 4' $T/demand.json >/dev/null" "the demand is accepted with effective 4"
wait_until 30 "[ \"\$(pool 1 | jq .desired)\" = 4 ]" || fail "hd-a stayed at $(pool 1 | jq .desired) (demand sent to the replica that does not hold it)"
echo "ok: the holder acted on the demand: hd-a's desired count is 4"
for i in 1 2; do
	check "pool $i | jq -e '.autoscale.demand.desired == 4 and .autoscale.floor == 4' >/dev/null" \
		"replica $i shows the autoscale block with the demand"
done
replica_start 3
check "pool 3 | jq -e '.autoscale.demand.desired == 4 and (.autoscale.reason | length > 0)' >/dev/null" \
	"a replica started later shows it too"
echo PASS
