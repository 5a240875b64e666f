#!/bin/sh
# cloudsim fault injection, each kind as configured: injected 5xx errors
# per operation and cloud (rate 1 and a statistical rate), lost responses
# (the work is done, the client gets a 5xx -- and the provider's
# idempotency makes the retry safe: EC2 ClientToken, ARM PUT by name, GCE
# requestId), latency (and that 150 concurrent clients are not serialised
# by it), EC2 throttling (request, resource and unfiltered-describe
# buckets), and the counters that report all of it.
. "$(dirname "$0")/../cloudsim/testlib.sh"

sim_start
sim_creds
az_token
gcp_token
V='Version=2016-11-15'
PRJ="projects/$GCP_PROJECT"
Z=us-central1-a
counter() { curl -s "$CTL_URL/_sim/counters" >"$T/c.json"; jget "$T/c.json" "$1"; }

# --- injected errors, rate 1 ----------------------------------------------------
ctl_post /_sim/scenario '{"error_rates":{"aws":{"DescribeAvailabilityZones":1},"azure":{"GetVM":1},"gcp":{"instances.get":1}}}'
expect_status 200 "error rates set"
ec2 "Action=DescribeAvailabilityZones&$V"
expect_status 500 "EC2 injected error"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InternalError "EC2 InternalError"
arm GET "$(az_vm_url any)"
expect_status 500 "ARM injected error"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["code"]')" InternalServerError "ARM InternalServerError"
gce GET "$PRJ/zones/$Z/instances/any"
expect_status 500 "GCE injected error"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["errors"][0]["reason"]')" backendError "GCE backendError"
ec2 "Action=DescribeInstances&$V"
expect_status 200 "other operations unaffected"
expect_eq "$(counter 'j["faults"]["error"]')" 3 "3 errors counted"

# --- injected errors, rate 0.3 (seeded) ---------------------------------------------
ctl_post /_sim/scenario '{"error_rates":{"aws":{"DescribeAvailabilityZones":0.3},"azure":{"GetVM":0},"gcp":{"instances.get":0}}}'
n5=0
i=0
while [ $i -lt 200 ]; do
	ec2 "Action=DescribeAvailabilityZones&$V"
	[ "$HTTP" = 500 ] && n5=$((n5 + 1))
	i=$((i + 1))
done
[ $n5 -ge 40 ] && [ $n5 -le 80 ] && ok "about 30% errors ($n5 of 200)" || fail "error rate 0.3 gave $n5 of 200"
ctl_post /_sim/scenario '{"error_rates":{"aws":{"DescribeAvailabilityZones":0}}}'

# --- lost responses: applied, then 5xx; the retry is idempotent ------------------------------
ctl_post /_sim/scenario '{"lost_response":{"aws":{"RunInstances":1},"azure":{"PutVM":1},"gcp":{"instances.insert":1}}}'
RUN="Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=2&MaxCount=2&ClientToken=lost-1&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=gpubroker-pool&TagSpecification.1.Tag.1.Value=lost"
ec2 "$RUN"
expect_status 500 "RunInstances: response lost"
curl -s "$CTL_URL/_sim/instances?cloud=aws" >"$T/i.json"
SIMIDS=$(jget "$T/i.json" '" ".join(sorted(i["id"] for i in j["instances"] if i["tags"].get("gpubroker-pool") == "lost"))')
expect_match '^i-[0-9a-f]+ i-[0-9a-f]+$' "$SIMIDS" "but the instances were launched"
arm PUT "$(az_vm_url lost-vm)" "$(az_vm_body Standard_NC4as_T4_v3 1)"
expect_status 500 "ARM PUT: response lost"
RID=$(uuid)
gce POST "$PRJ/zones/$Z/instances?requestId=$RID" "$(gce_body lost-gce g2-standard-4 | sed "s/ZONE/$Z/g")"
expect_status 500 "GCE insert: response lost"
ctl_post /_sim/scenario '{"lost_response":{"aws":{"RunInstances":0},"azure":{"PutVM":0},"gcp":{"instances.insert":0}}}'
ec2 "$RUN"
expect_status 200 "RunInstances retried with its ClientToken"
expect_eq "$(xml_all "$BODY_FILE" 'instancesSet/item/instanceId' | sort | tr '\n' ' ' | sed 's/ $//')" "$SIMIDS" "the retry returns the launched instances"
arm PUT "$(az_vm_url lost-vm)" "$(az_vm_body Standard_NC4as_T4_v3 1)"
expect_status 200 "ARM PUT retried by name: 200, not 201"
gce POST "$PRJ/zones/$Z/instances?requestId=$RID" "$(gce_body lost-gce g2-standard-4 | sed "s/ZONE/$Z/g")"
expect_status 200 "GCE insert retried with its requestId"
expect_eq "$(jget "$BODY_FILE" 'j["operationType"]')" insert "the original operation"
curl -s "$CTL_URL/_sim/instances" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'j["count"]')" 4 "exactly 4 instances after the retries (2 EC2, 1 VM, 1 GCE)"
expect_eq "$(counter 'j["faults"]["lost_response"]')" 3 "3 lost responses counted"

# --- latency, and concurrency under latency --------------------------------------------------
ctl_post /_sim/scenario '{"latency":{"aws":{"DescribeAvailabilityZones":{"base_ms":300,"jitter_ms":0}}}}'
t0=$(date +%s%N)
ec2 "Action=DescribeAvailabilityZones&$V"
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
[ $ms -ge 300 ] && ok "one request takes the configured 300 ms ($ms ms)" || fail "latency: $ms ms"
ctl_post /_sim/scenario '{"throttling":{"aws":{"Describe":{"capacity":100000,"refill_per_s":100000}}}}'
t0=$(date +%s%N)
i=0
pids=""
while [ $i -lt 150 ]; do
	curl -s -o "$T/par-$i" -w '%{http_code}\n' --aws-sigv4 "aws:amz:us-east-1:ec2" \
		--user "$AWS_KEY:$AWS_SECRET" --data-binary "Action=DescribeAvailabilityZones&$V" \
		"$AWS_URL/" >"$T/par-code-$i" &
	pids="$pids $!"
	i=$((i + 1))
done
for p in $pids; do wait "$p"; done
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
good=$(cat "$T"/par-code-* | grep -c '^200$')
expect_eq "$good" 150 "150 concurrent requests all answered 200"
[ $ms -lt 20000 ] && ok "150 x 300 ms in parallel took $ms ms (not serialised: 45 s)" || fail "concurrent latency: $ms ms"
ctl_post /_sim/scenario '{"latency":{"aws":{"DescribeAvailabilityZones":{"base_ms":0,"jitter_ms":0}}}}'

# --- EC2 throttling ---------------------------------------------------------------------
ctl_post /_sim/scenario '{"throttling":{"aws":{"RunInstances":{"capacity":2,"refill_per_s":0.01}}}}'
for i in 1 2 3; do
	ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=1&MaxCount=1"
done
expect_status 503 "3rd RunInstances in a bucket of 2"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" RequestLimitExceeded "RequestLimitExceeded"
ctl_post /_sim/scenario '{"throttling":{"aws":{"RunInstances":{"capacity":100,"refill_per_s":100},"RunInstancesResource":{"capacity":5,"refill_per_s":0.01}}}}'
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=3&MaxCount=3"
expect_status 200 "3 instances from a resource bucket of 5"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=3&MaxCount=3"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" RequestLimitExceeded "3 more exceed the instance (resource) bucket ($HTTP)"
ctl_post /_sim/scenario '{"throttling":{"aws":{"RunInstancesResource":{"capacity":1000,"refill_per_s":2},"DescribeUnfiltered":{"capacity":2,"refill_per_s":0.01}}}}'
for i in 1 2 3; do ec2 "Action=DescribeInstances&$V"; done
expect_status 503 "unfiltered, unpaginated DescribeInstances: own stricter bucket"
ec2 "Action=DescribeInstances&$V&MaxResults=5"
expect_status 200 "a paginated describe draws from the normal bucket"
ec2 "Action=DescribeInstances&$V&Filter.1.Name=instance-type&Filter.1.Value.1=g5.xlarge"
expect_status 200 "a filtered describe draws from the normal bucket"

# --- counters -------------------------------------------------------------------------------
curl -s "$CTL_URL/_sim/counters" >"$T/c.json"
expect_eq "$(jget "$T/c.json" 'j["faults"]["throttled"] >= 3')" True "throttled counted"
expect_eq "$(jget "$T/c.json" 'j["calls"]["aws"]["DescribeAvailabilityZones"] >= 350')" True "calls per operation counted"
expect_eq "$(jget "$T/c.json" 'j["calls"]["gcp"]["instances.insert"]')" 2 "gcp calls counted"
expect_eq "$(jget "$T/c.json" 'sorted(j["faults"].keys())')" '["auth_refused", "capacity", "error", "lost_response", "quota", "reclaimed", "throttled"]' "fault kinds"

finish
