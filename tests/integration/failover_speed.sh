#!/bin/sh
# failover_speed.sh -- issue 31, point 9:
#   1. a walk over refused GCE zones does not spend seconds per zone on
#      operation polling: a fresh operation is looked at after 100 ms,
#      then 2x as long (up to poll_interval_ms, 2 s);
#   2. when every candidate is cooling down, `plan` (locally and through
#      the daemon) says when the pool is tried again: the time the first
#      cooldown ends, and how long from now.
. "$GB_SRC/tests/lib/integration.sh"

sim_start

# 1. every L4 zone of us-central1 refuses
sim_post /_sim/scenario '{"capacity": [{"cloud": "gcp", "count": 0}]}'
PLACE='{clouds: [gcp], regions: [us-central1], colocate: none}' write_spec "$T/g.yaml" fs-gcp gcp L4 1
zones=$(gb plan -f "$T/g.yaml" -o json 2>/dev/null | jq '.[0].candidate_count')
[ "${zones:-0}" -ge 2 ] || fail "expected several L4 candidates in us-central1, found ${zones:-none}"
t0=$(date +%s%N)
gb apply -f "$T/g.yaml" --auto-approve >/dev/null 2>"$T/g.err" && fail "fs-gcp was placed: $(cat "$T/g.err")"
ms=$((($(date +%s%N) - t0) / 1000000))
check "grep -q 'ZONE_RESOURCE_POOL_EXHAUSTED' $T/g.err" "the $zones zones refused (ZONE_RESOURCE_POOL_EXHAUSTED)"
check "[ $ms -lt $((zones * 1000 + 1000)) ]" \
	"the walk over $zones refused zones took $ms ms, under 1 s a zone (2 s of polling each before)"

# 2. the walk left every candidate cooling down (3m)
rc=0
gb plan -f "$T/g.yaml" >/dev/null 2>"$T/p.err" || rc=$?
RE="no candidate: $zones offers refused by capacity cooldown \\(ZONE_RESOURCE_POOL_EXHAUSTED\\); next attempt 20[0-9-]*T[0-9:]*Z? \\(in [23]m([0-9]+s)?\\), when the first cooldown ends"
check "[ \$rc = 1 ] && grep -Eq '$RE' $T/p.err" \
	"plan says when the first cooldown ends, and how long from now (exit $rc): $(cat "$T/p.err")"
gb plan -f "$T/g.yaml" -o json 2>/dev/null | jq -r '.[0].no_candidate' >"$T/p.json.txt"
check "grep -Eq '$RE' $T/p.json.txt" "its JSON's no_candidate too"
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
rc=0
gb plan -f "$T/g.yaml" >/dev/null 2>"$T/d.err" || rc=$?
check "[ \$rc = 1 ] && grep -Eq '$RE' $T/d.err" "and so does the daemon's plan (exit $rc): $(cat "$T/d.err")"
# a spec no offer can match at all is not said to wait
PLACE='{clouds: [gcp], regions: [us-central1], colocate: none}' write_spec "$T/x.yaml" fs-none gcp L4 1 on-demand "limits: {max_price_per_hour: 0.01}"
rc=0
gb plan -f "$T/x.yaml" >/dev/null 2>"$T/x.err" || rc=$?
check "[ \$rc = 1 ] && ! grep -q 'next attempt' $T/x.err" "a pool no offer can match is not said to wait (exit $rc)"
