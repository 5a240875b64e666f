#!/bin/sh
# reliability_short.sh -- the short version of `make test-reliability`
# inside `make test`: the same scripts with smaller parameters.
#   - chaos: 5 rounds of apply/scale/destroy through the daemon with a
#     SIGKILL of the daemon aimed at a cloud call in flight (the moment
#     the journal shows an open intent: CHAOS_AIM=1, so every kill
#     interrupts one by construction; the long run kills at random
#     instants), restart, converge; CHAOS_SEED=N (printed) repeats the
#     operations chosen; 0
#     leaked, 0 duplicated, store == cloudsim, each instance's billing end
#     within 0.1 s of the bill (0.4 s early where a kill cut a terminate);
#   - spot storm: 4 spot instances per cloud, half reclaimed at once,
#     replaced within one reconcile period (+ the create time);
#   - the hostile corpus (tests/hostile), without the big generated
#     specs' apply pass and with the special-character labels on aws only.
#   - terminate_retry: failed scale-down terminations are sent again.
# The long versions: tests/reliability/{chaos,spot_storm,hostile,
# fault_storm,valgrind,tsan}.sh (tests/reliability/README.md).
: "${GB_BUILD:?run through tests/run.sh}" "${GB_SRC:?}"
R=$GB_SRC/tests/reliability
rc=0 ran=0
part() { # NAME ENV... -- runs $R/NAME.sh with ENV
	_n=$1
	shift
	_t0=$(date +%s)
	echo "==== $_n ($*)"
	env "$@" sh "$R/$_n.sh"
	_rc=$?
	echo "==== $_n: exit $_rc after $(( $(date +%s) - _t0 ))s"
	case $_rc in
	0) ran=$((ran + 1)) ;;
	77) ;;
	*) rc=1 ;;
	esac
}
part chaos CHAOS_ROUNDS=${SHORT_CHAOS_ROUNDS:-5} CHAOS_AIM=1
part spot_storm SPOT_N=4 SPOT_STORMS=1
part hostile HOSTILE_QUICK=1
part terminate_retry
if [ "$rc" != 0 ]; then
	echo "FAIL: a part failed (above)"
	exit 1
fi
if [ "$ran" = 0 ]; then
	echo "SKIP: every part skipped"
	exit 77
fi
echo PASS
