#!/bin/sh
# engine_crash.sh -- the CLI is SIGKILLed at random moments while it
# applies, scales and destroys (with API latency, so kills land between
# the intent and the record), then restarted.  After every round:
# cloudsim's live instances == the store's live instances == the spec,
# no duplicates, nothing leaked.  ROUNDS (default 20) rounds.
. "$GB_SRC/tests/lib/integration.sh"

ROUNDS=${ROUNDS:-20}
sim_start
# 150-250 ms per cloud call widens every window the kills aim at
sim_post /_sim/scenario '{"latency": {"aws": {"*": {"base_ms": 150, "jitter_ms": 100}}, "gcp": {"*": {"base_ms": 150, "jitter_ms": 100}}, "azure": {"*": {"base_ms": 150, "jitter_ms": 100}}}}'

rand_ms() { # upper bound
	od -An -N2 -tu2 /dev/urandom | awk -v m="$1" '{ print $1 % m }'
}

# converged POOL N: cloudsim and the store agree on exactly N
converged() {
	_s=$(sim_live "$1")
	_g=$(store_live "$1")
	[ "$_s" = "$2" ] && [ "$_g" = "$2" ]
}

clouds="aws gcp azure"
gpus="A10G L4 T4"
kills=0
dkilled= # pools whose destroy a kill interrupted
for r in $(seq 1 "$ROUNDS"); do
	c=$(echo $clouds | cut -d' ' -f$(( (r - 1) % 3 + 1 )))
	g=$(echo $gpus | cut -d' ' -f$(( (r - 1) % 3 + 1 )))
	n=$(( r % 3 + 1 ))
	pool=crash-$r
	write_spec "$T/p.yaml" "$pool" "$c" "$g" "$n"
	# 1. kill the apply somewhere in its life
	# the binary itself in the background, so $! is its pid
	"$GB" -c "$CONF" apply -f "$T/p.yaml" --auto-approve >"$T/apply.out" 2>>"$T/apply.log" &
	pid=$!
	ms=$(rand_ms 1500)
	sleep "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')"
	if kill -KILL "$pid" 2>/dev/null; then
		kills=$((kills + 1))
	fi
	wait "$pid" 2>/dev/null || true
	# 2. restart: recovery resolves open intents, apply converges
	gb apply -f "$T/p.yaml" --auto-approve >>"$T/apply.out" 2>>"$T/apply.log" ||
		fail "round $r: apply after the kill failed"
	wait_until 15 "converged $pool $n" ||
		fail "round $r ($c): cloudsim $(sim_live "$pool") / store $(store_live "$pool"), want $n"
	# 3. kill a scale somewhere in its life, then converge again
	"$GB" -c "$CONF" scale "$pool" $((n + 1)) >/dev/null 2>>"$T/apply.log" &
	pid=$!
	sleep "$(awk -v m="$(rand_ms 900)" 'BEGIN { printf "%.3f", m / 1000 }')"
	kill -KILL "$pid" 2>/dev/null && kills=$((kills + 1))
	wait "$pid" 2>/dev/null || true
	gb scale "$pool" $((n + 1)) >/dev/null 2>>"$T/apply.log" || fail "round $r: scale after the kill failed"
	wait_until 15 "converged $pool $((n + 1))" ||
		fail "round $r ($c) after scale: cloudsim $(sim_live "$pool") / store $(store_live "$pool"), want $((n + 1))"
	# 4. kill the destroy, then destroy again
	"$GB" -c "$CONF" destroy "$pool" --auto-approve >/dev/null 2>>"$T/apply.log" &
	pid=$!
	sleep "$(awk -v m="$(rand_ms 700)" 'BEGIN { printf "%.3f", m / 1000 }')"
	if kill -KILL "$pid" 2>/dev/null; then
		kills=$((kills + 1))
		dkilled="$dkilled,$pool"
	fi
	wait "$pid" 2>/dev/null || true
	gb destroy "$pool" --auto-approve >/dev/null 2>>"$T/apply.log" ||
		fail "round $r: destroy after the kill failed"
	check "[ \"\$(sim_live $pool)\" = 0 ]" "round $r ($c, $n instances): converged, scaled, destroyed; nothing left"
done

echo "$kills kills landed in $ROUNDS rounds"
check "[ $kills -ge $ROUNDS ]" "at least one kill per round actually interrupted a process"
# a final gc finds nothing: no instance carries our broker id unrecorded
gb gc -o json >"$T/gc.json" 2>>"$T/apply.log" || fail "gc failed"
check "[ \"\$(jq length $T/gc.json)\" = 0 ]" "gc finds no orphan"
check "[ \"\$(sim_live)\" = 0 ]" "cloudsim has nothing live"
bill=$(curl -sf "$CONTROL/_sim/bill" | jq -r .total)
ours=$(gb cost -o json | jq -r .total)
echo "bill $bill, ours $ours"
# Per instance: billed once, at its price, start within 0.3 s of
# cloudsim's bill; see costdiff.
/usr/bin/python3 "$GB_SRC/tests/reliability/truth.py" costdiff "$GPUBROKER_STATE" "$CONTROL" 300 500 >"$T/costdiff.txt" && crc=0 || crc=$?
head -n 12 "$T/costdiff.txt"
grep '^largest\|^BAD' "$T/costdiff.txt" || true
check "[ $crc = 0 ]" "every instance billed once, at its price, start within 0.3 s and end within 0.5 s of cloudsim's bill"
# Where billing ended: a terminate that returned is recorded at its
# return, within 0.1 s of the bill.  One cut off by a kill and found done
# at the restart ends at its journal time: early by up to one call's
# latency (150-250 ms here) plus the journal commit (allowed 400 ms), and
# only in a pool whose destroy a kill interrupted.  The totals: `gpubroker
# cost` is the sum of its rows, and it differs from the bill by no more
# than those allowances add up to.  (This replaced "within 2% of the
# bill", which depended on how many kills hit a terminate: it failed
# once at -2.09% with every instance within its allowance.)
/usr/bin/python3 "$GB_SRC/tests/reliability/truth.py" endcheck "$GPUBROKER_STATE" "$CONTROL" 100 400 "$dkilled" "$ours" >"$T/endcheck.txt" && erc=0 || erc=$?
cat "$T/endcheck.txt"
check "[ $erc = 0 ]" "ends within 0.1 s of the bill, or up to 0.4 s early where a kill cut a destroy; cost = its rows; bill - cost within the allowances"
echo PASS
