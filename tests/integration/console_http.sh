#!/bin/sh
# console_http.sh -- the web console's files as the daemon serves them
# (core/daemon/api_console.c), checked with curl: GET / and
# /console/NAME with the Content-Type of each extension, a strict
# Content-Security-Policy, nosniff and no framing; no inline script or
# style in the files (the policy would block them); 404 for unknown
# files and for every way out of the console's folder; 405 for other
# methods; GET /v1/whoami; a daemon without the console says so.
. "$GB_SRC/tests/lib/integration.sh"

sim_start
daemon_start
S=$GPUBROKER_SERVER

# get PATH [curl args...]: the status code; headers in $T/h, body in $T/b
get() {
	_p=$1
	shift
	curl -s --path-as-is -D "$T/h" -o "$T/b" -w '%{http_code}' "$@" "$S$_p"
}
hdr() { # hdr NAME: the header's value in $T/h
	tr -d '\r' <"$T/h" | sed -n "s/^$1: //Ip" | head -n 1
}

check "grep -q \"web console: \$S/ (sign in with an API token\" $T/daemon.log" "the daemon's log says where the console is"
check "[ \$(get /) = 200 ]" "GET / answers"
check "[ \"\$(hdr Content-Type)\" = 'text/html; charset=utf-8' ]" "as text/html; charset=utf-8"
check "grep -q '<script src=\"/console/console.js\"' $T/b" "the console's page, loading its script from /console/"
csp=$(hdr Content-Security-Policy)
check "echo \"\$csp\" | grep -q \"^default-src 'self'; script-src 'self'; style-src 'self';\"" \
	"a Content-Security-Policy allowing only this origin ($csp)"
check "! echo \"\$csp\" | grep -q -e unsafe -e '\\*' -e 'http'" "with no unsafe-inline, unsafe-eval, wildcard or other host"
check "echo \"\$csp\" | grep -q \"frame-ancestors 'none'\" && echo \"\$csp\" | grep -q \"object-src 'none'\"" \
	"no framing, no plugins"
check "[ \"\$(hdr X-Content-Type-Options)\" = nosniff ] && [ \"\$(hdr X-Frame-Options)\" = DENY ] && [ \"\$(hdr Referrer-Policy)\" = no-referrer ]" \
	"nosniff, X-Frame-Options DENY, no referrer"
check "[ \$(get /console/) = 200 ] && grep -q '<title>gpubroker console</title>' $T/b" "/console/ is the page too"

# each extension's type
for pair in console.js:'text/javascript; charset=utf-8' console.css:'text/css; charset=utf-8' \
	favicon.svg:image/svg+xml index.html:'text/html; charset=utf-8'; do
	f=${pair%%:*} ty=${pair#*:}
	check "[ \$(get /console/$f) = 200 ] && [ \"\$(hdr Content-Type)\" = '$ty' ] && cmp -s $T/b $GB_SRC/console/$f" \
		"/console/$f: the file, as $ty"
	check "[ -n \"\$(hdr Content-Security-Policy)\" ] && [ \"\$(hdr X-Content-Type-Options)\" = nosniff ]" \
		"/console/$f: with the policy and nosniff"
done
check "[ \"\$(curl -s -I $S/console/console.js | tr -d '\\r' | sed -n 's/^Content-Length: //Ip')\" = \$(wc -c <$GB_SRC/console/console.js) ]" \
	"HEAD: the file's length, no body needed"

# no inline script or style anywhere: the policy would refuse them
for f in "$GB_SRC"/console/*.html; do
	check "! grep -n -i -E '<script>|<script[^>]*>[^<]|<style|style=|[[:space:]]on[a-z]+=|javascript:' $f" \
		"$(basename "$f"): no inline script, style or handler"
done
check "! grep -n -E 'innerHTML|outerHTML|insertAdjacentHTML|document\\.write|eval\\(|new Function|setAttribute\\(.style' $GB_SRC/console/*.js" \
	"the script builds the page with DOM calls and text only (no HTML strings, no eval)"
check "! grep -n -E 'https?://' $GB_SRC/console/*.js $GB_SRC/console/*.html $GB_SRC/console/*.css | grep -v 'www.w3.org/2000/svg'" \
	"no other host named in the console's files"

# unknown files and every way out of the folder: 404, nothing served.
# (A real file outside the console with a served extension:
# drivers/aws/data/offers.json, next to console/ in the data folder.)
[ -f "$GB_BUILD/share/gpubroker/drivers/aws/data/offers.json" ] || fail "no offers.json to aim at"
for p in /console/nope.js /console/index.htm /console/console.js.map /console/.hidden.js \
	/console/-x.js /console/console /console/sub/console.js \
	/console/../drivers/aws/data/offers.json /console/..%2fdrivers%2faws%2fdata%2foffers.json \
	/console/%2e%2e/drivers/aws/data/offers.json /console/%2E%2E%2Fdrivers%2Faws%2Fdata%2Foffers.json \
	/console/....//drivers/aws/data/offers.json /console//etc/passwd /console/..\\..\\etc\\passwd \
	/console/../../../../../../etc/passwd /console/console.js/ \
	"/console/console.js%3F.html" /console/%63onsole.js; do
	code=$(get "$p")
	check "[ $code = 404 ] && ! grep -q -e 'root:' -e '\"offers\"' -e 'instance_type' $T/b" "GET $p: 404 ($code), nothing served"
	check "jq -e '.error.code == \"NotFound\"' $T/b >/dev/null" "GET $p: the API's error shape"
done
check "[ \$(get /console/console.js%00.html) = 400 ] && jq -e '.error.code == \"BadRequest\"' $T/b >/dev/null" \
	"GET /console/console.js%00.html: 400 (an encoded NUL is refused before routing)"
check "[ \$(get /etc/passwd) = 401 ]" "outside /console/ and /, paths are the API's (401 without a token)"

# methods
check "[ \$(get / -X POST) = 405 ] && jq -e '.error.message | test(\"read with GET\")' $T/b >/dev/null" \
	"POST /: 405, saying the files are read with GET"
check "[ \$(get /console/console.js -X DELETE) = 405 ]" "DELETE a console file: 405"

# who the console is signed in as
check "[ \$(get /v1/whoami -H 'Authorization: Bearer demo-ci-token') = 200 ] && jq -e '. == {\"name\": \"demo-ci\", \"role\": \"operator\", \"team\": \"research\"}' $T/b >/dev/null" \
	"GET /v1/whoami: the token's name, role and team"
check "[ \$(get /v1/whoami -H 'Authorization: Bearer demo-admin-token') = 200 ] && jq -e '.role == \"admin\" and .team == null' $T/b >/dev/null" \
	"an admin without a team"
check "[ \$(get /v1/whoami -H 'Authorization: Bearer wrong') = 401 ] && jq -e '.error.message == \"the bearer token is not valid for this broker\"' $T/b >/dev/null" \
	"a wrong token: 401 with the API's message"
check "[ \$(get /v1/whoami) = 401 ] && [ -z \"\$(hdr Content-Security-Policy)\" ] && [ \"\$(hdr X-Content-Type-Options)\" = nosniff ]" \
	"no token: 401; API answers carry nosniff too"

# the plan preview sends the spec file as it is (YAML); the daemon
# expands no ${VAR} of its own environment into it
yplan() { # yplan FILE [content-type]: status; body in $T/b
	curl -s -o "$T/b" -w '%{http_code}' -X POST -H 'Authorization: Bearer demo-viewer-token' \
		-H "Content-Type: ${2:-application/yaml}" --data-binary "@$1" "$S/v1/plan?explain=1"
}
check "[ \$(yplan $GB_SRC/examples/gdpr-eu.yaml) = 200 ] && jq -e '.plans | length == 2 and (.[0].candidates | length) > 0 and (.[0].refusals | length) > 0' $T/b >/dev/null" \
	"POST /v1/plan takes a spec file as YAML (Content-Type: application/yaml): candidates and refusals"
check "[ \$(yplan $GB_SRC/examples/gdpr-eu.yaml 'text/yaml; charset=utf-8') = 200 ]" "text/yaml with a charset too"
printf 'pool:\n  name: envy\n  team: research\n  count: 1\n  gpu: {model: A10G}\n  image: {aws: "${HOME}", gcp: "${NOPE:-img-1}"}\n' >"$T/env.yaml"
check "[ \$(yplan $T/env.yaml) = 400 ] && jq -e '.error.details[0] | test(\"^line 6 column [0-9]+: environment variable HOME is not set\")' $T/b >/dev/null" \
	"a \${VAR} in a YAML spec is not read from the daemon's environment (400, where)"
check "! grep -q \"\$HOME\" $T/b" "and the daemon's value appears nowhere in the answer"
check "[ \$(yplan $GB_SRC/examples/gdpr-eu.yaml application/json) = 400 ] && jq -e '.error.code == \"InvalidJSON\"' $T/b >/dev/null" \
	"without the YAML type the body is JSON, as before"

# a pool's placement decision, as recorded by its apply
check "[ \$(get /v1/pools/nope/plan -H 'Authorization: Bearer demo-viewer-token') = 404 ]" "no pool: 404"
write_spec "$T/d.yaml" decided aws A10G 1 on-demand
GPUBROKER_SERVER=$S GPUBROKER_TOKEN=demo-ci-token gb apply --auto-approve -f "$T/d.yaml" >/dev/null 2>"$T/apply.err" ||
	fail "apply: $(cat "$T/apply.err")"
check "[ \$(get /v1/pools/decided/plan -H 'Authorization: Bearer demo-viewer-token') = 200 ] && jq -e '(.time | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z\$\")) and .plan.pool == \"decided\" and (.plan.candidates[0].cloud == \"aws\") and (.plan.refused | length) > 0' $T/b >/dev/null" \
	"GET /v1/pools/NAME/plan: the plan its apply walked (candidates, refusals by rule)"
check "[ \$(get /v1/pools/decided/plan -H 'Authorization: Bearer demo-other-team-token') = 404 ]" "another team's pool: 404, as for the pool itself"
check "[ \$(get /v1/pools/decided/spec -H 'Authorization: Bearer demo-viewer-token') = 200 ] && jq -e '.spec.name == \"decided\" and .spec.team == \"research\" and .spec.count == 1 and (.spec | has(\"user_data\") | not)' $T/b >/dev/null" \
	"GET /v1/pools/NAME/spec: the spec as applied (no user_data here: none given)"
check "[ \$(get /v1/pools/decided/spec -H 'Authorization: Bearer demo-other-team-token') = 404 ]" "another team's pool's spec: 404"

# a daemon whose data folder has no console says what is missing
daemon_stop
mkdir -p "$T/data"
cp -r "$GB_BUILD/share/gpubroker/policies" "$T/data/"
GPUBROKER_DATA_DIR=$T/data daemon_start
S=$GPUBROKER_SERVER
check "[ \$(get /) = 404 ] && jq -e '.error.message | test(\"web console is not installed: .*/data/console/index.html is missing\")' $T/b >/dev/null" \
	"without its files: 404 saying the console is not installed, and where it looked"
echo PASS
