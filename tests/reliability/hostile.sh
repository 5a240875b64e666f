#!/bin/sh
# hostile.sh -- the hostile input corpus (tests/hostile/, see its README)
# against the CLI and a running daemon: bad specs (static and generated),
# broker configs, policies, API requests and a slowloris, and valid specs
# with special characters that must be stored and shown verbatim.  Each
# refused case: exit 1 / 4xx JSON with the expected text, within a
# timeout, nothing inserted in the store.  After the corpus the daemon
# still answers /healthz and converges a valid pool; nothing leaked.
# Env: HOSTILE_STRICT=1 fails on known (reported) bugs too;
# HOSTILE_QUICK=1 skips the generated big specs' apply pass and the
# accept cases on azure/gcp (for the short version).
. "$GB_SRC/tests/lib/integration.sh"

# every case checks its own exit status
set +e
H=$GB_SRC/tests/hostile
PY=/usr/bin/python3
[ -x $PY ] || { echo "SKIP: /usr/bin/python3 is missing"; exit 77; }
$PY -c 'import yaml' 2>/dev/null || { echo "SKIP: python3-yaml is missing (make deps)"; exit 77; }
QUICK=${HOSTILE_QUICK:-0}
# The hostile policies are found by name through policy_path, by the CLI
# and by the daemon alike: a spec sent to the daemon may not name a file
# by path (the daemon refuses to read its own host's files on a request's
# word; the put-policy-host-path API case checks that).
export GPUBROKER_INVENTORY=${GPUBROKER_INVENTORY:-$GB_SRC/examples/demo-inventory.yaml}
{
	cat "$CONF"
	printf 'policy_path: ["%s", "%s"]\n' "$GB_BUILD/share/gpubroker/policies" "$H/policy"
} >"$T/broker.yaml"
CONF=$T/broker.yaml
sim_start
daemon_start
export GPUBROKER_TOKEN=demo-admin-token
export GB_HOSTILE_UNSET_VAR_GUARD=1
unset GB_HOSTILE_UNSET_VAR
fails=0 cases=0 known=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

store_counts() {
	$PY - "$GPUBROKER_STATE" <<'PY'
import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10)
print(*[c.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
        for t in ("pools", "instances", "intents", "decisions")])
PY
}

# a pool for the API's scale cases, and a baseline
write_spec "$T/target.yaml" hostile-target aws A10G 1
gb apply -f "$T/target.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/target.log" ||
	fail "cannot apply the target pool: $(cat "$T/target.log")"
base=$(store_counts)

# --- 1. specs: validate (local) and apply through the daemon ---
mkdir -p "$T/gen"
$PY "$H/gen_specs.py" "$T/gen" || fail "gen_specs.py failed"
for f in "$H"/spec/*.yaml "$T"/gen/*.yaml; do
	n=$(basename "$f")
	exp=$(sed -n '1s/^# expect: //p' "$f")
	[ -n "$exp" ] || { bad "$n has no '# expect:' line"; continue; }
	modes="validate apply"
	case "$n" in gen-*) [ "$QUICK" = 1 ] && modes=validate ;; esac
	for m in $modes; do
		cases=$((cases + 1))
		if [ $m = validate ]; then
			timeout 20 "$GB" -c "$CONF" ${GPUBROKER_SERVER:+--server "$GPUBROKER_SERVER"} validate -f "$f" >"$T/out" 2>&1
		else
			timeout 20 "$GB" -c "$CONF" ${GPUBROKER_SERVER:+--server "$GPUBROKER_SERVER"} apply -f "$f" --auto-approve >"$T/out" 2>&1
		fi
		rc=$?
		if [ $rc != 1 ]; then
			bad "spec $n ($m): exit $rc, want 1: $(head -c 300 "$T/out")"
		elif ! grep -qF -- "$exp" "$T/out"; then
			bad "spec $n ($m): the message lacks '$exp': $(head -c 300 "$T/out")"
		elif ! $PY "$H/check_output.py" text "$T/out" >"$T/why" 2>&1; then
			bad "spec $n ($m): $(cat "$T/why")"
		fi
	done
done
echo "specs: $(ls "$H"/spec/*.yaml | wc -l) static + $(ls "$T"/gen/*.yaml | wc -l) generated, refused by validate and by apply through the daemon"
[ "$(store_counts)" = "$base" ] || bad "the store changed during the spec corpus: $base -> $(store_counts)"
# the same documents as JSON bodies of PUT /v1/pools/NAME
$PY "$H/api_cases.py" "$GPUBROKER_SERVER" "$GPUBROKER_STATE" --specs "$H/spec" >"$T/api-specs.txt" 2>&1 ||
	bad "specs through the API: $(grep FAIL "$T/api-specs.txt" | head -n 5)"
tail -n 1 "$T/api-specs.txt"
cases=$((cases + $(grep -c '^ok' "$T/api-specs.txt")))

# --- 2. broker configs: validate, and serve must refuse to start ---
for f in "$H"/config/*.yaml; do
	n=$(basename "$f")
	exp=$(sed -n '1s/^# expect: //p' "$f")
	cases=$((cases + 2))
	timeout 20 "$GB" validate --kind config -f "$f" >"$T/out" 2>&1
	rc=$?
	{ [ $rc = 1 ] && grep -qF -- "$exp" "$T/out"; } ||
		bad "config $n (validate): exit $rc, want 1 with '$exp': $(head -c 300 "$T/out")"
	GPUBROKER_STATE=$T/cfg-state.db timeout 20 "$GB" -c "$f" serve --listen 127.0.0.1:0 >"$T/out" 2>&1
	rc=$?
	{ [ $rc = 1 ] && grep -qF -- "$exp" "$T/out"; } ||
		bad "config $n (serve): exit $rc, want 1 with '$exp': $(head -c 300 "$T/out")"
	$PY "$H/check_output.py" text "$T/out" >"$T/why" 2>&1 || bad "config $n: $(cat "$T/why")"
done
check "! grep -rq 'wJalrXUtnFEMI\\|hunter2\\|AKIAEXAMPLE' $T/out" "no inline secret is echoed"
echo "configs: $(ls "$H"/config/*.yaml | wc -l) refused by validate and by serve"

# --- 3. policies: plan --explain, locally and through the daemon ---
for f in "$H"/policy/*.lua; do
	n=$(basename "$f" .lua)
	erc=$(sed -n 's/^-- expect-rc: //p' "$f")
	[ -n "$erc" ] || continue # a helper
	exp=$(sed -n 's/^-- expect: //p' "$f")
	knownbug=$(sed -n 's/^-- known: //p' "$f")
	pols=$(sed -n 's/^-- policies: //p' "$f")
	list=$n
	[ -n "$pols" ] && list=$(echo $pols | sed 's/ /, /g')
	write_spec "$T/pol.yaml" "pol-$(echo "$n" | tr _ -)" aws A10G 1 on-demand "policy: [$list]"
	for where in local daemon; do
		cases=$((cases + 1))
		if [ $where = local ]; then
			srv=""
		else
			srv=$GPUBROKER_SERVER
		fi
		timeout 60 "$GB" -c "$CONF" ${srv:+--server "$srv"} plan -f "$T/pol.yaml" --explain >"$T/out" 2>&1
		rc=$?
		timeout 60 "$GB" -c "$CONF" ${srv:+--server "$srv"} plan -f "$T/pol.yaml" --explain -o json >"$T/out.json" 2>/dev/null
		why=""
		if [ $rc != "$erc" ]; then
			why="exit $rc, want $erc: $(head -c 300 "$T/out")"
		elif ! grep -qF -- "$exp" "$T/out"; then
			why="the output lacks '$exp'"
		elif ! $PY "$H/check_output.py" text "$T/out" >"$T/why" 2>&1 ||
			! $PY "$H/check_output.py" refusals "$T/out.json" >"$T/why" 2>&1; then
			why=$(cat "$T/why")
		fi
		if [ -n "$why" ] && [ -n "$knownbug" ] && [ "${HOSTILE_STRICT:-0}" != 1 ]; then
			echo "KNOWN: policy $n ($where): $knownbug -- $why" | cut -c1-400
			known=$((known + 1))
		elif [ -n "$why" ]; then
			bad "policy $n ($where): $why"
		elif [ -n "$knownbug" ]; then
			echo "FIXED? policy $n ($where) passes now; drop its '-- known:' line"
		fi
	done
	check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $GPUBROKER_SERVER/healthz)\" = 200 ]" "policy $n: the daemon keeps serving"
done
[ "$(store_counts)" = "$base" ] || bad "the store changed during the policy corpus: $base -> $(store_counts)"

# --- 4. the API corpus (raw HTTP), slowloris included ---
$PY "$H/api_cases.py" "$GPUBROKER_SERVER" "$GPUBROKER_STATE" >"$T/api.txt" 2>&1 ||
	bad "API corpus: $(grep FAIL "$T/api.txt" | head -n 10)"
grep '^KNOWN\|^FIXED\|slowloris' "$T/api.txt" | cut -c1-300
tail -n 1 "$T/api.txt"
cases=$((cases + $(grep -c '^ok\|^KNOWN' "$T/api.txt")))
known=$((known + $(grep -c '^KNOWN' "$T/api.txt")))
# a known bug may have inserted its pool: take it away again
gb destroy hostile-lua --auto-approve >/dev/null 2>&1 || true

# --- 5. accepted: special characters stored and shown verbatim ---
clouds="aws azure gcp"
[ "$QUICK" = 1 ] && clouds=aws
for c in $clouds; do
	case $c in aws) g=A10G ;; azure) g=T4 ;; gcp) g=L4 ;; esac
	sed "s/CLOUD/$c/g; s/GPU/$g/" "$H/accept/special-labels.yaml" >"$T/acc-$c.yaml"
	cases=$((cases + 1))
	gb apply -f "$T/acc-$c.yaml" --auto-approve --wait --timeout 60s >"$T/out" 2>&1 ||
		{ bad "accept $c: apply failed: $(tail -n 3 "$T/out")"; continue; }
	gb status "$c-special" -o json >"$T/st.json" 2>&1 && $PY "$H/check_output.py" json "$T/st.json" >"$T/why" ||
		bad "accept $c: status -o json: $(cat "$T/why")"
	gb status "$c-special" >"$T/st.txt" 2>&1 && $PY "$H/check_output.py" text "$T/st.txt" >"$T/why" ||
		bad "accept $c: status table: $(cat "$T/why")"
	gb cost --by label:shell -o json >"$T/cost.json" 2>&1 && $PY "$H/check_output.py" json "$T/cost.json" >"$T/why" ||
		bad "accept $c: cost -o json: $(cat "$T/why")"
	gb cost --by label:shell >"$T/cost.txt" 2>&1 && $PY "$H/check_output.py" text "$T/cost.txt" >"$T/why" ||
		bad "accept $c: cost table: $(cat "$T/why")"
	curl -sf "$CONTROL/_sim/instances?live=1&cloud=$c" >"$T/sim.json"
	$PY - "$T/acc-$c.yaml" "$T/sim.json" "$c" <<'PY' >"$T/why" 2>&1 || bad "accept $c: $(cat "$T/why")"
import json, re, sys, yaml
want = yaml.safe_load(open(sys.argv[1]))["pool"]["labels"]
cloud = sys.argv[3]
inst = [i for i in json.load(open(sys.argv[2]))["instances"]
        if i["tags"].get("gpubroker-pool") == cloud + "-special"]
if len(inst) != 1:
    sys.exit("%d instances in cloudsim, want 1" % len(inst))
tags = inst[0]["tags"]
for k, v in want.items():
    got = tags.get(k)
    if cloud == "gcp":
        # GCE label values: lowercase letters, digits, _ and - (<= 63)
        if got is None or not re.fullmatch(r"[a-z0-9_-]{0,63}", got):
            sys.exit("gcp label %s = %r is not a valid GCE label value" % (k, got))
    elif got != v:
        sys.exit("tag %s = %r, want %r verbatim" % (k, got, v))
print("ok")
PY
	echo "ok: accept $c: special characters in 7 label values: $( [ $c = gcp ] && echo 'mapped to valid GCE labels' || echo 'tagged verbatim'); status and cost output intact"
	if [ "$c" = aws ]; then
		# the label is a cost group, shown verbatim
		jq -e '[.groups[].key] | index("$(rm -rf /) `id` | & ; > < *") != null' "$T/cost.json" >/dev/null ||
			bad "cost --by label:shell does not group by the label value: $(jq -c '.groups' "$T/cost.json")"
	fi
	gb destroy "$c-special" --auto-approve >/dev/null 2>&1 || bad "accept $c: destroy failed"
done

# --- 6. after the corpus: still serving, still converging, nothing leaked ---
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $GPUBROKER_SERVER/healthz)\" = 200 ]" "the daemon answers /healthz after $cases cases"
check "kill -0 $D_PID" "the daemon process is the one started before the corpus"
write_spec "$T/after.yaml" hostile-after gcp L4 2
gb apply -f "$T/after.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/after.log" ||
	fail "a valid apply after the corpus failed: $(cat "$T/after.log")"
check "[ \"\$(sim_live hostile-after)\" = 2 ]" "a valid pool still converges after the corpus"
for p in hostile-after hostile-target; do gb destroy $p --auto-approve >/dev/null 2>&1 || bad "destroy $p"; done
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
$PY - "$GPUBROKER_STATE" <<'PY' || bad "refused input reached the store"
import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
names = sorted(r[0] for r in c.execute("SELECT name FROM pools"))
ok = {"hostile-target", "hostile-after", "hostile-lua", "aws-special", "azure-special", "gcp-special"}
bad = [n for n in names if n not in ok]
if bad:
    sys.exit("pools from refused input: %r" % bad)
print("ok: the store holds only the pools of accepted input: %s" % ", ".join(names))
PY
daemon_stop
echo "$cases hostile cases, $fails failed, $known known (reported) bugs"
[ "$fails" = 0 ] || exit 1
echo PASS
