#!/bin/sh
# agent.sh -- the instance agent (issue 33) end to end: an agent: true
# pool applied through the daemon on cloudsim (GCE); each instance's user
# data carries a one-time bootstrap token in a cloud-init part, before
# the user's own part; real gpubroker-agent processes (config taken from
# cloudsim's recorded user data, NVML from the tests' fake library)
# register and report; `apply --wait` returns only once they reported
# the offer's GPUs (instances "ready"); the reports are the heartbeats;
# a replayed, wrong or another instance's token, another instance's
# name, a malformed report and a flood are refused; a destroyed
# instance's credential is refused and its agent stops.
. "$GB_SRC/tests/lib/integration.sh"

. "$GB_SRC/tests/lib/agent.sh"
agent_start
H="Authorization: Bearer $GPUBROKER_TOKEN"
api() { curl -sf -H "$H" "$GPUBROKER_SERVER$1"; }
pool() { api "/v1/pools/ag"; }
# post PATH BODY [BEARER]: prints the HTTP status; the body in $T/resp
post() {
	if [ $# -ge 3 ]; then
		curl -s -o "$T/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $3" \
			-H 'Content-Type: application/json' -d "$2" "$GPUBROKER_SERVER$1"
	else
		curl -s -o "$T/resp" -w '%{http_code}' -X POST \
			-H 'Content-Type: application/json' -d "$2" "$GPUBROKER_SERVER$1"
	fi
}

# autoscaled on the agents' utilisation: 2..3, up above 0.5 for 2s; an
# idle pool (no GPU use for 6s) goes back to its min
write_spec "$T/ag.yaml" ag gcp L4 2 on-demand "agent: true" \
	"user_data: \"#!/bin/sh\\necho user-part-ran\\n\"" \
	"purpose: inference" "min: 2" "max: 3" \
	"autoscale: {gpu_util_target: 0.5, up_after: 2s, down_after: 5m}" \
	"lifecycle: {idle_timeout: 6s}"

# without agent.broker_url an agent pool is refused, nothing stored
if gb apply -f "$T/ag.yaml" --auto-approve >"$T/refused.out" 2>&1; then
	fail "an agent pool was applied without agent.broker_url"
fi
check "grep -q 'agent.broker_url' '$T/refused.out'" "the refusal names agent.broker_url"

agent_config "interval: 1s, bootstrap_ttl: 10m, package: \"$AGENT\""

gb apply -f "$T/ag.yaml" --auto-approve --wait --timeout 50 >"$T/apply.out" 2>&1 &
APPLY_PID=$!
BG_PIDS="$BG_PIDS $APPLY_PID"
wait_until 30 "[ \"\$(pool | jq .running)\" = 2 ]" || fail "ag never ran 2 instances ($(cat "$T/apply.out"))"
check "pool | jq -e '.agent == true and .ready == 0 and ([.instances[] | select(.state == \"running\")] | length) == 2' >/dev/null" \
	"running, not ready, before any agent reported"
check "kill -0 $APPLY_PID" "apply --wait has not returned at running"

# agent_configs: each instance's agent config, from the user data
# cloudsim recorded, into $T/agent.NAME.conf (what cloud-init would
# write); prints the names new since the last call
agent_configs() {
	curl -sf "$CONTROL/_sim/instances?live=1" |
		jq -c '.instances[] | select(.tags["gpubroker-pool"] == "ag")' >"$T/sim.json"
	while read -r line; do
		ud=$(printf "%s\n" "$line" | jq -r .user_data)
		name=$(printf "%s\n" "$ud" | sed -n 's/^      instance = //p')
		[ -n "$name" ] || fail "no agent config in the user data: $ud"
		[ -f "$T/agent.$name.conf" ] && continue
		printf "%s\n" "$ud" >"$T/ud.$name"
		{
			printf "%s\n" "$ud" | sed -n 's/^      \(broker_url\|instance\|bootstrap_token\|interval\|metadata\) = /\1 = /p'
			# the instance's metadata service (GCE's), as cloudsim serves it
			echo "metadata_url = $CONTROL/_sim/meta/$(printf "%s\n" "$line" | jq -r .id)"
			echo "credential_file = $T/cred.$name"
			echo "nvml_library = $NVML"
		} >"$T/agent.$name.conf"
		echo "$name"
	done <"$T/sim.json"
}
check "[ \"\$(agent_configs | sort | tr '\\n' ' ')\" = 'ag-0 ag-1 ' ]" "cloudsim has the 2 instances, each with an agent config"
check "[ -f '$T/ud.ag-0' ] && [ -f '$T/ud.ag-1' ]" "ag-0 and ag-1 each have their agent config"
check "grep -q '^Content-Type: multipart/mixed' '$T/ud.ag-0' && grep -q '^Content-Type: text/x-shellscript' '$T/ud.ag-0' && grep -q 'echo user-part-ran' '$T/ud.ag-0'" \
	"the user data is MIME multipart and still carries the user's own script"
# the agent package (agent.package: here the agent's binary), served
# by the broker and pinned by its SHA-256 in the user data
sha=$(sha256sum "$AGENT" | cut -d' ' -f1)
check "grep -q \"curl -fsS .* $GPUBROKER_SERVER/v1/agent/package; echo \\\"$sha  \" '$T/ud.ag-0'" \
	"the bootstrap fetches the agent from the broker, pinned by its SHA-256"
check "[ \"\$(curl -sf $GPUBROKER_SERVER/v1/agent/package | sha256sum | cut -d' ' -f1)\" = '$sha' ]" \
	"GET /v1/agent/package serves that package"
check "grep -q '^  - path: /etc/systemd/system/gpubroker-agent.service' '$T/ud.ag-0'" \
	"a bare binary comes with its unit"
# the agent's part is cloud-config YAML cloud-init can read
sed -n '/^#cloud-config$/,/^--==gpubroker-agent-part==/p' "$T/ud.ag-0" | sed '$d' >"$T/cc.yaml"
check "/usr/bin/python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert d[\"write_files\"][0][\"path\"] == \"/etc/gpubroker-agent.conf\" and \"bootstrap_token = \" in d[\"write_files\"][0][\"content\"] and len(d[\"runcmd\"]) == 2 and d[\"ssh_authorized_keys\"][0].startswith(\"ssh-ed25519 \")' '$T/cc.yaml'" \
	"the agent's cloud-config part is valid YAML (write_files, runcmd, the spec's ssh keys)"
tok0=$(sed -n 's/^bootstrap_token = //p' "$T/agent.ag-0.conf")
tok1=$(sed -n 's/^bootstrap_token = //p' "$T/agent.ag-1.conf")
check "[ -n '$tok0' ] && [ '$tok0' != '$tok1' ]" "each instance has its own token"
check "! grep -rq '$tok0' '$T/daemon.log' '$T/state.db'" "the token is in neither the log nor the state"

check "grep -q '^metadata = gce' '$T/agent.ag-0.conf'" "the agent reads GCE's metadata service"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $CONTROL/_sim/meta/ag-0/computeMetadata/v1/instance/name)\" = 403 ]" \
	"cloudsim's GCE metadata wants Metadata-Flavor: Google"
check "[ \"\$(curl -sf -H 'Metadata-Flavor: Google' $CONTROL/_sim/meta/ag-0/computeMetadata/v1/instance/name)\" = ag-0 ]" \
	"and with it names the instance"

# bad tokens: wrong, another instance's, the right one from another
# instance (its metadata service names that one)
reg() { # INSTANCE TOKEN PROVIDER_ID
	post /v1/agent/register "{\"instance\": \"$1\", \"bootstrap_token\": \"$2\", \"provider_id\": \"$3\"}"
}
check "[ \"\$(reg ag-0 0123456789abcdef ag-0)\" = 401 ]" "a wrong bootstrap token is refused"
check "[ \"\$(reg ag-9 0123456789abcdef ag-9)\" = 401 ]" \
	"a wrong token for an instance that does not exist: 401 too (no instance names revealed)"
check "jq -e '.error.code == \"Unauthenticated\"' '$T/resp' >/dev/null" "with the API's error shape"
check "[ \"\$(reg ag-0 $tok1 ag-0)\" = 401 ]" "another instance's bootstrap token is refused"
check "[ \"\$(reg ag-0 $tok0 ag-1)\" = 401 ] && grep -q 'metadata service names another instance' '$T/resp'" \
	"ag-0's token used from ag-1 (its metadata names ag-1) is refused"
check "[ \"\$(reg ag-0 $tok0 '')\" = 401 ]" "and without the instance's identity"
check "[ \"\$(post /v1/agent/register '{\"instance\": 7}')\" = 400 ]" "a malformed register is refused"

# the agents boot: GPUs as the offer (L4, 24 GB), busy
start_agent() { # NAME UTIL%
	cnt=$(pool | jq --arg n "$1" '.instances[] | select(.name == $n) | .gpu_count')
	: >"$T/gpus.$1"
	i=0
	while [ "$i" -lt "$cnt" ]; do
		echo "NVIDIA_L4 23034 1024 $2" >>"$T/gpus.$1"
		i=$((i + 1))
	done
	FAKE_NVML_FILE=$T/gpus.$1 "$AGENT" -c "$T/agent.$1.conf" >"$T/agent.$1.log" 2>&1 &
	eval "AG_$(echo "$1" | tr - _)=$!"
	BG_PIDS="$BG_PIDS $!"
}
start_agent ag-0 90
wait_until 15 "[ -s '$T/cred.ag-0' ]" || fail "agent ag-0 never registered ($(cat "$T/agent.ag-0.log"))"
check "[ \"\$(post /v1/agent/register \"{\\\"instance\\\": \\\"ag-0\\\", \\\"bootstrap_token\\\": \\\"$tok0\\\"}\")\" = 401 ]" \
	"a replayed bootstrap token is refused"
wait_until 15 "[ \"\$(pool | jq .ready)\" = 1 ]" || fail "ag-0 never got ready ($(cat "$T/agent.ag-0.log"))"
check "kill -0 $APPLY_PID" "apply --wait still waits with 1 of 2 ready"
start_agent ag-1 80
wait_until 20 "! kill -0 $APPLY_PID" || fail "apply --wait did not return once both agents reported"
check "wait $APPLY_PID" "apply --wait succeeded ($(cat "$T/apply.out"))"
check "pool | jq -e '.ready == 2 and ([.instances[] | select(.state == \"ready\")] | length) == 2' >/dev/null" \
	"both instances are ready"
check "api '/v1/events?pool=ag&limit=200' | jq -e '[.events[] | select(.kind == \"ready\")] | length == 2' >/dev/null" \
	"a ready event per instance"

# the reports are the heartbeats: the pool's last heartbeat and usage
check "pool | jq -e '.last_heartbeat_at != null' >/dev/null" "the pool has heartbeats"
wait_until 10 "gb usage --pool ag -o json | jq -e '.measured_gpu_hours > 0 and .gpu_util > 0.75 and .gpu_util < 0.95'" ||
	fail "usage does not show the agents' GPU utilisation (80-90%): $(gb usage --pool ag -o json)"

# scaled on the agents' utilisation (0.85 > 0.5 for 2s): a third
# instance, whose agent "boots" with its own token
wait_until 20 "[ \"\$(pool | jq .desired)\" = 3 ]" ||
	fail "the agents' utilisation did not scale ag up ($(api '/v1/events?pool=ag&limit=200' | jq -r '.events[].message'))"
wait_until 20 "[ \"\$(pool | jq .running)\" = 3 ]" || fail "ag never ran its third instance"
check "[ \"\$(agent_configs)\" = ag-2 ]" "the new instance ag-2 has its agent config"
start_agent ag-2 90
wait_until 15 "[ \"\$(pool | jq .ready)\" = 3 ]" || fail "ag-2 never got ready ($(cat "$T/agent.ag-2.log"))"
echo "ok: scaled up on the fake NVML's utilisation: 3 ready"

# the fake GPUs go idle: no GPU use for idle_timeout (6s) -> back to min 2
for n in ag-0 ag-1 ag-2; do
	sed -i 's/ [0-9]*$/ 0/' "$T/gpus.$n"
done
wait_until 20 "[ \"\$(pool | jq .desired)\" = 2 ]" ||
	fail "idle fake GPUs did not bring ag back to its min ($(api '/v1/events?pool=ag&limit=200' | jq -r '.events[].message'))"
check "api '/v1/events?pool=ag&limit=200' | jq -e '[.events[] | select(.kind == \"idle\")] | length >= 1' >/dev/null" \
	"the idle scale-in is an event"
# the instance that went: its agent is refused and stops
gone=
wait_until 20 '[ "$(pool | jq "[.instances[] | select(.state == \"ready\")] | length")" = 2 ]' ||
	fail "ag did not come back to 2 ready instances"
for n in ag-0 ag-1 ag-2; do
	pool | jq -e --arg n "$n" '[.instances[] | select(.name == $n and .state == "ready")] | length == 1' >/dev/null || gone=$n
done
[ -n "$gone" ] || fail "no instance of ag went"
eval "gone_pid=\$AG_$(echo "$gone" | tr - _)"
wait_until 15 "! kill -0 $gone_pid" || fail "the agent of $gone (terminated) did not stop"
check "grep -q 'report refused' '$T/agent.$gone.log'" "the agent of $gone says why it stopped"
check "[ \"\$(post /v1/agent/report '{\"instance\": \"$gone\", \"gpus\": []}' \"$(cat "$T/cred.$gone")\")\" = 401 ]" \
	"a terminated instance's credential is refused"

# a credential reports for its own instance only
live=ag-0
[ "$gone" = ag-0 ] && live=ag-1
other=ag-2
[ "$gone" = ag-2 ] && other=ag-1
[ "$live" = ag-1 ] && [ "$other" = ag-1 ] && other=ag-2
cred=$(cat "$T/cred.$live")
check "[ \"\$(post /v1/agent/report '{\"instance\": \"$other\", \"gpus\": []}' \"$cred\")\" = 403 ]" \
	"$live's credential cannot report for $other"
check "[ \"\$(post /v1/agent/report '{\"instance\": \"$live\", \"gpus\": \"many\"}' \"$cred\")\" = 400 ]" \
	"a malformed report is refused"
check "jq -e '.error.code == \"BadRequest\"' '$T/resp' >/dev/null" "with the API's error shape"
check "[ \"\$(post /v1/agent/report '{\"instance\": \"$live\", \"gpus\": []}' gba_0000)\" = 401 ]" \
	"an unknown credential is refused"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H \"Authorization: Bearer $cred\" $GPUBROKER_SERVER/v1/pools/ag)\" = 401 ]" \
	"the instance credential cannot read a pool"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H \"Authorization: Bearer $cred\" $GPUBROKER_SERVER/v1/pools/ag)\" = 401 ]" \
	"nor destroy one"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -X POST -H \"Authorization: Bearer $cred\" -H 'Content-Type: application/json' -d '{\"count\": 9}' $GPUBROKER_SERVER/v1/pools/ag/scale)\" = 401 ]" \
	"nor scale one"
# a flood: at most 60 a minute per instance
i=0 got=
while [ "$i" -lt 70 ]; do
	got="$got $(post /v1/agent/report "{\"instance\": \"$live\", \"gpus\": []}" "$cred")"
	i=$((i + 1))
done
check "echo '$got' | grep -q 429" "a report flood is rate-limited (429)"

# destroyed: the credentials are refused and the agents stop
gb destroy ag --auto-approve >/dev/null 2>&1 || fail "destroy ag"
check "[ \"\$(post /v1/agent/report '{\"instance\": \"$other\", \"gpus\": []}' \"$(cat "$T/cred.$other")\")\" = 401 ]" \
	"a destroyed pool's instance credential is refused"
eval "other_pid=\$AG_$(echo "$other" | tr - _)"
wait_until 10 "! kill -0 $other_pid" || fail "agent $other did not stop once its instance was gone"
# an instance whose agent never reports is replaced after
# agent.ready_timeout, with an event saying so
agent_config "interval: 1s, ready_timeout: 3s"
write_spec "$T/nr.yaml" nr gcp L4 1 on-demand "agent: true"
gb apply -f "$T/nr.yaml" --auto-approve --wait --wait-for running --timeout 30 >"$T/nr.out" 2>&1 ||
	fail "apply --wait-for running of nr: $(cat "$T/nr.out")"
check "api /v1/pools/nr | jq -e '.ready == 0 and .running == 1' >/dev/null" \
	"--wait-for running returns at running"
wait_until 20 "api '/v1/events?pool=nr&limit=200' | jq -e '[.events[] | select(.kind == \"not-ready\")] | length >= 1'" ||
	fail "nr-0 was not found late ($(api '/v1/events?pool=nr&limit=200' | jq -r '.events[].message'))"
check "api '/v1/events?pool=nr&limit=200' | jq -r '.events[] | select(.kind == \"not-ready\") | .message' | grep -q 'nr-0 is not ready .*its agent never reported; replacing it'" \
	"the event names the instance and the agent's last words"
wait_until 20 "api /v1/pools/nr | jq -e '[.instances[] | select(.name == \"nr-1\" and .state == \"running\")] | length == 1'" ||
	fail "nr-0 was not replaced ($(api /v1/pools/nr | jq -c '[.instances[] | [.name, .state]]'))"
echo "ok: the late instance was replaced (nr-1)"
gb destroy nr --auto-approve >/dev/null 2>&1 || fail "destroy nr"
echo "PASS agent"
