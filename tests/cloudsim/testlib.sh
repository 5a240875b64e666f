# testlib.sh -- helpers for the cloudsim integration tests
# (tests/integration/cloudsim_*.sh).  Source it; it needs curl, openssl and
# /usr/bin/python3 (JSON and XML checks; jq is not required).
#
#   sim_start [SCENARIO]   start cloudsim --port 0 (default scenario:
#                          tests/cloudsim/scenarios/test.yaml); sets
#                          AWS_URL AZ_URL GCP_URL GCP_TOKEN_URL CTL_URL
#                          LAMBDA_URL SIM_PID SIM_WORK; stopped (and its exit status
#                          checked: ASan leaks fail the test) at exit
#   ec2 BODY [KEY SECRET REGION]   signed POST (curl --aws-sigv4); sets
#                          HTTP (status) and BODY_FILE
#   xml_get FILE XPATH     text of the first match ('' when none)
#   jget FILE PYEXPR       python expression over j (the parsed JSON)
#   ok MSG / fail MSG / expect_eq A B MSG / expect_match REGEX STRING MSG
set -u

GB_SRC=${GB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
GB_BUILD=${GB_BUILD:-$GB_SRC/build}
CLOUDSIM=${CLOUDSIM:-$GB_BUILD/bin/cloudsim}
PY=/usr/bin/python3
SCEN_DIR=$GB_SRC/tests/cloudsim/scenarios
T=$(mktemp -d "${TMPDIR:-/tmp}/cloudsim-test.XXXXXX")
BODY_FILE=$T/body
HTTP=000
FAILS=0
SIM_PIDS=""

if [ ! -x "$CLOUDSIM" ]; then
	echo "cloudsim binary not found at $CLOUDSIM (build it: make" \
	     "BUILD=... \$BUILD/bin/cloudsim, or set GB_BUILD)"
	exit 1
fi
if [ ! -x "$PY" ]; then
	echo "SKIP: $PY is needed for JSON/XML checks"
	exit 77
fi

ok() { echo "ok   - $*"; }
fail() {
	echo "FAIL - $*"
	FAILS=$((FAILS + 1))
}
expect_eq() { # actual expected message
	if [ "$1" = "$2" ]; then ok "$3"; else fail "$3: got '$1', expected '$2'"; fi
}
expect_match() { # regex string message
	if printf '%s' "$2" | grep -Eq -- "$1"; then ok "$3"; else
		fail "$3: '$(printf '%s' "$2" | head -c 400)' does not match /$1/"
	fi
}
expect_status() { # expected message
	if [ "$HTTP" = "$1" ]; then ok "$2 (HTTP $1)"; else
		fail "$2: HTTP $HTTP, expected $1; body: $(head -c 600 "$BODY_FILE")"
	fi
}

sim_stop_all() {
	rc=0
	for p in $SIM_PIDS; do
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null
			wait "$p"
			st=$?
			if [ "$st" != 0 ]; then
				echo "FAIL - cloudsim (pid $p) exited with status" \
				     "$st (sanitizer report or crash?); its stderr:"
				tail -n 60 "$T/sim-$p.err"
				rc=1
			fi
		else
			wait "$p" 2>/dev/null
			echo "FAIL - cloudsim (pid $p) died during the test; stderr:"
			tail -n 60 "$T/sim-$p.err"
			rc=1
		fi
	done
	SIM_PIDS=""
	return $rc
}

finish() {
	sim_stop_all || FAILS=$((FAILS + 1))
	rm -rf "$T"
	if [ "$FAILS" -gt 0 ]; then
		echo "$FAILS check(s) failed"
		exit 1
	fi
	echo "all checks passed"
	exit 0
}

on_exit() {
	st=$?
	for p in $SIM_PIDS; do kill -TERM "$p" 2>/dev/null; done
	rm -rf "$T"
	exit $st
}
trap on_exit EXIT INT TERM
SIM_N=0

# sim_start [scenario] [extra args...]
sim_start() {
	scen=${1:-$SCEN_DIR/test.yaml}
	[ $# -gt 0 ] && shift
	SIM_N=$((SIM_N + 1))
	out=$T/sim-$SIM_N.out
	"$CLOUDSIM" --scenario "$scen" --port 0 "$@" >"$out" \
		2>"$T/sim-$SIM_N.err" &
	pid=$!
	SIM_PIDS="$SIM_PIDS $pid"
	i=0
	while ! grep -q . "$out" 2>/dev/null; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "cloudsim did not start:"
			cat "$T/sim-$SIM_N.err"
			exit 1
		fi
		i=$((i + 1))
		if [ $i -gt 600 ]; then
			echo "cloudsim printed nothing in 30 s"
			exit 1
		fi
		sleep 0.05
	done
	ln -sf "$T/sim-$SIM_N.err" "$T/sim-$pid.err"
	SIM_PID=$pid
	line=$(head -n 1 "$out")
	eval "$($PY -c '
import json, sys, shlex
j = json.loads(sys.argv[1])
for k, v in (("AWS_URL", "aws"), ("AZ_URL", "azure"), ("AZ_LOGIN", "azure_login"),
             ("GCP_URL", "gcp"), ("GCP_TOKEN_URL", "gcp_token"),
             ("CTL_URL", "control"), ("SIM_WORK", "workdir"),
             ("LAMBDA_URL", "lambda")):
    print("%s=%s" % (k, shlex.quote(j[v])))
' "$line")"
}

# The scenario's credentials (from /_sim/credentials).
sim_creds() {
	curl -s "$CTL_URL/_sim/credentials" >"$T/creds.json"
	eval "$($PY -c '
import json, shlex
j = json.load(open("'"$T"'/creds.json"))
a, z = j["aws"], j["azure"]
for k, v in (("AWS_KEY", a["access_key_id"]), ("AWS_SECRET", a["secret_access_key"]),
             ("AZ_TENANT", z["tenant_id"]), ("AZ_CLIENT", z["client_id"]),
             ("AZ_SECRET", z["client_secret"]), ("AZ_SUB", z["subscription_id"]),
             ("AZ_RG", z["resource_group"]), ("AZ_SUBNET", z["subnet_id"]),
             ("GCP_KEY_FILE", j["gcp_key_file"]), ("GCP_PROJECT", j["gcp"]["project_id"]),
             ("GCP_EMAIL", j["gcp"]["client_email"]), ("GCP_KID", j["gcp"]["private_key_id"])):
    print("%s=%s" % (k, shlex.quote(v)))
')"
	$PY -c '
import json
j = json.load(open("'"$GCP_KEY_FILE"'"))
open("'"$T"'/gcp-key.pem", "w").write(j["private_key"])
'
}

# req METHOD URL [curl args...] -> HTTP, BODY_FILE, headers in $T/headers
req() {
	m=$1
	u=$2
	shift 2
	HTTP=$(curl -s -o "$BODY_FILE" -D "$T/headers" -w '%{http_code}' \
		-X "$m" "$@" "$u")
}

# ec2 FORM-BODY [key secret region]
ec2() {
	k=${2:-$AWS_KEY}
	s=${3:-$AWS_SECRET}
	r=${4:-us-east-1}
	HTTP=$(curl -s -o "$BODY_FILE" -D "$T/headers" -w '%{http_code}' \
		--aws-sigv4 "aws:amz:$r:ec2" --user "$k:$s" \
		-H 'Content-Type: application/x-www-form-urlencoded; charset=utf-8' \
		--data-binary "$1" "$AWS_URL/")
}

header() { # name -> value of the response header
	tr -d '\r' <"$T/headers" | awk -v n="$(echo "$1" | tr 'A-Z' 'a-z')" '
		{ k = tolower(substr($0, 1, index($0, ":") - 1)) }
		k == n { sub(/^[^:]*:[ ]*/, ""); print; exit }'
}

# xml_get FILE PATH: first text under an ElementTree path (namespace
# stripped); '' when absent.  xml_count FILE PATH.
xml_get() {
	$PY - "$1" "$2" <<'EOF'
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
for e in t.iter():
    if '}' in e.tag: e.tag = e.tag.split('}', 1)[1]
r = t.find(sys.argv[2]) if sys.argv[2] != '.' else t
print('' if r is None or r.text is None else r.text)
EOF
}
xml_count() {
	$PY - "$1" "$2" <<'EOF'
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
for e in t.iter():
    if '}' in e.tag: e.tag = e.tag.split('}', 1)[1]
print(len(t.findall(sys.argv[2])))
EOF
}
xml_all() {
	$PY - "$1" "$2" <<'EOF'
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
for e in t.iter():
    if '}' in e.tag: e.tag = e.tag.split('}', 1)[1]
for r in t.findall(sys.argv[2]): print(r.text or '')
EOF
}

# jget FILE EXPR: evaluates EXPR with j = the parsed JSON; prints str().
jget() {
	$PY - "$1" "$2" <<'EOF'
import sys, json
j = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (dict, list)) else ('' if v is None else v))
EOF
}

ctl_post() { # path json
	req POST "$CTL_URL$1" -H 'Content-Type: application/json' \
		--data-binary "$2"
}

# Azure bearer token
az_token() {
	req POST "$AZ_LOGIN/$AZ_TENANT/oauth2/v2.0/token" \
		--data-urlencode grant_type=client_credentials \
		--data-urlencode "client_id=$AZ_CLIENT" \
		--data-urlencode "client_secret=$AZ_SECRET" \
		--data-urlencode 'scope=https://management.azure.com/.default'
	AZ_TOKEN=$(jget "$BODY_FILE" 'j["access_token"]')
}

AZ_API=2024-07-01
az_vm_url() { # name
	echo "$AZ_URL/subscriptions/$AZ_SUB/resourceGroups/$AZ_RG/providers/Microsoft.Compute/virtualMachines/$1?api-version=$AZ_API"
}
arm() { # METHOD URL [body]
	if [ $# -ge 3 ]; then
		req "$1" "$2" -H "Authorization: Bearer $AZ_TOKEN" \
			-H 'Content-Type: application/json' --data-binary "$3"
	else
		req "$1" "$2" -H "Authorization: Bearer $AZ_TOKEN"
	fi
}
# az_vm_body SIZE [zone] [spot-policy] [tags-json]
az_vm_body() {
	size=$1
	zone=${2:-}
	spot=${3:-}
	tags=${4:-'{"gpubroker-pool":"p1"}'}
	$PY - "$size" "$zone" "$spot" "$tags" "$AZ_SUBNET" <<'EOF'
import sys, json
size, zone, spot, tags, subnet = sys.argv[1:6]
b = {"location": "eastus", "tags": json.loads(tags), "properties": {
  "hardwareProfile": {"vmSize": size},
  "storageProfile": {"imageReference": {"publisher": "Canonical",
     "offer": "ubuntu-24_04-lts", "sku": "server", "version": "latest"},
     "osDisk": {"createOption": "FromImage", "deleteOption": "Delete",
                "managedDisk": {"storageAccountType": "Premium_LRS"}}},
  "osProfile": {"computerName": "vm", "adminUsername": "azureuser",
     "customData": "c2VjcmV0", "linuxConfiguration": {
       "disablePasswordAuthentication": True, "ssh": {"publicKeys": [
         {"path": "/home/azureuser/.ssh/authorized_keys",
          "keyData": "ssh-ed25519 AAAA test"}]}}},
  "networkProfile": {"networkApiVersion": "2020-11-01",
     "networkInterfaceConfigurations": [{"name": "nic", "properties": {
        "primary": True, "deleteOption": "Delete",
        "ipConfigurations": [{"name": "ip", "properties": {
           "subnet": {"id": subnet},
           "publicIPAddressConfiguration": {"name": "pip",
              "properties": {"deleteOption": "Delete"}}}}]}}]}}}
if zone: b["zones"] = [zone]
if spot:
    b["properties"]["priority"] = "Spot"
    b["properties"]["evictionPolicy"] = spot
    b["properties"]["billingProfile"] = {"maxPrice": -1}
print(json.dumps(b))
EOF
}
# Polls an Azure-AsyncOperation URL until it is not InProgress; prints the
# final status.
az_poll() {
	url=$1
	n=0
	while :; do
		arm GET "$url"
		st=$(jget "$BODY_FILE" 'j.get("status")')
		[ "$st" != InProgress ] && break
		n=$((n + 1))
		[ $n -gt 200 ] && break
		sleep 0.05
	done
	echo "$st"
}

# GCP: a signed JWT assertion built with openssl (independent of cloudsim)
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
gcp_jwt() { # [iss] [aud] [iat-offset] [lifetime] [keyfile] [scope]
	iss=${1:-$GCP_EMAIL}
	aud=${2:-$GCP_TOKEN_URL}
	off=${3:-0}
	life=${4:-3600}
	key=${5:-$T/gcp-key.pem}
	scope=${6-https://www.googleapis.com/auth/compute}
	now=$(($(date +%s) + off))
	h=$(printf '{"alg":"RS256","typ":"JWT","kid":"%s"}' "$GCP_KID" | b64url)
	c=$(printf '{"iss":"%s","scope":"%s","aud":"%s","iat":%d,"exp":%d}' \
		"$iss" "$scope" "$aud" "$now" $((now + life)) | b64url)
	sig=$(printf '%s.%s' "$h" "$c" | openssl dgst -sha256 -sign "$key" \
		-binary | b64url)
	printf '%s.%s.%s' "$h" "$c" "$sig"
}
gcp_token() {
	req POST "$GCP_TOKEN_URL" \
		--data-urlencode 'grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer' \
		--data-urlencode "assertion=$(gcp_jwt "$@")"
	GCP_TOKEN=$(jget "$BODY_FILE" 'j.get("access_token")')
}
gce() { # METHOD PATH-after-/compute/v1/ [body]
	if [ $# -ge 3 ]; then
		req "$1" "$GCP_URL/compute/v1/$2" -H "Authorization: Bearer $GCP_TOKEN" \
			-H 'Content-Type: application/json' --data-binary "$3"
	else
		req "$1" "$GCP_URL/compute/v1/$2" -H "Authorization: Bearer $GCP_TOKEN"
	fi
}
# gce_body NAME MACHINE [spot-action] [accel:count] [labels-json]
gce_body() {
	$PY - "$@" <<'EOF'
import sys, json
a = sys.argv[1:] + [""] * 5
name, mt, spot, acc, labels = a[:5]
b = {"name": name, "machineType": "zones/ZONE/machineTypes/" + mt,
     "disks": [{"boot": True, "autoDelete": True, "initializeParams": {
        "sourceImage": "projects/debian-cloud/global/images/family/debian-12",
        "diskSizeGb": "100"}}],
     "networkInterfaces": [{"network": "global/networks/default",
        "accessConfigs": [{"type": "ONE_TO_ONE_NAT"}]}],
     "scheduling": {"onHostMaintenance": "TERMINATE", "automaticRestart": False},
     "labels": json.loads(labels) if labels else {"gpubroker-pool": "p1"}}
if spot:
    b["scheduling"]["provisioningModel"] = "SPOT"
    b["scheduling"]["instanceTerminationAction"] = spot
if acc:
    t, n = acc.split(":")
    b["guestAccelerators"] = [{"acceleratorType": "zones/ZONE/acceleratorTypes/" + t,
                               "acceleratorCount": int(n)}]
print(json.dumps(b))
EOF
}
uuid() { $PY -c 'import uuid; print(uuid.uuid4())'; }
# Polls a GCE operation (zone op name) until DONE; prints the final JSON.
gce_op_done() { # zone opname
	n=0
	while :; do
		gce GET "projects/$GCP_PROJECT/zones/$1/operations/$2"
		st=$(jget "$BODY_FILE" 'j.get("status")')
		[ "$st" = DONE ] && break
		n=$((n + 1))
		[ $n -gt 200 ] && break
		sleep 0.05
	done
}
