#!/bin/sh
# cloudsim Azure: the login token endpoint (client_credentials), ARM
# virtual machines (PUT by name, long-running operations polled through
# Azure-AsyncOperation and Location, GET with instanceView, list with
# nextLink paging, DELETE), network interfaces as resources (PUT, GET,
# DELETE, list; a VM naming a missing NIC refused; NicInUse; deleteOption
# Delete vs Detach) and public IP, capacity shortage as a
# Failed operation with the VM left Failed, synchronous quota errors, Spot
# eviction, 429 throttling, bearer-token refusals, and the Retail Prices
# API.
. "$(dirname "$0")/../cloudsim/testlib.sh"

sim_start
sim_creds
RG_URL="$AZ_URL/subscriptions/$AZ_SUB/resourceGroups/$AZ_RG/providers"
code() { jget "$BODY_FILE" 'j["error"]["code"]'; }

# --- login ---------------------------------------------------------------
az_token
expect_status 200 "client_credentials token"
expect_eq "$(jget "$BODY_FILE" 'j["token_type"]')" Bearer "token_type Bearer"
expect_eq "$(jget "$BODY_FILE" 'j["expires_in"]')" 3599 "expires_in"
req POST "$AZ_LOGIN/$AZ_TENANT/oauth2/v2.0/token" \
	-d grant_type=client_credentials -d "client_id=$AZ_CLIENT" \
	-d client_secret=wrong --data-urlencode 'scope=https://management.azure.com/.default'
expect_status 401 "wrong client secret"
expect_eq "$(jget "$BODY_FILE" 'j["error"]')" invalid_client "invalid_client"
expect_match '^AADSTS7000215: Invalid client secret provided' "$(jget "$BODY_FILE" 'j["error_description"]')" "AADSTS7000215"
grep -q wrong "$BODY_FILE" && fail "secret echoed" || ok "secret not echoed"
req POST "$AZ_LOGIN/00000000-0000-0000-0000-000000000000/oauth2/v2.0/token" \
	-d grant_type=client_credentials -d "client_id=$AZ_CLIENT" \
	--data-urlencode "client_secret=$AZ_SECRET" --data-urlencode 'scope=https://management.azure.com/.default'
expect_status 400 "unknown tenant"
expect_match AADSTS90002 "$(jget "$BODY_FILE" 'j["error_description"]')" "AADSTS90002"
req POST "$AZ_LOGIN/$AZ_TENANT/oauth2/v2.0/token" -d grant_type=password \
	-d "client_id=$AZ_CLIENT"
expect_eq "$(jget "$BODY_FILE" 'j["error"]')" unsupported_grant_type "unsupported_grant_type ($HTTP)"
req POST "$AZ_LOGIN/$AZ_TENANT/oauth2/v2.0/token" -d grant_type=client_credentials \
	-d "client_id=$AZ_CLIENT" --data-urlencode "client_secret=$AZ_SECRET"
expect_eq "$(jget "$BODY_FILE" 'j["error"]')" invalid_request "missing scope ($HTTP)"
req POST "$AZ_LOGIN/$AZ_TENANT/oauth2/v2.0/token" -d grant_type=client_credentials \
	-d "client_id=$AZ_CLIENT" --data-urlencode "client_secret=$AZ_SECRET" -d scope=abc
expect_eq "$(jget "$BODY_FILE" 'j["error"]')" invalid_scope "scope without /.default ($HTTP)"

# --- ARM auth --------------------------------------------------------------
req GET "$(az_vm_url nothere)"
expect_status 401 "no Authorization header"
expect_eq "$(code)" AuthenticationFailed "AuthenticationFailed"
header WWW-Authenticate | grep -q 'Bearer authorization_uri=' && ok "WWW-Authenticate" || fail "WWW-Authenticate"
req GET "$(az_vm_url nothere)" -H "Authorization: Bearer forged-token"
expect_status 401 "unknown bearer token"
expect_eq "$(code)" InvalidAuthenticationToken "InvalidAuthenticationToken"
arm GET "$AZ_URL/subscriptions/$AZ_SUB/resourceGroups/$AZ_RG/providers/Microsoft.Compute/virtualMachines/x"
expect_status 400 "no api-version"
expect_eq "$(code)" MissingApiVersionParameter "MissingApiVersionParameter"
arm GET "$AZ_URL/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/$AZ_RG/providers/Microsoft.Compute/virtualMachines/x?api-version=$AZ_API"
expect_eq "$(code)" SubscriptionNotFound "SubscriptionNotFound ($HTTP)"
arm GET "$AZ_URL/subscriptions/$AZ_SUB/resourceGroups/other-rg/providers/Microsoft.Compute/virtualMachines/x?api-version=$AZ_API"
expect_eq "$(code)" ResourceGroupNotFound "ResourceGroupNotFound ($HTTP)"

# --- create, poll, get -------------------------------------------------------
ctl_post /_sim/scenario '{"lifecycle":{"azure":{"pending_ms":1500,"stopping_ms":1500}}}'
arm PUT "$(az_vm_url vm-a)" "$(az_vm_body Standard_NC24ads_A100_v4 1)"
expect_status 201 "PUT a new VM"
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["provisioningState"]')" Creating "provisioningState Creating"
grep -q customData "$BODY_FILE" && fail "customData returned" || ok "customData not returned"
AO=$(header Azure-AsyncOperation)
LOC=$(header Location)
expect_match '/providers/Microsoft.Compute/locations/eastus/operations/' "$AO" "Azure-AsyncOperation header"
expect_match 'monitor=true' "$LOC" "Location header"
[ -n "$(header x-ms-ratelimit-remaining-subscription-writes)" ] && ok "remaining-writes header" || fail "remaining-writes header"
arm GET "$AO"
expect_eq "$(jget "$BODY_FILE" 'j["status"]')" InProgress "operation InProgress"
arm GET "$LOC"
expect_status 202 "Location poll while running"
expect_eq "$(az_poll "$AO")" Succeeded "operation Succeeded"
ctl_post /_sim/scenario '{"lifecycle":{"azure":{"pending_ms":300,"stopping_ms":300}}}'
arm GET "$LOC"
expect_status 200 "Location poll when done"
expect_eq "$(jget "$BODY_FILE" 'j["name"]')" vm-a "Location result is the VM"
arm GET "$(az_vm_url vm-a)&\$expand=instanceView"
expect_status 200 "GET VM"
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["provisioningState"]')" Succeeded "provisioningState Succeeded"
expect_eq "$(jget "$BODY_FILE" '[s["code"] for s in j["properties"]["instanceView"]["statuses"]]')" '["ProvisioningState/succeeded", "PowerState/running"]' "instanceView statuses"
expect_eq "$(jget "$BODY_FILE" 'j["zones"]')" '["1"]' "zones"
NIC=$(jget "$BODY_FILE" 'j["properties"]["networkProfile"]["networkInterfaces"][0]["id"]')
req GET "$AZ_URL$NIC?api-version=2023-09-01" -H "Authorization: Bearer $AZ_TOKEN"
expect_status 200 "GET the NIC named by the VM"
expect_match '^10\.' "$(jget "$BODY_FILE" 'j["properties"]["ipConfigurations"][0]["properties"]["privateIPAddress"]')" "NIC private IP"
PIP=$(jget "$BODY_FILE" 'j["properties"]["ipConfigurations"][0]["properties"]["publicIPAddress"]["id"]')
req GET "$AZ_URL$PIP?api-version=2023-09-01" -H "Authorization: Bearer $AZ_TOKEN"
expect_match '^198\.1[89]\.' "$(jget "$BODY_FILE" 'j["properties"]["ipAddress"]')" "public IP address"

# --- PUT by name: idempotent, immutable properties ---------------------------
arm PUT "$(az_vm_url vm-a)" "$(az_vm_body Standard_NC24ads_A100_v4 1)"
expect_status 200 "same PUT again: 200"
req PUT "$(az_vm_url vm-a)" -H "Authorization: Bearer $AZ_TOKEN" \
	-H 'Content-Type: application/json' -H 'If-None-Match: *' \
	--data-binary "$(az_vm_body Standard_NC24ads_A100_v4 1)"
expect_status 412 "PUT with If-None-Match: * on an existing VM"
expect_eq "$(code)" PreconditionFailed "PreconditionFailed"
curl -s "$CTL_URL/_sim/instances?cloud=azure" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'j["count"]')" 1 "still one VM"
arm PUT "$(az_vm_url vm-a)" "$(az_vm_body Standard_NC4as_T4_v3 1)"
expect_status 409 "changed vmSize"
expect_eq "$(code)" PropertyChangeNotAllowed "PropertyChangeNotAllowed"
expect_match "hardwareProfile.vmSize" "$(jget "$BODY_FILE" 'j["error"]["message"]')" "names the property"
arm PUT "$(az_vm_url vm-a)" "$(az_vm_body Standard_NC24ads_A100_v4 1 '' '{"gpubroker-pool":"p1","team":"x"}')"
expect_status 200 "changed tags"
expect_eq "$(jget "$BODY_FILE" 'j["tags"]["team"]')" x "tags updated"
arm PUT "$(az_vm_url vm-a)" "$(az_vm_body Standard_NC24ads_A100_v4 2)"
expect_eq "$(code)" PropertyChangeNotAllowed "changed zone ($HTTP)"

# --- synchronous validation errors ---------------------------------------
arm PUT "$(az_vm_url vm-bad)" '{"location":'
expect_status 400 "malformed JSON"
expect_eq "$(code)" InvalidRequestContent "InvalidRequestContent"
arm PUT "$(az_vm_url vm-bad)" "$(az_vm_body Standard_ND9000_v9)"
expect_status 409 "size not offered"
expect_eq "$(code)" SkuNotAvailable "SkuNotAvailable (synchronous)"
arm PUT "$(az_vm_url vm-bad)" "$(az_vm_body Standard_NC24ads_A100_v4 | sed 's/"eastus"/"marsnorth"/')"
expect_eq "$(code)" LocationNotAvailableForResourceType "unknown location ($HTTP)"
arm PUT "$(az_vm_url vm-bad)" "$(az_vm_body Standard_NC24ads_A100_v4 | sed 's/"networkProfile"/"xnetworkProfile"/')"
expect_eq "$(code)" InvalidParameter "no networkProfile ($HTTP)"
arm PUT "$(az_vm_url vm-bad)" "$(az_vm_body Standard_NC24ads_A100_v4 '' Deallocate | sed 's/"maxPrice": -1/"maxPrice": 0/')"
expect_eq "$(code)" MaxPriceValueInvalid "maxPrice 0 ($HTTP)"
arm PUT "$(az_vm_url vm-bad)" "$(az_vm_body Standard_NC24ads_A100_v4 7)"
expect_eq "$(code)" InvalidParameter "zone 7 ($HTTP)"
arm PUT "$(az_vm_url -bad-)" "$(az_vm_body Standard_NC24ads_A100_v4)"
expect_eq "$(code)" InvalidResourceName "bad VM name ($HTTP)"
curl -s "$CTL_URL/_sim/instances?cloud=azure" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'j["count"]')" 1 "refused PUTs created nothing"

# --- capacity: a Failed operation, a Failed VM --------------------------------
ctl_post /_sim/scenario '{"capacity":[{"cloud":"azure","region":"eastus","zone":"2","type":"Standard_NC4as_T4_v3","count":0},{"cloud":"azure","region":"eastus","zone":"","type":"Standard_NC4as_T4_v3","count":0},{"cloud":"azure","type":"Standard_NC4as_T4_v3","market":"spot","count":0}]}'
arm PUT "$(az_vm_url vm-z)" "$(az_vm_body Standard_NC4as_T4_v3 2)"
expect_status 201 "PUT accepted although the zone is full"
AO=$(header Azure-AsyncOperation)
expect_eq "$(az_poll "$AO")" Failed "operation Failed"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["code"]')" ZonalAllocationFailed "ZonalAllocationFailed"
arm GET "$(az_vm_url vm-z)&\$expand=instanceView"
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["provisioningState"]')" Failed "VM left in provisioningState Failed"
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["instanceView"]["statuses"][0]["code"]')" ProvisioningState/failed/ZonalAllocationFailed "instanceView failure status"
curl -s "$CTL_URL/_sim/instances?cloud=azure&live=1" >"$T/i.json"
expect_eq "$(jget "$T/i.json" '[i["state"] for i in j["instances"] if i["id"] == "vm-z"][0]')" failed "/_sim shows the Failed VM (must be deleted)"
arm PUT "$(az_vm_url vm-r)" "$(az_vm_body Standard_NC4as_T4_v3)"
expect_eq "$(az_poll "$(header Azure-AsyncOperation)")" Failed "regional shortage"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["code"]')" AllocationFailed "AllocationFailed"
arm PUT "$(az_vm_url vm-s)" "$(az_vm_body Standard_NC4as_T4_v3 1 Delete)"
expect_eq "$(az_poll "$(header Azure-AsyncOperation)")" Failed "no Spot capacity"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["code"]')" SkuNotAvailable "SkuNotAvailable for Spot"
# a re-PUT after capacity returns retries the allocation
ctl_post /_sim/scenario '{"capacity":[]}'
arm PUT "$(az_vm_url vm-z)" "$(az_vm_body Standard_NC4as_T4_v3 2)"
expect_status 200 "re-PUT of the Failed VM"
expect_eq "$(az_poll "$(header Azure-AsyncOperation)")" Succeeded "retried allocation succeeds"
for v in vm-z vm-r vm-s; do
	arm DELETE "$(az_vm_url $v)"
	[ "$HTTP" = 202 ] || fail "DELETE $v: $HTTP"
done
ok "Failed VMs deleted"

# --- quota (synchronous 409) ---------------------------------------------------
ctl_post /_sim/scenario '{"quotas":{"azure":{"cores":{"standardNCADSA100v4Family":30},"low_priority_cores":4}}}'
arm PUT "$(az_vm_url vm-q)" "$(az_vm_body Standard_NC24ads_A100_v4 1)"
expect_status 409 "over the family cores quota"
expect_eq "$(code)" OperationNotAllowed "OperationNotAllowed"
expect_match 'exceeding approved standardNCADSA100v4Family Cores quota.*Current Limit: 30, Current Usage: 24, Additional Required: 24' "$(jget "$BODY_FILE" 'j["error"]["message"]')" "quota message"
arm PUT "$(az_vm_url vm-q)" "$(az_vm_body Standard_NC24ads_A100_v4 1 Deallocate)"
expect_match 'LowPriorityCores' "$(jget "$BODY_FILE" 'j["error"]["message"]')" "Spot draws on LowPriorityCores ($HTTP)"
arm GET "$AZ_URL/subscriptions/$AZ_SUB/providers/Microsoft.Compute/locations/eastus/usages?api-version=$AZ_API"
expect_eq "$(jget "$BODY_FILE" '[u["currentValue"] for u in j["value"] if u["name"]["value"] == "standardNCADSA100v4Family"][0]')" 24 "usages endpoint"
ctl_post /_sim/scenario '{"quotas":{"azure":{"cores":{"standardNCADSA100v4Family":100000},"low_priority_cores":100000}}}'

# --- Spot eviction ---------------------------------------------------------------
arm PUT "$(az_vm_url spot-dealloc)" "$(az_vm_body Standard_NC24ads_A100_v4 1 Deallocate)"
az_poll "$(header Azure-AsyncOperation)" >/dev/null
arm PUT "$(az_vm_url spot-delete)" "$(az_vm_body Standard_NC24ads_A100_v4 1 Delete)"
az_poll "$(header Azure-AsyncOperation)" >/dev/null
ctl_post /_sim/reclaim '{"ids":["spot-dealloc","spot-delete","vm-a"]}'
expect_eq "$(jget "$BODY_FILE" 'sorted(j["reclaimed"])')" '["spot-dealloc", "spot-delete"]' "reclaim spot VMs (the regular one is skipped)"
sleep 0.4
arm GET "$(az_vm_url spot-dealloc)&\$expand=instanceView"
expect_status 200 "evicted Deallocate VM stays"
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["instanceView"]["statuses"][1]["code"]')" PowerState/deallocated "PowerState/deallocated"
arm GET "$(az_vm_url spot-delete)"
expect_status 404 "evicted Delete VM is gone"
expect_eq "$(code)" ResourceNotFound "ResourceNotFound"
NAPI0='api-version=2023-09-01'
arm GET "$RG_URL/Microsoft.Network/networkInterfaces/spot-delete-nic?$NAPI0"
expect_status 404 "evicted Delete VM: its NIC (deleteOption Delete) went with it"
arm GET "$RG_URL/Microsoft.Network/networkInterfaces/spot-dealloc-nic?$NAPI0"
expect_match "/virtualMachines/spot-dealloc\$" "$(jget "$BODY_FILE" 'j["properties"]["virtualMachine"]["id"]')" "a deallocated VM keeps its NIC attached"
curl -s "$CTL_URL/_sim/bill" >"$T/b.json"
expect_eq "$(jget "$T/b.json" '[e["ended"] is not None for e in j["instances"] if e["id"] == "spot-dealloc"][0]')" True "billing stopped at eviction"

# --- list with paging (page size 5 in test.yaml) --------------------------------
for n in 01 02 03 04 05 06 07 08 09 10; do
	arm PUT "$(az_vm_url page-$n)" "$(az_vm_body Standard_NC4as_T4_v3 3 '' '{"gpubroker-pool":"paged"}')"
	[ "$HTTP" = 201 ] || fail "PUT page-$n: $HTTP"
done
url="$RG_URL/Microsoft.Compute/virtualMachines?api-version=$AZ_API&\$expand=instanceView"
pages=0
: >"$T/names"
while [ -n "$url" ] && [ $pages -lt 10 ]; do
	arm GET "$url"
	[ "$HTTP" = 200 ] || { fail "list page: $HTTP"; break; }
	jget "$BODY_FILE" '"\n".join(v["name"] for v in j["value"])' >>"$T/names"
	jget "$BODY_FILE" 'all("instanceView" in v["properties"] for v in j["value"])' | grep -q True || fail "instanceView on list"
	url=$(jget "$BODY_FILE" 'j.get("nextLink")')
	pages=$((pages + 1))
done
n=$(grep -c . "$T/names")
expect_eq "$pages" 3 "three pages of 5 (12 VMs)"
expect_eq "$n" 12 "every VM listed once"
expect_eq "$(sort -u "$T/names" | grep -c .)" 12 "no duplicates"

# --- DELETE ---------------------------------------------------------------------
ctl_post /_sim/scenario '{"lifecycle":{"azure":{"stopping_ms":1500}}}'
arm DELETE "$(az_vm_url vm-a)"
expect_status 202 "DELETE"
AO=$(header Azure-AsyncOperation)
[ -n "$AO" ] && ok "DELETE has Azure-AsyncOperation" || fail "no Azure-AsyncOperation on DELETE"
arm GET "$(az_vm_url vm-a)"
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["provisioningState"]')" Deleting "provisioningState Deleting"
arm PUT "$(az_vm_url vm-a)" "$(az_vm_body Standard_NC24ads_A100_v4 1)"
expect_eq "$(code)" OperationNotAllowed "PUT while deleting ($HTTP)"
expect_eq "$(az_poll "$AO")" Succeeded "delete operation Succeeded"
ctl_post /_sim/scenario '{"lifecycle":{"azure":{"stopping_ms":300}}}'
arm GET "$(az_vm_url vm-a)"
expect_status 404 "deleted VM: 404"
arm DELETE "$(az_vm_url vm-a)"
expect_status 204 "DELETE of a missing VM: 204"
req GET "$AZ_URL$NIC?api-version=2023-09-01" -H "Authorization: Bearer $AZ_TOKEN"
expect_status 404 "NIC went with the VM"

# --- network interfaces as resources -------------------------------------------
NET="$RG_URL/Microsoft.Network/networkInterfaces"
NAPI='api-version=2023-09-01'
NICS="/subscriptions/$AZ_SUB/resourceGroups/$AZ_RG/providers/Microsoft.Network/networkInterfaces"
nic_body() { # location subnet
	$PY - "$1" "$2" <<'PYEOF'
import sys, json
print(json.dumps({"location": sys.argv[1], "tags": {"owner": "t"},
  "properties": {"ipConfigurations": [{"name": "ipc1", "properties": {
    "privateIPAllocationMethod": "Dynamic", "subnet": {"id": sys.argv[2]}}}]}}))
PYEOF
}
# az_vm_body with networkInterfaces [{id}] instead of configurations
vm_ref_body() { # nic-id [deleteOption]
	az_vm_body Standard_NC24ads_A100_v4 | $PY -c '
import sys, json
b = json.load(sys.stdin)
ref = {"id": sys.argv[1]}
if len(sys.argv) > 2: ref["properties"] = {"deleteOption": sys.argv[2]}
b["properties"]["networkProfile"] = {"networkInterfaces": [ref]}
print(json.dumps(b))' "$@"
}
arm PUT "$NET/nic-own?$NAPI" "$(nic_body eastus "$AZ_SUBNET")"
expect_status 201 "PUT a new NIC"
expect_eq "$(jget "$BODY_FILE" 'j["type"]')" Microsoft.Network/networkInterfaces "NIC type"
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["provisioningState"]')" Succeeded "NIC provisioningState"
NIC_IP=$(jget "$BODY_FILE" 'j["properties"]["ipConfigurations"][0]["properties"]["privateIPAddress"]')
expect_match '^10\.' "$NIC_IP" "NIC privateIPAddress"
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["ipConfigurations"][0]["properties"]["subnet"]["id"]')" "$AZ_SUBNET" "NIC subnet id"
expect_eq "$(jget "$BODY_FILE" '"virtualMachine" in j["properties"]')" False "a new NIC is not attached"
arm PUT "$NET/nic-own?$NAPI" "$(nic_body eastus "$AZ_SUBNET")"
expect_status 200 "PUT the same NIC again: 200"
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["ipConfigurations"][0]["properties"]["privateIPAddress"]')" "$NIC_IP" "the NIC keeps its address"
arm GET "$NET/nic-own?$NAPI"
expect_status 200 "GET the NIC"
expect_eq "$(jget "$BODY_FILE" 'j["tags"]["owner"]')" t "NIC tags"
arm PUT "$NET/nic-bad?$NAPI" "$(nic_body eastus /subscriptions/other/resourceGroups/x/providers/Microsoft.Network/virtualNetworks/v/subnets/s)"
expect_status 400 "NIC with a subnet that does not exist"
expect_eq "$(code)" InvalidResourceReference "InvalidResourceReference for the subnet"
arm PUT "$NET/nic-bad?$NAPI" '{"properties":{}}'
expect_eq "$(code)" LocationRequired "NIC without location ($HTTP)"
arm GET "$NET/nic-bad?$NAPI"
expect_status 404 "refused NIC PUTs created nothing"
# a VM naming a NIC that does not exist is refused
curl -s "$CTL_URL/_sim/instances?cloud=azure&live=1" >"$T/i.json"
LIVE=$(jget "$T/i.json" 'j["count"]')
arm PUT "$(az_vm_url vm-own)" "$(vm_ref_body "$NICS/nic-missing")"
expect_status 400 "VM with a missing NIC"
expect_eq "$(code)" InvalidResourceReference "InvalidResourceReference for the NIC"
expect_match "networkInterfaces/nic-missing referenced by resource .*/virtualMachines/vm-own was not found" "$(jget "$BODY_FILE" 'j["error"]["message"]')" "names the NIC and the VM"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["details"][0]["code"]')" NotFound "details NotFound"
curl -s "$CTL_URL/_sim/instances?cloud=azure&live=1" >"$T/i.json"
expect_eq "$(jget "$T/i.json" 'j["count"]')" "$LIVE" "no VM created"
# a VM on an existing NIC (deleteOption Detach by default)
arm PUT "$(az_vm_url vm-own)" "$(vm_ref_body "$NICS/nic-own")"
expect_status 201 "VM on an existing NIC"
AO=$(header Azure-AsyncOperation)
expect_eq "$(az_poll "$AO")" Succeeded "VM on an existing NIC: Succeeded"
arm GET "$NET/nic-own?$NAPI"
expect_match "/virtualMachines/vm-own\$" "$(jget "$BODY_FILE" 'j["properties"]["virtualMachine"]["id"]')" "NIC virtualMachine.id when attached"
arm DELETE "$NET/nic-own?$NAPI"
expect_status 400 "DELETE of a NIC in use"
expect_eq "$(code)" NicInUse "NicInUse"
expect_match "is used by existing resource .*/virtualMachines/vm-own" "$(jget "$BODY_FILE" 'j["error"]["message"]')" "NicInUse names the VM"
arm GET "$NET/nic-own?$NAPI"
expect_status 200 "the NIC in use is still there"
arm PUT "$(az_vm_url vm-own2)" "$(vm_ref_body "$NICS/nic-own")"
expect_status 400 "another VM on a NIC in use"
expect_eq "$(code)" NicInUse "NicInUse for the second VM"
arm DELETE "$(az_vm_url vm-own)"
expect_status 202 "DELETE the VM on its own NIC"
expect_eq "$(az_poll "$(header Azure-AsyncOperation)")" Succeeded "VM deleted"
sleep 0.4
arm GET "$NET/nic-own?$NAPI"
expect_status 200 "deleteOption Detach: the NIC stays"
expect_eq "$(jget "$BODY_FILE" '"virtualMachine" in j["properties"]')" False "and is detached"
arm DELETE "$NET/nic-own?$NAPI"
expect_status 200 "DELETE the detached NIC"
arm GET "$NET/nic-own?$NAPI"
expect_status 404 "deleted NIC: 404"
arm DELETE "$NET/nic-own?$NAPI"
expect_status 204 "DELETE of a missing NIC: 204"
# configurations: the NIC is named after the VM and the configuration; its
# deleteOption decides whether it goes with the VM
arm PUT "$(az_vm_url vm-det)" "$(az_vm_body Standard_NC24ads_A100_v4 | sed 's/"deleteOption": "Delete", "ipConfigurations"/"deleteOption": "Detach", "ipConfigurations"/')"
expect_status 201 "VM with a Detach NIC configuration"
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["networkProfile"]["networkInterfaces"][0]["id"]')" "$NICS/vm-det-nic" "NIC id from the configuration name"
expect_eq "$(jget "$BODY_FILE" 'j["properties"]["networkProfile"]["networkInterfaces"][0]["properties"]["deleteOption"]')" Detach "deleteOption echoed"
expect_eq "$(az_poll "$(header Azure-AsyncOperation)")" Succeeded "VM with a Detach NIC: Succeeded"
arm PUT "$(az_vm_url vm-del)" "$(az_vm_body Standard_NC24ads_A100_v4)"
expect_status 201 "VM with a Delete NIC configuration"
expect_eq "$(az_poll "$(header Azure-AsyncOperation)")" Succeeded "VM with a Delete NIC: Succeeded"
arm GET "$NET?$NAPI"
expect_eq "$(jget "$BODY_FILE" '[n["name"] for n in j["value"] if n["name"].startswith("vm-de")]')" '["vm-del-nic", "vm-det-nic"]' "NIC list shows both VMs' NICs"
arm DELETE "$NET/vm-del-nic?$NAPI"
expect_eq "$(code)" NicInUse "a VM-managed NIC in use cannot be deleted ($HTTP)"
arm DELETE "$(az_vm_url vm-det)"
arm DELETE "$(az_vm_url vm-del)"
expect_eq "$(az_poll "$(header Azure-AsyncOperation)")" Succeeded "both VMs deleted"
sleep 0.4
arm GET "$NET?$NAPI"
expect_eq "$(jget "$BODY_FILE" '[n["name"] for n in j["value"] if n["name"].startswith("vm-de")]')" '["vm-det-nic"]' "deleteOption Delete removed its NIC, Detach left one"
expect_eq "$(jget "$BODY_FILE" '"virtualMachine" in [n for n in j["value"] if n["name"] == "vm-det-nic"][0]["properties"]')" False "the left NIC is detached"
curl -s "$CTL_URL/_sim/azure/nics" >"$T/n.json"
expect_eq "$(jget "$T/n.json" '[(n["name"], n["vm"], n["delete_option"]) for n in j["nics"] if n["name"].startswith("vm-de")]')" '[["vm-det-nic", null, "Detach"]]' "/_sim/azure/nics shows the leftover NIC"
expect_eq "$(jget "$T/n.json" 'j["detached"]')" 1 "/_sim/azure/nics counts it detached"
arm GET "$RG_URL/Microsoft.Network/publicIPAddresses/vm-det-pip?$NAPI"
expect_status 200 "its public IP stays with it"
arm DELETE "$NET/vm-det-nic?$NAPI"
expect_status 200 "the leftover NIC can be deleted"
arm GET "$RG_URL/Microsoft.Network/publicIPAddresses/vm-det-pip?$NAPI"
expect_status 404 "and its public IP with it"
curl -s "$CTL_URL/_sim/azure/nics" >"$T/n.json"
expect_eq "$(jget "$T/n.json" 'j["detached"]')" 0 "no detached NIC left"


# --- throttling ---------------------------------------------------------------------
ctl_post /_sim/scenario '{"throttling":{"azure":{"reads":{"capacity":3,"refill_per_s":0.5}}}}'
for i in 1 2 3 4; do arm GET "$(az_vm_url page-01)"; done
expect_status 429 "4th read in a burst of 3"
expect_match '^[0-9]+$' "$(header Retry-After)" "Retry-After seconds"
expect_eq "$(jget "$BODY_FILE" 'j["code"]')" OperationNotAllowed "CRP 429 body code"
expect_eq "$(jget "$BODY_FILE" 'j["details"][0]["code"]')" TooManyRequests "details TooManyRequests"
expect_eq "$(header x-ms-ratelimit-remaining-subscription-reads)" 0 "remaining reads 0"
ctl_post /_sim/scenario '{"throttling":{"azure":{"reads":{"capacity":10000,"refill_per_s":1000}}}}'
sleep 2.1
arm GET "$(az_vm_url page-01)"
expect_status 200 "allowed again after refill"

# --- Retail Prices API ------------------------------------------------------------------
P="$AZ_URL/api/retail/prices?api-version=2023-01-01-preview"
F=$($PY -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1]))' "serviceName eq 'Virtual Machines' and armRegionName eq 'eastus' and armSkuName eq 'Standard_NC24ads_A100_v4' and priceType eq 'Consumption'")
req GET "$P&\$filter=$F"
expect_status 200 "retail prices (no auth needed)"
expect_eq "$(jget "$BODY_FILE" 'j["Count"]')" 3 "Linux, Spot and Windows rows"
expect_eq "$(jget "$BODY_FILE" '[i["retailPrice"] for i in j["Items"] if not i["skuName"].endswith(" Spot") and "Windows" not in i["productName"]][0]')" 3.673 "on-demand price from the catalog"
expect_eq "$(jget "$BODY_FILE" '[i["unitPrice"] for i in j["Items"] if i["meterName"].endswith(" Spot")][0]')" 1.2 "Spot row"
expect_eq "$(jget "$BODY_FILE" 'sorted(j["Items"][0].keys()) == sorted(["currencyCode","tierMinimumUnits","retailPrice","unitPrice","armRegionName","location","effectiveStartDate","meterId","meterName","productId","skuId","productName","skuName","serviceName","serviceId","serviceFamily","unitOfMeasure","type","isPrimaryMeterRegion","armSkuName"])')" True "item field names"
expect_eq "$(jget "$BODY_FILE" 'j["NextPageLink"]')" "" "single page: NextPageLink null"
F=$($PY -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1]))' "armRegionName eq 'EastUS'")
req GET "$P&\$filter=$F"
expect_eq "$(jget "$BODY_FILE" 'j["Count"]')" 0 "values are case-sensitive"
url="$P"
total=0
pages=0
while [ -n "$url" ] && [ $pages -lt 20 ]; do
	req GET "$url"
	total=$((total + $(jget "$BODY_FILE" 'j["Count"]')))
	url=$(jget "$BODY_FILE" 'j["NextPageLink"]')
	pages=$((pages + 1))
done
expect_eq "$total" 14 "all 14 rows over NextPageLink pages (page size 4)"
expect_eq "$pages" 4 "4 pages"
req GET "$P&\$filter=bogus%20gt%205"
expect_status 400 "bad filter"
# the OData subset real clients send: eq, and, or, parentheses (one page)
ctl_post /_sim/scenario '{"paging":{"azure_prices":100}}'
pfilter() { # FILTER -> GET with it
	req GET "$P&\$filter=$($PY -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1]))' "$1")"
}
rows() { # sorted "sku@region" of the Linux Consumption rows
	jget "$BODY_FILE" '" ".join(sorted(i["armSkuName"] + "@" + i["armRegionName"] for i in j["Items"] if not i["skuName"].endswith(" Spot") and "Windows" not in i["productName"]))'
}
pfilter "serviceName eq 'Virtual Machines' and armRegionName eq 'eastus' and priceType eq 'Consumption' and (armSkuName eq 'Standard_NC4as_T4_v3' or armSkuName eq 'Standard_ND96isr_H100_v5')"
expect_status 200 "the gpubroker driver's filter shape (an or-group in parentheses)"
expect_eq "$(rows)" "Standard_NC4as_T4_v3@eastus Standard_ND96isr_H100_v5@eastus" "or-group inside and: both SKUs, eastus only"
expect_eq "$(jget "$BODY_FILE" 'j["Count"]')" 6 "3 rows (Linux, Spot, Windows) for each"
pfilter "armRegionName eq 'westeurope' and armSkuName eq 'Standard_NC24ads_A100_v4' or armSkuName eq 'Standard_NC4as_T4_v3'"
expect_eq "$(rows)" "Standard_NC24ads_A100_v4@westeurope Standard_NC4as_T4_v3@eastus" "and binds tighter than or"
pfilter "armRegionName eq 'westeurope' and (armSkuName eq 'Standard_NC24ads_A100_v4' or armSkuName eq 'Standard_NC4as_T4_v3')"
expect_eq "$(rows)" "Standard_NC24ads_A100_v4@westeurope" "parentheses override precedence"
pfilter "((armSkuName eq 'Standard_NC4as_T4_v3')) OR (armSkuName eq 'x' AND armRegionName eq 'eastus')"
expect_eq "$(rows)" "Standard_NC4as_T4_v3@eastus" "nested parentheses, keywords in any case"
pfilter "not(contains(productName,'Windows'))"
expect_status 400 "not()/contains() refused"
expect_eq "$(jget "$BODY_FILE" 'j["error"]["code"]')" BadRequest "400 in Azure's error shape"
expect_match "'not' is not supported" "$(jget "$BODY_FILE" 'j["error"]["message"]')" "the message names what is unsupported"
pfilter "armSkuName ne 'x'"
expect_match "operator 'ne' is not supported" "$(jget "$BODY_FILE" 'j["error"]["message"]') ($HTTP)" "ne refused"
pfilter "retailPrice eq 1"
expect_match "numeric field 'retailPrice'" "$(jget "$BODY_FILE" 'j["error"]["message"]') ($HTTP)" "numeric comparisons refused"
pfilter "(armSkuName eq 'x'"
expect_match "expected '\\)'" "$(jget "$BODY_FILE" 'j["error"]["message"]') ($HTTP)" "unbalanced parenthesis"
pfilter "armSkuName eq 'x' or"
expect_status 400 "dangling or"
pfilter "armSkuName eq 'x' armRegionName eq 'y'"
expect_status 400 "missing and/or between comparisons"
pfilter "$($PY -c 'print("(" * 40 + "armSkuName eq '"'"'x'"'"'" + ")" * 40)')"
expect_match "nested deeper" "$(jget "$BODY_FILE" 'j["error"]["message"]') ($HTTP)" "nesting is bounded"

# --- expired tokens (a cloudsim whose tokens live 1 second) ------------------------------------
cat >"$T/short.yaml" <<EOF
catalogs: {azure: $SCEN_DIR/test-catalog-azure.json}
credentials: {azure: {token_lifetime_s: 1}}
EOF
sim_start "$T/short.yaml"
sim_creds
az_token
sleep 1.2
arm GET "$(az_vm_url x)"
expect_status 401 "token past its lifetime"
expect_eq "$(code)" ExpiredAuthenticationToken "ExpiredAuthenticationToken"
az_token
arm GET "$(az_vm_url x)"
expect_status 404 "a refreshed token works"

finish
