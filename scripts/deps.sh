#!/bin/sh
# deps.sh -- install the Debian packages gpubroker needs, but only those
# pkg-config cannot find.  apt-get as root, sudo otherwise; if neither is
# possible, print the exact command and fail.
set -u

# pkg-config module : Debian package
REQ="libcurl:libcurl4-openssl-dev openssl:libssl-dev jansson:libjansson-dev
yaml-0.1:libyaml-dev lua5.4:liblua5.4-dev cmocka:libcmocka-dev
sqlite3:libsqlite3-dev libmicrohttpd:libmicrohttpd-dev libpq:libpq-dev
expat:libexpat1-dev yajl:libyajl-dev zlib:zlib1g-dev"

missing=""
if command -v pkg-config >/dev/null 2>&1; then
	for pair in $REQ; do
		pkg-config --exists "${pair%%:*}" 2>/dev/null || missing="$missing ${pair#*:}"
	done
else
	missing="pkg-config"
	for pair in $REQ; do
		missing="$missing ${pair#*:}"
	done
fi
# Tools the tests and benchmarks drive as real peers.
for tool in curl:curl strace:strace sshd:openssh-server ssh:openssh-client jq:jq wrk:wrk \
    script:bsdutils openssl:openssl; do
	cmd=${tool%%:*}
	deb=${tool#*:}
	if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$cmd" ]; then
		missing="$missing $deb"
	fi
done
# PostgreSQL's server, run by the tests on 127.0.0.1 (tests/lib/pg.sh):
# Debian keeps it out of PATH, under /usr/lib/postgresql/VERSION/bin.
have_pg=""
for d in /usr/lib/postgresql/*/bin; do
	[ -x "$d/initdb" ] && have_pg=1
done
[ -n "$have_pg" ] || missing="$missing postgresql"
# The official AWS SDK, driven against cloudsim by
# tests/integration/cloudsim_ec2_boto3.sh (Debian's /usr/bin/python3).
if ! /usr/bin/python3 -c 'import boto3' >/dev/null 2>&1; then
	missing="$missing python3-boto3"
fi
# PyYAML parses the CI examples in tests/integration/packaging.sh.
if ! /usr/bin/python3 -c 'import yaml' >/dev/null 2>&1; then
	missing="$missing python3-yaml"
fi
# The web console's browser tests (tests/integration/console_browser.sh):
# headless Chromium driven through Debian's selenium.
for tool in chromium:chromium chromedriver:chromium-driver; do
	command -v "${tool%%:*}" >/dev/null 2>&1 || missing="$missing ${tool#*:}"
done
if ! /usr/bin/python3 -c 'import selenium' >/dev/null 2>&1; then
	missing="$missing python3-selenium"
fi
# Prometheus scraping the daemon, and promtool checking /metrics
# (tests/integration/prometheus_dashboard.sh): Debian's prometheus has both.
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 ||
	missing="$missing prometheus"
# The API's description (docs/openapi.json): every answer of
# tests/integration/openapi.sh is validated against it with Debian's
# python3-jsonschema; Redocly CLI lints it (Node, below).
if ! /usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1; then
	missing="$missing python3-jsonschema"
fi
command -v npm >/dev/null 2>&1 || missing="$missing npm"
# Debian packages: `make deb` (dpkg-dev: dpkg-shlibdeps) and its check
command -v dpkg-shlibdeps >/dev/null 2>&1 || missing="$missing dpkg-dev"
command -v lintian >/dev/null 2>&1 || missing="$missing lintian"
# IANA time zones for autoscale schedule windows (core/base/tzfile.c reads
# the compiled zone files; tests/unit/test_tzfile.c needs them).
[ -r /usr/share/zoneinfo/Europe/Berlin ] || missing="$missing tzdata"
[ -n "${GB_DEPS_EXTRA:-}" ] && missing="$missing $GB_DEPS_EXTRA"

# Node tools of the tests (tests/package.json: Redocly CLI, pinned) into
# tests/node_modules, from the lock file, once.  Redocly CLI 2 needs Node
# 20.19 or later: with an older one (or no registry), say so and go on;
# tests/integration/openapi_lint.sh then skips, saying why.
node_tools() {
	tests=$(dirname "$0")/../tests
	want=$(sed -n 's/.*"@redocly\/cli": *"\([^"]*\)".*/\1/p' "$tests/package.json")
	have=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' \
	    "$tests/node_modules/@redocly/cli/package.json" 2>/dev/null | head -n 1)
	[ "$have" = "$want" ] && return 0
	command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || return 0
	if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number);
	    process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
		echo "deps: Node $(node --version) is older than Redocly CLI $want needs" \
		    "(20.19); the OpenAPI lint test will be skipped" >&2
		return 0
	fi
	echo "deps: installing Redocly CLI $want into tests/node_modules (npm ci)" >&2
	(cd "$tests" && npm ci --no-audit --no-fund --ignore-scripts >&2) ||
		echo "deps: npm ci in tests/ failed; the OpenAPI lint test will be skipped" >&2
}

missing=$(echo $missing)
if [ -z "$missing" ]; then
	node_tools
	exit 0
fi

echo "deps: installing missing Debian packages: $missing" >&2
if [ "$(id -u)" = 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	SUDO="sudo"
else
	echo "deps: these packages are missing and I cannot install them" >&2
	echo "      (not root, and no password-less sudo). Run:" >&2
	echo "      sudo apt-get update && sudo apt-get install -y $missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2 || { echo "deps: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2 || {
	echo "deps: apt-get install failed for: $missing" >&2
	exit 1
}
node_tools
exit 0
