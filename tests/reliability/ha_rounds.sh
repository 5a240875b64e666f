#!/bin/sh
# ha_rounds.sh -- tests/integration/ha_replicas.sh with 30 rounds of
# kill -9 and SIGSTOP past the lease (ROUNDS to change it).
export ROUNDS="${ROUNDS:-30}"
exec sh "$GB_SRC/tests/integration/ha_replicas.sh"
