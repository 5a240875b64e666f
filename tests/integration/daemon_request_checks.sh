#!/bin/sh
# daemon_request_checks.sh -- requests the daemon refuses before routing
# and what it tells whom: a path with an encoded NUL (/v1/audit%00/x was
# cut to /v1/audit and served) and an HTTP/1.1 request without Host get
# 400; a configured token shorter than 12 characters gets 401 (its hash
# matches, its length does not); GET /v1/drivers quotes a driver's failure
# (an inventory's content) to admin tokens only.
. "$GB_SRC/tests/lib/integration.sh"

/usr/bin/python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3-yaml is missing (make deps)"; exit 77; }
sim_start
cat >"$T/nodes.yaml" <<'EOS'
sites:
  - {name: lab, lat: 52.52, lon: 13.40, jurisdiction: EU, country: DE}
nodes:
  - {name: n1, site: s3cr3t-inventory-value, transport: local}
EOS
export GPUBROKER_INVENTORY=$T/nodes.yaml
SHORT=short-tok-9
/usr/bin/python3 - "$CONF" "$T/broker.yaml" "$(printf %s "$SHORT" | sha256sum | cut -d' ' -f1)" <<'PY' || fail "cannot edit the config"
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
c['tokens'].append({'name': 'short', 'role': 'admin', 'sha256': sys.argv[3]})
yaml.safe_dump(c, open(sys.argv[2], "w"), sort_keys=False)
PY
CONF=$T/broker.yaml
daemon_start
get() { # get TOKEN PATH [CURL ARGS...]: status code, body in $T/b
	_tok=$1 _p=$2
	shift 2
	curl -s --path-as-is -o "$T/b" -w '%{http_code}' -H "Authorization: Bearer $_tok" "$@" "$GPUBROKER_SERVER$_p"
}
check "[ \$(get demo-admin-token /v1/audit%00/x) = 400 ] && jq -e '.error.code == \"BadRequest\" and (.error.message | test(\"encoded NUL\"))' $T/b >/dev/null" \
	"GET /v1/audit%00/x: 400, not /v1/audit"
check "[ \$(get demo-admin-token /v1/pools/x%00y) = 400 ]" "an encoded NUL inside a name: 400"
check "[ \$(get demo-admin-token /v1/pools -H 'Host:') = 400 ] && jq -e '.error.message | test(\"Host header\")' $T/b >/dev/null" \
	"HTTP/1.1 without Host: 400"
check "[ \$(get demo-admin-token /v1/pools --http1.0 -H 'Host:') = 200 ]" "HTTP/1.0 without Host is still fine"
check "[ \$(get demo-admin-token /v1/audit) = 200 ]" "GET /v1/audit itself works"

check "[ \$(get $SHORT /v1/pools) = 401 ] && jq -e '.error.message | test(\"shorter than 12 characters\")' $T/b >/dev/null" \
	"a configured token of 11 characters: 401, saying why"
check "grep -q 'token short is shorter than 12 characters' $T/daemon.log && ! grep -q '$SHORT' $T/daemon.log" \
	"the log names the token entry, not the token"

check "[ \$(get demo-viewer-token /v1/drivers) = 200 ] && jq -e '.drivers[] | select(.name == \"onprem\") | .ready == false' $T/b >/dev/null" \
	"viewer: GET /v1/drivers shows onprem not ready"
check "! grep -q s3cr3t-inventory-value $T/b && jq -e '.drivers[] | select(.name == \"onprem\") | .status | test(\"shown to admin\")' $T/b >/dev/null" \
	"viewer: the failure (quoting the inventory) is not shown"
check "[ \$(get demo-ci-token /v1/drivers) = 200 ] && ! grep -q s3cr3t-inventory-value $T/b" "operator: not shown either"
check "[ \$(get demo-admin-token /v1/drivers) = 200 ] && grep -q s3cr3t-inventory-value $T/b" "admin: the failure is shown"
echo PASS
