#!/bin/sh
# pg_test_server.sh start|stop|restart DIR -- a private PostgreSQL server
# for tests (tests/lib/pg.sh) from programs that cannot source it, such as
# the C unit tests' runner:
#
#   eval "$(scripts/pg_test_server.sh start "$tmp/pg")" || exit $?
#   ... GB_PG_URL, GB_PG_PASSWORD, GB_PG_PASSFILE ...
#   scripts/pg_test_server.sh stop "$tmp/pg"
#
# start prints `export NAME='value'` lines (GB_PG_HOST, GB_PG_PORT,
# GB_PG_USER, GB_PG_PASSWORD, GB_PG_URL, GB_PG_DIR, GB_PG_PASSFILE,
# GB_PG_BIN) on stdout and nothing else; messages go to stderr.  Exit 77
# ("skip: ..." on stderr) when PostgreSQL's server is not installed.
# stop shuts the server down (fast) and removes nothing; restart stops it
# and starts it on the same port and data.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/tests/lib/pg.sh"

if [ $# -ne 2 ]; then
	echo "usage: $0 start|stop|restart DIR" >&2
	exit 2
fi
case "$1" in
start)
	gb_pg_start "$2" >&2 || exit $?
	for v in GB_PG_HOST GB_PG_PORT GB_PG_USER GB_PG_PASSWORD GB_PG_URL GB_PG_DIR GB_PG_PASSFILE GB_PG_BIN; do
		eval "val=\$$v"
		printf "export %s='%s'\n" "$v" "$val"
	done
	;;
stop)
	[ -d "$2" ] || exit 0
	gb_pg_attach "$2" >&2 || exit 1
	gb_pg_stop >&2
	;;
restart)
	gb_pg_attach "$2" >&2 || exit 1
	gb_pg_restart >&2
	;;
*)
	echo "usage: $0 start|stop|restart DIR" >&2
	exit 2
	;;
esac
