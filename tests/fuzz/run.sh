#!/bin/sh
# tests/fuzz/run.sh -- run every libFuzzer target built by `make fuzz`.
#
# Env: BUILD (default build/fuzz), FUZZ_SECONDS per target (default 60),
#      FUZZ_JOBS parallel workers per target (default 1).
# Each $BUILD/fuzz/fuzz_NAME runs over
#   $BUILD/fuzz/corpus/fuzz_NAME   (new inputs are written here)
#   tests/fuzz/corpus/fuzz_NAME    (checked-in seeds; examples/*.yaml are
#                                   copied in for the spec and config targets)
# Crashes, leaks and timeouts are saved as $BUILD/fuzz/artifacts/NAME-*;
# the script exits 1 when any target found one.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here" || exit 1
BUILD=${BUILD:-build/fuzz}
SECS=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-1}
dict=tests/fuzz/yaml.dict
status=0
found=0
for bin in "$BUILD"/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	found=1
	name=$(basename "$bin")
	seeds=tests/fuzz/corpus/$name
	work=$BUILD/fuzz/corpus/$name
	arts=$BUILD/fuzz/artifacts
	mkdir -p "$seeds" "$work" "$arts"
	case "$name" in
	fuzz_spec | fuzz_config)
		for f in examples/*.yaml; do
			[ -f "$f" ] || continue
			cmp -s "$f" "$seeds/$(basename "$f")" ||
				cp "$f" "$seeds/$(basename "$f")"
		done
		;;
	esac
	opts="-max_total_time=$SECS -timeout=10 -rss_limit_mb=2048 -max_len=16384"
	opts="$opts -print_final_stats=1 -artifact_prefix=$arts/$name-"
	[ -f "$dict" ] && opts="$opts -dict=$dict"
	[ "$JOBS" -gt 1 ] && opts="$opts -jobs=$JOBS -workers=$JOBS"
	echo "== $name: ${SECS}s over $work $seeds"
	# shellcheck disable=SC2086
	if ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
		"$bin" $opts "$work" "$seeds"; then
		echo "== $name: no crash, leak or timeout"
	else
		echo "== $name: FAILED -- reproduce with: $bin $arts/$name-<file>"
		status=1
	fi
done
if [ "$found" = 0 ]; then
	echo "tests/fuzz/run.sh: no fuzz targets in $BUILD/fuzz (run make fuzz)"
	exit 1
fi
exit $status
