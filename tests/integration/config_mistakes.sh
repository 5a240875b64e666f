#!/bin/sh
# tests/integration/config_mistakes.sh -- `gpubroker validate` of broker
# configs with the mistakes that load fine but break later (issue 19.5):
# a missing on-prem inventory, a token of a team not under teams:, a
# reservation of an instance type its driver does not sell there.
# Each must exit 1 with file:line:col, the key path and how to fix it;
# the same configs without the mistake pass.
set -u
. "$GB_SRC/tests/lib/integration.sh"
H=3f0a6c3b8d1f9e2a4c5b6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a

# run ARGS...: gpubroker with a 10 s limit; sets rc, out, err.
run() {
	rc=0
	timeout 10 "$GB" "$@" >"$T/out" 2>"$T/err" || rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
}
# expect_err WHAT TEXT: the last run exited 1 and stderr has TEXT.
expect_err() {
	[ "$rc" = 1 ] || fail "$1: exit $rc, expected 1 (stderr: $err)"
	case "$err" in
	*"$2"*) echo "ok: $1" ;;
	*) fail "$1: expected \"$2\" in stderr, got: $err" ;;
	esac
}

echo "== a missing on-prem inventory"
mkdir "$T/a"
cat >"$T/a/broker.yaml" <<YAML
broker_id: t
drivers: [{name: onprem}]
onprem:
  inventory: nodes.yaml
YAML
run validate -f "$T/a/broker.yaml"
expect_err inventory "$T/a/broker.yaml:4:14: error: onprem.inventory: cannot read the on-prem inventory $T/a/nodes.yaml: No such file or directory; create it"
# relative to the config's folder, not to the working directory
printf 'nodes: []\n' >"$T/a/nodes.yaml"
cd /
run validate -f "$T/a/broker.yaml"
[ "$rc" = 0 ] || fail "inventory present: exit $rc: $err"
echo "ok: inventory present, relative to the config's folder"

echo "== a token whose team is not under teams:"
cat >"$T/team.yaml" <<YAML
broker_id: t
tokens:
  - {name: ci, sha256: $H, role: operator, team: resaerch}
  - {name: ops, sha256: ${H%?}b, role: admin}
teams:
  - {name: research, max_gpus: 8}
YAML
run validate -f "$T/team.yaml"
expect_err team "$T/team.yaml:3:112: error: tokens[0].team: team \"resaerch\" is not listed under teams: (did you mean \"research\"?); add it there"
sed -i 's/resaerch/research/' "$T/team.yaml"
run validate -f "$T/team.yaml"
[ "$rc" = 0 ] || fail "team listed: exit $rc: $err"
echo "ok: team listed"
# without teams:, a token's team only scopes what it sees: accepted
sed -i '/^teams:/,$d' "$T/team.yaml"
run validate -f "$T/team.yaml"
[ "$rc" = 0 ] || fail "no teams: section: exit $rc: $err"
echo "ok: no teams: section"

echo "== a reservation of a type the driver does not sell there"
cat >"$T/res.yaml" <<YAML
broker_id: t
drivers: [{name: aws}]
reservations:
  - {cloud: aws, region: us-east-1, instance_type: p5.48xlarge, count: 2}
  - {cloud: aws, region: us-east-1, instance_type: p5.48xlage, count: 2}
YAML
run validate -f "$T/res.yaml"
expect_err reservation "$T/res.yaml:5:52: error: reservations[1].instance_type: aws sells no \"p5.48xlage\" in us-east-1 (did you mean \"p5.48xlarge\"?); reserve a type it offers there"
case "$err" in *"reservations[0]"*) fail "the sold type was refused: $err" ;; esac
sed -i 's/p5.48xlage/p5.48xlarge/' "$T/res.yaml"
run validate -f "$T/res.yaml"
[ "$rc" = 0 ] || fail "reservation sold: exit $rc: $err"
echo "ok: reservation sold"

echo PASS
