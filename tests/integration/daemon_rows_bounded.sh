#!/bin/sh
# daemon_rows_bounded.sh -- floods by an authorised caller must not grow
# the state without bound (issue 30): a token's flood of identical demand
# signals is answered 429 past its budget and writes one event and one
# audit row (per change, not per request); an instance's heartbeat flood
# is answered 429 past its budget and keeps at most one sample a second;
# identical applies write one decision record.
. "$GB_SRC/tests/lib/integration.sh"

command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 is not installed (counts the state's rows)"; exit 77; }
export GPUBROKER_RECONCILE_PERIOD=60s
sim_start
daemon_start
TOK=demo-ci-token
H="Authorization: Bearer $TOK"
U=$GPUBROKER_SERVER
rows() { sqlite3 "$GPUBROKER_STATE" "$1"; }

write_spec "$T/as.yaml" rb-a aws A10G 1 on-demand "purpose: inference" \
	"min: 1" "max: 4" "autoscale: {gpu_util_target: 0.5, up_after: 60s, down_after: 60s}"
GPUBROKER_TOKEN=$TOK gb apply -f "$T/as.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply.log" ||
	fail "apply rb-a: $(cat "$T/apply.log")"

# flood URL N BODY: N POSTs on one connection (curl's URL globbing: a
# query parameter the daemon ignores); prints one status a line
flood() {
	curl -s -o /dev/null -w '%{http_code}\n' -X POST -H "$H" \
		-H 'Content-Type: application/json' -d "$3" "$1?n=[1-$2]"
}

# ---- demand: 300 identical signals ------------------------------------
flood "$U/v1/pools/rb-a/demand" 300 '{"desired": 2, "for": "10m"}' >"$T/demand.codes"
ok=$(grep -c '^200$' "$T/demand.codes" || true)
limited=$(grep -c '^429$' "$T/demand.codes" || true)
echo "demand flood: $ok accepted, $limited limited"
check "[ $ok -ge 1 ] && [ $ok -le 125 ] && [ $((ok + limited)) = 300 ]" \
	"a token's demand signals past 120 a minute are answered 429"
check "[ \"\$(rows \"SELECT COUNT(*) FROM events WHERE pool = 'rb-a' AND kind = 'demand'\")\" = 1 ]" \
	"identical signals write one demand event"
check "[ \"\$(rows \"SELECT COUNT(*) FROM audit WHERE action LIKE '%demand%' AND result = '200'\")\" = 1 ]" \
	"and one audit row"

# ---- heartbeats: 300 from one instance --------------------------------
id=$(GPUBROKER_TOKEN=$TOK gb status rb-a -o json | jq -r '.instances[0].id')
flood "$U/v1/instances/$id/heartbeat" 300 '{"gpu_util": 0.4}' >"$T/hb.codes"
ok=$(grep -c '^200$' "$T/hb.codes" || true)
limited=$(grep -c '^429$' "$T/hb.codes" || true)
secs=$(rows "SELECT (MAX(time_ms) - MIN(time_ms)) / 1000 + 1 FROM heartbeats")
samples=$(rows "SELECT COUNT(*) FROM heartbeats")
echo "heartbeat flood: $ok accepted, $limited limited, $samples samples over ${secs}s"
check "[ $ok -le 125 ] && [ $((ok + limited)) = 300 ]" \
	"an instance's heartbeats past 120 a minute are answered 429"
check "[ $samples -le $((secs + 1)) ]" "at most one sample a second is kept"

# ---- 40 identical applies ----------------------------------------------
spec=$(gb_spec_json "$T/as.yaml")
before=$(rows "SELECT COUNT(*) FROM decisions WHERE pool = 'rb-a'")
_i=0
while [ "$_i" -lt 40 ]; do
	c=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "$H" -H 'Content-Type: application/json' \
		--data-binary "$spec" "$U/v1/pools/rb-a")
	[ "$c" = 202 ] || [ "$c" = 200 ] || fail "apply $_i answered $c"
	_i=$((_i + 1))
done
after=$(rows "SELECT COUNT(*) FROM decisions WHERE pool = 'rb-a'")
echo "decision records: $before before, $after after 40 identical applies"
check "[ $after -le $((before + 1)) ]" "identical applies keep one decision record"
echo PASS
