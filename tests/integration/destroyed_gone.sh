#!/bin/sh
# destroyed_gone.sh -- destroyed pools go away, as kubectl's objects do
# (issue 31, point 7), locally and through the daemon: `status` no longer
# lists a destroyed pool and `status NAME` of one fails (exit 1), `status
# --all` (GET /v1/pools?all=1) keeps it as history; a second `destroy`
# finds no pool (exit 1; DELETE answers 404), with --ignore-not-found it
# exits 0; its events stay; the name can be applied again; help and
# README say so.
. "$GB_SRC/tests/lib/integration.sh"

sim_start

check "\"\$GB\" help destroy | grep -q \"'status --all' and\"" "help destroy says where a destroyed pool's history is"
check "\"\$GB\" help status | grep -q -- '--all'" "help status lists --all"
check "grep -q 'A destroyed pool is gone, as in .kubectl.' $GB_SRC/README.md" "and README says it"

gone() { # $1: where, $2: pool
	p=$2
	write_spec "$T/$p.yaml" "$p" aws A10G 1 on-demand "lifecycle: {ttl: 2h}"
	gb apply -f "$T/$p.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/a.err" ||
		fail "$1: apply $p: $(cat "$T/a.err")"
	gb destroy "$p" --auto-approve >"$T/d.out" 2>"$T/d.err" || fail "$1: destroy $p: $(cat "$T/d.err")"
	check "grep -q 'pool $p destroyed' $T/d.out" "$1: the first destroy says the pool is destroyed"

	check "! gb status -o json | jq -e --arg p $p 'any(.[]; .name == \$p)' >/dev/null" \
		"$1: status no longer lists it"
	rc=0
	gb status "$p" -o json >"$T/s.out" 2>"$T/s.err" || rc=$?
	check "[ \$rc = 1 ] && [ ! -s $T/s.out ] && grep -q \"no pool named $p (one was destroyed: .*status --all $p\" $T/s.err" \
		"$1: status NAME of it fails, pointing at --all (exit $rc): $(cat "$T/s.err")"
	check "gb status --all -o json | jq -e --arg p $p 'any(.[]; .name == \$p and .state == \"destroyed\")' >/dev/null" \
		"$1: status --all lists it as destroyed"
	check "gb status --all $p -o json | jq -e '.state == \"destroyed\" and .reason == \"user\" and .ttl_left_s == null and .waiting == null' >/dev/null" \
		"$1: status --all NAME shows it, with no TTL left"
	check "! gb status --all | grep -q '(orphans)'" "$1: the gc's own pool is never listed"

	rc=0
	gb destroy "$p" --auto-approve >"$T/d2.out" 2>"$T/d2.err" || rc=$?
	check "[ \$rc = 1 ] && ! grep -q 'destroyed' $T/d2.out && grep -q \"no pool named $p\" $T/d2.err" \
		"$1: a second destroy finds no pool (exit $rc): $(cat "$T/d2.out" "$T/d2.err")"
	rc=0
	gb destroy "$p" --auto-approve --ignore-not-found >"$T/d3.out" 2>"$T/d3.err" || rc=$?
	check "[ \$rc = 0 ] && grep -q 'no pool named $p; nothing to destroy' $T/d3.err" \
		"$1: with --ignore-not-found it exits 0, saying there was nothing (exit $rc)"
	check "gb events --pool $p -o json | jq -e 'any(.[]; .kind == \"destroyed\")' >/dev/null" \
		"$1: its events stay"

	gb apply -f "$T/$p.yaml" --auto-approve --wait --timeout 60s -o json >"$T/a2.json" 2>"$T/a.err" ||
		fail "$1: apply $p again: $(cat "$T/a.err")"
	check "jq -e '.[0].state == \"active\" and .[0].running == 1' $T/a2.json >/dev/null && gb status -o json | jq -e --arg p $p 'any(.[]; .name == \$p)' >/dev/null" \
		"$1: the name can be applied again, and the new pool is listed"
	gb destroy "$p" --auto-approve >/dev/null 2>&1 || fail "$1: destroy $p again"
}

gone local dg-local
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
gone daemon dg-daemon

# the API itself
H="Authorization: Bearer $GPUBROKER_TOKEN"
code() { curl -s -o "$T/c.json" -w '%{http_code}' -H "$H" "$@"; }
check "[ \"\$(code -X DELETE $GPUBROKER_SERVER/v1/pools/dg-daemon)\" = 404 ] && jq -e '.error.message | test(\"no pool named dg-daemon\")' $T/c.json >/dev/null" \
	"DELETE of a destroyed pool: 404"
check "[ \"\$(code $GPUBROKER_SERVER/v1/pools/dg-daemon)\" = 404 ]" "GET /v1/pools/NAME of it: 404"
check "[ \"\$(code $GPUBROKER_SERVER/v1/pools/dg-daemon?all=1)\" = 200 ] && jq -e '.state == \"destroyed\"' $T/c.json >/dev/null" \
	"GET /v1/pools/NAME?all=1: 200, destroyed"
check "[ \"\$(code $GPUBROKER_SERVER/v1/pools)\" = 200 ] && ! jq -e 'any(.pools[]; .name == \"dg-daemon\")' $T/c.json >/dev/null" \
	"GET /v1/pools leaves it out"
check "[ \"\$(code $GPUBROKER_SERVER/v1/pools?all=1)\" = 200 ] && jq -e 'any(.pools[]; .name == \"dg-daemon\" and .state == \"destroyed\")' $T/c.json >/dev/null" \
	"GET /v1/pools?all=1 has it"
