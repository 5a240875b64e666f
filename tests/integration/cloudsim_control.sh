#!/bin/sh
# cloudsim control API (/_sim/): the first stdout line, credentials, the
# env exports the drivers use, live instances of every cloud, the bill
# (instance-seconds x price), runtime scenario changes (with located
# errors), reclaim, reset, counters.
. "$(dirname "$0")/../cloudsim/testlib.sh"

sim_start
sim_creds
V='Version=2016-11-15'

# --- first line -----------------------------------------------------------
line=$(head -n 1 "$T/sim-1.out")
expect_eq "$($PY -c 'import json,sys; j=json.loads(sys.argv[1]); print(sorted(j))' "$line")" "['aws', 'azure', 'azure_login', 'control', 'gcp', 'gcp_token', 'lambda', 'workdir']" "first line keys"
expect_match '^http://127\.0\.0\.1:[0-9]+$' "$AWS_URL" "aws URL on 127.0.0.1"
expect_eq "$GCP_TOKEN_URL" "$GCP_URL/token" "gcp_token URL"
expect_eq "$AZ_LOGIN" "$AZ_URL" "azure_login on the azure port"
expect_match '^http://127\.0\.0\.1:[0-9]+$' "$LAMBDA_URL" "lambda URL on 127.0.0.1"
req GET "$CTL_URL/_sim/health"
expect_status 200 "health"

# --- credentials / env ----------------------------------------------------------
curl -s "$CTL_URL/_sim/credentials" >"$T/cr.json"
expect_eq "$(jget "$T/cr.json" 'sorted(j["gcp"].keys())[:8]')" '["auth_provider_x509_cert_url", "auth_uri", "client_email", "client_id", "client_x509_cert_url", "private_key", "private_key_id", "project_id"]' "gcp key JSON fields"
expect_eq "$(jget "$T/cr.json" 'j["gcp"]["token_uri"]')" "$GCP_TOKEN_URL" "gcp token_uri"
expect_match '^[0-9a-f-]{36}$' "$(jget "$T/cr.json" 'j["azure"]["tenant_id"]')" "azure tenant id"
curl -s "$CTL_URL/_sim/env" >"$T/env.sh"
expect_eq "$(sed 's/=.*//' "$T/env.sh" | tr '\n' ' ')" "export AWS_ENDPOINT_URL_EC2 export AWS_ACCESS_KEY_ID export AWS_SECRET_ACCESS_KEY export AWS_REGION export AZURE_AUTHORITY_HOST export AZURE_ARM_ENDPOINT export AZURE_TENANT_ID export AZURE_CLIENT_ID export AZURE_CLIENT_SECRET export AZURE_SUBSCRIPTION_ID export AZURE_RESOURCE_GROUP export AZURE_SUBNET_ID export AZURE_PRICES_ENDPOINT export GOOGLE_APPLICATION_CREDENTIALS export GOOGLE_CLOUD_PROJECT export CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE export GCP_BILLING_ENDPOINT export LAMBDA_ENDPOINT_URL export LAMBDA_API_KEY export LAMBDA_SSH_KEY_NAME export GPUBROKER_CLOUDSIM " "env exports, in order"
(
	. "$T/env.sh"
	[ "$AWS_ENDPOINT_URL_EC2" = "$AWS_URL" ] || exit 1
	[ "$AWS_SECRET_ACCESS_KEY" = "$AWS_SECRET" ] || exit 2
	[ "$AZURE_CLIENT_SECRET" = "$AZ_SECRET" ] || exit 3
	[ "$CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE" = "$GCP_URL/compute/v1/" ] || exit 4
	[ -f "$GOOGLE_APPLICATION_CREDENTIALS" ] || exit 5
	[ "$GPUBROKER_CLOUDSIM" = "$CTL_URL" ] || exit 6
	[ "$AZURE_PRICES_ENDPOINT" = "$AZ_URL/api/retail/prices" ] || exit 7
	[ "$AZURE_SUBNET_ID" = "$AZ_SUBNET" ] || exit 8
	[ "$AWS_REGION" = us-east-1 ] || exit 9
	[ "$LAMBDA_ENDPOINT_URL" = "$LAMBDA_URL/api/v1" ] || exit 10
	[ "$LAMBDA_API_KEY" = "$(jget "$T/cr.json" 'j["lambda"]["api_key"]')" ] || exit 11
	[ "$LAMBDA_SSH_KEY_NAME" = gpubroker ] || exit 12
)
expect_eq "$?" 0 "sourcing the env gives the right values"

# shell quoting of awkward credentials
cat >"$T/quote.yaml" <<EOF
catalogs: {aws: $SCEN_DIR/test-catalog-aws.json}
credentials:
  azure: {client_secret: "it's \$ecret \`x\` \"q\" a b"}
EOF
sim_start "$T/quote.yaml"
Q_CTL=$CTL_URL
curl -s "$Q_CTL/_sim/env" >"$T/env2.sh"
expect_eq "$(sh -c '. "$1"; printf %s "$AZURE_CLIENT_SECRET"' sh "$T/env2.sh")" "it's \$ecret \`x\` \"q\" a b" "shell-quoted secret survives sourcing"
sim_stop_all || fail "second cloudsim exit"
sim_start
sim_creds
az_token
gcp_token

# --- instances from every cloud -------------------------------------------------------
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=gpubroker-pool&TagSpecification.1.Tag.1.Value=ctl"
EC2_ID=$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=p5.48xlarge&MinCount=1&MaxCount=1&InstanceMarketOptions.MarketType=spot&Placement.AvailabilityZone=us-east-1a"
SPOT_ID=$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')
arm PUT "$(az_vm_url ctl-vm)" "$(az_vm_body Standard_NC4as_T4_v3 1 '' '{"gpubroker-pool":"ctl"}')"
gce POST "projects/$GCP_PROJECT/zones/us-central1-a/instances" "$(gce_body ctl-gce g2-standard-4 '' '' '{"gpubroker-pool":"ctl"}' | sed 's/ZONE/us-central1-a/g')"
curl -s "$CTL_URL/_sim/instances" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'j["count"]')" 4 "4 instances"
expect_eq "$(jget "$T/i.json" 'sorted(i["cloud"] for i in j["instances"])')" '["aws", "aws", "azure", "gcp"]' "from every cloud"
expect_eq "$(jget "$T/i.json" 'sorted(j["instances"][0].keys())')" '["capacity", "cloud", "created", "id", "name", "price_per_hour", "provider_state", "reclaimed", "region", "state", "tags", "terminated", "type", "zone"]' "instance fields"
expect_eq "$(jget "$T/i.json" '[[i["region"], i["zone"], i["type"], i["capacity"]] for i in j["instances"] if i["id"] == "ctl-gce"][0]')" '["us-central1", "us-central1-a", "g2-standard-4", "on-demand"]' "gcp instance placement"
expect_eq "$(jget "$T/i.json" '[i["tags"] for i in j["instances"] if i["id"] == "ctl-vm"][0]')" '{"gpubroker-pool": "ctl"}' "azure tags"
expect_eq "$(jget "$T/i.json" '[i["capacity"] for i in j["instances"] if i["id"] == "'"$SPOT_ID"'"][0]')" spot "spot capacity"

# --- bill ----------------------------------------------------------------------------
sleep 1
ec2 "Action=TerminateInstances&$V&InstanceId.1=$EC2_ID"
curl -s "$CTL_URL/_sim/bill" >"$T/b.json"
expect_eq "$(jget "$T/b.json" 'sorted(j["instances"][0].keys())')" '["billed_seconds", "capacity", "cloud", "cost", "ended", "id", "price_per_hour", "region", "seconds", "started", "type", "zone"]' "bill entry fields"
expect_eq "$(jget "$T/b.json" 'j["billing"]')" '{"aws": {"minimum_s": 60}, "azure": {"minimum_s": 0}, "gcp": {"minimum_s": 60}, "lambda": {"minimum_s": 60}}' "the documented minimums"
expect_eq "$(jget "$T/b.json" '[e["price_per_hour"] for e in j["instances"] if e["id"] == "'"$EC2_ID"'"][0]')" 1.006 "on-demand price at launch"
expect_eq "$(jget "$T/b.json" '[e["price_per_hour"] for e in j["instances"] if e["id"] == "'"$SPOT_ID"'"][0]')" 30.9 "zone spot price at launch"
expect_eq "$(jget "$T/b.json" '[e["ended"] is not None for e in j["instances"] if e["id"] == "'"$EC2_ID"'"][0]')" True "terminated: ended set"
expect_eq "$(jget "$T/b.json" '[e["ended"] for e in j["instances"] if e["id"] == "ctl-vm"][0]')" "" "live: ended null"
expect_eq "$(jget "$T/b.json" 'all(abs(e["cost"] - e["billed_seconds"] * e["price_per_hour"] / 3600) < 1e-5 for e in j["instances"])')" True "cost = billed_seconds x price / 3600"
expect_eq "$(jget "$T/b.json" 'all(e["billed_seconds"] == max(e["seconds"], j["billing"][e["cloud"]]["minimum_s"]) for e in j["instances"])')" True "billed_seconds = max(seconds, the cloud's minimum)"
expect_eq "$(jget "$T/b.json" '[e["billed_seconds"] for e in j["instances"] if e["id"] == "'"$EC2_ID"'"][0]')" 60.0 "an EC2 instance of seconds is billed 60 s"
expect_eq "$(jget "$T/b.json" '[e["billed_seconds"] == e["seconds"] < 60 for e in j["instances"] if e["id"] == "ctl-vm"][0]')" True "Azure: no minimum"
expect_eq "$(jget "$T/b.json" 'abs(j["total"] - sum(e["cost"] for e in j["instances"])) < 1e-5')" True "total = sum of entries"
s=$(jget "$T/b.json" '[e["seconds"] for e in j["instances"] if e["id"] == "'"$EC2_ID"'"][0]')
$PY -c "import sys; sys.exit(0 if 0.9 <= $s <= 5 else 1)" && ok "seconds from launch to terminate ($s)" || fail "seconds $s"
sleep 0.3
curl -s "$CTL_URL/_sim/bill" >"$T/b2.json"
expect_eq "$(jget "$T/b2.json" '[e["seconds"] for e in j["instances"] if e["id"] == "'"$EC2_ID"'"][0]')" "$s" "a terminated instance's cost no longer grows"

# --- live filter --------------------------------------------------------------------------
sleep 0.4
curl -s "$CTL_URL/_sim/instances?live=1" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'j["count"]')" 3 "live=1 drops the terminated one"
curl -s "$CTL_URL/_sim/instances?cloud=azure" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'j["count"]')" 1 "cloud filter"
req GET "$CTL_URL/_sim/instances?cloud=oracle"
expect_status 400 "unknown cloud"

# --- runtime scenario -----------------------------------------------------------------------
ctl_post /_sim/scenario '{"latency": {"aws": {"RunInstance": {"base_ms": 5}}}}'
expect_status 400 "unknown operation name refused"
expect_match 'POST /_sim/scenario:1:[0-9]+: error: latency.aws.RunInstance: unknown key "RunInstance"; did you mean "RunInstances"' "$(jget "$BODY_FILE" 'j["error"]')" "located error with a suggestion"
ctl_post /_sim/scenario '{"seed": 5}'
expect_status 400 "seed cannot change at run time"
ctl_post /_sim/scenario '{"error_rates": {"gcp": {"instances.get": 1.5}}}'
expect_status 400 "rate above 1"
ctl_post /_sim/scenario 'not json'
expect_status 400 "not an object"
ctl_post /_sim/scenario '{"lifecycle": {"aws": {"pending_ms": 4000}}, "spot": {"reclaim_rate_per_hour": 2}}'
expect_status 200 "valid change"
curl -s "$CTL_URL/_sim/scenario" >"$T/s.json"
expect_eq "$(jget "$T/s.json" 'j["lifecycle"]["aws"]["pending_ms"]')" 4000 "GET /_sim/scenario reflects it"
expect_eq "$(jget "$T/s.json" 'j["spot"]["reclaim_rate_per_hour"]')" 2.0 "spot rate"
ctl_post /_sim/scenario '{"spot": {"reclaim_rate_per_hour": 0}, "lifecycle": {"aws": {"pending_ms": 300}}}'

# --- reclaim -------------------------------------------------------------------------------
ctl_post /_sim/reclaim "{\"ids\": [\"$SPOT_ID\", \"ctl-vm\", \"nope\"]}"
expect_status 200 "reclaim by ids"
expect_eq "$(jget "$BODY_FILE" 'j["reclaimed"]')" "[\"$SPOT_ID\"]" "the spot instance is reclaimed"
expect_eq "$(jget "$BODY_FILE" 'j["skipped"]')" '["ctl-vm", "nope"]' "on-demand and unknown ids skipped"
ctl_post /_sim/reclaim '{"cloud": "mars"}'
expect_status 400 "unknown cloud in reclaim"

# --- counters, reset ------------------------------------------------------------------------
curl -s "$CTL_URL/_sim/counters" >"$T/c.json"
expect_eq "$(jget "$T/c.json" 'j["calls"]["aws"]["RunInstances"]')" 2 "RunInstances calls"
expect_eq "$(jget "$T/c.json" 'j["calls"]["azure"]["PutVM"]')" 1 "PutVM calls"
expect_eq "$(jget "$T/c.json" 'j["faults"]["reclaimed"]')" 1 "reclaimed counted"
ctl_post /_sim/reset ''
expect_status 200 "reset"
curl -s "$CTL_URL/_sim/instances" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'j["count"]')" 0 "no instances after reset"
curl -s "$CTL_URL/_sim/bill" >"$T/b.json"
expect_eq "$(jget "$T/b.json" 'j["total"]')" 0.0 "empty bill after reset"
curl -s "$CTL_URL/_sim/counters" >"$T/c.json"
expect_eq "$(jget "$T/c.json" 'j["calls"]["aws"]')" '{}' "counters cleared"
req GET "$CTL_URL/_sim/nothing"
expect_status 404 "unknown control endpoint"
# --- billing minimum: a scenario change applies to instances created after it --------------
ctl_post /_sim/scenario '{"billing": {"aws": {"minimum_s": -1}}}'
expect_status 400 "a negative minimum refused"
expect_match 'POST /_sim/scenario:1:[0-9]+: error: billing.aws.minimum_s: expected an integer from 0' "$(jget "$BODY_FILE" 'j["error"]')" "located billing error"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=1&MaxCount=1"
OLD_ID=$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')
ctl_post /_sim/scenario '{"billing": {"aws": {"minimum_s": 0}, "azure": {"minimum_s": 300}}}'
expect_status 200 "billing minimums changed at run time"
curl -s "$CTL_URL/_sim/scenario" >"$T/s.json"
expect_eq "$(jget "$T/s.json" 'j["billing"]')" '{"aws": {"minimum_s": 0}, "azure": {"minimum_s": 300}, "gcp": {"minimum_s": 60}, "lambda": {"minimum_s": 60}}' "GET /_sim/scenario shows them"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=1&MaxCount=1"
NEW_ID=$(xml_get "$BODY_FILE" 'instancesSet/item/instanceId')
ec2 "Action=TerminateInstances&$V&InstanceId.1=$OLD_ID&InstanceId.2=$NEW_ID"
curl -s "$CTL_URL/_sim/bill" >"$T/b.json"
expect_eq "$(jget "$T/b.json" '[e["billed_seconds"] for e in j["instances"] if e["id"] == "'"$OLD_ID"'"][0]')" 60.0 "created before the change: still the 60 s minimum"
expect_eq "$(jget "$T/b.json" '[e["billed_seconds"] == e["seconds"] < 10 for e in j["instances"] if e["id"] == "'"$NEW_ID"'"][0]')" True "created after minimum_s: 0: billed its seconds"
ctl_post /_sim/scenario '{"billing": {"aws": {"minimum_s": 60}, "azure": {"minimum_s": 0}}}'

# tokens survive a reset
gce GET "projects/$GCP_PROJECT/zones/us-central1-a/instances/ctl-gce"
expect_status 404 "GCE token still valid after reset; instance gone"

finish
