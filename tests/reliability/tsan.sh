#!/bin/sh
# tsan.sh -- ThreadSanitizer over the daemon under concurrent load: runs
# tests/integration/daemon_concurrency.sh (20 pools applied at once from
# parallel CLIs, a burst with SIGTERM mid-way, restart, parallel scale and
# destroy) with DC_LOAD=1 (event long-polls, /metrics, /v1/pools and cost
# scrapes, SIGHUP reloads every 1.5 s) against a TSan build, then asserts
# that no process wrote a ThreadSanitizer report.
#
# The TSan build: GB_BUILD itself when it is one (make TSAN=1
# test-reliability), else GB_TSAN_BUILD, else build/tsan or build/rel-tsan
# under the source tree (make TSAN=1 BUILD=build/tsan all).  A build
# that make would rebuild (make -q) fails the test.
# Suppressions: tests/tsan.supp (only genuine third-party false
# positives, each commented).
set -u
: "${GB_BUILD:?}" "${GB_SRC:?}"
is_tsan() { nm -D "$1/bin/gpubroker" 2>/dev/null | grep -q __tsan_init; }
TB=""
for b in "$GB_BUILD" "${GB_TSAN_BUILD:-}" "$GB_SRC/build/tsan" "$GB_SRC/build/rel-tsan"; do
	if [ -n "$b" ] && [ -x "$b/bin/gpubroker" ] && [ -x "$b/bin/cloudsim" ] && is_tsan "$b"; then
		TB=$b
		break
	fi
done
if [ -z "$TB" ]; then
	echo "SKIP: no ThreadSanitizer build (make TSAN=1 BUILD=build/tsan all, or set GB_TSAN_BUILD)"
	exit 77
fi
# a TSan build older than the sources would test other code and pass
# for it: refuse it (this once happened: a build/rel-tsan of the
# morning was found first all evening).  make -q asks make itself, so a
# source whose outputs were rebuilt (a driver's .so, not bin/gpubroker)
# is not taken for stale, and one whose outputs were not is.
if ! make -s -q -C "$GB_SRC" TSAN=1 BUILD="$TB" all >/dev/null 2>&1; then
	echo "FAIL: the ThreadSanitizer build $TB is older than the sources"
	echo "(make -q says it needs rebuilding): rebuild it with"
	echo "  make TSAN=1 BUILD=${TB#"$GB_SRC"/} all"
	exit 1
fi
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/gbtsan.XXXXXX")
SUPP=$GB_SRC/tests/tsan.supp
opts="halt_on_error=1 exitcode=66 second_deadlock_stack=1 log_path=$LOGS/tsan"
[ -f "$SUPP" ] && opts="$opts suppressions=$SUPP"
echo "TSan build $TB; reports to $LOGS"
rc=0
TSAN_OPTIONS=$opts GB_BUILD=$TB DC_LOAD=1 DC_SLOW=3 sh "$GB_SRC/tests/integration/daemon_concurrency.sh" || rc=$?
reports=$(ls "$LOGS" 2>/dev/null | wc -l)
if [ "$reports" -gt 0 ]; then
	for f in "$LOGS"/*; do
		echo "---- $f"
		head -n 60 "$f"
	done
	echo "FAIL: ThreadSanitizer wrote $reports report(s)"
	exit 1
fi
if [ "$rc" != 0 ]; then
	echo "FAIL: daemon_concurrency.sh under TSan exited $rc (66 = a TSan report)"
	exit 1
fi
rm -rf "$LOGS"
echo "ok: no data race, lock-order inversion or signal-unsafe call reported by TSan in the daemon, cloudsim or the CLIs"
echo PASS
