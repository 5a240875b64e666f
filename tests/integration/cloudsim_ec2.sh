#!/bin/sh
# cloudsim EC2 Query API through plain curl (--aws-sigv4): RunInstances
# (Min/MaxCount, tags, placement, ClientToken idempotency and
# IdempotentParameterMismatch, spot), DescribeInstances (filters, ids,
# MaxResults/NextToken paging, eventual consistency), TerminateInstances
# (idempotent), DescribeInstanceTypes (GpuInfo, wildcards, paging),
# DescribeSpotPriceHistory, DescribeAvailabilityZones, and EC2's error
# codes and statuses.
. "$(dirname "$0")/../cloudsim/testlib.sh"

sim_start
sim_creds
V='Version=2016-11-15'
TAGS='TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=gpubroker-pool&TagSpecification.1.Tag.1.Value=p1'

# --- RunInstances -------------------------------------------------------
ec2 "Action=RunInstances&$V&ImageId=ami-0abcdef1234567890&InstanceType=g5.xlarge&MinCount=2&MaxCount=3&$TAGS&ClientToken=tok-1"
expect_status 200 "RunInstances g5.xlarge 2..3"
expect_eq "$(xml_count "$BODY_FILE" 'instancesSet/item')" 3 "MaxCount instances launched"
expect_match '^r-[0-9a-f]{17}$' "$(xml_get "$BODY_FILE" reservationId)" "reservation id shape"
expect_match '^i-[0-9a-f]{17}$' "$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')" "instance id shape"
expect_eq "$(xml_get "$BODY_FILE" 'instancesSet/item/instanceState/code')" 0 "new instance is pending (0)"
expect_eq "$(xml_get "$BODY_FILE" 'instancesSet/item/tagSet/item/value')" p1 "tags echoed"
expect_match '^10\.' "$(xml_get "$BODY_FILE" 'instancesSet/item/privateIpAddress')" "private IP"
expect_match '^198\.1[89]\.' "$(xml_get "$BODY_FILE" 'instancesSet/item/ipAddress')" "public IP"
grep -q 'xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"' "$BODY_FILE" && ok "EC2 namespace" || fail "namespace"
grep -q '<requestId>' "$BODY_FILE" && ok "requestId in success body" || fail "requestId"
RES1=$(xml_get "$BODY_FILE" reservationId)
IDS1=$(xml_all "$BODY_FILE" 'instancesSet/item/instanceId' | sort | tr '\n' ' ')

# same ClientToken, same parameters: the same reservation, nothing new
ec2 "Action=RunInstances&$V&ImageId=ami-0abcdef1234567890&InstanceType=g5.xlarge&MinCount=2&MaxCount=3&$TAGS&ClientToken=tok-1"
expect_status 200 "RunInstances retry with the same ClientToken"
expect_eq "$(xml_get "$BODY_FILE" reservationId)" "$RES1" "retry returns the original reservation"
expect_eq "$(xml_all "$BODY_FILE" 'instancesSet/item/instanceId' | sort | tr '\n' ' ')" "$IDS1" "retry returns the same instances"
# regional token: another AZ is not a parameter change (AZ excepted)
ec2 "Action=RunInstances&$V&ImageId=ami-0abcdef1234567890&InstanceType=g5.xlarge&MinCount=2&MaxCount=4&$TAGS&ClientToken=tok-1"
expect_status 400 "same ClientToken, changed MaxCount"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" IdempotentParameterMismatch "IdempotentParameterMismatch"
grep -q '<RequestID>' "$BODY_FILE" && ok "RequestID in error body" || fail "RequestID"
curl -s "$CTL_URL/_sim/instances?cloud=aws" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'j["count"]')" 3 "no instance created by the retries"

# zonal token: the same token in another zone is another request
ec2 "Action=RunInstances&$V&ImageId=ami-0abcdef1234567890&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&Placement.AvailabilityZone=us-east-1b&ClientToken=tok-z"
expect_status 200 "zonal ClientToken in us-east-1b"
expect_eq "$(xml_get "$BODY_FILE" 'instancesSet/item/placement/availabilityZone')" us-east-1b "placement honoured"
ZB=$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')
ec2 "Action=RunInstances&$V&ImageId=ami-0abcdef1234567890&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&Placement.AvailabilityZone=us-east-1c&ClientToken=tok-z"
expect_status 200 "same zonal ClientToken in us-east-1c"
ZC=$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')
[ "$ZB" != "$ZC" ] && ok "zonal idempotency: a new instance in the other zone" || fail "zonal token reused across zones"

# resolve:ssm: EC2 resolves the public parameter at launch; the instance
# carries the region's ami-... id, never the parameter
SSM_P='%2Faws%2Fservice%2Fdeeplearning%2Fami%2Fx86_64%2Fbase-oss-nvidia-driver-gpu-ubuntu-22.04%2Flatest%2Fami-id'
ec2 "Action=RunInstances&$V&ImageId=resolve%3Assm%3A$SSM_P&InstanceType=g4dn.xlarge&MinCount=1&MaxCount=1"
expect_status 200 "ImageId resolve:ssm:<the aws driver's default parameter>"
SSM_ID=$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')
SSM_AMI=$(xml_get "$BODY_FILE" 'instancesSet/item/imageId')
expect_match '^ami-[0-9a-f]{17}$' "$SSM_AMI" "RunInstances returns the resolved AMI in imageId"
grep -q 'resolve:ssm' "$BODY_FILE" && fail "the SSM parameter leaked into the RunInstances answer" || ok "no parameter in the RunInstances answer"
# the same parameter resolves to the same AMI in the region, another one elsewhere
ec2 "Action=RunInstances&$V&ImageId=resolve%3Assm%3A$SSM_P&InstanceType=g4dn.xlarge&MinCount=1&MaxCount=1&DryRun=true"
expect_status 412 "DryRun with a resolvable parameter"
ec2 "Action=RunInstances&$V&ImageId=resolve%3Assm%3A$SSM_P&InstanceType=p5.48xlarge&MinCount=1&MaxCount=1" "$AWS_KEY" "$AWS_SECRET" eu-west-1
expect_status 200 "resolve:ssm in eu-west-1"
EU_AMI=$(xml_get "$BODY_FILE" 'instancesSet/item/imageId')
EU_SSM_ID=$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')
expect_match '^ami-[0-9a-f]{17}$' "$EU_AMI" "eu-west-1 gets an ami id too"
[ "$EU_AMI" != "$SSM_AMI" ] && ok "a public parameter resolves per region" || fail "same AMI in two regions: $EU_AMI"
ec2 "Action=TerminateInstances&$V&InstanceId.1=$EU_SSM_ID" "$AWS_KEY" "$AWS_SECRET" eu-west-1
expect_status 200 "terminate the eu-west-1 instance"
# a parameter that does not exist is refused, nothing launched
curl -s "$CTL_URL/_sim/instances?cloud=aws" >"$T/i.json"
BEFORE=$(jget "$T/i.json" 'j["count"]')
for P in '%2Fgolden-ami' '%2Faws%2Fservice%2Fno-such-namespace%2Fami-id' 'golden-ami'; do
	ec2 "Action=RunInstances&$V&ImageId=resolve%3Assm%3A$P&InstanceType=g4dn.xlarge&MinCount=1&MaxCount=1"
	expect_status 400 "unknown SSM parameter $P"
	expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidParameterValue "unknown parameter: InvalidParameterValue"
	expect_match 'does not exist' "$(xml_get "$BODY_FILE" 'Errors/Error/Message')" "the message says the parameter does not exist"
done
curl -s "$CTL_URL/_sim/instances?cloud=aws" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'j["count"]')" "$BEFORE" "no instance launched for an unknown parameter"

# spot
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=p5.48xlarge&MinCount=1&MaxCount=1&InstanceMarketOptions.MarketType=spot&InstanceMarketOptions.SpotOptions.SpotInstanceType=one-time&InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior=terminate"
expect_status 200 "spot RunInstances"
expect_eq "$(xml_get "$BODY_FILE" 'instancesSet/item/instanceLifecycle')" spot "instanceLifecycle=spot"
expect_match '^sir-' "$(xml_get "$BODY_FILE" 'instancesSet/item/spotInstanceRequestId')" "spotInstanceRequestId"
expect_eq "$(xml_get "$BODY_FILE" 'instancesSet/item/placement/availabilityZone')" us-east-1a "spot goes to a zone with a spot market"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=p5.48xlarge&MinCount=1&MaxCount=1&InstanceMarketOptions.MarketType=spot&InstanceMarketOptions.SpotOptions.MaxPrice=1.5"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" SpotMaxPriceTooLow "SpotMaxPriceTooLow ($HTTP)"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g4dn.xlarge&MinCount=1&MaxCount=1&InstanceMarketOptions.MarketType=spot"
expect_status 400 "spot where the catalog has no spot market"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" Unsupported "Unsupported"

# errors
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=x9.huge&MinCount=1&MaxCount=1"
expect_status 400 "unknown instance type"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidParameterValue "InvalidParameterValue"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g4dn.xlarge&MinCount=1&MaxCount=1&Placement.AvailabilityZone=us-east-1c"
expect_status 400 "type not offered in the zone"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" Unsupported "Unsupported in the zone"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=p5.48xlarge&MinCount=1&MaxCount=1" "$AWS_KEY" "$AWS_SECRET" eu-west-1
expect_status 200 "another region through the credential scope"
expect_match '^eu-west-1' "$(xml_get "$BODY_FILE" 'instancesSet/item/placement/availabilityZone')" "instance lands in eu-west-1"
EU_ID=$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')
ec2 "Action=RunInstances&$V&InstanceType=g5.xlarge&MinCount=1&MaxCount=1"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" MissingParameter "MissingParameter ImageId ($HTTP)"
ec2 "Action=RunInstances&$V&ImageId=bogus&InstanceType=g5.xlarge&MinCount=1&MaxCount=1"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidAMIID.Malformed "InvalidAMIID.Malformed ($HTTP)"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=3&MaxCount=2"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidParameterValue "MaxCount < MinCount ($HTTP)"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&DryRun=true"
expect_status 412 "DryRun"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" DryRunOperation "DryRunOperation"
ec2 "Action=FrobnicateInstances&$V"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidAction "InvalidAction ($HTTP)"

# capacity: MinCount/MaxCount against a zone limit
ctl_post /_sim/scenario '{"capacity":[{"cloud":"aws","zone":"us-east-1a","type":"p4de.24xlarge","count":3},{"cloud":"aws","zone":"us-east-1b","type":"p4de.24xlarge","count":0}]}'
expect_status 200 "capacity set at run time"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=p4de.24xlarge&MinCount=2&MaxCount=5&Placement.AvailabilityZone=us-east-1a"
expect_status 200 "MinCount 2 MaxCount 5 with room for 3"
expect_eq "$(xml_count "$BODY_FILE" 'instancesSet/item')" 3 "launched min(MaxCount, available) = 3"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=p4de.24xlarge&MinCount=1&MaxCount=1&Placement.AvailabilityZone=us-east-1a"
expect_status 500 "no room left"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InsufficientInstanceCapacity "InsufficientInstanceCapacity"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=p4de.24xlarge&MinCount=1&MaxCount=1"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InsufficientInstanceCapacity "no zone has room"

# quota (vCPUs of the P family, on-demand; spot has its own)
ctl_post /_sim/scenario '{"quotas":{"aws":{"vcpus":{"G":12},"spot_vcpus":{"P":0},"instances":{"g4dn.xlarge":1}}}}'
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=1&MaxCount=1"
expect_status 400 "over the G vCPU quota"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" VcpuLimitExceeded "VcpuLimitExceeded"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=p5.48xlarge&MinCount=1&MaxCount=1&InstanceMarketOptions.MarketType=spot"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" MaxSpotInstanceCountExceeded "MaxSpotInstanceCountExceeded ($HTTP)"
ctl_post /_sim/scenario '{"quotas":{"aws":{"vcpus":{"G":100000}}}}'
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g4dn.xlarge&MinCount=1&MaxCount=1"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InstanceLimitExceeded "InstanceLimitExceeded ($HTTP)"
ctl_post /_sim/scenario '{"quotas":{"aws":{"vcpus":{"G":100000},"spot_vcpus":{"P":100000},"instances":{"g4dn.xlarge":100}}}}'

# --- DescribeInstances ---------------------------------------------------
ec2 "Action=DescribeInstances&$V&Filter.1.Name=tag:gpubroker-pool&Filter.1.Value.1=p1"
expect_status 200 "DescribeInstances tag filter"
expect_eq "$(xml_count "$BODY_FILE" 'reservationSet/item/instancesSet/item')" 3 "tag filter finds the pool's 3"
ec2 "Action=DescribeInstances&$V&Filter.1.Name=tag-key&Filter.1.Value.1=gpubroker-*&Filter.2.Name=instance-type&Filter.2.Value.1=g5.*"
expect_eq "$(xml_count "$BODY_FILE" 'reservationSet/item/instancesSet/item')" 3 "tag-key + instance-type wildcard filters"
FIRST=$(echo "$IDS1" | cut -d' ' -f1)
ec2 "Action=DescribeInstances&$V&InstanceId.1=$FIRST&InstanceId.2=$SSM_ID"
expect_eq "$(xml_count "$BODY_FILE" 'reservationSet/item/instancesSet/item')" 2 "InstanceId.N"
ec2 "Action=DescribeInstances&$V&InstanceId.1=$SSM_ID"
expect_eq "$(xml_get "$BODY_FILE" 'reservationSet/item/instancesSet/item/imageId')" "$SSM_AMI" "DescribeInstances shows the resolved AMI"
grep -q 'resolve:ssm' "$BODY_FILE" && fail "the SSM parameter leaked into DescribeInstances" || ok "no parameter in DescribeInstances"
ec2 "Action=DescribeInstances&$V&Filter.1.Name=image-id&Filter.1.Value.1=$SSM_AMI"
expect_eq "$(xml_get "$BODY_FILE" 'reservationSet/item/instancesSet/item/instanceId')" "$SSM_ID" "image-id filter matches the resolved AMI"
ec2 "Action=DescribeInstances&$V&Filter.1.Name=instance-id&Filter.1.Value.1=$FIRST"
expect_eq "$(xml_get "$BODY_FILE" 'reservationSet/item/instancesSet/item/instanceId')" "$FIRST" "instance-id filter"
ec2 "Action=DescribeInstances&$V&InstanceId.1=i-0123456789abcdef0"
expect_status 400 "unknown instance id"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidInstanceID.NotFound "InvalidInstanceID.NotFound"
ec2 "Action=DescribeInstances&$V&InstanceId.1=not-an-id"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidInstanceID.Malformed "InvalidInstanceID.Malformed ($HTTP)"
ec2 "Action=DescribeInstances&$V&Filter.1.Name=bogus-filter&Filter.1.Value.1=x"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidParameterValue "unknown filter name ($HTTP)"
ec2 "Action=DescribeInstances&$V&MaxResults=3"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidParameterValue "MaxResults below 5 ($HTTP)"
ec2 "Action=DescribeInstances&$V&MaxResults=1001"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidParameterValue "MaxResults above 1000"
ec2 "Action=DescribeInstances&$V&MaxResults=5&InstanceId.1=$FIRST"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidParameterCombination "MaxResults with InstanceId ($HTTP)"
ec2 "Action=DescribeInstances&$V&MaxResults=5&NextToken=garbage"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidPaginationToken "bad NextToken ($HTTP)"

# paging: 23 more instances, pages of 5, every instance exactly once
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=23&MaxCount=23&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=gpubroker-pool&TagSpecification.1.Tag.1.Value=paged"
expect_eq "$(xml_count "$BODY_FILE" 'instancesSet/item')" 23 "23 instances for paging"
tok=""
pages=0
: >"$T/paged"
while :; do
	q="Action=DescribeInstances&$V&MaxResults=5&Filter.1.Name=tag:gpubroker-pool&Filter.1.Value.1=paged"
	[ -n "$tok" ] && q="$q&NextToken=$tok"
	ec2 "$q"
	[ "$HTTP" = 200 ] || { fail "page $pages: HTTP $HTTP"; break; }
	xml_all "$BODY_FILE" 'reservationSet/item/instancesSet/item/instanceId' >>"$T/paged"
	pages=$((pages + 1))
	tok=$(xml_get "$BODY_FILE" nextToken)
	[ -z "$tok" ] && break
	[ $pages -gt 10 ] && break
done
expect_eq "$pages" 5 "5 pages of at most 5"
expect_eq "$(sort -u "$T/paged" | wc -l | tr -d ' ')" 23 "every instance exactly once across pages"
expect_eq "$(wc -l <"$T/paged" | tr -d ' ')" 23 "no duplicates across pages"

# running after pending_ms
sleep 0.4
ec2 "Action=DescribeInstances&$V&InstanceId.1=$FIRST"
expect_eq "$(xml_get "$BODY_FILE" 'reservationSet/item/instancesSet/item/instanceState/name')" running "pending -> running"
expect_eq "$(xml_get "$BODY_FILE" 'reservationSet/item/instancesSet/item/instanceState/code')" 16 "running is 16"
ec2 "Action=DescribeInstances&$V&Filter.1.Name=instance-state-name&Filter.1.Value.1=running&Filter.2.Name=tag:gpubroker-pool&Filter.2.Value.1=p1"
expect_eq "$(xml_count "$BODY_FILE" 'reservationSet/item/instancesSet/item')" 3 "instance-state-name filter"

# eventual consistency: a new instance is invisible for N ms
ctl_post /_sim/scenario '{"eventual_consistency_ms": 700}'
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=1&MaxCount=1"
EC_ID=$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')
ec2 "Action=DescribeInstances&$V&InstanceId.1=$EC_ID"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidInstanceID.NotFound "new instance not yet visible"
sleep 0.8
ec2 "Action=DescribeInstances&$V&InstanceId.1=$EC_ID"
expect_status 200 "visible after eventual_consistency_ms"
ctl_post /_sim/scenario '{"eventual_consistency_ms": 0}'

# --- TerminateInstances --------------------------------------------------
ec2 "Action=TerminateInstances&$V&InstanceId.1=$FIRST&InstanceId.2=$SSM_ID"
expect_status 200 "TerminateInstances"
expect_eq "$(xml_get "$BODY_FILE" 'instancesSet/item/previousState/name')" running "previousState running"
expect_eq "$(xml_get "$BODY_FILE" 'instancesSet/item/currentState/code')" 32 "currentState shutting-down (32)"
sleep 0.4
ec2 "Action=TerminateInstances&$V&InstanceId.1=$FIRST"
expect_status 200 "TerminateInstances again (idempotent)"
expect_eq "$(xml_get "$BODY_FILE" 'instancesSet/item/currentState/name')" terminated "already terminated"
ec2 "Action=DescribeInstances&$V&InstanceId.1=$FIRST"
expect_eq "$(xml_get "$BODY_FILE" 'reservationSet/item/instancesSet/item/instanceState/code')" 48 "terminated (48) stays visible"
expect_eq "$(xml_get "$BODY_FILE" 'reservationSet/item/instancesSet/item/stateReason/code')" Client.UserInitiatedShutdown "stateReason of a user termination"
ec2 "Action=TerminateInstances&$V&InstanceId.1=i-0123456789abcdef0"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidInstanceID.NotFound "terminate unknown id ($HTTP)"
ec2 "Action=TerminateInstances&$V"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" MissingParameter "terminate without ids"

# --- DescribeInstanceTypes ------------------------------------------------
ec2 "Action=DescribeInstanceTypes&$V&InstanceType.1=p5.48xlarge"
expect_status 200 "DescribeInstanceTypes"
expect_eq "$(xml_get "$BODY_FILE" 'instanceTypeSet/item/gpuInfo/gpus/item/name')" H100 "GpuInfo name"
expect_eq "$(xml_get "$BODY_FILE" 'instanceTypeSet/item/gpuInfo/gpus/item/count')" 8 "GpuInfo count"
expect_eq "$(xml_get "$BODY_FILE" 'instanceTypeSet/item/gpuInfo/totalGpuMemoryInMiB')" 655360 "totalGpuMemoryInMiB"
expect_eq "$(xml_get "$BODY_FILE" 'instanceTypeSet/item/vCpuInfo/defaultVCpus')" 192 "defaultVCpus"
ec2 "Action=DescribeInstanceTypes&$V&Filter.1.Name=instance-type&Filter.1.Value.1=g*"
expect_eq "$(xml_count "$BODY_FILE" 'instanceTypeSet/item')" 2 "instance-type wildcard"
ec2 "Action=DescribeInstanceTypes&$V&MaxResults=5"
expect_eq "$(xml_count "$BODY_FILE" 'instanceTypeSet/item')" 4 "all types of the region"
ec2 "Action=DescribeInstanceTypes&$V&InstanceType.1=x1.nope"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidInstanceType "InvalidInstanceType ($HTTP)"
ec2 "Action=DescribeInstanceTypes&$V&MaxResults=101"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InvalidParameterValue "MaxResults above 100"

# --- DescribeSpotPriceHistory ----------------------------------------------
NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ec2 "Action=DescribeSpotPriceHistory&$V&InstanceType.1=p5.48xlarge&ProductDescription.1=Linux%2FUNIX&StartTime=$NOW&EndTime=$NOW"
expect_status 200 "DescribeSpotPriceHistory"
expect_eq "$(xml_all "$BODY_FILE" 'spotPriceHistorySet/item/availabilityZone' | tr '\n' ' ')" "us-east-1a us-east-1b " "zones with a spot market (null spot_zones excluded)"
expect_eq "$(xml_get "$BODY_FILE" 'spotPriceHistorySet/item/spotPrice')" 30.900000 "zone spot price"
ec2 "Action=DescribeSpotPriceHistory&$V&AvailabilityZone=us-east-1b&InstanceType.1=p5.48xlarge"
expect_eq "$(xml_get "$BODY_FILE" 'spotPriceHistorySet/item/spotPrice')" 31.500000 "region spot price where no zone price"
ec2 "Action=DescribeSpotPriceHistory&$V&ProductDescription.1=Windows"
expect_eq "$(xml_count "$BODY_FILE" 'spotPriceHistorySet/item')" 0 "no Windows rows"
ec2 "Action=DescribeSpotPriceHistory&$V&MaxResults=2"
expect_eq "$(xml_count "$BODY_FILE" 'spotPriceHistorySet/item')" 2 "spot history page"
tok=$(xml_get "$BODY_FILE" nextToken)
ec2 "Action=DescribeSpotPriceHistory&$V&MaxResults=100&NextToken=$tok"
expect_eq "$(xml_count "$BODY_FILE" 'spotPriceHistorySet/item')" 5 "rest of the spot history"

# --- DescribeAvailabilityZones ---------------------------------------------
ec2 "Action=DescribeAvailabilityZones&$V"
expect_status 200 "DescribeAvailabilityZones"
expect_eq "$(xml_all "$BODY_FILE" 'availabilityZoneInfo/item/zoneName' | tr '\n' ' ')" "us-east-1a us-east-1b us-east-1c " "zones of us-east-1"
expect_eq "$(xml_get "$BODY_FILE" 'availabilityZoneInfo/item/zoneId')" use1-az1 "zoneId"
ec2 "Action=DescribeAvailabilityZones&$V" "$AWS_KEY" "$AWS_SECRET" eu-west-1
expect_eq "$(xml_count "$BODY_FILE" 'availabilityZoneInfo/item')" 2 "zones of eu-west-1"

# GET query form (curl 7.88 signs the query as given: keep it sorted)
req GET "$AWS_URL/?Action=DescribeAvailabilityZones&Version=2016-11-15" \
	--aws-sigv4 "aws:amz:us-east-1:ec2" --user "$AWS_KEY:$AWS_SECRET"
expect_status 200 "GET form of the Query API"

# /_sim/instances agrees
curl -s "$CTL_URL/_sim/instances?cloud=aws&live=1" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'sum(1 for i in j["instances"] if i["id"] == "'"$FIRST"'")')" 0 "terminated instance not live"
expect_eq "$(jget "$T/i.json" '[i["region"] for i in j["instances"] if i["id"] == "'"$EU_ID"'"][0]')" eu-west-1 "/_sim/instances region"

finish
