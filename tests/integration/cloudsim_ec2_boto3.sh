#!/bin/sh
# The official AWS SDK (boto3, Debian's python3-boto3) pointed at cloudsim
# with endpoint_url runs, describes and terminates instances.
. "$(dirname "$0")/../cloudsim/testlib.sh"

if ! /usr/bin/python3 -c 'import boto3' 2>/dev/null; then
	echo "SKIP: boto3 is not installed for /usr/bin/python3" \
	     "(apt-get install python3-boto3; scripts/deps.sh does it)"
	exit 77
fi
sim_start
sim_creds
if /usr/bin/python3 "$GB_SRC/tests/cloudsim/boto3_check.py" "$AWS_URL" \
	"$AWS_KEY" "$AWS_SECRET"; then
	ok "boto3 checks"
else
	fail "boto3 checks"
fi
curl -s "$CTL_URL/_sim/instances?cloud=aws&live=1" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'len([i for i in j["instances"] if i["state"] not in ("stopping",)])')" 0 "nothing left running after the SDK run"
finish
