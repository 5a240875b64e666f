#!/bin/sh
# pool_targets.sh -- GET /v1/pools/NAME/targets (issue 42 point 3): the
# pool's running instances in Prometheus HTTP service-discovery form,
# with the spec's serve.port, one group per instance with its labels;
# an ETag, and ?wait=&version= long-polls until the list changes (a
# scale-up); a team's token sees its own pools only.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_RECONCILE_PERIOD=1s
export GPUBROKER_INVENTORY="$GB_SRC/examples/demo-inventory.yaml"
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
H="Authorization: Bearer $GPUBROKER_TOKEN"
targets() { curl -sf -H "$H" "$GPUBROKER_SERVER/v1/pools/tg-a/targets${1:-}"; }

write_spec "$T/t.yaml" tg-a aws A10G 2 on-demand "purpose: inference" "min: 1" "max: 4" "serve: {port: 8000}"
gb apply -f "$T/t.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply.log" ||
	fail "apply tg-a: $(tail -3 "$T/apply.log")"
targets >"$T/t1.json" || fail "GET targets"
check "jq -e 'length == 2 and all(.[]; (.targets | length) == 1 and (.targets[0] | test(\"^[0-9.]+:8000\$\")))' $T/t1.json >/dev/null" \
	"two running instances, each ip:8000 ($(cat "$T/t1.json"))"
check "jq -e '.[0].labels | .pool == \"tg-a\" and .team == \"research\" and .cloud == \"aws\" and (.zone | length) > 0 and .capacity == \"on-demand\" and (.name | startswith(\"tg-a-\"))' $T/t1.json >/dev/null" \
	"each group has the pool, team, name, cloud, zone and capacity labels"
ips=$(gb status tg-a -o json | jq -c '[.instances[] | select(.state == "running") | (.private_ip // .public_ip) + ":8000"] | sort')
check "[ \"\$(jq -c '[.[].targets[0]] | sort' $T/t1.json)\" = '$ips' ]" "the addresses are the running instances' ($ips)"
check "[ \"\$(targets '?address=public' | jq -c '[.[].targets[0]] | sort')\" = \"\$(gb status tg-a -o json | jq -c '[.instances[] | select(.state == \"running\") | .public_ip + \":8000\"] | sort')\" ]" \
	"?address=public gives the public addresses"
etag=$(curl -sf -D - -o /dev/null -H "$H" "$GPUBROKER_SERVER/v1/pools/tg-a/targets" | tr -d '\r' | sed -n 's/^[Ee][Tt]ag: //p')
check "[ -n '$etag' ]" "the answer has an ETag ($etag)"
# the same version: the long poll waits out its time
t0=$(date +%s)
targets "?wait=2&version=$(printf %s "$etag" | jq -sRr @uri)" >"$T/t2.json"
check "[ \$((\$(date +%s) - t0)) -ge 2 ] && cmp -s $T/t1.json $T/t2.json" "nothing changed: the long poll answered the same list after wait=2"
# a scale-up: the long poll answers once the third instance runs
targets "?wait=30&version=$(printf %s "$etag" | jq -sRr @uri)" >"$T/t3.json" &
LP=$!
BG_PIDS="$BG_PIDS $LP"
curl -sf -X POST -H "$H" -H 'Content-Type: application/json' -d '{"count": 3}' "$GPUBROKER_SERVER/v1/pools/tg-a/scale" >/dev/null ||
	fail "scale tg-a"
wait_until 30 "! kill -0 $LP" || fail "the long poll did not answer the change"
check "jq -e 'length == 3' $T/t3.json >/dev/null" "the long poll answered with the third instance ($(cat "$T/t3.json"))"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer demo-other-team-token' $GPUBROKER_SERVER/v1/pools/tg-a/targets)\" = 404 ]" \
	"another team's token does not see the pool"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H \"\$H\" '$GPUBROKER_SERVER/v1/pools/tg-a/targets?wait=600')\" = 400 ]" \
	"a wait over 60 s is refused"
echo "PASS"
