#!/bin/sh
# agent_files.sh -- what ships with gpubroker-agent: its systemd unit
# passes `systemd-analyze verify` (ExecStart pointed at the built agent;
# its man page is not installed here: --man=no),
# its man page renders without warnings, its --help and bad input say
# what to do, and the binary links no NVIDIA library (NVML is dlopen'ed).
set -eu
: "${GB_BUILD:?}" "${GB_SRC:?}"
AGENT=$GB_BUILD/bin/gpubroker-agent
[ -x "$AGENT" ] || { echo "SKIP: $AGENT is not built"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/gbagent.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$T/unit"
	sed "s#^ExecStart=/usr/bin/gpubroker-agent #ExecStart=$AGENT #" \
		"$GB_SRC/packaging/gpubroker-agent.service" >"$T/unit/gpubroker-agent.service"
	grep -q "^ExecStart=$AGENT -c /etc/gpubroker-agent.conf$" "$T/unit/gpubroker-agent.service" ||
		fail "gpubroker-agent.service: ExecStart is not /usr/bin/gpubroker-agent -c /etc/gpubroker-agent.conf"
	if systemd-analyze verify --man=no "$T/unit/gpubroker-agent.service" >"$T/verify.out" 2>&1 &&
		[ ! -s "$T/verify.out" ]; then
		ok "systemd-analyze verify gpubroker-agent.service: clean"
	else
		cat "$T/verify.out"
		fail "systemd-analyze verify gpubroker-agent.service"
	fi
else
	echo "note: systemd-analyze is not installed: the unit is not verified"
fi
if command -v groff >/dev/null 2>&1; then
	groff -man -Tutf8 -ww -z "$GB_SRC/agent/gpubroker-agent.8" 2>"$T/groff.err" || fail "groff failed"
	[ ! -s "$T/groff.err" ] || { cat "$T/groff.err"; fail "the man page has warnings"; }
	ok "gpubroker-agent.8 renders without warnings"
fi
"$AGENT" --help | grep -q 'gpubroker-agent(8)' || fail "--help does not point at the man page"
rc=0
"$AGENT" -c "$T/none.conf" 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "none.conf: cannot read the config" "$T/err" || fail "a missing config: rc $rc, $(cat "$T/err")"
printf 'broker_url = http://127.0.0.1:1\ninstance = p-0\ncolour = blue\n' >"$T/bad.conf"
rc=0
"$AGENT" -c "$T/bad.conf" 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "bad.conf:3: unknown key colour" "$T/err" || fail "an unknown key: rc $rc, $(cat "$T/err")"
ok "bad configs are refused with file:line"
if ldd "$AGENT" | grep -qi nvidia; then
	fail "the agent links an NVIDIA library: $(ldd "$AGENT" | grep -i nvidia)"
fi
ok "no NVIDIA library linked (NVML is loaded with dlopen)"
echo "PASS agent_files"
