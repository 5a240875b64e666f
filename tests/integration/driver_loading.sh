#!/bin/sh
# tests/integration/driver_loading.sh -- a bad driver .so does not take
# gpubroker down without a word.  For each fake broken driver
# (tests/drivers/fake/) and a truncated copy of the real aws.so, in a
# config next to a good driver, `gpubroker serve` and `gpubroker drivers`
# (no daemon):
#   - a crash in the entry or init (SIGSEGV, a stack overflow) ends the
#     process by that signal, stderr's last line naming driver and file;
#   - a constructor or init calling exit(0) ends it with status 1, named;
#   - the truncated ELF is refused with a message (no SIGBUS), serve
#     starts and `gpubroker drivers` shows the refusal;
#   - an init that never returns is refused after init_timeout_ms and
#     serve starts; with the default deadline SIGTERM stops it at once,
#     non-zero, naming the driver; so it does a constructor that never
#     returns (dlopen hangs: no deadline there).
set -u
: "${GB_BUILD:?GB_BUILD must name the build directory}"
: "${GB_SRC:?GB_SRC must name the source tree}"
GB="$GB_BUILD/bin/gpubroker"
FAKE="$GB_BUILD/tests/fakedrv"
AWS_SO="$GB_BUILD/lib/gpubroker/drivers/aws.so"
for f in "$GB" "$AWS_SO" "$FAKE/fake_good.so" "$FAKE/fake_init_hang.so" \
	"$FAKE/fake_entry_segv.so" "$FAKE/fake_ctor_exit.so"; do
	if [ ! -f "$f" ]; then
		echo "SKIP: $f is not built (make test builds the fake drivers)"
		exit 77
	fi
done
command -v jq >/dev/null || { echo "SKIP: jq is not installed (make deps)"; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/gbdrvload.XXXXXX")
PIDS=""
cleanup() {
	rc=$?
	for p in $PIDS; do
		kill -KILL "$p" 2>/dev/null || true
	done
	if [ "$rc" != 0 ]; then
		echo "---- failed (exit $rc); files in $T:"
		for l in "$T"/*.err; do
			[ -f "$l" ] || continue
			echo "---- $l (last 15 lines)"
			tail -n 15 "$l"
		done
	else
		rm -rf "$T"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export GPUBROKER_STATE="$T/state.db"
export GB_NO_TTY=1
unset GPUBROKER_SERVER GPUBROKER_TOKEN

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
ok() {
	echo "ok: $*"
}
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# conf NAME DRIVER PATH [OPTIONS]: $T/NAME.yaml with the good fake driver
# first, then DRIVER from PATH (with the flow map OPTIONS).
conf() {
	{
		echo "state: $T/state.db"
		echo "listen: 127.0.0.1:0"
		echo "drivers:"
		echo "  - name: fake"
		echo "    path: $FAKE/fake_good.so"
		echo "  - name: $2"
		echo "    path: $3"
		[ -n "${4:-}" ] && echo "    options: $4"
	} >"$T/$1.yaml"
}

# start NAME ARGS...: gpubroker -c $T/NAME.yaml ARGS in the background,
# stdout in $T/NAME.out, stderr in $T/NAME.err; PID is its pid.
start() {
	_n=$1
	shift
	# removed first: the redirections below happen in the child, and a
	# poll of an earlier run's file must not see that run's lines
	rm -f "$T/$_n.out" "$T/$_n.err"
	"$GB" -c "$T/$_n.yaml" "$@" >"$T/$_n.out" 2>"$T/$_n.err" &
	PID=$!
	PIDS="$PIDS $PID"
}

# finish SECONDS: waits (polling) until $PID ends, at most SECONDS; RC =
# its exit status (128 + N for signal N).
finish() {
	_i=0
	while kill -0 "$PID" 2>/dev/null; do
		_i=$((_i + 1))
		[ "$_i" -le $(($1 * 20)) ] || fail "pid $PID still running after $1 s"
		sleep 0.05
	done
	wait "$PID"
	RC=$?
}

# wait_for SECONDS FILE PATTERN: polls until FILE has a line matching
# PATTERN (grep -E), while $PID lives.
wait_for() {
	_i=0
	until grep -qE "$3" "$2" 2>/dev/null; do
		kill -0 "$PID" 2>/dev/null || fail "pid $PID ended before '$3' in $2"
		_i=$((_i + 1))
		[ "$_i" -le $(($1 * 20)) ] || fail "no '$3' in $2 after $1 s"
		sleep 0.05
	done
}

# last_line_has NAME TEXT: stderr's last line contains TEXT.
last_line_has() {
	_l=$(tail -n 1 "$T/$1.err")
	case "$_l" in
	*"$2"*) ;;
	*) fail "$1: stderr's last line is not '$2': $_l" ;;
	esac
}

# ---- crashes and exit() while loading: serve and the CLI ----
# name, file, expected status, what stderr's last line says
crash_case() {
	_d=$1 _so=$2 _want=$3 _msg=$4
	conf "$_d" "$_d" "$_so"
	start "$_d" serve --listen 127.0.0.1:0
	finish 30
	[ "$RC" = "$_want" ] || fail "serve with $_d: status $RC, expected $_want"
	last_line_has "$_d" "gpubroker: driver $_d ($_so) $_msg"
	grep -q "info  drivers: loading driver $_d from $_so" "$T/$_d.err" ||
		fail "serve with $_d: no 'loading driver $_d from $_so' line"
	[ ! -s "$T/$_d.out" ] || fail "serve with $_d printed a listen line"
	ok "serve with $_d: status $RC, named on stderr"
	start "$_d" drivers
	finish 30
	[ "$RC" = "$_want" ] || fail "drivers with $_d: status $RC, expected $_want"
	last_line_has "$_d" "gpubroker: driver $_d ($_so) $_msg"
	ok "drivers with $_d: status $RC, named on stderr"
}
SEGV=$((128 + 11))
crash_case entry_segv "$FAKE/fake_entry_segv.so" "$SEGV" \
	"crashed with SIGSEGV while loading; remove it from the config"
crash_case init_segv "$FAKE/fake_init_segv.so" "$SEGV" \
	"crashed with SIGSEGV while initialising; remove it from the config"
crash_case init_overflow "$FAKE/fake_init_overflow.so" "$SEGV" \
	"crashed with SIGSEGV while initialising"
crash_case ctor_exit "$FAKE/fake_ctor_exit.so" 1 \
	"called exit() while loading; refusing to report success"
crash_case init_exit "$FAKE/fake_init_exit.so" 1 \
	"called exit() while initialising; refusing to report success"

# ---- a truncated copy of a real driver: refused, the rest works ----
head -c 20000 "$AWS_SO" >"$T/trunc.so"
conf trunc aws "$T/trunc.so"
start trunc drivers -o json
finish 30
# a driver not ready is no green: exit 1, named on stderr
[ "$RC" = 1 ] || fail "drivers with a truncated aws.so: status $RC, expected 1"
grep -q "1 of 2 drivers not ready (aws)" "$T/trunc.err" ||
	fail "drivers does not name the driver that is not ready: $(cat "$T/trunc.err")"
jq -e --arg p "$T/trunc.so" '.[] | select(.name == "aws") |
	(.ready == false) and (.path == $p) and
	(.status | startswith($p + ": cannot load: truncated: the loadable segment"))' \
	"$T/trunc.out" >/dev/null || fail "drivers: no truncation refusal: $(cat "$T/trunc.out")"
jq -e '.[] | select(.name == "fake") | .ready' "$T/trunc.out" >/dev/null ||
	fail "drivers: the good driver is not ready next to the truncated one"
ok "drivers refuses the truncated aws.so and loads the good one"

start trunc serve --listen 127.0.0.1:0
wait_for 30 "$T/trunc.out" listen
grep -q "$T/trunc.so: cannot load: truncated" "$T/trunc.err" ||
	fail "serve did not log the truncation refusal"
URL=$(head -n 1 "$T/trunc.out" | jq -r .listen)
GPUBROKER_SERVER=$URL "$GB" drivers -o json >"$T/trunc_remote.json" &&
	fail "drivers --server exited 0 with a driver not ready"
jq -e '.[] | select(.name == "aws") | (.ready == false) and
	(.status | contains("cannot load: truncated"))' "$T/trunc_remote.json" \
	>/dev/null || fail "the daemon's drivers lack the refusal: $(cat "$T/trunc_remote.json")"
kill -TERM "$PID"
finish 30
[ "$RC" = 0 ] || fail "serve (truncated driver) stopped with status $RC"
ok "serve starts next to the truncated driver and lists its refusal"

# ---- an init that never returns, with a deadline of 1 s ----
conf hang1 init_hang "$FAKE/fake_init_hang.so" '{init_timeout_ms: "1000"}'
t0=$(now_ms)
start hang1 serve --listen 127.0.0.1:0
wait_for 30 "$T/hang1.out" listen
took=$(($(now_ms) - t0))
[ "$took" -ge 1000 ] || fail "serve listened after $took ms: it did not wait for init"
grep -q "driver 'init_hang': init did not return within 1000 ms" "$T/hang1.err" ||
	fail "serve did not log the deadline"
URL=$(head -n 1 "$T/hang1.out" | jq -r .listen)
GPUBROKER_SERVER=$URL "$GB" drivers -o json >"$T/hang1.json" &&
	fail "drivers --server exited 0 with a driver not ready"
jq -e '.[] | select(.name == "init_hang") | (.ready == false) and
	(.status | contains("init did not return within 1000 ms"))' \
	"$T/hang1.json" >/dev/null || fail "no deadline refusal: $(cat "$T/hang1.json")"
jq -e '.[] | select(.name == "fake") | .ready' "$T/hang1.json" >/dev/null ||
	fail "the good driver is not ready"
# the abandoned init thread does not hold up a clean stop
kill -TERM "$PID"
finish 30
[ "$RC" = 0 ] || fail "serve (abandoned init) stopped with status $RC"
ok "a hanging init is refused after $took ms (deadline 1000) and serve runs"

# ---- SIGTERM while a driver hangs: in init (the default deadline, 30 s)
# or in a constructor (inside dlopen, no deadline) ----
# hang_case NAME DRIVER PHASE-WORD LOG-LINE
hang_case() {
	_n=$1 _d=$2 _w=$3 _line=$4
	conf "$_n" "$_d" "$FAKE/fake_$_d.so"
	for cmd in serve drivers; do
		if [ "$cmd" = serve ]; then
			start "$_n" serve --listen 127.0.0.1:0
		else
			start "$_n" -v drivers # -v: the CLI logs the steps
		fi
		wait_for 30 "$T/$_n.err" "$_line"
		t0=$(now_ms)
		kill -TERM "$PID"
		finish 10
		took=$(($(now_ms) - t0))
		[ "$RC" != 0 ] || fail "$cmd stopped by SIGTERM while loading: status 0"
		[ "$RC" = $((128 + 15)) ] ||
			fail "$cmd ($_d): status $RC, expected death by SIGTERM"
		[ "$took" -lt 3000 ] || fail "$cmd ($_d) took $took ms to stop"
		last_line_has "$_n" "gpubroker: stopped by SIGTERM while driver $_d ($FAKE/fake_$_d.so) was $_w"
		[ ! -s "$T/$_n.out" ] ||
			fail "$cmd ($_d) printed something: $(cat "$T/$_n.out")"
		ok "$cmd: SIGTERM while $_d hangs stops it in $took ms, status $RC, named"
	done
}
hang_case hang init_hang initialising "initialising driver init_hang"
hang_case ctor_hang ctor_hang loading "loading driver ctor_hang from"

# --- drivers load only from places no one else can write; with no
# drivers: list, a stray NAME.so in the driver folder that exports no
# gb_driver_entry is refused from its symbol table: its constructor
# never runs ---
[ -f "$FAKE/fake_stray_ctor.so" ] || fail "$FAKE/fake_stray_ctor.so is not built"
D=$T/ddir
mkdir -m 0700 "$D"
cp "$FAKE/fake_stray_ctor.so" "$D/stray.so"
cp "$FAKE/fake_good.so" "$D/fake.so"
chmod 0755 "$D/stray.so" "$D/fake.so"
printf 'state: %s\nlisten: 127.0.0.1:0\n' "$T/state.db" >"$T/nolist.yaml"
GB_FAKE_CTOR_MARKER=$T/ctor-ran GPUBROKER_DRIVER_DIR=$D "$GB" -c "$T/nolist.yaml" drivers -o json >"$T/nolist.out" 2>"$T/nolist.err"
[ ! -e "$T/ctor-ran" ] || fail "a stray .so's constructor ran"
jq -e '.[] | select(.name == "stray") | .status | test("not a gpubroker driver: it does not export gb_driver_entry")' \
	"$T/nolist.out" >/dev/null || fail "the stray .so is not shown refused: $(cat "$T/nolist.out" "$T/nolist.err")"
jq -e '.[] | select(.name == "fake") | .status == "ready"' "$T/nolist.out" >/dev/null ||
	fail "the good driver next to it did not load: $(cat "$T/nolist.out")"
ok "no drivers: list: a stray .so is refused before its constructor runs; the good one loads"
chmod 0775 "$D"
GPUBROKER_DRIVER_DIR=$D "$GB" -c "$T/nolist.yaml" drivers -o json >"$T/nolist.out" 2>"$T/nolist.err"
jq -e --arg d "$D" '.[] | select(.name == "fake") | .status | contains("the folder " + $d + " is writable by its group (mode 0775)") and contains("chmod go-w " + $d)' \
	"$T/nolist.out" >/dev/null || fail "a group-writable driver folder is not refused: $(cat "$T/nolist.out" "$T/nolist.err")"
ok "a driver in a group-writable folder is refused, with the fix"

echo "PASS: driver_loading"
