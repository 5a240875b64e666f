#!/bin/sh
# openapi.sh -- the API's description (docs/openapi.json) against the live
# daemon: GET /v1/openapi.json serves it without a token, and every
# answer this test receives (each /v1 operation, the errors 400, 401, 403,
# 404, 405, 413, 415, 422) is checked against its operation, status and schema
# by tests/lib/openapi_check.py (Debian's python3-jsonschema), objects
# closed: a key the daemon sends that the description lacks fails as
# much as a missing one.  Which routes exist is test_openapi's (unit).
. "$GB_SRC/tests/lib/integration.sh"

PY=/usr/bin/python3
[ -x $PY ] && $PY -c 'import jsonschema, yaml' 2>/dev/null ||
	{ echo "SKIP: /usr/bin/python3 with jsonschema and yaml is needed (make deps: python3-jsonschema, python3-yaml)"; exit 77; }
DOC=$GB_SRC/docs/openapi.json

sim_start
daemon_start
U=$GPUBROKER_SERVER
ADMIN=demo-admin-token CI=demo-ci-token VIEWER=demo-viewer-token

# req TOKEN METHOD PATH[?QUERY] [BODY [CONTENT-TYPE]] (@FILE: the file's):
# the status in $STATUS, the body in $T/last.json, kept for api_check
req() {
	if [ $# -ge 4 ]; then
		STATUS=$(curl -s -o "$T/last.json" -w '%{http_code}' -X "$2" ${1:+-H "Authorization: Bearer $1"} \
			-H "Content-Type: ${5:-application/json}" --data-binary "$4" "$U$3")
	else
		STATUS=$(curl -s -o "$T/last.json" -w '%{http_code}' -X "$2" ${1:+-H "Authorization: Bearer $1"} "$U$3")
	fi
	api_keep "$2" "$3" "$STATUS" "$T/last.json"
}
# expect STATUS TOKEN METHOD PATH [BODY [CONTENT-TYPE]]
expect() {
	_want=$1
	shift
	req "$@"
	[ "$STATUS" = "$_want" ] || fail "$2 $3: $STATUS, expected $_want: $(head -c 400 "$T/last.json")"
}

# the description itself: no token, exactly the file
expect 200 "" GET /v1/openapi.json
cmp -s "$T/last.json" "$DOC" || fail "GET /v1/openapi.json is not docs/openapi.json"
echo "ok: GET /v1/openapi.json without a token is docs/openapi.json"
expect 405 $CI PUT /v1/openapi.json '{}'
expect 401 "" GET /v1/pools
expect 401 wrong-token GET /v1/whoami
expect 200 $CI GET /v1/whoami
expect 200 $ADMIN GET /v1/whoami

# a pool's life
write_spec "$T/p.yaml" oa-1 aws A10G 1
spec=$(gb_spec_json "$T/p.yaml")
expect 400 $CI PUT /v1/pools/oa-1 '{"pool": {"name": "oa-1", "count": "many"}}'
expect 400 $CI PUT /v1/pools/oa-2 "$spec"
expect 400 $CI PUT /v1/pools/oa-1 'not json'
expect 403 $VIEWER PUT /v1/pools/oa-1 "$spec"
expect 200 $CI POST /v1/pools/oa-1/diff "$spec"
expect 200 $CI POST /v1/plan "$spec"
expect 200 $CI 'POST' '/v1/plan?explain=1&limit=3' "$(cat "$T/p.yaml")" application/yaml
expect 202 $CI PUT /v1/pools/oa-1 "$spec"
wait_until 30 "[ \"\$(curl -s -H 'Authorization: Bearer $CI' $U/v1/pools/oa-1 | jq .running)\" = 1 ]" ||
	fail "oa-1 did not run"
expect 200 $CI GET /v1/pools/oa-1
id=$(jq -r '.instances[0].id' "$T/last.json")
expect 200 $VIEWER GET /v1/pools
expect 200 $CI 'GET' '/v1/pools?instances=1'
expect 200 $CI 'GET' '/v1/pools?limit=1&team=research'
expect 400 $CI 'GET' '/v1/pools?limit=0'
expect 200 $CI GET /v1/pools/oa-1/instances
expect 200 $CI GET /v1/pools/oa-1/targets
expect 404 $CI GET /v1/pools/nope/targets
expect 200 $VIEWER GET /v1/queue
expect 404 "" GET /v1/agent/package
expect 401 "" POST /v1/agent/register '{"instance": "oa-1-0", "bootstrap_token": "gbb_not-a-token"}'
expect 400 "" POST /v1/agent/register '{"nope": 1}'
expect 401 "" POST /v1/agent/report '{"instance": "oa-1-0", "gpus": []}'
expect 200 $CI GET /v1/pools/oa-1/plan
expect 200 $CI GET /v1/pools/oa-1/spec
expect 404 $CI GET /v1/pools/nope/spec
expect 200 $CI POST "/v1/instances/$id/heartbeat" '{"gpu_util": 0.5}'
expect 400 $CI POST "/v1/instances/$id/heartbeat" '{"gpu_util": 2}'
expect 404 $CI POST /v1/instances/i-nope/heartbeat '{"gpu_util": 0.5}'
expect 202 $CI POST /v1/pools/oa-1/scale '{"count": 2}'
expect 400 $CI POST /v1/pools/oa-1/scale '{"count": "two"}'
expect 422 $CI POST /v1/pools/oa-1/scale '{"count": -1}'
expect 422 $CI POST /v1/pools/oa-1/demand '{"desired": 2}'
expect 403 $VIEWER POST /v1/pools/oa-1/scale '{"count": 1}'

# the rest of the API
expect 200 $CI 'GET' '/v1/offers?gpu=A10G&cloud=aws'
expect 400 $CI 'GET' '/v1/offers?region=nowhere-*'
expect 403 $CI POST /v1/offers/refresh
expect 200 $ADMIN 'POST' '/v1/offers/refresh?cloud=aws'
expect 404 $ADMIN POST /v1/offers/other
expect 200 $CI GET /v1/events
expect 200 $CI 'GET' '/v1/events?pool=oa-1&after=1'
expect 200 $CI GET /v1/cost
expect 200 $ADMIN 'GET' '/v1/cost?by=team'
expect 200 $CI GET /v1/usage
expect 200 $ADMIN 'GET' '/v1/usage?by=weekday&pool=oa-1'
expect 400 $CI 'GET' '/v1/usage?by=month'
expect 200 $CI GET /v1/drivers
expect 403 $VIEWER POST "/v1/instances/$id/heartbeat" '{"gpu_util": 0.5}'
expect 403 $CI POST /v1/gc
expect 200 $ADMIN GET /v1/audit
check "jq -e '[.audit[] | select(.actor == \"demo-viewer\" and .action == \"POST\" and .result == \"403\")] | length == 1' '$T/last.json' >/dev/null" \
	"a viewer's refused heartbeat is audited (under its method)"
check "jq -e '[.audit[] | select(.actor == \"demo-ci\" and .action == \"gc\" and .result == \"403\")] | length == 1' '$T/last.json' >/dev/null" \
	"an operator's refused gc is audited as gc"
expect 403 $CI GET /v1/audit
expect 200 $ADMIN POST /v1/gc
expect 202 $CI POST /v1/reconcile
expect 200 $VIEWER GET /v1/nodes
expect 200 $VIEWER GET /v1/sites
expect 400 $ADMIN POST /v1/probe '{"nodes": "all"}'
# a node of the demo inventory is this machine (transport: local): its
# probe answers (200), or says why it could not (502, no gpuprobe built)
req $ADMIN POST /v1/probe '{"nodes": ["lab-a100-01"]}'
case $STATUS in 200 | 502) echo "ok: POST /v1/probe: $STATUS" ;; *) fail "POST /v1/probe: $STATUS: $(head -c 300 "$T/last.json")" ;; esac
expect 403 $CI POST /v1/nodes/lab-a100-01/clear
expect 200 $ADMIN POST /v1/nodes/lab-a100-01/clear
# this broker trusts no OIDC issuer (oidc.sh checks the exchange itself)
expect 404 "" POST /v1/auth/oidc '{"token": "x"}'
expect 415 $CI POST /v1/reconcile '{}' text/plain
expect 400 $CI GET '/v1/pools/a%00b'
# raw: a change from another origin's web page (403 CrossOrigin), an
# HTTP/1.1 request without Host (400)
raw() {
	STATUS=$(curl -s -o "$T/last.json" -w '%{http_code}' "$@")
	api_keep "$M" "$P" "$STATUS" "$T/last.json"
}
M=POST P=/v1/reconcile raw -X POST -H "Authorization: Bearer $CI" -H 'Origin: http://evil.example' \
	-H 'Content-Type: application/json' --data-binary '{}' "$U/v1/reconcile"
check "[ $STATUS = 403 ] && jq -e '.error.code == \"CrossOrigin\"' '$T/last.json' >/dev/null" "a cross-origin change is 403 CrossOrigin"
M=GET P=/v1/whoami raw -H "Authorization: Bearer $CI" -H 'Host:' "$U/v1/whoami"
check "[ $STATUS = 400 ]" "an HTTP/1.1 request without Host is 400"
expect 404 $ADMIN GET /v1/nope
expect 405 $ADMIN PATCH /v1/pools/oa-1
{ printf '{"x": "'; head -c 1100000 /dev/zero | tr '\0' a; printf '"}'; } >"$T/big.json"
expect 413 $ADMIN PUT /v1/pools/big "@$T/big.json"
expect 202 $CI DELETE /v1/pools/oa-1
wait_until 30 "[ \"\$(curl -s -H 'Authorization: Bearer $CI' $U/v1/pools/oa-1?all=1 | jq -r .state)\" = destroyed ]" ||
	fail "oa-1 was not destroyed"
expect 404 $CI GET /v1/pools/oa-1
expect 200 $CI 'GET' '/v1/pools/oa-1?all=1'
expect 200 $CI 'GET' '/v1/pools?all=1'
check "jq -e '[.pools[] | select(.name == \"oa-1\" and .state == \"destroyed\")] | length == 1' '$T/last.json' >/dev/null" \
	"?all=1 lists the destroyed pool"
expect 404 $CI DELETE /v1/pools/nope

# OPENAPI_KEEP=DIR keeps the answers (to write a schema from)
if [ -n "${OPENAPI_KEEP:-}" ]; then cp -r "$T/api" "$OPENAPI_KEEP"/; fi
api_check
# every operation of the description was answered at least once
cov=$(sed -n 's/.* \([0-9]*\) operations of \([0-9]*\) covered.*/\1 \2/p' "$T/api/check.out")
check "[ -n \"$cov\" ] && [ \"\${cov% *}\" = \"\${cov#* }\" ]" "every operation of the description was answered ($cov)"
echo PASS
