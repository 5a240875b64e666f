#!/bin/sh
# daemon_pools_cache.sh -- GET /v1/pools is served from a snapshot
# (core/daemon/api_pools.c), and a change still shows in the very next read:
# after an engine event (an instance comes up, a scale), after API writes
# that raise no engine event (a destroy request, a heartbeat), and within
# a second for what only time changes (age_s) or another process writes
# to the same state file.  Paging (limit, after, next_after) and the team
# filter read the snapshot the way they read the store.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_RECONCILE_PERIOD=1s
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
H="Authorization: Bearer $GPUBROKER_TOKEN"

pools() {
	curl -sf -H "$H" "$GPUBROKER_SERVER/v1/pools$1"
}
field() { # field POOL JQ-EXPR: from the list endpoint
	pools "?limit=1000" | jq -r --arg p "$1" ".pools[] | select(.name == \$p) | $2"
}

for p in pc-a pc-b pc-c; do
	if [ $p = pc-c ]; then
		write_spec "$T/$p.yaml" "$p" aws A10G 1 on-demand "lifecycle: {ttl: 2h}"
	else
		write_spec "$T/$p.yaml" "$p" aws A10G 1 on-demand
	fi
	gb apply -f "$T/$p.yaml" --auto-approve >/dev/null 2>>"$T/apply.log" || fail "apply $p"
done
# an instance coming up is an engine event: the list follows it
wait_until 30 "[ \"\$(field pc-a .running)\" = 1 ] && [ \"\$(field pc-b .running)\" = 1 ] && [ \"\$(field pc-c .running)\" = 1 ]" ||
	fail "the list never showed the instances running"
echo "ok: instances coming up show in the list"

# a list entry is the pool's own GET without its instances: same keys,
# same values (but the live team_budget, which the GET adds and the cached
# list leaves out), the per-request age_s and ttl_left_s included (the GET
# renders them itself; the two reads may straddle a second)
same_as_get() { # POOL
	_l=$(field "$1" '.')
	_g=$(curl -sf -H "$H" "$GPUBROKER_SERVER/v1/pools/$1" | jq -c 'del(.instances, .team_budget)')
	[ "$(echo "$_l" | jq -c 'del(.age_s, .ttl_left_s) | to_entries | sort_by(.key)')" = \
		"$(echo "$_g" | jq -c 'del(.age_s, .ttl_left_s) | to_entries | sort_by(.key)')" ] &&
	[ "$(echo "$_l" | jq -c 'keys')" = "$(echo "$_g" | jq -c 'keys')" ] &&
	jq -n --argjson l "$_l" --argjson g "$_g" -e \
		'($l.age_s - $g.age_s | fabs) <= 1 and
		 (if $g.ttl_left_s == null then $l.ttl_left_s == null
		  else ($l.ttl_left_s - $g.ttl_left_s | fabs) <= 1 end)' >/dev/null
}
check "same_as_get pc-a" "a list entry (no TTL) is the pool's GET without its instances"
check "same_as_get pc-c" "a list entry with a TTL is the pool's GET without its instances"
check "[ \"\$(field pc-c '.ttl_left_s + .age_s')\" = 7200 ]" "ttl_left_s + age_s is the 2h TTL"

# paging and filters
check "[ \"\$(pools '?limit=2' | jq -c '[.pools[].name], .next_after')\" = '[\"pc-a\",\"pc-b\"]
\"pc-b\"' ]" "limit=2 gives the first two and next_after"
check "[ \"\$(pools '?limit=2&after=pc-b' | jq -c '[.pools[].name], .next_after')\" = '[\"pc-c\"]
null' ]" "after=pc-b gives the rest and no next_after"
check "[ \"\$(pools '?team=product' | jq -c .pools)\" = '[]' ]" "the team filter applies"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H \"\$H\" \"\$GPUBROKER_SERVER/v1/pools?limit=0\")\" = 400 ]" "limit=0 is refused"
check "[ \"\$(pools '' | jq '.pools[0] | has(\"instances\")')\" = false ]" "list entries are summaries (no instances)"
# an operator of another team sees none of them
check "[ \"\$(curl -sf -H 'Authorization: Bearer demo-other-team-token' \"\$GPUBROKER_SERVER/v1/pools\" | jq '.pools | length')\" = 0 ]" \
	"another team's operator sees none of these pools"

# a scale (an engine event) shows in the next read, no waiting
pools '' >/dev/null
curl -sf -X POST -H "$H" -H 'Content-Type: application/json' -d '{"count": 2}' \
	"$GPUBROKER_SERVER/v1/pools/pc-b/scale" >/dev/null || fail "scale refused"
check "[ \"\$(field pc-b .desired)\" = 2 ]" "a scale shows in the next read"

# a heartbeat raises no engine event; it still shows at once
id=$(curl -sf -H "$H" "$GPUBROKER_SERVER/v1/pools/pc-c" | jq -r '.instances[0].id')
before=$(field pc-c '.last_heartbeat_at // "never"')
curl -sf -X POST -H "$H" -H 'Content-Type: application/json' -d '{"gpu_util": 0.5}' \
	"$GPUBROKER_SERVER/v1/instances/$id/heartbeat" >/dev/null || fail "heartbeat refused"
check "[ \"\$(field pc-c '.last_heartbeat_at // \"never\"')\" != \"$before\" ] && [ \"\$(field pc-c '.last_heartbeat_at // \"never\"')\" != never ]" \
	"a heartbeat shows in the next read (was: $before)"

# a destroy request marks the pool destroying before any engine event
pools '' >/dev/null
curl -sf -X DELETE -H "$H" "$GPUBROKER_SERVER/v1/pools/pc-a" >/dev/null || fail "destroy refused"
st=$(field pc-a .state)
check "[ \"$st\" = destroying ] || [ -z \"$st\" ]" "a destroy request shows in the next read (state $st)"

# what only time changes moves on with no rebuild: the daemon rebuilds
# the list and the store's part of /metrics only after the store changed
builds() { # ENDPOINT
	curl -sf -H "$H" "$GPUBROKER_SERVER/metrics" |
		awk -v e="$1" '$1 == "gpubroker_api_snapshot_builds_total{endpoint=\"" e "\"}" { print $2 }'
}
wait_until 20 "[ \"\$(field pc-a .state)\" != destroying ]" || fail "pc-a was never destroyed"
sleep 1
a1=$(field pc-b .age_s) t1=$(field pc-c .ttl_left_s)
b1=$(builds pools) m1=$(builds metrics)
for _i in $(seq 1 20); do
	field pc-b .age_s >/dev/null
	curl -sf -H "$H" "$GPUBROKER_SERVER/metrics" >/dev/null
	sleep 0.1
done
a2=$(field pc-b .age_s) t2=$(field pc-c .ttl_left_s)
b2=$(builds pools) m2=$(builds metrics)
check "[ \"$a2\" -ge $((a1 + 1)) ] && [ \"$t2\" -le $((t1 - 1)) ]" "age_s advances ($a1 -> $a2) and ttl_left_s counts down ($t1 -> $t2)"
check "[ -n \"$b1\" ] && [ \"$b1\" = \"$b2\" ] && [ -n \"$m1\" ] && [ \"$m1\" = \"$m2\" ]" \
	"nothing changed: 40 reads over 2 s, no rebuild (list $b1 -> $b2, /metrics $m1 -> $m2)"

# another process writing the same state (the CLI in local mode) shows
# within the snapshot's age limit
(unset GPUBROKER_SERVER; gb scale pc-b 1 >/dev/null 2>"$T/local-scale.log") ||
	fail "local scale failed: $(cat "$T/local-scale.log")"
wait_until 3 "[ \"\$(field pc-b .desired)\" = 1 ]" || fail "a change by another process did not show within 3 s"
check "[ \"\$(builds pools)\" -gt \"$b2\" ]" "that change rebuilt the list"
echo "ok: a change written by another process shows within a second or two"
