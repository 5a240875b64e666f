#!/bin/sh
# cloudsim EC2 authentication: SigV4 recomputed from the request as
# received.  Requests are signed here by a third, independent signer (the
# openssl command line) as well as by curl --aws-sigv4; refusals must carry
# EC2's codes and statuses: MissingAuthenticationToken, IncompleteSignature,
# AuthFailure (unknown key, unknown region), SignatureDoesNotMatch (bad
# secret, tampered body, wrong service), RequestExpired (> 5 min skew).
. "$(dirname "$0")/../cloudsim/testlib.sh"

sim_start
sim_creds
PORT=${AWS_URL##*:}
CT='application/x-www-form-urlencoded; charset=utf-8'
BODYQ='Action=DescribeAvailabilityZones&Version=2016-11-15'

sha_hex() { printf '%s' "$1" | openssl dgst -sha256 -r | cut -d' ' -f1; }
hmac_hex() { # hexkey message
	printf '%s' "$2" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$1" -r |
		cut -d' ' -f1
}
str_hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }

# signed_post BODY AMZDATE KEY SECRET REGION [SERVICE] [SENT-BODY]
signed_post() {
	body=$1 d=$2 key=$3 sec=$4 region=$5 svc=${6:-ec2} sent=${7:-$1}
	ds=${d%%T*}
	nl='
'
	creq="POST${nl}/${nl}${nl}content-type:$CT${nl}host:127.0.0.1:$PORT${nl}x-amz-date:$d${nl}${nl}content-type;host;x-amz-date${nl}$(sha_hex "$body")"
	scope="$ds/$region/$svc/aws4_request"
	sts="AWS4-HMAC-SHA256${nl}$d${nl}$scope${nl}$(sha_hex "$creq")"
	k=$(hmac_hex "$(str_hex "AWS4$sec")" "$ds")
	k=$(hmac_hex "$k" "$region")
	k=$(hmac_hex "$k" "$svc")
	k=$(hmac_hex "$k" aws4_request)
	sig=$(hmac_hex "$k" "$sts")
	req POST "$AWS_URL/" -H "Content-Type: $CT" -H "X-Amz-Date: $d" \
		-H "Authorization: AWS4-HMAC-SHA256 Credential=$key/$scope, SignedHeaders=content-type;host;x-amz-date, Signature=$sig" \
		--data-binary "$sent"
}
code() { xml_get "$BODY_FILE" 'Errors/Error/Code'; }
now() { date -u -d "@$(($(date +%s) + ${1:-0}))" +%Y%m%dT%H%M%SZ; }

signed_post "$BODYQ" "$(now)" "$AWS_KEY" "$AWS_SECRET" us-east-1
expect_status 200 "request signed by an independent (openssl) signer"
expect_eq "$(xml_count "$BODY_FILE" 'availabilityZoneInfo/item')" 3 "and answered"

signed_post "$BODYQ" "$(now 240)" "$AWS_KEY" "$AWS_SECRET" us-east-1
expect_status 200 "4 minutes of clock skew is accepted"
signed_post "$BODYQ" "$(now 600)" "$AWS_KEY" "$AWS_SECRET" us-east-1
expect_status 400 "10 minutes ahead"
expect_eq "$(code)" RequestExpired "RequestExpired (future)"
signed_post "$BODYQ" "$(now -600)" "$AWS_KEY" "$AWS_SECRET" us-east-1
expect_status 400 "10 minutes behind"
expect_eq "$(code)" RequestExpired "RequestExpired (past)"

signed_post "$BODYQ" "$(now)" AKIAUNKNOWNKEY000000 "$AWS_SECRET" us-east-1
expect_status 401 "unknown access key id"
expect_eq "$(code)" AuthFailure "AuthFailure"
signed_post "$BODYQ" "$(now)" "$AWS_KEY" "not-the-secret" us-east-1
expect_status 403 "wrong secret"
expect_eq "$(code)" SignatureDoesNotMatch "SignatureDoesNotMatch (secret)"
signed_post "$BODYQ" "$(now)" "$AWS_KEY" "$AWS_SECRET" us-east-1 ec2 \
	'Action=DescribeAvailabilityZones&Version=2016-11-15&ZoneName.1=us-east-1a'
expect_status 403 "body changed after signing"
expect_eq "$(code)" SignatureDoesNotMatch "SignatureDoesNotMatch (tampered body)"
signed_post "$BODYQ" "$(now)" "$AWS_KEY" "$AWS_SECRET" us-east-1 s3
expect_eq "$(code)" SignatureDoesNotMatch "scoped to another service ($HTTP)"
signed_post "$BODYQ" "$(now)" "$AWS_KEY" "$AWS_SECRET" xx-nowhere-9
expect_eq "$(code)" AuthFailure "region unknown to the scenario ($HTTP)"
grep -q 'xx-nowhere-9' "$BODY_FILE" && ok "message names the region" || fail "region message"

# curl's own signer, with a bad secret, an unknown key
ec2 "$BODYQ" "$AWS_KEY" "wrong"
expect_eq "$(code)" SignatureDoesNotMatch "curl --aws-sigv4 with a wrong secret"
ec2 "$BODYQ" AKIAXXXXXXXXXXXXXXXX "$AWS_SECRET"
expect_eq "$(code)" AuthFailure "curl --aws-sigv4 with an unknown key"

# no / garbled Authorization
req POST "$AWS_URL/" -H "Content-Type: $CT" --data-binary "$BODYQ"
expect_status 401 "no Authorization header"
expect_eq "$(code)" MissingAuthenticationToken "MissingAuthenticationToken"
req POST "$AWS_URL/" -H "Content-Type: $CT" -H "X-Amz-Date: $(now)" \
	-H "Authorization: AWS4-HMAC-SHA256 Credential=$AWS_KEY/20260101/us-east-1/ec2/aws4_request" \
	--data-binary "$BODYQ"
expect_status 400 "Authorization without SignedHeaders/Signature"
expect_eq "$(code)" IncompleteSignature "IncompleteSignature"
grep -q "requires 'Signature' parameter" "$BODY_FILE" && ok "says what is missing" || fail "IncompleteSignature message"
req POST "$AWS_URL/" -H "Content-Type: $CT" \
	-H "Authorization: AWS4-HMAC-SHA256 Credential=$AWS_KEY/20260101/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=00" \
	--data-binary "$BODYQ"
expect_eq "$(code)" IncompleteSignature "no X-Amz-Date ($HTTP)"
req POST "$AWS_URL/" -H "Content-Type: $CT" -H "Authorization: Basic dXNlcjpwdw==" \
	--data-binary "$BODYQ"
expect_eq "$(code)" IncompleteSignature "another auth scheme ($HTTP)"
req POST "$AWS_URL/" -H "Content-Type: $CT" -H "X-Amz-Date: $(now)" \
	-H "Authorization: AWS4-HMAC-SHA256 Credential=$AWS_KEY/$(now | cut -c1-8)/us-east-1/ec2/aws4_request, SignedHeaders=x-amz-date, Signature=0000000000000000000000000000000000000000000000000000000000000000" \
	--data-binary "$BODYQ"
expect_eq "$(code)" IncompleteSignature "Host not signed ($HTTP)"
# secrets never echoed
if grep -q "$AWS_SECRET" "$BODY_FILE"; then fail "secret in an error body"; else ok "no secret in error bodies"; fi

curl -s "$CTL_URL/_sim/counters" >"$T/c.json"
n=$(jget "$T/c.json" 'j["faults_by_cloud"]["aws"]["auth_refused"]')
[ "$n" -ge 14 ] && ok "auth refusals counted ($n)" || fail "auth_refused counter $n"

finish
