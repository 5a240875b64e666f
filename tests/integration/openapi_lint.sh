#!/bin/sh
# openapi_lint.sh -- docs/openapi.json lints clean (no error, no warning)
# with Redocly CLI under its recommended rules (tests/redocly.yaml), the
# version pinned in tests/package.json and installed by `make deps` into
# tests/node_modules.  Skipped (77) without node or that install.
set -eu
: "${GB_SRC:?}"
R=$GB_SRC/tests/node_modules/.bin/redocly
command -v node >/dev/null 2>&1 ||
	{ echo "SKIP: node is not installed (make deps installs nodejs and npm)"; exit 77; }
[ -x "$R" ] ||
	{ echo "SKIP: Redocly CLI is not in tests/node_modules (make deps runs npm ci there)"; exit 77; }
want=$(sed -n 's/.*"@redocly\/cli": *"\([^"]*\)".*/\1/p' "$GB_SRC/tests/package.json")
T=$(mktemp -d "${TMPDIR:-/tmp}/gblint.XXXXXX")
trap 'rm -rf "$T"' EXIT
# no telemetry, no update check: nothing leaves the machine
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
got=$(cd "$GB_SRC/tests" && "$R" --version 2>/dev/null | head -n 1)
[ "$got" = "$want" ] || { echo "FAIL: Redocly CLI $got is installed, tests/package.json pins $want (make deps)"; exit 1; }
rc=0
(cd "$GB_SRC/tests" && "$R" lint --config redocly.yaml --format stylish ../docs/openapi.json) >"$T/lint.out" 2>&1 || rc=$?
grep -v '[║╔╚]' "$T/lint.out" | grep -v '^ *$' || true
[ $rc = 0 ] || { echo "FAIL: docs/openapi.json does not lint clean (above)"; exit 1; }
if grep -v 'Deprecation warning' "$T/lint.out" | grep -qiE '[0-9]+ warnings?'; then
	echo "FAIL: docs/openapi.json lints with warnings (above)"
	exit 1
fi
echo "ok: docs/openapi.json lints clean with Redocly CLI $got"
echo PASS
