#!/bin/sh
# cloudsim robustness: malformed requests get the provider's error shape
# (never a crash), bodies and headers are capped, the instance count is
# bounded, random garbage is answered, and the process still exits
# cleanly (run with an ASan build to prove no memory errors or leaks).
. "$(dirname "$0")/../cloudsim/testlib.sh"

cat >"$T/small.yaml" <<EOF
catalogs:
  aws: $SCEN_DIR/test-catalog-aws.json
  azure: $SCEN_DIR/test-catalog-azure.json
  gcp: $SCEN_DIR/test-catalog-gcp.json
limits: {max_instances: 5, max_body_bytes: 65536, gcp_wait_max_ms: 1000}
EOF
sim_start "$T/small.yaml"
sim_creds
az_token
gcp_token
V='Version=2016-11-15'

# bounded instances
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=5&MaxCount=5"
expect_status 200 "5 instances"
ec2 "Action=RunInstances&$V&ImageId=ami-12345678&InstanceType=g5.xlarge&MinCount=1&MaxCount=1"
expect_status 500 "the 6th is refused (limits.max_instances)"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" InsufficientInstanceCapacity "as a capacity error"
gce POST "projects/$GCP_PROJECT/zones/us-central1-a/instances" "$(gce_body full g2-standard-4 | sed 's/ZONE/us-central1-a/g')"
expect_status 403 "GCE refused too"

# bodies over the cap
head -c 100000 /dev/zero | tr '\0' 'a' >"$T/big"
req POST "$AWS_URL/" --data-binary @"$T/big"
expect_status 413 "EC2 body over the cap"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" RequestEntityTooLarge "EC2 XML error"
req PUT "$(az_vm_url big)" -H "Authorization: Bearer $AZ_TOKEN" --data-binary @"$T/big"
expect_status 413 "ARM body over the cap"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["code"]')" RequestEntityTooLarge "ARM JSON error"
req POST "$GCP_URL/compute/v1/projects/$GCP_PROJECT/zones/us-central1-a/instances" --data-binary @"$T/big"
expect_status 413 "GCE body over the cap"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["code"]')" 413 "Google JSON error"

# malformed escapes and parameters
req GET "$AWS_URL/?Action=%zz"
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" MalformedQueryString "EC2 bad escape ($HTTP)"
$PY -c 'print("&".join("P%d=v" % i for i in range(5000)))' >"$T/many"
req POST "$AWS_URL/" --data-binary @"$T/many" -H 'Content-Type: application/x-www-form-urlencoded'
expect_eq "$(xml_get "$BODY_FILE" 'Errors/Error/Code')" MalformedQueryString "EC2 too many parameters ($HTTP)"
req GET "$(az_vm_url x)&bad=%g1" -H "Authorization: Bearer $AZ_TOKEN"
expect_status 400 "ARM bad escape"
$PY -c 'print("[" * 60000)' >"$T/deep"
req PUT "$(az_vm_url deep)" -H "Authorization: Bearer $AZ_TOKEN" --data-binary @"$T/deep"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["code"]')" InvalidRequestContent "ARM deeply nested JSON ($HTTP)"
req POST "$GCP_URL/compute/v1/projects/$GCP_PROJECT/zones/us-central1-a/instances" -H "Authorization: Bearer $GCP_TOKEN" --data-binary @"$T/deep"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["errors"][0]["reason"]')" parseError "GCE deeply nested JSON ($HTTP)"
req POST "$CTL_URL/_sim/scenario" --data-binary @"$T/deep"
expect_status 400 "control: nested garbage"

# a header far over the connection memory limit
head -c 200000 /dev/zero | tr '\0' 'b' | sed 's/^/X-Big: /' >"$T/bighdr"
HTTP=$(curl -s -o /dev/null -w '%{http_code}' -H @"$T/bighdr" "$AWS_URL/" 2>/dev/null || true)
case "$HTTP" in 4*|000) ok "oversized header refused ($HTTP)" ;; *) fail "oversized header: $HTTP" ;; esac

# random and malformed requests of every kind, idle connections
if $PY "$GB_SRC/tests/cloudsim/http_fuzz.py" "$AWS_URL" "$AZ_URL" "$GCP_URL" "$CTL_URL" 400 "$LAMBDA_URL"; then
	ok "fuzz"
else
	fail "fuzz"
fi

req GET "$CTL_URL/_sim/health"
expect_status 200 "still healthy"
finish
