#!/bin/sh
# onprem_ssh.sh -- the on-prem driver's ssh transport against a real sshd
# (Debian's openssh-server) that this test starts on a loopback port with
# keys it generates: `gpubroker nodes probe` copies a probe over ssh (once,
# again when it changes) and runs it, a pool is applied and destroyed with
# setup/teardown running on the "remote" side, the real gpuprobe (when
# built) reports "no usable GPU" on a machine without one, and a node whose
# sshd is gone is unreachable and not offered.  Exits 77 when sshd cannot
# run here, saying why.
set -u

fail() {
	echo "FAIL: $*"
	[ -f "${T:-/nonexistent}/sshd.log" ] && tail -n 20 "$T/sshd.log"
	exit 1
}
skip() {
	echo "SKIP: $*"
	exit 77
}

G="$GB_BUILD/bin/gpubroker"
[ -x "$G" ] || fail "$G not built"
SSHD=/usr/sbin/sshd
[ -x "$SSHD" ] || skip "no $SSHD (install openssh-server: scripts/deps.sh)"
command -v ssh >/dev/null 2>&1 || skip "no ssh client (openssh-client)"
command -v ssh-keygen >/dev/null 2>&1 || skip "no ssh-keygen"
DATA="$GB_SRC/tests/data/onprem"
ME=$(id -un)

T=$(mktemp -d "${TMPDIR:-/tmp}/gb-onprem-ssh.XXXXXX")
chmod 755 "$T"
SSHD_PID=""
cleanup() {
	if [ -n "$SSHD_PID" ]; then
		kill "$SSHD_PID" 2>/dev/null
		wait "$SSHD_PID" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

ssh-keygen -q -t ed25519 -N '' -C gpubroker-test-host -f "$T/host_ed25519" ||
	fail "ssh-keygen (host key)"
ssh-keygen -q -t ed25519 -N '' -C gpubroker-test-user -f "$T/id_ed25519" ||
	fail "ssh-keygen (user key)"
cp "$T/id_ed25519.pub" "$T/authorized_keys"
chmod 600 "$T/authorized_keys"

# sshd refuses to start without its privilege separation directory
if [ ! -d /run/sshd ]; then
	if [ "$(id -u)" = 0 ]; then
		mkdir -p /run/sshd && chmod 755 /run/sshd
	else
		skip "/run/sshd is missing and this user cannot create it"
	fi
fi

start_sshd() { # port
	cat >"$T/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $1
HostKey $T/host_ed25519
AuthorizedKeysFile $T/authorized_keys
PidFile $T/sshd.pid
StrictModes no
UsePAM no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers $ME
LogLevel VERBOSE
EOF
	"$SSHD" -t -f "$T/sshd_config" >"$T/sshd.log" 2>&1 ||
		skip "sshd rejects the test config: $(tail -n 3 "$T/sshd.log")"
	"$SSHD" -D -e -f "$T/sshd_config" >>"$T/sshd.log" 2>&1 &
	SSHD_PID=$!
	# wait until it accepts a login (or dies: port taken)
	i=0
	while [ $i -lt 100 ]; do
		if ! kill -0 "$SSHD_PID" 2>/dev/null; then
			wait "$SSHD_PID" 2>/dev/null
			SSHD_PID=""
			return 1
		fi
		if ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no \
		    -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
		    -o ConnectTimeout=2 -i "$T/id_ed25519" -o IdentitiesOnly=yes \
		    -p "$1" -l "$ME" 127.0.0.1 true 2>>"$T/ssh-wait.log"; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

PORT=""
for try in 1 2 3 4 5 6 7 8; do
	sec=$(date +%S)
	sec=${sec#0} # "08" would read as a bad octal number
	p=$(( ($$ * 7 + try * 7919 + sec * 131) % 30000 + 20000 ))
	if start_sshd "$p"; then
		PORT=$p
		break
	fi
	[ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null && SSHD_PID=""
done
[ -n "$PORT" ] || skip "sshd did not start or accept a key login on \
127.0.0.1 (last log: $(tail -n 3 "$T/sshd.log" 2>/dev/null | tr '\n' ' ') \
$(tail -n 2 "$T/ssh-wait.log" 2>/dev/null | tr '\n' ' '))"
echo "sshd (pid $SSHD_PID) listening on 127.0.0.1:$PORT, user $ME"

# The fake probe: proves it runs through sshd (SSH_CONNECTION) and from
# the copy (its path), prints a recorded report.
cat >"$T/fake-gpuprobe" <<EOF
#!/bin/sh
echo "\$0 \$* conn=\${SSH_CONNECTION:-none}" >>"$T/probe-ran"
cat "$DATA/probe-a100x4-healthy.json"
EOF
chmod 755 "$T/fake-gpuprobe"
mkdir "$T/remote"

cat >"$T/nodes.yaml" <<EOF
sites:
  - {name: lab, lat: 48.14, lon: 11.58, jurisdiction: EU, country: DE}
nodes:
  - name: r1
    site: lab
    transport: ssh
    address: 127.0.0.1
    ssh:
      user: $ME
      port: $PORT
      key: $T/id_ed25519
      options: ["ServerAliveInterval=5"]
    gpus: {model: A100-80GB, count: 4}
    price_per_gpu_hour: 1.25
    setup: echo "setup \$GPUBROKER_POOL \$GPUBROKER_NAME conn=\${SSH_CONNECTION:-none}" >>"$T/remote-markers"
    teardown: echo "teardown \$GPUBROKER_POOL \$GPUBROKER_NAME conn=\${SSH_CONNECTION:-none}" >>"$T/remote-markers"
EOF
write_config() { # probe_path
	cat >"$T/broker.yaml" <<EOF
broker_id: itest-ssh
state: $T/state.db
onprem: {inventory: $T/nodes.yaml}
policy_path: [$GB_SRC/policies]
drivers:
  - name: onprem
    options:
      probe_path: "$1"
      probe_remote_path: "$T/remote/gpuprobe"
EOF
}
write_config "$T/fake-gpuprobe"
C="-c $T/broker.yaml"
inode() { ls -i "$1" | awk '{print $1}'; }

echo "== nodes probe over ssh"
"$G" nodes probe $C >"$T/out" 2>"$T/err" || fail "nodes probe: $(cat "$T/err")"
cat "$T/out" "$T/err"
grep -Eq '^r1 +lab +4xA100-80GB +4 +healthy +1690 +18\.7 +279\.5 ' "$T/out" ||
	fail "r1 not healthy after the probe"
cmp -s "$T/fake-gpuprobe" "$T/remote/gpuprobe" || fail "probe not copied"
grep -q "^$T/remote/gpuprobe --quick --compact conn=127.0.0.1 " "$T/probe-ran" ||
	fail "probe did not run from the copy through sshd: $(cat "$T/probe-ran")"
grep -q "ssh-ed25519" "$T/drivers/onprem/known_hosts" ||
	fail "host key not recorded in the driver's known_hosts"
first=$(inode "$T/remote/gpuprobe")

echo "== a second probe does not copy again; a changed probe is copied"
"$G" nodes probe r1 $C >"$T/out" 2>"$T/err" || fail "probe 2: $(cat "$T/err")"
[ "$(inode "$T/remote/gpuprobe")" = "$first" ] || fail "probe copied again"
[ "$(wc -l <"$T/probe-ran")" -eq 2 ] || fail "probe did not run twice"
echo "# changed" >>"$T/fake-gpuprobe"
"$G" nodes probe r1 $C >"$T/out" 2>"$T/err" || fail "probe 3: $(cat "$T/err")"
cmp -s "$T/fake-gpuprobe" "$T/remote/gpuprobe" || fail "changed probe not copied"
[ "$(inode "$T/remote/gpuprobe")" != "$first" ] || fail "not replaced"

echo "== apply and destroy through the ssh transport"
cat >"$T/pool.yaml" <<EOF
pool:
  name: sshpool
  team: research
  purpose: training
  count: 1
  gpu: {model: [A100-80GB], count: 4}
  capacity: [on-demand]
  placement: {clouds: [onprem]}
  policy: [cost]
EOF
"$G" apply -f "$T/pool.yaml" $C --auto-approve >"$T/out" 2>&1 ||
	fail "apply: $(cat "$T/out")"
cat "$T/out"
grep -q "^setup sshpool sshpool-0 conn=127.0.0.1 " "$T/remote-markers" ||
	fail "setup did not run through sshd: $(cat "$T/remote-markers" 2>&1)"
grep -Eq 'sshpool-0 +r1 +onprem +lab .* running +127\.0\.0\.1' "$T/out" ||
	fail "instance not running"
"$G" destroy sshpool $C --auto-approve >"$T/out" 2>&1 ||
	fail "destroy: $(cat "$T/out")"
grep -q "^teardown sshpool sshpool-0 conn=127.0.0.1 " "$T/remote-markers" ||
	fail "teardown did not run through sshd"
[ ! -f "$T/drivers/onprem/leases/r1.json" ] || fail "lease not released"

echo "== the real gpuprobe over ssh"
if [ -x "$GB_BUILD/bin/gpuprobe" ]; then
	"$GB_BUILD/bin/gpuprobe" --quick --compact >/dev/null 2>&1
	real_rc=$?
	write_config "$GB_BUILD/bin/gpuprobe"
	probe_rc=0
	"$G" nodes probe r1 $C >"$T/out" 2>"$T/err" || probe_rc=$?
	cat "$T/out" "$T/err"
	case $real_rc:$probe_rc in
	0:0 | 1:1 | 3:1) ;;
	*) fail "real probe (exit $real_rc) exited $probe_rc: $(cat "$T/err")" ;;
	esac
	cmp -s "$GB_BUILD/bin/gpuprobe" "$T/remote/gpuprobe" ||
		fail "real probe not copied"
	case $real_rc in
	3) grep -q "r1: unhealthy: no usable GPU: " "$T/err" ||
		fail "without a GPU the node must be 'no usable GPU'" ;;
	0) grep -Eq '^r1 .* healthy ' "$T/out" || fail "real probe healthy" ;;
	1) grep -Eq '^r1 .* unhealthy ' "$T/out" || fail "real probe unhealthy" ;;
	*) fail "the real gpuprobe exited $real_rc" ;;
	esac
	write_config "$T/fake-gpuprobe"
else
	echo "gpuprobe not built (no nvcc): the real-probe part is skipped"
fi

echo "== sshd gone: unreachable, not offered"
kill "$SSHD_PID"
wait "$SSHD_PID" 2>/dev/null
SSHD_PID=""
rc=0
"$G" nodes probe r1 $C >"$T/out" 2>"$T/err" || rc=$?
cat "$T/out" "$T/err"
[ $rc = 1 ] || fail "probe of an unreachable node exited $rc, not 1"
grep -Eq '^r1 .* unreachable ' "$T/out" || fail "r1 not unreachable"
grep -q "r1: unreachable: ssh to 127.0.0.1:$PORT failed: " "$T/err" ||
	fail "unreachable reason"
"$G" offers $C --cloud onprem >"$T/out" 2>&1
if grep -q 4xA100-80GB "$T/out"; then
	fail "an unreachable node is offered"
fi

echo "PASS"
