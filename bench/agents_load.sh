#!/bin/sh
# agents_load.sh -- the daemon under instance agents' reports: N agent
# pool instances on cloudsim (GCE), each "booted" by cloudsim with a real
# gpubroker-agent reporting every second (fake NVML), measured over
# WINDOW seconds: the daemon's CPU (utime + stime from /proc), the
# reports a second, and the API latency quantiles from the daemon's own
# histogram (nothing else calls the API meanwhile but this script's two
# scrapes).  N agents at 1 s load the daemon like 15 N agents at 15 s.
#   GB_BUILD=build GB_SRC=. sh bench/agents_load.sh [N] [WINDOW]
. "$GB_SRC/tests/lib/integration.sh"
. "$GB_SRC/tests/lib/agent.sh"
N=${1:-40}
WINDOW=${2:-20}
agent_start
agent_config "interval: 1s"
mkdir -p "$T/gpus" "$T/agents"
echo "NVIDIA_L4 23034 512 60" >"$T/gpus/default"
sim_post /_sim/agents "{\"binary\": \"$AGENT\", \"nvml_library\": \"$NVML\", \"gpus_dir\": \"$T/gpus\", \"dir\": \"$T/agents\", \"delay_ms\": 0}"
write_spec "$T/load.yaml" load gcp L4 "$N" on-demand "agent: true"
gb apply -f "$T/load.yaml" --auto-approve --wait --timeout 120 >"$T/apply.out" 2>&1 ||
	fail "apply: $(tail -5 "$T/apply.out")"
H="Authorization: Bearer $GPUBROKER_TOKEN"
cpu() { awk '{print $14 + $15}' "/proc/$D_PID/stat"; }
hist() { curl -sf -H "$H" "$GPUBROKER_SERVER/metrics" | grep '^gpubroker_api_request_duration_seconds_\(bucket\|count\)'; }
sleep 3 # the agents' first reports (ready) are behind: measure the steady state
c0=$(cpu); hist >"$T/h0"; t0=$(date +%s.%N)
sleep "$WINDOW"
c1=$(cpu); hist >"$T/h1"; t1=$(date +%s.%N)
tck=$(getconf CLK_TCK)
awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v tck="$tck" -v n="$N" '
FNR == NR { a[$1] = $2; next }
{ d[$1] = $2 - a[$1]; keys[++k] = $1 }
END {
	el = t1 - t0; cnt = d["gpubroker_api_request_duration_seconds_count"]
	printf "agents %d, window %.1f s: %.0f requests/s, daemon CPU %.1f%% of one core\n",
		n, el, cnt / el, 100 * (c1 - c0) / tck / el
	for (q = 1; q <= 3; q++) {
		want = (q == 1 ? 0.5 : q == 2 ? 0.9 : 0.99) * cnt
		for (i = 1; i <= k; i++) {
			if (keys[i] !~ /bucket/) continue
			if (d[keys[i]] >= want) { match(keys[i], /le="[^"]*"/); printf "  p%s <= %s s\n", (q == 1 ? "50" : q == 2 ? "90" : "99"), substr(keys[i], RSTART + 4, RLENGTH - 5); break }
		}
	}
	printf "  at 15 s per report that is the load of %d agents\n", n * 15
}' "$T/h0" "$T/h1"
