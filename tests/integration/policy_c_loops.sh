#!/bin/sh
# policy_c_loops.sh -- policies whose work is all in C library loops
# (string.rep of an empty piece, table.sort and table.concat over C
# metamethods), where Lua's instruction hook never fires: each POST
# /v1/plan naming one answers within the policy's limits (they ran for
# ever and pinned an API worker), the daemon keeps serving, and SIGTERM
# stops it promptly.  The policies are in tests/hostile/policy (the
# hostile corpus runs them too, locally and through the daemon).
. "$GB_SRC/tests/lib/integration.sh"

{
	cat "$CONF"
	printf 'policy_path: ["%s"]\n' "$GB_SRC/tests/hostile/policy"
} >"$T/broker.yaml"
CONF=$T/broker.yaml
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
for p in c_rep_empty c_sort c_concat; do
	exp=$(sed -n 's/^-- expect: //p' "$GB_SRC/tests/hostile/policy/$p.lua")
	write_spec "$T/pol.yaml" "pol-$(echo $p | tr _ -)" aws A10G 1 on-demand "policy: [$p]"
	t0=$(date +%s)
	timeout 30 "$GB" -c "$CONF" ${GPUBROKER_SERVER:+--server "$GPUBROKER_SERVER"} plan -f "$T/pol.yaml" >"$T/out" 2>&1 && rc=0 || rc=$?
	dt=$(($(date +%s) - t0))
	check "[ \$rc = 1 ] && grep -qF -- '$exp' $T/out" "$p: plan through the daemon fails with '$exp' (exit $rc, ${dt}s)"
	check "[ $dt -le 10 ]" "$p: answered within the policy limits (${dt}s)"
done
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $GPUBROKER_SERVER/healthz)\" = 200 ]" "the daemon keeps serving"
kill -TERM "$D_PID"
check "wait_until 10 '! kill -0 $D_PID'" "SIGTERM stops the daemon within 10 s"
wait "$D_PID" 2>/dev/null || true
D_PID=""
echo PASS
