#!/bin/sh
# tests/integration/app_store_once.sh -- a process opens its state store
# once: the app layer's session hands its open store to the runtime (for
# the refreshed prices) instead of the runtime opening a second connection,
# and `plan` opens it once for prices and cooldowns alike.  Counted from
# the outside with strace: SQLite's own open of the database file (the
# O_NOFOLLOW openat; gb_store_open's pre-create of the file with mode 0600
# is not SQLite's and is not counted).
set -u
: "${GB_BUILD:?GB_BUILD must name the build directory}"
: "${GB_SRC:?GB_SRC must name the source tree}"
GB="$GB_BUILD/bin/gpubroker"
[ -x "$GB" ] || { echo "missing $GB (build it first)"; exit 1; }
command -v strace >/dev/null 2>&1 || { echo "skipped: strace is not installed (make deps installs it)"; exit 77; }
strace -f -o /dev/null true 2>/dev/null || { echo "skipped: strace cannot trace here (ptrace not permitted in this container)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
state="$tmp/state.db"
printf 'state: %s\n' "$state" > "$tmp/broker.yaml"

# opens WHAT ARGS...: runs gpubroker ARGS under strace; sets n to the
# number of times SQLite opened the state's database file.
opens() {
	what=$1
	shift
	# LeakSanitizer cannot run under a tracer (it stops the world with
	# ptrace): leaks are checked by every other test of an ASan build
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	timeout 120 strace -f -e trace=open,openat -o "$tmp/trace" \
		"$GB" "$@" --config "$tmp/broker.yaml" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	n=$(grep -c "\"$state\", O_RDWR|O_NOFOLLOW" "$tmp/trace")
	if [ "$rc" != 0 ]; then
		fail "$what: exit $rc: $(cat "$tmp/err")"
	elif [ "$n" != 1 ]; then
		fail "$what opened the state $n times (want 1)"
		grep "\"$state\"" "$tmp/trace"
	else
		echo "ok: $what opens the state once"
	fi
}

# the first run creates the state; the rest find it there (the old
# runtime opened a second connection only to an existing state)
opens "events" events
[ -f "$state" ] || fail "events did not create the state at $state"
opens "status" status
opens "plan" plan -f "$GB_SRC/examples/inference.yaml"
opens "cost" cost
opens "serve --reconcile-once" serve --reconcile-once --listen 127.0.0.1:0

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "app_store_once: all checks passed"
