# agent.sh -- sourced by the instance agent's integration tests, after
# tests/lib/integration.sh: the agent and the fake NVML (skip when not
# built), cloudsim and the daemon on a config of the test's own
# ($T/broker.yaml), since agent.broker_url is the daemon's address, known
# once it listens.
#
#   agent_start             # sets AGENT, NVML; starts cloudsim and the daemon
#   agent_config 'YAML'     # sets "agent: {broker_url: ..., YAML}" and reloads (SIGHUP)

AGENT=$GB_BUILD/bin/gpubroker-agent
NVML=$GB_BUILD/tests/libnvidia-ml.so.1

agent_start() {
	for _f in "$AGENT" "$NVML"; do
		[ -e "$_f" ] || { echo "SKIP: $_f is not built (make all $NVML)"; exit 77; }
	done
	export GPUBROKER_RECONCILE_PERIOD=1s
	export GPUBROKER_INVENTORY="$GB_SRC/examples/demo-inventory.yaml"
	sim_start
	cp "$CONF" "$T/broker.yaml"
	CONF=$T/broker.yaml
	daemon_start
	export GPUBROKER_TOKEN=demo-admin-token
}

agent_config() {
	_n=$(grep -c 'SIGHUP: reloaded' "$T/daemon.log" || true)
	sed -i '/^agent: {/d' "$CONF"
	printf 'agent: {broker_url: "%s", %s}\n' "$GPUBROKER_SERVER" "$1" >>"$CONF"
	kill -HUP "$D_PID"
	wait_until 10 "[ \$(grep -c 'SIGHUP: reloaded' '$T/daemon.log') -gt $_n ]" ||
		fail "the daemon did not reload its config"
}
