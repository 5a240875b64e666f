#!/bin/sh
# usage.sh -- `gpubroker usage`: GPU-hours bought, their utilisation from
# the heartbeats kept, and the idle ones, with cloudsim and the daemon:
#   1. pool us-a (2 instances, one sending heartbeats of gpu_util 0.8, the
#      other none) and pool us-b (no heartbeats): the report through
#      --server and locally says 0.8 for us-a, idle = measured x 0.2, the
#      silent instances unmeasured (not idle), us-b's utilisation unknown;
#      GPU-hours agree with `cost`; buckets by hour and weekday add up;
#   2. the same figures in /metrics; another team's report is refused;
#      bad flags are usage errors;
#   3. daemon.heartbeats_retention: a daemon keeping 2 s deletes the older
#      samples as the next heartbeat arrives (counted in /metrics).
. "$GB_SRC/tests/lib/integration.sh"

sim_start
daemon_start
export GPUBROKER_TOKEN=demo-ci-token
auth="Authorization: Bearer $GPUBROKER_TOKEN"

# within A B EPS: |A - B| <= EPS
within() {
	awk -v a="$1" -v b="$2" -v e="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= e) }'
}
beat() { # INSTANCE UTIL
	curl -sf -X POST -H "$auth" -H 'Content-Type: application/json' \
		-d "{\"gpu_util\": $2}" "$GPUBROKER_SERVER/v1/instances/$1/heartbeat" >/dev/null ||
		fail "heartbeat of $1 refused"
}

write_spec "$T/a.yaml" us-a aws A10G 2
write_spec "$T/b.yaml" us-b aws A10G 1
gb apply -f "$T/a.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/a.log" || fail "apply us-a"
gb apply -f "$T/b.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/b.log" || fail "apply us-b"
gb status us-a -o json >"$T/a.json"
busy=$(jq -r '.instances[0].id' "$T/a.json")
gpus=$(jq -r '.instances[0].gpu_count' "$T/a.json")
[ "$gpus" -ge 1 ] || fail "us-a's instances have no GPUs: $gpus"
for i in 1 2 3 4; do
	beat "$busy" 0.8
	sleep 1
done

# ---- 1. the report, through the daemon and locally -------------------------
gb usage --pool us-a -o json >"$T/ua.json" 2>"$T/ua.log" || fail "usage --pool us-a: $(cat "$T/ua.log")"
jq -c '{gpu_hours, measured_gpu_hours, gpu_util, idle_gpu_hours, unmeasured_instances}' "$T/ua.json"
check "within \"\$(jq .gpu_util $T/ua.json)\" 0.8 0.000001" "us-a's mean utilisation is its heartbeats' 0.8"
m=$(jq .measured_gpu_hours "$T/ua.json")
check "within \"\$(jq .idle_gpu_hours $T/ua.json)\" \$(awk -v m=$m 'BEGIN { print m * 0.2 }') 0.0000001" \
	"idle GPU-hours = measured x (1 - 0.8)"
# 3+ s of one instance's GPUs measured, far less than the 2 bought
check "awk -v m=$m -v g=$gpus 'BEGIN { exit !(m >= 3 * g / 3600 && m <= 60 * g / 3600) }'" \
	"the measured GPU-hours are the heartbeats' span ($m)"
check "jq -e '.unmeasured_instances == 1 and .pools[0].instances == 2 and .pools[0].pool == \"us-a\"' $T/ua.json >/dev/null" \
	"us-a's silent instance is unmeasured"
check "jq -e '.gpu_hours > .measured_gpu_hours and (.unmeasured_gpu_hours - (.gpu_hours - .measured_gpu_hours) | fabs) < 1e-9' $T/ua.json >/dev/null" \
	"bought = measured + unmeasured, the silent instance's hours not idle"
# bought: each instance's launch (as status and cost see it) .. the
# report's end, x its GPUs (cost also counts the 60 s billing minimum
# ahead of now; a report ends at its period's end)
want=$(jq -n --slurpfile s "$T/a.json" --slurpfile u "$T/ua.json" "$JQ_TIME"'
	($u[0].until | ms) as $t | [$s[0].instances[] | ($t - (.launched_at | ms)) / 3600000 * .gpu_count] | add')
check "within \"\$(jq .gpu_hours $T/ua.json)\" $want 0.0000003" \
	"us-a's GPU-hours are its instances' lifetimes x GPUs ($want)"
check "jq -e '[.buckets[].gpu_hours] | add as \$s | (\$s - ($(jq .gpu_hours "$T/ua.json"))) | fabs < 1e-9' $T/ua.json >/dev/null" \
	"the hour buckets add up to the total"
check "jq -e '(.buckets | length) == 24 and .buckets[0].bucket == \"00\" and .by == \"hour\"' $T/ua.json >/dev/null" \
	"24 hour buckets, 00..23"
check "jq -e '.since | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z\$\")' $T/ua.json >/dev/null" "times are RFC 3339"

gb usage -o json >"$T/all.json" || fail "usage"
check "jq -e '.unmeasured_instances == 2 and (.pools | length) == 2' $T/all.json >/dev/null" \
	"all pools: two silent instances"
check "jq -e '.pools[] | select(.pool == \"us-b\") | .gpu_util == null and .idle_gpu_hours == 0' $T/all.json >/dev/null" \
	"us-b sent nothing: utilisation unknown, nothing idle"

today=$(date -u +%a | tr 'A-Z' 'a-z')
gb usage --by weekday --team research -o json >"$T/wd.json" || fail "usage --by weekday"
check "jq -e '(.buckets | length) == 7 and .buckets[0].bucket == \"mon\" and ([.buckets[] | select(.gpu_hours > 0) | .bucket] | . == [\"$today\"] or length == 2)' $T/wd.json >/dev/null" \
	"by weekday: the hours are today's ($today)"

(unset GPUBROKER_SERVER GPUBROKER_TOKEN; gb usage --pool us-a -o json) >"$T/local.json" 2>"$T/local.log" ||
	fail "local usage: $(cat "$T/local.log")"
check "within \"\$(jq .gpu_util $T/local.json)\" 0.8 0.000001 && jq -e '.unmeasured_instances == 1' $T/local.json >/dev/null" \
	"local mode reads the same samples"
check "within \"\$(jq .gpu_hours $T/local.json)\" \"\$(jq .gpu_hours $T/ua.json)\" 0.01" "local and remote agree on GPU-hours"

gb usage --pool us-a >"$T/table.out" || fail "usage table"
cat "$T/table.out" | tail -3
check "grep -q '80% mean utilisation' $T/table.out" "the table states the mean"
check "grep -q 'unmeasured, not counted as idle' $T/table.out" "the table says the silent instance is not idle"
check "awk 'NR == 1 { next } /^TOTAL/ { exit } \$4 ~ /^[0-9]+%\$/ { ok = 1 } \$4 != \"-\" && \$4 !~ /^[0-9]+%\$/ { bad = 1 } END { exit !(ok && !bad) }' $T/table.out" \
	"the gpu util column is a percentage like the total's, never 0.538683 (issue 42)"

# ---- 2. metrics, access, bad input -----------------------------------------
curl -sf -H "$auth" "$GPUBROKER_SERVER/metrics" >"$T/metrics.txt" || fail "metrics"
# another team's token reads its own team's series only (issue 30)
curl -sf -H 'Authorization: Bearer demo-other-team-token' "$GPUBROKER_SERVER/metrics" >"$T/metrics-product.txt" || fail "metrics (product)"
check "! grep -q 'team=\"research\"' $T/metrics-product.txt && ! grep -q 'pool=\"us-a\"' $T/metrics-product.txt" \
	"team product's token sees none of research's pools, usage or \$/h in /metrics"
check "grep -q '^gpubroker_api_requests_total\|^gpubroker_up 1' $T/metrics-product.txt" "but the daemon's own series"
curl -sf -H 'Authorization: Bearer demo-viewer-token' "$GPUBROKER_SERVER/metrics" >"$T/metrics-viewer.txt" || fail "metrics (viewer)"
check "grep -q '^gpubroker_usage_gpu_util{team=\"research\"}' $T/metrics-viewer.txt" "research's viewer sees research's series"
grep '^gpubroker_usage' "$T/metrics.txt"
# by team, not by pool (issue 36: CI pools would grow the series without
# bound; per pool: gpubroker usage and the API, as above)
check "grep -q '^gpubroker_usage_gpu_util{team=\"research\"} 0.8000\$' $T/metrics.txt" \
	"research's utilisation is us-a's 0.8 (us-b measured nothing, so it does not count)"
check "! grep -q '^gpubroker_usage[a-z_]*{pool=' $T/metrics.txt" "no usage series per pool"
check "grep -q '^gpubroker_usage_gpu_seconds{team=\"research\"} [0-9]' $T/metrics.txt" \
	"research's GPU-seconds bought are there (base units: GPU-hours x 3600)"
check "grep -q '^gpubroker_usage_idle_gpu_seconds{team=\"research\"}' $T/metrics.txt && grep -q '^gpubroker_usage_unmeasured_gpu_seconds{team=\"research\"}' $T/metrics.txt" \
	"idle and unmeasured GPU-seconds by team"
check "! grep -q '^gpubroker_usage_[a-z_]*hours' $T/metrics.txt" "no metric in hours (promtool: not base units)"
if gb usage --team product >"$T/other.out" 2>"$T/other.log"; then fail "another team's usage was shown"; fi
check "grep -q 'team product is not yours' $T/other.log" "another team's usage is refused, saying why"
set +e
gb usage --by month >/dev/null 2>"$T/bad.log"; rc=$?
set -e
check "[ $rc = 2 ] && grep -q 'expected hour or weekday' $T/bad.log" "--by month is a usage error"
set +e
gb usage --since soon >/dev/null 2>"$T/bad2.log"; rc=$?
set -e
check "[ $rc = 2 ] && grep -q 'expected a duration' $T/bad2.log" "--since soon is a usage error"

if gb usage --pool nope >/dev/null 2>"$T/nope.log"; then fail "usage of no pool succeeded"; fi
check "grep -q 'no pool named nope' $T/nope.log" "an unknown pool is an error through the daemon"
if (unset GPUBROKER_SERVER; gb usage --pool nope) >/dev/null 2>"$T/nope2.log"; then fail "local usage of no pool succeeded"; fi
check "grep -q 'no pool named nope' $T/nope2.log" "and locally"

# ---- 3. retention -----------------------------------------------------------
daemon_stop
sed 's/^daemon:$/daemon:\n  heartbeats_retention: 2s/' "$CONF" >"$T/conf.yaml"
grep -q 'heartbeats_retention: 2s' "$T/conf.yaml" || fail "could not write the retention config"
CONF=$T/conf.yaml
daemon_start
sleep 2
beat "$busy" 0.5
curl -sf -H "$auth" "$GPUBROKER_SERVER/metrics" >"$T/metrics2.txt" || fail "metrics"
check "grep -q '^gpubroker_retention_deleted_total{table=\"heartbeats\"} 4\$' $T/metrics2.txt" \
	"the 4 samples older than 2 s were deleted at the next heartbeat"
gb usage --pool us-a -o json >"$T/ua2.json" || fail "usage after retention"
check "within \"\$(jq .gpu_util $T/ua2.json)\" 0.5 0.000001" "only the newest sample (0.5) is left"
sed 's/^daemon:$/daemon:\n  heartbeats_retention: soon/' "$GB_SRC/examples/cloudsim-broker.yaml" >"$T/bad.yaml"
if (unset GPUBROKER_SERVER; "$GB" -c "$T/bad.yaml" usage) >/dev/null 2>"$T/badconf.log"; then
	fail "a bad retention was accepted"
fi
check "grep -q 'bad.yaml:[0-9]*:[0-9]*: error: daemon.heartbeats_retention: expected a duration' $T/badconf.log" \
	"a bad heartbeats_retention names its place and key"
echo "ok: usage"
