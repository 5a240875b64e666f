#!/bin/sh
# daemon_plan_bounds.sh -- a viewer cannot take the daemon's memory with
# POST /v1/plan?explain=1 (issue 30, point 1).  Before: 100 small pools
# with explain and limit=1000 were a 60 MB answer and 590 MB of RSS kept
# after it; 1,000 pools, 5.6 GB.  Now, against a real daemon:
#   - a request of more than daemon.plan_max_pools pools is refused at
#     once (413, naming the limit and how to ask for less);
#   - an answer that would pass daemon.plan_max_answer stops there (413,
#     saying the limit, the pool it reached and how to get less), and
#     refusals=N / a smaller limit= give a full answer under it;
#   - eight such requests at once leave the daemon's peak RSS (VmHWM,
#     from /proc) under 1 GB, its RSS afterwards under 200 MB, and
#     /healthz answering meanwhile;
#   - each token plans at most daemon.plan_per_minute pools a minute:
#     then 429 with Retry-After; another token is not affected.
. "$GB_SRC/tests/lib/integration.sh"

export GPUBROKER_INVENTORY=${GPUBROKER_INVENTORY:-$GB_SRC/examples/demo-inventory.yaml}
{
	cat "$CONF"
	echo "  plan_per_minute: 400"
	echo "  plan_max_pools: 100"
	echo "  plan_max_answer: 4MiB"
} >"$T/broker.yaml"
CONF=$T/broker.yaml
sim_start
daemon_start
S=$GPUBROKER_SERVER
[ -r "/proc/$D_PID/status" ] || { echo "SKIP: no /proc/PID/status to read the daemon's memory from"; exit 77; }
kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$D_PID/status"; }

# pools N: a spec file of N small pools (the attack's shape: 1,000 of
# them are 113 KB)
pools() {
	_i=0
	while [ $_i -lt "$1" ]; do
		printf -- '---\npool: {name: p%d, team: research, count: 1, gpu: {model: A10G}}\n' $_i
		_i=$((_i + 1))
	done >"$T/p$1.yaml"
}
pools 1000
pools 100
pools 30
# plan FILE QUERY TOKEN: the status; the answer in $T/b, headers in $T/h
plan() {
	curl -s -m 50 -D "$T/h" -o "$T/b" -w '%{http_code}' -H "Authorization: Bearer $3" \
		-H 'Content-Type: application/yaml' --data-binary "@$1" "$S/v1/plan?$2"
}
code() { jq -r .error.code "$T/b"; }
msg() { jq -r .error.message "$T/b"; }

# 1. the answer is capped, and says how to get less
st=$(plan "$T/p30.yaml" 'explain=1&limit=1000' demo-viewer-token)
check "[ $st = 413 ] && [ \"\$(code)\" = AnswerTooLarge ]" "30 pools with every refusal and 1000 candidates each: 413 AnswerTooLarge (was a 200 of 18 MB)"
check "msg | grep -q 'larger than 4194304 bytes (daemon.plan_max_answer) at pool [0-9]* of 30' && msg | grep -q 'refusals=N'" \
	"the message says the limit, where it stopped and how to ask for less: $(msg | cut -c1-160)"
st=$(plan "$T/p30.yaml" 'explain=1&limit=5&refusals=3' demo-viewer-token)
check "[ $st = 200 ] && [ \"\$(jq '.plans | length' $T/b)\" = 30 ]" "with limit=5 and refusals=3: every pool's plan"
check "[ \"\$(jq '[.plans[] | .candidates | length] | max' $T/b)\" -le 5 ] && [ \"\$(jq '.plans[0].refusals_per_rule' $T/b)\" = 3 ]" \
	"at most 5 candidates a pool, and the refusals say they are a sample of 3 a rule"
check "[ \"\$(jq '[.plans[0].refusals[] | select(.kind == \"gpu-model\")] | length' $T/b)\" = 3 ] && [ \"\$(jq '.plans[0].refused[\"gpu-model\"]' $T/b)\" -gt 3 ]" \
	"3 of a rule's refusals listed, the count of all kept"
check "[ \$(wc -c <$T/b) -lt 4194304 ]" "the answer is under the cap ($(wc -c <$T/b) bytes)"
st=$(plan "$T/p30.yaml" 'limit=100000' demo-viewer-token)
check "[ $st = 400 ] && msg | grep -q 'limit is an integer from 1 to 1000'" "limit= over 1000 candidates: 400"

# 2. the attack: 1,000 pools in one request
st=$(plan "$T/p1000.yaml" 'explain=1' demo-viewer-token)
check "[ $st = 413 ] && [ \"\$(code)\" = TooManyPools ] && msg | grep -q 'at most 100 (daemon.plan_max_pools)'" \
	"1,000 pools in one request: 413 at once, naming daemon.plan_max_pools"

# 3. eight at once (100 pools, every refusal, 1000 candidates each),
# from four tokens (two each): bounded memory, /healthz answers meanwhile
pids=""
for i in 1 2 3 4 5 6 7 8; do
	case $i in
	1 | 5) t=demo-viewer-token ;; 2 | 6) t=demo-ci-token ;;
	3 | 7) t=demo-admin-token ;; *) t=demo-other-team-token ;;
	esac
	curl -s -m 50 -o "$T/par$i" -w '%{http_code}' -H "Authorization: Bearer $t" \
		-H 'Content-Type: application/yaml' --data-binary "@$T/p100.yaml" \
		"$S/v1/plan?explain=1&limit=1000" >"$T/par$i.code" &
	pids="$pids $!"
done
hz=0
for _ in 1 2 3 4 5; do
	[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$S/healthz")" = 200 ] && hz=$((hz + 1))
done
for p in $pids; do wait "$p"; done
check "[ $hz = 5 ]" "/healthz answers while eight big plans run"
for i in 1 2 3 4 5 6 7 8; do
	check "[ \"\$(cat $T/par$i.code)\" = 413 ]" "parallel plan $i: 413 ($(jq -r .error.code "$T/par$i"))"
done
hwm=$(kb VmHWM)
check "[ $hwm -lt 1048576 ]" "the daemon's peak RSS stays under 1 GB ($((hwm / 1024)) MB)"
rss=$(kb VmRSS)
check "[ $rss -lt 204800 ]" "and its RSS afterwards under 200 MB ($((rss / 1024)) MB: the memory is given back)"

# 4. each token's plans a minute: 400 pools; the viewer planned 30 +
# 30 + 100 + 100 = 260 (the limit= refusal and the 1,000 planned none)
st=$(plan "$T/p100.yaml" 'limit=1' demo-viewer-token)
check "[ $st = 200 ]" "the viewer's next 100 pools (360 of 400 a minute) are planned"
st=$(plan "$T/p100.yaml" 'limit=1' demo-viewer-token)
ra=$(tr -d '\r' <"$T/h" | sed -n 's/^Retry-After: //Ip')
check "[ $st = 429 ] && [ \"\$(code)\" = RateLimited ] && [ -n \"$ra\" ] && [ \"$ra\" -ge 1 ]" \
	"100 more: 429 RateLimited with Retry-After: $ra"
check "msg | grep -q 'daemon.plan_per_minute'" "naming the setting: $(msg | cut -c1-140)"
st=$(plan "$T/p30.yaml" 'limit=1' demo-ci-token)
check "[ $st = 200 ]" "another token still plans"
check "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $S/healthz)\" = 200 ]" "the daemon still answers /healthz"
echo "PASS: daemon_plan_bounds"
