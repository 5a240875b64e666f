#!/bin/sh
# cloudsim Spot reclamation as each cloud shows it, driven by a scheduled
# reclaim (fraction of a pool), a reclaim rate, and POST /_sim/reclaim:
#   EC2   shutting-down, then terminated (48), stateReason
#         Server.SpotInstanceTermination
#   Azure evictionPolicy Deallocate -> PowerState/deallocated (kept, not
#         billed); Delete -> gone
#   GCE   compute.instances.preempted operation, then TERMINATED (STOP)
#         or deleted (DELETE)
. "$(dirname "$0")/../cloudsim/testlib.sh"

cat >"$T/storm.yaml" <<EOF
seed: 99
catalogs:
  aws: $SCEN_DIR/test-catalog-aws.json
  azure: $SCEN_DIR/test-catalog-azure.json
  gcp: $SCEN_DIR/test-catalog-gcp.json
lifecycle:
  aws: {pending_ms: 100, stopping_ms: 400}
  azure: {pending_ms: 100, stopping_ms: 400}
  gcp: {pending_ms: 100, stopping_ms: 400}
spot:
  schedule:
    - {at_ms: 4000, cloud: aws, pool: storm, fraction: 0.5}
    - {at_ms: 4000, cloud: gcp, fraction: 1}
EOF
# cloudsim arms the schedule as it starts: after T_PRE, before T0
T_PRE=$(date +%s%N)
sim_start "$T/storm.yaml"
T0=$(date +%s%N)
sim_creds
gcp_token
V='Version=2016-11-15'
SPOT='InstanceMarketOptions.MarketType=spot'
STORM='TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=gpubroker-pool&TagSpecification.1.Tag.1.Value=storm'

ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=4&MaxCount=4&$SPOT&$STORM"
expect_eq "$(xml_count "$BODY_FILE" 'instancesSet/item')" 4 "4 EC2 spot instances in pool storm"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&$STORM"
OD=$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&$SPOT"
OTHER=$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')
gce POST "projects/$GCP_PROJECT/zones/us-central1-a/instances" "$(gce_body g-stop a2-highgpu-1g STOP | sed 's/ZONE/us-central1-a/g')"
gce POST "projects/$GCP_PROJECT/zones/us-central1-a/instances" "$(gce_body g-del a2-highgpu-1g DELETE | sed 's/ZONE/us-central1-a/g')"
el=$((($(date +%s%N) - T0) / 1000000))
[ $el -lt 3500 ] && ok "instances created before the schedule fires (${el} ms)" || fail "setup too slow ($el ms): the schedule may have fired early"

# wait for the schedule (at 4 s)
n=0
while [ $n -lt 100 ]; do
	curl -s "$CTL_URL/_sim/counters" >"$T/c.json"
	[ "$(jget "$T/c.json" 'j["faults"]["reclaimed"]')" -ge 4 ] && break
	sleep 0.1
	n=$((n + 1))
done
# not early: it fires at least 4 s after it was armed, so at least 4 s
# after T_PRE (measured from T0, after cloudsim's start, a slow start --
# an ASan build -- made a punctual firing look early: 3,478 ms)
el=$((($(date +%s%N) - T_PRE) / 1000000))
[ $el -ge 4000 ] && ok "schedule fired at its time (${el} ms after cloudsim was started)" || fail "schedule fired early ($el ms after cloudsim was started)"
expect_eq "$(jget "$T/c.json" 'j["faults_by_cloud"]["aws"]["reclaimed"]')" 2 "half of the 4 pool spot instances on EC2"
expect_eq "$(jget "$T/c.json" 'j["faults_by_cloud"]["gcp"]["reclaimed"]')" 2 "all GCE spot instances"

# EC2 view: shutting-down at once, then terminated with the spot reason
ec2 "Action=DescribeInstances&$V&Filter.1.Name=tag:gpubroker-pool&Filter.1.Value.1=storm&Filter.2.Name=instance-state-name&Filter.2.Value.1=shutting-down&Filter.2.Value.2=terminated"
expect_eq "$(xml_count "$BODY_FILE" 'reservationSet/item/instancesSet/item')" 2 "2 reclaimed EC2 instances"
sleep 0.5
ec2 "Action=DescribeInstances&$V&Filter.1.Name=tag:gpubroker-pool&Filter.1.Value.1=storm&Filter.2.Name=instance-state-name&Filter.2.Value.1=terminated"
expect_eq "$(xml_all "$BODY_FILE" 'reservationSet/item/instancesSet/item/instanceState/code' | sort -u)" 48 "terminated (48)"
expect_eq "$(xml_all "$BODY_FILE" 'reservationSet/item/instancesSet/item/stateReason/code' | sort -u)" Server.SpotInstanceTermination "stateReason code"
expect_eq "$(xml_all "$BODY_FILE" 'reservationSet/item/instancesSet/item/stateReason/message' | sort -u)" "Server.SpotInstanceTermination: Spot instance termination" "stateReason message"
ec2 "Action=DescribeInstances&$V&InstanceId.1=$OD&InstanceId.2=$OTHER"
expect_eq "$(xml_all "$BODY_FILE" 'reservationSet/item/instancesSet/item/instanceState/name' | sort -u)" running "on-demand and other-pool spot instances untouched"

# GCE view
F=$($PY -c 'import urllib.parse; print(urllib.parse.quote("operationType = \"compute.instances.preempted\""))')
gce GET "projects/$GCP_PROJECT/zones/us-central1-a/operations?filter=$F"
expect_eq "$(jget "$BODY_FILE" 'sorted(o["targetLink"].rsplit("/", 1)[1] for o in j["items"])')" '["g-del", "g-stop"]' "compute.instances.preempted operations"
gce GET "projects/$GCP_PROJECT/zones/us-central1-a/instances/g-stop"
expect_eq "$(jget "$BODY_FILE" 'j["status"]')" TERMINATED "instanceTerminationAction STOP: TERMINATED"
gce GET "projects/$GCP_PROJECT/zones/us-central1-a/instances/g-del"
expect_status 404 "instanceTerminationAction DELETE: deleted"

# --- a reclaim rate: every Spot VM goes within a tick or two -------------------------
az_token
arm PUT "$(az_vm_url az-spot)" "$(az_vm_body Standard_NC4as_T4_v3 1 Deallocate)"
expect_status 201 "Azure Spot VM (Deallocate)"
ctl_post /_sim/scenario '{"spot": {"reclaim_rate_per_hour": 360000}}'
n=0
while [ $n -lt 50 ]; do
	arm GET "$(az_vm_url az-spot)&\$expand=instanceView"
	[ "$(jget "$BODY_FILE" 'j["properties"]["instanceView"]["statuses"][-1]["code"]')" = PowerState/deallocated ] && break
	sleep 0.1
	n=$((n + 1))
done
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["instanceView"]["statuses"][-1]["code"]')" PowerState/deallocated "rate-based eviction: PowerState/deallocated"
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["provisioningState"]')" Succeeded "the evicted VM is still there"
ec2 "Action=DescribeInstances&$V&InstanceId.1=$OTHER"
expect_match '^(shutting-down|terminated)$' "$(xml_get "$BODY_FILE" 'reservationSet/item/instancesSet/item/instanceState/name')" "the other EC2 spot instance went too"
ec2 "Action=DescribeInstances&$V&InstanceId.1=$OD"
expect_eq "$(xml_get "$BODY_FILE" 'reservationSet/item/instancesSet/item/instanceState/name')" running "on-demand never reclaimed"
ctl_post /_sim/scenario '{"spot": {"reclaim_rate_per_hour": 0}}'

# bill: reclaimed instances stopped billing
curl -s "$CTL_URL/_sim/bill" >"$T/b.json"
expect_eq "$(jget "$T/b.json" 'sum(1 for e in j["instances"] if e["capacity"] == "spot" and e["ended"] is None)')" 0 "no reclaimed spot instance is still billed"
curl -s "$CTL_URL/_sim/instances?live=1" >"$T/i.json"
expect_eq "$(jget "$T/i.json" '[i["state"] for i in j["instances"] if i["id"] == "az-spot"][0]')" stopped "/_sim: the deallocated VM is stopped (still to be deleted)"
expect_eq "$(jget "$T/i.json" '[i["reclaimed"] for i in j["instances"] if i["id"] == "az-spot"][0]')" True "/_sim: reclaimed flag"

finish
