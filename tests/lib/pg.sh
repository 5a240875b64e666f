# pg.sh -- sourced (POSIX sh) by tests that need a PostgreSQL server: a
# private cluster in a folder the test gives, Debian's server binaries
# (/usr/lib/postgresql/VERSION/bin; `make deps` installs them), listening
# on 127.0.0.1 only, on an ephemeral port, and on a Unix socket inside
# that folder.  The server refuses to run as root, so as root it runs as
# the unprivileged `postgres` user (runuser, else setpriv).  TCP
# connections need the password (scram-sha-256); the Unix socket in the
# folder is trusted.
#
#   gb_pg_start DIR      initdb DIR/pgdata, start, wait until pg_isready;
#                        exports GB_PG_HOST (127.0.0.1), GB_PG_PORT,
#                        GB_PG_USER (gbadmin), GB_PG_PASSWORD, GB_PG_URL
#                        (postgresql://gbadmin@127.0.0.1:PORT/postgres?
#                        sslmode=disable: no password in it), GB_PG_DIR,
#                        GB_PG_PASSFILE (DIR/pgpass, .pgpass format, 0600,
#                        owned by the caller), GB_PG_BIN.  Returns 77 and
#                        prints "skip: ..." when no server is installed.
#                        The server's log is DIR/pg.log.
#   gb_pg_createdb NAME  create database NAME; prints its URL
#   gb_pg_psql SQL...    run SQL as gbadmin on database postgres (TCP,
#                        password); prints rows unaligned, tuples only
#   gb_pg_stop           fast shutdown; data kept, nothing removed.  A
#                        no-op when nothing runs: safe in an EXIT trap
#   gb_pg_restart        stop, then start on the SAME port and data
#   gb_pg_stop_only, gb_pg_start_again   the two halves of a restart
#   gb_pg_kill           immediate shutdown (like a crash: the next start
#                        recovers from the WAL)
#   gb_pg_pid            the postmaster's pid
#   gb_pg_alive PID      PID runs (and is no zombie)
#   gb_pg_attach DIR     set the GB_PG_* variables of a server another
#                        process started in DIR (scripts/pg_test_server.sh)
#
# Outside DIR nothing is created or removed; as root, folders above DIR
# the postgres user cannot pass through get o+x (search, not read), said
# on stderr.  Variables of the caller are left alone (this file's own are
# named _gbpg_*).  GB_PG_ROOT (default /usr/lib/postgresql) is where the
# server binaries are looked for; GB_PG_FIRST_PORT, if set, is the port
# the first start tries (tests of the retry on a taken port).

GB_PG_HOST=127.0.0.1
GB_PG_USER=gbadmin

# gb_pg_bin: the newest server bin folder with initdb, pg_ctl and postgres
gb_pg_bin() {
	_gbpg_found=""
	for _gbpg_d in "${GB_PG_ROOT:-/usr/lib/postgresql}"/*/bin; do
		[ -x "$_gbpg_d/initdb" ] && [ -x "$_gbpg_d/pg_ctl" ] && [ -x "$_gbpg_d/postgres" ] &&
			_gbpg_found=$_gbpg_d
	done
	[ -n "$_gbpg_found" ] || return 1
	echo "$_gbpg_found"
}

# gb_pg_user CMD...: run CMD as the server's user (root: postgres)
gb_pg_user() {
	if [ "$(id -u)" != 0 ]; then
		"$@"
	elif command -v runuser >/dev/null 2>&1; then
		runuser -u postgres -- "$@"
	else
		setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"
	fi
}

# gb_pg_as CMD...: the same, in DIR (the caller's folder may be closed
# to it)
gb_pg_as() {
	(cd "$GB_PG_DIR" && gb_pg_user "$@")
}

gb_pg_free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

gb_pg_psql_bin() {
	if [ -n "${GB_PG_BIN:-}" ] && [ -x "$GB_PG_BIN/psql" ]; then
		echo "$GB_PG_BIN/psql"
	elif [ -x /usr/bin/psql ]; then
		echo /usr/bin/psql
	else
		command -v psql
	fi
}

gb_pg_pid() {
	[ -n "${GB_PG_DIR:-}" ] && [ -f "$GB_PG_DIR/pgdata/postmaster.pid" ] || return 1
	head -n 1 "$GB_PG_DIR/pgdata/postmaster.pid"
}

# gb_pg_alive PID: PID is a live process (a zombie is not: the postmaster
# is reparented when pg_ctl exits, and its new parent may reap it late)
gb_pg_alive() {
	[ -n "$1" ] || return 1
	if [ -r "/proc/$1/status" ]; then
		! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
	else
		kill -0 "$1" 2>/dev/null
	fi
}

gb_pg_start() {
	if [ $# -ne 1 ] || [ -z "$1" ]; then
		echo "gb_pg_start: usage: gb_pg_start DIR" >&2
		return 2
	fi
	GB_PG_BIN=$(gb_pg_bin) || {
		echo "skip: PostgreSQL's server binaries are not installed (${GB_PG_ROOT:-/usr/lib/postgresql}/*/bin/initdb; Debian postgresql, make deps installs it)"
		return 77
	}
	if [ "$(id -u)" = 0 ] && ! id -u postgres >/dev/null 2>&1; then
		echo "skip: running as root and there is no unprivileged 'postgres' user to run the server as"
		return 77
	fi
	mkdir -p "$1" || return 1
	GB_PG_DIR=$(cd "$1" && pwd -P) || return 1
	if [ "$GB_PG_DIR" = / ] || [ -e "$GB_PG_DIR/pgdata" ]; then
		echo "gb_pg_start: $GB_PG_DIR/pgdata exists (gb_pg_restart starts it again)" >&2
		return 1
	fi
	if [ "$(id -u)" = 0 ]; then
		# the postgres user must pass through the folders above DIR
		_gbpg_rest=${GB_PG_DIR#/}
		_gbpg_p=""
		while [ "$_gbpg_rest" != "${_gbpg_rest#*/}" ]; do
			_gbpg_p="$_gbpg_p/${_gbpg_rest%%/*}"
			_gbpg_rest=${_gbpg_rest#*/}
			if ! (cd / && gb_pg_user test -x "$_gbpg_p") 2>/dev/null; then
				chmod o+x "$_gbpg_p" || return 1
				echo "note: chmod o+x $_gbpg_p (the postgres user passes through it to $GB_PG_DIR)" >&2
			fi
		done
		chown postgres: "$GB_PG_DIR" || return 1
	fi
	chmod 0700 "$GB_PG_DIR" || return 1
	GB_PG_PASSWORD=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	[ ${#GB_PG_PASSWORD} = 32 ] || { echo "gb_pg_start: cannot read /dev/urandom" >&2; return 1; }
	# the password file initdb reads (as postgres); removed after it
	(umask 077 && printf '%s\n' "$GB_PG_PASSWORD" >"$GB_PG_DIR/initdb.pw") || return 1
	[ "$(id -u)" = 0 ] && chown postgres: "$GB_PG_DIR/initdb.pw"
	gb_pg_as "$GB_PG_BIN/initdb" -D "$GB_PG_DIR/pgdata" -U gbadmin \
		--pwfile="$GB_PG_DIR/initdb.pw" --auth-host=scram-sha-256 --auth-local=trust \
		-E UTF8 --locale=C --no-sync >"$GB_PG_DIR/initdb.log" 2>&1
	_gbpg_rc=$?
	rm -f "$GB_PG_DIR/initdb.pw"
	if [ "$_gbpg_rc" != 0 ]; then
		tail -n 20 "$GB_PG_DIR/initdb.log" >&2
		echo "gb_pg_start: initdb failed (exit $_gbpg_rc; $GB_PG_DIR/initdb.log)" >&2
		return 1
	fi
	cat >>"$GB_PG_DIR/pgdata/postgresql.conf" <<EOF

# tests/lib/pg.sh: a private test server
listen_addresses = '127.0.0.1'
unix_socket_directories = '$GB_PG_DIR'
password_encryption = scram-sha-256
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 16MB
max_connections = 200
EOF
	_gbpg_try=1
	while :; do
		if [ "$_gbpg_try" = 1 ] && [ -n "${GB_PG_FIRST_PORT:-}" ]; then
			GB_PG_PORT=$GB_PG_FIRST_PORT
		else
			GB_PG_PORT=$(gb_pg_free_port) || { echo "gb_pg_start: no free port (python3)" >&2; return 1; }
		fi
		echo "$GB_PG_PORT" >"$GB_PG_DIR/port"
		gb_pg_start_again && break
		if [ "$_gbpg_try" -ge 3 ] || ! grep -q 'already in use' "$GB_PG_DIR/pg.log" 2>/dev/null; then
			tail -n 20 "$GB_PG_DIR/pg.log" >&2
			echo "gb_pg_start: the PostgreSQL server did not start ($_gbpg_try tries; $GB_PG_DIR/pg.log)" >&2
			return 1
		fi
		echo "note: port $GB_PG_PORT was taken; trying another" >&2
		_gbpg_try=$((_gbpg_try + 1))
	done
	GB_PG_PASSFILE=$GB_PG_DIR/pgpass
	(umask 077 && printf '127.0.0.1:%s:*:gbadmin:%s\n' "$GB_PG_PORT" "$GB_PG_PASSWORD" >"$GB_PG_PASSFILE") ||
		return 1
	GB_PG_URL="postgresql://gbadmin@127.0.0.1:$GB_PG_PORT/postgres?sslmode=disable"
	export GB_PG_HOST GB_PG_PORT GB_PG_USER GB_PG_PASSWORD GB_PG_URL GB_PG_DIR GB_PG_PASSFILE GB_PG_BIN
	return 0
}

# gb_pg_start_again: start the initialised server on $GB_PG_PORT; wait
# until it accepts connections (30 s at most)
gb_pg_start_again() {
	if [ -z "${GB_PG_DIR:-}" ] || [ -z "${GB_PG_PORT:-}" ] || [ ! -d "$GB_PG_DIR/pgdata" ]; then
		echo "gb_pg_start_again: no server here (gb_pg_start DIR first)" >&2
		return 1
	fi
	if gb_pg_alive "$(gb_pg_pid)"; then
		echo "gb_pg_start_again: the server is running (pid $(gb_pg_pid))" >&2
		return 1
	fi
	gb_pg_as "$GB_PG_BIN/pg_ctl" -D "$GB_PG_DIR/pgdata" -l "$GB_PG_DIR/pg.log" \
		-o "-p $GB_PG_PORT" -w -t 30 start >>"$GB_PG_DIR/pg_ctl.log" 2>&1 || return 1
	_gbpg_isready=$GB_PG_BIN/pg_isready
	[ -x "$_gbpg_isready" ] || _gbpg_isready=$(command -v pg_isready) || _gbpg_isready=""
	_gbpg_i=0
	while [ "$_gbpg_i" -lt 120 ]; do
		if [ -n "$_gbpg_isready" ]; then
			"$_gbpg_isready" -q -h 127.0.0.1 -p "$GB_PG_PORT" -U gbadmin -d postgres && return 0
		else
			gb_pg_psql 'SELECT 1' >/dev/null 2>&1 && return 0
		fi
		sleep 0.25
		_gbpg_i=$((_gbpg_i + 1))
	done
	echo "gb_pg_start_again: the server on 127.0.0.1:$GB_PG_PORT is not ready after 30 s" >&2
	return 1
}

# gb_pg_stop [MODE]: shut the server down (fast; immediate if that takes
# over 30 s, then SIGKILL); 0 when nothing runs.  Removes nothing.
gb_pg_stop() {
	[ -n "${GB_PG_DIR:-}" ] && [ -f "$GB_PG_DIR/pgdata/postmaster.pid" ] || return 0
	_gbpg_pid=$(gb_pg_pid)
	# the binaries of the version that made the data
	_gbpg_bin=${GB_PG_BIN:-}
	if [ -f "$GB_PG_DIR/pgdata/PG_VERSION" ] &&
		[ -x "${GB_PG_ROOT:-/usr/lib/postgresql}/$(cat "$GB_PG_DIR/pgdata/PG_VERSION")/bin/pg_ctl" ]; then
		_gbpg_bin=${GB_PG_ROOT:-/usr/lib/postgresql}/$(cat "$GB_PG_DIR/pgdata/PG_VERSION")/bin
	fi
	gb_pg_as "$_gbpg_bin/pg_ctl" -D "$GB_PG_DIR/pgdata" -m "${1:-fast}" -w -t 30 stop \
		>>"$GB_PG_DIR/pg_ctl.log" 2>&1 && return 0
	if gb_pg_alive "$_gbpg_pid"; then
		gb_pg_as "$_gbpg_bin/pg_ctl" -D "$GB_PG_DIR/pgdata" -m immediate -w -t 10 stop \
			>>"$GB_PG_DIR/pg_ctl.log" 2>&1 && return 0
		kill -KILL "$_gbpg_pid" 2>/dev/null
		echo "gb_pg_stop: the server (pid $_gbpg_pid) did not stop; killed" >&2
	fi
	return 0
}

gb_pg_stop_only() {
	gb_pg_stop fast
}

gb_pg_kill() {
	gb_pg_stop immediate
}

gb_pg_restart() {
	gb_pg_stop fast && gb_pg_start_again
}

gb_pg_attach() {
	GB_PG_DIR=$(cd "$1" && pwd -P) || return 1
	[ -f "$GB_PG_DIR/port" ] && [ -f "$GB_PG_DIR/pgpass" ] && [ -f "$GB_PG_DIR/pgdata/PG_VERSION" ] || {
		echo "gb_pg_attach: no server made by gb_pg_start in $GB_PG_DIR" >&2
		return 1
	}
	GB_PG_BIN=${GB_PG_ROOT:-/usr/lib/postgresql}/$(cat "$GB_PG_DIR/pgdata/PG_VERSION")/bin
	GB_PG_PORT=$(cat "$GB_PG_DIR/port")
	GB_PG_PASSFILE=$GB_PG_DIR/pgpass
	GB_PG_PASSWORD=$(sed -n 's/^127\.0\.0\.1:[0-9]*:\*:gbadmin://p' "$GB_PG_PASSFILE")
	GB_PG_URL="postgresql://gbadmin@127.0.0.1:$GB_PG_PORT/postgres?sslmode=disable"
	export GB_PG_HOST GB_PG_PORT GB_PG_USER GB_PG_PASSWORD GB_PG_URL GB_PG_DIR GB_PG_PASSFILE GB_PG_BIN
}

gb_pg_psql() {
	_gbpg_psql=$(gb_pg_psql_bin) || { echo "gb_pg_psql: psql is not installed" >&2; return 1; }
	PGPASSWORD=$GB_PG_PASSWORD PGPASSFILE=/dev/null PGCONNECT_TIMEOUT=10 \
		"$_gbpg_psql" -X -w -h 127.0.0.1 -p "$GB_PG_PORT" -U gbadmin -d postgres \
		-qAt -v ON_ERROR_STOP=1 -c "$*"
}

gb_pg_createdb() {
	case "${1:-}" in
	'' | *[!A-Za-z0-9_]*)
		echo "gb_pg_createdb: NAME must be letters, digits and _ (got '${1:-}')" >&2
		return 2
		;;
	esac
	gb_pg_psql "CREATE DATABASE \"$1\"" >/dev/null || return 1
	echo "postgresql://gbadmin@127.0.0.1:$GB_PG_PORT/$1?sslmode=disable"
}
