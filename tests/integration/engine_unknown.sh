#!/bin/sh
# engine_unknown.sh -- a create whose outcome stays unknown (every insert
# answered 500 after the retries: the cloud may or may not have done it)
# is not placed again elsewhere, which could leave the pool over size once
# lost instances appear; its intent stays open and is replayed with its
# token.  Once it has had no answer for ten minutes (simulated here by
# ageing the journal entry in the real SQLite file) it is resolved by
# describe, the zone is cooled down, and the pool fails over.
. "$GB_SRC/tests/lib/integration.sh"

sim_start
# GCE answers every bulkInsert with a 500 (backendError)
sim_post /_sim/scenario '{"error_rates": {"gcp": {"instances.bulkInsert": 1}}}'
PLACE='{clouds: [gcp, aws], regions: [us-east4, us-east-1], colocate: none}' \
	write_spec "$T/un.yaml" un gcp L4 2

open_creates() {
	/usr/bin/python3 - "$GPUBROKER_STATE" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("SELECT count(*) FROM intents WHERE kind='create' AND state='open' AND pool='un'").fetchone()[0])
EOF
}
all_creates() {
	/usr/bin/python3 - "$GPUBROKER_STATE" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("SELECT count(*) FROM intents WHERE kind='create' AND pool='un'").fetchone()[0])
EOF
}

gb plan -f "$T/un.yaml" >"$T/plan.out" 2>&1 || fail "plan"
check "grep -q 'Chosen: gcp us-east4/us-east4-a' $T/plan.out" "the plan's first choice is gcp us-east4-a"

# 1. the create's outcome is unknown: no failover, the intent stays open
gb apply -f "$T/un.yaml" --auto-approve >"$T/a1.out" 2>"$T/a1.log" &&
	fail "apply succeeded although every insert failed"
check "grep -q 'outcome is unknown, so nothing more is placed' $T/a1.log" \
	"apply says the outcome is unknown and nothing more is placed"
check "[ \"\$(sim_live un)\" = 0 ]" "nothing was placed elsewhere (aws)"
check "[ \"\$(open_creates)\" = 1 ]" "the create's intent stays open"

# 2. applying again replays that intent with its token; still nothing new
gb apply -f "$T/un.yaml" --auto-approve >"$T/a2.out" 2>"$T/a2.log" &&
	fail "second apply succeeded although every insert failed"
check "grep -q 'outcome is still unknown' $T/a2.log" \
	"the second apply waits on the replayed create"
check "[ \"\$(all_creates)\" = 1 ]" "no second create was journaled: the first was replayed"
check "[ \"\$(sim_live un)\" = 0 ]" "still nothing placed elsewhere"

# 3. ten minutes without an answer: resolved by describe, the zone cooled
#    down, the pool fails over to the next candidate (us-east4-c, which
#    fails the same way); ten more minutes and it goes on to aws
age_open() {
	/usr/bin/python3 - "$GPUBROKER_STATE" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE intents SET created_at = created_at - 11*60*1000 WHERE state='open'")
db.commit()
EOF
}
age_open
gb apply -f "$T/un.yaml" --auto-approve >"$T/a3.out" 2>"$T/a3.log" &&
	fail "apply succeeded although every insert failed"
check "grep -q 'create 1 in gcp/us-east4/us-east4-a still has no answer after 6[0-9][0-9] s (backendError)' $T/a3.log" \
	"the give-up is explained, with GCE's code"
check "grep -q 'interrupted create 1 made nothing; closed' $T/a3.log" "describe found nothing of its token; closed"
check "grep -q 'the create in gcp/us-east4-c ended transient backendError' $T/a3.log" \
	"the pool moved on to us-east4-c (where the outcome is unknown again)"
check "[ \"\$(open_creates)\" = 1 ] && [ \"\$(all_creates)\" = 2 ]" "one intent closed, the new one open"
check "[ \"\$(sim_live un)\" = 0 ]" "nothing placed on aws yet"
age_open
gb apply -f "$T/un.yaml" --auto-approve --wait --timeout 60s >"$T/a4.out" 2>"$T/a4.log" ||
	fail "apply after the second give-up did not converge"
check "grep -q 'us-east4-c still has no answer' $T/a4.log" "us-east4-c given up too"
check "[ \"\$(open_creates)\" = 0 ]" "no intent left open"
check "[ \"\$(store_live un)\" = 2 ] && [ \"\$(sim_live un)\" = 2 ]" "2 instances in the store and in cloudsim"
check "[ \"\$(curl -sf \"\$CONTROL/_sim/instances?live=1\" | jq '[.instances[] | select(.tags[\"gpubroker-pool\"] == \"un\" and .cloud == \"aws\")] | length')\" = 2 ]" \
	"both on aws"
gb plan -f "$T/un.yaml" --explain >"$T/plan2.out" 2>&1 || fail "plan --explain"
check "grep -q 'us-east4-a.*backendError' $T/plan2.out && grep -q 'us-east4-c.*backendError' $T/plan2.out" \
	"plan --explain shows both gcp zones cooling down"

gb destroy un --auto-approve >/dev/null 2>"$T/destroy.log" || fail "destroy"
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
echo PASS
