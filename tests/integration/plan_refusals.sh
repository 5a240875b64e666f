#!/bin/sh
# plan_refusals.sh -- plan and apply agree (issue 31, point 4):
#   1. plan runs apply's quota and budget checks and shows the refusal
#      (exit 1; the table says "Refused by apply" instead of "Chosen";
#      JSON: "apply_refused"), without a state, with one, and through
#      the daemon;
#   2. a file of several pools is checked whole before any pool is
#      created: a pool over the quota, or a 403 for another team's pool
#      through the daemon, names that pool, and no pool of the file is
#      created;
#   3. the quota and budget checks count the file whole: two pools that
#      each fit the team's GPUs, $/h or monthly budget but not together
#      get the second refused before the first is created (locally and
#      through the daemon; plan says it too).
. "$GB_SRC/tests/lib/integration.sh"

# the example config with a small team "research": 4 GPUs
team_limits 4 50 50000
sim_start

write_spec "$T/big.yaml" pr-big aws A10G 5
write_spec "$T/ok.yaml" pr-ok aws A10G 2

# plan_refused WHERE: plan of 5 GPUs for a team of 4 fails, saying why
plan_refused() {
	rc=0
	gb plan -f "$T/big.yaml" >"$T/p.out" 2>"$T/p.err" || rc=$?
	check "[ \$rc = 1 ] && grep -q 'apply would refuse it: pool pr-big would bring team research to [57] GPUs, over its quota of 4' $T/p.err" \
		"$1: plan of a pool over the team's GPU quota fails with apply's refusal (exit $rc): $(cat "$T/p.err")"
	check "! grep -q '^Chosen:' $T/p.out && grep -q '^Refused by apply (below), else: aws ' $T/p.out" \
		"$1: its table does not say Chosen"
	gb plan -f "$T/big.yaml" -o json >"$T/p.json" 2>/dev/null || :
	check "jq -e '.[0].apply_refused | test(\"over its quota of 4\")' $T/p.json >/dev/null" "$1: JSON: apply_refused"
	rc=0
	gb plan -f "$T/ok.yaml" -o json >"$T/q.json" 2>"$T/q.err" || rc=$?
	check "[ \$rc = 0 ] && jq -e '.[0].apply_refused == null' $T/q.json >/dev/null" \
		"$1: a pool inside the quota plans (exit $rc), apply_refused null"
}

check "[ ! -e \"\$GPUBROKER_STATE\" ]" "no state yet"
plan_refused "without a state"

# a file of two pools: the second over the quota once the first counts
# as applied (2 + 5 > 4; the refusal counts both): nothing is created
cat "$T/ok.yaml" >"$T/two.yaml"
echo "---" >>"$T/two.yaml"
cat "$T/big.yaml" >>"$T/two.yaml"
rc=0
gb apply -f "$T/two.yaml" --auto-approve >"$T/two.out" 2>"$T/two.err" || rc=$?
check "[ \$rc = 1 ] && grep -q 'pool pr-big: not applied (nothing stored): pool pr-big would bring team research to 7 GPUs with the pools before it in the file' $T/two.err" \
	"apply of a file whose second pool is over the quota names it (exit $rc)"
check "grep -q 'nothing applied: 1 of 2 pools would be refused' $T/two.err && [ \"\$(sim_live pr-ok)\" = 0 ] && ! gb status pr-ok >/dev/null 2>&1" \
	"and the first pool was not created"

# two pools that each fit the quota (3 of 4 GPUs) but not together: the
# file counts whole, so the second is refused before the first is made
# (plan says so too)
write_spec "$T/l1.yaml" pr-l1 aws A10G 3
write_spec "$T/l2.yaml" pr-l2 aws A10G 3
{ cat "$T/l1.yaml"; echo "---"; cat "$T/l2.yaml"; } >"$T/l12.yaml"
# together_refused WHAT FILE POOL TEXT: apply of FILE exits 1 naming
# POOL with TEXT, and nothing of it is created
together_refused() {
	rc=0
	gb apply -f "$2" --auto-approve >"$T/t.out" 2>"$T/t.err" || rc=$?
	check "[ \$rc = 1 ] && grep -q 'pool $3: not applied (nothing stored): pool $3 $4' $T/t.err && grep -q 'nothing applied: 1 of 2 pools would be refused' $T/t.err" \
		"$1: apply of two pools that fit alone but not together refuses the second (exit $rc): $(cat "$T/t.err")"
	check "[ \"\$(sim_live $3)\" = 0 ] && ! grep -q ' created' $T/t.err && ! gb status pr-l1 >/dev/null 2>&1 && ! gb status pr-d1 >/dev/null 2>&1" \
		"$1: and no pool of the file was created"
}
together_refused "locally" "$T/l12.yaml" pr-l2 "would bring team research to 6 GPUs with the pools before it in the file, over its quota of 4"
gb plan -f "$T/l12.yaml" -o json >"$T/l12.json" 2>/dev/null || :
check "jq -e '(.[0].apply_refused == null) and (.[1].apply_refused | test(\"to 6 GPUs with the pools before it in the file\"))' $T/l12.json >/dev/null" \
	"plan of that file: the first pool fits, the second is refused with the first counted"
# and the same for $/h (1 A10G: $1.006/h; a limit of $1.50/h) and the
# monthly budget ($10.06 for a 10 h TTL; a budget of $15)
write_spec "$T/h1.yaml" pr-l1 aws A10G 1 on-demand "lifecycle: {ttl: 10h}"
write_spec "$T/h2.yaml" pr-l2 aws A10G 1 on-demand "lifecycle: {ttl: 10h}"
{ cat "$T/h1.yaml"; echo "---"; cat "$T/h2.yaml"; } >"$T/h12.yaml"
team_limits 4 1.5 50000
together_refused "\$/h" "$T/h12.yaml" pr-l2 "would bring team research to \\\$2.01/h with the pools before it in the file, over its limit of \\\$1.50/h"
team_limits 4 50 15
together_refused "budget" "$T/h12.yaml" pr-l2 "(\\\$1.01/h for 10.0 h) would bring team research to \\\$20.12 this month, \\\$10.06 of it for the pools before it in the file, over its budget of \\\$15.00"
team_limits 4 50 50000

gb apply -f "$T/ok.yaml" --auto-approve >/dev/null 2>"$T/a.err" || fail "apply pr-ok: $(cat "$T/a.err")"
plan_refused "with a state"

daemon_start
export GPUBROKER_TOKEN=demo-ci-token
plan_refused "through the daemon"
# pr-ok holds 2 of the 4 GPUs: two pools of 2 fit alone, not together
write_spec "$T/d1.yaml" pr-d1 aws A10G 2
write_spec "$T/d2.yaml" pr-d2 aws A10G 2
{ cat "$T/d1.yaml"; echo "---"; cat "$T/d2.yaml"; } >"$T/d12.yaml"
together_refused "through the daemon" "$T/d12.yaml" pr-d2 "would bring team research to 6 GPUs with the pools before it in the file, over its quota of 4"

# a 403 for the second pool: named, before anything is created
write_spec "$T/mine.yaml" pr-mine aws A10G 1
sed -e 's/team: research/team: product/; s/pr-big/pr-theirs/' "$T/big.yaml" >"$T/theirs.yaml"
sed -i 's/count: 5/count: 1/' "$T/theirs.yaml"
{ cat "$T/mine.yaml"; echo "---"; cat "$T/theirs.yaml"; } >"$T/mixed.yaml"
rc=0
gb apply -f "$T/mixed.yaml" --auto-approve --wait --timeout 60s >"$T/m.out" 2>"$T/m.err" || rc=$?
check "[ \$rc = 1 ] && grep -q \"pool pr-theirs: token 'demo-ci' is for team research and cannot plan pools for team product (HTTP 403)\" $T/m.err" \
	"a 403 for the second pool of a file names that pool (exit $rc): $(cat "$T/m.err")"
check "! grep -q 'pr-mine created' $T/m.err && [ \"\$(sim_live pr-mine)\" = 0 ] && ! gb status pr-mine >/dev/null 2>&1" \
	"and comes before the first pool is created"
