#!/bin/sh
# onprem_local.sh -- the on-prem driver end to end through the CLI with the
# local transport: `gpubroker nodes`, `nodes probe` with a fake probe that
# prints recorded gpuprobe reports (tests/data/onprem), the no-GPU path
# (recorded, and the real gpuprobe when it was built), offers, a pool
# applied and destroyed with setup/teardown markers, and a broken inventory
# reported with file:line:col.
set -u

fail() {
	echo "FAIL: $*"
	exit 1
}

G="$GB_BUILD/bin/gpubroker"
[ -x "$G" ] || fail "$G not built"
DATA="$GB_SRC/tests/data/onprem"
T=$(mktemp -d "${TMPDIR:-/tmp}/gb-onprem-local.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM

# The fake probe: prints the report named in $T/fixture, exits with
# $T/exit, records its arguments.
cat >"$T/fake-gpuprobe" <<EOF
#!/bin/sh
echo "\$*" >>"$T/probe-args"
cat "\$(cat "$T/fixture")"
exit "\$(cat "$T/exit")"
EOF
chmod 755 "$T/fake-gpuprobe"
use_fixture() { # file exit
	echo "$DATA/$1" >"$T/fixture"
	echo "$2" >"$T/exit"
}

cat >"$T/nodes.yaml" <<EOF
sites:
  - {name: lab, lat: 52.52, lon: 13.40, jurisdiction: EU, country: DE,
     tags: [gdpr], carbon_g_per_kwh: 380}
nodes:
  - name: n1
    site: lab
    transport: local
    gpus: {model: A100-80GB, count: 4}
    price_per_gpu_hour: 1.5
    tags: [gdpr]
    setup: echo "setup \$GPUBROKER_POOL \$GPUBROKER_NAME \$GPUBROKER_NODE" >>"$T/markers"
    teardown: echo "teardown \$GPUBROKER_POOL \$GPUBROKER_NAME" >>"$T/markers"
  - name: n2
    site: lab
    transport: local
    price_per_gpu_hour: 1.5
EOF

write_config() { # probe_path
	cat >"$T/broker.yaml" <<EOF
broker_id: itest
state: $T/state.db
onprem: {inventory: $T/nodes.yaml}
policy_path: [$GB_SRC/policies]
drivers:
  - name: onprem
    options: {probe_path: "$1"}
EOF
}
write_config "$T/fake-gpuprobe"
C="-c $T/broker.yaml"

# the block of one node in `nodes -o json`
node_json() { # name
	"$G" nodes $C -o json | awk -v n="\"$1\"" '
		/^    "name": / { p = index($0, n) > 0 }
		p'
}

echo "== drivers"
"$G" drivers $C >"$T/out" 2>&1 || fail "drivers: $(cat "$T/out")"
cat "$T/out"
grep -q '^onprem .* ready ' "$T/out" || fail "onprem driver not ready"

echo "== nodes before any probe"
"$G" nodes $C >"$T/out" 2>"$T/err" || fail "nodes: $(cat "$T/err")"
cat "$T/out" "$T/err"
grep -Eq '^n1 +lab +4xA100-80GB +4 +unprobed .* never$' "$T/out" ||
	fail "n1 row"
grep -Eq '^n2 +lab +- +- +unprobed ' "$T/out" || fail "n2 row"
grep -q "n2: GPUs unknown: declare gpus in the inventory or run 'gpubroker nodes probe n2'" \
	"$T/err" || fail "n2 note"
# n1 is offered before its first probe (declared GPUs), n2 is not
"$G" offers $C --cloud onprem >"$T/out" 2>&1 || fail "offers: $(cat "$T/out")"
grep -Eq '^onprem +lab .* 4xA100-80GB +A100-80GB +4 +80 +on-demand +6\.00 ' \
	"$T/out" || fail "offer before probing: $(cat "$T/out")"

echo "== nodes probe (recorded healthy report)"
use_fixture probe-a100x4-healthy.json 0
"$G" nodes probe $C >"$T/out" 2>"$T/err" || fail "nodes probe: $(cat "$T/err")"
cat "$T/out"
grep -Eq '^n1 +lab +4xA100-80GB +4 +healthy +1690 +18\.7 +279\.5 +- +0s ago$' \
	"$T/out" || fail "n1 after probe"
grep -Eq '^n2 +lab +4xA100-80GB +4 +healthy +1690 +18\.7 +279\.5 ' \
	"$T/out" || fail "n2 discovered as 4xA100-80GB"
[ "$(sort -u "$T/probe-args")" = "--quick --compact" ] ||
	fail "probe arguments: $(cat "$T/probe-args")"
[ -f "$T/drivers/onprem/probe/n1.json" ] || fail "report not stored"
grep -q '"probed_at"' "$T/drivers/onprem/probe/n1.json" || fail "probed_at"
node_json n2 | grep -q '"gpus_from": "probe"' || fail "n2 gpus_from"
"$G" offers $C --cloud onprem -o json >"$T/out" 2>&1
grep -q '"instance_type": "4xA100-80GB"' "$T/out" || fail "offer"
grep -q '"price_per_hour": 6.0' "$T/out" || fail "offer price"

echo "== nodes probe n2 (recorded no-GPU report, exit 3)"
use_fixture probe-nogpu.json 3
rc=0
"$G" nodes probe n2 $C >"$T/out" 2>"$T/err" || rc=$?
cat "$T/out" "$T/err"
[ $rc = 1 ] || fail "probe of a node without a GPU exited $rc, not 1"
grep -q '1 of 1 probed node failed' "$T/err" || fail "probe does not say n2 failed"
grep -Eq '^n2 +lab +- +- +unhealthy ' "$T/out" || fail "n2 unhealthy row"
grep -q 'n2: unhealthy: no usable GPU: cudaGetDeviceCount failed' "$T/err" ||
	fail "no-GPU reason"
node_json n2 | grep -q '"offered": false' || fail "n2 still offered"
node_json n1 | grep -q '"offered": true' || fail "n1 no longer offered"

echo "== the real gpuprobe"
if [ -x "$GB_BUILD/bin/gpuprobe" ]; then
	"$GB_BUILD/bin/gpuprobe" --quick --compact >"$T/real.json" 2>/dev/null
	real_rc=$?
	write_config "$GB_BUILD/bin/gpuprobe"
	probe_rc=0
	"$G" nodes probe n2 $C >"$T/out" 2>"$T/err" || probe_rc=$?
	cat "$T/out" "$T/err"
	# exit 1 exactly when the node failed
	case $real_rc:$probe_rc in
	0:0 | 1:1 | 3:1) ;;
	*) fail "probe with the real gpuprobe (exit $real_rc) exited $probe_rc: $(cat "$T/err")" ;;
	esac
	case $real_rc in
	3)
		grep -q 'n2: unhealthy: no usable GPU: ' "$T/err" ||
			fail "real probe without a GPU must say 'no usable GPU'"
		grep -q '"exit_code": 3' "$T/drivers/onprem/probe/n2.json" ||
			fail "exit code 3 not stored"
		;;
	0) grep -Eq '^n2 .* healthy ' "$T/out" || fail "real probe: healthy" ;;
	1) grep -Eq '^n2 .* unhealthy ' "$T/out" || fail "real probe: unhealthy" ;;
	*) fail "the real gpuprobe exited $real_rc" ;;
	esac
	write_config "$T/fake-gpuprobe"
else
	echo "gpuprobe not built (no nvcc): the real-probe part is skipped"
fi

echo "== apply and destroy a pool on the lab site"
cat >"$T/pool.yaml" <<EOF
pool:
  name: labpool
  team: research
  purpose: training
  count: 1
  gpu: {model: [A100-80GB], count: 4}
  capacity: [on-demand]
  placement: {clouds: [onprem]}
  policy: [tflops-cost]
EOF
"$G" apply -f "$T/pool.yaml" $C --auto-approve >"$T/out" 2>&1 ||
	fail "apply: $(cat "$T/out")"
cat "$T/out"
grep -q "setup labpool labpool-0 n1" "$T/markers" || fail "setup marker"
"$G" nodes $C >"$T/out" 2>&1
grep -Eq '^n1 .* labpool +0s ago|^n1 .* labpool +[0-9]+s ago' "$T/out" ||
	fail "n1 not shown leased: $(cat "$T/out")"
[ -f "$T/drivers/onprem/leases/n1.json" ] || fail "no lease file"
"$G" destroy labpool $C --auto-approve >"$T/out" 2>&1 ||
	fail "destroy: $(cat "$T/out")"
grep -q "teardown labpool labpool-0" "$T/markers" || fail "teardown marker"
[ ! -f "$T/drivers/onprem/leases/n1.json" ] || fail "lease not released"

echo "== a broken inventory"
cat >"$T/nodes.yaml" <<EOF
sites:
  - {name: lab, lat: 52.52, lon: 13.40, jurisdiction: EU, country: DE}
nodes:
  - name: n1
    site: lba
    transport: local
    gpus: {model: A100-80GB, count: four}
    price_per_gpu_hour: 1.5
EOF
"$G" drivers $C >"$T/out" 2>&1
cat "$T/out"
grep -q "nodes.yaml:5:11: error: nodes\[0\].site: no site named \"lba\" in sites; did you mean \"lab\"?" \
	"$T/out" || fail "drivers does not show the inventory error"
grep -q "nodes.yaml:7:37: error: nodes\[0\].gpus.count: expected an integer" \
	"$T/out" || fail "second error missing"
if "$G" nodes $C >"$T/out" 2>&1; then
	fail "nodes succeeded with a broken inventory"
fi
grep -q "the onprem driver is not ready: driver 'onprem' failed to initialise: the on-prem inventory $T/nodes.yaml has 2 errors" \
	"$T/out" || fail "nodes error: $(cat "$T/out")"

echo "PASS"
