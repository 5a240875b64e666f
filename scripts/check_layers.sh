#!/bin/sh
# check_layers.sh -- what the include paths cannot catch: a core file that
# reaches another folder by a relative path ("../engine/engine.h") or a
# driver that names a core header by path.  The compiler enforces the
# rest (each core/ layer sees only the folders below it; see the
# Makefile's CORE_LAYERS and HACKING.md).  Exit 1 with each offence.
set -u
cd "$(dirname "$0")/.."
bad=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' core drivers \
        --include='*.c' --include='*.h' |
      grep -vE '#[[:space:]]*include[[:space:]]*"gpubroker/driver\.h"')
if [ -n "$bad" ]; then
	echo "$bad" | sed 's/$/  <- includes by path: a layer may include only its own and lower folders by name (HACKING.md, "Layers")/' >&2
	exit 1
fi
exit 0
