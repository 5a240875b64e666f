#!/bin/sh
# tests/integration/layers.sh -- the layers of core/ are enforced by the
# build, not by goodwill.  In a copy of the sources, a file that includes
# a header of a higher layer (or reaches one by a relative path), and a
# driver that includes a core header, must each fail `make`; the same
# files with lawful includes must compile (so a failure is the rule, not
# a broken set-up).  HACKING.md, "Layers".
set -u
: "${GB_BUILD:?GB_BUILD must name the build directory}"
: "${GB_SRC:?GB_SRC must name the source tree}"
[ -f "$GB_BUILD/config.mk" ] || { echo "missing $GB_BUILD/config.mk (run make first)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

src="$tmp/src"
mkdir -p "$src" "$tmp/build"
(cd "$GB_SRC" && tar cf - Makefile scripts core drivers) | (cd "$src" && tar xf -)
cp -p "$GB_BUILD/config.mk" "$tmp/build/config.mk"

# build FILE: compiles the one object of FILE (a path under the copy);
# sets rc and out.
build() {
	obj="$tmp/build/obj/${1%.c}.o"
	out=$(cd "$src" && make --no-print-directory BUILD="$tmp/build" "$obj" 2>&1)
	rc=$?
}

# upward LAYER_FILE HEADER: must fail, naming the header
upward() {
	printf '#include "%s"\nint gb_layers_probe(void);\nint gb_layers_probe(void) { return 0; }\n' "$2" > "$src/$1"
	build "$1"
	if [ "$rc" = 0 ]; then
		fail "$1 including \"$2\" compiled: the layer rule is not enforced"
	elif ! echo "$out" | grep -q "$2: No such file"; then
		fail "$1 including \"$2\" failed for another reason: $out"
	else
		echo "ok: $1 cannot include \"$2\""
	fi
	rm -f "$src/$1"
}

# lawful LAYER_FILE HEADER...: must compile
lawful() {
	f=$1
	shift
	: > "$src/$f"
	for h in "$@"; do printf '#include "%s"\n' "$h" >> "$src/$f"; done
	printf 'int gb_layers_probe(void);\nint gb_layers_probe(void) { return 0; }\n' >> "$src/$f"
	build "$f"
	if [ "$rc" != 0 ]; then
		fail "$f including $* did not compile: $out"
	else
		echo "ok: $f may include $*"
	fi
	rm -f "$src/$f"
}

# every layer below may be included...
lawful core/base/zz_probe.c util.h log.h
lawful core/store/zz_probe.c store.h config.h http.h
lawful core/engine/zz_probe.c engine.h plan.h store.h drivers.h
lawful core/app/zz_probe.c session.h runtime.h
lawful core/wire/zz_probe.c plan_json.h events_json.h session.h
lawful core/daemon/zz_probe.c daemon.h api.h serve.h events_json.h
lawful core/cli/zz_probe.c cli.h serve.h session.h plan_json.h
lawful drivers/aws/zz_probe.c gpubroker/driver.h drvc_util.h

# ...and none above
upward core/base/zz_probe.c config.h
upward core/model/zz_probe.c drivers.h
upward core/host/zz_probe.c store.h
upward core/store/zz_probe.c plan.h
upward core/plan/zz_probe.c engine.h
upward core/engine/zz_probe.c session.h
upward core/app/zz_probe.c cli.h
upward core/wire/zz_probe.c daemon.h
upward core/daemon/zz_probe.c cli.h
upward core/daemon/zz_probe.c output.h
# drivers know only driver.h and the driver SDK
upward drivers/aws/zz_probe.c util.h
upward drivers/gcp/zz_probe.c engine.h

# a relative path round the include rule is refused too
printf '#include "../app/session.h"\n' > "$src/core/engine/zz_rel.h"
out=$(cd "$src" && make --no-print-directory BUILD="$tmp/build" "$tmp/build/obj/core/layers.ok" 2>&1)
if [ $? = 0 ]; then
	fail "an include by relative path (core/engine/zz_rel.h) passed the layer check"
elif ! echo "$out" | grep -q 'zz_rel.h.*includes by path'; then
	fail "the relative include failed without naming it: $out"
else
	echo "ok: a relative include is refused with its file and line"
fi
rm -f "$src/core/engine/zz_rel.h"
out=$(cd "$src" && make --no-print-directory BUILD="$tmp/build" "$tmp/build/obj/core/layers.ok" 2>&1) ||
	fail "the layer check fails on the tree itself: $out"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "layers: all checks passed"
