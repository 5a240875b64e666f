#!/bin/sh
# pool_incarnation.sh -- a destroyed pool's name taken by another team
# does not take the old team's money or data with it: team product
# creates and destroys shared-x, team research applies shared-x; product's
# cost view still shows its spend, the admin's cost by team attributes
# each instance to the team that owned the pool then, and research reads
# neither product's events nor its usage of the old incarnation.  The
# audit tells the two apart too: product's destroy is product's pool's
# (incarnation 1), research's apply is research's (incarnation 2).
. "$GB_SRC/tests/lib/integration.sh"

sim_start
daemon_start
U=$GPUBROKER_SERVER
ADMIN=demo-admin-token RESEARCH=demo-ci-token PRODUCT=demo-other-team-token

api() { # TOKEN PATH -> body on stdout
	curl -sf -H "Authorization: Bearer $1" "$U$2"
}

write_spec "$T/p.yaml" shared-x aws A10G 1
sed -i 's/team: research/team: product/' "$T/p.yaml"
write_spec "$T/r.yaml" shared-x aws A10G 1

GPUBROKER_TOKEN=$PRODUCT gb apply -f "$T/p.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply-p.log" ||
	fail "product's apply failed"
GPUBROKER_TOKEN=$PRODUCT gb destroy shared-x --auto-approve --timeout 60s >/dev/null 2>"$T/destroy-p.log" ||
	fail "product's destroy failed"
wait_until 30 "[ \"\$(sim_live shared-x)\" = 0 ]" || fail "product's instance was not terminated"
api "$PRODUCT" "/v1/events?pool=shared-x" >"$T/ev-p.json" || fail "product's events"
last_p=$(jq '[.events[].id] | max' "$T/ev-p.json")
check "[ \"$last_p\" != null ]" "product's pool wrote events"

GPUBROKER_TOKEN=$RESEARCH gb apply -f "$T/r.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply-r.log" ||
	fail "research's apply of the reused name failed"

api "$PRODUCT" /v1/cost >"$T/cost-p.json" || fail "product's cost"
check "jq -e '[.groups[] | select(.key == \"shared-x\")][0].instances == 1 and .total > 0' $T/cost-p.json >/dev/null" \
	"product's own cost view still shows its instance of shared-x"
api "$ADMIN" "/v1/cost?by=team" >"$T/cost-team.json" || fail "admin's cost by team"
check "jq -e '([.groups[] | select(.key == \"product\")][0].instances == 1) and ([.groups[] | select(.key == \"research\")][0].instances == 1)' $T/cost-team.json >/dev/null" \
	"the admin's cost by team gives each team its own instance"
api "$RESEARCH" /v1/cost >"$T/cost-r.json" || fail "research's cost"
check "jq -e '[.groups[] | select(.key == \"shared-x\")][0].instances == 1' $T/cost-r.json >/dev/null" \
	"research's cost has its own instance only"

api "$RESEARCH" "/v1/events?pool=shared-x" >"$T/ev-r.json" || fail "research's events"
check "jq -e --argjson p $last_p '(.events | length > 0) and all(.events[]; .id > \$p)' $T/ev-r.json >/dev/null" \
	"research does not read product's events of the old incarnation"
api "$RESEARCH" "/v1/events" >"$T/ev-r-all.json" || fail "research's events (all)"
check "jq -e --argjson p $last_p 'all(.events[]; .id > \$p)' $T/ev-r-all.json >/dev/null" \
	"nor through the unfiltered list"
api "$PRODUCT" "/v1/events" >"$T/ev-p-all.json" || fail "product's events (all)"
check "jq -e --argjson p $last_p '[.events[] | select(.pool == \"shared-x\" and .id <= \$p)] | length > 0' $T/ev-p-all.json >/dev/null" \
	"product still reads its own events of shared-x"
check "jq -e --argjson p $last_p 'all(.events[]; .id <= \$p or .pool != \"shared-x\")' $T/ev-p-all.json >/dev/null" \
	"and none of research's"

api "$RESEARCH" "/v1/usage?pool=shared-x" >"$T/use-r.json" || fail "research's usage"
check "jq -e '[.pools[].instances] | add == 1' $T/use-r.json >/dev/null" \
	"research's usage of shared-x counts its own instance only"
api "$PRODUCT" "/v1/usage" >"$T/use-p.json" || fail "product's usage"
check "jq -e '[.pools[] | select(.pool == \"shared-x\" and .team == \"product\")][0].instances == 1' $T/use-p.json >/dev/null" \
	"product's usage keeps its instance of shared-x"
api "$ADMIN" /v1/audit >"$T/audit.json" || fail "the admin's audit"
check "jq -e '[.audit[] | select(.action == \"destroy\" and .target == \"shared-x\")] | length == 1 and all(.[]; .pool == \"shared-x\" and .pool_team == \"product\" and .pool_incarnation == 1)' $T/audit.json >/dev/null" \
	"the audit's destroy of shared-x is product's pool, incarnation 1"
check "jq -e '[.audit[] | select(.action == \"apply\" and .target == \"shared-x\" and .team == \"research\")] | length >= 1 and all(.[]; .pool_team == \"research\" and .pool_incarnation == 2)' $T/audit.json >/dev/null" \
	"research's apply of the reused name is research's pool, incarnation 2"
check "jq -e '[.audit[] | select(.action == \"apply\" and .team == \"product\")] | length >= 1 and all(.[]; .pool_team == \"product\" and .pool_incarnation == 1)' $T/audit.json >/dev/null" \
	"product's apply was incarnation 1"
GPUBROKER_TOKEN=$ADMIN gb audit --team product -o json >"$T/audit-p.json" || fail "audit --team product"
check "jq -e 'length >= 2 and any(.[]; .action == \"destroy\") and all(.[]; .team == \"product\" or .pool_team == \"product\") and all(.[]; .pool_incarnation != 2)' $T/audit-p.json >/dev/null" \
	"audit --team product: product's rows, its destroy included, none of incarnation 2"
api "$ADMIN" "/v1/audit?team=research" >"$T/audit-r.json" || fail "the audit of research"
check "jq -e '(.audit | length >= 1) and all(.audit[]; .pool_team == \"research\" or .team == \"research\") and all(.audit[]; .pool_incarnation != 1)' $T/audit-r.json >/dev/null" \
	"GET /v1/audit?team=research: research's rows only, none of incarnation 1"
# the audit's new fields are docs/openapi.json's
api_keep GET /v1/audit 200 "$T/audit.json"
api_keep GET /v1/audit 200 "$T/audit-r.json"
api_check
echo PASS
