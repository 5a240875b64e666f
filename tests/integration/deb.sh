#!/bin/sh
# deb.sh -- the Debian packages (`make deb`, scripts/mkdeb.sh) on this
# machine: built with a version of this run's own, lintian-clean
# (errors and warnings; overrides carry their reasons), dependencies from
# dpkg-shlibdeps, a driver package refused without the broker's driver
# ABI, the agent's package with its binary, man page and unit, depending
# on libcurl but on no NVIDIA library and not on jansson (linked in
# statically).  Installed with dpkg -i: `gpubroker validate` accepts the packaged
# /etc/gpubroker/broker.yaml, the units (the agent's too) pass
# `systemd-analyze verify`, the installed agent runs, the
# daemon runs as the packaged user (gpubroker) with the packaged drivers
# against cloudsim and applies and destroys a pool; with DEB_UPGRADE=1
# (tests/reliability/deb_upgrade.sh) an upgrade keeps a changed
# conffile; `apt-get purge` leaves no file of the packages behind
# (only the state, /var/lib/gpubroker, which README says is kept).
#
# It installs into this host (there is no offline debootstrap): only as
# root, never over a gpubroker that is already installed, one run at a
# time (a lock), and everything is purged again on the way out.  The
# gpubroker user is deleted afterwards when this test created it.
. "$GB_SRC/tests/lib/integration.sh"
T0=$(date +%s)
secs() { echo "($(($(date +%s) - T0)) s)"; }

[ "$(id -u)" = 0 ] || { echo "SKIP: installing packages needs root"; exit 77; }
for t in dpkg dpkg-deb dpkg-shlibdeps setpriv flock; do
	command -v $t >/dev/null 2>&1 || { echo "SKIP: $t is missing (make deps: dpkg-dev)"; exit 77; }
done
# (cloudsim and the daemon must not keep the lock: they get fd 9 closed)
exec 9>/run/lock/gpubroker-deb-test.lock
flock -w 300 9 || fail "another deb.sh holds /run/lock/gpubroker-deb-test.lock"
if dpkg-query -W -f '${Package} ${Status}\n' 'gpubroker*' 2>/dev/null | grep -q ' installed$'; then
	echo "SKIP: gpubroker packages are installed on this host; not touching them"
	exit 77
fi
for f in /usr/bin/gpubroker /etc/gpubroker /usr/lib/gpubroker /usr/share/gpubroker; do
	[ ! -e $f ] || { echo "SKIP: $f exists (not from a package); not installing over it"; exit 77; }
done
# dpkg ARGS, waiting (up to a minute) while apt or dpkg of someone else
# holds the lock; the output in $T/dpkg.out
dpkg_w() {
	_i=0
	while :; do
		_rc=0
		dpkg "$@" >"$T/dpkg.out" 2>&1 || _rc=$?
		grep -q 'lock' "$T/dpkg.out" && [ $_rc != 0 ] && [ $_i -lt 60 ] || return $_rc
		_i=$((_i + 1))
		sleep 1
	done
}
user_before=$(getent passwd gpubroker || true)
state_before=$([ -e /var/lib/gpubroker ] && echo yes || echo no)

PKGS="gpubroker gpubroker-agent gpubroker-dev gpubroker-driver-aws gpubroker-driver-azure gpubroker-driver-gcp gpubroker-driver-lambda gpubroker-driver-onprem"
deb_cleanup() {
	if [ -n "$D_PID" ] && kill -0 "$D_PID" 2>/dev/null; then
		kill -TERM "$D_PID" 2>/dev/null || true
		wait "$D_PID" 2>/dev/null || true
		D_PID=""
	fi
	# shellcheck disable=SC2086
	dpkg_w --purge $PKGS || true
	if [ -z "$user_before" ] && getent passwd gpubroker >/dev/null; then
		userdel gpubroker 2>/dev/null || true
		getent group gpubroker >/dev/null && groupdel gpubroker 2>/dev/null || true
	fi
	[ "$state_before" = yes ] || rm -rf /var/lib/gpubroker
}
trap 'rc=$?; set +e; deb_cleanup; (exit $rc); lib_cleanup' EXIT

# ---------------------------------------------------------------- build
gbver=$("$GB" version -o json | jq -r .version)
V1="$gbver-1~test$(date +%s)x$$"
OUT=$T/deb DEB_VERSION=$V1 BUILD=$GB_BUILD "$GB_SRC/scripts/mkdeb.sh" >"$T/mkdeb.out" 2>"$T/mkdeb.log" ||
	fail "mkdeb.sh failed: $(tail -5 "$T/mkdeb.log")"
for p in $PKGS; do
	[ -s "$T/deb/${p}_${V1}_$(dpkg --print-architecture).deb" ] || fail "no package $p"
done
echo "ok: make deb built $(echo $PKGS | wc -w) packages, version $V1 $(secs)"
deb() { echo "$T/deb/${1}_${2:-$V1}_$(dpkg --print-architecture).deb"; }
check "dpkg-deb -f '$(deb gpubroker)' Provides | grep -qx 'gpubroker-driver-abi-$(sed -n 's/^#define GB_DRIVER_ABI_MAJOR \([0-9]*\).*/\1/p' "$GB_SRC/core/include/gpubroker/driver.h")'" \
	"the broker provides its driver ABI major version"
for d in aws azure gcp lambda onprem; do
	dpkg-deb -f "$(deb gpubroker-driver-$d)" Depends | grep -q 'gpubroker-driver-abi-1' ||
		fail "gpubroker-driver-$d does not depend on the driver ABI"
	dpkg-deb -f "$(deb gpubroker-driver-$d)" Depends | grep -q 'libjansson4' ||
		fail "gpubroker-driver-$d lacks its library dependencies (dpkg-shlibdeps)"
done
check "dpkg-deb -f '$(deb gpubroker)' Depends | grep -q 'libmicrohttpd12' && dpkg-deb -f '$(deb gpubroker)' Depends | grep -q 'liblua5.4-0'" \
	"the broker depends on the libraries its binary links (dpkg-shlibdeps)"
# the agent: its files, no conffile (the broker's bootstrap writes
# /etc/gpubroker-agent.conf), what a stock GPU image has as dependencies
dpkg-deb -c "$(deb gpubroker-agent)" | awk '{print $NF}' >"$T/agent.files"
for f in ./usr/bin/gpubroker-agent ./usr/share/man/man8/gpubroker-agent.8.gz \
	./lib/systemd/system/gpubroker-agent.service ./usr/share/doc/gpubroker-agent/copyright; do
	grep -qx "$f" "$T/agent.files" || fail "gpubroker-agent lacks $f: $(cat "$T/agent.files")"
done
check "! dpkg-deb -I '$(deb gpubroker-agent)' conffiles >/dev/null 2>&1" "the agent's package has no conffile"
adeps=$(dpkg-deb -f "$(deb gpubroker-agent)" Depends)
check "echo '$adeps' | grep -q 'libcurl'" "the agent depends on libcurl (dpkg-shlibdeps): $adeps"
check "! echo '$adeps' | grep -qi 'nvidia\|jansson\|gpubroker'" \
	"the agent depends on no NVIDIA library (NVML by dlopen), not on jansson (static) nor the broker"
check "dpkg-deb -f '$(deb gpubroker)' Conffiles >/dev/null; dpkg-deb -I '$(deb gpubroker)' conffiles | grep -qx /etc/gpubroker/broker.yaml" \
	"/etc/gpubroker/broker.yaml is a conffile"
# lintian reads the .deb files while the rest goes on (its verdict is
# awaited before the purge)
LINT_PID=
if command -v lintian >/dev/null 2>&1; then
	lintian --fail-on error,warning "$T"/deb/*.deb >"$T/lintian.out" 2>&1 9>&- &
	LINT_PID=$!
	BG_PIDS="$BG_PIDS $LINT_PID"
else
	echo "note: lintian is not installed (make deps): the packages were not linted"
fi

# ---------------------------------------------------------------- install
check "! dpkg_w -i '$(deb gpubroker-driver-aws)' && grep -q 'depends on gpubroker-driver-abi-1' '$T/dpkg.out'" \
	"a driver package alone is refused (no broker of its ABI)"
dpkg_w --purge gpubroker-driver-aws || true
# shellcheck disable=SC2046
dpkg_w -i $(for p in $PKGS; do deb $p; done) || fail "dpkg -i: $(tail -5 "$T/dpkg.out")"
echo "ok: dpkg -i installed every package $(secs)"
check "getent passwd gpubroker | grep -q ':/var/lib/gpubroker:/usr/sbin/nologin$'" "the gpubroker system user exists"
check "[ \"\$(stat -c '%U:%G %a' /etc/gpubroker/broker.yaml)\" = 'root:gpubroker 640' ]" \
	"the config is root:gpubroker 0640 (it may hold token hashes)"
/usr/bin/gpubroker validate -f /etc/gpubroker/broker.yaml >"$T/validate.out" 2>&1 ||
	fail "gpubroker validate /etc/gpubroker/broker.yaml: $(cat "$T/validate.out")"
echo "ok: gpubroker validate accepts the packaged config: $(cat "$T/validate.out")"
check "/usr/bin/gpubroker drivers -c /etc/gpubroker/broker.yaml -o json 2>/dev/null | jq -e '[.[].path] | all(startswith(\"/usr/lib/gpubroker/drivers/\")) and length == 5' >/dev/null" \
	"the packaged binary loads the five packaged drivers"
check "zcat /usr/share/man/man1/gpubroker.1.gz | head -5 | grep -q '^\\.TH'" "the man page is installed"
check "zcat /usr/share/man/man8/gpubroker-agent.8.gz | grep -q '^\\.TH GPUBROKER-AGENT 8'" "the agent's man page is installed"
check "/usr/bin/gpubroker-agent --help | grep -q 'gpubroker-agent(8)'" "the packaged agent runs"
check "cmp -s /usr/share/doc/gpubroker/openapi.json '$GB_SRC/docs/openapi.json'" "the API's description is installed"
if command -v systemd-analyze >/dev/null 2>&1; then
	cp /lib/systemd/system/gpubroker-replica@.service "$T/gpubroker-replica@7878.service"
	for u in /lib/systemd/system/gpubroker.service "$T/gpubroker-replica@7878.service" \
		/lib/systemd/system/gpubroker-agent.service; do
		systemd-analyze verify "$u" >"$T/verify.out" 2>&1 && [ ! -s "$T/verify.out" ] ||
			fail "systemd-analyze verify $u: $(cat "$T/verify.out")"
	done
	echo "ok: systemd-analyze verify: the installed units are clean"
else
	echo "note: systemd-analyze is not installed: the units were not verified"
fi

# ---------------------------------------------------------------- run
# the daemon as the packaged user, with the packaged binary and drivers,
# against cloudsim; its state in a folder of its own
sim_start 9>&-
chmod 0711 "$T"
mkdir "$T/state"
chown gpubroker:gpubroker "$T/state"
export GPUBROKER_STATE=$T/state/state.db
cat >"$T/as-gpubroker" <<EOF
#!/bin/sh
exec setpriv --reuid=gpubroker --regid=gpubroker --init-groups /usr/bin/gpubroker "\$@"
EOF
chmod 0755 "$T/as-gpubroker"
GB=$T/as-gpubroker
daemon_start 9>&-
check "[ \"\$(stat -c %U /proc/$D_PID)\" = gpubroker ]" "the daemon runs as gpubroker"
GB=/usr/bin/gpubroker
export GPUBROKER_TOKEN=demo-ci-token
write_spec "$T/p.yaml" deb-1 aws A10G 1
gb apply -f "$T/p.yaml" --auto-approve --wait --timeout 60s >"$T/apply.out" 2>"$T/apply.log" ||
	fail "apply through the packaged daemon: $(tail -3 "$T/apply.log")"
check "[ \"\$(sim_live deb-1)\" = 1 ]" "the pool's instance runs in cloudsim"
gb destroy deb-1 --auto-approve --timeout 60s >"$T/destroy.out" 2>"$T/destroy.log" ||
	fail "destroy: $(tail -3 "$T/destroy.log")"
check "[ \"\$(sim_live deb-1)\" = 0 ]" "destroyed: nothing left in cloudsim"
daemon_stop
check "[ \"\$(stat -c %U '$T/state/state.db')\" = gpubroker ]" "the state belongs to the gpubroker user"

# ---------------------------------------------------------------- upgrade
# (tests/reliability/deb_upgrade.sh: DEB_UPGRADE=1; it doubles the
# installs, so make test's integration run leaves it out)
if [ "${DEB_UPGRADE:-}" = 1 ]; then
echo '# changed here' >>/etc/gpubroker/broker.yaml
V2="$V1.1"
mkdir "$T/re"
for p in $PKGS; do
	dpkg-deb -R "$(deb $p)" "$T/re/$p"
	sed -i "s/^Version: .*/Version: $V2/" "$T/re/$p/DEBIAN/control"
	dpkg-deb --root-owner-group -Zxz --build "$T/re/$p" "$(deb $p "$V2")" >/dev/null
done
# shellcheck disable=SC2046
dpkg_w -i $(for p in $PKGS; do deb $p "$V2"; done) || fail "upgrade: $(tail -5 "$T/dpkg.out")"
check "[ \"\$(dpkg-query -W -f '\${Version}' gpubroker)\" = '$V2' ]" "upgraded to $V2"
check "tail -n 1 /etc/gpubroker/broker.yaml | grep -qx '# changed here'" "the changed conffile survived the upgrade"
else
	echo "note: the upgrade is checked by tests/reliability/deb_upgrade.sh"
fi

if [ -n "$LINT_PID" ]; then
	wait "$LINT_PID" || fail "lintian: $(grep -v 'root privileges' "$T/lintian.out")"
	echo "ok: lintian: no error, no warning ($(cat "$T"/deb/work/*/usr/share/lintian/overrides/* | grep -c '^[a-z]') overrides, each with its reason) $(secs)"
fi

# ---------------------------------------------------------------- purge
# every file and folder of the packages (folders shared with the system,
# such as /usr/bin, stay)
for p in $PKGS; do dpkg -L "$p"; done | sort -u >"$T/files.txt"
if command -v apt-get >/dev/null 2>&1; then
	# shellcheck disable=SC2086
	apt-get -o DPkg::Lock::Timeout=60 purge -y -q $PKGS >"$T/purge.log" 2>&1 ||
		fail "apt-get purge: $(tail -5 "$T/purge.log")"
else
	# shellcheck disable=SC2086
	dpkg_w --purge $PKGS || fail "dpkg --purge: $(tail -5 "$T/dpkg.out")"
fi
check "! dpkg-query -W -f '\${Status}\n' $PKGS 2>/dev/null | grep -q installed" "every package is purged"
left=""
while read -r f; do
	[ "$f" != /. ] && [ -e "$f" ] || continue
	[ -d "$f" ] && [ -n "$(dpkg -S "$f" 2>/dev/null)" ] && continue # a folder of other packages
	left="$left $f"
done <"$T/files.txt"
for f in /etc/gpubroker /usr/lib/gpubroker /usr/share/gpubroker /usr/include/gpubroker; do
	[ ! -e $f ] || left="$left $f"
done
check "[ -z \"$left\" ]" "purge left nothing of the packages behind (left:$left)"
echo "PASS $(secs)"
