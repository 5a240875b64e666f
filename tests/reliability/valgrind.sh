#!/bin/sh
# valgrind.sh -- memcheck over a full apply/destroy cycle against cloudsim:
#  1. the CLI (local mode): apply --wait, status, scale up, status, scale
#     down, destroy, cost, events, gc -- each run under valgrind;
#  2. the daemon under valgrind while the (plain) CLI applies pools on
#     three clouds, scales and destroys them through the API, with event
#     long-polls and /metrics scrapes; then SIGTERM.
# Clean means: no invalid read/write or use of uninitialised memory (any
# error), no definitely or indirectly lost block; "still reachable"
# one-time allocations of libcurl/OpenSSL/libmicrohttpd are fine.
# Suppressions (if any) live in tests/valgrind.supp, each commented.
# Needs a normal build (not ASan/TSan: valgrind cannot run those).
. "$GB_SRC/tests/lib/integration.sh"

command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed"; exit 77; }
if nm -D "$GB" 2>/dev/null | grep -q '__asan_init\|__tsan_init'; then
	echo "SKIP: $GB is a sanitizer build; valgrind needs a normal one (make BUILD=build/rel)"
	exit 77
fi
SUPP=$GB_SRC/tests/valgrind.supp
VG="valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --track-origins=yes --num-callers=30"
[ -f "$SUPP" ] && VG="$VG --suppressions=$SUPP"
# keep driver symbols for leak stacks
export GB_NO_DLCLOSE=1
set +e

sim_start
n=0
vg() { # NAME ARGS... : the CLI under memcheck
	_name=$1
	shift
	n=$((n + 1))
	$VG --log-file="$T/vg-$_name.log" "$GB" -c "$CONF" ${GPUBROKER_SERVER:+--server "$GPUBROKER_SERVER"} "$@" >"$T/out-$_name.txt" 2>&1
	_rc=$?
	if [ "$_rc" = 99 ]; then
		grep -A30 'ERROR SUMMARY\|definitely lost\|Invalid\|uninitialised' "$T/vg-$_name.log" | head -n 60
		fail "valgrind: errors in 'gpubroker $*'"
	fi
	[ "$_rc" = 0 ] || fail "'gpubroker $*' exited $_rc under valgrind: $(tail -n 5 "$T/out-$_name.txt")"
	grep -q 'ERROR SUMMARY: 0 errors' "$T/vg-$_name.log" || fail "valgrind: errors in 'gpubroker $*'"
	printf 'ok: valgrind clean: gpubroker %s (%s)\n' "$*" \
		"$(sed -n 's/.*in use at exit: \(.*\)/\1 in use at exit/p' "$T/vg-$_name.log" | head -n 1)"
}

# --- 1. the CLI, local mode ---
write_spec "$T/vg.yaml" vg-cli aws A10G 2
vg apply apply -f "$T/vg.yaml" --auto-approve --wait --timeout 120s
vg status1 status vg-cli
vg scale-up scale vg-cli 3
vg status2 status vg-cli -o json
check "[ \"\$(sim_live vg-cli)\" = 3 ]" "scaled to 3 in cloudsim"
vg scale-down scale vg-cli 1
vg events events --pool vg-cli
vg destroy destroy vg-cli --auto-approve
vg cost cost -o json
vg gc gc
check "[ \"\$(sim_live)\" = 0 ]" "nothing live after the CLI cycle"

# --- 2. the daemon under valgrind ---
$VG --log-file="$T/vg-daemon.log" "$GB" -c "$CONF" serve >"$T/daemon.out" 2>>"$T/daemon.log" &
D_PID=$!
wait_until 120 "test -s '$T/daemon.out'" || fail "the daemon under valgrind did not start"
GPUBROKER_SERVER=$(head -n 1 "$T/daemon.out" | jq -r .listen)
export GPUBROKER_SERVER GPUBROKER_TOKEN=demo-ci-token
write_spec "$T/d-aws.yaml" vgd-aws aws A10G 2
write_spec "$T/d-azure.yaml" vgd-azure azure T4 1
write_spec "$T/d-gcp.yaml" vgd-gcp gcp L4 2 spot
( for i in 1 2 3 4 5 6; do
	curl -s -m 20 -H "Authorization: Bearer $GPUBROKER_TOKEN" "$GPUBROKER_SERVER/v1/events?wait=3" >/dev/null
	curl -s -m 20 -H "Authorization: Bearer $GPUBROKER_TOKEN" "$GPUBROKER_SERVER/metrics" >/dev/null
  done ) &
lp=$!
for c in aws azure gcp; do
	gb apply -f "$T/d-$c.yaml" --auto-approve --wait --timeout 180s >/dev/null 2>>"$T/cli.log" ||
		fail "apply vgd-$c through the daemon under valgrind: $(tail -n 3 "$T/cli.log")"
done
gb scale vgd-aws 3 >/dev/null 2>>"$T/cli.log" || fail "scale through the daemon"
wait_until 120 "[ \"\$(sim_live vgd-aws)\" = 3 ] && [ \"\$(store_live vgd-aws)\" = 3 ]" || fail "scale did not converge"
# a spot reclaim for the reconciler's replacement path
victim=$(gb status vgd-gcp -o json | jq -r '.instances[0].id')
sim_post /_sim/reclaim "{\"ids\": [\"$victim\"]}"
wait_until 120 "gb status vgd-gcp -o json | jq -e --arg v $victim '[.instances[] | select(.state==\"running\" and .id != \$v)] | length == 2' >/dev/null" ||
	fail "the reclaimed instance was not replaced under valgrind"
# refused input on the way
curl -s -o /dev/null -X PUT -H "Authorization: Bearer $GPUBROKER_TOKEN" -H "Content-Type: application/json" --data-binary '{"pool": [[[' "$GPUBROKER_SERVER/v1/pools/x"
curl -s -o /dev/null -X PUT -H "Authorization: Bearer $GPUBROKER_TOKEN" -H "Content-Type: application/json" --data-binary '{"pool": {"name": "x", "count": "many"}}' "$GPUBROKER_SERVER/v1/pools/x"
for c in aws azure gcp; do
	gb destroy "vgd-$c" --auto-approve >/dev/null 2>>"$T/cli.log" || fail "destroy vgd-$c under valgrind"
done
wait "$lp" 2>/dev/null
check "[ \"\$(sim_live)\" = 0 ]" "nothing live after the daemon cycle"
kill -TERM "$D_PID"
wait "$D_PID"
rc=$?
D_PID=""
if [ "$rc" != 0 ]; then
	grep -B2 -A30 'Invalid\|uninitialised\|definitely lost in\|indirectly lost in' "$T/vg-daemon.log" | head -n 80
	fail "the daemon under valgrind exited $rc (99 = memcheck errors)"
fi
grep -q 'ERROR SUMMARY: 0 errors' "$T/vg-daemon.log" || fail "valgrind reports errors in the daemon"
echo "ok: valgrind clean: the daemon over apply/scale/reclaim/destroy on 3 clouds + SIGTERM"
echo "daemon: $(grep 'definitely lost\|indirectly lost\|still reachable\|ERROR SUMMARY' "$T/vg-daemon.log" | sed 's/^==[0-9]*== *//' | tr '\n' ';')"
echo "$n CLI runs + the daemon: 0 errors, 0 bytes definitely or indirectly lost"
echo PASS
