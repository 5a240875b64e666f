#!/bin/sh
# policy_fields_md.sh GPUBROKER FILE [--check]
#
# The Markdown tables of the fields policies see (offer, offer.bench, req,
# req.gpu, req.team, region) and of the region tags, made from
# `GPUBROKER help policy` -- whose sources are core/plan/policy_fields.h
# and core/model/regions_data.c -- written into FILE (README.md) between
# the lines "<!-- policy fields: begin ... -->" and "<!-- policy fields:
# end -->", and "<!-- region tags: begin ... -->" and "<!-- region tags:
# end -->".  `make readme-policy` runs it; with --check it changes nothing and
# exits 1, with the difference, when FILE's table is not the current one
# (tests/integration/policy_documented.sh).
set -eu
gb=$1 file=$2 mode=${3:-write}
# section BEGIN END HEADING COLS HEADER: one table of FILE, made from the
# help's section HEADING ("  NAME  [TYPE]  MEANING", the meaning wrapped
# onto lines that start with spaces only), written between the lines
# BEGIN... and END of $tmp/new (FILE's copy).  COLS 3: name, type,
# meaning; COLS 2: name, meaning.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
"$gb" help policy >"$tmp/help"
cp "$file" "$tmp/new"
section() {
	begin=$1 end=$2 heading=$3 cols=$4 header=$5
	grep -q "^$begin" "$tmp/new" && grep -q "^$end" "$tmp/new" || {
		echo "$file has no \"$begin ...\" and \"$end\" lines" >&2
		exit 1
	}
	awk -v heading="$heading" -v cols="$cols" '
		$0 == heading { on = 1; next }
		on && /^$/ { on = 0 }
		!on { next }
		/^  [^ ]/ {
			if (row) print row
			name = $1; type = $2
			if (cols == 3) {
				sub(/^  [^ ]+ +[^ ]+ +/, "")
				row = "| `" name "` | " type " | " $0 " |"
			} else {
				sub(/^  [^ ]+ +/, "")
				row = "| `" name "` | " $0 " |"
			}
			next
		}
		/^ +[^ ]/ { sub(/^ +/, ""); row = substr(row, 1, length(row) - 2) " " $0 " |" }
		END { if (row) print row }
	' "$tmp/help" >"$tmp/rows"
	[ -s "$tmp/rows" ] || { echo "no \"$heading\" in '$gb help policy'" >&2; exit 1; }
	{
		echo "$header"
		if [ "$cols" = 3 ]; then echo '|---|---|---|'; else echo '|---|---|'; fi
		cat "$tmp/rows"
	} >"$tmp/table"
	awk -v begin="$begin" -v end="$end" -v table="$tmp/table" '
		index($0, begin) == 1 { print; while ((getline l < table) > 0) print l; skip = 1; next }
		$0 == end { skip = 0 }
		!skip { print }
	' "$tmp/new" >"$tmp/next"
	mv "$tmp/next" "$tmp/new"
}
section '<!-- policy fields: begin' '<!-- policy fields: end -->' 'fields:' 3 \
	'| field | type | meaning |'
section '<!-- region tags: begin' '<!-- region tags: end -->' \
	'region tags (region.tags, gb.has_tag, placement.compliance):' 2 \
	'| tag | meaning |'

if [ "$mode" = --check ]; then
	if ! diff -u "$file" "$tmp/new" >"$tmp/diff"; then
		echo "$file: the tables of policy fields and region tags differ from '$gb help policy' (core/plan/policy_fields.h, core/model/regions_data.c); run make readme-policy:" >&2
		cat "$tmp/diff" >&2
		exit 1
	fi
	exit 0
fi
cat "$tmp/new" >"$file"
