#!/bin/sh
# metrics_format.sh -- what /metrics tells an operator is true (issue 40,
# issue 31 point 10), without Prometheus (prometheus_dashboard.sh runs the
# real one and promtool where they are installed):
#   1. the text format: every sample after its family's # HELP and # TYPE,
#      each family in one contiguous group (gpubroker_driver_retries_total
#      was printed inside gpubroker_driver_calls_total's), base units
#      (GPU-seconds, not GPU-hours);
#   2. series a dashboard plots are there at 0: $/h of every configured
#      team, instances of each live state on each cloud -- from a fresh
#      daemon on, and after a team's last pool is destroyed;
#   3. a long poll (GET /v1/events?wait=2) is not an API request latency
#      of 2 s: it is in gpubroker_api_long_poll_duration_seconds;
#   4. a GCE Spot reclaim first seen while the VM is STOPPING is counted
#      and recorded once: one `preempted` event, gpubroker_preemptions_total
#      1, also after it was replaced and its VM is gone;
#   5. no series per pool (issue 36), gzip when asked for.
. "$GB_SRC/tests/lib/integration.sh"
PY=/usr/bin/python3
[ -x $PY ] || { echo "SKIP: /usr/bin/python3 is missing"; exit 77; }

sim_start
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
scrape() { # FILE
	curl -sf -H "Authorization: Bearer $GPUBROKER_TOKEN" "$GPUBROKER_SERVER/metrics" >"$1" ||
		fail "GET /metrics failed"
}
sample() { # FILE 'NAME{LABELS}' -> the value, or nothing
	awk -v k="$2" '$1 == k { print $2 }' "$1"
}

# 1. the text format (https://prometheus.io/docs/instrumenting/exposition_formats/)
cat >"$T/fmt.py" <<'EOF'
import re, sys
bad = []
text = open(sys.argv[1]).read()
help_, type_, done, cur = {}, {}, set(), None
suffixes = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count")}
def family(name):
    for f, t in type_.items():
        if name == f or any(name == f + s for s in suffixes.get(t, ())):
            return f
    return None
for no, line in enumerate(text.splitlines(), 1):
    m = re.match(r"# (HELP|TYPE) (\S+) ?(.*)", line)
    if m:
        kind, name, rest = m.groups()
        if name in done:
            bad.append("line %d: %s %s again after its group ended" % (no, kind, name))
        if cur and cur != name:
            done.add(cur)
        cur = name
        (help_ if kind == "HELP" else type_)[name] = rest
        continue
    if not line or line.startswith("#"):
        continue
    name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
    f = family(name)
    if f is None:
        bad.append("line %d: %s has no # TYPE" % (no, name))
    elif f != cur:
        bad.append("line %d: %s inside the group of %s" % (no, name, cur))
    if f and f not in help_:
        bad.append("line %d: %s has no # HELP" % (no, f))
    if re.search(r"_hours?\b", name):
        bad.append("line %d: %s is not in base units (seconds)" % (no, name))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
scrape "$T/m0.txt"
check "$PY $T/fmt.py $T/m0.txt >$T/fmt.out" "the text format holds: every family after its HELP and TYPE, in one group, in base units ($(head -n 3 "$T/fmt.out" | tr '\n' ';'))"
check "grep -q '^# TYPE gpubroker_driver_retries_total counter' $T/m0.txt && grep -q '^gpubroker_driver_retries_total{driver=\"gcp\"} 0' $T/m0.txt" \
	"gpubroker_driver_retries_total has its TYPE and a sample per driver"
check "grep -q '^# TYPE gpubroker_usage_gpu_seconds gauge' $T/m0.txt && ! grep -q 'gpubroker_usage_[a-z_]*hours' $T/m0.txt" \
	"usage in GPU-seconds (gpubroker_usage_gpu_seconds, no _hours)"
check "grep -q '^# HELP gpubroker_cost_per_hour_usd .*pending, running and terminating' $T/m0.txt" \
	"the HELP of gpubroker_cost_per_hour_usd says what it sums"

# 2. zeros on a fresh daemon
for team in research product; do
	check "[ \"\$(sample $T/m0.txt 'gpubroker_cost_per_hour_usd{team=\"$team\"}')\" = 0.0000 ]" \
		"a fresh daemon: \$0/h for configured team $team"
done
for cloud in aws azure gcp; do
	for st in pending running stopping preempted failed terminating; do
		v=$(sample "$T/m0.txt" "gpubroker_instances{state=\"$st\",cloud=\"$cloud\"}")
		[ "$v" = 0 ] || fail "a fresh daemon: gpubroker_instances{state=\"$st\",cloud=\"$cloud\"} is '$v', not 0"
	done
done
ok_zero="every live state on aws, azure and gcp at 0"
echo "ok: a fresh daemon: $ok_zero"

# 3. a long poll of 2 s is not a request of 2 s
scrape "$T/m1.txt"
lp0=$(sample "$T/m1.txt" gpubroker_api_long_poll_duration_seconds_count)
[ -n "$lp0" ] || fail "no gpubroker_api_long_poll_duration_seconds"
curl -sf -H "Authorization: Bearer $GPUBROKER_TOKEN" "$GPUBROKER_SERVER/v1/events?after=999999999&wait=2" >/dev/null ||
	fail "the long poll failed"
scrape "$T/m2.txt"
check "[ \"\$(sample $T/m2.txt gpubroker_api_long_poll_duration_seconds_count)\" = $((lp0 + 1)) ]" \
	"the 2 s long poll is counted in gpubroker_api_long_poll_duration_seconds"
check "[ \"\$(sample $T/m2.txt 'gpubroker_api_long_poll_duration_seconds_bucket{le=\"1\"}')\" = \"\$(sample $T/m1.txt 'gpubroker_api_long_poll_duration_seconds_bucket{le=\"1\"}')\" ]" \
	"in a bucket above 1 s"
check "[ \"\$(sample $T/m2.txt 'gpubroker_api_request_duration_seconds_bucket{le=\"1\"}')\" = \"\$(sample $T/m2.txt gpubroker_api_request_duration_seconds_count)\" ]" \
	"and not in the request latency histogram: every request there took under 1 s"

# 4. a GCE Spot VM reclaimed, first seen STOPPING (a 6 s shutdown)
sim_post /_sim/scenario '{"lifecycle": {"gcp": {"stopping_ms": 6000}}}'
write_spec "$T/spotg.yaml" spotg gcp L4 1 spot
gb apply -f "$T/spotg.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply.log" ||
	fail "apply spotg: $(cat "$T/apply.log")"
curl -sf -X POST -H 'Content-Type: application/json' \
	-d '{"cloud": "gcp", "pool": "spotg", "fraction": 1}' "$CONTROL/_sim/reclaim" >"$T/reclaim.json" ||
	fail "POST /_sim/reclaim failed"
VM=$(jq -r '.reclaimed[0]' "$T/reclaim.json")
[ -n "$VM" ] && [ "$VM" != null ] || fail "cloudsim reclaimed nothing: $(cat "$T/reclaim.json")"
preempted() { gb events --pool spotg -o json | jq --arg id "$VM" '[.[] | select(.kind == "preempted" and .instance == $id)] | length'; }
check "wait_until 20 '[ \"\$(preempted)\" -ge 1 ]'" "the reclaimed VM $VM is recorded preempted"
gb events --pool spotg -o json >"$T/ev.json"
check "jq -e --arg id '$VM' '[.[] | select(.instance == \$id and .kind == \"preempted\")][0].message | test(\"reclaimed by gcp\")' $T/ev.json >/dev/null" \
	"the event says it was reclaimed by gcp"
# it was STOPPING when seen: cloudsim keeps it so for 6 s
check "curl -sf '$CONTROL/_sim/instances' | jq -e --arg id '$VM' '[.instances[] | select(.id == \$id or .name == \$id or .resource_id == \$id)][0].provider_state == \"STOPPING\"' >/dev/null" \
	"(while cloudsim still shows it stopping)"
full() { [ "$(gb status spotg -o json | jq '[.instances[] | select(.state == "running")] | length')" = 1 ]; }
gone() { gb events --pool spotg -o json | jq -e --arg id "$VM" '[.[] | select(.kind == "terminated" and .instance == $id)] | length == 1' >/dev/null; }
check "wait_until 30 full && wait_until 30 gone" "replaced, and the reclaimed VM confirmed terminated"
check "[ \"\$(preempted)\" = 1 ]" "one preempted event for it, not more"
scrape "$T/m3.txt"
check "[ \"\$(sample $T/m3.txt gpubroker_preemptions_total)\" = 1 ]" "gpubroker_preemptions_total is 1"

# 5. bounded (issue 36): with a pool and its usage, no series names a
# pool (per pool: gpubroker usage / status and the API), the pool count
# by team is there; gzip when the scraper asks for it, plain otherwise
# (the store's part is compared with the store every 250 ms: poll)
team_pool() { scrape "$T/m5.txt"; [ "$(sample "$T/m5.txt" 'gpubroker_team_pools{team="research",state="active"}')" = 1 ]; }
check "wait_until 5 team_pool" "gpubroker_team_pools counts research's active pool"
check "! grep -q 'pool=\"' $T/m5.txt" "no series per pool in /metrics"
curl -sf -H "Authorization: Bearer $GPUBROKER_TOKEN" -H 'Accept-Encoding: deflate, gzip' \
	-D "$T/gz.h" -o "$T/m.gz" "$GPUBROKER_SERVER/metrics" || fail "GET /metrics (gzip) failed"
check "grep -qi '^content-encoding: gzip' $T/gz.h && gunzip -c $T/m.gz | grep -q '^gpubroker_up 1' && [ \$(wc -c <$T/m.gz) -lt \$(gunzip -c $T/m.gz | wc -c) ]" \
	"gzip when the scraper sends Accept-Encoding: gzip (smaller, and the same text inside)"
curl -sf -H "Authorization: Bearer $GPUBROKER_TOKEN" -H 'Accept-Encoding: gzip;q=0' \
	-D "$T/plain.h" -o "$T/m.plain" "$GPUBROKER_SERVER/metrics" || fail "GET /metrics failed"
check "! grep -qi '^content-encoding' $T/plain.h && grep -q '^gpubroker_up 1' $T/m.plain" \
	"plain text when gzip is refused (q=0)"

# 2 again: the team's last pool destroyed, its spend goes to 0
gb destroy spotg --auto-approve >/dev/null 2>"$T/destroy.log" || fail "destroy: $(cat "$T/destroy.log")"
# (the store's part of /metrics is compared with the store every 250 ms)
zero_now() { scrape "$T/m4.txt"; [ "$(sample "$T/m4.txt" 'gpubroker_cost_per_hour_usd{team="research"}')" = 0.0000 ]; }
check "wait_until 5 zero_now" \
	"after its last pool is destroyed, team research costs \$0/h (not its last value)"
check "[ \"\$(sample $T/m4.txt 'gpubroker_instances{state=\"running\",cloud=\"gcp\"}')\" = 0 ]" \
	"and no instance runs on gcp: 0"
daemon_stop
echo PASS
