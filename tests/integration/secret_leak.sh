#!/bin/sh
# secret_leak.sh -- run a whole workflow at debug log level against
# cloudsim and fail if any configured secret or token shows up anywhere:
# stdout and stderr of every command, and the state database.
#
# The workflow: for each cloud (aws, azure, gcp, lambda) `gpubroker -vv apply
# --auto-approve --wait`, `status`, `events`, `destroy --auto-approve`,
# with the real CLI and drivers talking to cloudsim through
# examples/cloudsim-broker.yaml; then the driver conformance binary (its
# driver logs are debug level too) when it is built.
#
# Looked for: the AWS secret access key, the Azure client secret, the
# Lambda API key (right and wrong), 40-char
# pieces of every line of the GCP private key's base64 body, "Bearer "
# followed by a token, "access_token" with a value, SigV4 "Signature="
# with hex.  The test also insists that the run logged driver HTTP lines
# at debug level, so it cannot pass by logging nothing.
#
# Exit 77 only when cloudsim, gpubroker, curl or jq is missing.
. "$GB_SRC/tests/lib/integration.sh"

ALL=$T/all-output.txt  # not *.log: the library prints those on failure
: >"$ALL"

sim_start

# ---- the secrets of this cloudsim ----------------------------------
AWS_SECRET=$AWS_SECRET_ACCESS_KEY
AZ_SECRET=$AZURE_CLIENT_SECRET
[ -n "$AWS_SECRET" ] || fail "cloudsim gave no AWS_SECRET_ACCESS_KEY"
[ -n "$AZ_SECRET" ] || fail "cloudsim gave no AZURE_CLIENT_SECRET"
LAMBDA_KEY=$LAMBDA_API_KEY
[ -n "$LAMBDA_KEY" ] || fail "cloudsim gave no LAMBDA_API_KEY"
[ -f "$GOOGLE_APPLICATION_CREDENTIALS" ] ||
	fail "cloudsim gave no GCP key file ($GOOGLE_APPLICATION_CREDENTIALS)"
jq -r .private_key "$GOOGLE_APPLICATION_CREDENTIALS" |
	grep -v -- '-----' | awk 'length($0) >= 40 { print substr($0, 1, 40) }' \
	>"$T/gcp-key-chunks"
nchunks=$(wc -l <"$T/gcp-key-chunks")
[ "$nchunks" -ge 10 ] || fail "could not read the GCP private key body ($nchunks lines)"
echo "looking for: the AWS secret key, the Azure client secret, the Lambda API key, $nchunks pieces of the GCP private key, bearer tokens, access tokens, SigV4 signatures"

# mask: stdin to stdout with the AWS and Azure secrets and the Lambda
# key replaced
mask() {
	MASK_A=$AWS_SECRET MASK_Z=$AZ_SECRET MASK_L=$LAMBDA_KEY awk '{
		a = ENVIRON["MASK_A"]; z = ENVIRON["MASK_Z"]; l = ENVIRON["MASK_L"]
		while ((i = index($0, a)) > 0)
			$0 = substr($0, 1, i - 1) "<AWS SECRET>" substr($0, i + length(a))
		while ((i = index($0, z)) > 0)
			$0 = substr($0, 1, i - 1) "<AZURE SECRET>" substr($0, i + length(z))
		while ((i = index($0, l)) > 0)
			$0 = substr($0, 1, i - 1) "<LAMBDA KEY>" substr($0, i + length(l))
		print
	}'
}

# run LABEL CMD...: run, append everything it prints to $ALL
run() {
	_label=$1
	shift
	echo "==== $_label: $*" >>"$ALL"
	if "$@" >>"$ALL" 2>&1; then
		echo "ok: $_label"
	else
		_rc=$?
		echo "---- output of $_label (last 30 lines):"
		tail -n 30 "$ALL" | mask
		fail "$_label exited $_rc"
	fi
}

# ---- the workflow ----------------------------------------------------
# Some 5xx answers and tight buckets, so that every driver goes through
# the transport's retry path (which logs each failed attempt at debug
# level) and the haystack holds more than the happy path.
sim_post /_sim/scenario '{"error_rates": {"aws": {"*": 0.2}, "azure": {"*": 0.2}, "gcp": {"*": 0.2}, "lambda": {"*": 0.2}}}'

for spec in "aws A10G" "azure T4" "gcp L4" "lambda A10"; do
	cloud=${spec% *}
	gpu=${spec#* }
	pool=leak-$cloud
	write_spec "$T/$cloud.yaml" "$pool" "$cloud" "$gpu" 2 on-demand
	run "apply $pool" gb -vv apply -f "$T/$cloud.yaml" --auto-approve \
		--wait --timeout 2m
	check "[ \"\$(sim_live $pool)\" = 2 ]" "cloudsim runs the 2 instances of $pool"
	run "status $pool" gb -vv status "$pool"
	run "status $pool (json)" gb -vv status "$pool" -o json
	run "events $pool" gb -vv events --pool "$pool"
	run "destroy $pool" gb -vv destroy "$pool" --auto-approve --timeout 2m
	check "[ \"\$(sim_live $pool)\" = 0 ]" "cloudsim has nothing left of $pool"
done
run "offers" gb -vv offers
run "drivers" gb -vv drivers

# ---- wrong credentials: errors must name the problem, not the secret --
sim_post /_sim/scenario '{"error_rates": {"aws": {"*": 0}, "azure": {"*": 0}, "gcp": {"*": 0}, "lambda": {"*": 0}}}'
WRONG_AWS="WrongLeakTestSecretKey/0000000000000000000"
WRONG_AZ="wrong-leak-test-client-secret~0042"
WRONG_LAMBDA="secret_wrong-leak-test-lambda-key-0042"
if command -v openssl >/dev/null; then
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
		-out "$T/wrong.pem" 2>/dev/null || fail "openssl cannot make an RSA key"
	jq --rawfile k "$T/wrong.pem" '.private_key = $k' "$GOOGLE_APPLICATION_CREDENTIALS" \
		>"$T/wrong-key.json" || fail "cannot write the wrong GCP key file"
	grep -v -- '-----' "$T/wrong.pem" |
		awk 'length($0) >= 40 { print substr($0, 1, 40) }' >>"$T/gcp-key-chunks"
else
	echo "note: no openssl command; the wrong-GCP-key step is left out"
fi
# run_refused LABEL CMD...: must fail (exit 1) and say it is a credentials problem
run_refused() {
	_label=$1
	shift
	echo "==== $_label: $*" >>"$ALL"
	"$@" >"$T/refused.out" 2>&1 && fail "$_label succeeded with a wrong secret"
	cat "$T/refused.out" >>"$ALL"
	if grep -vE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' "$T/refused.out" |
		grep -qiE 'auth|credential|secret|signature|invalid_client|invalid_grant'; then
		echo "ok: $_label refused, naming the credentials problem:"
		grep -vE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' "$T/refused.out" |
			grep -iE 'auth|credential|secret|signature|invalid_client|invalid_grant' | mask | head -n 1 | cut -c1-240 | sed 's/^/    /'
	else
		echo "---- output of $_label:"
		mask <"$T/refused.out" | tail -n 20
		fail "$_label: the error does not say the credentials are wrong"
	fi
}
for spec in "aws A10G" "azure T4" "gcp L4" "lambda A10"; do
	cloud=${spec% *}
	gpu=${spec#* }
	write_spec "$T/bad-$cloud.yaml" "leak-bad-$cloud" "$cloud" "$gpu" 1 on-demand
done
# Subshells: the wrong values must not outlive their step.
(
	export GPUBROKER_STATE="$T/bad.db" AWS_SECRET_ACCESS_KEY="$WRONG_AWS"
	run_refused "apply with a wrong AWS secret" \
		gb -vv apply -f "$T/bad-aws.yaml" --auto-approve --wait --timeout 1m
) || exit 1
(
	export GPUBROKER_STATE="$T/bad.db" AZURE_CLIENT_SECRET="$WRONG_AZ"
	run_refused "apply with a wrong Azure client secret" \
		gb -vv apply -f "$T/bad-azure.yaml" --auto-approve --wait --timeout 1m
) || exit 1
(
	export GPUBROKER_STATE="$T/bad.db" LAMBDA_API_KEY="$WRONG_LAMBDA"
	run_refused "apply with a wrong Lambda API key" \
		gb -vv apply -f "$T/bad-lambda.yaml" --auto-approve --wait --timeout 1m
) || exit 1
if [ -s "$T/wrong-key.json" ]; then
	(
		export GPUBROKER_STATE="$T/bad.db"
		export GOOGLE_APPLICATION_CREDENTIALS="$T/wrong-key.json"
		run_refused "apply with a wrong GCP key" \
			gb -vv apply -f "$T/bad-gcp.yaml" --auto-approve --wait --timeout 1m
	) || exit 1
fi
check "[ \"\$(sim_live)\" = 0 ]" "nothing was created with wrong credentials"

# The conformance suite at debug level, when built (its own secret
# checks run too; here its whole output joins the haystack).
if [ -x "$GB_BUILD/tests/dtest_conformance" ] && [ "${GB_LEAK_SKIP_CONFORMANCE:-}" != 1 ]; then
	run "conformance suite (debug log)" env GB_CONF_SHOW_LOG=1 \
		"$GB_BUILD/tests/dtest_conformance"
else
	echo "note: $GB_BUILD/tests/dtest_conformance not built; skipping that part"
fi

# The state database, as text.
for db in "$GPUBROKER_STATE" "$GPUBROKER_STATE-wal" "$T/bad.db" "$T/bad.db-wal"; do
	[ -f "$db" ] || continue
	echo "==== text of $db" >>"$ALL"
	tr -c '[:print:]' '\n' <"$db" | grep -E '.{6,}' >>"$ALL" || true
done

# ---- the proof that something was logged ------------------------------
lines=$(wc -l <"$ALL")
echo "captured $lines lines of output"
for cloud in aws azure gcp lambda; do
	n=$(grep -cE "(debug|DEBUG).*$cloud: |$cloud: (GET|POST|PUT|DELETE) " "$ALL" || true)
	check "[ $n -gt 0 ]" "the $cloud driver logged at debug level ($n lines)"
done
n=$(grep -cE '(GET|POST|PUT|DELETE) https?://127\.0\.0\.1' "$ALL" || true)
check "[ $n -gt 0 ]" "driver HTTP exchanges were logged ($n lines)"

# ---- the search -------------------------------------------------------
leaks=0
found() {
	echo "LEAK: $1 (first occurrence, line $2 of the captured output)" >&2
	leaks=$((leaks + 1))
}
if n=$(grep -nF -- "$AWS_SECRET" "$ALL" | head -n 1 | cut -d: -f1) && [ -n "$n" ]; then
	found "the AWS secret access key" "$n"
fi
if n=$(grep -nF -- "$AZ_SECRET" "$ALL" | head -n 1 | cut -d: -f1) && [ -n "$n" ]; then
	found "the Azure client secret" "$n"
fi
if n=$(grep -nF -- "$LAMBDA_KEY" "$ALL" | head -n 1 | cut -d: -f1) && [ -n "$n" ]; then
	found "the Lambda API key" "$n"
fi
if n=$(grep -nF -- "$WRONG_LAMBDA" "$ALL" | head -n 1 | cut -d: -f1) && [ -n "$n" ]; then
	found "the wrong Lambda API key" "$n"
fi
if n=$(grep -nF -- "$WRONG_AWS" "$ALL" | head -n 1 | cut -d: -f1) && [ -n "$n" ]; then
	found "the wrong AWS secret" "$n"
fi
if n=$(grep -nF -- "$WRONG_AZ" "$ALL" | head -n 1 | cut -d: -f1) && [ -n "$n" ]; then
	found "the wrong Azure client secret" "$n"
fi
if n=$(grep -nF -f "$T/gcp-key-chunks" "$ALL" | head -n 1 | cut -d: -f1) && [ -n "$n" ]; then
	found "a piece of the GCP private key" "$n"
fi
if n=$(grep -nE 'Bearer +[A-Za-z0-9._~+/=-]{16,}' "$ALL" | head -n 1 | cut -d: -f1) && [ -n "$n" ]; then
	found "a bearer token" "$n"
fi
if n=$(grep -nE 'access_token"? *[:=] *"?[A-Za-z0-9._~+/=-]{16,}' "$ALL" | head -n 1 | cut -d: -f1) && [ -n "$n" ]; then
	found "an OAuth access token" "$n"
fi
if n=$(grep -nE 'Signature=[0-9a-f]{16,}' "$ALL" | head -n 1 | cut -d: -f1) && [ -n "$n" ]; then
	found "a SigV4 signature" "$n"
fi
if [ "$leaks" -gt 0 ]; then
	# Show the offending lines with the secrets themselves masked.
	grep -nF -e "$AWS_SECRET" -e "$AZ_SECRET" -e "$LAMBDA_KEY" -e "$WRONG_LAMBDA" "$ALL" | head -n 5 |
		mask | cut -c1-300 >&2 || true
	fail "$leaks kind(s) of secret found in the output of a debug-level run"
fi
echo "ok: no secret, key, token or signature in $lines lines of debug output and the state database"
