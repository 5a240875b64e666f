#!/bin/sh
# lambda_engine.sh -- the lambda driver under the engine, against
# cloudsim's Lambda API: a pool placed on lambda is planned, applied
# (instance name carrying pool/broker/token, the pool's SSH key
# registered once) and destroyed with nothing left; failover from lambda
# (no capacity) to another cloud and from another cloud (no spot
# capacity) to lambda; an apply SIGKILLed after Lambda made the
# instances but before the broker recorded them is recovered by the next
# apply without a duplicate (Lambda has no idempotency token: the driver
# finds them by name); gc finds a lambda instance the state never knew
# (tagged, or carrying our broker only in its name) and leaves another
# broker's alone.
. "$GB_SRC/tests/lib/integration.sh"

sim_start

# curl against cloudsim's Lambda API with the exported key
lapi() { # METHOD PATH [JSON]
	if [ $# -ge 3 ]; then
		curl -sf -X "$1" -H "Authorization: Bearer $LAMBDA_API_KEY" \
			-H 'Content-Type: application/json' -d "$3" "$LAMBDA_ENDPOINT_URL$2"
	else
		curl -sf -X "$1" -H "Authorization: Bearer $LAMBDA_API_KEY" "$LAMBDA_ENDPOINT_URL$2"
	fi
}
# every instance cloudsim ever made for a pool, any state (duplicates show)
sim_all() {
	curl -sf "$CONTROL/_sim/instances?cloud=lambda" |
		jq --arg p "$1" '[.instances[] | select(.tags["gpubroker-pool"] == $p)] | length'
}
first_choice() { # SPEC -> "cloud region type capacity"
	gb plan -f "$1" -o json | jq -r '.[0].candidates[0] |
		"\(.cloud) \(.region) \(.instance_type) \(.capacity)"'
}

# 0. the driver's region facts (its `sites` answer) reach placement: a
# GDPR pool goes to Lambda's EU regions only; data locality in Tokyo
# picks Tokyo first
PLACE='{clouds: [lambda], compliance: [gdpr]}' write_spec "$T/eu.yaml" lam-eu lambda H100 1
gb plan -f "$T/eu.yaml" -o json >"$T/eu.plan" 2>"$T/eu.log" || fail "plan of a GDPR lambda pool: $(cat "$T/eu.log")"
check "jq -e '[.[0].candidates[].region] | length > 0 and all(. == \"europe-central-1\" or . == \"europe-south-1\")' $T/eu.plan >/dev/null" \
	"a GDPR pool on lambda is placed only in Lambda's EU regions (Germany, Italy)"
PLACE='{clouds: [lambda], data: {region: asia-northeast-2}}' write_spec "$T/tyo.yaml" lam-tyo lambda H100 1 on-demand \
	"policy: [data-locality]"
gb plan -f "$T/tyo.yaml" -o json >"$T/tyo.plan" 2>"$T/tyo.log" || fail "plan near Tokyo: $(cat "$T/tyo.log")"
check "jq -e '[.[0].candidates[].region] == [\"asia-northeast-2\", \"asia-northeast-1\"] or [.[0].candidates[].region | select(. != \"asia-northeast-2\" and . != \"asia-northeast-1\")] == [] and .[0].candidates[0].region == \"asia-northeast-2\"' $T/tyo.plan >/dev/null" \
	"data in Lambda's Tokyo region with the data-locality policy: Tokyo first, then Osaka, nothing farther"

# 1. plan, apply, destroy on lambda
write_spec "$T/a.yaml" lam-basic lambda A10 2
gb plan -f "$T/a.yaml" -o json >"$T/a.plan" 2>"$T/a.plan.log" ||
	fail "plan of a lambda pool: $(cat "$T/a.plan.log")"
check "jq -e '.[0].candidates[0].cloud == \"lambda\" and .[0].candidates[0].instance_type == \"gpu_1x_a10\"' $T/a.plan >/dev/null" \
	"the plan places the A10 pool on lambda (gpu_1x_a10)"
gb apply -f "$T/a.yaml" --auto-approve --wait --timeout 60s -o json >"$T/a.json" 2>"$T/a.log" ||
	fail "apply on lambda: $(tail -5 "$T/a.log")"
check "[ \"\$(sim_live lam-basic)\" = 2 ] && [ \"\$(store_live lam-basic)\" = 2 ]" \
	"cloudsim and the store both hold the 2 instances"
check "jq -e '[.[0].instances[] | select(.cloud == \"lambda\" and .state == \"running\")] | length == 2' $T/a.json >/dev/null" \
	"both are lambda instances, running"
curl -sf "$CONTROL/_sim/instances?cloud=lambda&live=1" >"$T/a.sim"
check "jq -e --arg b \"$GPUBROKER_BROKER_ID\" '[.instances[] | select(.tags[\"gpubroker-pool\"] == \"lam-basic\") | .name | select(startswith(\"gb.lam-basic.\" + \$b + \".gb\"))] | length == 2' $T/a.sim >/dev/null" \
	"their Lambda name carries pool, broker and token: $(jq -r '.instances[0].name' "$T/a.sim")"
check "jq -e --arg b \"$GPUBROKER_BROKER_ID\" '[.instances[] | select(.tags[\"gpubroker-pool\"] == \"lam-basic\" and .tags[\"gpubroker-broker\"] == \$b and .tags[\"gpubroker-team\"] == \"research\" and (.tags[\"gpubroker-token\"] | length) > 0)] | length == 2' $T/a.sim >/dev/null" \
	"and the gpubroker tags"
lapi GET /ssh-keys >"$T/keys.json" || fail "GET /ssh-keys"
check "[ \"\$(jq '[.data[] | select(.name | startswith(\"gpubroker-\"))] | length' $T/keys.json)\" = 1 ]" \
	"the pool's SSH key was registered once, as gpubroker-<hash>"
gb destroy lam-basic --auto-approve >/dev/null 2>"$T/a.destroy.log" || fail "destroy lam-basic: $(cat "$T/a.destroy.log")"
wait_until 10 "[ \"\$(sim_live lam-basic)\" = 0 ]" || fail "lam-basic still live in cloudsim after destroy"
check "[ \"\$(store_live lam-basic)\" = 0 ]" "destroyed: nothing left in cloudsim or the store"

# 2. failover from lambda (no capacity) to another cloud
PLACE='{clouds: [lambda, gcp], regions: [us-east-1, us-east4], colocate: none}' \
	write_spec "$T/f.yaml" lam-fo lambda "H100, count: 8" 1
set -- $(first_choice "$T/f.yaml")
echo "first choice: $*"
[ "$1" = lambda ] || fail "expected lambda to be the first choice for 8 H100 on-demand, got $*"
sim_post /_sim/scenario '{"capacity": [{"cloud": "lambda", "count": 0}]}'
gb apply -f "$T/f.yaml" --auto-approve --wait --timeout 90s -o json >"$T/f.json" 2>"$T/f.log" ||
	fail "apply with no lambda capacity: $(tail -5 "$T/f.log")"
check "jq -e '.[0].instances[0].cloud == \"gcp\"' $T/f.json >/dev/null" "placed on gcp instead"
check "grep -q 'failover.*insufficient-capacity' $T/f.log" "the failover names Lambda's capacity code"
check "[ \"\$(sim_all lam-fo)\" = 0 ]" "Lambda made nothing for the pool"
gb destroy lam-fo --auto-approve >/dev/null 2>&1 || fail "destroy lam-fo"
sim_post /_sim/scenario '{"capacity": []}'

# 3. failover from another cloud (no capacity) to lambda (on-demand);
#    another lambda region: us-east-1 is cooling down after case 2
PLACE='{clouds: [gcp, lambda], regions: [us-east4, us-west-2], colocate: none}' \
	write_spec "$T/g.yaml" lam-in gcp "H100, count: 8" 1 "spot, on-demand"
set -- $(first_choice "$T/g.yaml")
echo "first choice: $*"
[ "$1" = gcp ] && [ "$4" = spot ] || fail "expected gcp spot first, got $*"
sim_post /_sim/scenario '{"capacity": [{"cloud": "gcp", "count": 0}]}'
gb apply -f "$T/g.yaml" --auto-approve --wait --timeout 120s -o json >"$T/g.json" 2>"$T/g.log" ||
	fail "apply with no gcp capacity: $(tail -5 "$T/g.log")"
check "jq -e '.[0].instances[0].cloud == \"lambda\" and .[0].instances[0].region == \"us-west-2\" and .[0].instances[0].capacity == \"on-demand\"' $T/g.json >/dev/null" \
	"placed on lambda in us-west-2, on-demand"
check "grep -q 'failover.*ZONE_RESOURCE_POOL_EXHAUSTED' $T/g.log" "the failover names GCE's capacity code"
check "[ \"\$(sim_live lam-in)\" = 1 ]" "cloudsim has the one lambda instance"
gb destroy lam-in --auto-approve >/dev/null 2>&1 || fail "destroy lam-in"
sim_post /_sim/scenario '{"capacity": []}'

# 4. crash after the launch: Lambda makes the instances, the answer is
#    lost (500); the driver waits a second, then lists them by name (3 s
#    of latency here), and the apply is SIGKILLed in those 4 seconds.  The
#    next apply replays the open intent: the driver finds them by name,
#    launches nothing.
write_spec "$T/c.yaml" lam-crash lambda A10 3
sim_post /_sim/scenario '{"lost_response": {"lambda": {"launchInstance": 1}}, "latency": {"lambda": {"listInstances": {"base_ms": 3000}}}}'
"$GB" -c "$CONF" apply -f "$T/c.yaml" --auto-approve >"$T/c1.out" 2>"$T/c1.log" &
pid=$!
wait_until 20 "[ \"\$(sim_all lam-crash)\" -ge 1 ]" || fail "Lambda never made the instances: $(tail -5 "$T/c1.log")"
kill -KILL "$pid" 2>/dev/null || fail "the apply had already finished: the kill did not land"
wait "$pid" 2>/dev/null || true
sim_post /_sim/scenario '{"lost_response": {"lambda": {"launchInstance": 0}}, "latency": {"lambda": {"listInstances": {"base_ms": 0}}}}'
check "[ \"\$(sim_all lam-crash)\" = 3 ]" "killed after the launch: cloudsim made 3"
gb events --pool lam-crash >"$T/c.events0" 2>&1 || true
check "! grep -q 'created lam-crash' $T/c.events0" "the killed apply recorded none of them"
gb apply -f "$T/c.yaml" --auto-approve --wait --timeout 60s >"$T/c2.out" 2>"$T/c2.log" ||
	fail "apply after the kill: $(tail -5 "$T/c2.log")"
gb events --pool lam-crash >"$T/c.events" 2>&1 || fail "events"
cat "$T/c.events"
check "grep -q 'recovered' $T/c.events" "the restart recovered the interrupted create"
check "[ \"\$(sim_all lam-crash)\" = 3 ]" "no duplicate: cloudsim ever made exactly 3 for the pool"
check "[ \"\$(sim_live lam-crash)\" = 3 ] && [ \"\$(store_live lam-crash)\" = 3 ]" \
	"recovered: the store holds the 3 Lambda made before the kill"
gb destroy lam-crash --auto-approve >/dev/null 2>&1 || fail "destroy lam-crash"
wait_until 10 "[ \"\$(sim_live lam-crash)\" = 0 ]" || fail "lam-crash still live after destroy"

# 5. gc: instances the state never knew
launch() { # NAME [TAGS-JSON]
	lapi POST /instance-operations/launch \
		"{\"region_name\": \"us-east-1\", \"instance_type_name\": \"gpu_1x_a10\", \"ssh_key_names\": [\"$LAMBDA_SSH_KEY_NAME\"], \"quantity\": 1, \"name\": \"$1\"${2:+, \"tags\": $2}}" |
		jq -r '.data.instance_ids[0]'
}
tagged=$(launch leaked-by-hand "[{\"key\": \"gpubroker-broker\", \"value\": \"$GPUBROKER_BROKER_ID\"}, {\"key\": \"gpubroker-pool\", \"value\": \"ghost\"}]")
named=$(launch "gb.ghost.$GPUBROKER_BROKER_ID.tok-by-hand")
foreign=$(launch "gb.ghost.someone-else.tok-theirs")
[ -n "$tagged" ] && [ -n "$named" ] && [ -n "$foreign" ] || fail "could not launch the test instances with curl"
gb gc -o json >"$T/gc.json" 2>"$T/gc.log" || fail "gc: $(cat "$T/gc.log")"
check "jq -e --arg id $tagged '.[] | select(.id == \$id and .cloud == \"lambda\" and .action == \"terminated\")' $T/gc.json >/dev/null" \
	"gc terminated the instance tagged with our broker"
check "jq -e --arg id $named '.[] | select(.id == \$id and .action == \"terminated\")' $T/gc.json >/dev/null" \
	"gc terminated the one whose name alone carries our broker"
check "! jq -e --arg id $foreign '.[] | select(.id == \$id)' $T/gc.json >/dev/null" \
	"gc left another broker's instance alone"
wait_until 10 "[ \"\$(curl -sf '$CONTROL/_sim/instances?cloud=lambda&live=1' | jq -r '[.instances[].id] | sort | join(\",\")')\" = $foreign ]" ||
	fail "after gc cloudsim's live lambda instances are $(curl -sf "$CONTROL/_sim/instances?cloud=lambda&live=1" | jq -c '[.instances[].id]')"
echo "ok: only the other broker's instance still runs"
lapi POST /instance-operations/terminate "{\"instance_ids\": [\"$foreign\"]}" >/dev/null || fail "terminate the foreign instance"
gb gc -o json >"$T/gc2.json" 2>"$T/gc2.log" || fail "second gc: $(cat "$T/gc2.log")"
check "[ \"\$(jq length $T/gc2.json)\" = 0 ]" "a second gc finds nothing"
wait_until 10 "[ \"\$(sim_live)\" = 0 ]" || fail "cloudsim still has live instances"
echo "ok: nothing left running in cloudsim"
echo PASS
