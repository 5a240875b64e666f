#!/bin/sh
# clouds_are_drivers.sh -- a cloud is whatever driver is loaded, under
# its configured name: validate, plan, reservations and the daemon's API
# accept exactly the configured drivers' names and refuse any other with
# the list and how to load one; with no drivers: section the installed
# drivers are the clouds; nodes go to drivers with the probe capability,
# not to a name.  The driver here is the test driver "fake" (tests/
# drivers/fake/fake_good.c: one offer fake.8xh100 in fake-region-1).
. "$GB_SRC/tests/lib/integration.sh"

FAKE=$GB_BUILD/tests/fakedrv/fake_good.so
[ -f "$FAKE" ] || { echo "SKIP: $FAKE is not built (make test builds it)"; exit 77; }

cat >"$T/broker.yaml" <<CFG
broker_id: gbtest
listen: 127.0.0.1:0
drivers:
  - name: fake
    path: $FAKE
tokens:
  - {name: admin, sha256: $(printf 'clouds-admin-token' | sha256sum | cut -d' ' -f1), role: admin}
CFG
CONF=$T/broker.yaml

cat >"$T/fake.yaml" <<'SPEC'
pool:
  name: on-fake
  team: research
  count: 1
  gpu: {model: H100, count: 8}
  capacity: [on-demand]
  placement: {clouds: [fake]}
  image: {fake: fake-image-1}
SPEC
sed -e 's/clouds: \[fake\]/clouds: [aws]/' -e 's/fake: fake-image-1/aws: ami-1/' \
	"$T/fake.yaml" >"$T/aws.yaml"

check "gb validate -f $T/fake.yaml >$T/out 2>&1" "validate accepts the loaded driver's cloud and image key"
if gb validate -f "$T/aws.yaml" >"$T/out" 2>&1; then fail "validate accepted aws, which is not loaded"; fi
check "grep -q 'pool.placement.clouds\[0\]: unknown cloud \"aws\"; expected fake (the clouds are the loaded drivers; to use another cloud, list its driver under drivers: in the broker config' $T/out" \
	"an unknown cloud is refused with the loaded ones and how to load a driver"
check "grep -q 'pool.image.aws: unknown cloud \"aws\"' $T/out" "image keys are checked the same way"

check "gb plan -f $T/fake.yaml -o json >$T/plan.json" "plan accepts the third-party cloud"
check "[ \"\$(jq -r '.[0].candidates[0].cloud' $T/plan.json)\" = fake ]" "and places the pool on it"
check "[ \"\$(jq -r '.[0].candidates[0].instance_type' $T/plan.json)\" = fake.8xh100 ]" "with its offer"
if gb plan -f "$T/aws.yaml" >"$T/out" 2>&1; then fail "plan accepted aws"; fi
check "grep -q 'unknown cloud \"aws\"; expected fake' $T/out" "plan refuses the same way"

# reservations name a configured driver
cp "$T/broker.yaml" "$T/resv.yaml"
printf 'reservations:\n  - {cloud: aws, region: us-east-1, instance_type: p5.48xlarge, count: 1}\n' >>"$T/resv.yaml"
if "$GB" -c "$T/resv.yaml" validate -f "$T/resv.yaml" >"$T/out" 2>&1; then fail "a reservation on an unloaded cloud was accepted"; fi
check "grep -q 'reservations\[0\].cloud' $T/out && grep -q 'expected fake' $T/out" "a reservation's cloud must be a loaded driver"

# nodes: no driver here manages nodes (none has the probe capability)
if gb nodes >"$T/out" 2>&1; then fail "nodes succeeded without a node driver"; fi
check "grep -q 'no driver that manages nodes is loaded' $T/out" "nodes says no driver has the probe capability"

# the daemon checks specs against its own drivers; a client sends any name
daemon_start
export GPUBROKER_TOKEN=clouds-admin-token
check "gb plan -f $T/fake.yaml >$T/out 2>&1" "the daemon plans the third-party cloud"
if gb plan -f "$T/aws.yaml" >"$T/out" 2>&1; then fail "the daemon planned aws, which it has not loaded"; fi
check "grep -q 'unknown cloud' $T/out && grep -q 'expected fake' $T/out" "the daemon refuses an unloaded cloud with its own list"
daemon_stop
unset GPUBROKER_SERVER GPUBROKER_TOKEN

# no drivers: section -> every NAME.so in the driver directory
mkdir -p "$T/drivers"
cp "$FAKE" "$T/drivers/fake.so"
printf 'broker_id: gbtest\n' >"$T/bare.yaml"
GPUBROKER_DRIVER_DIR=$T/drivers "$GB" -c "$T/bare.yaml" drivers -o json >"$T/drv.json" ||
	fail "drivers failed with an installed third-party driver: $(cat "$T/drv.json")"
check "[ \"\$(jq -r '[.[].name] | join(\",\")' $T/drv.json)\" = fake ]" "with no drivers: section the installed drivers load"
check "GPUBROKER_DRIVER_DIR=$T/drivers $GB -c $T/bare.yaml validate -f $T/fake.yaml >$T/out 2>&1" \
	"and they are the clouds a spec may name"
if GPUBROKER_DRIVER_DIR=$T/drivers "$GB" -c "$T/bare.yaml" validate -f "$T/aws.yaml" >"$T/out" 2>&1; then
	fail "aws was accepted with only fake installed"
fi
check "grep -q 'expected fake' $T/out" "and nothing else"
echo PASS
