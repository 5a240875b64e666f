#!/bin/sh
# autoscale.sh -- elastic pools (issue 21) against cloudsim and the
# daemon: synthetic heartbeats ramp an autoscaled pool up within up_after
# plus a pass or two, a target-level load holds it, a low load brings it
# down after down_after (least used first); a demand signal raises the
# pool and lapses; a quota refuses a scale-up with an event; the pool's
# GET shows the autoscale state.  Durations are seconds in the spec.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_RECONCILE_PERIOD=1s
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
H="Authorization: Bearer $GPUBROKER_TOKEN"

api() { # METHOD PATH [BODY]
	if [ $# -ge 3 ]; then
		curl -sf -X "$1" -H "$H" -H 'Content-Type: application/json' -d "$3" "$GPUBROKER_SERVER$2"
	else
		curl -sf -X "$1" -H "$H" "$GPUBROKER_SERVER$2"
	fi
}
desired() { api GET "/v1/pools/$1" | jq -r .desired; }
running() { api GET "/v1/pools/$1" | jq '[.instances[] | select(.state == "running")] | length'; }
events() { api GET "/v1/events?pool=$1&limit=200" | jq -r '.events[] | "\(.kind) \(.message)"'; }

# size_reaches SECONDS TEST: waits until as-a's desired count passes
# `[ N TEST ]` (e.g. "-ge 2"); prints the seconds it took
size_reaches() {
	_t0=$(date +%s)
	wait_until "$1" "[ \"\$(desired as-a)\" $2 ]" || return 1
	echo $(($(date +%s) - _t0))
}

write_spec "$T/as.yaml" as-a aws A10G 1 on-demand "purpose: inference" \
	"min: 1" "max: 4" \
	"autoscale: {gpu_util_target: 0.5, up_after: 2s, down_after: 4s, max_step: 2}"
gb apply -f "$T/as.yaml" --auto-approve >/dev/null 2>"$T/apply.log" || { cat "$T/apply.log"; fail "apply as-a"; }
wait_until 30 "[ \"\$(running as-a)\" = 1 ]" || fail "as-a never ran its instance"

# every running instance of as-a reports the utilisation in $T/util
# (or in $T/util.NAME for instance NAME), twice a second, while $T/util
# exists
echo 0.95 >"$T/util"
(
	while [ -f "$T/util" ]; do
		api GET /v1/pools/as-a | jq -r '.instances[] | select(.state == "running") | "\(.id) \(.name)"' |
		while read -r id name; do
			u=$(cat "$T/util.$name" 2>/dev/null || cat "$T/util" 2>/dev/null)
			api POST "/v1/instances/$id/heartbeat" "{\"gpu_util\": $u}" >/dev/null 2>&1
		done
		sleep 0.5
	done
) &
HB_PID=$!
BG_PIDS="$BG_PIDS $HB_PID"

# --- ramp up: 0.95 > 0.5 for 2s on 1 instance -> 2; then 2 -> 4 (max)
took=$(size_reaches 15 "-ge 2") || fail "as-a never scaled up (events: $(events as-a))"
check "[ $took -le 6 ]" "the first scale-up came within up_after (2s) plus a few passes (${took}s)"
check "events as-a | grep -q 'autoscale mean gpu_util 0.95 > 0.50 for 2s: 1 -> 2'" \
	"the scale-up is an event with its reason"
wait_until 20 "[ \"\$(desired as-a)\" = 4 ]" || fail "as-a never reached its max 4 ($(events as-a))"
check "events as-a | grep -q 'autoscale mean gpu_util 0.95 > 0.50 for 2s: 2 -> 4'" \
	"the second step adds max_step (2) at once"
wait_until 30 "[ \"\$(running as-a)\" = 4 ]" || fail "as-a never ran 4 instances"
check "api GET /v1/pools/as-a | jq -e '.autoscale.target == 0.5 and .autoscale.reporting >= 1 and (.autoscale.mean | type) == \"number\"' >/dev/null" \
	"the pool's GET shows the autoscale state (target, mean, reporting)"
check "gb status as-a -o json | jq -e '.autoscale.next' >/dev/null" \
	"status -o json shows the next possible action"
check "gb status as-a | grep -q '^as-a: autoscale: target 0.50, mean 0.95 ([0-9]* reporting), floor 1, min 1, max 4; next: .*; now: .*; last change: '" \
	"status (table) shows the autoscale state with min and max"
check "gb status as-a | grep -q 'last change: mean gpu_util 0.95 > 0.50 for 2s: 2 -> 4 at 20[0-9-]*T'" \
	"status says the last change with its time, not \"last: steady\" (issue 42): $(gb status as-a | grep autoscale:)"
check "gb status as-a | grep -q '; next: none; '" "at max under load nothing says \"next: up at ...\""
check "curl -sf -H \"\$H\" $GPUBROKER_SERVER/metrics | grep -q '^gpubroker_autoscale_decisions_total{action=\"up\",purpose=\"inference\"} 2\$'" \
	"/metrics counts the two scale-ups"

# --- hold: at the target the pool keeps its size (inside the band)
echo 0.5 >"$T/util"
sleep 6
check "[ \"\$(desired as-a)\" = 4 ]" "a load at the target holds the pool at 4"

# --- down: 0.1 on 3, 0.0 on the oldest -> want ceil(0.3/0.5) = 1:
# 4 -> 2 -> 1 after 4s each; the least used goes first, then the newest
echo 0.0 >"$T/util.as-a-0"
echo 0.1 >"$T/util"
took=$(size_reaches 20 "-le 2") || fail "as-a never scaled down ($(events as-a))"
check "[ $took -ge 4 ]" "no scale-down before down_after (4s): ${took}s"
check "events as-a | grep -q 'autoscale mean gpu_util 0.0[78] < 0.50 for 4s: 4 -> 2'" \
	"the scale-down is an event with its reason"
live() { api GET /v1/pools/as-a | jq -r '[.instances[] | select(.state == "running" or .state == "pending") | .name] | sort | join(",")'; }
wait_until 10 "[ \"\$(running as-a)\" = 2 ]" || fail "as-a never ran 2 instances"
check "[ \"\$(live)\" = as-a-1,as-a-2 ]" \
	"the idle oldest (as-a-0) and the newest (as-a-3) went first: left $(live)"
wait_until 20 "[ \"\$(desired as-a)\" = 1 ]" || fail "as-a never came down to min 1 ($(events as-a))"
wait_until 30 "[ \"\$(running as-a)\" = 1 ]" || fail "as-a never came down to 1 running instance"

# --- demand: raises at once, lapses after its time
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer demo-viewer-token' -H 'Content-Type: application/json' -d '{\"desired\": 3}' $GPUBROKER_SERVER/v1/pools/as-a/demand)\" = 403 ]" \
	"a viewer cannot send demand"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer demo-other-team-token' -H 'Content-Type: application/json' -d '{\"desired\": 3}' $GPUBROKER_SERVER/v1/pools/as-a/demand)\" = 404 ]" \
	"another team's operator does not see the pool"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -X POST -H \"\$H\" -H 'Content-Type: application/json' -d '{\"desired\": 3, \"for\": \"ten minutes\"}' $GPUBROKER_SERVER/v1/pools/as-a/demand)\" = 400 ]" \
	"a bad duration is refused"
r=$(curl -sf -X POST -H 'Authorization: Bearer demo-ci-token' -H 'Content-Type: application/json' -d '{"desired": 9, "for": "5s"}' "$GPUBROKER_SERVER/v1/pools/as-a/demand") ||
	fail "the team's operator could not send demand"
check "[ \"\$(echo '$r' | jq .effective)\" = 4 ]" "a demand over max is clamped to max (4)"
wait_until 5 "[ \"\$(desired as-a)\" = 4 ]" || fail "the demand did not raise the pool ($(events as-a))"
check "events as-a | grep -q 'autoscale demand signal 9 (for [0-9]*s more): 1 -> 4'" "the raise is an event naming the demand"
wait_until 15 "[ \"\$(desired as-a)\" = 1 ]" || fail "the demand never lapsed ($(events as-a))"
check "events as-a | grep -q 'autoscale demand signal ended (floor 4 -> 1): 4 -> 1'" "the lapse is an event"
rm -f "$T/util"
kill "$HB_PID" 2>/dev/null || true
wait "$HB_PID" 2>/dev/null || true

# --- quota: team product may have 64 GPUs; 20 x 4 is refused, with an event
cat >"$T/q.yaml" <<EOY
pool:
  name: as-q
  team: product
  purpose: inference
  min: 1
  max: 20
  gpu: {model: A10G, count: 4}
  capacity: [on-demand]
  placement: {clouds: [aws], colocate: none}
  ssh_keys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3RrZXl0ZXN0a2V5dGVzdGtleXRlc3RrZXk1 test"]
  autoscale: {gpu_util_target: 0.5}
EOY
gb apply -f "$T/q.yaml" --auto-approve >/dev/null 2>"$T/apply.log" || { cat "$T/apply.log"; fail "apply as-q"; }
api POST /v1/pools/as-q/demand '{"desired": 20, "for": "1m"}' >/dev/null || fail "demand to as-q refused"
wait_until 10 "events as-q | grep -q '^autoscale-refused demand signal 20 .*: 1 -> 20 refused: '" ||
	fail "the quota refusal is not an event ($(events as-q))"
echo "ok: a quota refusal of a scale-up is an event: $(events as-q | grep autoscale-refused | head -1)"
sleep 3
check "[ \"\$(events as-q | grep -c autoscale-refused)\" = 1 ]" "the refusal is reported once, not every pass"
check "[ \"\$(desired as-q)\" = 1 ]" "the refused pool keeps its size"
check "curl -sf -H \"\$H\" $GPUBROKER_SERVER/metrics | grep -q '^gpubroker_autoscale_decisions_total{action=\"refused\",purpose=\"inference\"} [1-9]'" \
	"/metrics counts the refusals"

# --- schedule: a window open now (this minute in Europe/Berlin, local
# times from glibc's date, the daemon reads the zone file itself) raises
# the floor to 2; it is released when the window ends at the minute's end
# (the window's start, DST and fixed offsets are checked by test_autoscale
# with a fake clock).  Without tzdata the window is in UTC.
zone=Europe/Berlin
[ -r /usr/share/zoneinfo/$zone ] || { echo "note: no tzdata, window in UTC"; zone=UTC; }
[ "$(date -u +%S | sed 's/^0//')" -lt 40 ] || sleep $((61 - $(date -u +%S | sed 's/^0//')))
from=$(TZ=$zone date +%H:%M)
to=$(TZ=$zone date -d "@$(( $(date +%s) + 60 ))" +%H:%M)
[ "$to" = 00:00 ] && to=24:00
write_spec "$T/s.yaml" as-s aws A10G 1 on-demand "purpose: inference" \
	"min: 1" "max: 3" \
	"autoscale: {gpu_util_target: 0.5, schedule: [{days: daily, from: \"$from\", to: \"$to\", tz: $zone, min: 2}]}"
gb apply -f "$T/s.yaml" --auto-approve >/dev/null 2>"$T/apply.log" || { cat "$T/apply.log"; fail "apply as-s"; }
wait_until 10 "[ \"\$(desired as-s)\" = 2 ]" || fail "the open window did not raise as-s to 2 ($(events as-s))"
check "events as-s | grep -q 'autoscale schedule window floor 2: 1 -> 2'" "the window's floor is an event"
wait_until 75 "[ \"\$(desired as-s)\" = 1 ]" || fail "the window's end did not release as-s ($(events as-s))"
check "[ \"\$(TZ=$zone date +%H:%M)\" = $to ] || [ $to = 24:00 ]" "the floor was released at the window's end ($to)"
check "events as-s | grep -q 'autoscale schedule window ended (floor 2 -> 1): 2 -> 1'" "the release is an event"
echo "PASS"
