#!/bin/sh
# small_ones.sh -- issue 31, point 8:
#   1. apply --timeout without --wait is a usage error (exit 2);
#   2. an explicit --state or -c wins over GPUBROKER_SERVER in the
#      environment (--state and --server as flags: a usage error; -c and
#      --server: --server wins);
#   3. a SIGHUP to a daemon started with --listen, its config unchanged,
#      does not warn that listen changes need a restart (a changed listen
#      in the file still does);
#   4. examples/inference.yaml says what its schedule window's zone is;
#   5. a walk of refused zones spends no names: the pool's instances are
#      -0 and -1 after ten refused attempts, and again -2, -3 when the
#      pool is destroyed and applied again after more refusals;
#   6. the state an instance moves to is written once, with its event
#      (test_store: gb_store_inst_move_state; here: each instance's
#      'running' event once, locally and through the daemon).
. "$GB_SRC/tests/lib/integration.sh"

# short cooldowns: the second walk of 5 meets the refusals again
export GPUBROKER_FAILOVER_COOLDOWN=1s
sim_start

# 1.
write_spec "$T/a.yaml" so-a aws A10G 1
rc=0
gb apply -f "$T/a.yaml" --auto-approve --timeout 5m >/dev/null 2>"$T/u.err" || rc=$?
check "[ \$rc = 2 ] && grep -q -- '--timeout is for --wait' $T/u.err" "apply --timeout without --wait: usage error (exit $rc)"
check "[ \"\$(sim_live so-a)\" = 0 ]" "and nothing was applied"

# 4.
check "! grep -q 'fixed UTC' $GB_SRC/examples/inference.yaml && grep -q 'weekday business hours in Berlin' $GB_SRC/examples/inference.yaml" \
	"examples/inference.yaml's comment names its window's zone"

# 5. the first five candidates (us-east-1's zones) refuse: 10 attempts
sim_post /_sim/scenario '{"capacity": [{"cloud": "aws", "region": "us-east-1", "type": "g5.*", "count": 0}]}'
PLACE='{clouds: [aws], regions: [us-east-1, us-east-2], colocate: none}' write_spec "$T/n.yaml" so-names aws A10G 2
gb apply -f "$T/n.yaml" --auto-approve --wait --timeout 60s -o json >"$T/n.json" 2>"$T/n.err" ||
	fail "apply so-names: $(cat "$T/n.err")"
check "grep -q 'failing over' $T/n.err" "the walk met refusals"
check "[ \"\$(jq -r '[.[0].instances[].name] | sort | join(\" \")' $T/n.json)\" = 'so-names-0 so-names-1' ]" \
	"refused attempts spent no names: $(jq -c '[.[0].instances[].name]' "$T/n.json")"
gb destroy so-names --auto-approve >/dev/null 2>&1 || fail "destroy so-names"
gb apply -f "$T/n.yaml" --auto-approve --wait --timeout 60s -o json >"$T/n2.json" 2>"$T/n2.err" ||
	fail "apply so-names again: $(cat "$T/n2.err")"
check "[ \"\$(jq -r '[.[0].instances[].name] | sort | join(\" \")' $T/n2.json)\" = 'so-names-2 so-names-3' ]" \
	"recreated, it goes on from the last name made: $(jq -c '[.[0].instances[].name]' "$T/n2.json")"
check "[ \"\$(gb events --pool so-names -o json | jq '[.[] | select(.kind == \"running\")] | length')\" = 4 ]" \
	"each instance's 'running' event once (4, locally)"
gb destroy so-names --auto-approve >/dev/null 2>&1 || fail "destroy so-names"
sim_post /_sim/scenario '{"capacity": []}'

# 3. a daemon started with --listen, on a config file of its own
cp "$CONF" "$T/live.yaml"
export GPUBROKER_INVENTORY="$GB_SRC/examples/demo-inventory.yaml"
CONF="$T/live.yaml"
daemon_start --listen 127.0.0.1:0
kill -HUP "$D_PID"
wait_until 10 "grep -q 'SIGHUP: reloaded' $T/daemon.log" || fail "no 'SIGHUP: reloaded' in the log"
check "! grep -q 'listen changes need a restart' $T/daemon.log" \
	"SIGHUP with the config unchanged: no warning about listen changes"
sed -i -e 's|^listen: .*|listen: 127.0.0.1:1|' "$CONF"
grep -q '^listen: 127.0.0.1:1$' "$CONF" || fail "the example config has no top-level listen line to change"
kill -HUP "$D_PID"
wait_until 10 "[ \"\$(grep -c 'SIGHUP: reloaded' $T/daemon.log)\" = 2 ]" || fail "no second 'SIGHUP: reloaded' in the log"
check "grep -q 'listen changes need a restart' $T/daemon.log" "the file's listen changed: that still warns"

# 2. --state and -c win over GPUBROKER_SERVER from the environment
export GPUBROKER_TOKEN=demo-admin-token
write_spec "$T/r.yaml" so-remote aws A10G 1
gb apply -f "$T/r.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/r.err" || fail "apply so-remote: $(cat "$T/r.err")"
gb status -o json >"$T/via.json" 2>&1 || fail "status through the daemon"
check "jq -e 'any(.[]; .name == \"so-remote\")' $T/via.json >/dev/null" "through GPUBROKER_SERVER status shows the daemon's pool"
gb --state "$T/other.db" status -o json >"$T/local.json" 2>"$T/local.err" || fail "status --state: $(cat "$T/local.err")"
check "[ \"\$(jq length $T/local.json)\" = 0 ]" "an explicit --state wins: the empty local state, not the daemon"
# as does an explicit -c (local mode with that config; the state is
# GPUBROKER_STATE's, not the daemon's), and --server wins over -c
GPUBROKER_STATE=$T/other.db "$GB" -c "$CONF" status -o json >"$T/local-c.json" 2>"$T/local-c.err" ||
	fail "status -c: $(cat "$T/local-c.err")"
check "[ \"\$(jq length $T/local-c.json)\" = 0 ]" "an explicit -c wins over GPUBROKER_SERVER: the empty local state, not the daemon"
GPUBROKER_STATE=$T/other.db "$GB" -c "$CONF" --server "$GPUBROKER_SERVER" status -o json >"$T/both-c.json" 2>"$T/both-c.err" ||
	fail "status -c --server: $(cat "$T/both-c.err")"
check "jq -e 'any(.[]; .name == \"so-remote\")' $T/both-c.json >/dev/null" "-c with --server: --server wins, the daemon's pool"
rc=0
GPUBROKER_STATE=$T/other.db "$GB" -c "$CONF" token >/dev/null 2>"$T/token-c.err" || rc=$?
check "[ \$rc = 2 ] && grep -q 'GPUBROKER_SERVER is not used because -c/--config' $T/token-c.err" \
	"token with -c and GPUBROKER_SERVER: says why the environment's server is not used (exit $rc)"
rc=0
gb --state "$T/other.db" --server "$GPUBROKER_SERVER" status >/dev/null 2>"$T/both.err" || rc=$?
check "[ \$rc = 2 ] && grep -q -- '--state is local state and --server a daemon' $T/both.err" \
	"--state and --server together: usage error (exit $rc)"
check "[ \"\$(gb events --pool so-remote -o json | jq '[.[] | select(.kind == \"running\")] | length')\" = 1 ]" \
	"through the daemon, the instance's 'running' event once"

