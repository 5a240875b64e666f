#!/bin/sh
# pool_webhook.sh -- serve.webhook (issue 42 point 3): the daemon POSTs
# a pool's targets list ({"pool", "version", "targets"}) to the spec's
# webhook when it changes -- the same list and version (ETag) as GET
# /v1/pools/NAME/targets; a pass with no change sends nothing; a failed
# delivery is retried on a later pass, with one webhook-failed event; a
# restarted daemon sends the current list once; an
# http:// webhook off loopback is refused at validate, where it is.
. "$GB_SRC/tests/lib/integration.sh"

PY=/usr/bin/python3
[ -x $PY ] || { echo "SKIP: /usr/bin/python3 is missing"; exit 77; }
SINK=$GB_SRC/tests/lib/webhook_sink.py
unset GPUBROKER_ALLOW_INSECURE_HTTP

# two receivers: A answers 200; B answers 500 to a whole delivery (3
# tries), then 200
mkdir -p "$T/a" "$T/b"
$PY "$SINK" "$T/a" 2>"$T/a.log" &
BG_PIDS="$BG_PIDS $!"
$PY "$SINK" "$T/b" 3 2>"$T/b.log" &
BG_PIDS="$BG_PIDS $!"
wait_until 10 "test -s '$T/a/port' && test -s '$T/b/port'" || fail "the receivers did not start"

export GPUBROKER_RECONCILE_PERIOD=1s
export GPUBROKER_INVENTORY="$GB_SRC/examples/demo-inventory.yaml"
sim_start
# validate: plain http off loopback, with its file and line
write_spec "$T/bad.yaml" wh-bad aws A10G 1 on-demand "serve: {port: 8000, webhook: \"http://10.1.2.3/hook\"}"
gb validate -f "$T/bad.yaml" >"$T/bad.out" 2>&1 && fail "validate accepted an http:// webhook to 10.1.2.3"
check "grep -q 'bad.yaml:[0-9]*:[0-9]*.*pool.serve.webhook.*http://10.1.2.3/hook.*https://' $T/bad.out" \
	"validate names the file, line and key, and says https ($(head -3 "$T/bad.out"))"
write_spec "$T/ok.yaml" wh-ok aws A10G 1 on-demand "serve: {port: 8000, webhook: \"https://lb.example.com/hook\"}"
gb validate -f "$T/ok.yaml" >"$T/ok.out" 2>&1 || fail "validate refused an https webhook: $(cat "$T/ok.out")"

daemon_start
export GPUBROKER_TOKEN=demo-admin-token
H="Authorization: Bearer $GPUBROKER_TOKEN"
api() { curl -sf -H "$H" "$GPUBROKER_SERVER$1"; }
# the newest body a receiver got
last() { n=$(ls "$T/$1" | grep -c '\.json$'); cat "$T/$1/$n.json"; }
posts() { ls "$T/$1" | grep -c '\.json$'; }
passes() { api /metrics | sed -n 's/^gpubroker_reconcile_duration_seconds_count //p'; }

write_spec "$T/a.yaml" wh-a aws A10G 1 on-demand "purpose: inference" "min: 1" "max: 4" \
	"serve: {port: 8000, webhook: \"http://127.0.0.1:$(cat "$T/a/port")/hook\"}"
gb apply -f "$T/a.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply.log" ||
	fail "apply wh-a: $(tail -3 "$T/apply.log")"
curl -sf -X POST -H "$H" -H 'Content-Type: application/json' -d '{"count": 3}' \
	"$GPUBROKER_SERVER/v1/pools/wh-a/scale" >/dev/null || fail "scale wh-a"
wait_until 30 "posts a >/dev/null && last a | jq -e '.targets | length == 3' >/dev/null" ||
	fail "receiver A never got three targets ($(last a 2>/dev/null))"
api /v1/pools/wh-a/targets >"$T/get.json" || fail "GET targets"
etag=$(curl -sf -D - -o /dev/null -H "$H" "$GPUBROKER_SERVER/v1/pools/wh-a/targets" | tr -d '\r' | sed -n 's/^[Ee][Tt]ag: //p')
check "[ \"\$(last a | jq -cS .targets)\" = \"\$(jq -cS . $T/get.json)\" ]" \
	"the body's targets are GET /targets' ($(last a | jq -c .targets))"
check "[ \"\\\"\$(last a | jq -r .version)\\\"\" = '$etag' ] && last a | jq -e '.pool == \"wh-a\"' >/dev/null" \
	"the body's version is the ETag ($etag) and its pool wh-a"
check "jq -e 'length == 3 and all(.[]; (.targets[0] | test(\":8000\$\")) and .labels.pool == \"wh-a\")' $T/get.json >/dev/null" \
	"the targets carry serve.port and the labels"
check "! grep -v '^200\$' $T/a/status" "receiver A answered 200 to all"
# the same count again: the running set does not change, nothing is sent
n=$(posts a)
curl -sf -X POST -H "$H" -H 'Content-Type: application/json' -d '{"count": 3}' \
	"$GPUBROKER_SERVER/v1/pools/wh-a/scale" >/dev/null || fail "scale wh-a to 3 again"
p0=$(passes)
wait_until 20 "[ \$(passes) -ge \$((p0 + 3)) ]" || fail "no reconcile passes ($p0 -> $(passes))"
check "[ $(posts a) = $n ]" "no change: nothing more was sent after 3 passes ($n posts, now $(posts a))"
# a restarted daemon sends the current list once (what it delivered is
# kept in memory only)
ver=$(last a | jq -r .version)
daemon_stop
daemon_start
wait_until 20 "[ \$(posts a) -gt $n ]" || fail "the restarted daemon sent nothing"
p0=$(passes)
wait_until 20 "[ \$(passes) -ge \$((p0 + 3)) ]" || fail "no reconcile passes after the restart"
check "[ $(posts a) = $((n + 1)) ] && [ \"\$(last a | jq -r .version)\" = '$ver' ]" \
	"after a restart: the same list (version $ver) once ($(posts a) posts)"

# B fails its first delivery: retried on a later pass, one event
write_spec "$T/b.yaml" wh-b aws A10G 1 on-demand \
	"serve: {port: 9000, webhook: \"http://127.0.0.1:$(cat "$T/b/port")/hook\"}"
gb apply -f "$T/b.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply.log" ||
	fail "apply wh-b: $(tail -3 "$T/apply.log")"
wait_until 30 "grep -q '^200\$' $T/b/status 2>/dev/null && last b | jq -e '.targets | length == 1' >/dev/null" ||
	fail "receiver B never got its list ($(cat "$T/b/status" 2>/dev/null | tr '\n' ' '))"
check "[ \"\$(head -3 $T/b/status | tr '\n' ' ')\" = '500 500 500 ' ]" "B's first delivery failed (3 tries)"
check "[ \"\$(last b | jq -cS .targets)\" = \"\$(api /v1/pools/wh-b/targets | jq -cS .)\" ]" \
	"a later pass delivered B's list"
api '/v1/events?pool=wh-b&limit=200' >"$T/ev.json"
check "jq -e '[.events[] | select(.kind == \"webhook-failed\")] | length == 1' $T/ev.json >/dev/null" \
	"one webhook-failed event ($(jq -c '[.events[] | select(.kind == "webhook-failed") | .message]' "$T/ev.json"))"
check "jq -r '.events[] | select(.kind == \"webhook-failed\") | .message' $T/ev.json | grep -q 'serve.webhook http://127.0.0.1:[0-9]*/hook failed'" \
	"the event names the webhook"
check "[ \$(api '/v1/events?pool=wh-a&limit=200' | jq '[.events[] | select(.kind == \"webhook-failed\")] | length') = 0 ]" \
	"no webhook-failed event for A"
echo "PASS"
