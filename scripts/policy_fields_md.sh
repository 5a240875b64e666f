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
. "$(dirname "$0")/md_tables.sh"
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
	md_put "$begin" "$end" "$tmp/table" "$tmp/new"
}
section '<!-- policy fields: begin' '<!-- policy fields: end -->' 'fields:' 3 \
	'| field | type | meaning |'
section '<!-- region tags: begin' '<!-- region tags: end -->' \
	'region tags (region.tags, gb.has_tag, placement.compliance):' 2 \
	'| tag | meaning |'

md_finish "$file" "$tmp/new" "$mode" "the tables of policy fields and region tags differ from '$gb help policy' (core/plan/policy_fields.h, core/model/regions_data.c); run make readme-policy"
