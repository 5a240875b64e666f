#!/bin/sh
# tests/integration/pg_harness.sh -- the test harness's private PostgreSQL
# server (tests/lib/pg.sh, scripts/pg_test_server.sh) does what the tests
# that use it rely on:
#
#  1. gb_pg_start: the server runs as an unprivileged user (not root), on
#     127.0.0.1 only and an ephemeral port, its socket and data inside the
#     folder; the exported URL has no password; the pgpass file is 0600
#     and the caller's; gb_pg_createdb makes a database whose URL works
#     with PGPASSWORD and with PGPASSFILE.
#  2. TCP connections without the password, or with a wrong one, are
#     refused.
#  3. gb_pg_restart: same port, same data (the database is still there),
#     a new postmaster.
#  4. gb_pg_stop: the port is closed, the process is gone, the folder's
#     neighbours are untouched; a second gb_pg_stop (an EXIT trap after
#     the test stopped it) is a no-op.
#  5. A taken first port is retried with another; without server
#     binaries gb_pg_start says "skip: ..." and returns 77.
#  6. scripts/pg_test_server.sh start prints only export lines, which
#     work; stop stops it.
#
# Exit 77 ("skip: ...") when PostgreSQL's server binaries are missing.
set -u
: "${GB_SRC:?GB_SRC must name the source tree}"
. "$GB_SRC/tests/lib/pg.sh"
PY=/usr/bin/python3

if ! gb_pg_bin >/dev/null; then
	echo "skip: PostgreSQL's server binaries are not installed (Debian postgresql; make deps installs it)"
	exit 77
fi
[ -x "$PY" ] || { echo "skip: $PY is missing (it finds the free ports)"; exit 77; }
PSQL=$(gb_pg_psql_bin) || { echo "skip: psql is not installed (Debian postgresql-client)"; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/gbpgh.XXXXXX")
HOLD_PID=""
fails=0
cleanup() {
	rc=$?
	[ -n "$HOLD_PID" ] && kill "$HOLD_PID" 2>/dev/null
	gb_pg_stop
	[ -d "$T/cli" ] && sh "$GB_SRC/scripts/pg_test_server.sh" stop "$T/cli" 2>/dev/null
	[ -d "$T/retry" ] && GB_PG_DIR=$T/retry gb_pg_stop
	if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
		for l in "$T"/*/pg.log "$T"/*/pg_ctl.log "$T"/*/initdb.log; do
			[ -f "$l" ] || continue
			echo "---- $l (last 20 lines)"
			tail -n 20 "$l"
		done
	fi
	rm -rf "$T"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
ok() {
	echo "ok    $*"
}
# check 'condition' 'message'
check() {
	if eval "$1"; then ok "$2"; else fail "$2 (condition: $1)"; fi
}
# port_open PORT: something accepts TCP connections on 127.0.0.1:PORT
port_open() {
	"$PY" -c 'import socket, sys
s = socket.socket(); s.settimeout(2)
sys.exit(0 if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0 else 1)' "$1"
}
# q URL SQL: one query over TCP with $PGPASSWORD / $PGPASSFILE as set
q() {
	"$PSQL" -X -w -qAt -v ON_ERROR_STOP=1 -d "$1" -c "$2"
}

# ------------------------------------------------------- 1. start
mkdir -p "$T/neighbour"
echo keep >"$T/neighbour/file"
gb_pg_start "$T/pg"
st=$?
[ "$st" = 77 ] && exit 77
[ "$st" = 0 ] || { echo "FAIL: gb_pg_start exited $st"; exit 1; }
ok "gb_pg_start: server on port $GB_PG_PORT"
check '[ "$GB_PG_HOST" = 127.0.0.1 ] && [ "$GB_PG_USER" = gbadmin ] && [ "$GB_PG_DIR" = "$(cd "$T/pg" && pwd -P)" ]' \
	"GB_PG_HOST, GB_PG_USER, GB_PG_DIR exported"
check 'echo "$GB_PG_PASSWORD" | grep -qxE "[0-9a-f]{32}"' "the password is 128 random bits in hex"
check '[ "$GB_PG_URL" = "postgresql://gbadmin@127.0.0.1:$GB_PG_PORT/postgres?sslmode=disable" ]' \
	"GB_PG_URL is postgresql://gbadmin@127.0.0.1:PORT/postgres?sslmode=disable"
check '! echo "$GB_PG_URL" | grep -qF "$GB_PG_PASSWORD"' "no password in the URL"
check '[ "$GB_PG_PASSFILE" = "$GB_PG_DIR/pgpass" ] && [ "$(stat -c "%a %u" "$GB_PG_PASSFILE")" = "600 $(id -u)" ]' \
	"pgpass: mode 0600, owned by the caller"
check 'grep -qxF "127.0.0.1:$GB_PG_PORT:*:gbadmin:$GB_PG_PASSWORD" "$GB_PG_PASSFILE"' "pgpass: a .pgpass line for the server"
pid1=$(gb_pg_pid)
check 'gb_pg_alive "$pid1"' "postmaster.pid names a live process ($pid1)"
check '[ "$(stat -c %u /proc/$pid1)" != 0 ]' "the server does not run as root (uid $(stat -c %u /proc/"$pid1" 2>/dev/null))"
check '[ -S "$GB_PG_DIR/.s.PGSQL.$GB_PG_PORT" ]' "its Unix socket is inside the folder"
check 'grep -q "redirecting log output\|database system is ready" "$GB_PG_DIR/pg.log"' "its log is DIR/pg.log"
check '[ "$(gb_pg_psql "SHOW listen_addresses")" = 127.0.0.1 ]' "listen_addresses = 127.0.0.1"
check '[ "$(gb_pg_psql "SHOW fsync")" = off ] && [ "$(gb_pg_psql "SHOW max_connections")" = 200 ]' \
	"fsync off, max_connections 200"
if command -v ss >/dev/null 2>&1; then
	check '[ "$(ss -Hltn "sport = :$GB_PG_PORT" | awk "{print \$4}")" = "127.0.0.1:$GB_PG_PORT" ]' \
		"ss: the port is bound on 127.0.0.1 only"
fi

url=$(gb_pg_createdb gbh) || fail "gb_pg_createdb gbh"
check '[ "$url" = "postgresql://gbadmin@127.0.0.1:$GB_PG_PORT/gbh?sslmode=disable" ]' "gb_pg_createdb prints the database's URL"
check '! gb_pg_createdb "x; DROP DATABASE gbh" >/dev/null 2>&1' "gb_pg_createdb refuses a name that is not an identifier"
check '[ "$(PGPASSWORD=$GB_PG_PASSWORD PGPASSFILE=/dev/null q "$url" "SELECT 1")" = 1 ]' \
	"SELECT 1 through psql over TCP with PGPASSWORD"
check '[ "$(unset PGPASSWORD; PGPASSFILE=$GB_PG_PASSFILE q "$url" "SELECT current_database()")" = gbh ]' \
	"the same with PGPASSFILE=DIR/pgpass"
PGPASSWORD=$GB_PG_PASSWORD PGPASSFILE=/dev/null q "$url" "CREATE TABLE t (v int); INSERT INTO t VALUES (42)" ||
	fail "cannot write to gbh"

# --------------------------------------------- 2. password required
if env -u PGPASSWORD PGPASSFILE=/dev/null "$PSQL" -X -w -d "$url" -c 'SELECT 1' >"$T/nopw.out" 2>&1; then
	fail "a TCP connection without a password was accepted"
else
	grep -q 'no password supplied' "$T/nopw.out" && ok "a TCP connection without a password is refused" ||
		fail "no password: unexpected error: $(cat "$T/nopw.out")"
fi
if PGPASSWORD=wrong PGPASSFILE=/dev/null "$PSQL" -X -w -d "$url" -c 'SELECT 1' >"$T/badpw.out" 2>&1; then
	fail "a TCP connection with a wrong password was accepted"
else
	grep -q 'password authentication failed' "$T/badpw.out" && ok "a wrong password is refused" ||
		fail "wrong password: unexpected error: $(cat "$T/badpw.out")"
fi

# ------------------------------------------------------ 3. restart
port1=$GB_PG_PORT
gb_pg_restart || fail "gb_pg_restart failed"
pid2=$(gb_pg_pid)
check '[ "$GB_PG_PORT" = "$port1" ] && port_open "$port1"' "gb_pg_restart: back on the same port ($port1)"
check '[ -n "$pid2" ] && [ "$pid2" != "$pid1" ] && ! gb_pg_alive "$pid1"' "a new postmaster ($pid1 -> $pid2)"
check '[ "$(PGPASSWORD=$GB_PG_PASSWORD PGPASSFILE=/dev/null q "$url" "SELECT v FROM t")" = 42 ]' \
	"same data after the restart (gbh.t still holds 42)"
gb_pg_kill
check '! port_open "$port1" && ! gb_pg_alive "$pid2"' "gb_pg_kill: immediate shutdown"
gb_pg_start_again || fail "gb_pg_start_again after gb_pg_kill"
check '[ "$(PGPASSWORD=$GB_PG_PASSWORD PGPASSFILE=/dev/null q "$url" "SELECT v FROM t")" = 42 ]' \
	"gb_pg_start_again after a crash: recovered, same port and data"

# --------------------------------------------------------- 4. stop
pid3=$(gb_pg_pid)
gb_pg_stop
check '[ $? = 0 ]' "gb_pg_stop exits 0"
check '! port_open "$port1"' "after gb_pg_stop the port is closed"
check '! gb_pg_alive "$pid3" && [ ! -f "$GB_PG_DIR/pgdata/postmaster.pid" ]' "after gb_pg_stop the server process is gone"
check '[ "$(cat "$T/neighbour/file")" = keep ] && [ -d "$GB_PG_DIR/pgdata" ] && [ -f "$GB_PG_DIR/pg.log" ]' \
	"gb_pg_stop removed nothing (neither the data nor the folder's neighbours)"
gb_pg_stop
check '[ $? = 0 ]' "a second gb_pg_stop is a no-op (exit 0)"
check '(unset GB_PG_DIR; gb_pg_stop)' "gb_pg_stop with nothing started is a no-op (exit 0)"

# ------------------------------------------ 5. taken port, no server
"$PY" -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(120)' >"$T/hold.port" &
HOLD_PID=$!
i=0
while [ ! -s "$T/hold.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
taken=$(cat "$T/hold.port")
if (GB_PG_FIRST_PORT=$taken gb_pg_start "$T/retry" >"$T/retry.out" 2>&1 &&
	[ "$GB_PG_PORT" != "$taken" ] && gb_pg_psql 'SELECT 1' >/dev/null && gb_pg_stop); then
	grep -q "port $taken was taken" "$T/retry.out" && ok "a taken port is retried with another" ||
		fail "started, but not after a retry: $(cat "$T/retry.out")"
else
	fail "gb_pg_start with its first port taken: $(cat "$T/retry.out")"
fi
kill "$HOLD_PID" 2>/dev/null
HOLD_PID=""
(GB_PG_ROOT=$T/none gb_pg_start "$T/none" >"$T/none.out" 2>&1)
st=$?
check '[ "$st" = 77 ] && grep -q "^skip: " "$T/none.out" && [ ! -e "$T/none" ]' \
	"without server binaries: 'skip: ...', status 77, nothing created"

# ------------------------------------------- 6. pg_test_server.sh
if sh "$GB_SRC/scripts/pg_test_server.sh" start "$T/cli" >"$T/cli.env" 2>"$T/cli.err"; then
	check '! grep -qv "^export GB_PG_[A-Z]*='"'"'[^'"'"']*'"'"'$" "$T/cli.env"' "pg_test_server.sh start prints only export lines"
	cliport=$( (. "$T/cli.env" && echo "$GB_PG_PORT") )
	check '[ "$( (. "$T/cli.env" && PGPASSWORD=$GB_PG_PASSWORD PGPASSFILE=/dev/null q "$GB_PG_URL" "SELECT 7") )" = 7 ]' \
		"its exports reach the server"
	sh "$GB_SRC/scripts/pg_test_server.sh" stop "$T/cli" 2>>"$T/cli.err" || fail "pg_test_server.sh stop failed"
	check '! port_open "$cliport" && [ ! -f "$T/cli/pgdata/postmaster.pid" ]' "pg_test_server.sh stop stops it"
else
	fail "pg_test_server.sh start failed: $(cat "$T/cli.err")"
fi

echo
if [ "$fails" -gt 0 ]; then
	echo "pg_harness: $fails failure(s)"
	exit 1
fi
echo "pg_harness: all checks passed"
exit 0
