#!/bin/sh
# daemon_config.sh -- the daemon's serving options, as a real process:
# refusing a non-loopback listen without API tokens; TLS (self-signed
# certificate made here with openssl), the CLI trusting it through
# GPUBROKER_CA_FILE; JSON log lines; SIGHUP reloading tokens (a new one
# works, a removed one stops working, without a restart); POST
# /v1/reconcile waking a reconciler whose period is 10 minutes; GET
# /v1/pools/NAME/instances.
. "$GB_SRC/tests/lib/integration.sh"

command -v openssl >/dev/null 2>&1 || fail "openssl(1) is not installed (Debian openssl; make deps installs it)"
export GPUBROKER_INVENTORY="$GB_SRC/examples/demo-inventory.yaml"
export GPUBROKER_RECONCILE_PERIOD=600s
sim_start

# edit_conf IN OUT PYTHON: the example config through a python function of
# the parsed YAML (python3-yaml; make deps installs it)
edit_conf() {
	/usr/bin/python3 - "$1" "$2" "$3" <<'EOF' || fail "cannot edit the config"
import sys, yaml
src, dst, code = sys.argv[1:4]
c = yaml.safe_load(open(src))
exec(code)
yaml.safe_dump(c, open(dst, "w"), sort_keys=False)
EOF
}
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

# 1. no tokens and a listen address that is not loopback: refused
edit_conf "$GB_SRC/examples/cloudsim-broker.yaml" "$T/notokens.yaml" 'c.pop("tokens")'
rc=0
"$GB" -c "$T/notokens.yaml" serve --listen 0.0.0.0:0 >"$T/nt.out" 2>"$T/nt.log" || rc=$?
check "[ $rc = 1 ] && grep -q 'refusing to listen on 0.0.0.0:0 without API tokens' $T/nt.log" \
	"a non-loopback listen without tokens is refused (exit $rc)"
check "grep -q 'listen on 127.0.0.1' $T/nt.log" "and the message says how to fix it"

# 2. TLS, JSON logs, a token we will remove and one we will add
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
	-keyout "$T/key.pem" -out "$T/cert.pem" >"$T/openssl.log" 2>&1 ||
	fail "openssl could not make a certificate: $(tail -3 "$T/openssl.log")"
edit_conf "$GB_SRC/examples/cloudsim-broker.yaml" "$T/broker.yaml" "
c['tls'] = {'cert': '$T/cert.pem', 'key': '$T/key.pem'}
c['daemon']['log_format'] = 'json'
c['tokens'].append({'name': 'old-ci', 'role': 'operator', 'team': 'research', 'sha256': '$(sha old-ci-token)'})
"
CONF="$T/broker.yaml"
daemon_start
check "expr \"\$GPUBROKER_SERVER\" : 'https://127.0.0.1:[0-9]*\$' >/dev/null" "the daemon says it serves https ($GPUBROKER_SERVER)"
URL=$GPUBROKER_SERVER
code=$(curl -s -o "$T/h.json" -w '%{http_code}' --cacert "$T/cert.pem" "$URL/healthz")
check "[ $code = 200 ]" "GET /healthz over TLS, certificate verified against our CA ($code)"
plain=$(echo "$URL" | sed 's/^https:/http:/')
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$plain/healthz" || true)
check "[ \"$code\" != 200 ]" "plain HTTP on the TLS port gets no answer ($code)"
rc=0
curl -s -o /dev/null --max-time 5 "$URL/healthz" || rc=$?
check "[ $rc = 60 ]" "an unknown CA is refused by curl's verification (exit $rc)"
export GPUBROKER_TOKEN=demo-ci-token
rc=0
gb status >"$T/s0.out" 2>"$T/s0.log" || rc=$?
check "[ $rc != 0 ] && grep -qi 'certificate' $T/s0.log" "the CLI refuses an untrusted certificate (exit $rc)"
GPUBROKER_CA_FILE="$T/cert.pem" gb status >"$T/s1.out" 2>"$T/s1.log" ||
	fail "the CLI with GPUBROKER_CA_FILE: $(cat "$T/s1.log")"
echo "ok: the CLI talks TLS to the daemon when GPUBROKER_CA_FILE names the CA"
export GPUBROKER_CA_FILE="$T/cert.pem"

# JSON log lines: every line of the daemon's log parses, with time, level,
# component and message
check "[ \$(wc -l <$T/daemon.log) -ge 2 ]" "the daemon logged"
check "jq -e -s 'all(.[]; has(\"time\") and has(\"level\") and has(\"msg\"))' $T/daemon.log >/dev/null" \
	"every log line is a JSON object with time, level and msg"
check "jq -e -s 'all(.[]; .time | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z\$\"))' $T/daemon.log >/dev/null" \
	"every log line's time is RFC 3339 UTC with milliseconds, as every time in JSON"
check "jq -e -s 'any(.[]; .component == \"daemon\" and (.msg | test(\"serving on .* [(]TLS[)]\")))' $T/daemon.log >/dev/null" \
	"including the daemon's 'serving on ... (TLS)' line"

# 3. SIGHUP: add a token and remove another, without a restart
auth() { curl -s -o /dev/null -w '%{http_code}' --cacert "$T/cert.pem" -H "Authorization: Bearer $1" "$URL/v1/pools"; }
check "[ \$(auth old-ci-token) = 200 ] && [ \$(auth new-ci-token) = 401 ]" "before: old token works, new one does not"
edit_conf "$T/broker.yaml" "$T/broker.yaml" "
c['tokens'] = [t for t in c['tokens'] if t['name'] != 'old-ci']
c['tokens'].append({'name': 'new-ci', 'role': 'operator', 'team': 'research', 'sha256': '$(sha new-ci-token)'})
"
pid_before=$D_PID
kill -HUP "$D_PID"
wait_until 10 "grep -q 'SIGHUP: reloaded' $T/daemon.log" || fail "no 'SIGHUP: reloaded' in the log"
check "[ \$(auth new-ci-token) = 200 ] && [ \$(auth old-ci-token) = 401 ]" "after SIGHUP: new token works, removed one is refused"
check "kill -0 $pid_before" "same process (reloaded, not restarted)"

# 4. /v1/reconcile wakes a reconciler whose period is 10 minutes, and
#    /v1/pools/NAME/instances lists what the pool has
write_spec "$T/sp.yaml" dc-spot aws A10G 2 spot
gb apply -f "$T/sp.yaml" --auto-approve --wait --timeout 60s >"$T/sp.out" 2>"$T/sp.log" ||
	fail "apply dc-spot through the daemon: $(tail -3 "$T/sp.log")"
curl -sf --cacert "$T/cert.pem" -H "Authorization: Bearer demo-ci-token" \
	"$URL/v1/pools/dc-spot/instances" >"$T/inst.json" || fail "GET /v1/pools/dc-spot/instances"
check "[ \"\$(jq '[.instances[] | select(.state==\"running\")] | length' $T/inst.json)\" = 2 ]" \
	"GET /v1/pools/dc-spot/instances lists its 2 running instances"
sim_ids=$(curl -sf "$CONTROL/_sim/instances?live=1" | jq -r '[.instances[] | select(.tags["gpubroker-pool"]=="dc-spot") | .id] | sort | join(" ")')
api_ids=$(jq -r '[.instances[].id] | sort | join(" ")' "$T/inst.json")
check "[ \"$sim_ids\" = \"$api_ids\" ]" "with cloudsim's ids"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/cert.pem" -H "Authorization: Bearer demo-viewer-token" \
	"$URL/v1/pools/dc-spot/instances")
check "[ $code = 200 ]" "a viewer of the team may list them ($code)"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/cert.pem" -H "Authorization: Bearer demo-other-team-token" \
	"$URL/v1/pools/dc-spot/instances")
check "[ $code = 404 ]" "another team's token sees no such pool ($code)"
victim=$(echo "$sim_ids" | cut -d' ' -f1)
sim_post /_sim/reclaim "{\"ids\": [\"$victim\"]}"
sleep 3
check "[ \"\$(gb status dc-spot -o json | jq -r --arg id $victim '.instances[] | select(.id==\$id) | .state')\" = running ]" \
	"3 s after the reclaim the daemon has not looked (period 10 min)"
code=$(curl -s -o "$T/rec.json" -w '%{http_code}' --cacert "$T/cert.pem" -X POST \
	-H "Authorization: Bearer demo-ci-token" "$URL/v1/reconcile")
check "[ $code = 202 ]" "POST /v1/reconcile is accepted ($code)"
wait_until 20 "gb events --pool dc-spot | grep -q 'replacing .*$victim\\|replace.*preempted'" ||
	fail "POST /v1/reconcile did not lead to the reclaimed instance being replaced: $(gb events --pool dc-spot | tail -5)"
wait_until 30 "[ \"\$(sim_live dc-spot)\" = 2 ]" || fail "the pool did not get back to 2"
echo "ok: the reconcile request replaced the reclaimed instance"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/cert.pem" -X POST \
	-H "Authorization: Bearer demo-viewer-token" "$URL/v1/reconcile")
check "[ $code = 403 ]" "a viewer may not ask for a reconcile ($code)"

# no token value in the log
check "! grep -q 'demo-ci-token\\|new-ci-token\\|old-ci-token' $T/daemon.log" "no token appears in the log"
gb destroy dc-spot --auto-approve >/dev/null 2>>"$T/destroy.log" || fail "destroy dc-spot"
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
echo PASS
