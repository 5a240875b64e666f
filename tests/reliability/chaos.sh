#!/bin/sh
# chaos.sh -- the daemon is SIGKILLed at a random moment while pools on
# every cloud are applied, scaled and destroyed through it; restarted;
# converged.  After every round the state DB is checked against
# cloudsim's truth (tests/reliability/truth.py check): 0 leaked (every
# live instance carrying our broker id is a live row of an active pool),
# 0 duplicated (per pool: cloudsim == desired == store, by id), no open
# intent.  At the end everything is destroyed, nothing is live in
# cloudsim, gc finds no orphan, every instance is billed once at its
# price, and each one's billing ends within 0.1 s of cloudsim's bill --
# or up to 0.4 s early in a pool with a terminate a kill may have cut
# (found done at the restart, it ends at its journal time: README, Cost);
# `gpubroker cost` is the sum of its rows and differs from the bill by no
# more than those allowances add up to.
#
# Env: CHAOS_ROUNDS (50), CHAOS_SEED (random; printed; reproduces the
# operations chosen), CHAOS_KILL_MAX_MS
# (1800: the kill lands 0..this after the round's operations start),
# CHAOS_AIM (0; 1: each kill is aimed at a cloud call in flight -- the
# moment the journal shows an open intent -- instead of a random instant:
# the short run in `make test`, whose few kills must each interrupt a
# call; the long run keeps random instants, where the share that hits an
# open intent is a statistic),
# CHAOS_LATENCY_MS (120, + 0..80 jitter per cloud call), CHAOS_MAX_POOLS
# (4 active at once), CHAOS_CONVERGE_S (90: per round).
. "$GB_SRC/tests/lib/integration.sh"

ROUNDS=${CHAOS_ROUNDS:-50}
SEED=${CHAOS_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
KILL_MAX=${CHAOS_KILL_MAX_MS:-1800}
AIM=${CHAOS_AIM:-0}
LAT=${CHAOS_LATENCY_MS:-120}
MAXP=${CHAOS_MAX_POOLS:-4}
CONV=${CHAOS_CONVERGE_S:-90}
TRUTH="/usr/bin/python3 $GB_SRC/tests/reliability/truth.py"
[ -x /usr/bin/python3 ] || { echo "SKIP: /usr/bin/python3 is missing"; exit 77; }
if [ "$AIM" = 1 ]; then
	echo "chaos: $ROUNDS rounds, seed $SEED (CHAOS_SEED=$SEED reproduces the operations), kills aimed at an open intent, latency ${LAT}+0..80 ms"
else
	echo "chaos: $ROUNDS rounds, seed $SEED (CHAOS_SEED=$SEED reproduces the operations), kills at 0..${KILL_MAX} ms, latency ${LAT}+0..80 ms"
fi

export GPUBROKER_RECONCILE_PERIOD=2s
sim_start
sim_post /_sim/scenario "{\"latency\": {
  \"aws\": {\"*\": {\"base_ms\": $LAT, \"jitter_ms\": 80}},
  \"gcp\": {\"*\": {\"base_ms\": $LAT, \"jitter_ms\": 80}},
  \"azure\": {\"*\": {\"base_ms\": $LAT, \"jitter_ms\": 80}}}}"
export GPUBROKER_TOKEN=demo-ci-token

# a reproducible generator for the choices (the kill instants are not:
# they race real processes on purpose)
RNG=$SEED
rnd() { # N -> R in 0..N-1 (sets R: no subshell, so the state advances)
	RNG=$(( (RNG * 1103515245 + 12345) % 2147483648 ))
	R=$(( (RNG / 65536) % $1 ))
}

# start_daemon: the daemon, again on the first one's address (so the
# CLIs in flight through a killed one ride out the restart)
PORT=
start_daemon() {
	rm -f "$T/daemon.out"
	daemon_start ${PORT:+--listen "127.0.0.1:$PORT"}
	PORT=${GPUBROKER_SERVER##*:}
	# D_PID must be the daemon itself, not a shell around it
	[ "$(readlink "/proc/$D_PID/exe")" = "$(readlink -f "$GB")" ] ||
		fail "D_PID $D_PID is $(readlink "/proc/$D_PID/exe"), not gpubroker"
}

kill_daemon() { # [killed: truth.py killopen sent the SIGKILL]
	if [ "${1:-}" != killed ]; then
		kill -KILL "$D_PID" 2>/dev/null || fail "the daemon (pid $D_PID) was already gone before the kill"
	fi
	wait "$D_PID" 2>/dev/null || true
	kill -0 "$D_PID" 2>/dev/null && fail "pid $D_PID survived SIGKILL"
	D_PID=""
}

# the model: pools.txt lines "NAME CLOUD GPU DESIRED" (0 = destroyed)
: >"$T/pools.txt"
spec_of() { # NAME CLOUD GPU COUNT
	write_spec "$T/spec-$1.yaml" "$1" "$2" "$3" "$4"
}
set_model() { # NAME CLOUD GPU N
	grep -v "^$1 " "$T/pools.txt" >"$T/pools.tmp" || true
	echo "$1 $2 $3 $4" >>"$T/pools.tmp"
	mv "$T/pools.tmp" "$T/pools.txt"
}
expect_json() {
	awk 'BEGIN { printf "{" } { printf "%s\"%s\": %d", (NR > 1 ? ", " : ""), $1, $4 }
	     END { print "}" }' "$T/pools.txt" >"$T/expect.json"
}
active_pools() { awk '$4 > 0 { print $1 }' "$T/pools.txt"; }
nactive() { active_pools | wc -l | tr -d ' '; }
pick_active() { # a random active pool -> P
	rnd "$(nactive)"
	P=$(active_pools | sed -n "$((R + 1))p")
}

clouds="aws gcp azure"
gpus="A10G L4 T4"
converged() { $TRUTH check "$GPUBROKER_STATE" "$CONTROL" "$GPUBROKER_BROKER_ID" "$T/expect.json" >"$T/why.txt" 2>&1; }

start_daemon
kills=0 inflight_kills=0 unsettled_kills=0 recovery_kills=0 newp=0
max_conv=0 sum_conv=0
for r in $(seq 1 "$ROUNDS"); do
	: >"$T/ops.txt"
	pids=""
	# 1-3 operations per round, all in flight when the kill comes
	rnd 3
	nops=$((R + 1))
	for _o in $(seq 1 "$nops"); do
		na=$(nactive)
		rnd 4
		op=$R
		if [ "$na" -eq 0 ] || { [ "$op" -le 1 ] && [ "$na" -lt "$MAXP" ]; }; then
			newp=$((newp + 1))
			rnd 3
			k=$R
			c=$(echo $clouds | cut -d' ' -f$((k + 1)))
			g=$(echo $gpus | cut -d' ' -f$((k + 1)))
			rnd 3
			n=$((R + 1))
			name=chaos-$newp
			spec_of "$name" "$c" "$g" "$n"
			set_model "$name" "$c" "$g" "$n"
			echo "apply $name $c x$n" >>"$T/ops.txt"
			rnd 2
			if [ "$R" = 0 ]; then
				"$GB" -c "$CONF" ${GPUBROKER_SERVER:+--server "$GPUBROKER_SERVER"} apply -f "$T/spec-$name.yaml" --auto-approve >/dev/null 2>>"$T/cli.log" &
				pids="$pids $!"
			else
				"$GB" -c "$CONF" ${GPUBROKER_SERVER:+--server "$GPUBROKER_SERVER"} apply -f "$T/spec-$name.yaml" --auto-approve --wait --timeout 30s >/dev/null 2>>"$T/cli.log" &
				pids="$pids $!"
			fi
		elif [ "$op" = 2 ] || [ "$na" -le 1 ]; then
			pick_active
			p=$P
			set -- $(grep "^$p " "$T/pools.txt")
			rnd 4
			n=$((R + 1))
			[ "$n" = "$4" ] && n=$(( n % 4 + 1 ))
			set_model "$p" "$2" "$3" "$n"
			spec_of "$p" "$2" "$3" "$n"
			echo "scale $p $4->$n" >>"$T/ops.txt"
			echo "$p" >>"$T/cut.txt" # a terminate a kill may cut
			"$GB" -c "$CONF" ${GPUBROKER_SERVER:+--server "$GPUBROKER_SERVER"} scale "$p" "$n" >/dev/null 2>>"$T/cli.log" &
			pids="$pids $!"
		else
			pick_active
			p=$P
			set -- $(grep "^$p " "$T/pools.txt")
			set_model "$p" "$2" "$3" 0
			echo "destroy $p" >>"$T/ops.txt"
			echo "$p" >>"$T/cut.txt"
			"$GB" -c "$CONF" ${GPUBROKER_SERVER:+--server "$GPUBROKER_SERVER"} destroy "$p" --auto-approve >/dev/null 2>>"$T/cli.log" &
			pids="$pids $!"
		fi
	done
	if [ "$AIM" = 1 ]; then
		# the kill, aimed: the moment a cloud call is in flight
		# (every operation changes a pool, so each makes one; the
		# calls take ${LAT}+ ms, the journal is polled every 5 ms)
		if ms=$($TRUTH killopen "$GPUBROKER_STATE" "$D_PID" 30000); then
			kill_daemon killed
		else
			fail "round $r: no cloud call was in flight within 30 s of $(tr '\n' ';' <"$T/ops.txt")"
		fi
	else
		# the kill, at a random moment of the operations' life
		ms=$(od -An -N2 -tu2 /dev/urandom | awk -v m="$KILL_MAX" '{ print $1 % m }')
		sleep "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')"
		kill_daemon
	fi
	kills=$((kills + 1))
	set -- $($TRUTH inflight "$GPUBROKER_STATE")
	[ "$1" -gt 0 ] && inflight_kills=$((inflight_kills + 1))
	[ "$2" -gt 0 ] && unsettled_kills=$((unsettled_kills + 1))
	echo "round $r: $(tr '\n' ';' <"$T/ops.txt") killed at ${ms} ms: $1 open intents, $2 unsettled pools"
	start_daemon
	# now and then a second kill during recovery
	rnd 5
	if [ "$R" = 0 ]; then
		sleep "$(awk -v m="$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')" 'BEGIN { printf "%.3f", (m % 400) / 1000 }')"
		kill_daemon
		recovery_kills=$((recovery_kills + 1))
		start_daemon
	fi
	t0=$(date +%s)
	# the CLIs: they finished before the kill, failed (a request the
	# kill cut), or (waits) rode out the restart
	for _p in $pids; do wait "$_p" 2>/dev/null || true; done
	pids=""
	# re-submit the model (idempotent): what the killed CLIs may not
	# have got through
	while read -r p c g n; do
		if [ "$n" -gt 0 ]; then
			gb apply -f "$T/spec-$p.yaml" --auto-approve </dev/null >/dev/null 2>>"$T/cli.log" ||
				fail "round $r: re-apply of $p failed: $(tail -n 3 "$T/cli.log")"
		elif ! gb status --all "$p" -o json </dev/null 2>/dev/null | jq -e '.state == "destroyed"' >/dev/null; then
			"$GB" -c "$CONF" ${GPUBROKER_SERVER:+--server "$GPUBROKER_SERVER"} destroy "$p" --auto-approve >/dev/null 2>>"$T/cli.log" &
			pids="$pids $!"
		fi
	done <"$T/pools.txt"
	expect_json
	if ! wait_until "$CONV" converged; then
		cat "$T/why.txt"
		fail "round $r: not converged within ${CONV}s after the restart"
	fi
	for _p in $pids; do wait "$_p" 2>/dev/null || true; done
	t1=$(date +%s)
	conv=$((t1 - t0))
	sum_conv=$((sum_conv + conv))
	[ "$conv" -gt "$max_conv" ] && max_conv=$conv
	echo "ok: round $r: converged in ${conv}s; $(nactive) active pools; 0 leaked, 0 duplicated, store == cloudsim ($($TRUTH summary "$GPUBROKER_STATE" "$CONTROL" "$GPUBROKER_BROKER_ID"))"
done

echo "kills: $kills (+ $recovery_kills during recovery); $inflight_kills with a cloud call in flight (open intent), $unsettled_kills with a pool not yet converged"
echo "convergence after restart: max ${max_conv}s, mean $((sum_conv / ROUNDS))s"
# (aimed kills each found a call in flight: only one whose intent closed
# between the look and the SIGKILL, microseconds, can miss)
check "[ $inflight_kills -ge $((ROUNDS / 5)) ]" "at least a fifth of the kills interrupted a cloud call"

# tear everything down through the daemon, then the final truth
pids=""
for p in $(active_pools); do
	set -- $(grep "^$p " "$T/pools.txt")
	set_model "$p" "$2" "$3" 0
	"$GB" -c "$CONF" ${GPUBROKER_SERVER:+--server "$GPUBROKER_SERVER"} destroy "$p" --auto-approve >/dev/null 2>>"$T/cli.log" &
	pids="$pids $!"
done
for _p in $pids; do wait "$_p" || fail "a final destroy failed: $(tail -n 3 "$T/cli.log")"; done
expect_json
wait_until "$CONV" converged || { cat "$T/why.txt"; fail "final destroy did not converge"; }
check "[ \"\$(sim_live)\" = 0 ]" "cloudsim has nothing live after destroying everything"
GPUBROKER_TOKEN=demo-admin-token gb gc -o json >"$T/gc.json" 2>>"$T/cli.log" || fail "gc failed"
check "[ \"\$(jq length $T/gc.json)\" = 0 ]" "gc finds no orphan"
# every destroy is confirmed; let the reconciler mark the last ones
bill=$(curl -sf "$CONTROL/_sim/bill" | jq -r .total)
ours=$(GPUBROKER_TOKEN=demo-admin-token gb cost -o json | jq -r .total)
# per instance: one row per billed instance, same price, start within
# 2 s (the create call vs. its acceptance: one cloud round trip, or the
# journaled time of a replayed create), end within 10 s (a terminate
# interrupted by a kill is sent again after the restart and that call's
# time is recorded -- reported, see README)
$TRUTH costdiff "$GPUBROKER_STATE" "$CONTROL" 2000 10000 >"$T/costdiff.txt"
crc=$?
head -n 8 "$T/costdiff.txt"
grep '^largest\|^BAD' "$T/costdiff.txt"
check "[ $crc = 0 ]" "every instance billed once, at its price, start within 2 s and end within 10 s of cloudsim's bill"
echo "bill $bill, ours $ours ($(awk -v a="$bill" -v b="$ours" 'BEGIN { printf "%.3f%%", (b - a) / a * 100 }'))"
# Where billing ended (as engine_crash.sh): within 0.1 s of the bill, or
# up to 0.4 s early (one call's latency, 120-200 ms here, and the journal
# commit) in a pool that had a scale or destroy in a round with a kill;
# the totals consistent and apart by no more than those allowances.
# (This replaced "cost within 0.5% of the bill": its share depends on how
# many kills cut a terminate against how long the instances lived, and
# the 5-round short version failed once at -0.96% with every instance
# within its allowance.)
cut=$(sort -u "$T/cut.txt" 2>/dev/null | tr '\n' ',')
$TRUTH endcheck "$GPUBROKER_STATE" "$CONTROL" 100 400 "$cut" "$ours" >"$T/endcheck.txt" && erc=0 || erc=$?
cat "$T/endcheck.txt"
check "[ $erc = 0 ]" "after $kills kills: billing ends within 0.1 s of the bill, or up to 0.4 s early where a kill may have cut a terminate; cost = its rows; bill - cost within the allowances"
daemon_stop
echo PASS
