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
# IANA time zones for autoscale schedule windows (core/base/tzfile.c reads
# the compiled zone files; tests/unit/test_tzfile.c needs them).
[ -r /usr/share/zoneinfo/Europe/Berlin ] || missing="$missing tzdata"
[ -n "${GB_DEPS_EXTRA:-}" ] && missing="$missing $GB_DEPS_EXTRA"

missing=$(echo $missing)
[ -z "$missing" ] && exit 0

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
exit 0
