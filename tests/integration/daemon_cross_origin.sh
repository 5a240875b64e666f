#!/bin/sh
# daemon_cross_origin.sh -- a daemon without tokens (loopback only) takes
# no writes from a web page of another origin, and no request through a
# foreign DNS name (issue 30, point 4).  Before, a page elsewhere scaled
# a pool with fetch(..., {mode: 'no-cors', headers: {'Content-Type':
# 'text/plain'}}) (a "simple" request: no preflight), triggered a
# reconcile, and a foreign Host header was answered (DNS rebinding).
# Now, with curl sending what such a browser sends:
#   - a body typed text/plain, a form or multipart: 415, nothing changed;
#   - a change with a foreign Origin (or "null"): 403, nothing changed;
#     the daemon's own origin (the console's) is accepted;
#   - a foreign Host name: 403 on API and console paths; IP literals,
#     localhost and the listen address are answered;
#   - the CLI (no Origin, JSON bodies) works as before;
#   - with tokens and daemon.allowed_hosts, only those names (and
#     loopback) are answered.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_INVENTORY=${GPUBROKER_INVENTORY:-$GB_SRC/examples/demo-inventory.yaml}
# the example config without its tokens: everyone is admin, loopback only
awk '/^tokens:/ { skip = 1; next } skip && /^  / { next } { skip = 0; print }' "$CONF" >"$T/broker.yaml"
! grep -q 'sha256' "$T/broker.yaml" || fail "could not take the tokens out of the config"
CONF=$T/broker.yaml
sim_start
daemon_start
S=$GPUBROKER_SERVER
HP=${S#http://}
PORT=${HP##*:}

write_spec "$T/x.yaml" xo-x aws A10G 1
gb apply -f "$T/x.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/x.log" || fail "apply through the tokenless daemon: $(cat "$T/x.log")"
desired() { curl -s "$S/v1/pools/xo-x" | jq -r .desired; }
check "[ \"\$(desired)\" = 1 ]" "xo-x has 1"

# req METHOD PATH [curl args]: the status; the answer in $T/b
req() {
	_m=$1 _p=$2
	shift 2
	curl -s -o "$T/b" -w '%{http_code}' -X "$_m" "$@" "$S$_p"
}
code() { jq -r .error.code "$T/b"; }

# 1. the attack: a "simple" cross-origin POST (no preflight)
st=$(req POST /v1/pools/xo-x/scale -H 'Origin: http://evil.example' -H 'Content-Type: text/plain' -d '{"count": 7}')
check "[ $st = 415 ] || [ $st = 403 ]" "scale from another origin as text/plain: refused ($st $(code))"
st=$(req POST /v1/pools/xo-x/scale -H 'Content-Type: text/plain' -d '{"count": 7}')
check "[ $st = 415 ] && [ \"\$(code)\" = UnsupportedMediaType ] && jq -r .error.message $T/b | grep -q 'application/json'" \
	"a text/plain body, even without Origin: 415 saying the type to send"
for ct in 'application/x-www-form-urlencoded' 'multipart/form-data; boundary=x'; do
	st=$(req POST /v1/pools/xo-x/scale -H "Content-Type: $ct" -d '{"count": 7}')
	check "[ $st = 415 ]" "a $ct body: 415"
done
st=$(req POST /v1/pools/xo-x/scale -H 'Origin: http://evil.example' -H 'Content-Type: application/json' -d '{"count": 7}')
check "[ $st = 403 ] && [ \"\$(code)\" = CrossOrigin ]" "a JSON scale with a foreign Origin: 403 CrossOrigin"
st=$(req POST /v1/pools/xo-x/scale -H 'Origin: null' -H 'Content-Type: application/json' -d '{"count": 7}')
check "[ $st = 403 ]" "Origin: null (a sandboxed page, a file): 403"
st=$(req POST /v1/pools/xo-x/scale -H "Origin: http://127.0.0.1:1$PORT" -H 'Content-Type: application/json' -d '{"count": 7}')
check "[ $st = 403 ]" "the same host on another port is another origin: 403"
st=$(req POST /v1/reconcile -H 'Origin: http://evil.example')
check "[ $st = 403 ]" "a reconcile from another origin, without a body: 403"
st=$(req DELETE /v1/pools/xo-x -H 'Origin: http://evil.example')
check "[ $st = 403 ]" "a destroy from another origin: 403"
check "[ \"\$(desired)\" = 1 ] && [ \"\$(sim_live xo-x)\" = 1 ]" "nothing changed: xo-x still has 1"

# 2. the daemon's own origin (its console) and the CLI may change things
st=$(req POST /v1/pools/xo-x/scale -H "Origin: http://$HP" -H 'Content-Type: application/json' -d '{"count": 2}')
check "[ $st = 202 ] || [ $st = 200 ]" "a scale from the daemon's own origin (the console's): $st"
gb scale xo-x 1 >"$T/s.out" 2>&1 || fail "the CLI's scale was refused: $(cat "$T/s.out")"
check "[ \"\$(desired)\" = 1 ]" "the CLI's scale (no Origin, JSON) is done"

# 3. DNS rebinding: a foreign Host name
st=$(req GET /v1/pools -H 'Host: evil.example')
check "[ $st = 403 ] && [ \"\$(code)\" = ForbiddenHost ]" "GET /v1/pools through a foreign name: 403 ForbiddenHost"
check "jq -r .error.message $T/b | grep -q 'daemon.allowed_hosts'" "the message says how to allow a name"
st=$(req GET "/v1/pools/xo-x" -H "Host: evil.example:$PORT")
check "[ $st = 403 ]" "a pool's GET through a foreign name and the port: 403"
st=$(req GET /metrics -H 'Host: rebind.evil.example')
check "[ $st = 403 ]" "/metrics through a foreign name: 403"
st=$(req GET / -H 'Host: evil.example')
check "[ $st = 403 ]" "the console's page through a foreign name: 403"
for h in "127.0.0.1:$PORT" "localhost:$PORT" "localhost" "[::1]:$PORT" "app.localhost:$PORT"; do
	st=$(req GET /v1/pools -H "Host: $h")
	check "[ $st = 200 ]" "Host $h: 200"
done
check "[ \"\$(curl -s -H 'Host: evil.example' $S/healthz | jq -r .status)\" = ok ]" "/healthz answers any name (nothing to read there)"
daemon_stop

# 4. with tokens, daemon.allowed_hosts limits the names too
{
	cat "$GB_SRC/examples/cloudsim-broker.yaml"
	echo "  allowed_hosts: [broker.example.com]"
} >"$T/tok.yaml"
CONF=$T/tok.yaml
daemon_start
S=$GPUBROKER_SERVER
A='Authorization: Bearer demo-admin-token'
st=$(req GET /v1/pools -H "$A" -H 'Host: evil.example')
check "[ $st = 403 ]" "tokens and allowed_hosts: a foreign name: 403"
st=$(req GET /v1/pools -H "$A" -H 'Host: broker.example.com')
check "[ $st = 200 ]" "a listed name: 200"
st=$(req POST /v1/pools/xo-x/scale -H "$A" -H 'Host: 10.0.0.5:7878' -H 'Origin: https://broker.example.com' -H 'Content-Type: application/json' -d '{"count": 1}')
check "[ $st = 202 ] || [ $st = 200 ]" "the listed name's origin behind a proxy that changes Host: accepted ($st)"
GPUBROKER_TOKEN=demo-admin-token gb destroy xo-x --auto-approve >"$T/d.out" 2>&1 || fail "destroy xo-x: $(cat "$T/d.out")"
echo "PASS: daemon_cross_origin"
