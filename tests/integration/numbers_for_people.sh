#!/bin/sh
# numbers_for_people.sh -- what people read has numbers as people write
# them (issue 19, point 10):
#   1. no float noise (0.69999999999999996) in the daemon's JSON answers;
#   2. `gpubroker cost` shows hours with a few decimals, not 0.00797083;
#   3. counts agree with their nouns: "keep 1 instance", not "1 instances";
#   4. a driver's log lines name it once ("aws: EC2 ...", not "aws: aws:");
#   5. the daemon's start line reads "serving on 127.0.0.1:PORT", without
#      the port a second time.
. "$GB_SRC/tests/lib/integration.sh"

sim_start

write_spec "$T/p.yaml" people aws A10G 1
gb -v -v apply -f "$T/p.yaml" --auto-approve --wait --timeout 60s >"$T/apply.out" 2>"$T/apply.log" ||
	fail "apply failed: $(cat "$T/apply.log")"
check "grep -q '^.*aws: ' $T/apply.log" "the debug log has the aws driver's lines"
check "! grep -q 'aws: aws:' $T/apply.log" "no driver line says 'aws: aws:'"

gb apply -f "$T/p.yaml" --auto-approve >"$T/again.out" 2>"$T/again.log" || fail "second apply failed"
check "grep -q 'keep *1 instance\$' $T/again.log" "an unchanged pool of one: 'keep 1 instance'"
check "! grep -rq '1 instances' $T/apply.out $T/apply.log $T/again.out $T/again.log" "no '1 instances'"

gb cost >"$T/cost-all.out" 2>"$T/cost.log" || fail "cost failed"
# the groups and TOTAL (the budget table per team follows it)
sed "/^TOTAL/q" "$T/cost-all.out" >"$T/cost.out"
col=$(head -n 1 "$T/cost.out" | awk '{ for (i = 1; i <= NF; i++) if ($i == "HOURS") print i }')
check "[ -n '$col' ]" "gpubroker cost has an HOURS column"
check "awk -v c=$col 'NR > 1 && \$1 != \"TOTAL\" && \$c !~ /^[0-9]+\\.[0-9][0-9][0-9]?\$/ { bad = 1 } END { exit bad }' $T/cost.out" \
	"HOURS has 2 or 3 decimals: $(awk -v c="$col" 'NR > 1 && $1 != "TOTAL" { print $c }' "$T/cost.out" | tr '\n' ' ')"

daemon_start -v
check "grep -Eq 'serving on 127\\.0\\.0\\.1:[0-9]+ \\(' $T/daemon.log" "the daemon says 'serving on 127.0.0.1:PORT'"
check "! grep -q 'serving on .* port ' $T/daemon.log" "without the port a second time"
curl -sf -H "Authorization: Bearer demo-admin-token" "$GPUBROKER_SERVER/v1/pools/people" >"$T/pool.json" || fail "GET /v1/pools/people failed"
check "jq -e '.instances[0].price_per_hour > 0' $T/pool.json >/dev/null" "the pool answer has a price"
# 16 or 17 significant digits is float noise (jansson's default %.17g)
noise='[0-9]\.0*[1-9][0-9]{15,}'
check "! grep -Eq '$noise' $T/pool.json" \
	"no float noise in the daemon's answer: $(grep -Eo '[0-9]+\.[0-9]{10,}' "$T/pool.json" | head -n 3 | tr '\n' ' ')"
curl -sf -H "Authorization: Bearer demo-admin-token" "$GPUBROKER_SERVER/v1/pools" >"$T/pools.json" || fail "GET /v1/pools failed"
check "! grep -Eq '$noise' $T/pools.json" "nor in the pool list"
daemon_stop
unset GPUBROKER_SERVER
gb destroy people --auto-approve >/dev/null 2>&1 || fail "destroy failed"
echo PASS
