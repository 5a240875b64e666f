#!/bin/sh
# team_budget.sh -- a team's month against its budget in sight (issue 42
# point 1): `cost` (local and --server), the pool's GET and /metrics show
# spend, projection and budget per configured team; a budget lowered by
# SIGHUP below the month's spend writes one budget-warning event and
# makes the autoscaler's scale-up an autoscale-refused event whose
# message has the projection; apply is refused the same way.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_RECONCILE_PERIOD=1s
budget() { # BUDGET: the team research's budget in the test's config
	sed -e "s|^  - {name: research, max_gpus: .*|  - {name: research, max_gpus: 512, max_price_per_hour: 2000, monthly_budget: $1, budget_warn_at: 0.9}|" \
		"$GB_SRC/examples/cloudsim-broker.yaml" >"$T/broker.yaml.new"
	grep -q "monthly_budget: $1, budget_warn_at: 0.9" "$T/broker.yaml.new" ||
		fail "could not set the budget in the test's broker config"
	mv "$T/broker.yaml.new" "$T/broker.yaml"
}
budget 1000
CONF="$T/broker.yaml"
export GPUBROKER_INVENTORY="$GB_SRC/examples/demo-inventory.yaml"
sim_start
daemon_start
SERVER=$GPUBROKER_SERVER
unset GPUBROKER_SERVER
export GPUBROKER_TOKEN=demo-admin-token
H="Authorization: Bearer $GPUBROKER_TOKEN"
api() { # METHOD PATH [BODY]
	if [ $# -ge 3 ]; then
		curl -sf -X "$1" -H "$H" -H 'Content-Type: application/json' -d "$3" "$SERVER$2"
	else
		curl -sf -X "$1" -H "$H" "$SERVER$2"
	fi
}
events() { api GET "/v1/events?pool=$1&limit=200" | jq -r '.events[] | "\(.kind) \(.message)"'; }
running() { api GET "/v1/pools/$1" | jq '[.instances[] | select(.state == "running")] | length'; }

write_spec "$T/b.yaml" bud-a aws A10G 1 on-demand "purpose: inference" \
	"min: 1" "max: 3" "autoscale: {gpu_util_target: 0.5, up_after: 1s}"
gb --server "$SERVER" apply -f "$T/b.yaml" --auto-approve >/dev/null 2>"$T/apply.log" ||
	{ cat "$T/apply.log"; fail "apply bud-a"; }
wait_until 30 "[ \"\$(running bud-a)\" = 1 ]" || fail "bud-a never ran its instance"

# --- in sight: cost (both modes), the pool's GET, /metrics
gb cost >"$T/cost-local.txt" || fail "cost (local)"
gb --server "$SERVER" cost >"$T/cost-remote.txt" || fail "cost --server"
for m in local remote; do
	check "grep -q '^TEAM  *SPENT THIS MONTH  *\$/H NOW  *PROJECTED  *BUDGET  *USED  *USED AT MONTH END  *STATE' $T/cost-$m.txt" \
		"cost ($m) has the budget table"
	check "awk '\$1 == \"research\" && \$3 == \"1.01\" && \$5 == \"1000.00\" && \$6 ~ /^[0-9]+%\$/ && \$8 == \"ok\" { ok = 1 } END { exit !ok }' $T/cost-$m.txt || { cat $T/cost-$m.txt; false; }" \
		"cost ($m): research's spend, \$1.01/h now, budget \$1000, ok"
done
check "gb --server $SERVER cost -o json | jq -e '.budgets[] | select(.team == \"research\") | .projected > .spent and .budget == 1000 and .warn_fraction == 0.9' >/dev/null" \
	"cost -o json: the projection to the month's end is above the spend"
check "gb --server $SERVER cost -o json | jq -e '.budgets[] | select(.team == \"product\") | .budget == null and .state == \"no budget\"' >/dev/null" \
	"a team without a budget says so"
check "api GET /v1/pools/bud-a | jq -e '.team_budget.team == \"research\" and .team_budget.budget == 1000' >/dev/null" \
	"the pool's GET (the console's pool page) has its team's budget"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer demo-other-team-token' $SERVER/v1/cost)\" = 200 ] && curl -sf -H 'Authorization: Bearer demo-other-team-token' $SERVER/v1/cost | jq -e '[.budgets[].team] == [\"product\"]' >/dev/null" \
	"another team's token sees its own team's budget only"
metrics() { curl -sf -H "$H" "$SERVER/metrics"; }
check "metrics | grep -q '^gpubroker_team_budget_usd{team=\"research\"} 1000.0000\$'" "/metrics: the budget"
check "metrics | grep -q '^gpubroker_team_budget_usd{team=\"product\"} 0.0000\$'" "/metrics: 0 for a team without a budget"
check "metrics | grep -q '^gpubroker_team_spend_month_usd{team=\"research\"} 0.0[0-9]*\$'" "/metrics: the month's spend"
check "metrics | grep -q '^gpubroker_team_spend_projected_usd{team=\"research\"} [1-9]'" "/metrics: the projection"
check "metrics | grep -q '^gpubroker_team_budget_warn_fraction{team=\"research\"} 0.9000\$'" "/metrics: the warning fraction"
check "! events bud-a | grep -q budget-warning" "no warning under the budget"

# --- the scenario: the budget lowered by SIGHUP under the spend
budget 0.01
kill -HUP "$D_PID"
wait_until 10 "metrics | grep -q '^gpubroker_team_budget_usd{team=\"research\"} 0.0100\$'" ||
	fail "SIGHUP did not lower the budget"
wait_until 10 "events bud-a | grep -q '^budget-warning team research has spent \\\$0.0[0-9]* of its monthly budget \\\$0.01 '" ||
	fail "no budget-warning event ($(events bud-a))"
echo "ok: $(events bud-a | grep budget-warning)"
# high use: the autoscaler wants 2, the budget refuses it
echo 0.95 >"$T/util"
(
	while [ -f "$T/util" ]; do
		api GET /v1/pools/bud-a | jq -r '.instances[] | select(.state == "running") | .id' |
		while read -r id; do
			api POST "/v1/instances/$id/heartbeat" '{"gpu_util": 0.95}' >/dev/null 2>&1
		done
		sleep 0.5
	done
) &
BG_PIDS="$BG_PIDS $!"
wait_until 15 "events bud-a | grep -q '^autoscale-refused mean gpu_util 0.95 > 0.50 for 1s: 1 -> 2 refused: pool bud-a .* would bring team research to \\\$[0-9.]* this month, over its budget of \\\$0.01 '" ||
	fail "the autoscaler's scale-up over the budget is not an autoscale-refused event ($(events bud-a))"
echo "ok: $(events bud-a | grep autoscale-refused | head -1)"
check "api GET /v1/pools/bud-a | jq -e '.desired == 1' >/dev/null" "the pool keeps its size"
check "[ \"\$(events bud-a | grep -c budget-warning)\" = 1 ]" "the warning is written once"
check "gb --server $SERVER cost | awk '\$1 == \"research\" && \$NF == \"over\" { ok = 1 } END { exit !ok }'" \
	"cost says the team is over its budget"
rm -f "$T/util"
write_spec "$T/c.yaml" bud-c aws A10G 1 on-demand "lifecycle: {ttl: 1h}"
gb --server "$SERVER" apply -f "$T/c.yaml" --auto-approve >/dev/null 2>"$T/c.log" && fail "apply over the budget was not refused"
check "grep -q 'would bring team research to \$[0-9.]* this month, over its budget of \$0.01 (spent so far: \$0.0[0-9]*' $T/c.log" \
	"apply's refusal has the projection"
check "[ \"\$(events bud-a | grep -c autoscale-refused)\" = 1 ]" \
	"the refusal is one event, not one a pass (its projection moves by the cent)"
echo "PASS"
