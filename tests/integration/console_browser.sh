#!/bin/sh
# console_browser.sh -- the daemon's web console in a real browser
# (Debian's chromium and chromium-driver through python3-selenium; make
# deps installs them): sign in (a wrong token refused with the API's
# words), a pool applied with the CLI appears and changes live, its page
# lists instances and streams events, an operator scales it, a viewer
# is refused by the API, an admin destroys it (confirmed by name), cost
# and offers; no request leaves the daemon's origin and the token is in
# no URL.  Screenshots of each view: $GB_BUILD/console-shots/.
. "$GB_SRC/tests/lib/integration.sh"

PY=/usr/bin/python3
[ -x $PY ] || { echo "SKIP: /usr/bin/python3 is missing"; exit 77; }
$PY -c 'import selenium' 2>/dev/null ||
	{ echo "SKIP: python3-selenium is not installed (make deps installs it)"; exit 77; }
for f in /usr/bin/chromium /usr/bin/chromedriver; do
	[ -x "$f" ] || { echo "SKIP: $f is missing (make deps installs chromium and chromium-driver)"; exit 77; }
done

# aws instances stay pending 3 s: the list shows them start
sed -e "s|\.\./\.\./\.\./drivers/|$GB_SRC/drivers/|" \
	-e 's|aws: {pending_ms: 400,|aws: {pending_ms: 3000,|' \
	"$GB_SRC/tests/integration/scenarios/fast.yaml" >"$T/scenario.yaml"
grep -q 'pending_ms: 3000' "$T/scenario.yaml" || fail "could not derive the scenario"
sim_start "$T/scenario.yaml"
daemon_start

write_spec "$T/a.yaml" console-a aws A10G 2 on-demand "purpose: training" "lifecycle: {ttl: 4h}" \
	"user_data: \"#!/bin/sh\\necho do-not-show\""
SHOTS=$GB_BUILD/console-shots
rm -rf "$SHOTS"
mkdir -p "$SHOTS" "$T/browser"
GB=$GB CONF=$CONF SPEC_A=$T/a.yaml SPEC_PLAN=$GB_SRC/examples/gdpr-eu.yaml timeout 300 $PY "$GB_SRC/tests/lib/console_browser.py" \
	"$GPUBROKER_SERVER" "$SHOTS" "$T/browser" && rc=0 || rc=$?
[ "$rc" = 77 ] && exit 77
[ "$rc" = 0 ] || fail "the browser test failed (exit $rc); screenshots in $SHOTS"
n=$(ls "$SHOTS"/*.png | wc -l)
check "[ $n -ge 10 ]" "$n screenshots saved in $SHOTS"
echo PASS
