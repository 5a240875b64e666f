# pg.sh -- sourced by tests that need a PostgreSQL server: Debian's
# server binaries, a private cluster in a temporary folder, on 127.0.0.1
# and an ephemeral port, removed afterwards.  The server refuses to run as
# root, so as root it runs as the unprivileged `postgres` user (Debian's
# postgresql package creates it).  Host connections need the password
# (scram-sha-256); nothing else can reach it.
#
#   gb_pg_start DIR      start; exports GB_PG_URL (no password in it),
#                        GB_PG_PASSWORD, GB_PG_PORT, GB_PG_DIR; returns 77
#                        (and says why) when there is no server to run
#   gb_pg_createdb NAME  prints the URL of a new database NAME
#   gb_pg_stop_only      stop the server (fast), keeping its data
#   gb_pg_start_again    start it again on the same port and data
#   gb_pg_stop           stop it and remove DIR
#   gb_pg_psql SQL...    run SQL as the admin user on database postgres

gb_pg_bin() {
	for _d in /usr/lib/postgresql/*/bin; do
		[ -x "$_d/initdb" ] && [ -x "$_d/pg_ctl" ] && { echo "$_d"; return 0; }
	done
	return 1
}

# gb_pg_as CMD...: run as the server's user (root: postgres)
gb_pg_as() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

gb_pg_free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

gb_pg_start() {
	GB_PG_BIN=$(gb_pg_bin) || {
		echo "SKIP: PostgreSQL's server is not installed (Debian postgresql; make deps installs it)"
		return 77
	}
	if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
		echo "SKIP: running as root and there is no 'postgres' user to run the server as"
		return 77
	fi
	GB_PG_DIR=$1
	mkdir -p "$GB_PG_DIR"
	if [ "$(id -u)" = 0 ]; then
		# the server's user must reach its folder: let it through the
		# (private, temporary) folders above, without reading them
		_up=$(dirname "$GB_PG_DIR")
		while [ "$_up" != / ] && [ "$_up" != /tmp ]; do
			chmod o+x "$_up"
			_up=$(dirname "$_up")
		done
		chown postgres "$GB_PG_DIR"
	fi
	chmod 0700 "$GB_PG_DIR"
	GB_PG_PASSWORD=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	# the password file is read by initdb only, then removed
	printf '%s\n' "$GB_PG_PASSWORD" >"$GB_PG_DIR/pw"
	[ "$(id -u)" = 0 ] && chown postgres "$GB_PG_DIR/pw"
	chmod 0600 "$GB_PG_DIR/pw"
	gb_pg_as "$GB_PG_BIN/initdb" -D "$GB_PG_DIR/data" -U gbadmin \
		--pwfile="$GB_PG_DIR/pw" --auth-host=scram-sha-256 \
		--auth-local=trust -E UTF8 --no-instructions >"$GB_PG_DIR/initdb.log" 2>&1 || {
		cat "$GB_PG_DIR/initdb.log" >&2
		echo "FAIL: initdb failed" >&2
		return 1
	}
	rm -f "$GB_PG_DIR/pw"
	_try=0
	while :; do
		GB_PG_PORT=$(gb_pg_free_port)
		if gb_pg_start_again; then
			break
		fi
		_try=$((_try + 1))
		[ "$_try" -lt 3 ] || { echo "FAIL: the PostgreSQL server did not start" >&2; tail -n 20 "$GB_PG_DIR/pg.log" >&2; return 1; }
	done
	GB_PG_URL="postgresql://gbadmin@127.0.0.1:$GB_PG_PORT/postgres?sslmode=disable"
	export GB_PG_URL GB_PG_PASSWORD GB_PG_PORT GB_PG_DIR GB_PG_BIN
}

gb_pg_start_again() {
	gb_pg_as "$GB_PG_BIN/pg_ctl" -D "$GB_PG_DIR/data" -l "$GB_PG_DIR/pg.log" -w -t 30 \
		-o "-p $GB_PG_PORT -c listen_addresses=127.0.0.1 -k $GB_PG_DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=32MB" \
		start >/dev/null 2>&1
}

gb_pg_stop_only() {
	[ -n "${GB_PG_DIR:-}" ] && [ -f "$GB_PG_DIR/data/postmaster.pid" ] &&
		gb_pg_as "$GB_PG_BIN/pg_ctl" -D "$GB_PG_DIR/data" -m fast -w -t 30 stop >/dev/null 2>&1
	return 0
}

gb_pg_stop() {
	[ -n "${GB_PG_DIR:-}" ] || return 0
	gb_pg_stop_only
	rm -rf "$GB_PG_DIR"
	GB_PG_DIR=
}

gb_pg_psql() {
	gb_pg_as "$GB_PG_BIN/psql" -h "$GB_PG_DIR" -p "$GB_PG_PORT" -U gbadmin -d postgres -qAt -v ON_ERROR_STOP=1 -c "$*"
}

gb_pg_createdb() {
	gb_pg_psql "CREATE DATABASE $1" >/dev/null || return 1
	echo "postgresql://gbadmin@127.0.0.1:$GB_PG_PORT/$1?sslmode=disable"
}
