#!/bin/sh
# daemon_floods.sh -- floods that must not fill the disk or hammer the
# clouds (issue 14, points 3 and 5), against a real daemon:
#   - 3,000 refused requests from one address (no token) write at most
#     daemon.refusals_per_minute audit rows, the rest are counted in a
#     metric, the next row written for that address says how many were
#     left out, and another address's refusals are still audited;
#   - an operator's flood of POST /v1/reconcile: the token's budget
#     (daemon.reconcile_per_minute) answers the rest 429 with Retry-After,
#     requests made while a pass runs join it, so a few passes run (not
#     hundreds) and cloudsim sees a few describes;
#   - retention: audit rows and events older than
#     daemon.audit_retention / events_retention are deleted by the daemon;
#   - the state's size is a metric, with a warning over
#     daemon.state_size_warning.
. "$GB_SRC/tests/lib/integration.sh"

need_loopback_clients
export GPUBROKER_INVENTORY=${GPUBROKER_INVENTORY:-$GB_SRC/examples/demo-inventory.yaml}
export GPUBROKER_RECONCILE_PERIOD=60s # passes happen on request only
BASE=$CONF
{
	cat "$BASE"
	echo "  refusals_per_minute: 60"
	echo "  reconcile_per_minute: 6"
} >"$T/broker.yaml"
CONF=$T/broker.yaml
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
ADMIN="Authorization: Bearer $GPUBROKER_TOKEN"
sql() {
	$PY - "$GPUBROKER_STATE" "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10)
print(c.execute(sys.argv[2]).fetchone()[0])
PY
}
metric() { # NAME{labels}
	curl -sf -H "$ADMIN" "$GPUBROKER_SERVER/metrics" | awk -v k="$1" '$1 == k { print $2 }'
}

# flood FROM COUNT METHOD PATH [TOKEN]: COUNT requests, one connection
# each, from address FROM; prints the statuses as JSON {status: count}
# and the Retry-After values seen
flood() {
	$PY - "$GPUBROKER_SERVER" "$@" <<'PY'
import json, socket, sys
from urllib.parse import urlsplit
u = urlsplit(sys.argv[1])
src, n, method, path = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
token = sys.argv[6] if len(sys.argv) > 6 else None
seen, retry, bodies = {}, set(), {}
for _ in range(n):
    s = socket.socket()
    s.bind((src, 0))
    s.connect((u.hostname, u.port))
    req = "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n" % (method, path)
    if token:
        req += "Authorization: Bearer %s\r\n" % token
    s.sendall(req.encode() + b"\r\n{}")
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    st = head.split(b"\r\n", 1)[0].split()[1].decode()
    seen[st] = seen.get(st, 0) + 1
    kinds = bodies.setdefault(st, [])
    if len(kinds) < 5 and body.decode(errors="replace") not in kinds:
        kinds.append(body.decode(errors="replace"))
    for h in head.split(b"\r\n")[1:]:
        k, _, v = h.partition(b":")
        if k.strip().lower() == b"retry-after":
            retry.add(int(v.strip()))
print(json.dumps({"statuses": seen, "retry_after": sorted(retry), "bodies": bodies}))
PY
}

# ---- refusals: 3,000 unauthenticated PUTs from 127.0.0.3
a0=$(sql "SELECT count(*) FROM audit")
flood 127.0.0.3 3000 PUT /v1/pools/flood-x >"$T/f1.json"
check "[ \"\$(jq -r '.statuses[\"401\"]' $T/f1.json)\" = 3000 ]" "3,000 requests without a token: each refused 401"
a1=$(sql "SELECT count(*) FROM audit")
check "[ $((a1 - a0)) -le 65 ] && [ $((a1 - a0)) -ge 55 ]" \
	"they wrote $((a1 - a0)) audit rows, not 3,000 (daemon.refusals_per_minute: 60)"
dropped=$(metric gpubroker_audit_refusals_dropped_total)
check "[ \"${dropped%.*}\" -ge 2935 ]" "the others are counted: gpubroker_audit_refusals_dropped_total = $dropped"
flood 127.0.0.4 5 PUT /v1/pools/flood-y >/dev/null
a2=$(sql "SELECT count(*) FROM audit")
check "[ $((a2 - a1)) = 5 ]" "another address's 5 refusals are all audited (its own budget)"
# the budget refills at one a second: the next refusal from 127.0.0.3 is
# written, and says how many were left out
sleep 1.5
flood 127.0.0.3 1 PUT /v1/pools/flood-x >/dev/null
sql "SELECT detail FROM audit ORDER BY id DESC LIMIT 1" >"$T/last"
echo "the last audit row: $(cat "$T/last")"
check "grep -q 'from 127.0.0.3 (and [0-9]* earlier refusals from this address' $T/last" \
	"the next row written for that address says how many were not"

# ---- on-demand reconciles: a pool for the passes to describe, and
# cloudsim slowed down so a pass takes a while (requests join it)
write_spec "$T/p.yaml" flood-pool aws A10G 1
gb apply -f "$T/p.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply.log" ||
	fail "apply failed: $(cat "$T/apply.log")"
sim_post /_sim/scenario '{"latency": {"aws": {"DescribeInstances": {"base_ms": 1500, "jitter_ms": 0}}}}'
c0=$(metric gpubroker_reconcile_duration_seconds_count)
d0=$(curl -sf "$CONTROL/_sim/counters" | jq '.calls.aws.DescribeInstances // 0')
au0=$(sql "SELECT count(*) FROM audit WHERE action = 'reconcile'")
flood 127.0.0.5 400 POST /v1/reconcile "$GPUBROKER_TOKEN" >"$T/f2.json"
jq -c '{statuses, retry_after}' "$T/f2.json"
check "[ \"\$(jq -r '.statuses[\"202\"]' $T/f2.json)\" = 6 ] && [ \"\$(jq -r '.statuses[\"429\"]' $T/f2.json)\" = 394 ]" \
	"400 POST /v1/reconcile by one token: 6 accepted (its budget a minute), 394 refused 429"
check "jq -e '.retry_after | length > 0 and min >= 1 and max <= 11' $T/f2.json >/dev/null" \
	"the 429s carry Retry-After ($(jq -c .retry_after "$T/f2.json") s)"
check "jq -r '.bodies[\"429\"][0]' $T/f2.json | grep -q 'may ask for 6 reconciles a minute'" \
	"the 429 says why: $(jq -r '.bodies["429"][0]' "$T/f2.json" | head -c 200)"
# the passes run out (each takes 1.5 s or more); then count them
i=0
while [ "$(metric gpubroker_reconcile_duration_seconds_count)" = "$c0" ] && [ $i -lt 80 ]; do
	sleep 0.25
	i=$((i + 1))
done
sleep 5
c1=$(metric gpubroker_reconcile_duration_seconds_count)
d1=$(curl -sf "$CONTROL/_sim/counters" | jq '.calls.aws.DescribeInstances // 0')
check "[ $((c1 - c0)) -ge 1 ] && [ $((c1 - c0)) -le 2 ]" \
	"the 6 accepted requests ran $((c1 - c0)) reconcile passes (the rest joined a running or requested one)"
check "[ $((d1 - d0)) -le 4 ]" "cloudsim saw $((d1 - d0)) DescribeInstances calls from them"
check "jq -r '.bodies[\"202\"][]' $T/f2.json | grep -q 'joined'" \
	"a request made while a pass was pending or running says it joined it: $(jq -c '.bodies["202"]' "$T/f2.json")"
au1=$(sql "SELECT count(*) FROM audit WHERE action = 'reconcile'")
check "[ $((au1 - au0)) -le 70 ]" "the flood wrote $((au1 - au0)) audit rows, not 400"
sim_post /_sim/scenario '{"latency": {"aws": {"DescribeInstances": {"base_ms": 0, "jitter_ms": 0}}}}'
gb destroy flood-pool --auto-approve >/dev/null || fail "destroy failed"

# ---- retention and size: a daemon that keeps 3 s of audit and events,
# and warns over 1 KiB
daemon_stop
n_audit=$(sql "SELECT count(*) FROM audit")
n_events=$(sql "SELECT count(*) FROM events")
{
	cat "$BASE"
	echo "  audit_retention: 3s"
	echo "  events_retention: 3s"
	echo "  state_size_warning: 1KiB"
} >"$T/broker.yaml"
# old_rows: audit rows and events older than 4 s (retention 3 s, and
# a second of slack for the pass that deletes them)
old_rows() {
	$PY - "$GPUBROKER_STATE" <<'PY'
import sqlite3, sys, time
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10)
cut = int(time.time() * 1000) - 4000
print(sum(c.execute("SELECT count(*) FROM %s WHERE time_ms < ?" % t, (cut,)).fetchone()[0]
          for t in ("audit", "events")))
PY
}
sleep 5
check "[ $(old_rows) -ge $((n_audit + n_events)) ]" "with the daemon stopped: $n_audit audit rows and $n_events events, all older than 4 s"
export GPUBROKER_RECONCILE_PERIOD=1s
daemon_start
check "wait_until 20 '[ \$(old_rows) = 0 ]'" "the daemon deleted every audit row and event past its retention (3 s)"
check "[ \"\$(sql \"SELECT count(*) FROM pools WHERE name = 'flood-pool'\")\" = 1 ]" "pools are kept"
pa=$(metric 'gpubroker_retention_deleted_total{table="audit"}')
check "[ \"${pa%.*}\" -ge $n_audit ]" "the deletions are counted: gpubroker_retention_deleted_total{table=\"audit\"} = $pa"
size=$(metric gpubroker_state_bytes)
check "[ \"${size:-0}\" -gt 1024 ]" "gpubroker_state_bytes = $size"
check "[ \"\$(metric gpubroker_state_size_warning_bytes)\" = 1024 ]" "gpubroker_state_size_warning_bytes = 1024"
check "[ \"\$(metric gpubroker_state_disk_free_bytes)\" -gt 0 ]" "gpubroker_state_disk_free_bytes is known"
check "grep -q 'over daemon.state_size_warning (1024 bytes' $T/daemon.log" "the log warns that the state is over its size warning"
check "[ \"\$(grep -c 'over daemon.state_size_warning' $T/daemon.log)\" = 1 ]" "once (then hourly), not every pass"
daemon_stop
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
echo PASS
