#!/bin/sh
# onprem_false_greens.sh -- no green for a broken on-prem setup (issue 41
# point 5): `validate` checks an inventory given with -f (every error at
# file:line:col, exit 1; a good one is "ok"), `drivers` exits 1 when a
# configured driver failed to initialise, and a pool that names the
# failed driver says so in `plan` and in its waiting (the other cloud, a
# fake driver, sells H100s it will not create).
set -u

fail() {
	echo "FAIL: $*"
	exit 1
}

G="$GB_BUILD/bin/gpubroker"
[ -x "$G" ] || fail "$G not built"
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/gb-onprem-greens.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM

cat >"$T/good.yaml" <<EOF
sites:
  - {name: lab, lat: 52.52, lon: 13.40, jurisdiction: EU, country: DE}
nodes:
  - name: n1
    site: lab
    transport: local
    gpus: {model: A100-80GB, count: 4}
    price_per_gpu_hour: 1.5
EOF
cat >"$T/nodes.yaml" <<EOF
sites:
  - {name: lab, lat: 52.52, lon: 13.40, jurisdiction: EU, country: DE}
nodes:
  - name: n1
    site: lba
    transport: local
    gpus: {model: A100-80GB, count: four}
    price_per_gpu_hour: 1.5
EOF
FAKE="$GB_BUILD/tests/fakedrv/fake_good.so"
[ -f "$FAKE" ] || { echo "SKIP: $FAKE is not built"; exit 77; }
cat >"$T/broker.yaml" <<EOF
broker_id: itest
state: $T/state.db
onprem: {inventory: $T/nodes.yaml}
drivers:
  - name: onprem
  - name: fake
    path: $FAKE
EOF
C="-c $T/broker.yaml"

echo "== validate -f broker.yaml -f nodes.yaml: the inventory is checked"
rc=0
"$G" validate -f "$T/broker.yaml" -f "$T/nodes.yaml" >"$T/out" 2>&1 || rc=$?
cat "$T/out"
[ $rc = 1 ] || fail "validate of a broken inventory exited $rc"
grep -q "nodes.yaml:5:11: error: nodes\[0\].site: no site named \"lba\" in sites; did you mean \"lab\"?" "$T/out" ||
	fail "the site error is not at its file:line:col"
grep -q "nodes.yaml:7:37: error: nodes\[0\].gpus.count: expected an integer" "$T/out" ||
	fail "the count error is missing"
grep -q "^skip" "$T/out" && fail "the inventory was skipped"
"$G" validate -f "$T/good.yaml" -o json >"$T/out" 2>&1 || fail "a good inventory: $(cat "$T/out")"
jq -e '.[0].kind == "inventory" and .[0].valid and .[0].nodes == 1' "$T/out" >/dev/null ||
	fail "good inventory: $(cat "$T/out")"
"$G" validate -f "$T/good.yaml" 2>&1 | grep -q "^ok  .*good.yaml: on-prem inventory (1 sites, 1 nodes)" ||
	fail "validate does not say ok for a good inventory"

echo "== drivers: exit 1 with the onprem driver not ready"
rc=0
"$G" drivers $C >"$T/out" 2>&1 || rc=$?
cat "$T/out"
[ $rc = 1 ] || fail "drivers exited $rc with a failed driver"
grep -q "1 of 2 drivers not ready (onprem)" "$T/out" || fail "drivers does not name onprem"

echo "== a pool naming the failed driver: plan and waiting say so"
cat >"$T/pool.yaml" <<EOF
pool:
  name: lab
  team: research
  count: 1
  gpu: {model: [A100-80GB, H100], count: 8}
  capacity: [on-demand]
  placement: {clouds: [onprem, fake]}
EOF
"$G" plan -f "$T/pool.yaml" $C -o json >"$T/plan.json" 2>"$T/err"
jq -e '.[0].warnings | map(test("pool lab names cloud onprem, whose driver is not ready .*inventory")) | any' "$T/plan.json" >/dev/null ||
	fail "plan -o json has no warning: $(cat "$T/plan.json")"
"$G" plan -f "$T/pool.yaml" $C >"$T/out" 2>&1
grep -q "warning: pool lab names cloud onprem, whose driver is not ready" "$T/out" ||
	fail "plan does not warn: $(cat "$T/out")"
"$G" apply -f "$T/pool.yaml" $C --auto-approve >"$T/out" 2>&1
"$G" status lab $C -o json >"$T/st.json" 2>/dev/null
jq -e '.waiting.reason | test("cloud onprem.s driver is not ready")' "$T/st.json" >/dev/null ||
	fail "waiting does not say the driver failed: $(jq -c .waiting "$T/st.json")"
"$G" destroy lab $C --auto-approve >/dev/null 2>&1 || fail "destroy"
echo PASS
