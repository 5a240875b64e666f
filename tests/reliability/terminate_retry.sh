#!/bin/sh
# terminate_retry.sh -- a scale-down whose terminate calls fail (every
# TerminateInstances / DeleteVM / instances.delete answered 5xx, past the
# drivers' own retries) must not leave the instances running while the
# store says "terminating": once the cloud answers again, the reconciler
# sends the terminations again and they are confirmed.  (Found by
# fault_storm.sh: two EC2 instances stayed live for minutes after a
# scale-down hit a 500.)  Also run by tests/integration/reliability_short.sh.
. "$GB_SRC/tests/lib/integration.sh"

PERIOD=2
export GPUBROKER_RECONCILE_PERIOD=${PERIOD}s
TRUTH="/usr/bin/python3 $GB_SRC/tests/reliability/truth.py"
[ -x /usr/bin/python3 ] || { echo "SKIP: /usr/bin/python3 is missing"; exit 77; }
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-ci-token

write_spec "$T/aws.yaml" tr-aws aws A10G 3
write_spec "$T/azure.yaml" tr-azure azure T4 3
write_spec "$T/gcp.yaml" tr-gcp gcp L4 3
for c in aws azure gcp; do
	gb apply -f "$T/$c.yaml" --auto-approve --wait --timeout 90s >/dev/null 2>>"$T/apply.log" ||
		fail "apply tr-$c: $(tail -n 3 "$T/apply.log")"
done
sim_post /_sim/scenario '{"error_rates": {"aws": {"TerminateInstances": 1}, "azure": {"DeleteVM": 1}, "gcp": {"instances.delete": 1}}}'
for c in aws azure gcp; do
	gb scale "tr-$c" 1 >/dev/null 2>>"$T/apply.log" || fail "scale tr-$c"
done
stuck() { # POOL: rows marked terminating while still live in cloudsim
	gb status "$1" -o json 2>/dev/null | jq '[.instances[] | select(.state=="terminating")] | length'
}
failed_terminates() { # POOL: terminate intents given up (the drivers' retries exhausted)
	/usr/bin/python3 -c 'import sqlite3, sys; print(sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10).execute("SELECT count(*) FROM intents WHERE kind = '"'terminate'"' AND state = '"'failed'"' AND pool = ?", (sys.argv[2],)).fetchone()[0])' "$GPUBROKER_STATE" "$1"
}
for c in aws azure gcp; do
	wait_until 90 "[ \"\$(failed_terminates tr-$c)\" -ge 1 ]" || fail "tr-$c: the terminate calls did not fail for good"
	check "[ \"\$(stuck tr-$c)\" = 2 ]" "tr-$c: the terminate failed past the driver's retries; 2 rows terminating"
done
check "[ \"\$(sim_live tr-aws)\" = 3 ] && [ \"\$(sim_live tr-azure)\" = 3 ] && [ \"\$(sim_live tr-gcp)\" = 3 ]" \
	"while every terminate call fails, the instances are still live in cloudsim (6 terminating in the store)"
t0=$(date +%s)
sim_post /_sim/scenario '{"error_rates": {"aws": {"TerminateInstances": 0}, "azure": {"DeleteVM": 0}, "gcp": {"instances.delete": 0}}}'
echo '{"tr-aws": 1, "tr-azure": 1, "tr-gcp": 1}' >"$T/expect.json"
wait_until $((PERIOD * 3 + 20)) "$TRUTH check '$GPUBROKER_STATE' '$CONTROL' '$GPUBROKER_BROKER_ID' '$T/expect.json' >'$T/why.txt'" ||
	{ cat "$T/why.txt"; fail "the failed terminations were not sent again once the clouds answered"; }
echo "ok: the terminations were re-sent and confirmed $(( $(date +%s) - t0 ))s after the clouds recovered (period ${PERIOD}s); store == cloudsim"
check "gb events --pool tr-aws | grep -q '(terminate retried)'" "the retry shows in the events"
for c in aws azure gcp; do gb destroy "tr-$c" --auto-approve >/dev/null 2>&1 || fail "destroy tr-$c"; done
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
echo PASS
