#!/bin/sh
# json_output.sh -- the JSON the CLI prints is consistent (issue 19,
# point 6; the shapes are in docs/json.md):
#   1. every time in every command's -o json is RFC 3339 UTC with
#      milliseconds ("2026-11-27T08:05:10.123Z") or null: no epoch
#      numbers, no *_ms times, no other date forms -- locally and
#      through a daemon;
#   2. `status NAME -o json` is the element `status -o json` lists for
#      that pool: the same keys all the way down, the same values (but
#      for what time moves: age_s, ttl_left_s, instances' cost), in both
#      modes, and the same in local and daemon mode;
#   3. docs/json.md names every command of `gpubroker help`.
. "$GB_SRC/tests/lib/integration.sh"

# JSON FILE LABEL: fails on any time not in the one form
TIME_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z$'
times_ok() {
	jq -e . "$1" >/dev/null 2>&1 || fail "$2: not JSON: $(head -c 300 "$1")"
	jq -r --arg re "$TIME_RE" '
		paths(scalars) as $p | getpath($p) as $v |
		($p | map(tostring) | join(".")) as $path |
		($p | map(select(type == "string")) | last // "") as $k |
		if ($k | test("(_at|^time|^since)$")) then
			if $v == null or ($v | type == "string" and test($re)) then empty
			else "\($path) = \($v)" end
		elif ($k | test("_ms$")) and $k != "duration_ms" then
			"\($path) = \($v) (a time in milliseconds?)"
		elif ($v | type == "string" and test("^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ]|$)")) and ($v | test($re) | not) then
			"\($path) = \($v) (a date in another form)"
		elif ($v | type == "number" and . > 1000000000) then
			"\($path) = \($v) (an epoch time?)"
		else empty end' "$1" >"$1.bad"
	[ ! -s "$1.bad" ] || fail "$2: times not in RFC 3339 UTC with milliseconds: $(head -5 "$1.bad" | tr '\n' ';')"
	# and it had times to check (where the caller says so)
	if [ "${3:-}" ]; then
		n=$(jq --arg re "$TIME_RE" '[paths(type == "string" and test($re))] | length' "$1")
		[ "$n" -gt 0 ] || fail "$2: expected times in it, found none"
	fi
	echo "ok: $2: every time is RFC 3339 UTC with milliseconds${3:+ ($n)}"
}

# run LABEL ARGS...: gb ARGS into $T/LABEL.json, checked
run() {
	_l=$1
	shift
	gb "$@" >"$T/$_l.json" 2>"$T/$_l.err" || fail "$_l: gpubroker $* failed: $(cat "$T/$_l.err")"
}

# same_element WHERE POOL: status POOL is status's element for POOL
same_element() {
	run "$1-all" status -o json
	run "$1-one" status "$2" -o json
	jq --arg p "$2" '.[] | select(.name == $p)' "$T/$1-all.json" >"$T/$1-elem.json"
	[ -s "$T/$1-elem.json" ] || fail "$1: status lists no pool $2: $(cat "$T/$1-all.json")"
	keys() { jq -c '[paths | map(if type == "number" then 0 else . end)] | unique' "$1"; }
	check "[ \"\$(keys $T/$1-one.json)\" = \"\$(keys $T/$1-elem.json)\" ]" \
		"$1: status $2 -o json has exactly the keys of status -o json's element for $2"
	steady='del(.age_s, .ttl_left_s) | .instances |= map(del(.cost))'
	check "[ \"\$(jq -S -c '$steady' $T/$1-one.json)\" = \"\$(jq -S -c '$steady' $T/$1-elem.json)\" ]" \
		"$1: and the same values (but age and cost, which time moves)"
	check "jq -e '.instances | length == 2' $T/$1-elem.json >/dev/null" "$1: status lists the pool with its instances"
}

every_command() { # $1: where
	run "$1-status" status -o json
	times_ok "$T/$1-status.json" "$1: status" times
	run "$1-status1" status jo-a -o json
	times_ok "$T/$1-status1.json" "$1: status NAME" times
	run "$1-events" events -o json
	times_ok "$T/$1-events.json" "$1: events" times
	run "$1-cost" cost -o json
	times_ok "$T/$1-cost.json" "$1: cost"
	run "$1-cost7" cost --since 7d -o json
	times_ok "$T/$1-cost7.json" "$1: cost --since" times
	run "$1-offers" offers --gpu A10G -o json
	times_ok "$T/$1-offers.json" "$1: offers" times
	run "$1-nodes" nodes -o json
	times_ok "$T/$1-nodes.json" "$1: nodes"
	run "$1-plan" plan -f "$T/b.yaml" -o json
	times_ok "$T/$1-plan.json" "$1: plan"
	run "$1-scale" scale jo-b 2 --wait --timeout 60s -o json
	times_ok "$T/$1-scale.json" "$1: scale" times
	run "$1-gc" gc -o json
	times_ok "$T/$1-gc.json" "$1: gc"
	run "$1-apply" apply -f "$T/b.yaml" --auto-approve --wait --timeout 60s -o json
	times_ok "$T/$1-apply.json" "$1: apply" times
}

sim_start
write_spec "$T/a.yaml" jo-a aws A10G 2
write_spec "$T/b.yaml" jo-b aws A10G 1
run apply-a apply -f "$T/a.yaml" --auto-approve --wait --timeout 60s -o json
times_ok "$T/apply-a.json" "local: apply --wait" times
# an instance has launched_at; a pool created_at
check "jq -e '.[0].created_at != null and (.[0].instances[0].launched_at | test(\"$TIME_RE\"))' $T/apply-a.json >/dev/null" \
	"local: apply's pool has created_at and its instances launched_at"
run apply-b apply -f "$T/b.yaml" --auto-approve --wait --timeout 60s -o json
every_command local
run validate validate -f "$T/a.yaml" -o json
times_ok "$T/validate.json" "local: validate"
run drivers drivers -o json
times_ok "$T/drivers.json" "local: drivers"
run version version -o json
times_ok "$T/version.json" "local: version"
same_element local jo-a

daemon_start
export GPUBROKER_TOKEN=demo-admin-token
every_command daemon
run daemon-audit audit -o json
times_ok "$T/daemon-audit.json" "daemon: audit" times
same_element daemon jo-a
# the daemon's element is the local one (the same engine JSON)
check "[ \"\$(jq -c '[paths | map(if type == \"number\" then 0 else . end)] | unique' $T/daemon-elem.json)\" = \"\$(jq -c '[paths | map(if type == \"number\" then 0 else . end)] | unique' $T/local-elem.json)\" ]" \
	"status's element has the same keys through the daemon as locally"
# (the daemon's JSON log lines: daemon_config.sh)

# 3. the page that documents them
for c in $("$GB" help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p'); do
	grep -q "^## \`$c" "$GB_SRC/docs/json.md" || fail "docs/json.md has no section for $c"
done
grep -q 'docs/json.md' "$GB_SRC/README.md" || fail "README.md does not link docs/json.md"
echo "ok: docs/json.md has a section for every command, and README links it"
