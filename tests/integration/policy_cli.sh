#!/bin/sh
# tests/integration/policy_cli.sh -- `gpubroker policy test` and `policy
# check` as a policy author meets them: the shipped policies' tests pass
# (exit 0); a directory with a failing test exits 1 and names the test and
# its line; a runaway test fails cleanly within its limits; -o json is a
# report; `policy check` shows file:line for a syntax error, names the
# shape problem, and passes good files.  Every run is under `timeout`.
set -u
: "${GB_BUILD:?GB_BUILD must name the build directory}"
: "${GB_SRC:?GB_SRC must name the source tree}"
GB="$GB_BUILD/bin/gpubroker"
[ -x "$GB" ] || { echo "missing $GB (build it first)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
ok() {
	echo "ok: $*"
}

# run ARGS...: gpubroker with a 60 s limit; sets rc, out, err.
run() {
	timeout 60 "$GB" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

crashed() {
	grep -q -e 'AddressSanitizer' -e 'runtime error' -e 'LeakSanitizer' \
		"$tmp/err"
}

# contains TEXT NEEDLE
contains() {
	case "$1" in *"$2"*) return 0 ;; esac
	return 1
}

# ------------------------------------------------------------ shipped
run policy test "$GB_SRC/policies"
if [ "$rc" = 0 ] && contains "$out" "PASS  gdpr_test.lua  test_us_region_refused" &&
	! contains "$out" "FAIL"; then
	ok "shipped policy tests pass"
else
	fail "shipped policy tests: rc=$rc"
	echo "$out"; echo "$err"
fi
for p in cost gdpr data-locality training-spot-first inference-reliable \
	green budget; do
	[ -f "$GB_SRC/policies/$p.lua" ] || fail "missing policies/$p.lua"
	[ -f "$GB_SRC/policies/${p}_test.lua" ] || fail "missing policies/${p}_test.lua"
	run policy check "$GB_SRC/policies/$p.lua" "$GB_SRC/policies/${p}_test.lua"
	[ "$rc" = 0 ] || fail "policy check $p: rc=$rc $err"
done
ok "shipped policies check"

# default directory: ./policies
(cd "$GB_SRC" && timeout 60 "$GB" policy test -q >"$tmp/out" 2>"$tmp/err")
rc=$?
[ "$rc" = 0 ] && contains "$(cat "$tmp/out")" "PASS: " ||
	fail "policy test without DIR in the source tree: rc=$rc"

# ------------------------------------------------------------ failures
mkdir "$tmp/p"
cat >"$tmp/p/pricey.lua" <<'EOF'
return { filter = function(req, offer)
	return offer.price < 50, "too expensive"
end }
EOF
cat >"$tmp/p/pricey_test.lua" <<'EOF'
local p = load_policy("pricey")

function test_cheap_passes()
	assert_true(p.filter(request{}, offer{ price = 10 }))
end

function test_wrong_expectation()
	assert_eq(p.filter(request{}, offer{ price = 99 }), true)
end

function test_runaway()
	while true do end
end
EOF
run policy test "$tmp/p"
if [ "$rc" = 1 ] &&
	contains "$out" "PASS  pricey_test.lua  test_cheap_passes" &&
	contains "$out" "FAIL  pricey_test.lua  test_wrong_expectation:" &&
	contains "$out" "pricey_test.lua:8: expected true, got false" &&
	contains "$out" "FAIL  pricey_test.lua  test_runaway: instruction limit of 1000000 exceeded" &&
	contains "$out" "FAIL: 2/3" && ! crashed; then
	ok "failing tests exit 1 and are named"
else
	fail "failing tests: rc=$rc"
	echo "$out"; echo "$err"
fi

run policy test "$tmp/p" --run 'test_cheap*'
[ "$rc" = 0 ] && contains "$out" "PASS: 1/1" ||
	fail "--run selects tests: rc=$rc $out"

run policy test "$tmp/p" -o json
if [ "$rc" = 1 ] && python3 - "$tmp/out" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["passed"] == 1 and r["failed"] == 2, r
names = {t["name"]: t for t in r["tests"]}
assert names["test_cheap_passes"]["passed"] is True
assert "expected true" in names["test_wrong_expectation"]["message"]
EOF
then
	ok "json report"
else
	fail "json report: rc=$rc"
	cat "$tmp/out"
fi

run policy test "$tmp/nonexistent"
[ "$rc" = 1 ] && contains "$err" "cannot read policy directory" ||
	fail "missing directory: rc=$rc $err"

# ------------------------------------------------------------ check
cat >"$tmp/p/broken.lua" <<'EOF'
return {
	filter = function(req, offer)
		if offer.price > 10
			return false
		end
		return true
	end,
}
EOF
run policy check "$tmp/p/broken.lua"
if [ "$rc" = 1 ] && contains "$err" "$tmp/p/broken.lua:4: 'then' expected"; then
	ok "check shows file:line for a syntax error"
else
	fail "check syntax error: rc=$rc err=$err"
fi

printf 'return 42\n' >"$tmp/p/number.lua"
run policy check "$tmp/p/number.lua" "$tmp/p/pricey.lua"
if [ "$rc" = 1 ] &&
	contains "$err" "number.lua: must return a table with filter and/or score functions, got number" &&
	contains "$out" "ok    $tmp/p/pricey.lua: filter"; then
	ok "check names the shape problem and passes good files"
else
	fail "check shape: rc=$rc out=$out err=$err"
fi

printf '\033Lua\124\000garbage' >"$tmp/p/binary.lua"
run policy check "$tmp/p/binary.lua"
[ "$rc" = 1 ] && contains "$err" "attempt to load a binary chunk" ||
	fail "check binary chunk: rc=$rc $err"

# a typo in an offer field is an error naming it, not a silent nil that
# refuses (or accepts) every offer
mkdir "$tmp/typo"
cat >"$tmp/typo/typo.lua" <<'EOF'
return { filter = function(req, offer)
	return offer.gpu_modle == "H100", "not an H100"
end }
EOF
cat >"$tmp/typo/typo_test.lua" <<'EOF'
local p = load_policy("typo")
function test_h100()
	assert_true(p.filter(request{}, offer{ gpu_model = "H100" }))
end
-- the README's old advice: req.placement.data.region (it is req.data_region)
function test_req_placement()
	assert_error(function() return request{}.placement.data.region end,
	             "req has no field 'placement'")
	assert_eq(request{}.data_region, nil) -- a field req may leave out
end
EOF
run policy test "$tmp/typo"
if [ "$rc" = 1 ] && contains "$out" "offer has no field 'gpu_modle'; did you mean 'gpu_model'?" &&
	contains "$out" "PASS  typo_test.lua  test_req_placement" && ! crashed; then
	ok "reading an offer field that does not exist fails, naming it with a did-you-mean"
else
	fail "offer field typo: rc=$rc out=$out err=$err"
fi

cat >"$tmp/typo/pool.yaml" <<EOF
pool:
  name: typo
  gpu: {model: H100, count: 8}
  placement: {clouds: [aws]}
  policy: [$tmp/typo/typo.lua]
EOF
XDG_STATE_HOME=$tmp/state run plan -f "$tmp/typo/pool.yaml"
if [ "$rc" = 1 ] && contains "$err" "policy 'typo': filter:" &&
	contains "$err" "offer has no field 'gpu_modle'; did you mean 'gpu_model'?" && ! crashed; then
	ok "and plan stops with the same error instead of refusing every offer"
else
	fail "plan with an offer field typo: rc=$rc out=$out err=$err"
fi

run policy check
[ "$rc" = 2 ] || fail "check without FILE should be a usage error: rc=$rc"
run policy frobnicate
[ "$rc" = 2 ] || fail "unknown subcommand should be a usage error: rc=$rc"

if [ "$fails" -gt 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "all policy CLI checks passed"
exit 0
