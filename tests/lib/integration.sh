# integration.sh -- sourced by integration tests: start cloudsim and the daemon as
# real processes on 127.0.0.1 with ephemeral ports, with a private state
# directory, and check the truth through cloudsim's control API.
#
#   . "$GB_SRC/tests/lib/integration.sh"
#   sim_start [SCENARIO]        # exports the drivers' env from /_sim/env
#   gb apply -f spec.yaml ...   # the CLI with the cloudsim broker config
#   daemon_start                # GPUBROKER_SERVER points at it
#   sim_live [POOL]             # live instances in cloudsim
#   check COND MESSAGE / fail MESSAGE
#
# Requires: GB_BUILD, GB_SRC (set by tests/run.sh), curl, jq.
set -eu

: "${GB_BUILD:?run through tests/run.sh or set GB_BUILD}"
: "${GB_SRC:?run through tests/run.sh or set GB_SRC}"
GB=$GB_BUILD/bin/gpubroker
SIMBIN=$GB_BUILD/bin/cloudsim
CONF=$GB_SRC/examples/cloudsim-broker.yaml
for _f in "$GB" "$SIMBIN"; do
	if [ ! -x "$_f" ]; then
		echo "SKIP: $_f is not built"
		exit 77
	fi
done
for _t in curl jq; do
	command -v "$_t" >/dev/null || { echo "SKIP: $_t is not installed (make deps)"; exit 77; }
done

# jq definitions for the times gpubroker writes in JSON (RFC 3339 UTC
# with milliseconds, docs/json.md): jq "$JQ_TIME .created_at | secs"
# (unix s), ... | ms (unix ms); null stays null.
JQ_TIME='def secs: if . == null then null else .[0:19] + "Z" | fromdateiso8601 end;
def ms: if . == null then null else (.[0:19] + "Z" | fromdateiso8601) * 1000 + (.[20:23] | tonumber) end;'

T=$(mktemp -d "${TMPDIR:-/tmp}/gbtest.XXXXXX")
SIM_PID=""
D_PID=""
export GPUBROKER_STATE="$T/state.db"
export GPUBROKER_PORT=0
export GPUBROKER_RECONCILE_PERIOD=${GPUBROKER_RECONCILE_PERIOD:-2s}
export GPUBROKER_BROKER_ID=${GPUBROKER_BROKER_ID:-gbtest}
export GB_NO_TTY=1
unset GPUBROKER_SERVER GPUBROKER_TOKEN

# BG_PIDS: other background processes a test started (an events
# --follow, a load generator); killed on exit, so a failing test does not
# leave them holding its output open.
BG_PIDS=
lib_cleanup() {
	rc=$?
	for _p in $BG_PIDS; do
		kill -TERM "$_p" 2>/dev/null || true
	done
	if [ -n "$D_PID" ] && kill -0 "$D_PID" 2>/dev/null; then
		kill -TERM "$D_PID" 2>/dev/null || true
		wait "$D_PID" 2>/dev/null || true
	fi
	if [ -n "$SIM_PID" ] && kill -0 "$SIM_PID" 2>/dev/null; then
		kill -TERM "$SIM_PID" 2>/dev/null || true
		wait "$SIM_PID" 2>/dev/null || true
	fi
	if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
		echo "---- test failed (exit $rc); logs in $T:"
		for _l in "$T"/*.log; do
			[ -f "$_l" ] || continue
			echo "---- $_l (last 40 lines)"
			tail -n 40 "$_l"
		done
	else
		rm -rf "$T"
	fi
	exit "$rc"
}
trap lib_cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# check 'shell condition' 'message'
check() {
	if eval "$1"; then
		echo "ok: $2"
	else
		fail "$2 (condition: $1)"
	fi
}

# wait_until SECONDS 'shell condition'
wait_until() {
	_t=$1
	_i=0
	while [ "$_i" -lt $((_t * 4)) ]; do
		if eval "$2" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.25
		_i=$((_i + 1))
	done
	return 1
}

# gb ARGS...: the CLI against the cloudsim broker config (local mode, or
# the daemon when GPUBROKER_SERVER is set).  An explicit -c wins over a
# GPUBROKER_SERVER from the environment, so the daemon's address goes on
# the command line as --server too (unless ARGS name --state or --server)
gb() {
	_gb_srv=${GPUBROKER_SERVER:-}
	for _gb_a in "$@"; do
		case $_gb_a in
		--state | --state=* | --server | --server=*) _gb_srv= ;;
		esac
	done
	"$GB" -c "$CONF" ${_gb_srv:+--server "$_gb_srv"} "$@"
}

sim_start() {
	_scen=${1:-$GB_SRC/tests/integration/scenarios/fast.yaml}
	"$SIMBIN" --scenario "$_scen" --port 0 >"$T/sim.out" 2>"$T/sim.log" &
	SIM_PID=$!
	wait_until 10 "test -s '$T/sim.out'" || fail "cloudsim did not start"
	CONTROL=$(head -n 1 "$T/sim.out" | jq -r .control)
	curl -sf "$CONTROL/_sim/env" >"$T/env.sh" || fail "cannot read /_sim/env"
	# shellcheck disable=SC1090
	. "$T/env.sh"
	export CONTROL
}

# sim_post PATH JSON
sim_post() {
	curl -sf -X POST -H 'Content-Type: application/json' -d "$2" \
		"$CONTROL$1" >"$T/post.out" || fail "POST $1 failed: $(cat "$T/post.out" 2>/dev/null)"
}

# sim_live [POOL]: live (not terminated) instances in cloudsim, of a pool
sim_live() {
	if [ $# -gt 0 ]; then
		curl -sf "$CONTROL/_sim/instances?live=1" |
			jq --arg p "$1" '[.instances[] | select(.tags["gpubroker-pool"] == $p)] | length'
	else
		curl -sf "$CONTROL/_sim/instances?live=1" | jq '[.instances[]] | length'
	fi
}

# store_live POOL: instances gpubroker thinks are live (pending/running);
# --all: a destroyed pool is gone from plain status, and has none
store_live() {
	gb status --all "$1" -o json 2>/dev/null |
		jq '[.instances[] | select(.state=="running" or .state=="pending")] | length'
}

daemon_start() {
	"$GB" -c "$CONF" serve "$@" >"$T/daemon.out" 2>>"$T/daemon.log" &
	D_PID=$!
	wait_until 15 "test -s '$T/daemon.out'" || fail "the daemon did not start"
	GPUBROKER_SERVER=$(head -n 1 "$T/daemon.out" | jq -r .listen)
	export GPUBROKER_SERVER
}

daemon_stop() {
	if [ -n "$D_PID" ]; then
		kill -TERM "$D_PID" 2>/dev/null || true
		wait "$D_PID" 2>/dev/null || true
		D_PID=""
	fi
	rm -f "$T/daemon.out"
}

# team_limits GPUS PRICE BUDGET: CONF becomes a copy of the example
# config ($T/broker.yaml) whose team "research" has these max_gpus,
# max_price_per_hour and monthly_budget (its on-prem inventory given by
# a whole path, as the copy is elsewhere)
team_limits() {
	export GPUBROKER_INVENTORY="$GB_SRC/examples/demo-inventory.yaml"
	sed -e "s|^  - {name: research, max_gpus: .*|  - {name: research, max_gpus: $1, max_price_per_hour: $2, monthly_budget: $3}|" \
		"$GB_SRC/examples/cloudsim-broker.yaml" >"$T/broker.yaml"
	grep -q "max_gpus: $1, max_price_per_hour: $2, monthly_budget: $3}" "$T/broker.yaml" ||
		fail "could not set the team limits in the test's broker config"
	CONF="$T/broker.yaml"
}

# write_spec FILE NAME CLOUD GPU COUNT [CAPACITY] [extra yaml lines...]
# PLACE='{...}' overrides the placement (default: those clouds, no
# co-location).
write_spec() {
	_f=$1 _n=$2 _c=$3 _g=$4 _k=$5 _cap=${6:-on-demand}
	if [ $# -ge 6 ]; then shift 6; else shift $#; fi
	{
		echo "pool:"
		echo "  name: $_n"
		echo "  team: research"
		echo "  count: $_k"
		echo "  gpu: {model: $_g}"
		echo "  capacity: [$_cap]"
		echo "  placement: ${PLACE:-{clouds: [$_c], colocate: none\}}"
		echo "  ssh_keys: [\"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3RrZXl0ZXN0a2V5dGVzdGtleXRlc3RrZXk1 test\"]"
		for _l in "$@"; do
			echo "  $_l"
		done
	} >"$_f"
}

# need_loopback_clients: a test that connects from addresses of its
# own (127.0.0.2 and up, to stand for other clients) needs python3 and
# those addresses; else it is skipped, saying why.  Sets PY.
need_loopback_clients() {
	PY=/usr/bin/python3
	[ -x $PY ] || { echo "SKIP: /usr/bin/python3 is missing"; exit 77; }
	if ! $PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.2", 0))' 2>/dev/null; then
		echo "SKIP: cannot bind 127.0.0.2 (the test stands for other clients with loopback addresses of their own)"
		exit 77
	fi
}

# gb_spec_json FILE: a spec file as the JSON the API takes (Debian's
# python3-yaml; make deps installs it)
gb_spec_json() {
	/usr/bin/python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' "$1" ||
		fail "cannot convert $1 to JSON (python3-yaml missing?)"
}

# api_keep METHOD PATH STATUS FILE: keep a daemon's answer (FILE, the
# body) for api_check; answers outside /v1 are not described, not kept.
api_keep() {
	case $2 in /v1/*) ;; *) return 0 ;; esac
	mkdir -p "$T/api"
	_k=$(mktemp "$T/api/answer.XXXXXX")
	cp "$4" "$_k"
	printf '%s\t%s\t%s\t%s\n' "$1" "${2%%\?*}" "$3" "$_k" >>"$T/api/index.tsv"
}

# api_check: every answer api_keep kept must be an operation and status
# of docs/openapi.json and match its schema (tests/lib/openapi_check.py,
# Debian's python3-jsonschema; without it, a note).  The check's report
# is in $T/api/check.out.
api_check() {
	[ -s "$T/api/index.tsv" ] || fail "api_check: no answer was kept"
	if ! /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
		echo "note: python3-jsonschema is missing (make deps): answers not checked against docs/openapi.json"
		return 0
	fi
	_rc=0
	/usr/bin/python3 "$GB_SRC/tests/lib/openapi_check.py" "$GB_SRC/docs/openapi.json" \
		"$T/api/index.tsv" >"$T/api/check.out" 2>&1 || _rc=$?
	cat "$T/api/check.out"
	[ $_rc = 0 ] || fail "answers that do not match docs/openapi.json (above)"
}
