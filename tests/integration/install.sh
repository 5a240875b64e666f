#!/bin/sh
# install.sh -- `make install` into a temporary prefix: the installed
# binary finds its drivers, catalogs and policies; a third-party driver
# builds with nothing but `pkg-config --cflags gpubroker-driver` and the
# installed header, and loads through a broker config.
set -eu
: "${GB_BUILD:?}" "${GB_SRC:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/gbinstall.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

make -s -C "$GB_SRC" BUILD="$GB_BUILD" install PREFIX="$T/prefix" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; fail "make install failed"; }
P=$T/prefix
for f in bin/gpubroker include/gpubroker/driver.h lib/pkgconfig/gpubroker-driver.pc \
	lib/gpubroker/drivers/aws.so lib/gpubroker/drivers/onprem.so \
	share/gpubroker/drivers/gcp/data/offers.json share/gpubroker/policies/gdpr.lua \
	share/gpubroker/console/index.html share/gpubroker/console/console.js; do
	[ -e "$P/$f" ] || fail "$f was not installed"
done
echo "ok: binary, drivers, catalogs, policies, web console, header and pkg-config file installed"
for f in share/man/man1/gpubroker.1 share/bash-completion/completions/gpubroker \
	share/zsh/site-functions/_gpubroker share/fish/vendor_completions.d/gpubroker.fish; do
	[ -s "$P/$f" ] || fail "$f was not installed"
done
"$P/bin/gpubroker" help --man | cmp -s - "$P/share/man/man1/gpubroker.1" ||
	fail "the installed man page is not what the installed binary's 'help --man' prints"
"$P/bin/gpubroker" completion bash | cmp -s - "$P/share/bash-completion/completions/gpubroker" ||
	fail "the installed bash completion is not what 'completion bash' prints"
cmp -s "$GB_SRC/docs/openapi.json" "$P/share/doc/gpubroker/openapi.json" ||
	fail "share/doc/gpubroker/openapi.json is not docs/openapi.json"
echo "ok: the man page, the API's description and the bash, zsh and fish completions installed (the binary's own)"

# DESTDIR stages the same tree under a root (packaging), prefix unchanged
make -s -C "$GB_SRC" BUILD="$GB_BUILD" install PREFIX=/usr/local DESTDIR="$T/stage" >"$T/stage.log" 2>&1 ||
	{ cat "$T/stage.log"; fail "make install DESTDIR=... failed"; }
for f in bin/gpubroker lib/gpubroker/drivers/gcp.so lib/pkgconfig/gpubroker-driver.pc; do
	[ -e "$T/stage/usr/local/$f" ] || fail "DESTDIR install lacks usr/local/$f"
done
grep -q '^prefix=/usr/local' "$T/stage/usr/local/lib/pkgconfig/gpubroker-driver.pc" ||
	fail "the staged pkg-config file does not say prefix=/usr/local: $(head -3 "$T/stage/usr/local/lib/pkgconfig/gpubroker-driver.pc")"
echo "ok: DESTDIR stages the tree under usr/local with prefix=/usr/local"

export XDG_STATE_HOME=$T/state
"$P/bin/gpubroker" drivers -o json >"$T/drivers.json" || fail "installed drivers failed"
[ "$(jq -c '[.[] | select(.ready) | .name]' "$T/drivers.json")" = '["aws","azure","gcp","lambda","onprem"]' ] || fail "not every installed driver (the four in-tree ones and lambda, built against the SDK) is ready: $(cat "$T/drivers.json")"
jq -e 'all(.[]; .path | startswith("'"$P"'/lib/gpubroker/drivers/"))' "$T/drivers.json" >/dev/null ||
	fail "drivers were not loaded from the install prefix"
echo "ok: the installed binary loads the installed drivers"
"$P/bin/gpubroker" offers --gpu H100 -o json | jq -e 'length > 10' >/dev/null || fail "no H100 offers from the installed catalogs"
echo "ok: offers from the installed catalogs"
"$P/bin/gpubroker" policy test "$P/share/gpubroker/policies" >"$T/policy.out" || fail "installed policies' tests failed"
echo "ok: the installed policies pass their tests"

export PKG_CONFIG_PATH=$P/lib/pkgconfig
[ "$(pkg-config --variable=abi_major gpubroker-driver)" = "$(sed -n 's/^#define GB_DRIVER_ABI_MAJOR \([0-9]*\).*/\1/p' "$GB_SRC/core/include/gpubroker/driver.h")" ] ||
	fail "gpubroker-driver.pc has the wrong abi_major: '$(pkg-config --variable=abi_major gpubroker-driver)'"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags gpubroker-driver) -shared \
	-o "$T/third.so" "$GB_SRC/tests/drivers/fake/fake_good.c" -I"$GB_SRC/tests/drivers/fake" ||
	fail "a third-party driver does not build with pkg-config --cflags gpubroker-driver"
printf 'drivers:\n  - name: fake\n    path: %s\nstate: %s/s.db\n' "$T/third.so" "$T" >"$T/broker.yaml"
"$P/bin/gpubroker" -c "$T/broker.yaml" drivers -o json | jq -e '.[0] | .name == "fake" and .ready and .version == "1.2.3"' >/dev/null ||
	fail "the third-party driver did not load"
"$P/bin/gpubroker" -c "$T/broker.yaml" offers -o json | jq -e '.[0].instance_type == "fake.8xh100"' >/dev/null ||
	fail "the third-party driver's offers are missing"
echo "ok: a third-party driver built against the installed header loads and offers"
echo PASS
