#!/bin/sh
# policy_fields_md.sh GPUBROKER FILE [--check]
#
# The Markdown table of the fields policies see (offer, offer.bench, req,
# req.gpu, req.team), made from `GPUBROKER help policy` -- whose source is
# core/plan/policy_fields.h -- written into FILE (README.md) between the
# lines "<!-- policy fields: begin ... -->" and "<!-- policy fields: end
# -->".  `make readme-policy` runs it; with --check it changes nothing and
# exits 1, with the difference, when FILE's table is not the current one
# (tests/integration/policy_documented.sh).
set -eu
gb=$1 file=$2 mode=${3:-write}
begin='<!-- policy fields: begin'
end='<!-- policy fields: end -->'
grep -q "^$begin" "$file" && grep -q "^$end" "$file" || {
	echo "$file has no \"$begin ...\" and \"$end\" lines" >&2
	exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# The help's "fields:" section: "  NAME  TYPE  MEANING", the meaning
# wrapped onto lines that start with spaces only.
"$gb" help policy | awk '
	/^fields:$/ { on = 1; next }
	on && /^$/ { on = 0 }
	!on { next }
	/^  [^ ]/ {
		if (row) print row
		name = $1; type = $2
		sub(/^  [^ ]+ +[^ ]+ +/, "")
		row = "| `" name "` | " type " | " $0 " |"
		next
	}
	/^ +[^ ]/ { sub(/^ +/, ""); row = substr(row, 1, length(row) - 2) " " $0 " |" }
	END { if (row) print row }
' >"$tmp/rows"
[ -s "$tmp/rows" ] || { echo "no fields in '$gb help policy'" >&2; exit 1; }
{
	echo '| field | type | meaning |'
	echo '|---|---|---|'
	cat "$tmp/rows"
} >"$tmp/table"

awk -v begin="$begin" -v end="$end" -v table="$tmp/table" '
	index($0, begin) == 1 { print; while ((getline l < table) > 0) print l; skip = 1; next }
	$0 == end { skip = 0 }
	!skip { print }
' "$file" >"$tmp/new"

if [ "$mode" = --check ]; then
	if ! diff -u "$file" "$tmp/new" >"$tmp/diff"; then
		echo "$file: the table of policy fields differs from '$gb help policy' (core/plan/policy_fields.h); run make readme-policy:" >&2
		cat "$tmp/diff" >&2
		exit 1
	fi
	exit 0
fi
cat "$tmp/new" >"$file"
