#!/bin/sh
# region_globs.sh -- region names belong to each cloud ("eu-*" is AWS's
# naming; GCP's are europe-*, Azure's westeurope): validate and plan,
# locally and through a daemon, refuse a placement.regions glob that
# matches no region of the pool's clouds, at its file:line:col, with the
# nearest names; `offers --region` does the same for its glob.  A glob in
# the cloud's own naming, or compliance: [gdpr], plans.
. "$GB_SRC/tests/lib/integration.sh"

VIEWER=demo-viewer-token
sim_start # the drivers' endpoints (the config reads them); no cloud is asked
cat >"$T/gcp-eu.yaml" <<'EOS'
pool:
  name: eu-train
  gpu: {model: H100, count: 8}
  placement:
    clouds: [gcp]
    regions: ["eu-*"]
EOS
sed 's/"eu-\*"/"europe-*"/' "$T/gcp-eu.yaml" >"$T/gcp-europe.yaml"
cat >"$T/gdpr.yaml" <<'EOS'
pool:
  name: eu-any
  gpu: {model: H100, count: 8}
  placement: {clouds: [aws, gcp, azure], compliance: [gdpr]}
EOS
cat >"$T/typo.yaml" <<'EOS'
pool:
  name: typo
  gpu: {model: L4}
  placement:
    clouds: [aws, gcp]
    regions: [us-east-1, europe-west-4]
EOS

# validate: the error at the glob, why, and what was probably meant
gb validate "$T/gcp-eu.yaml" >"$T/out" 2>"$T/err" && rc=0 || rc=$?
check "[ \$rc = 1 ]" "validate: exit 1 for AWS naming in a GCP pool"
check "grep -q 'gcp-eu.yaml:6:15: error: pool.placement.regions\[0\]: \"eu-\*\" matches no region of gcp' $T/err" \
	"validate: file:line:col, key path, which cloud"
check "grep -q 'it matches regions of aws' $T/err && grep -q 'europe-west4' $T/err && grep -q 'compliance: \[gdpr\]' $T/err" \
	"validate: whose naming it is, GCP's regions in the same places, and the cross-cloud selector"
gb validate "$T/typo.yaml" >"$T/out" 2>"$T/err" && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q 'typo.yaml:6:26: .*\"europe-west-4\" matches no region of aws, gcp; did you mean \"europe-west4\"?' $T/err" \
	"validate: a misspelt region id gets the nearest spelling"
check "gb validate $T/gcp-europe.yaml $T/gdpr.yaml >/dev/null" \
	"validate: GCP's own naming and compliance: [gdpr] are fine"

# plan, locally
gb plan -f "$T/gcp-eu.yaml" >"$T/out" 2>"$T/err" && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q 'gcp-eu.yaml:6:15: .*matches no region of gcp' $T/err && [ ! -s $T/out ]" \
	"plan: refused before planning, with the same error"
check "gb plan -f $T/gcp-europe.yaml | grep -q 'gcp  *europe-'" "plan: europe-* plans on GCP"
gb plan -f "$T/gdpr.yaml" -o json --limit 100 >"$T/out"
check "jq -e '[.[0].candidates[].cloud] | unique | length > 1' $T/out >/dev/null" \
	"plan: compliance: [gdpr] selects EU regions on more than one cloud"

# apply, locally: refused before anything is created
gb apply -f "$T/gcp-eu.yaml" --auto-approve >"$T/out" 2>"$T/err" && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q 'gcp-eu.yaml:6:15: .*matches no region of gcp' $T/err" \
	"apply: refused with the same error"
check "[ \"\$(sim_live)\" = 0 ] && ! gb status eu-train >/dev/null 2>&1" "apply: no pool, no instance"

# offers --region
gb offers --cloud azure --region 'eu-*' >"$T/out" 2>"$T/err" && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q -- '--region: \"eu-\*\" matches no region of azure' $T/err && grep -q westeurope $T/err" \
	"offers --region: AWS naming for Azure is refused, with Azure's regions there"
check "gb offers --cloud aws --region 'eu-*' | grep -q '^aws  *eu-'" "offers --region in the cloud's naming lists offers"

# through a daemon: plan (POST /v1/plan) and offers (GET /v1/offers)
daemon_start
remote() { GPUBROKER_TOKEN=$VIEWER gb "$@"; }
remote plan -f "$T/gcp-eu.yaml" >"$T/out" 2>"$T/err" && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q 'pool.placement.regions\[0\]: \"eu-\*\" matches no region of gcp' $T/err" \
	"plan --server: the daemon refuses the glob too, with the key path"
check "remote plan -f $T/gcp-europe.yaml | grep -q 'gcp  *europe-'" "plan --server: europe-* plans"
GPUBROKER_TOKEN=demo-admin-token gb apply -f "$T/gcp-eu.yaml" --auto-approve >"$T/out" 2>"$T/err" && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q 'matches no region of gcp' $T/err && [ \"\$(sim_live)\" = 0 ]" \
	"apply --server: the daemon refuses it too; nothing created"
remote offers --cloud gcp --region 'eu-*' >"$T/out" 2>"$T/err" && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q 'matches no region of gcp' $T/err" "offers --server --region: refused by the daemon"
check "remote offers --cloud gcp --region 'europe-*' | grep -q '^gcp  *europe-'" "offers --server --region in GCP's naming"
echo "PASS"
