#!/bin/sh
# oidc.sh -- CI jobs sign in with their OIDC ID token (POST /v1/auth/oidc,
# auth.oidc): a test issuer on loopback (tests/lib/oidc_issuer.py: its
# discovery document and JWKS, keys made here with openssl) signs tokens.
# The right token works end to end through the CLI with no stored secret
# (apply, wait, destroy on cloudsim; the pool carries ci-* labels in
# status, events and cost --by label); every wrong one is a 401 that says
# why, with an audit row; a rotated key is picked up; the exchanged token
# does no more than its rule's role and team.
. "$GB_SRC/tests/lib/integration.sh"

PY=/usr/bin/python3
[ -x $PY ] || { echo "SKIP: /usr/bin/python3 is missing"; exit 77; }
command -v openssl >/dev/null || { echo "SKIP: openssl is not installed"; exit 77; }
ISSUER_PY=$GB_SRC/tests/lib/oidc_issuer.py

# keys: RSA k1, EC e1 (published), RSA k2 (published later: rotation),
# RSA x9 (never published), and a wrong-issuer key
mkdir -p "$T/iss" "$T/keys"
for k in k1 k2 x9; do
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/keys/$k.pem" 2>/dev/null ||
		fail "openssl cannot make an RSA key"
done
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/keys/e1.pem" ||
	fail "openssl cannot make an EC key"
$PY "$ISSUER_PY" jwks "$T/iss" "$T/keys/k1.pem:k1" "$T/keys/e1.pem:e1" || fail "cannot write the JWKS"
$PY "$ISSUER_PY" serve "$T/iss" 2>"$T/issuer.log" &
BG_PIDS="$BG_PIDS $!"
wait_until 10 "test -s '$T/iss/port'" || fail "the test issuer did not start"
ISS=http://127.0.0.1:$(cat "$T/iss/port")
mkdir -p "$T/iss/.well-known"
printf '{"issuer": "%s", "jwks_uri": "%s/jwks.json"}\n' "$ISS" "$ISS" \
	>"$T/iss/.well-known/openid-configuration"

# the broker config: cloudsim's, plus two trust rules
export GPUBROKER_INVENTORY=$GB_SRC/examples/demo-inventory.yaml
CONF=$T/broker.yaml
{
	cat "$GB_SRC/examples/cloudsim-broker.yaml"
	cat <<EOF
auth:
  oidc:
    - issuer: $ISS
      audience: gpubroker
      claims: {repository: org/repo, ref: refs/heads/main}
      role: operator
      team: research
      max_ttl: 10m
    - issuer: $ISS
      audience: gpubroker
      claims: {repository: "org/docs-*"}
      role: viewer
      team: research
EOF
} >"$CONF"

sim_start
gb validate -f "$CONF" >/dev/null 2>"$T/validate.log" || fail "the config does not validate: $(cat "$T/validate.log")"
daemon_start
U=$GPUBROKER_SERVER
export XDG_CACHE_HOME=$T/cache
ADMIN=demo-admin-token

NOW=$(date +%s)
# claims [jq filter applied to the good claims]
claims() {
	jq -cn --arg iss "$ISS" --argjson now "$NOW" --arg jti "$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')" '
	  {iss: $iss, aud: "gpubroker", sub: "repo:org/repo:ref:refs/heads/main",
	   repository: "org/repo", ref: "refs/heads/main", run_id: "4242",
	   jti: $jti, iat: $now, nbf: $now, exp: ($now + 300)}' | jq -c "${1:-.}"
}
# mint ALG KID KEYFILE CLAIMS
mint() {
	$PY "$ISSUER_PY" mint "$1" "$2" "$3" "$4" || fail "cannot mint a token"
}
# exchange TOKEN -> HTTP status; the answer in $T/x.json (kept for
# api_check: the exchange's answers against docs/openapi.json)
exchange() {
	_s=$(jq -cn --arg t "$1" '{token: $t}' |
		curl -s -o "$T/x.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
			--data-binary @- "$U/v1/auth/oidc")
	api_keep POST /v1/auth/oidc "$_s" "$T/x.json"
	echo "$_s"
}
# refused NAME TOKEN REGEX: a 401 whose message matches REGEX
refused() {
	_c=$(exchange "$2")
	[ "$_c" = 401 ] || fail "$1: HTTP $_c, not 401 ($(cat "$T/x.json"))"
	jq -e --arg re "$3" '.error.message | test($re)' "$T/x.json" >/dev/null ||
		fail "$1: the 401 does not say why ($(jq -r .error.message "$T/x.json"))"
	echo "ok: $1: 401, $(jq -r .error.message "$T/x.json")"
}

# ---- the right token: apply, wait, destroy through the CLI, no secret
GOOD=$(mint RS256 k1 "$T/keys/k1.pem" "$(claims)")
printf '%s\n' "$GOOD" >"$T/id-token"
write_spec "$T/ci.yaml" ci-4242 aws A10G 1
unset GPUBROKER_TOKEN
gb --oidc-token-file "$T/id-token" apply -f "$T/ci.yaml" --auto-approve --wait --timeout 60s \
	>/dev/null 2>"$T/apply.log" || fail "apply with the exchanged token failed: $(tail -n 3 "$T/apply.log")"
check "[ \"\$(sim_live ci-4242)\" = 1 ]" "the CI job's pool runs"
gb --oidc-token-file "$T/id-token" status ci-4242 >"$T/status.log" 2>&1 || fail "status failed"
check "grep -q 'ci-4242: CI ci-repository=org/repo ci-ref=refs/heads/main ci-run=4242' '$T/status.log'" \
	"status shows the pool's repository, ref and run"
gb --oidc-token-file "$T/id-token" status ci-4242 -o json >"$T/status.json" 2>"$T/status-json.log" || fail "status -o json failed"
check "jq -e '(if type == \"array\" then .[0] else . end).labels[\"ci-repository\"] == \"org/repo\"' '$T/status.json' >/dev/null" \
	"status -o json carries the labels"
GPUBROKER_TOKEN=$ADMIN gb events --pool ci-4242 -o json >"$T/events.json" 2>"$T/events.log" || fail "events failed"
check "jq -e '[.[] | select(.kind == \"ci\" and (.message | test(\"ci-repository=org/repo\")))] | length == 1' '$T/events.json' >/dev/null" \
	"the pool's events say which CI job applied it"
GPUBROKER_TOKEN=$ADMIN gb cost --by label:ci-repository -o json >"$T/cost.json" 2>"$T/cost.log" || fail "cost failed"
check "jq -e '[.groups[] | select(.key == \"org/repo\" and .instances == 1)] | length == 1' '$T/cost.json' >/dev/null" \
	"cost --by label:ci-repository has the repository"
gb --oidc-token-file "$T/id-token" destroy ci-4242 --auto-approve >/dev/null 2>"$T/destroy.log" ||
	fail "destroy with the same ID token (the cached exchange) failed: $(cat "$T/destroy.log")"
check "[ \"\$(sim_live ci-4242)\" = 0 ]" "the CI job's destroy released the instance"
check "[ ! -e \"\$HOME/.config/gpubroker/token\" ] && ! grep -rq 'gbo_' '$T/apply.log' '$T/destroy.log' '$T/daemon.log'" \
	"no broker token in the CLI's output or the daemon's log"

# ---- GitHub Actions: the CLI asks the runner for the ID token itself
# (here the test issuer serves the runner's answer)
jq -cn --arg v "$(mint RS256 k1 "$T/keys/k1.pem" "$(claims)")" '{value: $v}' >"$T/iss/runner.json"
ACTIONS_ID_TOKEN_REQUEST_URL="$ISS/runner.json?api-version=2.0" ACTIONS_ID_TOKEN_REQUEST_TOKEN=runner-secret \
	GPUBROKER_OIDC_AUDIENCE=gpubroker gb token >"$T/gh.tok" 2>"$T/gh.log" ||
	fail "gpubroker token on GitHub Actions failed: $(cat "$T/gh.log")"
curl -s -o "$T/whoami.json" -H "Authorization: Bearer $(cat "$T/gh.tok")" "$U/v1/whoami"
api_keep GET /v1/whoami 200 "$T/whoami.json"
check "jq -e '.role == \"operator\" and .labels[\"ci-repository\"] == \"org/repo\"' '$T/whoami.json' >/dev/null" \
	"on GitHub Actions the CLI gets the ID token from the runner and exchanges it (whoami: operator, with the labels)"
check "grep -q 'GET /runner.json?api-version=2.0&audience=gpubroker ' '$T/issuer.log'" \
	"it asks the runner for the configured audience"

# ---- the same token again: a replay
refused "replayed ID token" "$GOOD" 'replay'

# ---- ES256 works too, and the answer says who and until when
c=$(exchange "$(mint ES256 e1 "$T/keys/e1.pem" "$(claims)")")
check "[ $c = 200 ]" "an ES256 token is exchanged"
check "jq -e '.role == \"operator\" and .team == \"research\" and .expires_in <= 300 and .labels[\"ci-run\"] == \"4242\"' '$T/x.json' >/dev/null" \
	"its broker token is the rule's role and team, ending with the ID token (not max_ttl)"
OP=$(jq -r .token "$T/x.json")

# ---- what the exchanged operator token may not do
write_spec "$T/prod.yaml" prod-pool aws A10G 1
sed -i 's/team: research/team: product/' "$T/prod.yaml"
check "! GPUBROKER_TOKEN=\$OP gb apply -f '$T/prod.yaml' --auto-approve >/dev/null 2>'$T/p.log' && grep -q 'HTTP 403' '$T/p.log'" \
	"it cannot apply a pool of another team (403)"
GPUBROKER_TOKEN=demo-other-team-token gb apply -f "$T/prod.yaml" --auto-approve >/dev/null 2>&1 ||
	fail "the other team's operator cannot apply"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H \"Authorization: Bearer \$OP\" \$U/v1/pools/prod-pool)\" = 404 ]" \
	"it cannot destroy another team's pool (404)"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H \"Authorization: Bearer \$OP\" \$U/v1/audit)\" = 403 ]" \
	"it cannot read the audit (admins only)"
c=$(exchange "$(mint RS256 k1 "$T/keys/k1.pem" "$(claims '.repository = "org/docs-site"')")")
check "[ $c = 200 ] && jq -e '.role == \"viewer\"' '$T/x.json' >/dev/null" "a docs repository gets the viewer rule"
VIEW=$(jq -r .token "$T/x.json")
check "! GPUBROKER_TOKEN=\$VIEW gb apply -f '$T/ci.yaml' --auto-approve >/dev/null 2>'$T/v.log' && grep -q 'HTTP 403' '$T/v.log'" \
	"the viewer rule's token cannot apply (403)"

# ---- each wrong token: a 401 saying why
WRONG_ISS=$(mint RS256 k1 "$T/keys/k1.pem" "$(claims '.iss = "https://token.example.invalid"')")
refused "wrong issuer" "$WRONG_ISS" 'issuer .* is not trusted'
refused "wrong audience" "$(mint RS256 k1 "$T/keys/k1.pem" "$(claims '.aud = "someone-else"')")" 'audience'
refused "expired" "$(mint RS256 k1 "$T/keys/k1.pem" "$(claims '.exp = .iat - 120')")" 'expired'
refused "not yet valid" "$(mint RS256 k1 "$T/keys/k1.pem" "$(claims '.nbf = .iat + 600')")" 'not valid yet'
refused "claim that does not match" "$(mint RS256 k1 "$T/keys/k1.pem" "$(claims '.ref = "refs/heads/evil"')")" 'claim ref'
refused "alg none" "$(mint none k1 - "$(claims)")" 'alg "none" is refused'
refused "HS256 with the public key as secret" \
	"$(openssl pkey -in "$T/keys/k1.pem" -pubout -out "$T/keys/k1.pub" && mint HS256 k1 "$T/keys/k1.pub" "$(claims)")" \
	'alg "HS256" is refused'
TAMPER=$(mint RS256 k1 "$T/keys/k1.pem" "$(claims)")
forged=$(claims '.repository = "org/repo" | .ref = "refs/heads/main" | .sub = "forged"' |
	$PY -c 'import base64,sys; print(base64.urlsafe_b64encode(sys.stdin.read().strip().encode()).decode().rstrip("="))')
refused "tampered payload" "$(echo "$TAMPER" | cut -d. -f1).$forged.$(echo "$TAMPER" | cut -d. -f3)" 'signature does not verify'
refused "garbage" "not-a-jwt" 'not a signed JWT'

# ---- key rotation: k2 appears in the JWKS (cached for an hour): the
# unknown kid makes the daemon fetch it again
$PY "$ISSUER_PY" jwks "$T/iss" "$T/keys/k1.pem:k1" "$T/keys/e1.pem:e1" "$T/keys/k2.pem:k2" || fail "cannot rotate"
c=$(exchange "$(mint RS256 k2 "$T/keys/k2.pem" "$(claims)")")
check "[ $c = 200 ]" "a token signed with the rotated-in key k2 is exchanged ($(jq -c '.error // empty' "$T/x.json"))"
refused "unknown kid" "$(mint RS256 x9 "$T/keys/x9.pem" "$(claims)")" 'kid "x9" is not among the keys'

# ---- the audit has every exchange, refused ones included, never a token
GPUBROKER_TOKEN=$ADMIN gb audit -o json >"$T/audit.json" || fail "audit failed"
check "jq -e '[.[] | select(.action == \"oidc-exchange\" and .result == \"401\")] | length >= 11' '$T/audit.json' >/dev/null" \
	"every refused exchange has an audit row"
check "jq -e '[.[] | select(.action == \"oidc-exchange\" and .result == \"200\" and .actor == \"oidc:repo:org/repo:ref:refs/heads/main\" and .team == \"research\" and (.detail | test(\"repository=org/repo\")))] | length >= 3' '$T/audit.json' >/dev/null" \
	"granted exchanges are audited with the actor and the matched claims"
check "jq -e '[.[] | select(.action == \"apply\" and .result == \"202\" and .actor == \"oidc:repo:org/repo:ref:refs/heads/main\")] | length == 1' '$T/audit.json' >/dev/null" \
	"the CI job's apply is audited under its identity"
sig=$(echo "$GOOD" | cut -d. -f3)
check "! grep -q -e '$sig' -e 'gbo_' '$T/audit.json' '$T/daemon.log'" "no ID token or broker token in the audit or the log"
api_check
echo "PASS: oidc"
