#!/bin/sh
# admission_queue.sh -- issue 35 through a daemon: two teams on a 2-node
# on-prem site (local transport).  A pool that does not fit waits,
# unconverged, with its place in `gpubroker queue`, GET /v1/queue (a
# team's token sees the other team's pools by team only) and its
# status's `waiting`; the team under its share goes first whatever the
# arrival order; freed nodes go to the head at the next pass; a
# production pool facing a preemptible dev pool gets a preemption
# decision, an event on both pools with the notice, and after the grace
# the dev pool's instance ends and the dev pool waits again.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_RECONCILE_PERIOD=1s
cat >"$T/nodes.yaml" <<YAML
sites:
  - {name: lab, lat: 52.52, lon: 13.40, jurisdiction: EU, country: DE}
nodes:
  - {name: n1, site: lab, transport: local, gpus: {model: A100-80GB, count: 4}, price_per_gpu_hour: 1.5}
  - {name: n2, site: lab, transport: local, gpus: {model: A100-80GB, count: 4}, price_per_gpu_hour: 1.5}
YAML
CONF=$T/broker.yaml
cat >"$CONF" <<YAML
broker_id: gbtest
state: $T/state.db
onprem: {inventory: $T/nodes.yaml}
listen: 127.0.0.1:0
daemon: {reconcile_period: 1s}
drivers:
  - name: onprem
teams:
  - {name: ta, share: 1}
  - {name: tb, share: 1}
tokens:
  - {name: admin, role: admin, sha256: $(printf %s adm-token-issue35-0123456789 | sha256sum | cut -d' ' -f1)}
  - {name: tb-op, role: operator, team: tb, sha256: $(printf %s tb-token-issue35-0123456789 | sha256sum | cut -d' ' -f1)}
YAML
export GPUBROKER_TOKEN=adm-token-issue35-0123456789

spec() { # NAME TEAM COUNT [extra lines...]
	_n=$1 _t=$2 _k=$3
	shift 3
	{
		echo "pool:"
		echo "  name: $_n"
		echo "  team: $_t"
		echo "  purpose: training"
		echo "  count: $_k"
		echo "  gpu: {model: A100-80GB, count: 4}"
		echo "  capacity: [on-demand]"
		echo "  placement: {clouds: [onprem], colocate: none}"
		for _l in "$@"; do
			echo "  $_l"
		done
	} >"$T/$_n.yaml"
	gb apply -f "$T/$_n.yaml" --auto-approve >>"$T/apply.log" 2>&1 ||
		fail "apply $_n: $(tail -n 5 "$T/apply.log")"
}
pool() { # NAME JQ
	curl -sf -H "Authorization: Bearer $GPUBROKER_TOKEN" \
		"$GPUBROKER_SERVER/v1/pools/$1" | jq -r "$2"
}
queue() { # [TOKEN]
	curl -sf -H "Authorization: Bearer ${1:-$GPUBROKER_TOKEN}" \
		"$GPUBROKER_SERVER/v1/queue"
}

daemon_start
spec ta-1 ta 2
wait_until 20 "[ \"\$(pool ta-1 .running)\" = 2 ]" ||
	fail "ta-1 never ran on both nodes: $(pool ta-1 .)"
echo "ok: ta-1 (team ta) holds both nodes"

# ta-2 arrives before tb-1; tb holds nothing, ta holds the site
spec ta-2 ta 1
spec tb-1 tb 1
wait_until 10 "[ \"\$(queue | jq -r '[.queue[].pool] | join(\",\")')\" = tb-1,ta-2 ]" ||
	fail "queue order: $(queue)"
echo "ok: the queue serves tb-1 (team under its share) before the earlier ta-2"
check "[ \"\$(queue | jq -r '.queue[0].waits_for')\" = onprem:lab ]" \
	"tb-1 waits for onprem:lab"
check "[ \"\$(queue | jq -r '.queue[1].ahead | join(\",\")')\" = tb-1 ]" \
	"ta-2 names tb-1 ahead of it"
check "[ \"\$(queue | jq -r '.resources[0] | \"\(.name) \(.capacity) \(.used)\"')\" = 'onprem:lab 2 2' ]" \
	"the site's capacity and use"
wait_until 10 "pool tb-1 .waiting.reason | grep -q '^queued: position 1, waits for onprem:lab'" ||
	fail "tb-1's waiting: $(pool tb-1 .waiting)"
echo "ok: status's waiting says tb-1's place"
check "[ \"\$(pool ta-2 .pending)\" = 0 ] && [ \"\$(pool ta-2 .running)\" = 0 ]" \
	"a queued pool is not converged (nothing created)"
# team tb's token: its own pool by name, ta's by team only
check "[ \"\$(queue tb-token-issue35-0123456789 | jq -r '[.queue[] | \"\(.pool)|\(.reason // \"-\")\"] | join(\";\")')\" = 'tb-1|position 1, waits for onprem:lab (0 of 2 free, needs 1);a pool of team ta|-' ]" \
	"a team's token sees the other team's pool by team only"
gb queue >"$T/queue.out" 2>&1 || fail "gpubroker queue: $(cat "$T/queue.out")"
cat "$T/queue.out"
grep -Eq '^ *1 +tb-1 +tb +100 +1 +0 +onprem:lab +position 1' "$T/queue.out" ||
	fail "gpubroker queue's first row"
grep -Eq '^ *2 +ta-2 +ta .*ahead: tb-1$' "$T/queue.out" || fail "gpubroker queue's second row"
check "gb events --pool tb-1 | grep -q 'queued: position 1'" \
	"a queued event on tb-1"

# the site frees: the head is served at the next pass
gb destroy ta-1 --auto-approve >>"$T/apply.log" 2>&1 || fail "destroy ta-1"
wait_until 20 "[ \"\$(pool tb-1 .running)\" = 1 ] && [ \"\$(pool ta-2 .running)\" = 1 ]" ||
	fail "freed nodes not served: tb-1 $(pool tb-1 .) ta-2 $(pool ta-2 .)"
check "[ \"\$(queue | jq '.queue | length')\" = 0 ]" "the queue is empty"
check "[ \"\$(pool tb-1 .waiting)\" = null ]" "tb-1 waits no more"
echo "ok: freed nodes go to the queue's head"

# priority: ta-2 and a preemptible dev-class pool dev-1 fill the site; a
# production pool of tb gets a preemption decision against dev-1
gb destroy tb-1 --auto-approve >>"$T/apply.log" 2>&1 || fail "destroy tb-1"
spec dev-1 ta 1 "priority: dev" "lifecycle: {preemptible: true, preempt_grace: 3s}"
wait_until 20 "[ \"\$(pool dev-1 .running)\" = 1 ]" || fail "dev-1 never ran"
spec prod-1 tb 1 "priority: production"
wait_until 10 "queue | jq -e '.preemptions[0] | .victim == \"dev-1\" and .for == \"prod-1\" and .why == \"priority\"' >/dev/null" ||
	fail "no preemption decision: $(queue)"
check "queue | jq -e '.queue[0] | .pool == \"prod-1\" and .preempting' >/dev/null" \
	"prod-1 heads the queue, preemption under way"
wait_until 10 "gb events --pool dev-1 | grep -q 'preempted on onprem:lab for pool prod-1 (priority 1000 over 10)'" ||
	fail "no preempt event on dev-1: $(gb events --pool dev-1)"
check "gb events --pool prod-1 | grep -q 'preempted on onprem:lab for pool prod-1'" \
	"the preempt event on prod-1 too"
check "gb events --pool dev-1 | grep -q 'notice: they end in 3s'" \
	"the victim's event gives the notice"
# the grace over: dev-1's instance ends, prod-1 runs, dev-1 waits again
wait_until 20 "[ \"\$(pool prod-1 .running)\" = 1 ]" ||
	fail "prod-1 never ran: $(pool prod-1 .) $(gb events --pool dev-1)"
check "gb events --pool dev-1 | grep -q 'ended after the grace'" \
	"the victim's instance ended after the grace (an event)"
check "[ \"\$(pool dev-1 .running)\" = 0 ] && [ \"\$(pool dev-1 .desired)\" = 1 ]" \
	"dev-1 keeps its size and holds nothing"
wait_until 10 "[ \"\$(queue | jq -r '.queue[0].pool')\" = dev-1 ]" ||
	fail "dev-1 does not wait again: $(queue)"
echo "ok: dev-1 waits in the queue for its node again"
check "[ \"\$(gb events --pool dev-1 | grep -c 'notice: they end in')\" = 1 ]" \
	"told once, not every pass"
# locally (no daemon): the same decision over the same state
check "[ \"\$(env -u GPUBROKER_SERVER -u GPUBROKER_TOKEN \"\$GB\" -c \"\$CONF\" queue -o json | jq -r '.queue[0].pool')\" = dev-1 ]" \
	"gpubroker queue without a daemon decides the same"
echo "PASS"
