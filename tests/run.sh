#!/bin/sh
# tests/run.sh MODE -- run gpubroker's tests.  MODE: unit | drivers |
# integration | reliability | all.  Each test's output goes to
# $BUILD/test-logs/<name>.log and is printed when the test fails.
# Environment given to every test:
#   GB_BUILD     the build directory (binaries in $GB_BUILD/bin)
#   GB_SRC       the source tree
#   GB_SHARED    ../shared when present (reference data), else unset
set -u
mode=${1:-all}
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
export GB_SRC="$here"
export GB_BUILD="$here/$BUILD"
case "$BUILD" in /*) export GB_BUILD="$BUILD" ;; esac
if [ -d "$here/../shared" ]; then
	GB_SHARED=$(cd "$here/../shared" && pwd)
	export GB_SHARED
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=86:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:exitcode=87}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$here/tests/lsan.supp:print_suppressions=0}"
if [ "${SANITIZE:-}" = 1 ]; then
	export GB_NO_DLCLOSE=1
	export GB_SANITIZE=1
fi
# Tests never talk to real clouds: make accidental use of real endpoints
# fail fast.
unset AWS_PROFILE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
unset AZURE_CLIENT_SECRET GOOGLE_APPLICATION_CREDENTIALS
export HOME="${GB_TEST_HOME:-$GB_BUILD/test-home}"
mkdir -p "$HOME"
export XDG_STATE_HOME="$HOME/state"

logs="$GB_BUILD/test-logs"
mkdir -p "$logs"
pass=0
fail=0
skip=0
failed=""
TIMEOUT=${GB_TEST_TIMEOUT:-600}

run_one() { # name command...
	name=$1
	shift
	mkdir -p "$(dirname "$logs/$name.log")"
	start=$(date +%s)
	if timeout -k 10 "$TIMEOUT" "$@" >"$logs/$name.log" 2>&1; then
		pass=$((pass + 1))
		printf 'PASS  %-40s %3ss\n' "$name" "$(( $(date +%s) - start ))"
	else
		rc=$?
		if [ "$rc" = 77 ]; then
			skip=$((skip + 1))
			printf 'SKIP  %-40s %s\n' "$name" "$(tail -n 1 "$logs/$name.log")"
			return
		fi
		fail=$((fail + 1))
		failed="$failed $name"
		printf 'FAIL  %-40s %3ss (exit %s)\n' "$name" "$(( $(date +%s) - start ))" "$rc"
		echo "----- last 60 lines of $logs/$name.log -----"
		tail -n 60 "$logs/$name.log"
		echo "-----"
	fi
}

# The store's unit tests run on SQLite and, against a private PostgreSQL
# server started here (tests/lib/pg.sh), on PostgreSQL too.  Where the
# server is installed (make deps installs it) it must start: a failure to
# start fails the store's tests instead of skipping their PostgreSQL half.
run_unit() {
	. "$here/tests/lib/pg.sh"
	pgdir=$(mktemp -d "${TMPDIR:-/tmp}/gbunitpg.XXXXXX")
	if gb_pg_bin >/dev/null; then
		export GB_TEST_PG_REQUIRED=1
		if gb_pg_start "$pgdir/pg" >"$logs/unit-postgresql.log" 2>&1; then
			export GB_TEST_PG_URL="$GB_PG_URL" PGPASSWORD="$GB_PG_PASSWORD"
		else
			echo "unit: PostgreSQL did not start (see $logs/unit-postgresql.log)"
		fi
	else
		echo "unit: PostgreSQL's server is not installed: the store's tests run on SQLite only (make deps installs it)"
	fi
	for t in "$GB_BUILD"/tests/test_*; do
		[ -x "$t" ] || continue
		run_one "unit/$(basename "$t")" "$t"
	done
	gb_pg_stop
	rm -rf "$pgdir"
	unset GB_TEST_PG_URL GB_TEST_PG_REQUIRED PGPASSWORD
}
run_drivers() {
	for t in "$GB_BUILD"/tests/dtest_*; do
		[ -x "$t" ] || continue
		run_one "drivers/$(basename "$t")" "$t"
	done
}
run_scripts() { # dir
	for t in "$here"/tests/"$1"/*.sh; do
		[ -f "$t" ] || continue
		run_one "$1/$(basename "$t" .sh)" sh "$t"
	done
}

case "$mode" in
unit) run_unit ;;
drivers) run_drivers ;;
integration) run_scripts integration ;;
reliability) run_scripts reliability ;;
all) run_unit; run_drivers; run_scripts integration ;;
*) echo "tests/run.sh: unknown mode $mode" >&2; exit 2 ;;
esac

echo
echo "tests: $pass passed, $fail failed, $skip skipped"
if [ "$fail" -gt 0 ]; then
	echo "failed:$failed"
	exit 1
fi
exit 0
