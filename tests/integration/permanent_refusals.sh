#!/bin/sh
# permanent_refusals.sh -- errors a person must fix reach the person
# (issue 29 point 2, issue 30 point 5), through a daemon on cloudsim:
#   1. a spec without ssh_keys whose first candidates are Azure: one
#      "refused" event with the driver's words, and the pool goes to AWS;
#      with Azure only, `apply --wait --timeout 3m` ends at once with
#      exit 1 naming the SSH key, and status (table, -o json) says it;
#      `validate` and `plan` warn before anything is made;
#   2. an image the cloud refuses (InvalidAMIID.Malformed): one event, a
#      waiting reason, and one RunInstances call over several reconcile
#      passes (not one per pass), and one daemon log line;
#   3. a policy that raises at run time on a stored pool: `scale --wait`
#      ends at once with exit 1 and the policy's words;
#   4. an on-prem node whose setup fails: one unhealthy event naming the
#      node and the exit status, the node is marked unhealthy (not the
#      whole on-prem cloud refused), and the pool goes to the cloud.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_RECONCILE_PERIOD=1s
# one cheap on-prem node whose setup fails
cat >"$T/nodes.yaml" <<EOF
sites:
  - {name: lab, lat: 50.11, lon: 8.68, jurisdiction: EU, country: DE, tags: [gdpr], carbon_g_per_kwh: 380}
nodes:
  - name: bad-node
    address: 127.0.0.1
    site: lab
    transport: local
    gpus: {model: A10G, count: 1, memory_gb: 24}
    price_per_gpu_hour: 0.01
    setup: echo "disk full on bad-node" >&2; exit 7
EOF
export GPUBROKER_INVENTORY="$T/nodes.yaml"
mkdir -p "$T/policies"
# azure first (cloudsim's T4 prices tie with AWS's), and a gate the test
# breaks later
printf 'return { score = function(req, offer) if offer.cloud == "azure" then return -1000 end return 0 end }\n' >"$T/policies/azure-first.lua"
printf 'return { filter = function(req, offer) return true end }\n' >"$T/policies/gate.lua"
cat "$GB_SRC/examples/cloudsim-broker.yaml" >"$T/broker.yaml"
echo "policy_path: [$T/policies]" >>"$T/broker.yaml"
CONF="$T/broker.yaml"
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-admin-token

# nokey FILE NAME CLOUDS: a spec without ssh_keys
nokey() {
	cat >"$1" <<EOF
pool:
  name: $2
  team: research
  count: 2
  gpu: {model: T4}
  capacity: [on-demand]
  placement: {clouds: [$3], colocate: none}
  policy: [azure-first]
EOF
}
events_of() { # POOL KIND: how many events of that kind
	gb events --pool "$1" -o json 2>/dev/null | jq --arg k "$2" '[.[] | select(.kind == $k)] | length'
}
calls() { # CLOUD OPERATION: calls cloudsim answered
	curl -sf "$CONTROL/_sim/counters" | jq --arg c "$1" --arg o "$2" '.calls[$c][$o] // 0'
}
passes() { # reconcile passes the daemon made
	curl -sf -H "Authorization: Bearer $GPUBROKER_TOKEN" "$GPUBROKER_SERVER/metrics" |
		awk '/^gpubroker_reconcile_duration_seconds_count/ {print $2}'
}

# ---- 1. no SSH key: validate and plan warn; Azure refuses, AWS places
nokey "$T/both.yaml" nokey-both "azure, aws"
gb validate -f "$T/both.yaml" >/dev/null 2>"$T/validate.err" || fail "validate: $(cat "$T/validate.err")"
check "grep -q 'warning: .*pool nokey-both has no ssh_keys, and every create on azure needs one' '$T/validate.err'" \
	"validate warns that azure needs an SSH key"
gb plan -f "$T/both.yaml" -o json >"$T/plan.json" 2>/dev/null || fail "plan nokey-both"
check "jq -e '.[0].warnings[0] | test(\"every create on azure needs one .*candidates would be refused\")' '$T/plan.json' >/dev/null" \
	"plan --server -o json: warnings say it"
check "jq -e '.[0].candidates[0].cloud == \"azure\"' '$T/plan.json' >/dev/null" "... and azure ranks first"
rc=0
gb apply -f "$T/both.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/both.err" || rc=$?
check "[ $rc = 0 ]" "azure and aws candidates: apply --wait ends with exit 0 (got $rc: $(tail -n 2 "$T/both.err"))"
check "[ \"\$(sim_live nokey-both)\" = 2 ] && [ \"\$(gb status nokey-both -o json | jq -r '.clouds | join(\",\")')\" = aws ]" \
	"... the pool went to AWS"
check "[ \"\$(events_of nokey-both refused)\" = 1 ]" "one refused event"
check "gb events --pool nokey-both | grep -q 'refused .*azure refused the request (invalid, SshKeyRequired): .*SSH public key is required'" \
	"... with the driver's words"

# Azure only: nothing can work; the wait ends at once, naming the key
nokey "$T/az.yaml" nokey-az "azure"
rc=0
t0=$(date +%s)
gb apply -f "$T/az.yaml" --auto-approve --wait --timeout 3m >/dev/null 2>"$T/az.err" || rc=$?
t1=$(date +%s)
cat "$T/az.err" | tail -n 2 | cut -c1-240
check "[ $rc = 1 ]" "azure only: apply --wait --timeout 3m exits 1 (got $rc)"
check "[ $((t1 - t0)) -lt 60 ]" "... within 60 s ($((t1 - t0)) s)"
check "grep -q 'pool nokey-az: refused: azure refused the request (invalid, SshKeyRequired): .*SSH public key is required' '$T/az.err'" \
	"... naming the SSH key"
check "! grep -q 'timed out' '$T/az.err'" "... not a timeout"
gb status nokey-az -o json >"$T/az.json"
check "jq -e '.waiting.refused == true and (.waiting.reason | test(\"^refused: azure refused the request .*SshKeyRequired\"))' '$T/az.json' >/dev/null" \
	"status -o json: waiting says it (refused: true)"
check "gb status | grep -q '^nokey-az: waiting: refused: azure refused the request'" "the status table says it"
rc=0
gb scale nokey-az 3 --wait --timeout 3m >/dev/null 2>"$T/azs.err" || rc=$?
check "[ $rc = 1 ] && grep -q 'SshKeyRequired' '$T/azs.err'" "scale --wait of that pool: exit 1 at once, saying why (got $rc)"

# ---- 2. an image the cloud refuses: once, said once, backed off
cat >"$T/ami.yaml" <<EOF
pool:
  name: bad-ami
  team: research
  count: 1
  gpu: {model: T4}
  capacity: [on-demand]
  placement: {clouds: [aws], colocate: none}
  image: {aws: not-an-ami}
EOF
r0=$(calls aws RunInstances)
rc=0
gb apply -f "$T/ami.yaml" --auto-approve --wait --timeout 3m >/dev/null 2>"$T/ami.err" || rc=$?
check "[ $rc = 1 ] && grep -q 'InvalidAMIID.Malformed' '$T/ami.err'" "bad image: apply --wait exits 1 with the cloud's words (got $rc)"
p0=$(passes)
wait_until 30 "[ \"\$(passes)\" -ge $((p0 + 5)) ]" || fail "the daemon should make 5 more reconcile passes"
r1=$(calls aws RunInstances)
check "[ $((r1 - r0)) = 1 ]" "one RunInstances call over 5 reconcile passes (got $((r1 - r0)))"
check "[ \"\$(events_of bad-ami refused)\" = 1 ]" "one refused event"
check "gb status bad-ami -o json | jq -e '.waiting.refused and (.waiting.reason | test(\"InvalidAMIID.Malformed\"))' >/dev/null" \
	"status -o json: the waiting reason"
check "[ \"\$(grep -c 'pool bad-ami: refused' '$T/daemon.log')\" = 1 ]" "the daemon logs it once, not every pass"
# an apply asks again at once (the user may have fixed the cloud's side)
gb apply -f "$T/ami.yaml" --auto-approve >/dev/null 2>&1 || :
check "[ \"\$(calls aws RunInstances)\" = $((r1 + 1)) ]" "an apply asks the cloud again, once"

# ---- 3. a policy that raises at run time on a stored pool
cat >"$T/gate.yaml" <<EOF
pool:
  name: gated
  team: research
  count: 1
  gpu: {model: T4}
  capacity: [on-demand]
  placement: {clouds: [aws], colocate: none}
  policy: [gate]
EOF
gb apply -f "$T/gate.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/gate.err" ||
	fail "apply gated: $(tail -n 3 "$T/gate.err")"
printf 'return { filter = function(req, offer) error("the gate is broken: ask the platform team") end }\n' >"$T/policies/gate.lua"
rc=0
t0=$(date +%s)
gb scale gated 3 --wait --timeout 3m >/dev/null 2>"$T/scale.err" || rc=$?
t1=$(date +%s)
cat "$T/scale.err" | tail -n 1 | cut -c1-240
check "[ $rc = 1 ]" "policy error: scale --wait exits 1 (got $rc)"
check "[ $((t1 - t0)) -lt 60 ]" "... at once ($((t1 - t0)) s)"
check "grep -q 'pool gated: refused: planning failed: .*the gate is broken: ask the platform team' '$T/scale.err'" \
	"... with the policy's words"
check "[ \"\$(events_of gated refused)\" = 1 ]" "one refused event"

# ---- 4. an on-prem node whose setup fails: the pool goes to the cloud
PLACE='{clouds: [onprem, aws], colocate: none}' write_spec "$T/onprem.yaml" lab-first onprem A10G 1
gb plan -f "$T/onprem.yaml" -o json >"$T/onprem.plan" 2>/dev/null || fail "plan lab-first"
check "jq -e '.[0].candidates[0].cloud == \"onprem\"' '$T/onprem.plan' >/dev/null" "the on-prem node ranks first"
rc=0
gb apply -f "$T/onprem.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/onprem.err" || rc=$?
check "[ $rc = 0 ]" "setup fails: apply --wait ends with exit 0 (got $rc: $(tail -n 2 "$T/onprem.err"))"
check "[ \"\$(gb status lab-first -o json | jq -r '.clouds | join(\",\")')\" = aws ]" "... the pool went to AWS"
check "[ \"\$(events_of lab-first unhealthy)\" = 1 ]" "one unhealthy event (a node's failure, not the cloud's refusal)"
check "[ \"\$(events_of lab-first refused)\" = 0 ]" "... and no refused event: the site's other nodes stay usable"
check "gb events --pool lab-first | grep -q 'unhealthy .*setup on node bad-node failed (exit 7): disk full on bad-node; node bad-node is marked unhealthy'" \
	"... naming the node, the exit status and its output"
check "gb nodes -o json | jq -e '.[] | select(.name == \"bad-node\") | .status == \"unhealthy\"' >/dev/null" \
	"... and the node is marked unhealthy"

for p in nokey-both nokey-az bad-ami gated lab-first; do
	gb destroy "$p" --auto-approve >/dev/null 2>&1 || fail "destroy $p"
done
check "[ \"\$(sim_live)\" = 0 ]" "nothing runs in cloudsim"
echo PASS
