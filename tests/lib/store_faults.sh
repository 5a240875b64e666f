# store_faults.sh -- sourced after integration.sh by the store fault
# sweeps (tests/integration/store_faults.sh, the short one in make test;
# tests/reliability/store_faults_full.sh, the whole one).  The store's
# fault injection (HACKING.md, "Store fault injection") makes the Nth
# statement run of one command fail; a sweep walks N over every
# statement the command runs in a small scenario (three pools of 2, 2
# and 1 instances on cloudsim) and checks after each fault:
#   - nothing the user did not ask to remove was terminated: every
#     instance of the pools the command is not about is still live in
#     cloudsim (checked at once, and again after the recovery run);
#   - the command either failed, with non-zero exit status and a message
#     saying the state store failed, or succeeded and really did its job
#     (the size stored and the instances live in cloudsim);
#   - after a recovery run (a start, which resolves open intents, and
#     one reconcile pass of the daemon) cloudsim's live instances are the
#     ones the journal says are live, pool by pool, id by id.
#
#   sf_setup                        the three pools, applied and running
#   sf_sweep NAME TOUCHED CMD...    sweep CMD (run as `gb CMD...`) over
#                                   N = 1, 1+STRIDE, ... up to its count
#                                   + 1; TOUCHED: the pool it is about
#                                   (its own instances may go); after
#                                   each N, sf_restore_NAME restores the
#                                   scenario
# Knobs: SF_STRIDE (default 1), SF_MATCH (count only statements whose
# SQL contains it), SF_KIND (ioerr | full | busy | lost).
# Results: SF_RUNS, SF_FAILED (runs that failed as they should),
# SF_OK (runs the fault did not stop, checked to have done their job).

SF_POOLS="a:2 b:2 c:1"
SF_RUNS=0
SF_FAILED=0
SF_OK=0

sf_spec() {
	write_spec "$T/$1.yaml" "$1" aws A10G "$2"
}

# sf_sim_ids POOL: its live instances' ids in cloudsim, sorted, one line
sf_sim_ids() {
	curl -sf "$CONTROL/_sim/instances?live=1" |
		jq -r --arg p "$1" '[.instances[] | select(.tags["gpubroker-pool"] == $p) | select(.state == "pending" or .state == "running") | .id] | sort | join(",")'
}

# sf_store_ids POOL: the ids the journal says are live (not terminating,
# not terminated), sorted, one line; "ERR" when status fails
sf_store_ids() {
	gb status "$1" -o json 2>/dev/null |
		jq -r '[.instances[] | select(.state == "running" or .state == "pending") | .id] | sort | join(",")' 2>/dev/null ||
		echo ERR
}

# sf_sim_map: {pool: [live ids, sorted]} in cloudsim (pending or running)
sf_sim_map() {
	curl -sf "$CONTROL/_sim/instances?live=1" |
		jq -c '[.instances[] | select(.state == "pending" or .state == "running")] | group_by(.tags["gpubroker-pool"]) | map({key: .[0].tags["gpubroker-pool"], value: (map(.id) | sort)}) | from_entries'
}

# sf_all_same: cloudsim's live instances are the journal's, pool by
# pool, id by id (one status, one listing, one jq for all the pools)
sf_all_same() {
	_st=$(gb status -o json 2>/dev/null) || return 1
	_sm=$(sf_sim_map) || return 1
	jq -en --argjson st "$_st" --argjson sm "$_sm" '
		([$st[] | {key: .name, value: ([.instances[] | select(.state == "running" or .state == "pending") | .id] | sort)}] | from_entries) as $j
		| [($j | keys[]), ($sm | keys[])] | unique
		| all(. as $p | ($j[$p] // []) == ($sm[$p] // []))' >/dev/null
}

sf_desired() {
	gb status "$1" -o json 2>/dev/null | jq -r '.desired' 2>/dev/null || echo ERR
}

sf_live_n() {
	_ids=$(sf_sim_ids "$1")
	if [ -z "$_ids" ]; then echo 0; else echo "$_ids" | tr ',' '\n' | wc -l | tr -d ' '; fi
}

sf_setup() {
	for _sp in $SF_POOLS; do
		sf_spec "${_sp%%:*}" "${_sp##*:}"
		gb apply -f "$T/${_sp%%:*}.yaml" --auto-approve --wait --timeout 60s \
			>>"$T/setup.log" 2>&1 || fail "apply ${_sp%%:*}: $(tail -3 "$T/setup.log")"
	done
	wait_until 20 sf_all_same || fail "the scenario does not settle: $(sf_report)"
	echo "ok: three pools of 2, 2 and 1 instances run ($(sf_report))"
}

sf_report() {
	for _sp in $SF_POOLS; do
		printf '%s sim[%s] store[%s] ' "${_sp%%:*}" "$(sf_sim_ids "${_sp%%:*}")" "$(sf_store_ids "${_sp%%:*}")"
	done
}

# the recovery run: its start resolves open intents, its one reconcile
# pass converges every pool and looks for orphans (as the crash tests'
# restarts do)
sf_recover() {
	gb serve --reconcile-once >>"$T/recover.log" 2>&1 || true
}

# sf_untouched TOUCHED: every instance live in $SF_BEFORE (a
# sf_sim_map) of a pool other than TOUCHED is still live
sf_untouched() {
	_now=$(sf_sim_map) || return 1
	jq -en --argjson was "$SF_BEFORE" --argjson now "$_now" --arg t "$1" '
		[$was | to_entries[] | select(.key != $t) | .key as $p | .value[] | . as $id | (($now[$p] // []) | index($id)) != null] | all' >/dev/null
}

sf_count() {
	rm -f "$T/sf.count"
	GB_STORE_FAULT="0:${SF_MATCH:-}" GB_STORE_FAULT_COUNT="$T/sf.count" gb "$@" \
		>"$T/sf.out" 2>"$T/sf.err" || fail "gb $* without a fault failed: $(tail -3 "$T/sf.err")"
	cat "$T/sf.count"
}

# sf_sweep NAME TOUCHED CMD...: see above.  sf_done_NAME checks that a
# run that succeeded did its job; sf_restore_NAME puts the scenario back.
sf_sweep() {
	_name=$1 _touched=$2
	shift 2
	_total=$(sf_count "$@")
	"sf_restore_$_name"
	_n=1
	_runs=0 _failed=0 _ok=0
	while [ "$_n" -le $((_total + 1)) ]; do
		SF_BEFORE=$(sf_sim_map)
		_fault="$_n:${SF_MATCH:-}:${SF_KIND:-ioerr}"
		if GB_STORE_FAULT="$_fault" gb "$@" >"$T/sf.out" 2>"$T/sf.err"; then
			_rc=0
		else
			_rc=$?
		fi
		sf_untouched "$_touched" ||
			fail "$_name, fault $_fault (exit $_rc): an instance of a pool the command is not about was terminated: $(sf_report); stderr: $(tail -3 "$T/sf.err")"
		if [ "$_rc" = 0 ]; then
			"sf_done_$_name" ||
				fail "$_name, fault $_fault: exit 0, but the job is not done: $(sf_report); stderr: $(tail -3 "$T/sf.err")"
			_ok=$((_ok + 1))
		else
			grep -q "state store failed\|state database .*(injected by GB_STORE_FAULT)" "$T/sf.err" ||
				fail "$_name, fault $_fault: exit $_rc without saying the state store failed: $(tail -3 "$T/sf.err")"
			_failed=$((_failed + 1))
		fi
		sf_recover
		sf_untouched "$_touched" ||
			fail "$_name, fault $_fault: after the recovery run an instance of an untouched pool is gone: $(sf_report)"
		wait_until 15 sf_all_same ||
			fail "$_name, fault $_fault: after the recovery run cloudsim's live instances are not the journal's: $(sf_report)"
		"sf_restore_$_name"
		_runs=$((_runs + 1))
		_n=$((_n + ${SF_STRIDE:-1}))
	done
	SF_RUNS=$((SF_RUNS + _runs))
	SF_FAILED=$((SF_FAILED + _failed))
	SF_OK=$((SF_OK + _ok))
	echo "ok: $_name: $_total statements; $_runs faults injected (stride ${SF_STRIDE:-1}${SF_MATCH:+, matching '$SF_MATCH'}): $_failed failed saying the store failed, $_ok did their job anyway; untouched pools intact and cloudsim = journal after each recovery"
}

# ---- the commands ----

# scale a 2 -> 1 (a's newest instance goes)
sf_done_scale_down() {
	[ "$(sf_desired a)" = 1 ] && wait_until 10 '[ "$(sf_live_n a)" = 1 ]'
}
sf_restore_scale_down() {
	gb scale a 2 >>"$T/restore.log" 2>&1 || fail "restore: scale a 2: $(tail -3 "$T/restore.log")"
	wait_until 20 '[ "$(sf_live_n a)" = 2 ] && sf_all_same' || fail "restore after scale_down: $(sf_report)"
}

# scale a 2 -> 3 (one more)
sf_done_scale_up() {
	[ "$(sf_desired a)" = 3 ] && wait_until 10 '[ "$(sf_live_n a)" = 3 ]'
}
sf_restore_scale_up() {
	gb scale a 2 >>"$T/restore.log" 2>&1 || fail "restore: scale a 2: $(tail -3 "$T/restore.log")"
	wait_until 20 '[ "$(sf_live_n a)" = 2 ] && sf_all_same' || fail "restore after scale_up: $(sf_report)"
}

# scale a 2 -> 2 (issue 29's command: nothing to do)
sf_done_scale_same() {
	[ "$(sf_desired a)" = 2 ] && [ "$(sf_live_n a)" = 2 ]
}
sf_restore_scale_same() {
	sf_restore_scale_down
}

# destroy c
sf_done_destroy() {
	[ "$(sf_live_n c)" = 0 ] &&
		[ "$(gb status --all c -o json 2>/dev/null | jq -r .state)" = destroyed ]
}
sf_restore_destroy() {
	gb destroy c --auto-approve --ignore-not-found >>"$T/restore.log" 2>&1 || fail "restore: destroy c: $(tail -3 "$T/restore.log")"
	gb apply -f "$T/c.yaml" --auto-approve --wait --timeout 60s >>"$T/restore.log" 2>&1 ||
		fail "restore: apply c: $(tail -3 "$T/restore.log")"
	wait_until 20 sf_all_same || fail "restore after destroy: $(sf_report)"
}

# apply b with 3 instances (a spec change of one pool)
sf_done_apply() {
	[ "$(sf_desired b)" = 3 ] && wait_until 10 '[ "$(sf_live_n b)" = 3 ]'
}
sf_restore_apply() {
	gb apply -f "$T/b.yaml" --auto-approve --wait --timeout 60s >>"$T/restore.log" 2>&1 ||
		fail "restore: apply b: $(tail -3 "$T/restore.log")"
	wait_until 20 '[ "$(sf_live_n b)" = 2 ] && sf_all_same' || fail "restore after apply: $(sf_report)"
}

# one reconcile pass (and the gc it runs), with nothing asked: nothing
# may go
sf_done_reconcile() {
	sf_all_same
}
sf_restore_reconcile() {
	wait_until 20 sf_all_same || fail "restore after reconcile: $(sf_report)"
}
sf_done_gc() {
	sf_all_same
}
sf_restore_gc() {
	sf_restore_reconcile
}
