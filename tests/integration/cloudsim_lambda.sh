#!/bin/sh
# cloudsim Lambda Cloud API v1 (drivers/lambda/API.md): API-key auth
# (Bearer, Basic), GET /instance-types with live
# regions_with_capacity_available, launch (quantity, partial launches,
# capacity and quota refusals that create nothing, validation, SSH key
# rules), list/get, terminate (idempotent, unknown ids, the terminated
# window), SSH keys, 429 rate limits, injected faults, counters, the bill,
# reset, and no secret in the log.
. "$(dirname "$0")/../cloudsim/testlib.sh"

sim_start "$SCEN_DIR/test.yaml" -v
curl -s "$CTL_URL/_sim/credentials" >"$T/cr.json"
KEY=$(jget "$T/cr.json" 'j["lambda"]["api_key"]')
SSH=$(jget "$T/cr.json" 'j["lambda"]["ssh_key_name"]')
API=$LAMBDA_URL/api/v1
lam() { # METHOD PATH [JSON body]
	if [ $# -ge 3 ]; then
		req "$1" "$API$2" -H "Authorization: Bearer $KEY" \
			-H 'Content-Type: application/json' --data-binary "$3"
	else
		req "$1" "$API$2" -H "Authorization: Bearer $KEY"
	fi
}
code() { jget "$BODY_FILE" 'j["error"]["code"]'; }
launch() { # region type quantity [extra JSON members]
	lam POST /instance-operations/launch "{\"region_name\": \"$1\", \"instance_type_name\": \"$2\", \"ssh_key_names\": [\"$SSH\"], \"quantity\": $3${4:+, $4}}"
}
live_count() { # [region]
	curl -s "$CTL_URL/_sim/instances?live=1&cloud=lambda" >"$T/live.json"
	jget "$T/live.json" "len([i for i in j['instances'] if '${1:-}' in ('', i['region'])])"
}
avail() { # type -> regions with capacity, space-separated
	lam GET /instance-types
	jget "$BODY_FILE" "' '.join(r['name'] for r in j['data']['$1']['regions_with_capacity_available'])"
}

# --- auth -------------------------------------------------------------------
req GET "$API/instances"
expect_status 401 "no Authorization header"
expect_eq "$(code)" global/invalid-api-key "error code"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["message"]')" "API key was invalid, expired, or deleted." "error message"
expect_match 'create a new one' "$(jget "$BODY_FILE" 'j["error"]["suggestion"]')" "error suggestion"
req GET "$API/instances" -H "Authorization: Bearer ${KEY}x"
expect_status 401 "wrong bearer key"
req GET "$API/instances" -u "$KEY:"
expect_status 200 "Basic with the key as the user (curl -u KEY:)"
req GET "$API/instances" -H "Authorization: Basic $KEY"
expect_status 200 "Basic with the bare key"
req GET "$API/instances" -u "$KEY:secret"
expect_status 401 "Basic with a password"
lam GET /instances
expect_status 200 "Bearer key"
expect_eq "$(jget "$BODY_FILE" 'j')" '{"data": []}' "no instances yet"
req GET "$LAMBDA_URL/api/v2/instances" -H "Authorization: Bearer $KEY"
expect_status 404 "unknown path"
lam DELETE /instances
expect_status 405 "wrong method"

# --- instance types, live capacity ------------------------------------------
lam GET /instance-types
expect_status 200 "instance-types"
expect_eq "$(jget "$BODY_FILE" 'sorted(j["data"])')" '["gpu_1x_a10", "gpu_1x_h100_pcie", "gpu_8x_h100_sxm5"]' "the catalog's types, keyed by name"
expect_eq "$(jget "$BODY_FILE" 'j["data"]["gpu_8x_h100_sxm5"]["instance_type"]["price_cents_per_hour"]')" 2392 "price_cents_per_hour"
expect_eq "$(jget "$BODY_FILE" '[j["data"]["gpu_1x_a10"]["instance_type"]["specs"][k] for k in ("vcpus", "memory_gib", "gpus")]')" '[30, 200, 1]' "specs"
expect_eq "$(avail gpu_1x_a10)" "us-east-1 us-west-1" "unlimited capacity: every region of the type"
ctl_post /_sim/scenario '{"capacity": [{"cloud": "lambda", "region": "us-west-1", "type": "gpu_1x_a10", "count": 2}, {"cloud": "lambda", "region": "europe-central-1", "type": "gpu_1x_h100_pcie", "count": 2}]}'
expect_status 200 "capacity rules"

# --- launch -------------------------------------------------------------------
# booting for 3 s here, so that the look right after the launch sees it
# booting however loaded the machine is (then back to the scenario's 300 ms)
ctl_post /_sim/scenario '{"lifecycle": {"lambda": {"pending_ms": 3000}}}'
expect_status 200 "a 3 s boot"
launch us-east-1 gpu_1x_a10 3 '"name": "job-1", "tags": [{"key": "gpubroker-pool", "value": "p1"}]'
expect_status 200 "launch quantity 3"
expect_eq "$(jget "$BODY_FILE" 'len(j["data"]["instance_ids"])')" 3 "three instance ids"
ID1=$(jget "$BODY_FILE" 'j["data"]["instance_ids"][0]')
ID2=$(jget "$BODY_FILE" 'j["data"]["instance_ids"][1]')
expect_match '^[0-9a-f]{32}$' "$ID1" "id shape"
lam GET "/instances/$ID1"
expect_eq "$(jget "$BODY_FILE" '[j["data"][k] for k in ("status", "ip", "name")]')" '["booting", null, "job-1"]' "booting, no ip yet"
expect_eq "$(jget "$BODY_FILE" 'j["data"]["tags"]')" '[{"key": "gpubroker-pool", "value": "p1"}]' "tags echoed"
expect_eq "$(jget "$BODY_FILE" 'j["data"]["ssh_key_names"]')" "[\"$SSH\"]" "ssh_key_names"
ctl_post /_sim/scenario '{"lifecycle": {"lambda": {"pending_ms": 300}}}'
expect_status 200 "the scenario's boot again"
i=0
while :; do
	lam GET "/instances/$ID1"
	[ "$(jget "$BODY_FILE" 'j["data"]["status"]')" = active ] || [ $i -ge 100 ] && break
	sleep 0.1
	i=$((i + 1))
done
expect_eq "$(jget "$BODY_FILE" 'j["data"]["status"]')" active "active after lifecycle.lambda.pending_ms"
expect_match '^198\.1[89]\.' "$(jget "$BODY_FILE" 'j["data"]["ip"]')" "public ip once active"
expect_eq "$(jget "$BODY_FILE" 'j["data"]["region"]["name"]')" us-east-1 "region"

launch us-west-1 gpu_1x_a10 2
expect_status 200 "fill us-west-1's 2 a10"
expect_eq "$(avail gpu_1x_a10)" "us-east-1" "us-west-1 drops out of regions_with_capacity_available"
expect_eq "$(avail gpu_1x_h100_pcie)" "us-east-1 us-west-1 europe-central-1" "other types unaffected"
before=$(live_count)
launch us-west-1 gpu_1x_a10 1
expect_status 400 "no capacity left"
expect_eq "$(code)" instance-operations/launch/insufficient-capacity "insufficient-capacity code"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["message"]')" "Not enough capacity to fulfill launch request." "capacity message"
expect_eq "$(live_count)" "$before" "a refused launch creates nothing"
launch europe-central-1 gpu_1x_h100_pcie 3
expect_status 200 "quantity 3 where 2 fit"
expect_eq "$(jget "$BODY_FILE" 'len(j["data"]["instance_ids"])')" 2 "partial launch: fewer ids than asked"
expect_eq "$(live_count europe-central-1)" 2 "two made"

# --- quota ----------------------------------------------------------------------
n=$(live_count)
ctl_post /_sim/scenario "{\"quotas\": {\"lambda\": {\"instances\": $n}}}"
expect_status 200 "instance quota = live count"
launch us-east-1 gpu_1x_a10 1
expect_status 400 "over the quota"
expect_eq "$(code)" global/quota-exceeded "quota-exceeded code"
expect_eq "$(live_count)" "$n" "a quota refusal creates nothing"
ctl_post /_sim/scenario "{\"quotas\": {\"lambda\": {\"instances\": $((n + 1))}}}"
launch us-east-1 gpu_1x_a10 4
expect_eq "$(jget "$BODY_FILE" 'len(j["data"]["instance_ids"])')" 1 "quota room 1: one of four launched"
ctl_post /_sim/scenario '{"quotas": {"lambda": {"instances": 1000}}}'

# --- validation and SSH key rules ----------------------------------------------
for c in \
	'{"instance_type_name": "gpu_1x_a10", "ssh_key_names": ["K"]}|missing region' \
	'{"region_name": "us-east-1", "instance_type_name": "gpu_9x_nope", "ssh_key_names": ["K"]}|unknown type' \
	'{"region_name": "mars-1", "instance_type_name": "gpu_1x_a10", "ssh_key_names": ["K"]}|unknown region' \
	'{"region_name": "us-west-1", "instance_type_name": "gpu_8x_h100_sxm5", "ssh_key_names": ["K"]}|type not offered in the region' \
	'{"region_name": "us-east-1", "instance_type_name": "gpu_1x_a10", "ssh_key_names": []}|no SSH key' \
	'{"region_name": "us-east-1", "instance_type_name": "gpu_1x_a10", "ssh_key_names": ["K", "K"]}|two SSH keys' \
	'{"region_name": "us-east-1", "instance_type_name": "gpu_1x_a10", "ssh_key_names": ["K"], "quantity": 0}|quantity 0' \
	'{"region_name": "us-east-1", "instance_type_name": "gpu_1x_a10", "ssh_key_names": ["K"], "quantity": 11}|quantity above limits.lambda_max_quantity' \
	'{"region_name": "us-east-1", "instance_type_name": "gpu_1x_a10", "ssh_key_names": ["K"], "name": "NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN"}|name of 65 characters' \
	'{"region_name": "us-east-1", "instance_type_name": "gpu_1x_a10", "ssh_key_names": ["K"], "colour": "red"}|unknown field' \
	'{"region_name": "us-east-1", "instance_type_name": "gpu_1x_a10", "ssh_key_names": ["K"], "tags": {"a": "b"}}|tags not a list' \
	'[1]|not an object' \
	'{"region_name": |not JSON'; do
	before=$(live_count)
	lam POST /instance-operations/launch "$(printf '%s' "${c%%|*}" | sed "s/\"K\"/\"$SSH\"/g")"
	expect_status 400 "${c##*|}"
	expect_eq "$(code)" global/invalid-parameters "${c##*|}: invalid-parameters"
	expect_eq "$(live_count)" "$before" "${c##*|}: nothing made"
done
launch us-east-1 gpu_1x_a10 1 '"name": "NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN"'
expect_status 200 "a name of 64 characters is fine"
lam POST /instance-operations/launch '{"region_name": "us-east-1", "instance_type_name": "gpu_1x_a10", "ssh_key_names": ["nobody"]}'
expect_status 404 "unknown SSH key"
expect_eq "$(code)" global/object-does-not-exist "unknown SSH key: object-does-not-exist"
lam POST /ssh-keys '{"name": "laptop", "public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIabc me@laptop"}'
expect_status 200 "add an SSH key"
KID=$(jget "$BODY_FILE" 'j["data"]["id"]')
lam POST /ssh-keys '{"name": "laptop"}'
expect_status 400 "duplicate key name"
expect_eq "$(code)" global/duplicate "duplicate code"
lam POST /ssh-keys '{"name": "generated"}'
expect_status 200 "generate a key pair"
expect_match 'PRIVATE KEY' "$(jget "$BODY_FILE" 'j["data"]["private_key"]')" "private_key returned once"
lam GET /ssh-keys
expect_eq "$(jget "$BODY_FILE" '[k["name"] for k in j["data"]]')" "[\"$SSH\", \"laptop\", \"generated\"]" "GET /ssh-keys lists them"
expect_eq "$(jget "$BODY_FILE" '"private_key" in j["data"][2]')" False "and never the private key again"
lam POST /instance-operations/launch '{"region_name": "us-east-1", "instance_type_name": "gpu_1x_a10", "ssh_key_names": ["laptop"]}'
expect_status 200 "launch with the added key"
LID=$(jget "$BODY_FILE" 'j["data"]["instance_ids"][0]')
lam DELETE "/ssh-keys/$KID"
expect_status 400 "a key in use cannot be deleted"
expect_eq "$(code)" ssh-keys/key-in-use "key-in-use code"
lam DELETE /ssh-keys/0123456789abcdef0123456789abcdef
expect_status 404 "delete an unknown key"

# --- list / get -------------------------------------------------------------------
lam GET /instances
expect_eq "$(jget "$BODY_FILE" 'len(j["data"])')" "$(live_count)" "GET /instances lists every live instance"
expect_eq "$(jget "$BODY_FILE" 'j["data"][0]["id"]')" "$ID1" "in launch order"
lam GET /instances/0123456789abcdef0123456789abcdef
expect_status 404 "get an unknown id"
expect_eq "$(code)" global/object-does-not-exist "unknown id code"

# --- terminate ------------------------------------------------------------------
lam POST /instance-operations/terminate "{\"instance_ids\": [\"$ID2\", \"0123456789abcdef0123456789abcdef\"]}"
expect_status 404 "terminate with an unknown id"
lam GET "/instances/$ID2"
expect_eq "$(jget "$BODY_FILE" 'j["data"]["status"]')" active "the known id of that call was not terminated"
# terminating for 2 s here, so the key is seen in use meanwhile however
# loaded the machine is
ctl_post /_sim/scenario '{"lifecycle": {"lambda": {"stopping_ms": 2000}}}'
expect_status 200 "a 2 s shutdown"
lam POST /instance-operations/terminate "{\"instance_ids\": [\"$ID2\", \"$LID\"]}"
expect_status 200 "terminate two"
expect_eq "$(jget "$BODY_FILE" '[i["status"] for i in j["data"]["terminated_instances"]]')" '["terminating", "terminating"]' "terminating"
lam POST /instance-operations/terminate "{\"instance_ids\": [\"$ID2\"]}"
expect_status 200 "terminate again (idempotent)"
expect_eq "$(jget "$BODY_FILE" 'j["data"]["terminated_instances"][0]["id"]')" "$ID2" "the same instance returned"
lam DELETE "/ssh-keys/$KID"
expect_status 400 "still in use while its instance is terminating"
ctl_post /_sim/scenario '{"lifecycle": {"lambda": {"stopping_ms": 300}}}'
expect_status 200 "the scenario's shutdown again"
i=0
while :; do
	lam DELETE "/ssh-keys/$KID"
	[ "$HTTP" = 200 ] || [ $i -ge 100 ] && break
	sleep 0.1
	i=$((i + 1))
done
expect_status 200 "free once its instance is terminated"
lam GET "/instances/$ID2"
expect_eq "$(jget "$BODY_FILE" 'j["data"]["status"]')" terminated "terminated after stopping_ms"
lam GET /instances
expect_eq "$(jget "$BODY_FILE" "[i['status'] for i in j['data'] if i['id'] == '$ID2']")" '["terminated"]' "still listed for terminated_visible_ms"
lam POST /instance-operations/terminate '{"instance_ids": []}'
expect_status 400 "empty instance_ids"
ctl_post /_sim/scenario '{"lifecycle": {"lambda": {"stopping_ms": 0, "terminated_visible_ms": 100}}}'
lam POST /instance-operations/terminate "{\"instance_ids\": [\"$ID1\"]}"
sleep 0.3
lam GET "/instances/$ID1"
expect_status 404 "gone after terminated_visible_ms"
lam POST /instance-operations/terminate "{\"instance_ids\": [\"$ID1\"]}"
expect_status 404 "terminating a gone instance"

# --- counters and the bill -------------------------------------------------
curl -s "$CTL_URL/_sim/counters" >"$T/c.json"
expect_eq "$(jget "$T/c.json" 'j["calls"]["lambda"]["launchInstance"]')" 22 "launchInstance calls counted"
expect_eq "$(jget "$T/c.json" '[j["faults_by_cloud"]["lambda"][k] for k in ("capacity", "quota", "auth_refused")]')" '[1, 1, 3]' "capacity, quota and auth faults counted"
curl -s "$CTL_URL/_sim/bill" >"$T/b.json"
expect_eq "$(jget "$T/b.json" 'j["billing"]["lambda"]')" '{"minimum_s": 60}' "lambda billing minimum"
expect_eq "$(jget "$T/b.json" "[(b['price_per_hour'], b['billed_seconds'] >= 60, b['ended'] is not None) for b in j['instances'] if b['id'] == '$ID2']")" '[[0.75, true, true]]' "the terminated instance billed at its price, the minimum, and ended"
expect_match '^[0-9.]+$' "$(jget "$T/b.json" 'j["by_cloud"]["lambda"]')" "by_cloud lambda"
expect_eq "$(jget "$T/b.json" 'j["by_cloud"]["lambda"] > 0')" True "lambda cost > 0"

# --- rate limits -------------------------------------------------------------
ctl_post /_sim/scenario '{"throttling": {"lambda": {"launch": {"capacity": 1, "refill_per_s": 0.01}}}}'
launch us-east-1 gpu_1x_a10 1
expect_status 200 "first launch within the launch bucket"
launch us-east-1 gpu_1x_a10 1
expect_status 429 "second launch throttled"
expect_eq "$(code)" global/rate-limited "429 code"
expect_match '^[0-9]+$' "$(header Retry-After)" "Retry-After"
lam GET /instances
expect_status 200 "other calls still pass"
ctl_post /_sim/scenario '{"throttling": {"lambda": {"requests": {"capacity": 2, "refill_per_s": 0.01}}}}'
lam GET /instances
lam GET /instances
lam GET /instances
expect_status 429 "the requests bucket throttles every call"
curl -s "$CTL_URL/_sim/counters" >"$T/c.json"
expect_eq "$(jget "$T/c.json" 'j["faults_by_cloud"]["lambda"]["throttled"] >= 2')" True "throttles counted"
ctl_post /_sim/scenario '{"throttling": {"lambda": {"requests": {"capacity": 10000, "refill_per_s": 1000}, "launch": {"capacity": 10000, "refill_per_s": 1000}}}}'

# --- injected faults ------------------------------------------------------------
ctl_post /_sim/scenario '{"error_rates": {"lambda": {"listInstances": 1}}}'
lam GET /instances
expect_status 500 "injected 5xx"
expect_eq "$(code)" global/unknown "5xx code"
ctl_post /_sim/scenario '{"error_rates": {"lambda": {"listInstances": 0}}, "lost_response": {"lambda": {"launchInstance": 1}}}'
before=$(live_count)
launch us-east-1 gpu_1x_a10 1 '"name": "lost-1"'
expect_status 500 "lost response"
expect_eq "$(live_count)" "$((before + 1))" "the launch was applied anyway"
lam GET /instances
expect_eq "$(jget "$BODY_FILE" "len([i for i in j['data'] if i['name'] == 'lost-1'])")" 1 "findable by name (no idempotency token)"
ctl_post /_sim/scenario '{"lost_response": {"lambda": {"launchInstance": 0}}}'

# --- reset, secrets ---------------------------------------------------------------
ctl_post /_sim/reset '{}'
expect_eq "$(live_count)" 0 "reset drops the instances"
lam GET /ssh-keys
expect_eq "$(jget "$BODY_FILE" '[k["name"] for k in j["data"]]')" "[\"$SSH\"]" "reset restores the scenario's SSH keys"
expect_eq "$(avail gpu_1x_a10)" "us-east-1 us-west-1" "capacity free again"
# --- an inactive account -------------------------------------------------------
cat >"$T/inactive.yaml" <<EOF
catalogs: {lambda: $SCEN_DIR/test-catalog-lambda.json}
credentials: {lambda: {api_key: other-key-0001, account_inactive: true}}
EOF
sim_start "$T/inactive.yaml"
req GET "$LAMBDA_URL/api/v1/instance-types" -H "Authorization: Bearer other-key-0001"
expect_status 403 "inactive account"
expect_eq "$(code)" global/account-inactive "account-inactive code"
req GET "$LAMBDA_URL/api/v1/instance-types" -H "Authorization: Bearer $KEY"
expect_status 401 "the scenario's api_key replaces the default"

if grep -qF "$KEY" "$T"/sim-*.err; then fail "the API key appears in cloudsim's log"; else ok "no API key in the log"; fi
expect_match '^cloudsim: lambda POST /api/v1/instance-operations/launch -> 200 \(launchInstance' "$(grep 'lambda POST /api/v1/instance-operations/launch' "$T/sim-1.err" | head -1)" "the verbose log names the operation"

finish
