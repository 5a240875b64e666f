#!/bin/sh
# daemon_auth.sh -- the daemon's API security: the auth matrix (no token,
# wrong token, viewer mutating, operator on another team's pool, admin),
# an audit row for every mutation (also refused ones), request limits,
# and errors as JSON a person can act on, each answer as docs/openapi.json
# describes it (api_check).  Tokens are the demo tokens of
# examples/cloudsim-broker.yaml.
. "$GB_SRC/tests/lib/integration.sh"

sim_start
daemon_start
U=$GPUBROKER_SERVER
ADMIN=demo-admin-token CI=demo-ci-token VIEWER=demo-viewer-token OTHER=demo-other-team-token

# code TOKEN METHOD PATH [BODY] -> prints the HTTP status; the answer is
# kept for api_check (docs/openapi.json)
code() {
	if [ -n "${4:-}" ]; then
		_c=$(curl -s -o "$T/body.json" -w '%{http_code}' -X "$2" ${1:+-H "Authorization: Bearer $1"} \
			-H 'Content-Type: application/json' --data-binary "$4" "$U$3")
	else
		_c=$(curl -s -o "$T/body.json" -w '%{http_code}' -X "$2" ${1:+-H "Authorization: Bearer $1"} "$U$3")
	fi
	api_keep "$2" "$3" "$_c" "$T/body.json"
	printf %s "$_c"
}

check "[ \"\$(code '' GET /healthz)\" = 200 ]" "healthz needs no token"
check "[ \"\$(code '' GET /readyz)\" = 200 ]" "readyz needs no token"
check "[ \"\$(code '' GET /v1/pools)\" = 401 ]" "no token: 401"
check "jq -e '.error.message | test(\"bearer token\")' $T/body.json >/dev/null" "401 says how to send a token"
check "[ \"\$(code wrong-token GET /v1/pools)\" = 401 ]" "wrong token: 401"
check "[ \"\$(code '' GET /metrics)\" = 401 ]" "metrics need a token"
check "[ \"\$(code $VIEWER GET /metrics)\" = 200 ]" "a viewer may read metrics"

# an operator of team research creates a pool through the CLI
write_spec "$T/r.yaml" auth-r aws A10G 1
GPUBROKER_TOKEN=$CI gb apply -f "$T/r.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply.log" ||
	fail "operator apply failed"
spec=$(gb_spec_json "$T/r.yaml")
check "[ \"\$(code $VIEWER GET /v1/pools/auth-r)\" = 200 ]" "a viewer of the same team may read the pool"
check "[ \"\$(code $VIEWER DELETE /v1/pools/auth-r)\" = 403 ]" "a viewer may not destroy: 403"
check "jq -e '.error.message | test(\"viewer\")' $T/body.json >/dev/null" "403 says the token is a viewer"
check "[ \"\$(code $VIEWER PUT /v1/pools/auth-r \"\$spec\")\" = 403 ]" "a viewer may not apply: 403"
check "[ \"\$(code $OTHER GET /v1/pools/auth-r)\" = 404 ]" "an operator of another team does not see the pool: 404"
check "[ \"\$(code $OTHER DELETE /v1/pools/auth-r)\" = 404 ]" "nor destroy it: 404"
check "[ \"\$(code $OTHER POST /v1/pools/auth-r/scale '{\"count\": 5}')\" = 404 ]" "nor scale it: 404"
check "[ \"\$(code $OTHER GET /v1/pools | tail -c 3)\" = 200 ] && [ \"\$(jq '.pools | length' $T/body.json)\" = 0 ]" \
	"another team's list does not include the pool"
check "[ \"\$(code $OTHER PUT /v1/pools/auth-r \"\$spec\")\" = 403 ]" "an operator cannot create pools for another team"
check "[ \"\$(code $ADMIN GET /v1/pools/auth-r)\" = 200 ]" "an admin sees every pool"
check "[ \"\$(code $CI GET /v1/audit)\" = 403 ]" "audit is for admins"

# limits and errors
big=$(head -c 1200000 /dev/zero | tr '\0' 'a')
check "[ \"\$(printf '{\"x\": \"%s\"}' \"\$big\" | curl -s -o $T/body.json -w '%{http_code}' -X PUT -H 'Authorization: Bearer $ADMIN' -H 'Content-Type: application/json' --data-binary @- $U/v1/pools/big)\" = 413 ]" \
	"a body over 1 MiB: 413"
deep=$(printf '%0.s[' $(seq 1 100))
check "[ \"\$(code $ADMIN PUT /v1/pools/deep \"{\\\"pool\\\": $deep}\")\" = 400 ]" "nesting 100 deep: 400"
check "jq -e '.error.code == \"TooDeep\"' $T/body.json >/dev/null" "the error says it is too deep"
check "[ \"\$(code $ADMIN PUT /v1/pools/bad '{\"pool\": {\"name\": \"bad\", \"count\": \"many\"}}')\" = 400 ]" "an invalid spec: 400"
check "jq -e '.error.details | length > 0' $T/body.json >/dev/null" "with every problem listed"
check "[ \"\$(code $ADMIN PUT /v1/pools/bad 'not json')\" = 400 ]" "garbage: 400 InvalidJSON"
check "[ \"\$(code $ADMIN GET /v1/nope)\" = 404 ]" "unknown endpoint: 404"
check "[ \"\$(code $ADMIN PATCH /v1/pools/auth-r)\" = 405 ]" "wrong method: 405"
check "[ \"\$(code $ADMIN GET /healthz)\" = 200 ]" "the daemon keeps serving"

api_check

# every mutation audited, refused ones included
GPUBROKER_TOKEN=$ADMIN gb destroy auth-r --auto-approve >/dev/null 2>&1 || fail "admin destroy failed"
GPUBROKER_TOKEN=$ADMIN gb audit -o json >"$T/audit.json" || fail "audit failed"
check "jq -e '[.[] | select(.action==\"apply\" and .actor==\"demo-ci\" and .result==\"202\")] | length >= 1' $T/audit.json >/dev/null" \
	"the operator's apply is audited with actor and result"
check "jq -e '[.[] | select(.actor==\"demo-viewer\" and .result==\"403\")] | length >= 2' $T/audit.json >/dev/null" \
	"the viewer's refused mutations are audited"
check "jq -e '[.[] | select(.actor==\"demo-other\" and .result==\"404\")] | length >= 2' $T/audit.json >/dev/null" \
	"the other team's refused mutations are audited"
check "jq -e '[.[] | select(.action==\"destroy\" and .actor==\"demo-admin\" and .team==null)] | length == 1' $T/audit.json >/dev/null" \
	"the admin's destroy is audited"
check "jq -e 'all(.[]; .time != null and .role != null)' $T/audit.json >/dev/null" "every row has time and role"
check "! grep -q 'demo-ci-token\\|demo-admin-token' $T/audit.json $T/daemon.log" "no token value in the audit or the log"

# the request counters saw every request above (16 of them refused;
# nothing else calls the API now): the classes add up to the histogram's
# count, which its +Inf bucket equals, plus the long polls that waited
# (the CLI's waits; in their own histogram)
curl -sf -H "Authorization: Bearer $ADMIN" "$U/metrics" >"$T/metrics.txt" || fail "metrics"
m() { awk -v k="$1" '$1 == k { print $2 }' "$T/metrics.txt"; }
n=$(m gpubroker_api_request_duration_seconds_count)
inf=$(m 'gpubroker_api_request_duration_seconds_bucket{le="+Inf"}')
c2=$(m 'gpubroker_api_requests_total{code="2xx"}')
c4=$(m 'gpubroker_api_requests_total{code="4xx"}')
echo "api requests: $n counted, +Inf bucket $inf, 2xx $c2, 4xx $c4"
check "[ \"$n\" -ge 30 ] && [ \"$n\" = \"$inf\" ]" "the latency histogram counted every request"
check "[ \"$c4\" -ge 16 ] && [ \"$c2\" -ge 8 ]" "refused and served requests are counted by class"
tot=0
for c in 1 2 3 4 5; do tot=$((tot + $(m "gpubroker_api_requests_total{code=\"${c}xx\"}"))); done
lp=$(m gpubroker_api_long_poll_duration_seconds_count)
check "[ \"$tot\" = \"\$((n + lp))\" ]" "the classes add up to the requests and the long polls that waited ($tot = $n + $lp)"
echo PASS
