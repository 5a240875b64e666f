#!/bin/sh
# placement_cli.sh -- issue 3's "done when", through the real CLI with no
# config (every installed driver and its catalog): offers --gpu H100
# lists the three clouds and lambda with the price's age; plan --explain of the GDPR example
# places only in the EU/EEA and accounts for every offer it refused; a
# UK or Swiss region that matches the pool's region globs is refused by
# the gdpr compliance rule, with the reason.
. "$GB_SRC/tests/lib/integration.sh"

GBL() { "$GB" "$@"; } # no -c: the built-in defaults

GBL offers --gpu H100 -o json >"$T/offers.json" 2>"$T/offers.log" || fail "offers --gpu H100: $(cat "$T/offers.log")"
check "[ \"\$(jq -r '[.[].cloud] | unique | join(\",\")' $T/offers.json)\" = aws,azure,gcp,lambda ]" \
	"offers --gpu H100 lists aws, azure, gcp and lambda (every installed driver)"
check "jq -e 'all(.[]; .gpu == \"H100\" and .price_per_hour > 0 and (.price_age | test(\"^[0-9]+[dhms]\")) and (.source | length > 0))' $T/offers.json >/dev/null" \
	"every row is an H100 with a price, its age and its source"
GBL offers --gpu H100 >"$T/offers.txt" 2>&1 || fail "offers table"
check "head -1 $T/offers.txt | grep -q 'AGE'" "the table has the price's age"

# the EU/EEA regions of the three clouds (gpubroker's region facts) and
# of lambda (its driver's sites answer: Germany, Italy)
EU="europe-central-1 europe-south-1
eu-west-1 eu-west-3 eu-central-1 eu-north-1 eu-south-1 eu-south-2
europe-west1 europe-west3 europe-west4 europe-west8 europe-west9 europe-west10 europe-west12
europe-north1 europe-central2 europe-southwest1
westeurope northeurope swedencentral francecentral germanywestcentral italynorth
polandcentral spaincentral norwayeast"
GBL plan -f "$GB_SRC/examples/gdpr-eu.yaml" --explain --limit 1000 -o json >"$T/plan.json" 2>"$T/plan.log" ||
	fail "plan --explain of examples/gdpr-eu.yaml: $(cat "$T/plan.log")"
check "[ \"\$(jq length $T/plan.json)\" = 2 ]" "both pools of the file are planned"
for r in $(jq -r '.[].candidates[].region' "$T/plan.json" | sort -u); do
	case " $(echo $EU) " in
	*" $r "*) ;;
	*) fail "candidate region $r is not in the EU/EEA" ;;
	esac
done
check "[ \"\$(jq '[.[].candidates[]] | length' $T/plan.json)\" -gt 0 ] && jq -e 'all(.[]; (.candidates | length) == .candidate_count)' $T/plan.json >/dev/null" \
	"there are candidates, all listed, all in the EU/EEA"
check "jq -e 'all(.[]; .candidate_count + (.refusals | length) == .offers_considered)' $T/plan.json >/dev/null" \
	"every offer considered is a candidate or an explained refusal"
check "jq -e 'all(.[].refusals[]; (.rule | length > 0) and (.reason | length > 0))' $T/plan.json >/dev/null" \
	"every refusal names its rule and a reason"
GBL plan -f "$GB_SRC/examples/gdpr-eu.yaml" --explain >"$T/plan.txt" 2>&1 || fail "plan --explain (table)"
check "grep -q '^Refused [0-9]* of [0-9]* offers:' $T/plan.txt && grep -q 'does not match placement.regions' $T/plan.txt" \
	"the text --explain groups the refusals with examples and reasons"

# globs that also match London and Zurich: gdpr refuses them, saying why
PLACE='{regions: ["eu-*", "europe-*", uksouth, switzerlandnorth], compliance: [gdpr]}' \
	write_spec "$T/uk.yaml" uk-test aws L4 1 on-demand
sed -i 's/^  gpu: {model: L4}$/  gpu: {model: [A100, A100-80GB, H100, L4, A10G, T4]}/' "$T/uk.yaml"
GBL plan -f "$T/uk.yaml" --explain --limit 1000 -o json >"$T/uk.json" 2>"$T/uk.log" || fail "plan of the UK/CH spec: $(cat "$T/uk.log")"
check "jq -e '[.[0].refusals[] | select(.rule == \"compliance\" and (.region == \"eu-west-2\" or .region == \"europe-west2\" or .region == \"uksouth\" or .region == \"europe-west6\" or .region == \"switzerlandnorth\" or .region == \"eu-central-2\"))] | length > 0' $T/uk.json >/dev/null" \
	"UK and Swiss regions are refused by the compliance rule"
check "jq -e '[.[0].refusals[] | select(.rule == \"compliance\")][0].reason | test(\"gdpr\")' $T/uk.json >/dev/null" \
	"and the reason names gdpr"
for r in $(jq -r '.[0].candidates[].region' "$T/uk.json" | sort -u); do
	case " $(echo $EU) " in
	*" $r "*) ;;
	*) fail "candidate region $r of the UK/CH spec is not in the EU/EEA" ;;
	esac
done
echo "ok: its candidates are all in the EU/EEA"
echo PASS
