#!/bin/sh
# remote_cli.sh -- the commands that read the broker's world (plan,
# drivers, offers, nodes) print the same thing locally and through a
# daemon (--server / GPUBROKER_SERVER), with the same exit codes; node
# probing through the daemon is for admins and refreshes its catalog.
. "$GB_SRC/tests/lib/integration.sh"

ADMIN=demo-admin-token VIEWER=demo-viewer-token

# the demo config, with the on-prem driver's probe replaced by a fake
# that prints a recorded gpuprobe report (tests/data/onprem)
cat >"$T/fake-gpuprobe" <<EOF
#!/bin/sh
echo "\$*" >>"$T/probe-args"
cat "$GB_SRC/tests/data/onprem/probe-a100x4-healthy.json"
EOF
chmod 755 "$T/fake-gpuprobe"
sed -e "s|^  - name: onprem\$|  - name: onprem\\n    options: {probe_path: \"$T/fake-gpuprobe\"}|" \
	-e "s|demo-inventory.yaml|$GB_SRC/examples/demo-inventory.yaml|" \
	"$GB_SRC/examples/cloudsim-broker.yaml" >"$T/broker.yaml"
grep -q fake-gpuprobe "$T/broker.yaml" || fail "could not derive the test config"
CONF=$T/broker.yaml

sim_start
daemon_start
SERVER=$GPUBROKER_SERVER
unset GPUBROKER_SERVER
local_gb() { gb "$@"; }
remote_gb() { GPUBROKER_SERVER=$SERVER GPUBROKER_TOKEN=${TOKEN:-$VIEWER} gb "$@"; }

# same COMMAND...: stdout and exit code equal locally and remotely
# same CMD...: the same output and exit code locally and through the
# daemon.  SAME_MASK, a sed expression, is applied to both outputs first
# (for columns that tick between the two runs, like a probe's age).
same() {
	local_gb "$@" >"$T/local.out" 2>"$T/local.err"
	lrc=$?
	remote_gb "$@" >"$T/remote.out" 2>"$T/remote.err"
	rrc=$?
	if [ -n "${SAME_MASK:-}" ]; then
		sed -i -E "$SAME_MASK" "$T/local.out" "$T/remote.out"
	fi
	if [ "$lrc" != "$rrc" ] || ! cmp -s "$T/local.out" "$T/remote.out"; then
		diff "$T/local.out" "$T/remote.out" | head -20
		cat "$T/remote.err"
		return 1
	fi
	[ -s "$T/local.out" ]
}

# plan: table, --explain, JSON, and a pool nothing can hold
check "same plan -f $GB_SRC/examples/gdpr-eu.yaml" "plan: same table locally and through the daemon"
check "same plan -f $GB_SRC/examples/gdpr-eu.yaml --explain" "plan --explain: same refusals"
check "same plan -f $GB_SRC/examples/inference.yaml --limit 3 -o json" "plan -o json --limit 3: same JSON"
check "[ \"\$(jq '.[0].candidates | length' $T/remote.out)\" = 3 ]" "the daemon honours --limit"
write_spec "$T/none.yaml" nothing aws A10G 1 on-demand "limits: {max_price_per_hour: 0.01}"
same plan -f "$T/none.yaml" >/dev/null 2>&1 || :
check "[ \$lrc = 1 ] && [ \$rrc = 1 ]" "no candidate: exit 1 both ways"
check "grep -q 'no offer qualifies' $T/remote.err && grep -q 'refused by price' $T/remote.err" \
	"and the daemon's plan says why (commonest refusals)"
remote_gb plan -f "$GB_SRC/examples/gdpr-eu.yaml" --policies "$GB_SRC/policies" >/dev/null 2>"$T/err" && rc=0 || rc=$?
check "[ \$rc = 2 ] && grep -q 'daemon uses its own policy path' $T/err" "--policies with --server: usage error"

# drivers and offers
check "same drivers -o json" "drivers: same JSON (name, version, ABI, capabilities, status, path)"
check "[ \"\$(jq length $T/remote.out)\" = 5 ] && jq -e 'all(.[]; .ready)' $T/remote.out >/dev/null" "five ready drivers (aws, azure, gcp, lambda, onprem)"
# the capabilities the engine acts on: one TerminateInstances for many
# EC2 ids; one listing for every region on GCE and Azure
caps() { jq -r --arg d "$1" '.[] | select(.name == $d) | .capabilities | join(",")' "$T/remote.out"; }
check "caps aws | grep -q batch-terminate && ! caps gcp | grep -q batch-terminate && ! caps azure | grep -q batch-terminate" \
	"aws terminates in batches, gcp and azure per instance"
check "caps gcp | grep -q describe-all-regions && caps azure | grep -q describe-all-regions && ! caps aws | grep -q describe-all-regions" \
	"gcp and azure describe every region at once, aws per region"
# one all-or-nothing create request for many instances: EC2 RunInstances
# and GCE bulkInsert; ARM makes one VM per request
check "caps gcp | grep -q batch-create && caps gcp | grep -q atomic-create && caps aws | grep -q atomic-create && ! caps azure | grep -q batch-create && ! caps azure | grep -q atomic-create" \
	"gcp and aws create in atomic batches, azure per instance"
# lambda: one launch (quantity) per create, not atomic (a launch may make
# fewer); one listing for all regions; one terminate for many ids
check "caps lambda | grep -q batch-create && ! caps lambda | grep -q atomic-create && caps lambda | grep -q describe-all-regions && caps lambda | grep -q batch-terminate" \
	"lambda creates in batches (not atomic), describes every region at once, terminates in batches"
# the AGE column (the on-prem probe's age) ticks between the two runs
SAME_MASK='s/ [0-9][0-9dhms]*$/ AGE/' check "same offers --gpu A100-80GB --cloud onprem" \
	"offers: same on-prem offers (the age column masked)"
unset SAME_MASK
check "same offers --capacity spot --region 'eu-*' --limit 7 -o json" "offers with filters: same JSON"
# without the config only the daemon knows the on-prem lab: the rows
# really come from it
check "GPUBROKER_SERVER=$SERVER GPUBROKER_TOKEN=$VIEWER \"\$GB\" offers --cloud onprem -o json | jq -e 'length == 1 and .[0].region == \"demo-lab\"' >/dev/null" \
	"offers --server without a local config: the daemon's on-prem offers"

# nodes: the daemon runs the driver's commands
check "same nodes sites -o json" "nodes sites: same"
local_gb nodes -o json | jq -S '[.[] | {name, site, status, gpus}]' >"$T/ln.json"
remote_gb nodes -o json | jq -S '[.[] | {name, site, status, gpus}]' >"$T/rn.json"
check "cmp -s $T/ln.json $T/rn.json && [ \"\$(jq length $T/rn.json)\" = 2 ]" "nodes: the same two nodes"
remote_gb nodes probe lab-a100-01 >/dev/null 2>"$T/err" && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q 'HTTP 403' $T/err" "nodes probe as a viewer: refused (403)"
check "[ ! -e $T/probe-args ]" "and the probe did not run"
TOKEN=$ADMIN remote_gb nodes probe lab-a100-01 -o json >"$T/probe.json" 2>"$T/err" ||
	fail "nodes probe as admin: $(cat "$T/err")"
check "grep -q -- '--quick' $T/probe-args" "the daemon ran the probe (--quick)"
check "jq -e '.[] | select(.name == \"lab-a100-01\") | .health.state == \"healthy\"' $T/probe.json >/dev/null" \
	"the node is healthy by the recorded report"
check "remote_gb offers --cloud onprem -o json | jq -e '[.[] | select(.bench != null)] | length > 0' >/dev/null" \
	"the daemon's offers carry the measured figures at once"
check "TOKEN=$ADMIN remote_gb audit -o json | jq -e '[.[] | select(.action == \"probe\" and .result == \"200\" and .target == \"lab-a100-01\")] | length == 1' >/dev/null" \
	"the probe is in the audit log"
remote_gb nodes clear lab-a100-01 >/dev/null 2>"$T/err" && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q 'HTTP 403' $T/err" "nodes clear as a viewer: refused (403)"
TOKEN=$ADMIN remote_gb nodes clear lab-a100-01 -o json >"$T/clear.json" 2>"$T/err" ||
	fail "nodes clear as admin: $(cat "$T/err")"
check "jq -e '.[0].name == \"lab-a100-01\" and .[0].health.state == \"healthy\"' $T/clear.json >/dev/null" \
	"nodes clear: POST /v1/nodes/NODE/clear answers the node (a healthy report is kept)"
check "TOKEN=$ADMIN remote_gb audit -o json | jq -e '[.[] | select(.action == \"nodes-clear\" and .target == \"lab-a100-01\" and .result == \"200\")] | length == 1' >/dev/null" \
	"the clear is in the audit log"
printf '{"nodes": "lab-a100-01"}' >"$T/bad.json"
check "[ \"\$(curl -s -o $T/body.json -w '%{http_code}' -X POST -H 'Authorization: Bearer $ADMIN' -H 'Content-Type: application/json' --data-binary @$T/bad.json $SERVER/v1/probe)\" = 400 ]" \
	"POST /v1/probe with nodes not a list: 400"
check "jq -e '.error.message | test(\"list of node names\")' $T/body.json >/dev/null" "which says what is expected"

# no daemon there
GPUBROKER_SERVER=http://127.0.0.1:1 gb drivers >/dev/null 2>"$T/err" && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q 'cannot reach the gpubroker daemon at http://127.0.0.1:1' $T/err" \
	"an unreachable daemon: exit 1 and where it tried"
echo PASS
