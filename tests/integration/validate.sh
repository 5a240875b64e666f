#!/bin/sh
# tests/integration/validate.sh -- `gpubroker validate` as a user meets it:
# every shipped example passes; bad files written the way new users write
# them each fail with exit status exactly 1, a file:line:col message and
# no crash or hang (every run is under `timeout 10`).
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

# run ARGS...: runs gpubroker with a 10 s limit; sets rc, out, err.
run() {
	timeout 10 "$GB" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

crashed() {
	grep -q -e 'AddressSanitizer' -e 'runtime error' -e 'LeakSanitizer' \
		"$tmp/err"
}

# ---------------------------------------------------------------- examples
cd "$GB_SRC" || exit 1
# examples/cloudsim-broker.yaml takes cloudsim's endpoints and ids from
# the environment (make run's demo exports cloudsim's /_sim/env); any
# value validates
for v in AWS_ENDPOINT_URL_EC2 AZURE_ARM_ENDPOINT AZURE_AUTHORITY_HOST \
	AZURE_CLIENT_ID AZURE_PRICES_ENDPOINT AZURE_RESOURCE_GROUP AZURE_SUBNET_ID \
	AZURE_SUBSCRIPTION_ID AZURE_TENANT_ID CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE \
	GCP_BILLING_ENDPOINT GOOGLE_CLOUD_PROJECT LAMBDA_ENDPOINT_URL; do
	eval "[ -n \"\${$v:-}\" ] || export $v=http://127.0.0.1:9/placeholder"
done
[ -n "${GOOGLE_APPLICATION_CREDENTIALS:-}" ] || export GOOGLE_APPLICATION_CREDENTIALS=/nonexistent/placeholder.json
n=0
for f in examples/*.yaml; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	run validate -f "$f"
	if [ "$rc" != 0 ]; then
		fail "$f: exit $rc, expected 0"
		cat "$tmp/err"
	fi
	case "$out" in
	"ok  $f: "*) ;;
	"skip  $f: on-prem inventory"*) ;; # the onprem driver's own schema
	*) fail "$f: expected an 'ok  $f: ...' line, got: $out" ;;
	esac
done
[ "$n" -ge 5 ] || fail "expected at least 5 examples, found $n"

# all at once, as the README shows
# shellcheck disable=SC2046
run validate $(for f in examples/*.yaml; do printf ' -f %s' "$f"; done)
[ "$rc" = 0 ] || fail "validate -f examples/*.yaml: exit $rc"

# JSON output
run validate -o json -f examples/inference.yaml
[ "$rc" = 0 ] || fail "-o json: exit $rc"
echo "$out" | grep -q '"valid": true' || fail "-o json: no \"valid\": true"
echo "$out" | grep -q '"source_hash": "[0-9a-f]\{64\}"' ||
	fail "-o json: no source_hash"

# stdin
timeout 10 "$GB" validate -f - <examples/gdpr-eu.yaml >"$tmp/out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "stdin: exit $rc"
grep -q 'ok  <stdin>: pool finetune-eu' "$tmp/out" || fail "stdin: no ok line"

# specs checked against the clouds a config loads
cat >"$tmp/onlyaws.yaml" <<'EOF'
drivers:
  - name: aws
EOF
cat >"$tmp/gcp-pool.yaml" <<'EOF'
pool:
  name: g
  gpu: {model: L4}
  placement: {clouds: [gcp]}
EOF
run validate -f "$tmp/gcp-pool.yaml"
[ "$rc" = 0 ] || fail "gcp pool without config: exit $rc"
run validate -c "$tmp/onlyaws.yaml" -f "$tmp/gcp-pool.yaml"
[ "$rc" = 1 ] || fail "gcp pool with an aws-only config: exit $rc, expected 1"
echo "$err" | grep -q 'gcp-pool.yaml:4:24: error: .*unknown cloud "gcp"' ||
	fail "gcp pool with an aws-only config: $err"

# ---------------------------------------------------------------- usage
run validate
[ "$rc" = 2 ] || fail "no -f: exit $rc, expected 2"
run validate --kind bogus -f examples/inference.yaml
[ "$rc" = 2 ] || fail "--kind bogus: exit $rc, expected 2"
run validate --fiel x.yaml
[ "$rc" = 2 ] || fail "--fiel: exit $rc, expected 2"
echo "$err" | grep -q 'did you mean --file' || fail "--fiel: no suggestion"

# ---------------------------------------------------------------- bad files
B="$tmp/bad"
mkdir -p "$B"
base='pool:
  name: p
  gpu: {model: T4}'

# bad NAME CONTENT EXPECTED-REGEX: writes $B/NAME.yaml and checks it.
bad() {
	printf '%s\n' "$2" >"$B/$1.yaml"
	check "$B/$1.yaml" "$3"
}

# check FILE REGEX: exit 1 exactly, a located error matching REGEX.
check() {
	run validate -f "$1"
	if [ "$rc" -ne 1 ]; then
		fail "$1: exit $rc, expected 1 (>= 124 means crash or hang)"
		cat "$tmp/err"
		return
	fi
	if crashed; then
		fail "$1: sanitizer report"
		cat "$tmp/err"
		return
	fi
	if ! grep -q -e "^$1:[0-9][0-9]*:[0-9][0-9]*: error: $2" \
		-e "^$1: error: $2" "$tmp/err"; then
		fail "$1: no located error matching \"$2\""
		cat "$tmp/err"
	fi
	[ -z "$out" ] || fail "$1: printed on stdout: $out"
}

bad typo "$base
  lifecyle: {ttl: 1h}" 'pool.lifecyle: unknown key "lifecyle"; did you mean "lifecycle"?'
grep -q "^$B/typo.yaml:4:3: error: " "$tmp/err" || fail "typo: not at 4:3"
bad typo_gpu 'pool:
  name: p
  gpu: {model: H100, memroy_gb: 80}' '.*did you mean "memory_gb"'
bad wrong_type_count "$base
  count: four" 'pool.count: expected an integer'
bad quoted_count "$base
  count: \"4\"" '.*remove the quotes'
bad wrong_type_gpu 'pool:
  name: p
  gpu: H100' '.*pool.gpu: expected a mapping'
bad negative_count "$base
  count: -3" '.*found -3'
bad huge_count "$base
  count: 1000000" '.*found 1000000'
bad overflow_count "$base
  count: 99999999999999999999" '.*the number is too large'
bad unknown_cloud "$base
  placement: {clouds: [aws, amazon]}" '.*unknown cloud "amazon"'
bad unknown_gpu 'pool:
  name: p
  gpu: {model: H10}' '.*did you mean "H100"'
bad duration_words "$base
  lifecycle: {ttl: 6 hours}" '.*expected a duration'
bad duration_negative "$base
  lifecycle: {ttl: -5m}" '.*cannot be negative'
bad duration_no_unit "$base
  lifecycle: {idle_timeout: 1h30}" '.*give every number a unit'
bad tabs "$(printf 'pool:\n\tname: p')" 'tab character'
bad duplicate_key "$base
  name: q" 'duplicate key "name"'
bad duplicate_pool "$base
---
$base" '.*already used by the pool at line 1'
bad unset_env 'pool:
  name: ci-${GB_TEST_SURELY_UNSET_VAR}
  gpu: {model: T4}' 'environment variable GB_TEST_SURELY_UNSET_VAR is not set'
bad no_pool_key 'name: p
gpu: {model: T4}' '.*"pool:" is missing'
bad min_gt_max "$base
  purpose: inference
  min: 4
  max: 2" '.*max (2) is less than min (4)'
bad bad_label "$base
  labels: {gpubroker-pool: x}" '.*reserved'
bad ssh_key "$base
  ssh_keys: [my-key]" '.*not an OpenSSH public key'
bad empty '' 'no pool in this file'

# billion laughs
{
	echo 'pool:'
	echo '  name: p'
	echo '  labels:'
	echo '    a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]'
	prev=a
	for c in b c d e f g h i; do
		printf '    %s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n' \
			"$c" "$c" "$prev" "$prev" "$prev" "$prev" "$prev" "$prev" \
			"$prev" "$prev" "$prev"
		prev=$c
	done
} >"$B/alias_bomb.yaml"
check "$B/alias_bomb.yaml" 'YAML aliases (\*a) are not allowed'

# 25 MB
{
	printf '%s\n' "$base"
	head -c 26214400 /dev/zero | tr '\0' '#'
} >"$B/huge.yaml"
check "$B/huge.yaml" 'file is larger than the limit'

# /dev/zero: endless input must not hang
run validate -f /dev/zero
[ "$rc" = 1 ] || fail "/dev/zero: exit $rc, expected 1"

# binary garbage (NUL bytes almost surely; else invalid UTF-8)
head -c 4096 /dev/urandom >"$B/garbage.yaml"
check "$B/garbage.yaml" '.*\(NUL byte\|not valid UTF-8\)'
printf 'pool:\n  name: caf\351\n' >"$B/latin1.yaml"
check "$B/latin1.yaml" 'file is not valid UTF-8 (byte 0xe9'
printf 'pool:\n  na\000me: p\n' >"$B/nul.yaml"
check "$B/nul.yaml" 'file contains a NUL byte'

# 100 levels of nesting
{
	printf 'pool:\n  labels: '
	i=0
	while [ $i -lt 100 ]; do printf '['; i=$((i + 1)); done
	i=0
	while [ $i -lt 100 ]; do printf ']'; i=$((i + 1)); done
	printf '\n'
} >"$B/deep.yaml"
check "$B/deep.yaml" 'nesting deeper than 32 levels'

# a broker config with an inline secret: refused, and never echoed
cat >"$B/broker-secret.yaml" <<'EOF'
drivers:
  - name: aws
    credentials: {secret_access_key: wJalrXUtnFEMIK7MDENGbPxRfiCY}
EOF
check "$B/broker-secret.yaml" '.*secrets are never written inline'
if grep -q wJalrXUtnFEMIK7MDENGbPxRfiCY "$tmp/err"; then
	fail "the inline secret was echoed"
fi

# not a file
run validate -f "$tmp"
[ "$rc" = 1 ] || fail "directory: exit $rc, expected 1"
run validate -f "$tmp/does-not-exist.yaml"
[ "$rc" = 1 ] || fail "missing file: exit $rc, expected 1"
echo "$err" | grep -q 'cannot read' || fail "missing file: $err"

# one good, one bad: exit 1, the good one is still reported
run validate -f examples/inference.yaml -f "$B/typo.yaml"
[ "$rc" = 1 ] || fail "good+bad: exit $rc, expected 1"
echo "$out" | grep -q '^ok  examples/inference.yaml' || fail "good+bad: $out"

# -o yaml reads back as the same data as -o json, also for strings that
# look like numbers or booleans (labels "4411", "yes", ABI "1.3")
cat >"$tmp/yamlout.yaml" <<'EOF2'
pool:
  name: yamlout
  team: research
  count: 1
  gpu: {model: T4}
  labels: {cost-center: "4411", flag: "yes", ver: "1.3", none: "null"}
EOF2
for cmd in "validate -f $tmp/yamlout.yaml" "drivers" "version"; do
	# shellcheck disable=SC2086
	run $cmd -o yaml
	[ "$rc" = 0 ] || fail "$cmd -o yaml: exit $rc: $err"
	cp "$tmp/out" "$tmp/out.yaml"
	# shellcheck disable=SC2086
	run $cmd -o json
	cp "$tmp/out" "$tmp/out.json"
	/usr/bin/python3 -c 'import json, sys, yaml
a = yaml.safe_load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
sys.exit(0 if a == b else 1)' "$tmp/out.yaml" "$tmp/out.json" ||
		fail "$cmd: -o yaml does not read back as -o json: $(head -c 400 "$tmp/out.yaml")"
done

# version and help: what they print and their exit codes
run version
[ "$rc" = 0 ] && echo "$out" | grep -Eq '^gpubroker [0-9]+\.[0-9]+\.[0-9]+ \(driver ABI [0-9]+\.[0-9]+\)$' ||
	fail "version: exit $rc, got: $out"
run help apply
[ "$rc" = 0 ] && echo "$out" | grep -q '^usage: gpubroker apply -f SPEC' || fail "help apply: exit $rc, got: $(echo "$out" | head -2)"
# -v logs the drivers' load messages on stderr; -q leaves only results
run -v drivers
[ "$rc" = 0 ] && echo "$err" | grep -q ' info  aws: ' || fail "-v drivers: exit $rc, no info lines on stderr: $(echo "$err" | head -2)"
run -q validate -f examples/inference.yaml
[ "$rc" = 0 ] && [ -z "$err" ] || fail "-q validate: exit $rc, stderr: $err"
run help nosuch
[ "$rc" = 2 ] && echo "$err" | grep -q 'no command "nosuch"' || fail "help nosuch: exit $rc (want 2), stderr: $err"

if [ "$fails" -gt 0 ]; then
	echo "validate.sh: $fails failure(s)"
	exit 1
fi
echo "validate.sh: all checks passed"
exit 0
