#!/bin/sh
# tests/integration/drivers_credentials.sh -- `gpubroker drivers` tells a
# driver that loaded but found no credentials from a ready one (issue
# 19.5): with an empty HOME and no credentials in the environment each
# cloud driver says "no credentials found (looked in ...)", naming where
# it looked (the message comes from the driver, through the host's
# "credentials" command verb), while on-prem (which needs none) stays
# "ready"; the same config with cloudsim's credentials, or an AWS
# shared credentials file, is "ready".  No secret appears in the output.
set -u
. "$GB_SRC/tests/lib/integration.sh"

cat >"$T/broker.yaml" <<YAML
broker_id: t
drivers: [{name: aws}, {name: azure}, {name: gcp}, {name: lambda}, {name: onprem}]
YAML
mkdir "$T/home"

# bare ARGS...: gpubroker with an empty HOME and no credentials at all
bare() {
	env -i PATH="$PATH" HOME="$T/home" ${LSAN_OPTIONS:+LSAN_OPTIONS="$LSAN_OPTIONS"} \
		timeout 30 "$GB" -c "$T/broker.yaml" "$@"
}
# status NAME FILE: that driver's status in a drivers -o json answer
status() { jq -r --arg d "$1" '.[] | select(.name == $d) | .status' "$2"; }
# expect_status NAME FILE TEXT...: its status has every TEXT
expect_status() {
	_n=$1 _f=$2
	shift 2
	_s=$(status "$_n" "$_f")
	for _w in "$@"; do
		case "$_s" in
		*"$_w"*) ;;
		*) fail "$_n: expected \"$_w\" in its status, got: $_s" ;;
		esac
	done
	echo "ok: $_n: $_s"
}

echo "== no credentials anywhere"
bare drivers -o json >"$T/none.json" 2>"$T/none.err" ||
	fail "drivers -o json: exit $? ($(cat "$T/none.err"))"
expect_status aws "$T/none.json" "no credentials found (looked in " \
	"credentials.access_key_id" "AWS_ACCESS_KEY_ID" \
	"$T/home/.aws/credentials"
expect_status azure "$T/none.json" "no credentials found (looked in " \
	"AZURE_TENANT_ID" "AZURE_CLIENT_ID" "env:AZURE_CLIENT_SECRET"
expect_status gcp "$T/none.json" "no credentials found (looked in " \
	"credentials.key_file" "GOOGLE_APPLICATION_CREDENTIALS"
expect_status lambda "$T/none.json" "no credentials found (looked in " \
	"env:LAMBDA_API_KEY"
check '[ "$(status onprem "$T/none.json")" = ready ]' "onprem needs no credentials: ready"
# loaded and initialised all the same (offers work without credentials)
check "jq -e 'all(.[]; .ready)' '$T/none.json' >/dev/null" "every driver still loaded (.ready)"
check "jq -e '[.[] | select(.credentials == false) | .name] == [\"aws\",\"azure\",\"gcp\",\"lambda\"] and
	(.[] | select(.name == \"onprem\") | has(\"credentials\") | not)' '$T/none.json' >/dev/null" \
	"-o json: credentials false for the four clouds, absent for onprem"

# the table cuts long cells; the whole status follows on stderr
bare drivers >"$T/none.out" 2>"$T/none.err" || fail "drivers: exit $?"
check "grep -q '^aws .*no credentials found (looked in' '$T/none.out'" "the table says it"
check "grep -q \"^aws: no credentials found (looked in .*$T/home/.aws/credentials\" '$T/none.err'" \
	"the whole aws status on stderr"
check "! grep -q '^onprem' '$T/none.err'" "no note for a ready driver"
bare -q drivers >/dev/null 2>"$T/q.err" || fail "drivers -q: exit $?"
check "[ ! -s '$T/q.err' ]" "-q drops the notes"

echo "== an AWS shared credentials file in HOME"
mkdir "$T/home/.aws"
printf '[default]\naws_access_key_id = AKIAFILEKEY000000001\naws_secret_access_key = fileSecretValue0123456789\n' \
	>"$T/home/.aws/credentials"
bare drivers -o json >"$T/file.json" 2>"$T/file.err" || fail "drivers: exit $?"
check '[ "$(status aws "$T/file.json")" = ready ]' "aws: ready with the shared credentials file"
check "jq -e '.[] | select(.name == \"aws\") | .credentials == true' '$T/file.json' >/dev/null" \
	"aws: credentials true"
expect_status gcp "$T/file.json" "no credentials found (looked in "
check "! grep -q fileSecretValue '$T/file.json' '$T/file.err'" "the secret is not shown"

echo "== cloudsim's credentials (the environment and the broker config)"
sim_start
gb drivers -o json >"$T/sim.json" 2>"$T/sim.err" || fail "drivers: exit $? ($(cat "$T/sim.err"))"
check "jq -e 'all(.[]; .status == \"ready\" and .ready)' '$T/sim.json' >/dev/null" \
	"every driver ready: $(jq -c '[.[] | {name, status}]' "$T/sim.json")"
check "jq -e '[.[] | select(.credentials == true) | .name] == [\"aws\",\"azure\",\"gcp\",\"lambda\"]' '$T/sim.json' >/dev/null" \
	"-o json: credentials true for the four clouds"
gb drivers >"$T/sim.out" 2>"$T/sim.err" || fail "drivers: exit $?"
check "[ ! -s '$T/sim.err' ] && ! grep -q 'no credentials' '$T/sim.out'" "no notes when every driver is ready"
for v in "$AWS_SECRET_ACCESS_KEY" "$AZURE_CLIENT_SECRET" "$LAMBDA_API_KEY"; do
	! grep -qF -- "$v" "$T/sim.json" "$T/sim.out" || fail "a secret is in the drivers output"
done
echo "ok: no secret in the output"

echo "== through the daemon (GET /v1/drivers)"
daemon_start
GPUBROKER_TOKEN=demo-viewer-token gb drivers -o json >"$T/d.json" 2>"$T/d.err" ||
	fail "drivers --server: exit $? ($(cat "$T/d.err"))"
check "jq -e 'all(.[]; .status == \"ready\") and ([.[] | select(.credentials == true)] | length) == 4' '$T/d.json' >/dev/null" \
	"the daemon's drivers: ready, with credentials"
echo "PASS"
