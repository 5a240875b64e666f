#!/bin/sh
# cloudsim_metadata.sh -- each instance's metadata service in cloudsim
# (/_sim/meta/<id>/, the real services' paths and headers) and the
# instance agent reading it (gpubroker-agent --print-id): EC2 IMDSv2
# (a session token from PUT, required on GET, another instance's
# refused), Azure IMDS (Metadata: true and api-version required), GCE
# (Metadata-Flavor: Google required); a gone instance has none.
. "$GB_SRC/tests/lib/integration.sh"

AGENT=$GB_BUILD/bin/gpubroker-agent
[ -x "$AGENT" ] || { echo "SKIP: $AGENT is not built"; exit 77; }

sim_start
write_spec "$T/a.yaml" md-aws aws A10G 2
write_spec "$T/z.yaml" md-az azure T4 1
write_spec "$T/g.yaml" md-gcp gcp L4 1
for f in a z g; do
	gb apply -f "$T/$f.yaml" --auto-approve --wait --timeout 30 >"$T/$f.out" 2>&1 ||
		fail "apply $f: $(cat "$T/$f.out")"
done
ids() { curl -sf "$CONTROL/_sim/instances?live=1" | jq -r --arg p "$1" '.instances[] | select(.tags["gpubroker-pool"] == $p) | .id'; }
aws0=$(ids md-aws | head -n 1)
aws1=$(ids md-aws | tail -n 1)
az=$(ids md-az)
gcp=$(ids md-gcp)
check "[ -n '$aws0' ] && [ '$aws0' != '$aws1' ] && [ -n '$az' ] && [ -n '$gcp' ]" "4 instances"
M=$CONTROL/_sim/meta
st() { curl -s -o "$T/body" -w '%{http_code}' "$@"; }

# EC2 IMDSv2
check "[ \"\$(st -X PUT $M/$aws0/latest/api/token)\" = 400 ]" "IMDSv2: a token needs its TTL header"
tok=$(curl -sf -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' "$M/$aws0/latest/api/token") ||
	fail "IMDSv2: no session token"
check "[ \"\$(st $M/$aws0/latest/meta-data/instance-id)\" = 401 ]" "IMDSv2: no token, no answer"
check "[ \"\$(st -H \"X-aws-ec2-metadata-token: $tok\" $M/$aws1/latest/meta-data/instance-id)\" = 401 ]" \
	"IMDSv2: another instance's token is refused"
check "[ \"\$(st -H \"X-aws-ec2-metadata-token: $tok\" $M/$aws0/latest/meta-data/instance-id)\" = 200 ] && [ \"\$(cat '$T/body')\" = '$aws0' ]" \
	"IMDSv2: the instance id with its session token"
# Azure IMDS
check "[ \"\$(st \"$M/$az/metadata/instance/compute/name?api-version=2021-02-01&format=text\")\" = 400 ]" \
	"Azure IMDS: Metadata: true is required"
check "[ \"\$(st -H 'Metadata: true' \"$M/$az/metadata/instance/compute/name?format=text\")\" = 400 ]" \
	"Azure IMDS: api-version is required"
# GCE
check "[ \"\$(st $M/$gcp/computeMetadata/v1/instance/name)\" = 403 ]" "GCE: Metadata-Flavor: Google is required"

# the agent's own requests
agent_id() { # PROVIDER ID
	printf 'broker_url = http://127.0.0.1:1\ninstance = x-0\nmetadata = %s\nmetadata_url = %s/%s\n' \
		"$1" "$M" "$2" >"$T/agent.conf"
	"$AGENT" -c "$T/agent.conf" --print-id
}
check "[ \"\$(agent_id ec2 $aws0)\" = '$aws0' ]" "the agent reads EC2's instance-id through IMDSv2"
check "[ \"\$(agent_id azure $az)\" = '$az' ]" "the agent reads Azure's VM name"
check "[ \"\$(agent_id gce $gcp)\" = '$gcp' ]" "the agent reads GCE's instance name"

gb destroy md-gcp --auto-approve >/dev/null 2>&1 || fail "destroy md-gcp"
check "! agent_id gce $gcp 2>'$T/err' && grep -q 'HTTP 404' '$T/err'" "a gone instance has no metadata"
echo "PASS cloudsim_metadata"
