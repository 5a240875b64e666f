#!/bin/sh
# cloudsim scenarios: every shipped scenario validates; a broken one is
# refused with file:line:col diagnostics; and the shipped ones behave as
# configured (demo: latency and sold-out EU zones; capacity-tight:
# capacity and quota errors; fault-storm: ~30% 5xx and throttling;
# spot-storm: its reclaim schedule).
. "$(dirname "$0")/../cloudsim/testlib.sh"

for s in demo capacity-tight fault-storm spot-storm test; do
	if out=$("$CLOUDSIM" check-scenario "$SCEN_DIR/$s.yaml" 2>&1); then
		ok "$s.yaml is valid"
	else
		fail "$s.yaml: $out"
	fi
done

# --- a broken scenario -----------------------------------------------------------
cat >"$T/bad.yaml" <<EOF
seed: 1
catalogs: {aws: $SCEN_DIR/test-catalog-aws.json}
capacity:
  - {cloud: aws, type: "p5*", count: many}
error_rates:
  azure: {PutVM: 1.5}
latency:
  gcp: {instances.inserts: {base_ms: 5}}
throttling:
  aws: {RunInstances: {capacity: 5, refil_per_s: 2}}
spot: {schedule: [{at_ms: 5}]}
lifecycles: {}
billing: {aws: {minimum_s: -5}, azure: {minimum: 3}}
EOF
out=$("$CLOUDSIM" check-scenario "$T/bad.yaml" 2>&1)
rc=$?
expect_eq "$rc" 1 "check-scenario fails"
expect_match "bad.yaml:4:[0-9]+: error: capacity\[0\]\.count: expected an integer" "$out" "count: many"
expect_match "bad.yaml:6:[0-9]+: error: error_rates\.azure\.PutVM" "$out" "rate 1.5"
expect_match "bad.yaml:8:[0-9]+: error: latency\.gcp\.instances\.inserts: unknown key .*did you mean \"instances\.insert\"" "$out" "unknown operation with a suggestion"
expect_match "bad.yaml:10:[0-9]+: error: throttling\.aws\.RunInstances\.refil_per_s: unknown key .*refill_per_s" "$out" "misspelt bucket key"
expect_match "bad.yaml:11:[0-9]+: error: spot\.schedule\[0\]: give \"fraction\"" "$out" "schedule entry without fraction or ids"
expect_match "bad.yaml:12:1: error: lifecycles: unknown key .*did you mean \"lifecycle\"" "$out" "unknown top-level key"
expect_match "bad.yaml:13:[0-9]+: error: billing\.aws\.minimum_s: expected an integer from 0" "$out" "a negative billing minimum"
expect_match "bad.yaml:13:[0-9]+: error: billing\.azure\.minimum: unknown key .*did you mean \"minimum_s\"" "$out" "a misspelt billing key"
"$CLOUDSIM" --scenario "$T/bad.yaml" --port 0 >/dev/null 2>"$T/err"
expect_eq "$?" 2 "cloudsim refuses to start on it (exit 2)"
printf 'catalogs: {gcp: nowhere/offers.json}\n' >"$T/nocat.yaml"
out=$("$CLOUDSIM" check-scenario "$T/nocat.yaml" 2>&1)
expect_match "the gcp catalog .*nowhere/offers.json cannot be read" "$out" "a missing catalog file is a clear error"

# --- the shipped scenarios in action ------------------------------------------------
if [ ! -f "$GB_SRC/drivers/aws/data/offers.json" ] || [ ! -f "$GB_SRC/drivers/gcp/data/offers.json" ]; then
	echo "note: the drivers' catalogs are missing; skipping the shipped-scenario runs"
	finish
fi
V='Version=2016-11-15'

sim_start "$SCEN_DIR/demo.yaml"
sim_creds
gcp_token
t0=$(date +%s%N)
ec2 "Action=DescribeAvailabilityZones&$V" "$AWS_KEY" "$AWS_SECRET" eu-north-1
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$HTTP" = 200 ] && [ $ms -ge 20 ] && ok "demo: modest latency ($ms ms)" || fail "demo latency: HTTP $HTTP, $ms ms"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=p5.48xlarge&MinCount=1&MaxCount=1&InstanceMarketOptions.MarketType=spot&Placement.AvailabilityZone=eu-north-1c" "$AWS_KEY" "$AWS_SECRET" eu-north-1
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InsufficientInstanceCapacity "demo: EU H100 spot sold out on EC2 ($HTTP)"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=p5.48xlarge&MinCount=1&MaxCount=1&Placement.AvailabilityZone=eu-north-1c" "$AWS_KEY" "$AWS_SECRET" eu-north-1
expect_status 200 "demo: on-demand there still works"
gce POST "projects/$GCP_PROJECT/zones/europe-north1-c/instances" "$(gce_body d1 a3-highgpu-8g STOP | sed 's/ZONE/europe-north1-c/g')"
OP=$(jget "$BODY_FILE" 'j["name"]')
gce POST "projects/$GCP_PROJECT/zones/europe-north1-c/operations/$OP/wait"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["errors"][0]["code"]')" ZONE_RESOURCE_POOL_EXHAUSTED "demo: EU H100 spot sold out on GCE"
sim_stop_all || fail "demo cloudsim exit"

sim_start "$SCEN_DIR/capacity-tight.yaml"
sim_creds
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=p5.48xlarge&MinCount=3&MaxCount=3"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" VcpuLimitExceeded "capacity-tight: P vCPU quota ($HTTP)"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=2&MaxCount=2&InstanceMarketOptions.MarketType=spot&Placement.AvailabilityZone=us-east-1a"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InsufficientInstanceCapacity "capacity-tight: one spot instance per zone ($HTTP)"
sim_stop_all || fail "capacity-tight cloudsim exit"

sim_start "$SCEN_DIR/fault-storm.yaml"
sim_creds
n5=0 n503=0 i=0
while [ $i -lt 60 ]; do
	ec2 "Action=DescribeAvailabilityZones&$V"
	case "$HTTP" in 500) n5=$((n5 + 1)) ;; 503) n503=$((n503 + 1)) ;; esac
	i=$((i + 1))
done
[ $n5 -ge 6 ] && [ $n5 -le 30 ] && ok "fault-storm: injected 5xx ($n5 of 60)" || fail "fault-storm: $n5 injected errors of 60"
[ $n503 -ge 1 ] && ok "fault-storm: tight throttling ($n503 RequestLimitExceeded)" || fail "fault-storm: no throttling"
sim_stop_all || fail "fault-storm cloudsim exit"

sim_start "$SCEN_DIR/spot-storm.yaml"
curl -s "$CTL_URL/_sim/scenario" >"$T/s.json"
expect_eq "$(jget "$T/s.json" 'j["spot"]')" '{"reclaim_rate_per_hour": 6.0, "schedule_entries": 2}' "spot-storm: reclaim rate and schedule"

finish
