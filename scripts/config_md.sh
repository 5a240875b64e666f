#!/bin/sh
# config_md.sh GPUBROKER FILE [--check]
#
# The Markdown reference of the broker config (every key, its type,
# default and what it does), made from `GPUBROKER help config` -- whose
# source is the config parser's key table, gb_config_keys in
# core/model/config.c -- written into FILE (docs/config.md) between the
# lines "<!-- config keys: begin ... -->" and "<!-- config keys: end -->".
# `make docs-config` runs it; with --check it changes nothing and exits 1,
# with the difference, when FILE's table is not the current one
# (tests/integration/config_documented.sh).
set -eu
gb=$1 file=$2 mode=${3:-write}
. "$(dirname "$0")/md_tables.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# The help's "keys" section: "  KEY (TYPE; default: DEFAULT)", then the
# meaning on lines indented by six spaces.
"$gb" help config | awk '
	/^keys / { on = 1; next }
	!on { next }
	/^  [^ ]/ {
		if (row) print row
		line = $0
		sub(/^  /, "", line)
		key = line; sub(/ .*/, "", key)
		rest = substr(line, length(key) + 3)       # after "KEY ("
		i = index(rest, "; default: ")
		type = substr(rest, 1, i - 1)
		def = substr(rest, i + 11)
		def = substr(def, 1, length(def) - 1)     # the closing ")"
		gsub(/\|/, "\\|", type); gsub(/\|/, "\\|", def)
		row = "| `" key "` | " type " | " def " |"
		next
	}
	/^      [^ ]/ {
		m = $0; sub(/^ +/, "", m); gsub(/\|/, "\\|", m)
		row = row " " m
		next
	}
	END { if (row) print row }
' | sed 's/$/ |/' >"$tmp/rows"
[ -s "$tmp/rows" ] || { echo "no keys in '$gb help config'" >&2; exit 1; }
{
	echo '| key | type | default | what it does |'
	echo '|---|---|---|---|'
	cat "$tmp/rows"
} >"$tmp/table"

cp "$file" "$tmp/new"
md_put '<!-- config keys: begin' '<!-- config keys: end -->' "$tmp/table" "$tmp/new"
md_finish "$file" "$tmp/new" "$mode" "the config reference differs from '$gb help config' (core/model/config.c's key table); run make docs-config"
