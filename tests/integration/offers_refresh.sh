#!/bin/sh
# offers_refresh.sh -- `gpubroker offers refresh` against cloudsim as a real
# process: each driver's price source (EC2 spot price history, the Azure
# Retail Prices API with its or-grouped $filter, the Cloud Billing catalog's
# component SKUs) lands in the state store with its provenance; prices equal
# what cloudsim bills and publishes; --region touches one region only; a
# failing source (injected 5xx, wrong credentials) fails loudly and leaves
# the stored catalog as it was; the daemon's POST /v1/offers/refresh swaps
# its live catalog without a restart.
. "$GB_SRC/tests/lib/integration.sh"

sim_start
START=$(date +%s)
CAT=$GB_SRC/drivers  # fast.yaml: cloudsim sells (and bills) these catalogs
PY=/usr/bin/python3
# src_of CLOUD: every provenance the shipped catalog gives (the file's
# source, and the own on_demand_source/spot_source of entries checked
# later), as a JSON array
src_of() {
	jq -c '[.source, (.types[].regions[] | .on_demand_source, .spot_source | strings)] | unique' \
		"$CAT/$1/data/offers.json"
}
GCP_SHIPPED=$(src_of gcp)
AWS_SHIPPED=$(src_of aws)
# jq: the row's source is not one of the shipped catalog's
NOT_GCP='((.source | IN($ENV.GCP_SHIPPED | fromjson | .[])) | not)'
NOT_AWS='((.source | IN($ENV.AWS_SHIPPED | fromjson | .[])) | not)'

# offers_to FILE [ARGS...]: `offers -o json --zones` (one row per zone)
offers_to() {
	_f=$1
	shift
	gb offers -o json --zones "$@" >"$_f" 2>"$_f.err" || fail "offers $* failed: $(cat "$_f.err")"
}
# count FILE JQ-FILTER: how many rows pass the filter
count() { jq "[.[] | select($2)] | length" "$1"; }
# provenance FILE: what a failed refresh must not change
provenance() {
	jq -S '[.[] | {cloud, region, zones, instance_type, capacity, price_per_hour, source, fetched_at}]' "$1"
}
# refresh NAME ARGS...: `offers refresh ARGS -o json` into $T/NAME.json
refresh() {
	_n=$1
	shift
	gb offers refresh "$@" -o json >"$T/$_n.json" 2>"$T/$_n.err"
}
FRESH='(.price_age | test("^[0-9]+s$"))'
DAYS='(.price_age | test("^[0-9]+d"))'

# --- before any refresh: the shipped catalogs, days old --------------------------
export GCP_SHIPPED AWS_SHIPPED
offers_to "$T/o0.json"
n=$(count "$T/o0.json" ".cloud == \"gcp\" and $NOT_GCP")
check "[ $n = 0 ]" "fresh state: every GCP offer has the shipped catalog's provenance"
n=$(count "$T/o0.json" "(.cloud == \"gcp\" or .cloud == \"azure\") and ($DAYS | not)")
check "[ $n = 0 ]" "fresh state: shipped prices are days old"
# the table says so under it: how many offers are priced more than 30
# days ago, and that `offers refresh` is the way to today's prices
gb offers --cloud gcp >"$T/t0.out" 2>"$T/t0.err" || fail "offers --cloud gcp failed: $(cat "$T/t0.err")"
n=$(count "$T/o0.json" ".cloud == \"gcp\"")
check "grep -q \"^note: $n of $n offers are priced more than 30 days ago (the oldest [0-9]* days): shipped prices are a starting point until 'gpubroker offers refresh'\" $T/t0.err" \
	"offers: a note under the table says all $n shipped GCP prices are more than 30 days old and to refresh"
check "! grep -q 'note:' $T/t0.out" "offers: the note is not part of the table (stdout)"

# --- 3. --region refreshes that region only ----------------------------------------
refresh r-gcp-ew4 gcp --region europe-west4 ||
	fail "offers refresh gcp --region europe-west4 failed: $(cat "$T/r-gcp-ew4.err")"
check "jq -e '.[0].region == \"europe-west4\" and .[0].offers > 0 and .[0].result == \"stored\"' $T/r-gcp-ew4.json >/dev/null" \
	"refresh gcp --region europe-west4 stored $(jq '.[0].offers' "$T/r-gcp-ew4.json") offers"
refresh r-aws-use1 aws --region us-east-1 ||
	fail "offers refresh aws --region us-east-1 failed: $(cat "$T/r-aws-use1.err")"
offers_to "$T/o1.json"
n=$(count "$T/o1.json" ".cloud == \"gcp\" and .region == \"europe-west4\" and (.source | startswith(\"gcp-billing-catalog \")) and $FRESH")
m=$(count "$T/o1.json" '.cloud == "gcp" and .region == "europe-west4"')
check "[ $n -gt 0 ] && [ $n = $m ]" "europe-west4: all $m GCP offers from the billing catalog, seconds old"
n=$(count "$T/o1.json" ".cloud == \"gcp\" and .region != \"europe-west4\" and ($NOT_GCP or ($DAYS | not))")
check "[ $n = 0 ]" "other GCP regions keep the shipped provenance"
n=$(count "$T/o1.json" ".cloud == \"aws\" and .capacity == \"spot\" and .region == \"us-east-1\" and (.source | startswith(\"ec2:DescribeSpotPriceHistory \")) and $FRESH")
m=$(count "$T/o1.json" '.cloud == "aws" and .capacity == "spot" and .region == "us-east-1"')
check "[ $n -gt 0 ] && [ $n = $m ]" "aws us-east-1: all $m spot prices from DescribeSpotPriceHistory"
n=$(count "$T/o1.json" ".cloud == \"aws\" and .region != \"us-east-1\" and $NOT_AWS")
check "[ $n = 0 ]" "other AWS regions keep the shipped provenance"

# --- 1. each cloud refreshes and stores offers -------------------------------------------
for c in aws azure gcp lambda; do
	t0=$(date +%s%N)
	refresh "r-$c" "$c" || fail "offers refresh $c failed: $(cat "$T/r-$c.json" "$T/r-$c.err")"
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	check "jq -e '.[0].cloud == \"$c\" and .[0].offers > 0 and .[0].result == \"stored\"' $T/r-$c.json >/dev/null" \
		"offers refresh $c: $(jq '.[0].offers' "$T/r-$c.json") offers stored in ${ms} ms from $(jq -r '.[0].source' "$T/r-$c.json")"
done
offers_to "$T/o2.json"
n=$(count "$T/o2.json" ".cloud == \"gcp\" and (.source | startswith(\"gcp-billing-catalog \")) and $FRESH")
check "[ $n = $(jq '.[0].offers' "$T/r-gcp.json") ] && [ $n = $(count "$T/o2.json" '.cloud == "gcp"') ]" \
	"gcp: every offer ($n) from the billing catalog, seconds old"
gb offers --cloud gcp >"$T/t2.out" 2>"$T/t2.err" || fail "offers --cloud gcp failed: $(cat "$T/t2.err")"
check "[ -s $T/t2.out ] && ! grep -q 'note:' $T/t2.err" "offers: after the refresh, no note (every GCP price is seconds old)"
n=$(count "$T/o2.json" ".cloud == \"azure\" and (.source | startswith(\"azure-retail-prices \")) and $FRESH")
check "[ $n = $(jq '.[0].offers' "$T/r-azure.json") ] && [ $n = $(count "$T/o2.json" '.cloud == "azure"') ]" \
	"azure: every offer ($n) from the Retail Prices API, seconds old"
n=$(count "$T/o2.json" ".cloud == \"aws\" and .capacity == \"spot\" and (.source | startswith(\"ec2:DescribeSpotPriceHistory \")) and $FRESH")
check "[ $n -gt 0 ] && [ $n = $(count "$T/o2.json" '.cloud == "aws" and .capacity == "spot"') ]" \
	"aws: every spot offer ($n) from DescribeSpotPriceHistory, seconds old"
n=$(count "$T/o2.json" ".cloud == \"lambda\" and (.source | startswith(\"lambda-instance-types \")) and $FRESH")
check "[ $n -gt 0 ] && [ $n = $(jq '.[0].offers' "$T/r-lambda.json") ] && [ $n = $(count "$T/o2.json" '.cloud == "lambda"') ]" \
	"lambda: every offer ($n) from GET /instance-types, seconds old"
n=$(count "$T/o2.json" ".cloud == \"aws\" and .capacity == \"on-demand\" and $NOT_AWS")
check "[ $n = 0 ]" "aws: on-demand prices keep the shipped catalog's provenance (EC2 has no on-demand price API)"

# --- 2. prices equal what cloudsim bills (its catalogs) and publishes ---------------------------
# every refreshed offer against the catalog price cloudsim bills for it
# (GCP: the billing SKUs' components add up to it within 0.01%: see
# tests/cloudsim/gcp_rates.c; Azure: the Retail API rounds to 4 decimals)
$PY - "$T/o2.json" "$CAT" >"$T/prices.txt" <<'EOF' || fail "price comparison failed: $(cat "$T/prices.txt")"
import json, sys
offers = json.load(open(sys.argv[1]))
cats = {c: {t["type"]: t for t in json.load(open("%s/%s/data/offers.json" % (sys.argv[2], c)))["types"]}
        for c in ("aws", "azure", "gcp", "lambda")}
def billed(o):
    r = cats[o["cloud"]][o["instance_type"]]["regions"][o["region"]]
    if o["capacity"] == "on-demand":
        return r["on_demand"]
    z = (r.get("spot_zones") or {}).get(o["zones"])
    return z if z is not None else r["spot"]
worst = {}
for o in offers:
    if o["cloud"] not in cats:
        continue
    want = billed(o)
    key = (o["cloud"], o["capacity"])
    err = abs(o["price_per_hour"] - want)
    rel = err / want
    if o["cloud"] == "azure":
        rel = err if err > 0.00005 + 1e-12 else 0.0
    if rel >= worst.get(key, (-1,))[0]:
        worst[key] = (rel, o["instance_type"], o["region"], o["zones"], o["price_per_hour"], want)
bad = 0
for key, w in sorted(worst.items()):
    limit = 1e-4 if key[0] == "gcp" else 1e-9
    print("%-5s %-9s worst %s %s %s: %.9g vs billed %.9g (off %.3g)%s" %
          (key + (w[1], w[2], w[3], w[4], w[5], w[0], "" if w[0] < limit else "  <-- TOO FAR")))
    bad += w[0] >= limit
print("clouds/capacities compared: %d" % len(worst))
sys.exit(1 if bad or len(worst) != 7 else 0)
EOF
cat "$T/prices.txt"
echo "ok: every refreshed price equals cloudsim's billed price (GCP within 0.01%, Azure to the Retail API's 4 decimals, AWS and Lambda exactly)"

# a few by name, on-demand and spot
price() { # CLOUD REGION TYPE CAPACITY [ZONE]
	jq -r --arg c "$1" --arg r "$2" --arg t "$3" --arg k "$4" --arg z "${5:-}" \
		'[.[] | select(.cloud == $c and .region == $r and .instance_type == $t and .capacity == $k and ($z == "" or .zones == $z)) | .price_per_hour][0]' "$T/o2.json"
}
near() { # A B REL -> |A-B| <= REL*B
	awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= r * b) }'
}
for spec in "us-central1 g2-standard-4 on_demand on-demand" "us-central1 g2-standard-4 spot spot" \
	"us-east4 a3-highgpu-8g on_demand on-demand" "us-east4 a3-highgpu-8g spot spot" \
	"europe-west1 n1-standard-4/nvidia-tesla-t4:1 on_demand on-demand" \
	"asia-southeast1 a2-ultragpu-8g spot spot"; do
	set -- $spec
	want=$(jq --arg t "$2" --arg r "$1" ".types[] | select(.type == \$t) | .regions[\$r].$3" "$CAT/gcp/data/offers.json")
	got=$(price gcp "$1" "$2" "$4")
	check "near '$got' '$want' 0.0001" "gcp $2 $1 $4: \$$got/h, cloudsim bills \$$want/h"
done
# Azure: exactly the rows cloudsim's Retail Prices API publishes
P="$AZURE_PRICES_ENDPOINT?api-version=2023-01-01-preview"
for spec in "eastus Standard_NC24ads_A100_v4" "westeurope Standard_NC24ads_A100_v4" "eastus Standard_ND96isr_H100_v5" "eastus Standard_NC4as_T4_v3"; do
	set -- $spec
	curl -sf -G "$P" --data-urlencode "\$filter=armRegionName eq '$1' and armSkuName eq '$2' and priceType eq 'Consumption'" >"$T/retail.json" ||
		fail "cannot read cloudsim's Retail Prices for $2 in $1"
	od=$(jq '[.Items[] | select((.skuName | endswith(" Spot") | not) and (.productName | contains("Windows") | not)) | .retailPrice][0]' "$T/retail.json")
	sp=$(jq '[.Items[] | select(.skuName | endswith(" Spot")) | .retailPrice][0]' "$T/retail.json")
	check "[ '$od' != null ] && near '$(price azure "$1" "$2" on-demand)' '$od' 1e-12" "azure $2 $1 on-demand = published \$$od/h"
	if [ "$sp" != null ]; then
		check "near '$(price azure "$1" "$2" spot)' '$sp' 1e-12" "azure $2 $1 spot = published \$$sp/h"
	fi
done
# AWS spot: per zone, as DescribeSpotPriceHistory reports the catalog's zone prices
for z in us-east-1a us-east-1b us-east-1c; do
	want=$(jq --arg z "$z" '.types[] | select(.type == "p5.48xlarge") | .regions["us-east-1"] | (.spot_zones[$z] // .spot)' "$CAT/aws/data/offers.json")
	got=$(price aws us-east-1 p5.48xlarge spot "$z")
	[ "$got" = null ] && [ "$want" = null ] && continue
	check "near '$got' '$want' 1e-9" "aws p5.48xlarge $z spot: \$$got/h, cloudsim bills \$$want/h"
done

# --- 4. a failing source: a clear error, non-zero exit, the stored catalog untouched ---------------
provenance "$T/o2.json" >"$T/before.json"
unchanged() { # MESSAGE
	offers_to "$T/now.json"
	provenance "$T/now.json" >"$T/after.json"
	check "cmp -s $T/before.json $T/after.json" "$1"
}
# Azure: the Retail Prices API answers 500 (retried, then given up)
sim_post /_sim/scenario '{"error_rates":{"azure":{"RetailPrices":1}}}'
if refresh f-azure azure; then fail "refresh azure succeeded against a failing source"; fi
echo "azure failure: $(jq -r '.[0].result' "$T/f-azure.json")"
check "jq -e '.[0].offers == 0 and (.[0].result | startswith(\"failed: \") and test(\"Retail Prices\") and test(\"500|InternalServerError\"))' $T/f-azure.json >/dev/null" \
	"azure: the failure says which source and what it answered"
unchanged "azure: the stored catalog is untouched after the failed refresh"
sim_post /_sim/scenario '{"error_rates":{"azure":{"RetailPrices":0}}}'
# GCP: a service-account key cloudsim does not know (wrong credentials)
"$SIMBIN" gcp-keygen "$T/bad-key.json" --token-uri "$(jq -r .token_uri "$GOOGLE_APPLICATION_CREDENTIALS")" \
	--client-email "$(jq -r .client_email "$GOOGLE_APPLICATION_CREDENTIALS")" --project "$GOOGLE_CLOUD_PROJECT" >/dev/null ||
	fail "cloudsim gcp-keygen failed"
if GOOGLE_APPLICATION_CREDENTIALS=$T/bad-key.json refresh f-gcp gcp; then
	fail "refresh gcp succeeded with a key cloudsim does not know"
fi
echo "gcp failure: $(jq -r '.[0].result' "$T/f-gcp.json")"
check "jq -e '.[0].offers == 0 and (.[0].result | startswith(\"failed: \") and test(\"Invalid JWT Signature|invalid_grant\"))' $T/f-gcp.json >/dev/null" \
	"gcp: the failure carries the token endpoint's reason"
unchanged "gcp: the stored catalog is untouched after the failed refresh"
# AWS: a wrong secret key (SigV4 refused), for one region
if AWS_SECRET_ACCESS_KEY=not-the-secret refresh f-aws aws --region us-east-1; then
	fail "refresh aws succeeded with a wrong secret"
fi
echo "aws failure: $(jq -r '.[0].result' "$T/f-aws.json")"
check "jq -e '.[0].result | test(\"SignatureDoesNotMatch|AuthFailure\")' $T/f-aws.json >/dev/null" \
	"aws: the failure carries EC2's error code"
unchanged "aws: the stored catalog is untouched after the failed refresh"
# table output: the reason is shown and the exit status is not 0
if GOOGLE_APPLICATION_CREDENTIALS=$T/bad-key.json gb offers refresh gcp >"$T/f-table.out" 2>&1; then
	rc=0
else
	rc=$?
fi
check "[ $rc != 0 ] && grep -q 'Invalid JWT Signature' $T/f-table.out" "table output: exit $rc with the reason"

# a source that prices nothing there: success, nothing stored, nothing lost
refresh r-none gcp --region mars-north1 || fail "refresh gcp --region mars-north1 failed: $(cat "$T/r-none.json")"
check "jq -e '.[0].offers == 0 and (.[0].result | startswith(\"no offers there\"))' $T/r-none.json >/dev/null" \
	"a region with nothing to price: 'no offers there', exit 0"
unchanged "and the stored catalog is untouched"

# --- 5. the daemon: POST /v1/offers/refresh swaps the live catalog --------------------------
export GPUBROKER_STATE="$T/daemon.db"   # a fresh state: shipped prices only
daemon_start
api() { # METHOD PATH TOKEN -> body in $T/api.json, prints the status
	curl -s -o "$T/api.json" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $3" "$GPUBROKER_SERVER$2"
}
fetched() { # jq: fetched_at (RFC 3339 UTC with milliseconds) as epoch seconds
	echo '(.fetched_at | .[0:19] + "Z" | fromdateiso8601)'
}
ADMIN=demo-admin-token
check "[ \"\$(api GET '/v1/offers?cloud=gcp' demo-viewer-token)\" = 200 ]" "GET /v1/offers as a viewer"
check "jq -e '[.offers[] | select($NOT_GCP)] | length == 0' $T/api.json >/dev/null" \
	"daemon, fresh state: shipped GCP provenance"
check "[ \"\$(api POST '/v1/offers/refresh?cloud=gcp' demo-viewer-token)\" = 403 ]" "a viewer may not refresh prices"
check "[ \"\$(api POST '/v1/offers/refresh?cloud=gcp' demo-ci-token)\" = 403 ]" "an operator may not refresh prices (admin only)"
# a plan through the daemon: the shipped g2-standard-4 price, and the
# hash of the catalog it planned from
write_spec "$T/g2.yaml" pr-g2 gcp L4 1
sed -i 's/^  placement: .*/  placement: {clouds: [gcp], regions: [us-central1], colocate: none}/' "$T/g2.yaml"
plan_to() { # FILE
	GPUBROKER_TOKEN=$ADMIN gb plan -f "$T/g2.yaml" -o json >"$1" 2>"$1.err" || fail "plan through the daemon failed: $(cat "$1.err")"
}
plan_to "$T/plan0.json"
check "jq -e '.[0].candidates[0].instance_type == \"g2-standard-4\" and .[0].candidates[0].price_per_hour == 0.70683' $T/plan0.json >/dev/null" \
	"the daemon plans g2-standard-4 in us-central1 at the shipped \$0.70683/h"
check "[ \"\$(api POST '/v1/offers/refresh?cloud=gcp&region=us-central1' $ADMIN)\" = 200 ]" "POST /v1/offers/refresh?cloud=gcp&region=us-central1 as admin"
check "jq -e '.refreshed[0].offers > 0 and .refreshed[0].result == \"stored\"' $T/api.json >/dev/null" \
	"the daemon stored $(jq '.refreshed[0].offers' "$T/api.json") us-central1 offers"
api GET '/v1/offers?cloud=gcp' $ADMIN >/dev/null
check "jq -e --argjson t $START '[.offers[] | select(.region == \"us-central1\")] | length > 0 and all((.source | startswith(\"gcp-billing-catalog \")) and $(fetched) >= \$t)' $T/api.json >/dev/null" \
	"GET /v1/offers shows the new us-central1 provenance without a restart"
check "jq -e '[.offers[] | select(.region != \"us-central1\")] | length > 0 and all($NOT_GCP | not)' $T/api.json >/dev/null" \
	"other GCP regions are still the shipped ones"
plan_to "$T/plan1.json"
g2=$(jq '.[0].candidates[0].price_per_hour' "$T/plan1.json")
check "[ '$g2' != 0.70683 ] && near '$g2' 0.70683 0.0001" \
	"the same plan now uses the refreshed price (\$$g2/h from the billing catalog's components)"
check "[ \"\$(jq -r '.[0].catalog_sha256' $T/plan1.json)\" != \"\$(jq -r '.[0].catalog_sha256' $T/plan0.json)\" ]" \
	"and a different catalog (catalog_sha256 changed)"
check "[ \"\$(api POST '/v1/offers/refresh' $ADMIN)\" = 200 ]" "POST /v1/offers/refresh (every cloud)"
check "jq -e '[.refreshed[] | select(.result == \"stored\" and .offers > 0) | .cloud] | sort == [\"aws\", \"azure\", \"gcp\", \"lambda\"]' $T/api.json >/dev/null" \
	"aws, azure, gcp and lambda refreshed through the daemon"
api GET '/v1/offers?cloud=azure' $ADMIN >/dev/null
check "jq -e '.offers | length > 0 and all(.source | startswith(\"azure-retail-prices \"))' $T/api.json >/dev/null" \
	"GET /v1/offers: Azure prices from the Retail Prices API now"
cp "$T/api.json" "$T/az-before.json"
sim_post /_sim/scenario '{"error_rates":{"azure":{"RetailPrices":1}}}'
check "[ \"\$(api POST '/v1/offers/refresh?cloud=azure' $ADMIN)\" = 502 ]" "a failing source: 502 from the daemon"
check "jq -e '.refreshed[0].result | startswith(\"failed: \")' $T/api.json >/dev/null" "with the reason in the report"
sim_post /_sim/scenario '{"error_rates":{"azure":{"RetailPrices":0}}}'
api GET '/v1/offers?cloud=azure' $ADMIN >/dev/null
check "[ \"\$(jq -S .offers $T/api.json)\" = \"\$(jq -S .offers $T/az-before.json)\" ]" \
	"the daemon's live Azure catalog is unchanged after the failed refresh"
# the CLI through the daemon
GPUBROKER_TOKEN=$ADMIN gb offers refresh gcp --region europe-west4 -o json >"$T/remote.json" 2>"$T/remote.err" ||
	fail "offers refresh through the daemon failed: $(cat "$T/remote.err")"
check "jq -e '.[0].region == \"europe-west4\" and .[0].offers > 0' $T/remote.json >/dev/null" \
	"gpubroker offers refresh --region through the daemon"
check "kill -0 $D_PID" "the daemon is the same process throughout"

echo "PASS ($(( $(date +%s) - START )) s after cloudsim started)"
