#!/bin/sh
# agent_boot.sh -- cloudsim "boots" an agent pool's instances (POST
# /_sim/agents): each running GCE instance whose user data carries the
# broker's agent config gets a real gpubroker-agent process a set delay
# after it ran, with the fake NVML; `apply --wait` through the daemon
# returns once every instance is ready, not at running; the instances'
# agents stop with them.
. "$GB_SRC/tests/lib/integration.sh"

. "$GB_SRC/tests/lib/agent.sh"
agent_start
agent_config "interval: 1s"

mkdir -p "$T/gpus" "$T/agents"
echo "NVIDIA_L4 23034 512 60" >"$T/gpus/default"
sim_post /_sim/agents "{\"binary\": \"$AGENT\", \"nvml_library\": \"$NVML\", \"gpus_dir\": \"$T/gpus\", \"dir\": \"$T/agents\", \"delay_ms\": 2000}"

write_spec "$T/bt.yaml" bt gcp L4 2 on-demand "agent: true"
gb apply -f "$T/bt.yaml" --auto-approve --wait --timeout 40 -o json >"$T/apply.json" 2>"$T/apply.err" ||
	fail "apply --wait: $(cat "$T/apply.err")"
check "jq -e '.[0].ready == 2 and ([.[0].instances[] | select(.state == \"ready\")] | length) == 2' '$T/apply.json' >/dev/null" \
	"apply --wait returned with both instances ready"
ev() { curl -sf -H "Authorization: Bearer $GPUBROKER_TOKEN" "$GPUBROKER_SERVER/v1/events?pool=bt&limit=200"; }
# each booted 2 s after it ran: ready no sooner than that after the
# cloud made it
for n in bt-0 bt-1; do
	made=$(curl -sf "$CONTROL/_sim/instances" | jq -r --arg n "$n" "$JQ_TIME"' .instances[] | select(.name == $n) | .created | ms')
	ready=$(ev | jq -r --arg n "$n" "$JQ_TIME"' [.events[] | select(.kind == "ready" and .instance == $n) | .time | ms] | min')
	check "[ $((ready - made)) -ge 2000 ]" "$n was ready $((ready - made)) ms after the cloud made it (booted after 2000)"
done
check "[ -s '$T/agents/bt-0.cred' ] && [ -s '$T/agents/bt-1.cred' ]" "each booted agent holds its credential"
check "grep -q '^metadata_url = .*/_sim/meta/bt-0$' '$T/agents/bt-0.conf'" "pointed at its instance's metadata service"

gb destroy bt --auto-approve >/dev/null 2>&1 || fail "destroy bt"
wait_until 15 "! pgrep -f '$T/agents/' >/dev/null" || fail "the agents outlived their instances"
echo "ok: the agents stopped with their instances"
echo "PASS agent_boot"
