#!/bin/sh
# daemon_connections.sh -- one client cannot take the API down (issue 14,
# point 1).  Against a real daemon, from loopback addresses the test
# binds itself (127.0.0.2 for the attacker, 127.0.0.10-29 for the long
# polls, 127.0.0.1 for the normal client):
#   - 1,000 connections from one address that send nothing: the daemon
#     keeps at most max_connections_per_client of them, closes the others
#     at once, and closes the ones it kept after header_timeout; the
#     normal client's /healthz and /v1/pools are answered meanwhile (all
#     of 30 each);
#   - 2,000 long polls (GET /v1/events?wait=55) from 20 addresses wait
#     without a thread each: the daemon's thread count grows by less than
#     10 (it grew by one per connection before), the normal client is
#     still answered, and one event answers all 2,000 within seconds;
#   - the limits are in /metrics; under a low open-file limit the daemon
#     lowers its connection cap and says why.
. "$GB_SRC/tests/lib/integration.sh"

need_loopback_clients
export GPUBROKER_INVENTORY=${GPUBROKER_INVENTORY:-$GB_SRC/examples/demo-inventory.yaml}
{
	cat "$CONF"
	echo "  max_connections_per_client: 300"
	echo "  header_timeout: 3s"
} >"$T/broker.yaml"
CONF=$T/broker.yaml
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-admin-token

write_spec "$T/lp.yaml" lp-target aws A10G 1
gb apply -f "$T/lp.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply.log" ||
	fail "cannot apply the long-poll target pool: $(cat "$T/apply.log")"
last=$(gb events --pool lp-target -o json | jq '[.[].id] | max // 0')

$PY "$GB_SRC/tests/lib/connload.py" "$GPUBROKER_SERVER" "$GPUBROKER_TOKEN" \
	--idle 1000 --polls 2000 --poll-pool lp-target --poll-after "$last" \
	--probes 30 --pid "$D_PID" --wake --hold-idle 5 --out "$T/load.json" >"$T/load.out" 2>&1
rc=$?
[ $rc = 77 ] && { tail -n 1 "$T/load.out"; exit 77; }
[ $rc = 0 ] || fail "connload.py failed (exit $rc): $(tail -n 5 "$T/load.out")"
R=$T/load.json
jq -c . "$R"
j() { jq -r "$1" "$R"; }

check "[ \"$(j '.idle_open_after_1s')\" -le 300 ] && [ \"$(j '.idle_open_after_1s')\" -ge 250 ]" \
	"1,000 idle connections from one address: the daemon kept $(j '.idle_open_after_1s') (its cap: 300) and closed the rest at once"
check "[ \"$(j '.refused_client_cap')\" -ge 600 ]" \
	"they are counted: gpubroker_api_connections_refused_total{cap=\"client\"} = $(j '.refused_client_cap')"
check "[ \"$(j '.poll_connect_failed')\" = 0 ] && [ \"$(j '.long_polls_waiting')\" -ge 2000 ]" \
	"2,000 long polls from 20 addresses are all waiting ($(j '.long_polls_waiting'))"
hz=$(j '.probes["/healthz"].answered') pl=$(j '.probes["/v1/pools"].answered')
check "[ $hz = 30 ] && [ $pl = 30 ]" \
	"meanwhile the normal client got every answer: /healthz $hz/30 (p99 $(j '.probes["/healthz"].p99_ms') ms), /v1/pools $pl/30 (p99 $(j '.probes["/v1/pools"].p99_ms') ms)"
grow=$(( $(j '.during.Threads') - $(j '.before.Threads') ))
check "[ $grow -lt 10 ]" \
	"the daemon's threads: $(j '.before.Threads') before, $(j '.during.Threads') with ~2,300 connections (long polls cost no thread)"
echo "memory: VmRSS $(j '.before.VmRSS') kB before, $(j '.during.VmRSS') kB during"
check "[ \"$(j '.wake.answered')\" = 2000 ] && [ \"$(j '.wake.with_events')\" = 2000 ]" \
	"one scale of the pool answered all 2,000 long polls with its events ($(j '.wake.statuses'))"
check "[ \"$(j '.wake.all_within_s' | cut -d. -f1)\" -lt 15 ]" \
	"the last of them within $(j '.wake.all_within_s') s of the event"
check "[ \"$(j '.idle_open_after_hold')\" = 0 ]" \
	"the idle connections it kept were closed at the header timeout (3s): $(j '.idle_open_after_hold') still open"

# the daemon is fine afterwards, and says what its limits are
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $GPUBROKER_SERVER/healthz)\" = 200 ]" "the daemon still answers"
curl -sf -H "Authorization: Bearer $GPUBROKER_TOKEN" "$GPUBROKER_SERVER/metrics" >"$T/metrics.txt"
check "grep -q '^gpubroker_api_connections_limit{scope=\"client\"} 300$' $T/metrics.txt" "/metrics states the per-client cap"
check "grep -q '^gpubroker_api_connections_limit{scope=\"total\"} 8192$' $T/metrics.txt" "/metrics states the total cap (default 8192)"
check "grep -q '^gpubroker_api_long_polls 0$' $T/metrics.txt" "no long poll is left waiting"

gb destroy lp-target --auto-approve >/dev/null || fail "destroy failed"
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
daemon_stop

# a hard limit on open files below what max_connections needs: the
# daemon serves fewer connections and says so
(
	ulimit -Sn 1024 && ulimit -Hn 1024 &&
		exec "$GB" -c "$CONF" serve >"$T/daemon.out" 2>"$T/lowfd.log"
) &
D_PID=$!
wait_until 15 "test -s '$T/daemon.out'" || fail "the daemon did not start under ulimit -n 1024: $(cat "$T/lowfd.log")"
GPUBROKER_SERVER=$(head -n 1 "$T/daemon.out" | jq -r .listen)
check "grep -q 'daemon.max_connections is 8192, but this process may open only 1024 files' $T/lowfd.log" \
	"under ulimit -n 1024 the log says the cap does not fit, and why"
check "curl -sf -H 'Authorization: Bearer $GPUBROKER_TOKEN' $GPUBROKER_SERVER/metrics | grep -q '^gpubroker_api_connections_limit{scope=\"total\"} 512$'" \
	"and the daemon serves at most 512 connections (the rest of its files are kept for the state and the drivers)"
daemon_stop
echo PASS
