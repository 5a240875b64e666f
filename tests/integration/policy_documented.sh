#!/bin/sh
# tests/integration/policy_documented.sh -- policies as documented (issue
# 19.4): README's table of what policies receive is the one `gpubroker
# help policy` prints (both from core/plan/policy_fields.h), and the Lua
# objects have exactly those fields with those types; a filter that
# returns nil is an error naming the policy file; `policy check --sample`
# runs a policy on the sample offers that tests get as sample_offers();
# `policy test` says which folder it ran.
set -u
: "${GB_BUILD:?GB_BUILD must name the build directory}"
: "${GB_SRC:?GB_SRC must name the source tree}"
GB="$GB_BUILD/bin/gpubroker"
[ -x "$GB" ] || { echo "missing $GB (build it first)"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# run ARGS...: gpubroker with a 60 s limit; sets rc, out, err.
run() {
	rc=0
	timeout 60 "$GB" "$@" >"$T/out" 2>"$T/err" || rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
}
has() { case "$1" in *"$2"*) return 0 ;; esac; return 1; }

echo "== README's table is help's"
if sh "$GB_SRC/scripts/policy_fields_md.sh" "$GB" "$GB_SRC/README.md" --check 2>"$T/check.err"; then
	ok "README.md's policy fields are current (make readme-policy)"
else
	fail "README.md's policy fields are stale: $(cat "$T/check.err")"
fi
# the check can fail: a README without one field, or with one more
grep -v '^| `offer.bench.bf16_tflops`' "$GB_SRC/README.md" >"$T/less.md"
sed 's/^| `req.ttl` |/| `req.placement` | table | where |\n&/' "$GB_SRC/README.md" >"$T/more.md"
for f in less more; do
	if sh "$GB_SRC/scripts/policy_fields_md.sh" "$GB" "$T/$f.md" --check 2>/dev/null; then
		fail "the check passes a README with $f fields"
	else
		ok "the check refuses a README with $f fields"
	fi
done
run help policy
n=$(printf '%s\n' "$out" | grep -c '^  \(offer\|req\)\.')
if [ "$n" -ge 50 ] && has "$out" "offer.bench.bf16_tflops" && has "$out" "req.data_region"; then
	ok "help policy lists $n fields, bench's too"
else
	fail "help policy lists $n fields (bench and data_region among them?)"
fi
# The README's old hint led to req.placement.data.region (nil); the
# table names the field
grep -q '^| `req.data_region` | string | placement.data.region' "$GB_SRC/README.md" ||
	fail "README does not say placement.data.region is req.data_region"

echo "== the objects have exactly the documented fields, of the documented types"
# One filter lists the fields of every sample offer and of the sample req
# (pairs) and refuses one the table lacks, then reads every documented
# field and refuses on a type that differs from the table.
printf '%s\n' "$out" | awk '/^fields:$/ { on = 1; next } on && /^$/ { on = 0 }
	on && /^  [^ ]/ { print $1, $2 }' >"$T/fields"
{
	echo 'local fields = {'
	while read -r name type; do
		echo "  {\"$name\", \"$type\"},"
	done <"$T/fields"
	cat <<'LUA'
}
local function get(root, path)
  local v = root
  for k in path:gmatch("[^.]+") do
    if v == nil then return nil end
    v = v[k]
  end
  return v
end
local function is(v, t)
  if t == "integer" then return math.type(v) == "integer" end
  if t == "number" then return type(v) == "number" end
  if t == "list" or t == "table" then return type(v) == "table" end
  return type(v) == t
end
local documented = {}
for _, f in ipairs(fields) do documented[f[1]] = true end
-- every field the object has (pairs) is in the table
local function undocumented(t, prefix)
  for k, v in pairs(t) do
    local name = prefix .. "." .. k
    if not documented[name] then return name end
    if (name == "offer.bench" or name == "req.gpu" or name == "req.team") then
      local u = undocumented(v, name)
      if u then return u end
    end
  end
end
return { filter = function(req, offer)
  local u = undocumented(offer, "offer") or undocumented(req, "req")
  if u then return false, u .. " is not in the table" end
  local seen = 0
  for _, f in ipairs(fields) do
    local name, t = f[1], f[2]
    local root = name:match("^offer") and {offer = offer} or {req = req}
    local v = get(root, name)
    if v ~= nil then
      if not is(v, t) then return false, name .. " is a " .. type(v) .. ", documented " .. t end
      seen = seen + 1
    end
  end
  return true, nil, gb.log(seen)
end }
LUA
} >"$T/alltypes.lua"
run policy check --sample -o json "$T/alltypes.lua"
[ "$rc" = 0 ] || fail "check --sample alltypes: rc=$rc $err"
if [ "$rc" = 0 ] && jq -e '.[0].sample | length == 8 and all(.[]; .result == "keep")' "$T/out" >/dev/null; then
	ok "every documented field present on the samples has its documented type"
else
	fail "a field is not what the table says: $(jq -c '[.[0].sample[] | select(.result != "keep") | .reason]' "$T/out")"
fi
# on-prem offers have bench: more fields present than on a cloud offer
jq -e '.[0].sample | (map(select(.offer | startswith("onprem/")) | .logs[0]) | length == 2) and
	(.[0].logs[0] | test("[0-9]+$"))' "$T/out" >/dev/null || fail "no gb.log counts: $out"
cloud=$(jq -r '.[0].sample[0].logs[0] | sub(".*: "; "")' "$T/out")
onprem=$(jq -r '[.[0].sample[] | select(.offer | startswith("onprem/lab/lab-4xa100/"))][0].logs[0] | sub(".*: "; "")' "$T/out")
[ "$onprem" -gt "$cloud" ] 2>/dev/null && ok "an on-prem sample has its bench fields ($onprem read, a cloud one $cloud)" ||
	fail "bench fields not read on the on-prem sample: cloud $cloud, onprem $onprem"
# and nothing else: a name the table lacks is an error with the nearest
for probe in "offer.gpu_modle:offer has no field 'gpu_modle'; did you mean 'gpu_model'?" \
	"req.placement:req has no field 'placement'" \
	"req.gpu.modles:req.gpu has no field 'modles'; did you mean 'models'?" \
	"req.team.budget:req.team has no field 'budget'"; do
	expr=${probe%%:*} want=${probe#*:}
	printf 'return { filter = function(req, offer) return %s ~= 1 end }\n' "$expr" >"$T/typo.lua"
	run policy check --sample "$T/typo.lua"
	if [ "$rc" = 1 ] && has "$err" "$want"; then
		ok "$expr: $want"
	else
		fail "$expr: rc=$rc, expected \"$want\" in: $err"
	fi
done

echo "== a filter that returns nil says so"
cat >"$T/forgot.lua" <<'LUA'
return { filter = function(req, offer)
	if offer.price > 1000 then return false, "too dear" end
end }
LUA
run policy check --sample "$T/forgot.lua"
want="policy 'forgot' ($T/forgot.lua): filter returned nil for offer aws/us-east-1/p5.48xlarge/on-demand; return true to keep the offer or false with a reason"
if [ "$rc" = 1 ] && has "$err" "$want" && has "$out" "error"; then
	ok "check --sample: $want"
else
	fail "check --sample of a nil filter: rc=$rc out=$out err=$err"
fi
cat >"$T/p1.yaml" <<YAML
pool:
  name: p1
  gpu: {model: H100}
  policy: [$T/forgot.lua]
YAML
mkdir "$T/home"
HOME="$T/home" run plan -f "$T/p1.yaml"
if [ "$rc" = 1 ] && has "$err" "policy 'forgot' ($T/forgot.lua): filter returned nil for offer " &&
	has "$err" "; return true to keep the offer or false with a reason"; then
	ok "plan fails naming the policy file"
else
	fail "plan with a nil filter: rc=$rc err=$err"
fi
# nil with a reason is Lua's usual refusal, not an error
printf 'return { filter = function(req, offer) return nil, "no " .. offer.cloud end }\n' >"$T/nilwhy.lua"
run policy check --sample -o json "$T/nilwhy.lua"
[ "$rc" = 0 ] && jq -e '.[0].sample | all(.[]; .result == "refuse" and (.reason | startswith("no ")))' "$T/out" >/dev/null &&
	ok "nil, reason refuses" || fail "nil, reason: rc=$rc $out $err"

echo "== check --sample"
run policy check --sample "$GB_SRC/policies/gdpr.lua"
[ "$rc" = 0 ] || fail "check --sample gdpr: rc=$rc $err"
printf '%s\n' "$out" >"$T/gdpr.txt"
grep -q '^aws/us-east-1/p5.48xlarge/on-demand .* refuse .*under US jurisdiction' "$T/gdpr.txt" &&
	grep -q '^gcp/europe-west4/a3-highgpu-8g/spot .* keep' "$T/gdpr.txt" &&
	grep -q '^azure/westeurope/Standard_NC24ads_A100_v4/on-demand .* keep' "$T/gdpr.txt" &&
	ok "gdpr keeps the EU samples and says why it refuses the US ones" ||
	fail "check --sample gdpr: $out"
run policy check --sample -o json "$GB_SRC/policies/cost.lua"
[ "$rc" = 0 ] && jq -e '.[0] | .ok and .score and (.sample | length == 8) and
	(.sample[0] | .offer == "aws/us-east-1/p5.48xlarge/on-demand" and .price == 98.32 and .result == "keep" and (.score | type) == "number")' \
	"$T/out" >/dev/null && ok "-o json: each sample with offer, price, result, score" || fail "check --sample -o json: $out"
run policy check --sample "$GB_SRC/policies/cost_test.lua"
[ "$rc" = 1 ] && has "$err" "--sample runs policies" && ok "--sample on a test file: $err" ||
	fail "--sample on a test file: rc=$rc $err"
run policy test --sample "$GB_SRC/policies"
[ "$rc" = 2 ] && has "$err" "--sample is for 'policy check FILE...'" && ok "policy test --sample: a usage error" ||
	fail "policy test --sample: rc=$rc $err"
# without --sample nothing runs
run policy check "$GB_SRC/policies/cost.lua"
[ "$rc" = 0 ] && ! has "$out" "OFFER" || fail "check without --sample ran samples: $out"
# the samples in tests are the same offers
mkdir "$T/s"
cp "$GB_SRC/policies/gdpr.lua" "$T/s/"
cat >"$T/s/gdpr_test.lua" <<'LUA'
local p = load_policy("gdpr")
function test_samples()
  local kept = {}
  for _, o in ipairs(sample_offers()) do
    if p.filter(request{}, o) == true then kept[#kept + 1] = o.cloud .. "/" .. o.region end
  end
  assert_eq(kept, {"aws/eu-central-1", "gcp/europe-west4", "azure/westeurope"})
  assert_eq(#sample_offers(), 8)
end
LUA
run policy test "$T/s"
[ "$rc" = 0 ] && has "$out" "PASS  gdpr_test.lua  test_samples" && ok "sample_offers() in tests" ||
	fail "sample_offers() in a test: rc=$rc $out $err"

echo "== policy test says which folder it ran"
mkdir -p "$T/w/policies"
printf 'return { score = function() return 1 end }\n' >"$T/w/policies/one.lua"
printf 'local p = load_policy("one")\nfunction test_one() assert_eq(p.score(), 1) end\n' \
	>"$T/w/policies/one_test.lua"
run policy test "$T/w/policies"
[ "$rc" = 0 ] && has "$out" "ran 1 test in $T/w/policies" && ok "with DIR: ran 1 test in $T/w/policies" ||
	fail "policy test DIR: $out"
(cd "$T/w" && timeout 60 "$GB" policy test -q) >"$T/out" 2>&1
has "$(cat "$T/out")" "ran 1 test in $T/w/policies" && ok "without DIR, ./policies: named" ||
	fail "policy test without DIR in a folder with policies/: $(cat "$T/out")"
(cd "$T" && timeout 60 "$GB" policy test -q) >"$T/out" 2>&1
inst=$(cd "$GB_BUILD/share/gpubroker/policies" && pwd -P)
has "$(cat "$T/out")" "in $inst" && ok "without DIR elsewhere: the installed folder ($inst)" ||
	fail "policy test without DIR elsewhere: $(cat "$T/out")"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo PASS
