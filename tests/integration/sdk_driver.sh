#!/bin/sh
# sdk_driver.sh -- the driver SDK, as a third party uses it: `make install`
# into a temporary prefix installs driver.h, the SDK headers and library
# and both pkg-config files; the example driver tests/drivers/tinycloud
# (its source and the template Makefile, copied OUTSIDE the source tree)
# builds with nothing but PKG_CONFIG_PATH=<prefix>/lib/pkgconfig make,
# installs itself into the prefix, loads through a broker config, offers
# its catalog and validates as a placement cloud.  The same source made to
# include a core-private header ("util.h") must fail to build: the SDK
# does not leak core.  tinycloud's create, describe and terminate are
# called through a bare host table (idempotency, filters, its state_dir
# file), the guide's minimal example (drivers/README.md) builds and loads
# by name, and finally a pool on tinycloud is applied and destroyed.
set -eu
: "${GB_BUILD:?}" "${GB_SRC:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/gbsdk.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
case "$T" in "$GB_SRC"/*) fail "the temporary folder $T is inside the source tree" ;; esac

# Under `make SANITIZE=1 test` the installed SDK is instrumented: a driver
# built against it takes the same sanitizer flags, as its author would.
SAN=
if [ "${GB_SANITIZE:-}" = 1 ]; then
	SAN="-fsanitize=address,undefined -fno-omit-frame-pointer"
	export CFLAGS="-std=c11 -O1 -g -Wall -Wextra $SAN" LDFLAGS="$SAN"
fi
make -s -C "$GB_SRC" BUILD="$GB_BUILD" install PREFIX="$T/prefix" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; fail "make install failed"; }
P=$T/prefix
for h in "$GB_SRC"/drivers/common/*.h; do
	[ -f "$P/include/gpubroker/sdk/$(basename "$h")" ] || fail "SDK header $(basename "$h") was not installed"
done
for f in lib/libgpubroker-driver-sdk.a lib/pkgconfig/gpubroker-driver-sdk.pc lib/pkgconfig/gpubroker-driver.pc \
	include/gpubroker/driver.h; do
	[ -s "$P/$f" ] || fail "$f was not installed"
done
echo "ok: SDK headers, static library and gpubroker-driver-sdk.pc installed"

export PKG_CONFIG_PATH=$P/lib/pkgconfig
cflags=$(pkg-config --cflags gpubroker-driver-sdk) || fail "pkg-config does not know gpubroker-driver-sdk"
for want in "-I$P/include/gpubroker/sdk" "-I$P/include" -fPIC; do
	case " $cflags " in *" $want "*) ;; *) fail "pkg-config --cflags gpubroker-driver-sdk lacks $want: $cflags" ;; esac
done
libs=$(pkg-config --libs --static gpubroker-driver-sdk)
for want in "-L$P/lib" -lgpubroker-driver-sdk -ljansson -lcrypto -lpthread; do
	case " $libs " in *" $want "*) ;; *) fail "pkg-config --libs --static gpubroker-driver-sdk lacks $want: $libs" ;; esac
done
# the archive's objects can go into a shared object (-fPIC)
nm -A "$P/lib/libgpubroker-driver-sdk.a" | grep -q ' T drvc_catalog_emit$' ||
	fail "the SDK library lacks drvc_catalog_emit"
echo "ok: pkg-config gives the SDK's include dirs, library and its dependencies"

# ---------------------------------------------------------------- out of tree
S=$T/src/tinycloud
mkdir -p "$T/src"
cp -RL "$GB_SRC/tests/drivers/tinycloud" "$S"
cmp -s "$S/Makefile" "$GB_SRC/drivers/lambda/Makefile" ||
	fail "tests/drivers/tinycloud/Makefile is not the template drivers/lambda/Makefile"
(cd "$S" && make V=1) >"$T/build.log" 2>&1 || { cat "$T/build.log"; fail "tinycloud does not build out of tree with pkg-config alone"; }
[ -f "$S/build/tinycloud.so" ] || fail "the template did not make build/tinycloud.so"
exported=$(nm -D --defined-only "$S/build/tinycloud.so" | awk '$2 == "T" {print $3}')
[ "$exported" = gb_driver_entry ] || fail "tinycloud.so exports more than gb_driver_entry: $exported"
# (-z defs is dropped under a sanitizer: its runtime comes from the host)
[ -n "$SAN" ] || grep -q -- '-shared -Wl,-z,defs' "$T/build.log" ||
	fail "the template does not link with -z defs: $(cat "$T/build.log")"
echo "ok: tinycloud builds outside the tree with PKG_CONFIG_PATH=... make (-z defs, one exported symbol)"

(cd "$S" && make install) >"$T/dinstall.log" 2>&1 || { cat "$T/dinstall.log"; fail "the template's make install failed"; }
[ -x "$P/lib/gpubroker/drivers/tinycloud.so" ] || fail "make install did not put tinycloud.so in the prefix's driver folder"
[ -f "$P/share/gpubroker/drivers/tinycloud/data/offers.json" ] || fail "make install did not install tinycloud's catalog"
echo "ok: the template installs the driver and its data where the installed gpubroker looks"

# the guide's minimal example (drivers/README.md: its C and JSON blocks)
# builds with the template, installs, and loads by name
M=$T/src/mini
mkdir -p "$M/data"
awk '/^```c$/ {on = 1; next} /^```$/ && on {exit} on' "$GB_SRC/drivers/README.md" >"$M/mini.c"
awk '/^```json$/ {on = 1; next} /^```$/ && on {exit} on' "$GB_SRC/drivers/README.md" >"$M/data/offers.json"
[ -s "$M/mini.c" ] && [ -s "$M/data/offers.json" ] || fail "drivers/README.md lacks the minimal example's C or JSON block"
cp "$GB_SRC/drivers/lambda/Makefile" "$M/Makefile"
(cd "$M" && make CFLAGS="-std=c11 -Wall -Wextra -Werror $SAN" && make install) >"$T/mini.log" 2>&1 ||
	{ cat "$T/mini.log"; fail "the guide's minimal driver does not build and install"; }
echo "ok: the guide's minimal driver builds with -Werror and installs"

# a driver that reaches for a core header does not build: the SDK's
# include paths hold driver.h and the SDK, nothing of core
L=$T/src/leaky/tinycloud
mkdir -p "$T/src/leaky"
cp -RL "$GB_SRC/tests/drivers/tinycloud" "$L"
{ echo '#include "util.h"'; cat "$S/tinycloud.c"; } >"$L/tinycloud.c"
if (cd "$L" && make) >"$T/leaky.log" 2>&1; then
	fail "a driver including core's util.h built: the SDK leaks core headers"
fi
grep -q 'util\.h' "$T/leaky.log" || { cat "$T/leaky.log"; fail "the leaky build failed, but not on util.h"; }
echo "ok: a driver including core's util.h fails to build"

# ---------------------------------------------------------------- methods
# tinycloud's create, describe and terminate through a bare host table
# (a host built against the installed driver.h alone): idempotent create,
# describe's filters, idempotent terminate, all kept in state_dir
cat >"$T/host.c" <<'HOSTC'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gpubroker/driver.h"
static const char *state_dir, *data_dir;
static void lg(void *c, gb_log_level l, const char *f, ...) { (void)c, (void)l, (void)f; }
static int http(void *c, const gb_http_req *r, gb_http_resp *p, gb_error *e) { (void)c, (void)r, (void)p, (void)e; return -1; }
static void http_free(void *c, gb_http_resp *p) { (void)c, (void)p; }
static int64_t now(void *c) { (void)c; return (int64_t)time(NULL) * 1000; }
static void sleep_ms(void *c, int64_t ms) { (void)c, (void)ms; }
static int secret(void *c, const char *s, char *b, size_t n) { (void)c, (void)s, (void)b, (void)n; return -1; }
static const char *opt(void *c, const char *k)
{
	(void)c;
	return !strcmp(k, "state_dir") ? state_dir : !strcmp(k, "data_dir") ? data_dir : NULL;
}
static char ids[8][32];
static int n, terminated;
static int keep(void *u, const gb_instance *i)
{
	const char *tok = "";
	for (size_t k = 0; k < i->ntags; k++)
		if (!strcmp(i->tags[k].key, GB_TAG_TOKEN))
			tok = i->tags[k].value;
	printf("%s %s %s %s %s\n", (const char *)u, i->id, i->name, i->zone, tok);
	if (n < 8)
		snprintf(ids[n++], 32, "%s", i->id);
	terminated += i->state == GB_INST_TERMINATED;
	return 0;
}
#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)
int main(int argc, char **argv)
{
	void *h = argc == 4 ? dlopen(argv[1], RTLD_NOW) : NULL;
	CHECK(h, "usage: host DRIVER.so STATE_DIR DATA_DIR (%s)", argc == 4 ? dlerror() : "");
	const gb_driver *d = ((gb_driver_entry_fn)dlsym(h, GB_DRIVER_ENTRY_NAME))(GB_DRIVER_ABI_MAJOR);
	gb_host host = {GB_DRIVER_ABI_MAJOR, GB_DRIVER_ABI_MINOR, sizeof(gb_host), NULL, lg, http,
	                http_free, now, now, sleep_ms, NULL, NULL, opt, secret, NULL, NULL};
	gb_error e = {0};
	void *ctx;
	char first[32];
	state_dir = argv[2];
	data_dir = argv[3];
	CHECK(d->init(&host, &ctx, &e) == 0, "init: %s", e.message);
	gb_create_req r = {.pool = "p", .broker_id = "b", .team = "t", .region = "tiny-east",
	                   .zone = "tiny-east-a", .instance_type = "tc.l4x1", .count = 2,
	                   .token = "tok-1", .name_prefix = "p-ab12", .first_index = 0};
	CHECK(d->create(ctx, &r, keep, "create", &e) == 0 && n == 2, "create: %s (%d emitted)", e.message, n);
	snprintf(first, sizeof(first), "%s", ids[0]);
	n = 0;
	CHECK(d->create(ctx, &r, keep, "replay", &e) == 0 && n == 2 && !strcmp(ids[0], first),
	      "a replay of the same token made new instances");
	r.instance_type = "tc.nope";
	r.token = "tok-2";
	CHECK(d->create(ctx, &r, keep, "bad", &e) == -1 && e.cls == GB_ERR_INVALID && strstr(e.message, "tc.nope"),
	      "unknown type: %s", e.message);
	gb_describe_req q = {.pool = "p"};
	n = 0;
	CHECK(d->describe(ctx, &q, keep, "pool", &e) == 0 && n == 2, "describe pool: %d", n);
	q.token = "tok-other";
	n = 0;
	CHECK(d->describe(ctx, &q, keep, "tok", &e) == 0 && n == 0, "describe token filter: %d", n);
	gb_describe_req none = {0};
	CHECK(d->describe(ctx, &none, keep, "none", &e) == -1 && e.cls == GB_ERR_INVALID,
	      "describe without a filter listed everything");
	gb_instance_ref ref = {first, "tiny-east", "tiny-east-a"};
	CHECK(d->terminate(ctx, &ref, 1, &e) == 0 && d->terminate(ctx, &ref, 1, &e) == 0, "terminate: %s", e.message);
	q.token = NULL;
	n = 0;
	CHECK(d->describe(ctx, &q, keep, "live", &e) == 0 && n == 1, "after terminate: %d live", n);
	q.include_terminated = 1;
	n = terminated = 0;
	CHECK(d->describe(ctx, &q, keep, "all", &e) == 0 && n == 2 && terminated == 1,
	      "include_terminated: %d, %d terminated", n, terminated);
	d->fini(ctx);
	return 0;
}
HOSTC
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror $SAN $(pkg-config --cflags gpubroker-driver) -o "$T/host" "$T/host.c" -ldl ||
	fail "the bare host does not build against the installed driver.h"
"$T/host" "$P/lib/gpubroker/drivers/tinycloud.so" "$T/hoststate" "$P/share/gpubroker" >"$T/host.log" 2>&1 ||
	{ cat "$T/host.log"; fail "tinycloud's methods"; }
jq -e '.instances | length == 2 and (map(.state) | sort) == ["running", "terminated"]
	and all(.[]; .tags."gpubroker-token" == "tok-1" and .tags."gpubroker-pool" == "p")' \
	"$T/hoststate/instances.json" >/dev/null ||
	fail "tinycloud's state file is not what the calls did: $(cat "$T/hoststate/instances.json")"
echo "ok: tinycloud's create (idempotent), describe (filters) and terminate (idempotent) keep state_dir/instances.json"

# ---------------------------------------------------------------- loaded
export XDG_STATE_HOME=$T/state
GB=$P/bin/gpubroker
printf 'broker_id: sdktest\ndrivers:\n  - name: tinycloud\n    path: %s\nstate: %s/s.db\n' \
	"$P/lib/gpubroker/drivers/tinycloud.so" "$T" >"$T/broker.yaml"
"$GB" -c "$T/broker.yaml" drivers -o json >"$T/drivers.json" || fail "gpubroker drivers failed"
jq -e 'length == 1 and (.[0] | .name == "tinycloud" and .ready and .version == "0.1.0")' "$T/drivers.json" >/dev/null ||
	fail "tinycloud is not loaded and ready: $(cat "$T/drivers.json")"
echo "ok: gpubroker drivers shows tinycloud ready"
"$GB" -c "$T/broker.yaml" offers -o json >"$T/offers.json" || fail "gpubroker offers failed"
jq -e 'length == 4 and all(.[]; .cloud == "tinycloud")
	and any(.[]; .instance_type == "tc.h100x8" and .region == "tiny-east" and .capacity == "spot" and .price_per_hour == 9.75)
	and any(.[]; .instance_type == "tc.l4x1" and .gpu == "L4" and .price_per_hour == 0.55)' "$T/offers.json" >/dev/null ||
	fail "tinycloud's offers are not its catalog's: $(cat "$T/offers.json")"
echo "ok: gpubroker offers lists tinycloud's catalog"
printf 'drivers:\n  - name: mini\nstate: %s/m.db\n' "$T" >"$T/mini.yaml"
"$GB" -c "$T/mini.yaml" drivers -o json | jq -e '.[0] | .name == "mini" and .ready' >/dev/null ||
	fail "the guide's minimal driver does not load by name from the prefix"
[ "$("$GB" -c "$T/mini.yaml" offers --zones -o json | jq '[.[] | select(.instance_type == "m.h100x8")] | length')" = 4 ] ||
	fail "the guide's catalog does not give its 4 offers (east-a od+spot, east-b od, west od): $("$GB" -c "$T/mini.yaml" offers --zones -o json)"
echo "ok: the guide's minimal driver loads by name and offers its catalog"

# specs name the loaded drivers: tinycloud is a cloud, an unknown name is not
cat >"$T/pool.yaml" <<'EOF'
pool:
  name: tiny
  team: sdk
  count: 2
  gpu: {model: L4, count: 1}
  capacity: [on-demand]
  placement: {clouds: [tinycloud]}
  image: {tinycloud: x}
EOF
"$GB" -c "$T/broker.yaml" validate -f "$T/pool.yaml" >"$T/validate.log" 2>&1 ||
	{ cat "$T/validate.log"; fail "a spec placing on the loaded driver tinycloud does not validate"; }
sed 's/clouds: \[tinycloud\]/clouds: [nonesuch]/' "$T/pool.yaml" >"$T/bad.yaml"
if "$GB" -c "$T/broker.yaml" validate -f "$T/bad.yaml" >"$T/bad.log" 2>&1; then
	fail "a spec placing on a cloud no driver provides validated"
fi
grep -q 'unknown cloud "nonesuch"' "$T/bad.log" || { cat "$T/bad.log"; fail "no clear error for an unknown cloud"; }
echo "ok: validate accepts placement on tinycloud and image.tinycloud, refuses an unknown cloud"

# ---------------------------------------------------------------- lifecycle
db=$T/drivers/tinycloud/instances.json
if ! "$GB" -c "$T/broker.yaml" apply -f "$T/pool.yaml" --auto-approve --wait --timeout 60s >"$T/apply.log" 2>&1; then
	cat "$T/apply.log"
	fail "apply of a pool on tinycloud failed"
fi
[ "$(jq '[.instances[] | select(.state == "running" and .tags."gpubroker-pool" == "tiny")] | length' "$db")" = 2 ] ||
	fail "apply did not leave 2 running tinycloud instances in $db: $(cat "$db")"
"$GB" -c "$T/broker.yaml" status tiny -o json >"$T/status.json" || fail "status failed"
[ "$(jq -c '[.instances[] | select(.state == "running") | .id] | sort' "$T/status.json")" = \
  "$(jq -c '[.instances[] | select(.state == "running") | .id] | sort' "$db")" ] ||
	fail "status does not show tinycloud's running instances: $(cat "$T/status.json")"
echo "ok: apply made 2 instances through tinycloud's create (kept in its state_dir)"
"$GB" -c "$T/broker.yaml" destroy tiny --auto-approve --timeout 60s >"$T/destroy.log" 2>&1 ||
	{ cat "$T/destroy.log"; fail "destroy failed"; }
[ "$(jq '[.instances[] | select(.state == "running")] | length' "$db")" = 0 ] ||
	fail "destroy left tinycloud instances running: $(cat "$db")"
echo "ok: destroy terminated them through tinycloud's terminate"
echo PASS
