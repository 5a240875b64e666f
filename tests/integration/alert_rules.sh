#!/bin/sh
# alert_rules.sh -- the shipped Prometheus alerting rules (issue 42 point
# 5): packaging/gpubroker-alerts.yml passes `promtool check rules`, its
# unit tests (alert_rules.test.yml: daemon down, pool short, budget at
# the warning share and at 100%, repeated refusals, reconcile stalled)
# pass `promtool test rules`, and every gpubroker_* series the rules
# read is one a running daemon exposes (the autoscale counter with its
# purpose label, the per-pool desired/running gauges).  Exit 77 without
# promtool (Debian's prometheus package; make deps installs it).
. "$GB_SRC/tests/lib/integration.sh"
PROMTOOL=$(command -v promtool || true)
if [ -z "$PROMTOOL" ]; then
	echo "SKIP: promtool is not installed (make deps installs Debian's prometheus)"
	exit 77
fi
RULES=$GB_SRC/packaging/gpubroker-alerts.yml
"$PROMTOOL" check rules "$RULES" >"$T/check.log" 2>&1 || { cat "$T/check.log"; fail "promtool check rules"; }
echo "ok: $(grep -o 'SUCCESS.*' "$T/check.log")"
(cd "$GB_SRC/tests/integration" && "$PROMTOOL" test rules alert_rules.test.yml) >"$T/test.log" 2>&1 ||
	{ cat "$T/test.log"; fail "promtool test rules"; }
echo "ok: promtool test rules alert_rules.test.yml"
for a in GpubrokerDown GpubrokerPoolShort GpubrokerTeamBudgetWarning GpubrokerTeamBudgetExhausted \
	GpubrokerRepeatedRefusals GpubrokerReconcileStalled; do
	check "grep -q 'alertname: $a\$' $GB_SRC/tests/integration/alert_rules.test.yml" "$a has a unit test"
done

export GPUBROKER_INVENTORY="$GB_SRC/examples/demo-inventory.yaml"
sim_start
daemon_start
write_spec "$T/p.yaml" al-a aws A10G 1 on-demand "purpose: inference" "min: 1" "max: 2" "autoscale: {gpu_util_target: 0.5}"
gb --server "$GPUBROKER_SERVER" --token demo-admin-token apply -f "$T/p.yaml" --auto-approve >/dev/null 2>"$T/apply.log" ||
	fail "apply al-a: $(tail -3 "$T/apply.log")"
curl -sf -H 'Authorization: Bearer demo-admin-token' "$GPUBROKER_SERVER/metrics" >"$T/metrics.txt" || fail "GET /metrics"
# the series in the expressions (expr: up to labels:)
for m in $(awk '/expr:/ { on = 1 } /labels:/ { on = 0 } on' "$RULES" | grep -o 'gpubroker_[a-z_]*' | sort -u); do
	check "grep -q '^$m[{ ]' $T/metrics.txt" "the rules' $m is exposed"
done
check "grep -q '^gpubroker_autoscale_decisions_total{action=\"refused\",purpose=\"inference\"} 0\$' $T/metrics.txt" \
	"the autoscale counter has a purpose label"
check "grep -q '^gpubroker_team_pools_short{team=\"research\"} [01]\$' $T/metrics.txt" "the team's pools short of their size"
check "! grep -q 'pool=\"' $T/metrics.txt" "and no series names a pool"
"$PROMTOOL" check metrics <"$T/metrics.txt" >"$T/lint.log" 2>&1 || true
check "! grep -q 'gpubroker_pool_\|gpubroker_team_\|gpubroker_autoscale' $T/lint.log" "promtool check metrics has nothing to say of the new series"
echo "PASS"
