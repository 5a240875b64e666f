#!/bin/sh
# cli_tty.sh -- apply and destroy on a terminal (a real pseudo-terminal
# from util-linux script(1)): they ask, only "yes" goes ahead, and they
# show a live progress line; without a terminal they refuse to act
# unless --auto-approve is given.
. "$GB_SRC/tests/lib/integration.sh"

command -v script >/dev/null 2>&1 ||
	fail "script(1) is not installed (Debian bsdutils; make deps installs it)"
sim_start
write_spec "$T/p.yaml" tty-a aws A10G 2

# on_tty INPUT OUT CMD...: runs gpubroker CMD on a pseudo-terminal, typing
# INPUT; the terminal's output (stdout and stderr) goes to OUT
on_tty() {
	_in=$1 _out=$2
	shift 2
	_cmd="\"$GB\" -c \"$CONF\""
	for _a in "$@"; do
		_cmd="$_cmd \"$_a\""
	done
	printf '%s\n' "$_in" | env -u GB_NO_TTY script -qefc "$_cmd" /dev/null >"$_out" 2>&1
}

# 1. no terminal: refused without --auto-approve, nothing made
rc=0
gb apply -f "$T/p.yaml" </dev/null >"$T/n.out" 2>"$T/n.log" || rc=$?
check "[ $rc = 1 ] && grep -q 'refusing to apply without confirmation: there is no terminal to ask on' $T/n.log" \
	"apply without a terminal and without --auto-approve is refused (exit $rc)"
check "grep -q 'pass --auto-approve' $T/n.log" "and says how to go ahead"
check "[ \"\$(sim_live)\" = 0 ] && ! gb status tty-a >/dev/null 2>&1" "nothing was made or stored"

# 2. a terminal, answered "no": shows the plan, asks, applies nothing
rc=0
on_tty no "$T/no.out" apply -f "$T/p.yaml" || rc=$?
check "grep -q '+ create  2 x g5.xlarge' $T/no.out" "the plan is shown on the terminal"
check "grep -q \"Apply pool tty-a?\" $T/no.out && grep -q \"Only 'yes' will be accepted\" $T/no.out" \
	"it asks, and says what counts as consent"
check "[ $rc != 0 ] && grep -q 'pool tty-a: not applied' $T/no.out" "'no' applies nothing (exit $rc)"
check "[ \"\$(sim_live)\" = 0 ]" "nothing made"

# 3. answered "yes", with --wait: applies, with a live progress line
on_tty yes "$T/yes.out" apply -f "$T/p.yaml" --wait --timeout 60s ||
	fail "apply on a terminal answered yes: $(tail -5 "$T/yes.out")"
check "[ \"\$(sim_live tty-a)\" = 2 ] && [ \"\$(store_live tty-a)\" = 2 ]" "2 instances made"
check "grep -q \"\$(printf '\\r\\033\\\\[K')  requested [0-9] | pending [0-9] | running [0-9] | failed 0 | terminated 0 | failovers 0\" $T/yes.out" \
	"a progress line, redrawn in place (CR, erase line)"
check "grep -q 'requested 2 | pending 0 | running 2' $T/yes.out" "the last progress shows both running"
check "grep -q 'requested 2 | pending 2 | running 0' $T/yes.out" "and before that both pending"
check "grep -q 'tty-a created .*created tty-a-0' $T/yes.out" "events are printed as lines above it"

# 4. destroy on a terminal: asks too
rc=0
on_tty nope "$T/dno.out" destroy tty-a || rc=$?
check "[ $rc != 0 ] && [ \"\$(sim_live tty-a)\" = 2 ]" "destroy answered 'nope' destroys nothing"
on_tty yes "$T/dyes.out" destroy tty-a || fail "destroy on a terminal answered yes: $(tail -5 "$T/dyes.out")"
check "grep -q 'terminated 2' $T/dyes.out" "destroy's progress counts the terminations"
check "[ \"\$(sim_live)\" = 0 ]" "nothing left in cloudsim"
echo PASS
