#!/bin/sh
# cli_completion.sh -- shell completion and the man page come from the
# binary's own tables (issue 19, point 6):
#   1. `completion bash` sources cleanly in bash and completes commands,
#      each command's flags, -o's formats, subcommands and help's names
#      (driven through COMP_WORDS/COMP_CWORD as bash does), and every
#      command of `gpubroker help` is offered;
#   2. `completion zsh|fish` pass `zsh -n` / `fish -n` (skipped, saying
#      so, when the shell is not installed); fish completes commands and
#      flags (complete -C);
#   3. a shell it does not know: exit 2 naming the ones it does;
#   4. `help --man` renders (groff, or man -l) without warnings, lists
#      every command and every flag of `help COMMAND`, and is what `make`
#      wrote to build/share/man/man1/gpubroker.1.
. "$GB_SRC/tests/lib/integration.sh"

B=$GB_BUILD/bin/gpubroker
# every command, from `gpubroker help` (the two-space indented rows)
cmds=$("$B" help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' | tr '\n' ' ')
[ -n "$cmds" ] || fail "no commands in 'gpubroker help'"

# 1. bash
"$B" completion bash >"$T/gb.bash" || fail "completion bash failed"
cat >"$T/drive.bash" <<'EOF'
set -u
source "$1" || { echo "SOURCE FAILED"; exit 1; }
comp() { # words...: what completing the last word offers, sorted
	COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
	_gpubroker
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '; echo
}
EOF
drive() { # bash commands after the driver's prelude
	{ cat "$T/drive.bash"; cat; } >"$T/run.bash"
	bash "$T/run.bash" "$T/gb.bash" 2>"$T/bash.err"
}
out=$(echo 'complete -p gpubroker' | drive) || fail "the bash script does not source: $(cat "$T/bash.err")"
[ ! -s "$T/bash.err" ] || fail "sourcing the bash script printed errors: $(cat "$T/bash.err")"
check "echo '$out' | grep -q -- '-F _gpubroker gpubroker'" "bash: 'complete -p gpubroker' names the function"

check "[ \"\$(echo 'comp gpubroker sc' | drive)\" = 'scale ' ]" "bash: 'sc' completes to scale"
sorted=$(printf '%s\n' $cmds | sort | tr '\n' ' ')
check "[ \"\$(echo 'comp gpubroker \"\"' | drive)\" = '$sorted' ]" \
	"bash: an empty word offers exactly the commands of 'gpubroker help'"
check "[ \"\$(echo 'comp gpubroker apply --wait-' | drive)\" = '--wait-for ' ]" "bash: apply --wait- completes to --wait-for"
check "[ \"\$(echo 'comp gpubroker scale --ti' | drive)\" = '--timeout ' ]" "bash: scale has --timeout"
check "[ \"\$(echo 'comp gpubroker destroy --ig' | drive)\" = '--ignore-not-found ' ]" "bash: destroy's own flag"
check "[ \"\$(echo 'comp gpubroker status -o \"\"' | drive)\" = 'json table yaml ' ]" "bash: -o offers the formats"
check "[ \"\$(echo 'comp gpubroker -c x.yaml sta' | drive)\" = 'state status ' ]" "bash: a common flag and its value before the command"
check "[ \"\$(echo 'comp gpubroker offers \"\"' | drive)\" = 'refresh ' ]" "bash: offers' subcommand"
check "[ \"\$(echo 'comp gpubroker help de' | drive)\" = 'destroy ' ]" "bash: help completes command names"
check "[ \"\$(echo 'comp gpubroker completion \"\"' | drive)\" = 'bash fish zsh ' ]" "bash: completion's shells"
mkdir "$T/d" && touch "$T/d/pool.yaml"
check "[ \"\$(echo 'cd $T/d; comp gpubroker apply -f po' | drive)\" = 'pool.yaml ' ]" "bash: -f completes file names"
# every flag of every command's help is offered after "--"
for c in $cmds; do
	want=$("$B" help "$c" | sed -n '/^flags:/,/^$/p' | grep -o -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' ')
	got=$(echo "comp gpubroker $c --" | drive)
	for f in $want; do
		case " $got " in *" $f "*) ;; *) fail "bash: '$c --' does not offer $f (offers: $got)" ;; esac
	done
done
echo "ok: bash: every command's flags from its help are offered"

# 2. zsh and fish
"$B" completion zsh >"$T/_gpubroker" || fail "completion zsh failed"
"$B" completion fish >"$T/gb.fish" || fail "completion fish failed"
grep -q '^#compdef gpubroker' "$T/_gpubroker" || fail "the zsh script lacks #compdef"
for c in $cmds; do
	grep -q "^		'$c:" "$T/_gpubroker" || fail "zsh: command $c missing"
	grep -q "__fish_use_subcommand -a $c " "$T/gb.fish" || fail "fish: command $c missing"
done
echo "ok: zsh and fish scripts name every command"
if command -v zsh >/dev/null 2>&1; then
	zsh -n "$T/_gpubroker" 2>"$T/zsh.err" || fail "zsh -n: $(cat "$T/zsh.err")"
	echo "ok: zsh -n accepts the zsh script"
else
	echo "skip: zsh is not installed: its script's syntax is not checked"
fi
if command -v fish >/dev/null 2>&1; then
	fish -n "$T/gb.fish" 2>"$T/fish.err" || fail "fish -n: $(cat "$T/fish.err")"
	got=$(PATH=$GB_BUILD/bin:$PATH HOME=$T fish -c "source $T/gb.fish; complete -C 'gpubroker sc'; complete -C 'gpubroker apply --wait-'; complete -C 'gpubroker status -o '" 2>&1 | cut -f1 | tr '\n' ' ')
	check "[ '$got' = 'scale --wait-for json table yaml ' ]" "fish completes commands, flags and formats (got: $got)"
else
	echo "skip: fish is not installed: its script is not checked"
fi

# 3. an unknown shell
rc=0
"$B" completion tcsh >"$T/u.out" 2>"$T/u.err" || rc=$?
check "[ $rc = 2 ] && [ ! -s $T/u.out ] && grep -q 'use bash, zsh or fish' $T/u.err" "an unknown shell: exit 2 with the valid names (exit $rc)"
rc=0
"$B" completion >/dev/null 2>"$T/u.err" || rc=$?
check "[ $rc = 2 ]" "no shell: exit 2"

# 4. the man page
"$B" help --man >"$T/gpubroker.1" || fail "help --man failed"
cmp -s "$T/gpubroker.1" "$GB_BUILD/share/man/man1/gpubroker.1" ||
	fail "build/share/man/man1/gpubroker.1 is not what 'help --man' prints (make did not write it?)"
echo "ok: make wrote build/share/man/man1/gpubroker.1 from 'help --man'"
if command -v groff >/dev/null 2>&1; then
	groff -man -Tutf8 -ww -rHY=0 "$T/gpubroker.1" >"$T/man.txt" 2>"$T/groff.err" || fail "groff failed: $(cat "$T/groff.err")"
	[ ! -s "$T/groff.err" ] || fail "groff warns: $(head -5 "$T/groff.err")"
elif command -v man >/dev/null 2>&1; then
	MANWIDTH=100 man -l "$T/gpubroker.1" >"$T/man.txt" 2>"$T/groff.err" || fail "man -l failed: $(cat "$T/groff.err")"
else
	echo "skip: neither groff nor man is installed: the page is not rendered"
	exit 0
fi
# the rendered page with plain hyphens (groff writes U+2010 for a bare -)
sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g' "$T/man.txt" >"$T/man.plain"
for c in $cmds; do
	grep -q "^   gpubroker $c\$" "$T/man.plain" || fail "the man page has no section for $c"
	for f in $("$B" help "$c" | sed -n '/^flags:/,/^$/p' | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "$f" "$T/man.plain" || fail "the man page lacks $c's flag $f"
	done
done
for f in $("$B" help | sed -n '/^common flags/,/^$/p' | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	grep -q -- "$f" "$T/man.plain" || fail "the man page lacks the common flag $f"
done
grep -q '^EXIT STATUS' "$T/man.plain" && grep -q 'timed *out *waiting' "$T/man.plain" ||
	fail "the man page has no exit status section"
echo "ok: the man page renders and lists every command, every flag and the exit codes"
