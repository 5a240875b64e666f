#!/bin/sh
# lambda_late_launch.sh -- Lambda has no idempotency token: a launch
# whose answer comes after the transport's timeout (cloudsim handles it
# 5 s late, the driver's http_timeout_ms is 3 s) still lands, and the
# driver must find it by name before launching again (driver.h), so a
# pool of 2 gets 2 instances, not 4 (the extra two were once left for gc
# to remove as orphans).
. "$GB_SRC/tests/lib/integration.sh"

sim_start
sed 's|^      rate.lambda-launch: "1000/1000"$|&\n      http_timeout_ms: "3000"|' "$CONF" >"$T/broker.yaml"
grep -q 'http_timeout_ms: "3000"' "$T/broker.yaml" || fail "could not set the lambda driver's http_timeout_ms"
CONF=$T/broker.yaml
sim_post /_sim/scenario '{"latency": {"lambda": {"launchInstance": {"base_ms": 5000, "jitter_ms": 0}}}}'

# every instance cloudsim ever made for the pool, any state
sim_all() {
	curl -sf "$CONTROL/_sim/instances?cloud=lambda" |
		jq --arg p "$1" '[.instances[] | select(.tags["gpubroker-pool"] == $p)] | length'
}

write_spec "$T/l.yaml" lam-late lambda A10 2
gb apply -f "$T/l.yaml" --auto-approve --wait --timeout 90s >"$T/apply.out" 2>"$T/apply.log" ||
	fail "apply of a lambda pool with late launch answers: $(tail -5 "$T/apply.log")"
grep -i 'lambda: launch' "$T/apply.log" || true
check "[ \"\$(sim_all lam-late)\" = 2 ]" "a launch answered after the timeout made 2 instances for a pool of 2 (made: $(sim_all lam-late))"
check "[ \"\$(store_live lam-late)\" = 2 ]" "the broker knows both"
gb destroy lam-late --auto-approve >/dev/null 2>&1 || fail "destroy"
echo PASS
