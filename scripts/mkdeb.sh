#!/bin/sh
# mkdeb.sh -- Debian packages from a built tree (`make deb`):
#
#   gpubroker                 the CLI and daemon, man page, completions,
#                             systemd units, sysusers file, the API's
#                             description, /etc/gpubroker/broker.yaml
#                             (conffile); Provides gpubroker-driver-abi-MAJOR
#   gpubroker-agent           the instance agent (gpubroker-agent(8)), its
#                             man page and systemd unit; no conffile (the
#                             broker's bootstrap writes /etc/gpubroker-agent.conf)
#                             and no dependency on the broker: it goes on
#                             the GPU instances
#   gpubroker-dev             driver.h, the driver SDK, pkg-config files
#   gpubroker-driver-NAME     one per shipped driver (aws azure gcp lambda
#                             onprem): NAME.so and its data; Depends on
#                             gpubroker-driver-abi-MAJOR, so dpkg refuses a
#                             driver for a broker that could not load it
#
# Every package's library dependencies come from dpkg-shlibdeps over its
# binaries.  Built with dpkg-deb from a staged `make install
# DESTDIR=... PREFIX=/usr`; no debhelper.
#
# Environment: BUILD (the build directory, default build), OUT (where the
# .deb files go, default $BUILD/deb), DEB_VERSION (default VERSION-1, the
# program's version), DEB_MAINTAINER (default the last commit's author).
# Prints the paths of the packages built.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/deb}
for t in dpkg-deb dpkg-shlibdeps; do
	command -v $t >/dev/null 2>&1 ||
		{ echo "mkdeb: $t is missing (Debian package dpkg-dev; make deps)" >&2; exit 1; }
done
gbver=$(sed -n 's/.*GB_VERSION "\(.*\)"/\1/p' core/base/util.h)
abi=$(sed -n 's/^#define GB_DRIVER_ABI_MAJOR \([0-9]*\).*/\1/p' core/include/gpubroker/driver.h)
VERSION=${DEB_VERSION:-$gbver-1}
MAINT=${DEB_MAINTAINER:-$(git log -1 --format='%an <%ae>' 2>/dev/null || echo "gpubroker <gpubroker@users.noreply.github.com>")}
ARCH=$(dpkg --print-architecture)
DRIVERS="aws azure gcp lambda onprem"
# dates in the packages: the last commit's (reproducible builds)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$OUT/work
rm -rf "$W"
mkdir -p "$W"
echo "mkdeb: staging make install PREFIX=/usr" >&2
make -s BUILD="$BUILD" install PREFIX=/usr DESTDIR="$W/stage" >"$W/install.log" 2>&1 ||
	{ cat "$W/install.log" >&2; echo "mkdeb: make install failed" >&2; exit 1; }
S=$W/stage

# mv_into PKG PATH...: move staged paths (relative to the root) into PKG's tree
mv_into() {
	_p=$1
	shift
	for _f in "$@"; do
		[ -e "$S/$_f" ] || continue
		mkdir -p "$W/$_p/$(dirname "$_f")"
		mv "$S/$_f" "$W/$_p/$_f"
	done
}

# docs PKG: copyright and changelog.Debian.gz, as Debian policy asks
docs() {
	_d=$W/$1/usr/share/doc/$1
	mkdir -p "$_d"
	cat >"$_d/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: gpubroker
Comment: Built from the gpubroker source tree by scripts/mkdeb.sh.

Files: *
Copyright: $(date -u -d "@$SOURCE_DATE_EPOCH" +%Y) the gpubroker authors
License: other
 The gpubroker source tree states no licence yet; until it does, all rights
 are reserved by its authors.
EOF
	{
		printf '%s (%s) unstable; urgency=medium\n\n' "$1" "$VERSION"
		printf '  * Built from the gpubroker source tree (scripts/mkdeb.sh).\n\n'
		printf ' -- %s  %s\n' "$MAINT" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
	} | gzip -9n >"$_d/changelog.Debian.gz"
	override "$1" <<EOF
# Built from the source tree, not uploaded to Debian: there is no ITP bug
# for a first changelog entry to close.
$1: initial-upload-closes-no-bugs [usr/share/doc/$1/changelog.Debian.gz:1]
EOF
}

# override PKG < lines: lintian overrides of PKG (each with its reason)
override() {
	mkdir -p "$W/$1/usr/share/lintian/overrides"
	cat >>"$W/$1/usr/share/lintian/overrides/$1"
}

# strip_all PKG: no debugging symbols in the packages
strip_all() {
	find "$W/$1" -type f \( -name '*.so' -o -path '*/bin/*' \) | while read -r _f; do
		strip --strip-unneeded --remove-section=.comment --remove-section=.note "$_f"
	done
}

# shlibs PKG: the Depends dpkg-shlibdeps finds for PKG's ELF files
shlibs() {
	_elf=$(find "$W/$1" -type f \( -name '*.so' -o -path '*/bin/*' \) | sort)
	[ -n "$_elf" ] || return 0
	mkdir -p "$W/shlibs/debian"
	printf 'Source: gpubroker\n\nPackage: %s\nArchitecture: any\n' "$1" >"$W/shlibs/debian/control"
	# shellcheck disable=SC2086
	(cd "$W/shlibs" && dpkg-shlibdeps -O --ignore-missing-info $_elf 2>"$W/shlibs.$1.log") |
		sed -n 's/^shlibs:Depends=//p'
}

# control PKG DEPENDS [FIELD: VALUE lines...] < description
control() {
	_p=$1 _dep=$2
	shift 2
	mkdir -p "$W/$_p/DEBIAN"
	_lib=$(shlibs "$_p")
	_size=$(du -sk --exclude=DEBIAN "$W/$_p" | cut -f1)
	{
		echo "Package: $_p"
		echo "Version: $VERSION"
		echo "Architecture: $ARCH"
		echo "Maintainer: $MAINT"
		echo "Installed-Size: $_size"
		_all=$(printf '%s' "$_lib${_lib:+${_dep:+, }}$_dep")
		[ -z "$_all" ] || echo "Depends: $_all"
		for _l in "$@"; do echo "$_l"; done
		echo "Section: admin"
		echo "Priority: optional"
		cat
	} >"$W/$_p/DEBIAN/control"
	(cd "$W/$_p" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | sort |
		xargs -r md5sum) >"$W/$_p/DEBIAN/md5sums"
}

build_deb() {
	find "$W/$1" -type d -exec chmod 0755 {} +
	find "$W/$1" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
	dpkg-deb --root-owner-group -Zxz --build "$W/$1" "$OUT/${1}_${VERSION}_$ARCH.deb" >/dev/null
	echo "$OUT/${1}_${VERSION}_$ARCH.deb"
}

# ---------------------------------------------------------------- drivers
for d in $DRIVERS; do
	p=gpubroker-driver-$d
	mv_into "$p" "usr/lib/gpubroker/drivers/$d.so" "usr/share/gpubroker/drivers/$d"
	[ -e "$W/$p/usr/lib/gpubroker/drivers/$d.so" ] ||
		{ echo "mkdeb: driver $d was not built ($BUILD/lib/gpubroker/drivers/$d.so)" >&2; exit 1; }
done
# the CUDA probe goes with the on-prem driver, when nvcc built it
mv_into gpubroker-driver-onprem usr/bin/gpuprobe
if [ -e "$W/gpubroker-driver-onprem/usr/bin/gpuprobe" ]; then
	override gpubroker-driver-onprem <<'EOF'
# gpuprobe is run by the onprem driver over ssh on GPU nodes, not by
# people; `gpubroker help nodes` and drivers/onprem/README.md describe it.
gpubroker-driver-onprem: no-manual-page [usr/bin/gpuprobe]
EOF
fi

# ---------------------------------------------------------------- dev
# the static library and the .pc files in the multiarch directory
# (what a cross-compiling pkg-config searches)
mv_into gpubroker-dev usr/include usr/lib/pkgconfig usr/lib/libgpubroker-driver-sdk.a
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
mkdir -p "$W/gpubroker-dev/usr/lib/$ma"
mv "$W/gpubroker-dev/usr/lib/pkgconfig" "$W/gpubroker-dev/usr/lib/libgpubroker-driver-sdk.a" \
	"$W/gpubroker-dev/usr/lib/$ma/"
sed -i "s|^libdir=\${prefix}/lib\$|libdir=\${prefix}/lib/$ma|" "$W/gpubroker-dev/usr/lib/$ma/pkgconfig/"*.pc
override gpubroker-dev <<EOF
# A gpubroker driver is a plugin shared object: everything built with
# gpubroker-driver.pc is one, and must be compiled -fPIC with hidden
# visibility (only the entry symbol exported; drivers/README.md).
gpubroker-dev: pkg-config-bad-directive -fPIC [usr/lib/$ma/pkgconfig/gpubroker-driver.pc]
gpubroker-dev: pkg-config-bad-directive -fvisibility=hidden [usr/lib/$ma/pkgconfig/gpubroker-driver.pc]
EOF

# ---------------------------------------------------------------- agent
# /usr/bin, where the broker's bootstrap (core/engine/engine_agent.c) and
# the unit expect it; jansson is linked in statically (Makefile,
# AGENT_JANSSON), so its Depends are what a stock GPU image has (libc6,
# libcurl4)
A=$W/gpubroker-agent
mv_into gpubroker-agent usr/bin/gpubroker-agent usr/share/man/man8/gpubroker-agent.8
[ -e "$A/usr/bin/gpubroker-agent" ] ||
	{ echo "mkdeb: the agent was not built ($BUILD/bin/gpubroker-agent)" >&2; exit 1; }
gzip -9n "$A/usr/share/man/man8/gpubroker-agent.8"
# The unit has ConditionPathExists=/etc/gpubroker-agent.conf, which the
# broker's bootstrap writes (it also enables and starts the unit): an
# installed package never runs the agent unconfigured.
install -d "$A/lib/systemd/system"
install -m 0644 packaging/gpubroker-agent.service "$A/lib/systemd/system/gpubroker-agent.service"

# ---------------------------------------------------------------- broker
B=$W/gpubroker
mv_into gpubroker usr/bin/gpubroker usr/share/gpubroker usr/share/man usr/share/bash-completion \
	usr/share/fish usr/share/doc/gpubroker/openapi.json
# zsh: Debian's zsh reads vendor completions from vendor-completions
mkdir -p "$B/usr/share/zsh/vendor-completions"
mv "$S/usr/share/zsh/site-functions/_gpubroker" "$B/usr/share/zsh/vendor-completions/"
gzip -9n "$B/usr/share/man/man1/gpubroker.1"
# the drivers' data folder belongs to the driver packages
rmdir "$B/usr/share/gpubroker/drivers" 2>/dev/null || true
# what is left in the stage is a mistake of this script
left=$(cd "$S" && find . -type f | sed 's|^\./||')
[ -z "$left" ] || { echo "mkdeb: staged files in no package: $left" >&2; exit 1; }
install -d "$B/lib/systemd/system" "$B/usr/lib/sysusers.d" "$B/etc/gpubroker"
for u in gpubroker.service gpubroker-replica@.service; do
	# the binary in /usr/bin; the package did the source tree's install steps
	sed -e 's|/usr/local/bin/gpubroker|/usr/bin/gpubroker|g' \
	    -e '/^# Install: /,/systemctl enable --now gpubroker$/c\
# Installed by the Debian package gpubroker (user, units, config): edit\
# /etc/gpubroker/broker.yaml, then `systemctl enable --now gpubroker`.' \
	    -e '/install -m 0644 packaging\/gpubroker-replica@.service/d' \
		"packaging/$u" >"$B/lib/systemd/system/$u"
	chmod 0644 "$B/lib/systemd/system/$u"
done
install -m 0644 packaging/gpubroker.sysusers.conf "$B/usr/lib/sysusers.d/gpubroker.conf"
install -m 0644 packaging/broker.yaml "$B/etc/gpubroker/broker.yaml"

PKGS="gpubroker gpubroker-agent gpubroker-dev $(for d in $DRIVERS; do echo gpubroker-driver-$d; done)"
for p in $PKGS; do
	docs "$p"
	strip_all "$p"
done

mkdir -p "$B/DEBIAN"
echo /etc/gpubroker/broker.yaml >"$B/DEBIAN/conffiles"
cat >"$B/DEBIAN/postinst" <<'EOF'
#!/bin/sh
# gpubroker postinst: the system user (packaging/gpubroker.sysusers.conf)
# and the units known to systemd.  The daemon is not started: configure
# /etc/gpubroker/broker.yaml, then `systemctl enable --now gpubroker`.
set -e
if [ "$1" = configure ]; then
	if ! getent passwd gpubroker >/dev/null; then
		if command -v systemd-sysusers >/dev/null 2>&1; then
			systemd-sysusers gpubroker.conf
		else
			adduser --system --group --home /var/lib/gpubroker \
			    --no-create-home --shell /usr/sbin/nologin \
			    --gecos "gpubroker daemon" gpubroker >/dev/null
		fi
	fi
	# the config names API token hashes: readable by the daemon only
	chown root:gpubroker /etc/gpubroker /etc/gpubroker/broker.yaml
	chmod 0750 /etc/gpubroker
	chmod 0640 /etc/gpubroker/broker.yaml
	if [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
	fi
fi
exit 0
EOF
cat >"$B/DEBIAN/prerm" <<'EOF'
#!/bin/sh
# gpubroker prerm: stop the daemon before its files go (SIGTERM: the
# journal stays consistent; see the unit).
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
	deb-systemd-invoke stop gpubroker.service >/dev/null || true
fi
exit 0
EOF
cat >"$B/DEBIAN/postrm" <<'EOF'
#!/bin/sh
# gpubroker postrm.  Purge removes /etc/gpubroker when nothing else is in
# it (credentials.env and other files you added stay, named here) and
# keeps /var/lib/gpubroker (the state: the cloud instances gpubroker
# launched are recorded there; delete it once they are gone) and the
# gpubroker user, which may still own it.
set -e
if [ "$1" = purge ]; then
	rmdir /etc/gpubroker 2>/dev/null ||
		echo "gpubroker: /etc/gpubroker kept: it holds files the package did not install" >&2
	if [ -d /var/lib/gpubroker ]; then
		echo "gpubroker: /var/lib/gpubroker (the state) is kept; remove it when no instance it records is left" >&2
	fi
fi
if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
exit 0
EOF
chmod 0755 "$B/DEBIAN/postinst" "$B/DEBIAN/prerm" "$B/DEBIAN/postrm"

mkdir -p "$A/DEBIAN"
cat >"$A/DEBIAN/postinst" <<'EOF'
#!/bin/sh
# gpubroker-agent postinst: the unit known to systemd; on an upgrade a
# running agent is restarted onto the new binary (its credential is in
# /var/lib/gpubroker-agent and survives).  The agent is not enabled here:
# the broker's bootstrap writes /etc/gpubroker-agent.conf and enables it.
set -e
if [ "$1" = configure ] && [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
	if [ -n "$2" ]; then
		deb-systemd-invoke try-restart gpubroker-agent.service >/dev/null || true
	fi
fi
exit 0
EOF
cat >"$A/DEBIAN/prerm" <<'EOF'
#!/bin/sh
# gpubroker-agent prerm: stop the agent before its binary goes.
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
	deb-systemd-invoke stop gpubroker-agent.service >/dev/null || true
fi
exit 0
EOF
cat >"$A/DEBIAN/postrm" <<'EOF'
#!/bin/sh
# gpubroker-agent postrm.  /etc/gpubroker-agent.conf (the bootstrap's) and
# /var/lib/gpubroker-agent (the agent's instance credential) are not the
# package's files: purge leaves them, and says so.
set -e
if [ "$1" = purge ]; then
	for f in /etc/gpubroker-agent.conf /var/lib/gpubroker-agent; do
		[ ! -e "$f" ] ||
			echo "gpubroker-agent: $f is kept (the bootstrap's or the agent's, not the package's)" >&2
	done
fi
if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
exit 0
EOF
chmod 0755 "$A/DEBIAN/postinst" "$A/DEBIAN/prerm" "$A/DEBIAN/postrm"

recommends=$(for d in $DRIVERS; do printf 'gpubroker-driver-%s | ' "$d"; done | sed 's/ | $//')
control gpubroker "adduser" \
	"Recommends: $recommends" "Suggests: gpubroker-dev" \
	"Provides: gpubroker-driver-abi-$abi" <<EOF
Description: multi-cloud GPU provisioning broker
 gpubroker places GPU pools on the cheapest cloud or on-prem capacity that
 fits a spec, fails over on shortage, and tears pools down on TTL or
 idleness.  This package has the command-line program, the daemon
 (gpubroker serve) with its systemd units, the web console, the shipped
 placement policies and the API's OpenAPI description.  The clouds are
 drivers, packaged apart (gpubroker-driver-*).
EOF
control gpubroker-agent "" <<EOF
Description: gpubroker instance agent
 gpubroker-agent runs on the GPU instances of a gpubroker pool with
 agent: true.  It exchanges the bootstrap token that the broker put in
 the instance's user data for an instance credential, then reports the
 GPUs that NVML sees (model, memory, utilisation) to the broker: the
 instance's heartbeat and its ready state.  NVML is loaded at run time
 from the NVIDIA driver; this package does not depend on it.  The
 broker's bootstrap writes /etc/gpubroker-agent.conf and enables the unit.
EOF
control gpubroker-dev "" <<EOF
Description: gpubroker driver ABI header and driver SDK
 The public driver ABI (gpubroker/driver.h), the driver SDK's headers
 and static library, and their pkg-config files (gpubroker-driver,
 gpubroker-driver-sdk), to build third-party cloud drivers.
EOF
for d in $DRIVERS; do
	control "gpubroker-driver-$d" "gpubroker-driver-abi-$abi" "Enhances: gpubroker" <<EOF
Description: gpubroker driver for $(case $d in aws) echo "AWS EC2";; azure) echo "Microsoft Azure";;
		gcp) echo "Google Compute Engine";; lambda) echo "Lambda Cloud";; onprem) echo "on-prem GPU nodes";; esac)
 The $d driver of gpubroker (driver ABI $abi): its shared object and its
 default offer catalog.  It loads into the gpubroker of the same driver
 ABI major version only, which this package's dependency on
 gpubroker-driver-abi-$abi ensures.
EOF
done

for p in $PKGS; do
	build_deb "$p"
done
