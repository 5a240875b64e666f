#!/bin/sh
# remote_apply_same.sh -- apply, status and friends run one flow over two
# backends (core/cli/backend.h): locally and through a daemon (--server)
# they make the same calls and say the same things.  In particular
# `apply --auto-approve -q` asks for the plan (the diff) first both
# ways, so a spec that cannot be planned (a policy that does not exist)
# is refused before anything is stored, through the daemon as locally;
# through the daemon, -q used to skip the diff, and the pool was stored
# (exit 0) only for the daemon to fail it later.
. "$GB_SRC/tests/lib/integration.sh"

sim_start
daemon_start
SERVER=$GPUBROKER_SERVER
unset GPUBROKER_SERVER
remote_gb() { GPUBROKER_SERVER=$SERVER GPUBROKER_TOKEN=demo-ci-token gb "$@"; }

# both CMD...: runs it locally then through the daemon; lrc/rrc, and
# $T/{local,remote}.{out,err}
both() {
	gb "$@" >"$T/local.out" 2>"$T/local.err" && lrc=0 || lrc=$?
	remote_gb "$@" >"$T/remote.out" 2>"$T/remote.err" && rrc=0 || rrc=$?
}

# no pools yet: the same hint both ways
both status
check "[ \$lrc = 0 ] && [ \$rrc = 0 ] && [ ! -s $T/local.out ] && [ ! -s $T/remote.out ]" \
	"status without pools: exit 0, nothing on stdout, both ways"
check "grep -q 'no pools' $T/local.err && cmp -s $T/local.err $T/remote.err" \
	"status without pools: the same hint on stderr both ways"

# a pool that cannot be planned, applied quietly without asking
write_spec "$T/bad.yaml" nopolicy aws A10G 1 on-demand "policy: [no-such-policy]"
both apply -f "$T/bad.yaml" --auto-approve -q -o json
check "[ \$lrc = 1 ]" "apply --auto-approve -q, a missing policy: exit 1 locally"
check "[ \$rrc = 1 ]" "and exit 1 through the daemon (the diff is asked for there too)"
check "cmp -s $T/local.out $T/remote.out && [ \"\$(jq length $T/remote.out)\" = 0 ]" \
	"the same (empty) JSON both ways"
check "grep -q no-such-policy $T/local.err && grep -q no-such-policy $T/remote.err" \
	"both say which policy"
check "! gb status nopolicy >/dev/null 2>&1" "nothing was stored: status nopolicy fails"
check "! remote_gb status nopolicy >/dev/null 2>&1" \
	"and the daemon does not know the pool either"

# -q hides the plan, without -q it is shown: the same both ways
write_spec "$T/one.yaml" quiet-one aws A10G 1
remote_gb apply -f "$T/one.yaml" --auto-approve -q -o json >"$T/q.out" 2>"$T/q.err" ||
	fail "apply -q of a placeable pool through the daemon failed: $(cat "$T/q.err")"
check "[ ! -s $T/q.err ] && [ \"\$(jq -r '.[0].name' $T/q.out)\" = quiet-one ]" \
	"apply -q through the daemon: the pool, no plan on stderr"
remote_gb destroy quiet-one --auto-approve -q >/dev/null 2>"$T/d.err" ||
	fail "destroy through the daemon failed: $(cat "$T/d.err")"
echo PASS
