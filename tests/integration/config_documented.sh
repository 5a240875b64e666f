#!/bin/sh
# tests/integration/config_documented.sh -- the broker config has a
# reference (issue 31.3): `gpubroker help config`, the man page's
# CONFIGURATION section and docs/config.md list the same keys, all made
# from the config parser's key table, and they are the keys the parser
# accepts.
set -u
: "${GB_BUILD:?GB_BUILD must name the build directory}"
: "${GB_SRC:?GB_SRC must name the source tree}"
GB="$GB_BUILD/bin/gpubroker"
[ -x "$GB" ] || { echo "missing $GB (build it first)"; exit 1; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

echo "== help config"
rc=0
"$GB" help config >"$T/help" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] && grep -q '^  daemon.lease (duration; default: 15s)$' "$T/help" &&
	ok "help config: daemon.lease (duration; default: 15s)" || fail "help config: rc=$rc $(cat "$T/err")"
awk '/^keys /{on=1; next} on && /^  [^ ]/{print $1}' "$T/help" >"$T/keys"
n=$(wc -l <"$T/keys")
[ "$n" -ge 45 ] && ok "help config lists $n keys" || fail "help config lists $n keys"
"$GB" help help | grep -q "help config" && ok "help help names 'help config'" || fail "help help does not name 'help config'"

echo "== docs/config.md is help's"
if sh "$GB_SRC/scripts/config_md.sh" "$GB" "$GB_SRC/docs/config.md" --check 2>"$T/check.err"; then
	ok "docs/config.md is current (make docs-config)"
else
	fail "docs/config.md is stale: $(cat "$T/check.err")"
fi
grep -v '^| `daemon.lease`' "$GB_SRC/docs/config.md" >"$T/less.md"
sed 's/^| `listen` |/| `listen_tls` | bool | no | what |\n&/' "$GB_SRC/docs/config.md" >"$T/more.md"
sed 's/^| `daemon.lease` | duration | 15s |/| `daemon.lease` | duration | 30s |/' "$GB_SRC/docs/config.md" >"$T/other.md"
for f in less more other; do
	if sh "$GB_SRC/scripts/config_md.sh" "$GB" "$T/$f.md" --check 2>/dev/null; then
		fail "the check passes a docs/config.md with $f"
	else
		ok "the check refuses a docs/config.md with $f"
	fi
done

echo "== the man page has the same keys"
"$GB" help --man >"$T/man"
awk '/^\.SH CONFIGURATION/{on=1; next} /^\.SH/{on=0} on && /^\\fB/{ s=$0; sub(/^\\fB/, "", s); sub(/\\fR.*/, "", s); gsub(/\\-/, "-", s); print s }' "$T/man" >"$T/mankeys"
if diff "$T/keys" "$T/mankeys" >"$T/diff"; then
	ok "the man page's CONFIGURATION lists the $n keys of help config"
else
	fail "man page and help config differ: $(cat "$T/diff")"
fi

echo "== they are the keys the parser accepts"
# an unknown key in each section: the error lists the valid keys there
check_section() { # SECTION YAML
	sect=$1
	printf '%s\n' "$2" >"$T/c.yaml"
	"$GB" validate --kind config -f "$T/c.yaml" >/dev/null 2>"$T/verr" || true
	want=$(grep "^${sect}" "$T/keys" | sed "s/^${sect}//" | grep -v '[.]' | paste -sd, - | sed 's/,/, /g')
	if grep -q "valid keys here: $want\$" "$T/verr"; then
		ok "$sect*: the parser's keys are the documented ones"
	else
		fail "$sect*: documented [$want], parser: $(cat "$T/verr")"
	fi
}
check_section "daemon." 'daemon: {zzzzzzzz: 1}'
check_section "drivers\[\]." 'drivers: [{name: aws, zzzzzzzz: 1}]'
check_section "teams\[\]." 'teams: [{name: ml, zzzzzzzz: 1}]'
printf 'zzzzzzzz: 1\n' >"$T/c.yaml"
"$GB" validate --kind config -f "$T/c.yaml" >/dev/null 2>"$T/verr" || true
want=$(grep -v '[.]' "$T/keys" | paste -sd, - | sed 's/,/, /g')
grep -q "valid keys here: $want\$" "$T/verr" && ok "top level: the parser's keys are the documented ones" ||
	fail "top level: documented [$want], parser: $(cat "$T/verr")"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo PASS
