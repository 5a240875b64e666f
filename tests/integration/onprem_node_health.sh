#!/bin/sh
# onprem_node_health.sh -- a failing on-prem node never blocks a pool
# (issue 41, points 1 and 4), through the CLI with local-transport nodes:
#   - a node whose setup exits 7 and a node that cannot be reached (a fake
#     ssh client that fails like a refused connection) are marked
#     unhealthy / unreachable with the reason (nodes, events, the pool's
#     waiting), and the pool gets the healthy node of the same shape at
#     once, in the same apply;
#   - the marked nodes are not offered again until `nodes probe` finds
#     them healthy or `nodes clear NODE`;
#   - `nodes probe` exits 1 when a probed node fails (no GPU, unreachable)
#     and `nodes clear` forgets the failing report.
set -u

fail() {
	echo "FAIL: $*"
	exit 1
}

G="$GB_BUILD/bin/gpubroker"
[ -x "$G" ] || fail "$G not built"
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
DATA="$GB_SRC/tests/data/onprem"
T=$(mktemp -d "${TMPDIR:-/tmp}/gb-onprem-health.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM

# the fake probe prints the report named in $T/fixture, exits $T/exit
cat >"$T/fake-gpuprobe" <<EOF
#!/bin/sh
cat "\$(cat "$T/fixture")"
exit "\$(cat "$T/exit")"
EOF
# an ssh client that cannot connect (exit 255, ssh's words)
cat >"$T/fake-ssh" <<EOF
#!/bin/sh
echo "ssh: connect to host 127.0.0.1 port 2222: Connection refused" >&2
exit 255
EOF
chmod 755 "$T/fake-gpuprobe" "$T/fake-ssh"
use_fixture() { # file exit
	echo "$DATA/$1" >"$T/fixture"
	echo "$2" >"$T/exit"
}

# n1 fails its setup, n3 cannot be reached, n2 works: all one shape
cat >"$T/nodes.yaml" <<EOF
sites:
  - {name: lab, lat: 52.52, lon: 13.40, jurisdiction: EU, country: DE}
nodes:
  - name: n1
    site: lab
    transport: local
    gpus: {model: A100-80GB, count: 4}
    price_per_gpu_hour: 1.5
    setup: echo "disk full on n1" >&2; exit 7
  - name: n3
    site: lab
    address: 127.0.0.1
    ssh: {port: 2222}
    gpus: {model: A100-80GB, count: 4}
    price_per_gpu_hour: 1.5
    setup: "true"
  - name: n2
    site: lab
    transport: local
    gpus: {model: A100-80GB, count: 4}
    price_per_gpu_hour: 1.5
    setup: echo "setup \$GPUBROKER_NODE" >>"$T/markers"
EOF
cat >"$T/broker.yaml" <<EOF
broker_id: itest
state: $T/state.db
onprem: {inventory: $T/nodes.yaml}
policy_path: [$GB_SRC/policies]
daemon: {failover_cooldown: 1s}
drivers:
  - name: onprem
    options: {probe_path: "$T/fake-gpuprobe", ssh: "$T/fake-ssh"}
EOF
C="-c $T/broker.yaml"
status_of() { # node
	"$G" nodes $C -o json 2>/dev/null |
		jq -r --arg n "$1" '.[] | select(.name == $n) | .status'
}
reason_of() { # node
	"$G" nodes $C -o json 2>/dev/null |
		jq -r --arg n "$1" '.[] | select(.name == $n) | .reason // ""'
}

cat >"$T/pool.yaml" <<EOF
pool:
  name: lab
  team: research
  purpose: training
  count: 2
  gpu: {model: [A100-80GB], count: 4}
  capacity: [on-demand]
  placement: {clouds: [onprem], colocate: none}
EOF

echo "== apply: n1's setup fails, n3 is unreachable, n2 is used at once"
rc=0
"$G" apply -f "$T/pool.yaml" $C --auto-approve >"$T/out" 2>&1 || rc=$?
cat "$T/out"
[ "$(cat "$T/markers" 2>/dev/null)" = "setup n2" ] ||
	fail "n2 was not set up in the same apply: $(cat "$T/markers" 2>/dev/null)"
[ $rc != 0 ] || fail "apply placed 1 of 2 and exited 0"
grep -q "setup on node n1 failed (exit 7): disk full on n1" "$T/out" ||
	fail "apply does not say why n1 failed"
grep -q "n3.*ssh to 127.0.0.1:2222 failed: .*Connection refused" "$T/out" ||
	fail "apply does not name n3 and the ssh error"
"$G" status lab $C -o json >"$T/st.json" 2>&1 || fail "status: $(cat "$T/st.json")"
jq -e '.waiting.reason | test("n1 failed \\(exit 7\\)")' "$T/st.json" >/dev/null ||
	fail "the pool's waiting does not name n1: $(jq -c .waiting "$T/st.json")"
jq -e '[.instances[] | select(.state != "terminated")] | length == 1' "$T/st.json" >/dev/null ||
	fail "the pool should hold n2"

echo "== nodes: n1 unhealthy, n3 unreachable, with the reasons"
"$G" nodes $C >"$T/out" 2>&1
cat "$T/out"
[ "$(status_of n1)" = unhealthy ] || fail "n1 status $(status_of n1)"
[ "$(status_of n3)" = unreachable ] || fail "n3 status $(status_of n3)"
[ "$(status_of n2)" = leased ] || fail "n2 status $(status_of n2)"
reason_of n1 | grep -q "^unhealthy: setup on node n1 failed (exit 7): disk full on n1 (once fixed: 'gpubroker nodes probe n1', or 'gpubroker nodes clear n1')" ||
	fail "n1 reason: $(reason_of n1)"
reason_of n3 | grep -q "^unreachable: setup on node n3: ssh to 127.0.0.1:2222 failed: .*Connection refused" ||
	fail "n3 reason: $(reason_of n3)"

echo "== events name the nodes"
"$G" events --pool lab $C >"$T/ev" 2>&1
cat "$T/ev"
grep -q "unhealthy .*setup on node n1 failed (exit 7)" "$T/ev" || fail "no unhealthy event for n1"
grep -q "unhealthy .*node n3 is marked unreachable" "$T/ev" || fail "no unhealthy event for n3"
grep -q "outcome unknown\|is unknown" "$T/ev" && fail "an unreachable node is not an unknown outcome"
# issue 41 point 6: the CLI's events name the node, and an on-prem
# instance (running at once) gets its running event
grep -q "running .*lab-[0-9]* is running at 127.0.0.1 \[n2\]$" "$T/ev" ||
	fail "no running event naming n2"
grep -q "created .* \[n2\]$" "$T/ev" || fail "the created event does not name n2"

echo "== status NAME shows the placement decision"
"$G" status lab $C >"$T/out" 2>&1
cat "$T/out"
grep -q "^placement decision (last apply, .*): 2 x onprem lab 4xA100-80GB on-demand" "$T/out" ||
	fail "status does not show the placement decision"
grep -q "candidates, ranked by .*onprem/lab 4xA100-80GB on-demand \$6.0000/h" "$T/out" ||
	fail "status does not list the first candidates"

echo "== a failed node is not offered again: the next apply does not ask it"
"$G" apply -f "$T/pool.yaml" $C --auto-approve >"$T/out" 2>&1
grep -q "setup on node n1" "$T/out" && fail "n1 was asked again"
[ "$(status_of n1)" = unhealthy ] || fail "n1 came back by itself"

echo "== nodes clear n1: offered again (its setup still fails: marked again)"
"$G" nodes clear n1 $C >"$T/out" 2>&1 || fail "nodes clear: $(cat "$T/out")"
cat "$T/out"
[ "$(status_of n1)" = free ] || fail "n1 after clear: $(status_of n1)"
"$G" nodes clear nosuch $C >"$T/out" 2>&1 && fail "clear of an unknown node succeeded"
grep -q 'no node "nosuch"' "$T/out" || fail "clear nosuch: $(cat "$T/out")"

echo "== nodes probe: healthy clears a mark; a failing node exits 1"
use_fixture probe-a100x4-healthy.json 0
# the first apply's capacity cooldown (1s here) may still hold the site
i=0
while [ "$(status_of n1)" != unhealthy ] && [ $i -lt 50 ]; do
	"$G" apply -f "$T/pool.yaml" $C --auto-approve >/dev/null 2>&1
	i=$((i + 1))
done
[ "$(status_of n1)" = unhealthy ] || fail "n1's setup failed again but it is $(status_of n1)"
"$G" nodes probe n1 $C >"$T/out" 2>&1 || fail "healthy probe exited non-zero: $(cat "$T/out")"
[ "$(status_of n1)" = free ] || fail "n1 after a healthy probe: $(status_of n1)"
rc=0
"$G" nodes probe n3 $C >"$T/out" 2>&1 || rc=$?
cat "$T/out"
[ $rc = 1 ] || fail "probe of an unreachable node exited $rc"
grep -q "1 of 1 probed node failed" "$T/out" || fail "probe does not say it failed"
use_fixture probe-nogpu.json 3
rc=0
"$G" nodes probe n1 $C >"$T/out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "probe without a GPU exited $rc"
[ "$(status_of n1)" = unhealthy ] || fail "n1 after a no-GPU probe: $(status_of n1)"
"$G" nodes clear n1 n3 $C >"$T/out" 2>&1 || fail "clear n1 n3: $(cat "$T/out")"
[ "$(status_of n1)" = free ] || fail "n1 after clear: $(status_of n1)"
[ "$(status_of n3)" = free ] || fail "n3 after clear: $(status_of n3)"
[ ! -f "$T/drivers/onprem/probe/n1.json" ] || fail "the failing report stayed"

"$G" destroy lab $C --auto-approve >/dev/null 2>&1 || fail "destroy"
echo PASS
