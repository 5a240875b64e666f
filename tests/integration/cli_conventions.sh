#!/bin/sh
# cli_conventions.sh -- small conventions scripts rely on (issue 19, point 6):
#   1. `status` with no pools says so (stderr, table mode); -o json is [];
#   2. `destroy` of a pool that does not exist fails (exit 1, "no pool
#      named"); with --ignore-not-found it exits 0 with a note -- locally
#      and through a daemon (--server);
#   3. NO_COLOR, TERM=dumb and non-terminals get no escape codes: apply
#      --wait on a pseudo-terminal draws its live line with CR/erase-line,
#      and not under NO_COLOR or TERM=dumb; the demo's step titles are bold
#      only on a terminal.
. "$GB_SRC/tests/lib/integration.sh"

command -v script >/dev/null 2>&1 ||
	fail "script(1) is not installed (Debian bsdutils; make deps installs it)"
sim_start

conventions() { # $1: where (local or daemon)
	gb status >"$T/st.out" 2>"$T/st.log" || fail "$1: status failed: $(cat "$T/st.log")"
	check "[ ! -s $T/st.out ] && grep -q '^no pools' $T/st.log" "$1: status with no pools says 'no pools' (on stderr)"
	check "[ \"\$(gb status -o json)\" = '[]' ]" "$1: status -o json with no pools is []"

	rc=0
	gb destroy nosuch --auto-approve >"$T/d.out" 2>"$T/d.log" || rc=$?
	check "[ $rc = 1 ] && grep -q 'no pool named nosuch' $T/d.log" "$1: destroy of a missing pool fails (exit $rc)"
	rc=0
	gb destroy nosuch --auto-approve --ignore-not-found >"$T/di.out" 2>"$T/di.log" || rc=$?
	check "[ $rc = 0 ]" "$1: destroy --ignore-not-found of a missing pool exits 0 (exit $rc: $(cat "$T/di.log"))"
	check "grep -q 'no pool named nosuch; nothing to destroy' $T/di.log && [ ! -s $T/di.out ]" \
		"$1: and says there was nothing to destroy"
	check "[ \"\$(grep -c . $T/di.log)\" = 1 ]" "$1: in one line, not an error"
}

conventions local
# an existing pool is still destroyed with the flag
write_spec "$T/p.yaml" conv aws A10G 1
gb apply -f "$T/p.yaml" --auto-approve --wait --timeout 60s >/dev/null 2>"$T/a.log" || fail "apply failed: $(cat "$T/a.log")"
gb destroy conv --auto-approve --ignore-not-found >"$T/dc.out" 2>"$T/dc.log" || fail "destroy --ignore-not-found of a pool failed"
check "grep -q 'pool conv destroyed' $T/dc.out && [ \"\$(sim_live)\" = 0 ]" "destroy --ignore-not-found destroys a pool that exists"

daemon_start
export GPUBROKER_TOKEN=demo-admin-token
conventions daemon
daemon_stop
unset GPUBROKER_SERVER GPUBROKER_TOKEN

# on_tty OUT ENV... -- CMD...: gpubroker CMD on a pseudo-terminal with ENV
on_tty() {
	_out=$1
	shift
	_env=""
	while [ "$1" != "--" ]; do
		_env="$_env $1"
		shift
	done
	shift
	_cmd="\"$GB\" -c \"$CONF\""
	for _a in "$@"; do
		_cmd="$_cmd \"$_a\""
	done
	# shellcheck disable=SC2086
	env -u GB_NO_TTY -u NO_COLOR TERM=xterm $_env script -qefc "$_cmd" /dev/null </dev/null >"$_out" 2>&1
}
esc=$(printf '\033')
for how in plain NO_COLOR=1 TERM=dumb; do
	write_spec "$T/t.yaml" tty-$(echo $how | tr 'A-Z_=' 'a-z--' | cut -c1-8) aws A10G 1
	n=$(sed -n 's/^  name: //p' "$T/t.yaml")
	if [ $how = plain ]; then e=""; else e=$how; fi
	on_tty "$T/tty.out" $e -- apply -f "$T/t.yaml" --auto-approve --wait --timeout 60s ||
		fail "apply on a terminal ($how): $(tail -5 "$T/tty.out")"
	check "grep -q '$n running' $T/tty.out" "$how: events are printed"
	if [ $how = plain ]; then
		check "grep -q '$esc' $T/tty.out" "a terminal: the live line uses escape codes"
	else
		check "! grep -q '$esc' $T/tty.out" "$how: no escape codes at all"
	fi
	gb destroy "$n" --auto-approve >/dev/null 2>&1 || fail "destroy $n failed"
done

# the demo's step titles: bold on a terminal only
say_def=$(sed -n '/^say() {/,/^}/p' "$GB_SRC/scripts/demo.sh")
check "[ -n \"\$say_def\" ]" "scripts/demo.sh has say()"
printf 'step=0\n%s\nsay hello\n' "$say_def" >"$T/say.sh"
sh "$T/say.sh" >"$T/say.out"
check "grep -q '^== 1. hello\$' $T/say.out && ! grep -q '$esc' $T/say.out" "demo titles into a pipe: plain"
env -u NO_COLOR TERM=xterm script -qefc "sh $T/say.sh" /dev/null </dev/null >"$T/say-tty.out" 2>&1
check "grep -q '$esc' $T/say-tty.out" "on a terminal: bold"
NO_COLOR=1 TERM=xterm script -qefc "sh $T/say.sh" /dev/null </dev/null >"$T/say-nc.out" 2>&1
check "grep -q '== 1. hello' $T/say-nc.out && ! grep -q '$esc' $T/say-nc.out" "on a terminal with NO_COLOR: plain"
echo PASS
