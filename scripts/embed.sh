#!/bin/sh
# embed.sh SYMBOL INPUT OUTPUT -- a C file defining INPUT's bytes as
#   const unsigned char SYMBOL[] (NUL-terminated) and
#   const size_t SYMBOL_len (the count before the NUL),
# so a file (docs/openapi.json) is built into the binary that serves it.
set -eu
sym=$1 in=$2 out=$3
{
	printf '/* generated from %s by scripts/embed.sh: do not edit */\n' "$in"
	printf '#include <stddef.h>\n'
	printf 'extern const unsigned char %s[];\n' "$sym"
	printf 'extern const size_t %s_len;\n' "$sym"
	printf 'const unsigned char %s[] = {\n' "$sym"
	od -An -v -tx1 "$in" | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'
	printf '0x00};\n'
	printf 'const size_t %s_len = sizeof(%s) - 1;\n' "$sym" "$sym"
} >"$out.tmp"
mv "$out.tmp" "$out"
