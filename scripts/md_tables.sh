# md_tables.sh -- sourced by the scripts that write generated Markdown
# tables into a document (policy_fields_md.sh, config_md.sh).
#
#   md_put BEGIN END TABLE FILE   replace FILE's lines between the line
#                                 starting with BEGIN and the line END by
#                                 the file TABLE (in place)
#   md_finish FILE NEW MODE WHY   MODE --check: exit 1 with WHY and the
#                                 difference when NEW differs from FILE,
#                                 else 0; otherwise copy NEW over FILE

md_put() {
	grep -q "^$1" "$4" && grep -q "^$2" "$4" || {
		echo "$4 has no \"$1 ...\" and \"$2\" lines" >&2
		exit 1
	}
	awk -v begin="$1" -v end="$2" -v table="$3" '
		index($0, begin) == 1 { print; while ((getline l < table) > 0) print l; skip = 1; next }
		$0 == end { skip = 0 }
		!skip { print }
	' "$4" >"$4.next"
	mv "$4.next" "$4"
}

md_finish() {
	if [ "$3" = --check ]; then
		if ! diff -u "$1" "$2" >"$2.diff"; then
			echo "$1: $4:" >&2
			cat "$2.diff" >&2
			exit 1
		fi
		exit 0
	fi
	cat "$2" >"$1"
}
