#!/bin/sh
# drivers_test.sh -- `gpubroker drivers test NAME`, the conformance suite
# a driver author runs against their own driver: every shipped driver
# passes every case against a real cloudsim (aws, azure, gcp) and a local
# on-prem inventory, and leaves nothing live; a deliberately
# non-conforming driver (tests/drivers/fake/fake_sloppy.c: no token tag,
# so a replay creates anew; a secret in an error message and in a log
# line) makes it exit
# 1 naming exactly the cases it breaks; usage errors exit 2.
. "$GB_SRC/tests/lib/integration.sh"

SLOPPY=$GB_BUILD/tests/fakedrv/fake_sloppy.so
[ -f "$SLOPPY" ] || fail "$SLOPPY is not built (make $SLOPPY)"

# cases every conforming driver must pass (quota: only with the
# capability, else skipped)
MUST="offers create tags replay describe all_or_nothing errors terminate secrets cleanup"

# check_all_pass FILE DRIVER
check_all_pass() {
	for _c in $MUST; do
		check "[ \"\$(jq -r --arg c $_c '.cases[] | select(.name == \$c) | .status' $1)\" = pass ]" \
			"$2: $_c passes ($(jq -r --arg c "$_c" '.cases[] | select(.name == $c) | .detail' "$1"))"
	done
	check "[ \"\$(jq -r '.cases[] | select(.name == \"quota\") | .status' $1)\" != fail ]" "$2: quota not failed"
	check "[ \"\$(jq '.failed' $1)\" = 0 ] && [ \"\$(jq '.cases | length' $1)\" = 11 ]" "$2: 11 cases, none failed"
	check "jq -e '[.cases[] | (.duration_ms | type == \"number\") and (.detail | length > 0)] | all' $1 >/dev/null" \
		"$2: every case has a duration and a detail"
	check "jq -e '.pool | test(\"^gbconf-[0-9a-f]{8}$\")' $1 >/dev/null" "$2: the pool is gbconf-<random>"
}

sim_start

echo "== the shipped cloud drivers (and lambda, built against the SDK) against cloudsim"
for d in aws azure gcp lambda; do
	rc=0
	gb drivers test "$d" --timeout 60s -o json >"$T/$d.json" 2>"$T/$d.log" || rc=$?
	check "[ $rc = 0 ]" "$d: drivers test exits 0"
	check_all_pass "$T/$d.json" "$d"
	# the create case names the ids; cloudsim's bill lists every
	# allocation it made, deleted ones too
	curl -sf "$CONTROL/_sim/bill" | jq -r '.instances[].id' >"$T/$d.bill" ||
		fail "cannot read /_sim/bill"
	for id in $(jq -r '.cases[] | select(.name == "create") | .detail' "$T/$d.json" | sed 's/.*: //; s/,//g'); do
		check "grep -qF -- '$id' $T/$d.bill" "$d: cloudsim really made $id"
	done
done
# the suite cleaned up: nothing of any run is left pending or running
wait_until 20 '[ "$(sim_live)" = 0 ]' ||
	fail "cloudsim still has $(sim_live) live instance(s) after the suites: $(curl -sf "$CONTROL/_sim/instances?live=1")"
echo "ok: cloudsim has no live instance left"

echo "== SIGINT: the wait in progress fails, the cases left are skipped, cleanup runs"
# EC2 lists new instances only after 20 s: the tags case waits, and is
# interrupted; cleanup terminates by the ids create emitted (describe by
# pool does not show them yet)
sim_post /_sim/scenario '{"eventual_consistency_ms": 20000}'
"$GB" -c "$CONF" drivers test aws --timeout 60s -o json >"$T/int.json" 2>"$T/int.log" &
pid=$!
BG_PIDS="$BG_PIDS $pid"
wait_until 20 "grep -q '^tags \.\.\.\$' '$T/int.log'" || fail "the interrupted run never reached tags"
sleep 0.5
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
sim_post /_sim/scenario '{"eventual_consistency_ms": 0}'
check "[ $rc = 1 ]" "interrupted: exit 1 (got $rc)"
check "grep -q 'interrupted: the cases left were skipped; cleanup ran' $T/int.log" "interrupted: said so"
check "jq -e '.interrupted == true' $T/int.json >/dev/null" "interrupted: true in the JSON"
check "[ \"\$(jq -r '.cases[] | select(.name == \"tags\") | .status + \" \" + .detail' $T/int.json)\" = 'fail interrupted while describe by pool still missed 2 instance(s)' ]" \
	"interrupted: the tags wait failed, saying why"
check "[ \"\$(jq -r '[.cases[] | select(.detail == \"not run: interrupted\") | .name] | join(\" \")' $T/int.json)\" = 'replay describe all_or_nothing errors terminate secrets' ]" \
	"interrupted: the cases after it were skipped"
check "[ \"\$(jq -r '.cases[] | select(.name == \"cleanup\") | .status' $T/int.json)\" = pass ]" "interrupted: cleanup ran and passed"
wait_until 20 '[ "$(sim_live)" = 0 ]' ||
	fail "the interrupted run left $(sim_live) live instance(s)"
echo "ok: the interrupted run left nothing live"

echo "== the table and the progress lines"
rc=0
gb drivers test aws --timeout 60s >"$T/aws.table" 2>"$T/aws.err" || rc=$?
check "[ $rc = 0 ]" "table run exits 0"
check "head -n 1 $T/aws.table | grep -Eq '^CASE +RESULT +DETAIL'" "table header CASE RESULT DETAIL"
check "grep -Eq '^cleanup +pass ' $T/aws.table" "cleanup is a row"
check "grep -q '^create \.\.\.$' $T/aws.err && grep -q '10 passed, 0 failed, 1 skipped' $T/aws.err" \
	"progress and the totals on stderr"
wait_until 20 '[ "$(sim_live)" = 0 ]' || fail "the table run left instances live"

echo "== on-prem with a local inventory"
mkdir -p "$T/op"
cat >"$T/op/nodes.yaml" <<YAML
sites:
  - {name: lab, lat: 52.52, lon: 13.40, jurisdiction: EU, country: DE}
nodes:
  - {name: n1, site: lab, transport: local, gpus: {model: A100-80GB, count: 4}, price_per_gpu_hour: 1.5}
  - {name: n2, site: lab, transport: local, gpus: {model: A100-80GB, count: 4}, price_per_gpu_hour: 1.5}
YAML
cat >"$T/op/broker.yaml" <<YAML
broker_id: gbtest
state: $T/op/state.db
onprem: {inventory: $T/op/nodes.yaml}
drivers:
  - name: onprem
YAML
rc=0
"$GB" -c "$T/op/broker.yaml" drivers test onprem --timeout 20s -o json >"$T/onprem.json" 2>"$T/onprem.log" || rc=$?
check "[ $rc = 0 ]" "onprem: drivers test exits 0"
check_all_pass "$T/onprem.json" onprem
"$GB" -c "$T/op/broker.yaml" nodes -o json >"$T/op/nodes.json" 2>/dev/null || fail "nodes"
check "[ \"\$(jq '[.[] | select(.lease | type == \"object\")] | length' $T/op/nodes.json)\" = 0 ] && [ \"\$(jq length $T/op/nodes.json)\" = 2 ]" \
	"onprem: no node is still leased"

echo "== a non-conforming driver fails, naming the cases"
cat >"$T/sloppy.yaml" <<YAML
broker_id: gbtest
state: $T/sloppy.db
drivers:
  - name: sloppy
    path: $SLOPPY
YAML
rc=0
"$GB" -c "$T/sloppy.yaml" drivers test sloppy --timeout 3s -o json >"$T/sloppy.json" 2>"$T/sloppy.log" || rc=$?
check "[ $rc = 1 ]" "sloppy: drivers test exits 1 (got $rc)"
check "[ \"\$(jq -r '[.cases[] | select(.status == \"fail\") | .name] | join(\" \")' $T/sloppy.json)\" = 'tags replay describe secrets' ]" \
	"sloppy: exactly tags, replay, describe and secrets fail (failed: $(jq -r '[.cases[] | select(.status == "fail") | .name] | join(" ")' "$T/sloppy.json"))"
check "[ \"\$(jq -r '[.cases[] | select(.status == \"pass\") | .name] | join(\" \")' $T/sloppy.json)\" = 'offers create all_or_nothing errors terminate cleanup' ]" \
	"sloppy: the rest passes (its cleanup ended the replay's extra instances too)"
check "jq -r '.cases[] | select(.name == \"tags\") | .detail' $T/sloppy.json | grep -q 'tag gpubroker-token is missing'" \
	"sloppy: tags names the missing token tag"
check "jq -r '.cases[] | select(.name == \"replay\") | .detail' $T/sloppy.json | grep -q 'a new instance'" \
	"sloppy: replay says a new instance was made"
jq -r '.cases[] | select(.name == "secrets") | .detail' "$T/sloppy.json" >"$T/sloppy.secrets"
check "grep -q '^1 error(s) contain a registered secret (the first of a failed create)' $T/sloppy.secrets" \
	"sloppy: secrets names the leaking error"
check "grep -q '; 1 log line(s) show a registered secret' $T/sloppy.secrets" \
	"sloppy: secrets names the log line written before its secret was registered"
rc=0
"$GB" -c "$T/sloppy.yaml" drivers test sloppy --timeout 3s >"$T/sloppy.table" 2>"$T/sloppy.err" || rc=$?
check "[ $rc = 1 ]" "sloppy (table): exits 1"
check "grep -Eq '^replay +fail ' $T/sloppy.table && grep -q 'replay failed: ' $T/sloppy.err" \
	"sloppy (table): the failing case is a row and its whole detail is on stderr"
check "! grep -q 'sloppy-api-key-4f2a9c71\\|sloppy-session-8d1e55aa' $T/sloppy.json $T/sloppy.log $T/sloppy.table $T/sloppy.err" \
	"the leaked secret is redacted in the suite's own output"
check "grep -q 'REDACTED' $T/sloppy.json $T/sloppy.err" "(it was there to redact)"

echo "== usage"
rc=0; gb drivers test >/dev/null 2>"$T/u1" || rc=$?
check "[ $rc = 2 ] && grep -q 'one driver name' $T/u1" "no driver name: exit 2"
rc=0; gb drivers test aws --capacity cheap >/dev/null 2>"$T/u2" || rc=$?
check "[ $rc = 2 ] && grep -q 'spot, on-demand or reserved' $T/u2" "bad --capacity: exit 2"
rc=0; gb drivers --type x >/dev/null 2>"$T/u3" || rc=$?
check "[ $rc = 2 ]" "a test flag without 'test': exit 2"
rc=0; gb drivers test nosuch >/dev/null 2>"$T/u4" || rc=$?
check "[ $rc = 1 ] && grep -q 'no driver named \"nosuch\" in the config (configured: aws, azure, gcp' $T/u4" \
	"an unknown driver: exit 1, naming the configured ones"
"$GB" drivers --help >"$T/help" 2>&1 || true
check "grep -q 'drivers test NAME' $T/help" "drivers --help explains 'drivers test'"
