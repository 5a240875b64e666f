#!/bin/sh
# onprem_first.sh -- owned nodes first, and no green for a partial plan
# (issue 41 point 2): examples/onprem-burst.yaml with the shipped AWS and
# GCP catalogs and examples/onprem-inventory.yaml ranks the on-prem nodes
# above every cloud offer (its capacity order puts spot before
# on-demand), places all 6 (on-prem first, then the cloud burst) and
# exits 0; a pool the known offers cannot hold exits 1 unless
# --allow-partial.  No cloud is contacted (plan only).
set -u

fail() {
	echo "FAIL: $*"
	exit 1
}

G="$GB_BUILD/bin/gpubroker"
[ -x "$G" ] || fail "$G not built"
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/gb-onprem-first.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
cat >"$T/broker.yaml" <<EOF
broker_id: itest
state: $T/state.db
onprem: {inventory: $GB_SRC/examples/onprem-inventory.yaml}
drivers:
  - name: aws
  - name: gcp
  - name: onprem
EOF
C="-c $T/broker.yaml"

echo "== the example: on-prem first, then the burst"
"$G" plan -f "$GB_SRC/examples/onprem-burst.yaml" $C -o json >"$T/plan.json" 2>"$T/err" ||
	fail "plan of the example exited non-zero: $(cat "$T/err")"
jq -e '.[0].candidates[0].cloud == "onprem"' "$T/plan.json" >/dev/null ||
	fail "the first candidate is not on-prem: $(jq -c '.[0].candidates[0]' "$T/plan.json")"
jq -e '[.[0].candidates[] | .cloud] | (index("aws") // 1e9) > (rindex("onprem"))' "$T/plan.json" >/dev/null ||
	fail "a cloud offer ranks above an on-prem node"
jq -e '.[0].unplaced == null or .[0].unplaced == 0' "$T/plan.json" >/dev/null ||
	fail "the example cannot place all 6: $(jq -c '.[0].placement' "$T/plan.json")"
jq -e '[.[0].placement[] | .cloud] | (.[0] == "onprem") and (map(select(. != "onprem")) | length > 0)' \
	"$T/plan.json" >/dev/null || fail "the example does not burst: $(jq -c '.[0].placement' "$T/plan.json")"

echo "== a plan that cannot place everything exits 1 unless --allow-partial"
# the lab alone (its nodes say how many are free) for 10
sed -e 's/^  count: 6$/  count: 10/' -e 's/clouds: \[onprem, aws, gcp\]/clouds: [onprem]/' \
	"$GB_SRC/examples/onprem-burst.yaml" >"$T/big.yaml"
grep -q 'clouds: \[onprem\]' "$T/big.yaml" || fail "sed did not change the spec"
rc=0
"$G" plan -f "$T/big.yaml" $C >"$T/out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "a partial plan exited $rc"
grep -q "pool lab-batch: the known offers have room for only .* of 10 instances" "$T/out" ||
	fail "the partial plan does not say so: $(tail -n 3 "$T/out")"
"$G" plan -f "$T/big.yaml" $C --allow-partial >"$T/out" 2>&1 ||
	fail "--allow-partial: $(tail -n 3 "$T/out")"
echo PASS
