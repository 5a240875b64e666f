#!/bin/sh
# cloudsim GCP: the OAuth token endpoint verifying RS256 JWT assertions
# (built here with the openssl command line), Compute Engine v1 instances
# (insert with requestId deduplication, bulkInsert checked up front
# against capacity and quota, get, delete, list,
# aggregatedList with label filters and pageToken), zone operations
# (get, wait, list; DONE with ZONE_RESOURCE_POOL_EXHAUSTED), synchronous
# QUOTA_EXCEEDED, 403 rateLimitExceeded, N1 guestAccelerators, Spot
# preemption (STOP / DELETE), and the Cloud Billing SKU catalog.
. "$(dirname "$0")/../cloudsim/testlib.sh"

sim_start
sim_creds
Z=us-central1-a
PRJ="projects/$GCP_PROJECT"
code() { jget "$BODY_FILE" 'j["error"]["errors"][0]["reason"]'; }
body() { gce_body "$@" | sed "s/ZONE/$Z/g"; }

# --- token endpoint ---------------------------------------------------------
expect_match '/token$' "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["token_uri"])' "$GCP_KEY_FILE")" "key file token_uri points at cloudsim"
expect_eq "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["type"])' "$GCP_KEY_FILE")" service_account "key file type"
head -1 "$T/gcp-key.pem" | grep -q 'BEGIN PRIVATE KEY' && ok "PKCS#8 PEM private key" || fail "PEM"
gcp_token
expect_status 200 "JWT bearer assertion accepted"
expect_eq "$(jget "$BODY_FILE" 'j["token_type"]')" Bearer "token_type"
expect_match '^[0-9]+$' "$(jget "$BODY_FILE" 'j["expires_in"]')" "expires_in"
GOOD=$GCP_TOKEN
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/other.pem" 2>/dev/null
gcp_token "$GCP_EMAIL" "$GCP_TOKEN_URL" 0 3600 "$T/other.pem"
expect_status 400 "JWT signed with another key"
expect_eq "$(jget "$BODY_FILE" 'j["error"]')" invalid_grant "invalid_grant"
expect_eq "$(jget "$BODY_FILE" 'j["error_description"]')" "Invalid JWT Signature." "Invalid JWT Signature."
gcp_token "$GCP_EMAIL" "https://oauth2.googleapis.com/token"
expect_match 'audience' "$(jget "$BODY_FILE" 'j["error_description"]')" "wrong aud refused ($HTTP)"
gcp_token "$GCP_EMAIL" "$GCP_TOKEN_URL" -7200 3600
expect_match 'short-lived' "$(jget "$BODY_FILE" 'j["error_description"]')" "expired JWT refused ($HTTP)"
gcp_token "$GCP_EMAIL" "$GCP_TOKEN_URL" 0 7200
expect_match 'short-lived' "$(jget "$BODY_FILE" 'j["error_description"]')" "exp > iat + 3600 refused"
gcp_token "nobody@example.iam.gserviceaccount.com"
expect_eq "$(jget "$BODY_FILE" 'j["error_description"]')" "Invalid grant: account not found" "unknown iss"
gcp_token "$GCP_EMAIL" "$GCP_TOKEN_URL" 0 3600 "$T/gcp-key.pem" ""
expect_eq "$(jget "$BODY_FILE" 'j["error"]')" invalid_scope "no scope ($HTTP)"
req POST "$GCP_TOKEN_URL" -d grant_type=client_credentials
expect_eq "$(jget "$BODY_FILE" 'j["error"]')" unsupported_grant_type "wrong grant_type ($HTTP)"
req POST "$GCP_TOKEN_URL" -d 'grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer' -d assertion=abc.def
expect_eq "$(jget "$BODY_FILE" 'j["error"]')" invalid_grant "garbage assertion ($HTTP)"
GCP_TOKEN=$GOOD

# --- bearer refusals ----------------------------------------------------------------
req GET "$GCP_URL/compute/v1/$PRJ/zones/$Z/instances/x"
expect_status 401 "no bearer token"
expect_eq "$(code)" required "reason required"
req GET "$GCP_URL/compute/v1/$PRJ/zones/$Z/instances/x" -H "Authorization: Bearer ya29.forged"
expect_status 401 "forged token"
expect_eq "$(code)" authError "reason authError"
gce GET "projects/other-project/zones/$Z/instances/x"
expect_status 404 "another project"

# --- insert / operations / get --------------------------------------------------------
ctl_post /_sim/scenario '{"lifecycle":{"gcp":{"pending_ms":1500}}}'
RID=$(uuid)
gce POST "$PRJ/zones/$Z/instances?requestId=$RID" "$(body vm-1 a3-highgpu-8g)"
expect_status 200 "insert returns an Operation"
expect_eq "$(jget "$BODY_FILE" 'j["kind"]')" compute#operation "kind compute#operation"
expect_match '^(PENDING|RUNNING)$' "$(jget "$BODY_FILE" 'j["status"]')" "operation not DONE yet"
expect_eq "$(jget "$BODY_FILE" 'j["operationType"]')" insert "operationType insert"
OP=$(jget "$BODY_FILE" 'j["name"]')
expect_match "/compute/v1/$PRJ/zones/$Z/instances/vm-1\$" "$(jget "$BODY_FILE" 'j["targetLink"]')" "targetLink"
gce GET "$PRJ/zones/$Z/instances/vm-1"
expect_match '^(PROVISIONING|STAGING)$' "$(jget "$BODY_FILE" 'j["status"]')" "instance PROVISIONING/STAGING"
# the same requestId: the same operation, nothing new
gce POST "$PRJ/zones/$Z/instances?requestId=$RID" "$(body vm-1 a3-highgpu-8g)"
expect_eq "$(jget "$BODY_FILE" 'j["name"]')" "$OP" "requestId retry returns the same operation"
gce POST "$PRJ/zones/$Z/instances?requestId=$(uuid)" "$(body vm-1 a3-highgpu-8g)"
expect_status 409 "same name, new requestId"
expect_eq "$(code)" alreadyExists "alreadyExists"
gce POST "$PRJ/zones/$Z/operations/$OP/wait"
expect_status 200 "operations.wait"
expect_eq "$(jget "$BODY_FILE" 'j["status"]')" DONE "wait returns at DONE"
expect_eq "$(jget "$BODY_FILE" '"error" in j')" False "no error"
ctl_post /_sim/scenario '{"lifecycle":{"gcp":{"pending_ms":300}}}'
gce GET "$PRJ/zones/$Z/instances/vm-1"
expect_status 200 "instances.get"
expect_eq "$(jget "$BODY_FILE" 'j["status"]')" RUNNING "RUNNING"
expect_match '^10\.' "$(jget "$BODY_FILE" 'j["networkInterfaces"][0]["networkIP"]')" "networkIP"
expect_match '^198\.1[89]\.' "$(jget "$BODY_FILE" 'j["networkInterfaces"][0]["accessConfigs"][0]["natIP"]')" "natIP"
expect_match '/machineTypes/a3-highgpu-8g$' "$(jget "$BODY_FILE" 'j["machineType"]')" "machineType URL"
expect_match '^[0-9]+$' "$(jget "$BODY_FILE" 'j["id"]')" "numeric id"
expect_eq "$(jget "$BODY_FILE" 'j["guestAccelerators"][0]["acceleratorCount"]')" 8 "built-in accelerators shown"
expect_eq "$(jget "$BODY_FILE" 'j["labels"]["gpubroker-pool"]')" p1 "labels"
curl -s "$CTL_URL/_sim/instances?cloud=gcp" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'j["count"]')" 1 "one instance despite the retry"

# N1 + guestAccelerators matched against "n1-standard-8/nvidia-tesla-t4:1"
gce POST "$PRJ/zones/$Z/instances" "$(body n1-t4 n1-standard-8 '' nvidia-tesla-t4:1)"
expect_status 200 "N1 with a T4"
gce POST "$PRJ/zones/$Z/instances" "$(body n1-t4x2 n1-standard-8 '' nvidia-tesla-t4:2)"
expect_status 400 "N1 with an accelerator count the catalog lacks"
gce POST "$PRJ/zones/$Z/instances" "$(body n1-cpu n1-standard-2)"
expect_status 200 "CPU-only N1 accepted"
gce POST "$PRJ/zones/$Z/instances" "$(body bad-mt x9-huge-1)"
expect_status 400 "unknown machine type"
expect_eq "$(code)" invalid "reason invalid"
gce POST "$PRJ/zones/$Z/instances" "$(body Bad_Name a3-highgpu-8g)"
expect_eq "$(code)" invalid "bad instance name ($HTTP)"
gce POST "$PRJ/zones/$Z/instances" "$(body lbl g2-standard-4 '' '' '{"Pool":"X"}')"
expect_eq "$(code)" invalid "uppercase label refused ($HTTP)"
gce POST "$PRJ/zones/$Z/instances" "$(body mig g2-standard-4 | sed 's/"TERMINATE"/"MIGRATE"/')"
expect_eq "$(code)" invalid "GPU VM with live migration refused ($HTTP)"
gce POST "$PRJ/zones/nowhere-1z/instances" "$(body x a3-highgpu-8g)"
expect_status 404 "unknown zone"
gce POST "$PRJ/zones/$Z/instances?requestId=00000000-0000-0000-0000-000000000000" "$(body z a3-highgpu-8g)"
expect_status 400 "zero UUID requestId"
gce POST "$PRJ/zones/$Z/instances" '{"name": '
expect_status 400 "malformed JSON"

# --- capacity: DONE with ZONE_RESOURCE_POOL_EXHAUSTED ---------------------------------
ctl_post /_sim/scenario '{"capacity":[{"cloud":"gcp","zone":"us-central1-b","type":"a2-highgpu-1g","count":0}]}'
gce POST "$PRJ/zones/us-central1-b/instances" "$(gce_body cap-1 a2-highgpu-1g | sed 's/ZONE/us-central1-b/g')"
expect_status 200 "insert accepted although the zone is full"
OP=$(jget "$BODY_FILE" 'j["name"]')
gce_op_done us-central1-b "$OP"
expect_eq "$(jget "$BODY_FILE" 'j["status"]')" DONE "operation DONE"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["errors"][0]["code"]')" ZONE_RESOURCE_POOL_EXHAUSTED "ZONE_RESOURCE_POOL_EXHAUSTED in the operation"
gce GET "$PRJ/zones/us-central1-b/instances/cap-1"
expect_status 404 "no instance after the failed insert"

# --- quota: synchronous 403 QUOTA_EXCEEDED ---------------------------------------------
ctl_post /_sim/scenario '{"quotas":{"gcp":{"gpus":{"NVIDIA_H100_GPUS":8,"PREEMPTIBLE_NVIDIA_H100_GPUS":0}}}}'
gce POST "$PRJ/zones/us-central1-b/instances" "$(gce_body q-1 a3-highgpu-8g | sed 's/ZONE/us-central1-b/g')"
expect_status 403 "over NVIDIA_H100_GPUS"
expect_eq "$(code)" QUOTA_EXCEEDED "QUOTA_EXCEEDED"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["message"]')" "Quota 'NVIDIA_H100_GPUS' exceeded.  Limit: 8.0 in region us-central1." "quota message"
gce POST "$PRJ/zones/us-central1-b/instances" "$(gce_body q-2 a3-highgpu-8g STOP | sed 's/ZONE/us-central1-b/g')"
expect_match "PREEMPTIBLE_NVIDIA_H100_GPUS" "$(jget "$BODY_FILE" 'j["error"]["message"]')" "spot uses the PREEMPTIBLE_ metric ($HTTP)"
gce GET "$PRJ/regions/us-central1"
expect_eq "$(jget "$BODY_FILE" '[q["usage"] for q in j["quotas"] if q["metric"] == "NVIDIA_H100_GPUS"][0]')" 8.0 "regions.get quota usage"
ctl_post /_sim/scenario '{"quotas":{"gcp":{"gpus":{"NVIDIA_H100_GPUS":1000,"PREEMPTIBLE_NVIDIA_H100_GPUS":1000}}}}'

# --- bulkInsert: checked up front, all (or minCount) or nothing ------------------------
Zc=us-central1-c
# bulk COUNT MINCOUNT NAMES(a,b,..) [namePattern] -> a BulkInsertInstanceResource
bulk() {
	$PY - "$@" <<'PYEOF'
import sys, json
a = sys.argv[1:] + [""] * 4
count, mn, names, pat = a[:4]
b = {"count": count, "instanceProperties": {
        "machineType": "a2-highgpu-1g",
        "disks": [{"boot": True, "autoDelete": True, "initializeParams": {
            "sourceImage": "projects/debian-cloud/global/images/family/debian-12",
            "diskSizeGb": "100", "diskType": "pd-balanced"}}],
        "networkInterfaces": [{"network": "global/networks/default"}],
        "scheduling": {"onHostMaintenance": "TERMINATE", "provisioningModel": "STANDARD"},
        "labels": {"gpubroker-pool": "bulk", "gpubroker-token": "t-1"}}}
if mn: b["minCount"] = mn
if names: b["perInstanceProperties"] = {n: {} for n in names.split(",")}
if pat: b["namePattern"] = pat
print(json.dumps(b))
PYEOF
}
counter() { curl -s "$CTL_URL/_sim/counters" | $PY -c 'import json,sys; print(json.load(sys.stdin)["calls"]["gcp"].get(sys.argv[1], 0))' "$1"; }
bulk_live() { curl -s "$CTL_URL/_sim/instances?cloud=gcp&live=1" | $PY -c 'import json,sys; print(",".join(sorted(i["name"] for i in json.load(sys.stdin)["instances"] if i["tags"].get("gpubroker-pool") == "bulk")))'; }
ctl_post /_sim/scenario '{"capacity":[{"cloud":"gcp","zone":"us-central1-c","type":"a2-highgpu-1g","count":3}]}'
INS0=$(counter instances.insert); DEL0=$(counter instances.delete); BULK0=$(counter instances.bulkInsert)
# 4 in a zone that holds 3 (minCount defaults to count): nothing is made
gce POST "$PRJ/zones/$Zc/instances/bulkInsert?requestId=$(uuid)" "$(bulk 4 '' b-0,b-1,b-2,b-3)"
expect_status 200 "bulkInsert that cannot fit is accepted (the error is in the operation)"
expect_eq "$(jget "$BODY_FILE" 'j["operationType"]')" bulkInsert "operationType bulkInsert"
OP=$(jget "$BODY_FILE" 'j["name"]')
gce_op_done $Zc "$OP"
expect_eq "$(jget "$BODY_FILE" 'j["status"]')" DONE "refused bulkInsert: operation DONE"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["errors"][0]["code"]')" ZONE_RESOURCE_POOL_EXHAUSTED "refused bulkInsert: ZONE_RESOURCE_POOL_EXHAUSTED"
expect_eq "$(jget "$BODY_FILE" 'j["httpErrorStatusCode"]')" 503 "refused bulkInsert: httpErrorStatusCode 503"
expect_eq "$(bulk_live)" "" "refused bulkInsert made nothing (/_sim/instances?live=1)"
expect_eq "$(counter instances.insert),$(counter instances.delete)" "$INS0,$DEL0" "no insert or delete behind the refusal"
expect_eq "$(counter instances.bulkInsert)" $((BULK0 + 1)) "bulkInsert counted in /_sim/counters"
# 3 fit: all made, with their names and labels; the requestId deduplicates
RID=$(uuid)
gce POST "$PRJ/zones/$Zc/instances/bulkInsert?requestId=$RID" "$(bulk 3 3 b-0,b-1,b-2)"
expect_status 200 "bulkInsert that fits"
OP=$(jget "$BODY_FILE" 'j["name"]')
gce_op_done $Zc "$OP"
expect_eq "$(jget "$BODY_FILE" '"error" in j')" False "bulkInsert that fits: DONE without error"
expect_eq "$(bulk_live)" "b-0,b-1,b-2" "3 instances with the requested names"
gce GET "$PRJ/zones/$Zc/instances/b-1"
expect_match '/machineTypes/a2-highgpu-1g$' "$(jget "$BODY_FILE" 'j["machineType"]')" "machineType from instanceProperties"
expect_eq "$(jget "$BODY_FILE" 'j["labels"]["gpubroker-token"]')" t-1 "labels from instanceProperties"
gce POST "$PRJ/zones/$Zc/instances/bulkInsert?requestId=$RID" "$(bulk 3 3 b-0,b-1,b-2)"
expect_status 200 "bulkInsert replayed with its requestId"
expect_eq "$(jget "$BODY_FILE" 'j["name"]')" "$OP" "the same requestId returns the same operation"
expect_eq "$(jget "$BODY_FILE" '"error" in j')" False "and no error (no alreadyExists)"
expect_eq "$(bulk_live)" "b-0,b-1,b-2" "the replay created nothing new"
# a name that exists fails the whole request
ctl_post /_sim/scenario '{"capacity":[{"cloud":"gcp","zone":"us-central1-c","type":"a2-highgpu-1g","count":5}]}'
gce POST "$PRJ/zones/$Zc/instances/bulkInsert?requestId=$(uuid)" "$(bulk 2 '' b-9,b-2)"
expect_status 409 "bulkInsert naming an existing instance"
expect_eq "$(code)" alreadyExists "alreadyExists"
expect_eq "$(bulk_live)" "b-0,b-1,b-2" "nothing made beside the existing one"
# minCount < count: what fits (2 of 4), named by the pattern
gce POST "$PRJ/zones/$Zc/instances/bulkInsert" "$(bulk 4 2 '' bp-##)"
expect_status 200 "bulkInsert count 4 minCount 2"
expect_eq "$(bulk_live)" "b-0,b-1,b-2,bp-01,bp-02" "min(count, what fits) made, named by namePattern"
gce POST "$PRJ/zones/$Zc/instances/bulkInsert" "$(bulk 1 1 '' bp-##)"
gce_op_done $Zc "$(jget "$BODY_FILE" 'j["name"]')"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["errors"][0]["code"]')" ZONE_RESOURCE_POOL_EXHAUSTED "the zone is full now"
# the GPU quota, checked for all of them up front
ctl_post /_sim/scenario '{"capacity":[{"cloud":"gcp","zone":"us-central1-c","type":"a2-highgpu-1g","count":100}],"quotas":{"gcp":{"gpus":{"NVIDIA_A100_GPUS":6}}}}'
gce POST "$PRJ/zones/$Zc/instances/bulkInsert" "$(bulk 2 '' q-0,q-1)"
gce_op_done $Zc "$(jget "$BODY_FILE" 'j["name"]')"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["errors"][0]["code"]')" QUOTA_EXCEEDED "2 more A100s over a quota of 6 (5 used): QUOTA_EXCEEDED"
expect_eq "$(jget "$BODY_FILE" 'j["httpErrorStatusCode"]')" 403 "QUOTA_EXCEEDED: httpErrorStatusCode 403"
expect_eq "$(bulk_live)" "b-0,b-1,b-2,bp-01,bp-02" "nothing made over the quota"
ctl_post /_sim/scenario '{"quotas":{"gcp":{"gpus":{"NVIDIA_A100_GPUS":1000}}}}'
# malformed requests
gce POST "$PRJ/zones/$Zc/instances/bulkInsert" "$(bulk 1 '' x-1 | sed 's|"a2-highgpu-1g"|"zones/us-central1-c/machineTypes/a2-highgpu-1g"|')"
expect_eq "$HTTP $(code)" "400 invalid" "instanceProperties.machineType must be a name"
gce POST "$PRJ/zones/$Zc/instances/bulkInsert" "$(bulk 2)"
expect_eq "$HTTP $(code)" "400 invalid" "neither perInstanceProperties nor namePattern"
gce POST "$PRJ/zones/$Zc/instances/bulkInsert" "$(bulk 2 '' x-1)"
expect_eq "$HTTP $(code)" "400 invalid" "fewer names than count without a namePattern"
gce POST "$PRJ/zones/$Zc/instances/bulkInsert" "$(bulk 5001 '' '' x-####)"
expect_eq "$HTTP $(code)" "400 invalid" "count above 5000"
gce POST "$PRJ/zones/$Zc/instances/bulkInsert" "$(bulk 2 3 '' x-####)"
expect_eq "$HTTP $(code)" "400 invalid" "minCount above count"
expect_eq "$(bulk_live)" "b-0,b-1,b-2,bp-01,bp-02" "no malformed request made anything"

# --- aggregatedList: label filters, paging, NO_RESULTS_ON_PAGE ---------------------------
for n in 1 2 3 4 5 6 7; do
	zz=us-central1-a
	[ $n -gt 4 ] && zz=us-central1-b
	gce POST "$PRJ/zones/$zz/instances" "$(gce_body pg-$n g2-standard-4 '' '' '{"gpubroker-pool":"paged","team":"t'$((n % 2))'"}' | sed "s/ZONE/$zz/g")"
	[ "$HTTP" = 200 ] || fail "insert pg-$n: $HTTP $(cat "$BODY_FILE")"
done
F=$($PY -c 'import urllib.parse; print(urllib.parse.quote("labels.gpubroker-pool = \"paged\""))')
gce GET "$PRJ/aggregated/instances?filter=$F"
expect_status 200 "aggregatedList with a label filter"
expect_eq "$(jget "$BODY_FILE" 'sum(len(v.get("instances", [])) for v in j["items"].values())')" 7 "7 matching instances"
expect_eq "$(jget "$BODY_FILE" 'j["items"]["zones/europe-west4-a"]["warning"]["code"]')" NO_RESULTS_ON_PAGE "empty zones carry NO_RESULTS_ON_PAGE"
F=$($PY -c 'import urllib.parse; print(urllib.parse.quote("labels.gpubroker-pool = \"paged\" AND labels.team = \"t1\""))')
gce GET "$PRJ/aggregated/instances?filter=$F"
expect_eq "$(jget "$BODY_FILE" 'sum(len(v.get("instances", [])) for v in j["items"].values())')" 4 "two clauses joined with AND"
F=$($PY -c 'import urllib.parse; print(urllib.parse.quote("labels.team:*"))')
gce GET "$PRJ/aggregated/instances?filter=$F"
expect_eq "$(jget "$BODY_FILE" 'sum(len(v.get("instances", [])) for v in j["items"].values())')" 7 "labels.team:* (has)"
F=$($PY -c 'import urllib.parse; print(urllib.parse.quote("labels.a = \"b\" OR labels.c = \"d\""))')
gce GET "$PRJ/aggregated/instances?filter=$F"
expect_status 400 "OR is not supported: 400"
F=$($PY -c 'import urllib.parse; print(urllib.parse.quote("labels.gpubroker-pool = \"paged\""))')
tok=""
pages=0
: >"$T/names"
while :; do
	q="$PRJ/aggregated/instances?filter=$F&maxResults=3"
	[ -n "$tok" ] && q="$q&pageToken=$tok"
	gce GET "$q"
	[ "$HTTP" = 200 ] || { fail "page: $HTTP"; break; }
	jget "$BODY_FILE" '"\n".join(i["name"] for v in j["items"].values() for i in v.get("instances", []))' | grep . >>"$T/names"
	pages=$((pages + 1))
	tok=$(jget "$BODY_FILE" 'j.get("nextPageToken")')
	[ -z "$tok" ] && break
	[ $pages -gt 10 ] && break
done
expect_eq "$pages" 3 "3 pages of maxResults=3"
expect_eq "$(sort -u "$T/names" | grep -c .)" 7 "each instance once"
gce GET "$PRJ/aggregated/instances?pageToken=garbage"
expect_status 400 "bad pageToken"
gce GET "$PRJ/aggregated/instances?maxResults=501"
expect_status 400 "maxResults above 500"
gce GET "$PRJ/zones/us-central1-b/instances?filter=$F"
expect_eq "$(jget "$BODY_FILE" 'len(j["items"])')" 3 "zonal instances.list with filter"

# --- fields (partial responses) on aggregatedList, list and get -------------------------
pe() { $PY -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
FL=$(pe 'items/*/instances(name,labels,networkInterfaces(networkIP,accessConfigs/natIP),nosuch),nextPageToken')
gce GET "$PRJ/aggregated/instances?filter=$F&maxResults=3&fields=$FL"
expect_status 200 "aggregatedList with fields"
expect_eq "$(jget "$BODY_FILE" 'sorted(j.keys())')" '["items", "nextPageToken"]' "only items and nextPageToken at the top"
expect_eq "$(jget "$BODY_FILE" 'sorted(j["items"].keys())')" '["zones/us-central1-a"]' "scopes without instances (warnings only) are left out"
expect_eq "$(jget "$BODY_FILE" 'sorted({k for v in j["items"].values() for i in v["instances"] for k in i})')" '["labels", "name", "networkInterfaces"]' "each instance has exactly the selected members (nosuch is absent)"
expect_eq "$(jget "$BODY_FILE" 'sorted({k for v in j["items"].values() for i in v["instances"] for n in i["networkInterfaces"] for k in n})')" '["accessConfigs", "networkIP"]' "a(b,c) within arrays"
expect_eq "$(jget "$BODY_FILE" 'sorted({k for v in j["items"].values() for i in v["instances"] for n in i["networkInterfaces"] for a in n["accessConfigs"] for k in a})')" '["natIP"]' "a/b within arrays"
expect_eq "$(jget "$BODY_FILE" 'j["items"]["zones/us-central1-a"]["instances"][0]["labels"]["gpubroker-pool"]')" paged "a selected map comes whole"
gce GET "$PRJ/aggregated/instances?filter=$F&maxResults=3&fields=$FL&pageToken=$(jget "$BODY_FILE" 'j["nextPageToken"]')"
expect_eq "$(jget "$BODY_FILE" 'sum(len(v["instances"]) for v in j["items"].values())')" 3 "pageToken with fields: the second page"
gce GET "$PRJ/zones/us-central1-b/instances?filter=$F&fields=$(pe 'items/name,kind')"
expect_eq "$(jget "$BODY_FILE" '[sorted(j.keys()), [sorted(i.keys()) for i in j["items"]]]')" '[["items", "kind"], [["name"], ["name"], ["name"]]]' "instances.list with a/b fields"
gce GET "$PRJ/zones/us-central1-b/instances/pg-5?fields=$(pe 'name,scheduling/provisioningModel,status')"
expect_status 200 "instances.get with fields"
expect_eq "$(jget "$BODY_FILE" '[sorted(j.keys()), j["name"], j["scheduling"]]')" '[["name", "scheduling", "status"], "pg-5", {"provisioningModel": "STANDARD"}]' "get: exactly name, scheduling/provisioningModel and status"
gce GET "$PRJ/zones/us-central1-b/instances/pg-5?fields=$(pe '*')"
expect_eq "$(jget "$BODY_FILE" 'j["kind"]')" compute#instance "fields=* selects everything"
for bad in 'items(name' 'items/' 'a,,b' 'items)' 'na me' 'a*b'; do
	gce GET "$PRJ/zones/us-central1-b/instances/pg-5?fields=$(pe "$bad")"
	expect_status 400 "malformed fields '$bad' refused"
	expect_eq "$(code)" invalidParameter "reason invalidParameter for '$bad'"
done

# --- delete ------------------------------------------------------------------------------
ctl_post /_sim/scenario '{"lifecycle":{"gcp":{"stopping_ms":1500}}}'
RID=$(uuid)
gce DELETE "$PRJ/zones/$Z/instances/vm-1?requestId=$RID"
expect_status 200 "delete returns an Operation"
expect_eq "$(jget "$BODY_FILE" 'j["operationType"]')" delete "operationType delete"
DOP=$(jget "$BODY_FILE" 'j["name"]')
gce DELETE "$PRJ/zones/$Z/instances/vm-1?requestId=$RID"
expect_eq "$(jget "$BODY_FILE" 'j["name"]')" "$DOP" "delete retried with its requestId: same operation"
gce GET "$PRJ/zones/$Z/instances/vm-1"
expect_eq "$(jget "$BODY_FILE" 'j["status"]')" STOPPING "STOPPING while deleting"
gce POST "$PRJ/zones/$Z/operations/$DOP/wait"
expect_eq "$(jget "$BODY_FILE" 'j["status"]')" DONE "delete operation DONE"
ctl_post /_sim/scenario '{"lifecycle":{"gcp":{"stopping_ms":300}}}'
gce GET "$PRJ/zones/$Z/instances/vm-1"
expect_status 404 "deleted"
expect_eq "$(code)" notFound "notFound"
gce DELETE "$PRJ/zones/$Z/instances/vm-1"
expect_status 404 "delete of a missing instance"
gce GET "$PRJ/zones/$Z/operations/operation-0-nope"
expect_status 404 "unknown operation"

# --- Spot preemption ---------------------------------------------------------------------------
gce POST "$PRJ/zones/$Z/instances" "$(body spot-stop a3-highgpu-8g STOP)"
expect_status 200 "spot insert (STOP)"
gce POST "$PRJ/zones/$Z/instances" "$(body spot-del a3-highgpu-8g DELETE)"
expect_status 200 "spot insert (DELETE)"
gce GET "$PRJ/zones/$Z/instances/spot-stop"
expect_eq "$(jget "$BODY_FILE" 'j["scheduling"]["provisioningModel"]')" SPOT "provisioningModel SPOT"
ctl_post /_sim/reclaim '{"cloud":"gcp","pool":"p1","fraction":1}'
expect_eq "$(jget "$BODY_FILE" 'sorted(j["reclaimed"])')" '["spot-del", "spot-stop"]' "both spot instances reclaimed"
F=$($PY -c 'import urllib.parse; print(urllib.parse.quote("operationType = \"compute.instances.preempted\""))')
gce GET "$PRJ/zones/$Z/operations?filter=$F"
expect_eq "$(jget "$BODY_FILE" 'len(j["items"])')" 2 "two compute.instances.preempted operations"
expect_eq "$(jget "$BODY_FILE" 'j["items"][0]["status"]')" DONE "preempted operation DONE"
sleep 0.4
gce GET "$PRJ/zones/$Z/instances/spot-stop"
expect_eq "$(jget "$BODY_FILE" 'j["status"]')" TERMINATED "STOP: TERMINATED"
gce GET "$PRJ/zones/$Z/instances/spot-del"
expect_status 404 "DELETE: gone"
curl -s "$CTL_URL/_sim/instances?cloud=gcp&live=1" >"$T/i.json"
expect_eq "$(jget "$T/i.json" '[i["state"] for i in j["instances"] if i["id"] == "spot-stop"][0]')" stopped "/_sim: TERMINATED spot instance is stopped, still live"

# --- rate limit (per-minute windows) ---------------------------------------------------------------
ctl_post /_sim/scenario '{"throttling":{"gcp":{"reads":{"per_minute":3,"window_s":2}}}}'
# GCE windows are aligned to the clock (as GCE's per-minute quotas are):
# start just after a 2 s boundary so the four reads share one window
sleep "$(awk -v ns="$(date +%s%N)" 'BEGIN { ms = int(ns / 1000000) % 2000; printf "%.3f", (2000 - ms + 50) / 1000 }')"
for i in 1 2 3 4; do gce GET "$PRJ/zones/$Z/instances/spot-stop"; done
expect_status 403 "4th read in a window of 3"
expect_eq "$(code)" rateLimitExceeded "rateLimitExceeded"
sleep 2.1
gce GET "$PRJ/zones/$Z/instances/spot-stop"
expect_status 200 "next window"
ctl_post /_sim/scenario '{"throttling":{"gcp":{"reads":{"per_minute":100000,"window_s":60}}}}'

# --- Cloud Billing catalog ------------------------------------------------------------------------
req GET "$GCP_URL/cloudbilling/v1/services/6F81-5844-456A/skus?currencyCode=USD"
expect_status 401 "billing needs a token"
req GET "$GCP_URL/cloudbilling/v1/services/6F81-5844-456A/skus?currencyCode=USD&pageSize=3" -H "Authorization: Bearer $GCP_TOKEN"
expect_status 200 "skus.list"
expect_eq "$(jget "$BODY_FILE" 'len(j["skus"])')" 3 "pageSize honoured"
tok=$(jget "$BODY_FILE" 'j["nextPageToken"]')
total=3
jget "$BODY_FILE" '"\n".join(s["skuId"] for s in j["skus"])' >"$T/paged-ids"
while [ -n "$tok" ]; do
	req GET "$GCP_URL/cloudbilling/v1/services/6F81-5844-456A/skus?pageSize=3&pageToken=$tok" -H "Authorization: Bearer $GCP_TOKEN"
	total=$((total + $(jget "$BODY_FILE" 'len(j["skus"])')))
	jget "$BODY_FILE" '"\n".join(s["skuId"] for s in j["skus"])' >>"$T/paged-ids"
	tok=$(jget "$BODY_FILE" 'j["nextPageToken"]')
done
expect_eq "$total" 30 "all SKUs over the pages: per region and usage a core and a RAM SKU per family and a SKU per GPU (us-central1: 4 families, 4 GPUs; europe-west4: A3, H100) x OnDemand/Preemptible"
req GET "$GCP_URL/cloudbilling/v1/services/6F81-5844-456A/skus?pageSize=5000" -H "Authorization: Bearer $GCP_TOKEN"
cp "$BODY_FILE" "$T/skus.json"
expect_eq "$(jget "$T/skus.json" '"\n".join(s["skuId"] for s in j["skus"])')" "$(cat "$T/paged-ids")" "pages of 3 give the same SKUs in the same order as one page"
expect_eq "$(jget "$T/skus.json" 'len(set(s["skuId"] for s in j["skus"]))')" 30 "skuIds are unique"
sku() { # DESCRIPTION PYEXPR-over-s -> value of the SKU with that description
	jget "$T/skus.json" "[$2 for s in j['skus'] if s['description'] == '$1'][0]"
}
expect_eq "$(sku 'A3 Instance Core running in Iowa' 's["category"]')" '{"serviceDisplayName": "Compute Engine", "resourceFamily": "Compute", "resourceGroup": "CPU", "usageType": "OnDemand"}' "a family's core SKU (the region's city in the description)"
expect_eq "$(sku 'A3 Instance Core running in Iowa' 's["serviceRegions"]')" '["us-central1"]' "serviceRegions holds the region"
expect_eq "$(sku 'A3 Instance Ram running in Iowa' 's["pricingInfo"][0]["pricingExpression"]["usageUnit"]')" GiBy.h "RAM is priced per GiB-hour"
expect_eq "$(sku 'A3 Instance Ram running in Iowa' 's["category"]["resourceGroup"]')" RAM "RAM resourceGroup"
expect_eq "$(sku 'Nvidia H100 80GB GPU running in Netherlands' 's["category"]["resourceGroup"]')" GPU "a GPU SKU per model and region"
expect_eq "$(sku 'Spot Preemptible Nvidia Tesla T4 GPU running in Iowa' 's["category"]["usageType"]')" Preemptible "Spot SKUs are Preemptible"
expect_eq "$(sku 'Spot Preemptible N1 Predefined Instance Core running in Iowa' 's["pricingInfo"][0]["pricingExpression"]["usageUnit"]')" h "N1 Predefined core SKU, per hour"
expect_match '^\{"currencyCode": "USD", "units": "[0-9]+", "nanos": [0-9]+\}$' "$(sku 'Nvidia H100 80GB GPU running in Iowa' 's["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]')" "unitPrice as units/nanos"
# every type's components add up to the price cloudsim bills (its catalog)
expect_eq "$($PY - "$T/skus.json" "$SCEN_DIR/test-catalog-gcp.json" <<'PYEOF'
import json, sys
skus = json.load(open(sys.argv[1]))["skus"]
cat = json.load(open(sys.argv[2]))
rate = {}
for s in skus:
    d = s["description"]
    spot = d.startswith("Spot Preemptible ")
    d = d[len("Spot Preemptible "):] if spot else d
    u = s["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]
    for r in s["serviceRegions"]:
        rate[(d.split(" running in ")[0], r, spot)] = int(u["units"]) + u["nanos"] / 1e9
fam = {"a3-": "A3", "a2-": "A2", "g2-": "G2", "n1-": "N1 Predefined"}
gpu = {"H100": "Nvidia H100 80GB GPU", "A100": "Nvidia Tesla A100 GPU",
       "L4": "Nvidia L4 GPU", "T4": "Nvidia Tesla T4 GPU"}
worst, n = 0, 0
for t in cat["types"]:
    f = fam[t["type"][:3]]
    for r, v in t["regions"].items():
        for spot, key in ((False, "on_demand"), (True, "spot")):
            p = (t["vcpus"] * rate[(f + " Instance Core", r, spot)] +
                 t["ram_gb"] * rate[(f + " Instance Ram", r, spot)] +
                 t["gpus"] * rate[(gpu[t["gpu"]], r, spot)])
            worst = max(worst, abs(p - v[key]) / v[key])
            n += 1
print("%d prices, all within 1e-9" % n if worst < 1e-9 else "off by %g" % worst)
PYEOF
)" "10 prices, all within 1e-9" "vCPUs x core + RAM x ram + GPUs x gpu = the catalog price, OnDemand and Preemptible"

# --- a fixed key from `cloudsim gcp-keygen`, given as credentials.gcp.key_file ----
"$CLOUDSIM" gcp-keygen "$T/fixed-key.json" --client-email ci@test-proj.iam.gserviceaccount.com --project test-proj >/dev/null
expect_eq "$?" 0 "gcp-keygen"
expect_eq "$(stat -c %a "$T/fixed-key.json")" 600 "key file mode 0600"
cat >"$T/keyed.yaml" <<EOF
catalogs: {gcp: $SCEN_DIR/test-catalog-gcp.json}
credentials: {gcp: {project: test-proj, key_file: $T/fixed-key.json}}
EOF
sim_start "$T/keyed.yaml"
sim_creds
expect_eq "$GCP_EMAIL" ci@test-proj.iam.gserviceaccount.com "the key file's client_email is used"
expect_eq "$(jget "$GCP_KEY_FILE" 'j["private_key_id"]')" "$(jget "$T/fixed-key.json" 'j["private_key_id"]')" "same key id"
$PY -c 'import json,sys; open(sys.argv[2],"w").write(json.load(open(sys.argv[1]))["private_key"])' "$T/fixed-key.json" "$T/fixed.pem"
gcp_token "$GCP_EMAIL" "$GCP_TOKEN_URL" 0 3600 "$T/fixed.pem"
expect_status 200 "JWT signed with the fixed key accepted"
gce GET "projects/test-proj/aggregated/instances"
expect_status 200 "and the token works for the scenario's project"

finish
