#!/bin/sh
# prometheus_dashboard.sh -- the shipped Grafana dashboard against a real
# Prometheus (Debian's, installed by `make deps`), as an operator runs it
# (issue 40):
#   - Prometheus (temporary TSDB, 127.0.0.1, a generated config) scrapes
#     the daemon on cloudsim every second with the admin token (a central
#     Prometheus reads every team: other tokens see their own team only);
#   - the pools change: three applied (aws, gcp Spot, azure for team
#     product), one scaled up and down (--wait), the azure one destroyed,
#     half the GCE Spot pool reclaimed through cloudsim's control API with
#     a 4 s shutdown (first seen STOPPING);
#   - every query of packaging/grafana-dashboard.json is evaluated through
#     /api/v1/query_range over the scenario (Grafana's variables
#     substituted: $__rate_interval as Grafana computes it for a 1 s
#     scrape, $job, $instance = all): none may fail or come back empty;
#     and some values must be what the scenario did (the reclaim counted,
#     team product at $0/h after its pool went, azure instances 0);
#   - `promtool check metrics` on a scrape reports nothing;
#   - the daemon stopped, the "Daemon" stat shows 0 (down), not "No data".
# Exit 77 when prometheus or promtool is not installed (make deps).
. "$GB_SRC/tests/lib/integration.sh"
PY=/usr/bin/python3
[ -x $PY ] || { echo "SKIP: /usr/bin/python3 is missing"; exit 77; }
PROM=$(command -v prometheus || true)
PROMTOOL=$(command -v promtool || true)
if [ -z "$PROM" ] || [ -z "$PROMTOOL" ]; then
	echo "SKIP: prometheus/promtool is not installed (make deps installs Debian's prometheus)"
	exit 77
fi
T0=$(date +%s)

export GPUBROKER_RECONCILE_PERIOD=1s
sim_start
sim_post /_sim/scenario '{"lifecycle": {"gcp": {"stopping_ms": 4000}}}'
daemon_start
export GPUBROKER_TOKEN=demo-admin-token

# Prometheus on a free loopback port, scraping the daemon every second
PPORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '%s' demo-admin-token >"$T/scrape.token"
cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpubroker
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials_file: $T/scrape.token
    static_configs:
      - targets: ["${GPUBROKER_SERVER#http://}"]
EOF
"$PROMTOOL" check config "$T/prometheus.yml" >"$T/promtool-config.log" 2>&1 ||
	fail "promtool check config: $(cat "$T/promtool-config.log")"
"$PROM" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$T/prometheus.log" 2>&1 &
PROM_PID=$!
BG_PIDS="$BG_PIDS $PROM_PID"
PURL="http://127.0.0.1:$PPORT"
wait_until 20 "curl -sf $PURL/-/ready" || fail "Prometheus did not get ready on $PURL"
q() { # PROMQL -> the first sample's value of an instant query, or nothing
	curl -sf --data-urlencode "query=$1" "$PURL/api/v1/query" | jq -r '.data.result[0].value[1] // empty'
}
scraped() { [ "$(q 'up{job="gpubroker"}')" = 1 ]; }
check "wait_until 15 scraped" "Prometheus scrapes the daemon (up{job=\"gpubroker\"} 1)"
START=$(date +%s)

# the scenario
write_spec "$T/pa.yaml" pa aws A10G 1
write_spec "$T/pg.yaml" pg gcp L4 2 spot
write_spec "$T/pz.yaml" pz azure T4 1
sed -i 's/team: research/team: product/' "$T/pz.yaml"
for p in pa pg pz; do
	gb apply -f "$T/$p.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/apply-$p.log" ||
		fail "apply $p: $(cat "$T/apply-$p.log")"
done
gb scale pa 3 --wait --timeout 60s >/dev/null 2>"$T/scale.log" || fail "scale pa 3: $(cat "$T/scale.log")"
gb scale pa 1 --wait --timeout 60s >/dev/null 2>"$T/scale.log" || fail "scale pa 1: $(cat "$T/scale.log")"
gb destroy pz --auto-approve >/dev/null 2>"$T/destroy.log" || fail "destroy pz: $(cat "$T/destroy.log")"
curl -sf -X POST -H 'Content-Type: application/json' \
	-d '{"cloud": "gcp", "pool": "pg", "fraction": 0.5}' "$CONTROL/_sim/reclaim" >"$T/reclaim.json" ||
	fail "POST /_sim/reclaim failed"
VM=$(jq -r '.reclaimed[0]' "$T/reclaim.json")
preempted() { gb events --pool pg -o json | jq -e --arg id "$VM" '[.[] | select(.kind == "preempted" and .instance == $id)] | length == 1' >/dev/null; }
full() { [ "$(gb status pg -o json | jq '[.instances[] | select(.state == "running")] | length')" = 2 ]; }
check "wait_until 20 preempted && wait_until 30 full" "the reclaimed GCE VM $VM is recorded preempted and replaced"
# the scrapes after the last change: the team's $0/h and the reclaim
product_zero() { [ "$(q 'gpubroker_cost_per_hour_usd{team="product"}')" = 0 ]; }
one_reclaim() { [ "$(q gpubroker_preemptions_total)" = 1 ]; }
check "wait_until 10 product_zero" "Prometheus has team product at \$0/h after its pool was destroyed"
check "wait_until 10 one_reclaim" "Prometheus has gpubroker_preemptions_total 1"
sleep 2 # two more scrapes: every rate window ends on data
END=$(date +%s)

# every query of the dashboard, over the scenario
cat >"$T/dash.py" <<'EOF'
import json, math, sys, urllib.parse, urllib.request
purl, start, end, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
d = json.load(open("packaging/grafana-dashboard.json"))
scrape, step = 1, 1
# Grafana: $__interval is the step; $__rate_interval = max($__interval +
# scrape interval, 4 x scrape interval)
subst = {"$__rate_interval": "%ds" % max(step + scrape, 4 * scrape),
         "$__interval": "%ds" % step, "$__range": "%ds" % (end - start),
         "$job": "gpubroker", "$instance": ".*"}
def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))
bad, results, n = [], {}, 0
for p in panels(d["panels"]):
    for t in p.get("targets") or []:
        e = t["expr"]
        for k in sorted(subst, key=len, reverse=True):
            e = e.replace(k, subst[k])
        if "$" in e:
            bad.append("panel %r: a variable left in %s" % (p["title"], e))
            continue
        n += 1
        qs = urllib.parse.urlencode({"query": e, "start": start, "end": end, "step": step})
        try:
            with urllib.request.urlopen("%s/api/v1/query_range?%s" % (purl, qs), timeout=20) as r:
                j = json.load(r)
        except urllib.error.HTTPError as x:
            j = json.load(x)
        if j.get("status") != "success":
            bad.append("panel %r: %s -> %s: %s" % (p["title"], e, j.get("errorType"), j.get("error")))
            continue
        res = j["data"]["result"]
        if not res:
            bad.append("panel %r: %s -> no data" % (p["title"], e))
            continue
        # the last value of each series, by its labels
        results["%s | %s" % (p["title"], t.get("legendFormat", ""))] = {
            json.dumps(s["metric"], sort_keys=True): s["values"][-1][1] for s in res}
        if not any(v[1] not in ("NaN", "+Inf", "-Inf") for s in res for v in s["values"]):
            bad.append("panel %r: %s -> only NaN (nothing counted)" % (p["title"], e))
json.dump(results, open(out, "w"), indent=1, sort_keys=True)
for b in bad:
    print(b)
print("%d queries evaluated over %d s" % (n, end - start))
sys.exit(1 if bad or n < 20 else 0)
EOF
(cd "$GB_SRC" && $PY "$T/dash.py" "$PURL" "$START" "$END" "$T/results.json") >"$T/dash.out" 2>&1 && drc=0 || drc=$?
cat "$T/dash.out"
check "[ $drc = 0 ]" "every query of the dashboard returns data through /api/v1/query_range, none errs"
max_of() { # PANEL-KEY: the largest last value of that panel's series
	jq -r --arg k "$1" '.[$k] | [.[] | tonumber] | max' "$T/results.json"
}
check "[ \"\$(jq -r '.[\"Instances by state and cloud | {{cloud}} {{state}}\"] | to_entries[] | select(.key | test(\"azure\")) | .value' $T/results.json | sort -u)\" = 0 ]" \
	"the dashboard shows 0 azure instances after pz was destroyed (not a vanished series)"
check "[ \"\$(jq -r '.[\"Spend rate by team | {{team}}\"][\"{\\\"team\\\": \\\"product\\\"}\"]' $T/results.json)\" = 0 ]" \
	"and team product at \$0/h"
check "jq -e '[.[\"Failovers and preemptions | preemptions\"]] | length == 1' $T/results.json >/dev/null && [ \"\$(curl -sf --data-urlencode 'query=max_over_time(gpubroker_preemptions_total[5m])' $PURL/api/v1/query | jq -r '.data.result[0].value[1]')\" = 1 ]" \
	"the preemption panel has the reclaim"

# promtool on a scrape, as Prometheus took it
curl -sf -H "Authorization: Bearer demo-admin-token" "$GPUBROKER_SERVER/metrics" >"$T/scrape.txt" || fail "GET /metrics"
"$PROMTOOL" check metrics <"$T/scrape.txt" >"$T/promtool.out" 2>&1 && prc=0 || prc=$?
check "[ $prc = 0 ] && [ ! -s $T/promtool.out ]" "promtool check metrics finds nothing ($(head -n 5 "$T/promtool.out" | tr '\n' ';'))"

# the daemon down: the "Daemon" stat's query says 0
daemon_stop
DQ=$(jq -r '.panels[] | select(.title == "Daemon") | .targets[0].expr' "$GB_SRC/packaging/grafana-dashboard.json" |
	sed 's/\$job/gpubroker/; s/\$instance/.*/')
down() { [ "$(q "$DQ")" = 0 ]; }
check "wait_until 10 down" "with the daemon stopped, the Daemon stat ($DQ) is 0 -- down, not No data"
kill -TERM "$PROM_PID" 2>/dev/null || true
wait "$PROM_PID" 2>/dev/null || true
echo "took $(( $(date +%s) - T0 )) s"
echo PASS
