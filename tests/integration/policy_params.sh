#!/bin/sh
# tests/integration/policy_params.sh -- a policy author's first week (issue
# 31.2): policies take parameters (policy: [{name: budget, args: {...}}],
# checked by validate where they are written, seen by the policy), the
# old `policy: [name]` form still works, regions are strict, a sandboxed
# library says so, a near miss of `filter` is named, and the on-prem
# sample offers have a region.
set -u
: "${GB_BUILD:?GB_BUILD must name the build directory}"
: "${GB_SRC:?GB_SRC must name the source tree}"
GB="$GB_BUILD/bin/gpubroker"
[ -x "$GB" ] || { echo "missing $GB (build it first)"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
mkdir "$T/home"
export HOME="$T/home"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
run() {
	rc=0
	timeout 60 "$GB" "$@" >"$T/out" 2>"$T/err" || rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
}
has() { case "$1" in *"$2"*) return 0 ;; esac; return 1; }

echo "== args: validated where written, seen by the policy"
cat >"$T/capped.yaml" <<'YAML'
pool:
  name: capped
  gpu: {model: H100}
  policy:
    - cost
    - {name: budget, args: {max_per_gpu_hour: 3}}
YAML
run validate -f "$T/capped.yaml"
[ "$rc" = 0 ] && ok "validate: {name: budget, args: {max_per_gpu_hour: 3}}" || fail "validate capped: rc=$rc $err"
run plan -f "$T/capped.yaml" -o json --explain --limit 1000
capped=$(jq '.[0].candidate_count' "$T/out" 2>/dev/null)
if [ "$rc" = 0 ] && jq -e '.[0] | (.candidates | length > 0) and all(.candidates[]; .price_per_hour / .gpu_count <= 3)
	and any(.refusals[]; .kind == "policy" and .rule == "budget" and (.reason | test("exceeds the pool.s cap of \\$3.00")))' "$T/out" >/dev/null; then
	ok "plan: every candidate is within \$3 per GPU-hour, dearer ones refused by budget"
else
	fail "plan with the cap: rc=$rc $(head -c 600 "$T/out") $err"
fi
# the old form: budget without args has no cap
sed 's/- {name: budget, args: {max_per_gpu_hour: 3}}/- budget/' "$T/capped.yaml" >"$T/plain.yaml"
run plan -f "$T/plain.yaml" -o json
plain=$(jq '.[0].candidate_count' "$T/out" 2>/dev/null)
if [ "$rc" = 0 ] && [ "${plain:-0}" -gt "${capped:-0}" ] 2>/dev/null; then
	ok "policy: [budget] keeps the default, no cap ($plain candidates, $capped with the cap)"
else
	fail "policy: [budget]: rc=$rc $err"
fi

cat >"$T/bad.yaml" <<'YAML'
pool:
  name: bad
  gpu: {model: H100}
  policy:
    - {name: budget, args: {max_per_gpu: 3}}
    - {name: cost, args: {cap: 1}}
---
pool:
  name: bad2
  gpu: {model: H100}
  policy:
    - {name: budget, args: {max_per_gpu_hour: cheap}}
    - {name: budgte, args: {max_per_gpu_hour: 1}}
YAML
run validate -f "$T/bad.yaml"
for want in \
	"bad.yaml:5:29: error: pool.policy[0].args.max_per_gpu: policy 'budget' has no parameter 'max_per_gpu' (parameters: max_per_gpu_hour (number))" \
	"bad.yaml:6:27: error: pool.policy[1].args.cap: policy 'cost' declares no parameters" \
	"bad.yaml:12:29: error: pool.policy[0].args.max_per_gpu_hour: policy 'budget' parameter 'max_per_gpu_hour' is a number, got \"cheap\"" \
	"bad.yaml:13:14: error: pool.policy[1]: policy 'budgte': not found in" ; do
	if [ "$rc" = 1 ] && has "$err" "$want"; then ok "validate: $want"; else fail "validate: expected \"$want\" in rc=$rc: $err"; fi
done
# without validate, a plan refuses to run with them, naming the policy
printf 'pool:\n  name: p\n  gpu: {model: H100}\n  policy: [{name: budget, args: {max_per_gpu: 3}}]\n' >"$T/p.yaml"
run plan -f "$T/p.yaml"
[ "$rc" = 1 ] && has "$err" "policy 'budget' has no parameter 'max_per_gpu'" && ok "plan refuses the unknown arg" ||
	fail "plan with an unknown arg: rc=$rc $err"

echo "== strict regions, sandboxed names, near misses, sample regions"
printf 'return { filter = function(req, offer) return gb.region(offer).carbonn == nil end }\n' >"$T/carb.lua"
run policy check --sample -o json "$T/carb.lua"
jq -e '.[0].sample | all(.[]; .result == "error" and (.reason | test("region has no field .carbonn.; did you mean .carbon.")))' "$T/out" >/dev/null &&
	ok "r.carbonn: did you mean 'carbon'" || fail "r.carbonn: $out $err"
printf 'return { filter = function(req, offer) return os.date("%%H") ~= "03" end }\n' >"$T/os.lua"
run policy check --sample -o json "$T/os.lua"
jq -e '.[0].sample[0].reason | test("os is not available in policies \\(available: .*math.*string")' "$T/out" >/dev/null &&
	ok "os.date: os is not available in policies (available: ...)" || fail "os.date: $out $err"
printf 'return { fitler = function(req, offer) return true end }\n' >"$T/fitler.lua"
run policy check "$T/fitler.lua"
[ "$rc" = 1 ] && has "$err" "the returned table has 'fitler'; did you mean 'filter'?" && ok "fitler: did you mean 'filter'" ||
	fail "fitler: rc=$rc $err"
printf 'return { filter = function(req, offer) local r = gb.region(offer) if not r then return false, "no region" end gb.log(r.name, r.jurisdiction) return true end }\n' >"$T/reg.lua"
run policy check --sample -o json "$T/reg.lua"
jq -e '.[0].sample | all(.[]; .result == "keep")' "$T/out" >/dev/null &&
	ok "every sample offer, on-prem too, has a gb.region" || fail "sample regions: $out"

echo "== one vocabulary: region tags are compliance tags, documented"
run help policy
has "$out" "region tags (region.tags, gb.has_tag, placement.compliance):" && has "$out" "  hipaa " &&
	has "$out" "region.carbon" && has "$out" "params = {NAME" && ok "help policy: region fields, tags, params" ||
	fail "help policy lacks region fields, tags or params"
printf 'pool:\n  name: h\n  gpu: {model: H100}\n  placement: {compliance: [hipaa-eligible]}\n' >"$T/h.yaml"
run validate -f "$T/h.yaml"
[ "$rc" = 1 ] && has "$err" '"hipaa-eligible" is now called "hipaa"' && ok "compliance: [hipaa-eligible] names hipaa" ||
	fail "hipaa-eligible: rc=$rc $err"
sed 's/hipaa-eligible/hipaa/' "$T/h.yaml" >"$T/h2.yaml"
run plan -f "$T/h2.yaml" -o json
[ "$rc" = 0 ] && jq -e '.[0].candidates | length > 0' "$T/out" >/dev/null && ok "compliance: [hipaa] places" ||
	fail "compliance: [hipaa]: rc=$rc $err"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo PASS
