#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests (docs/TESTING.md, "PostgreSQL in the tests"):
# on 127.0.0.1 only, on a port free when it starts, trust authentication for loopback only,
# settings that trade crash safety for speed. Never point anything that keeps data at it.
#
# Usage: scripts/test-postgres.sh start DIR   # prints postgres://postgres@127.0.0.1:PORT/postgres
#        scripts/test-postgres.sh stop DIR    # safe to call when nothing runs (twice, or never started)
#
# DIR (e.g. .build/test-postgres) holds the cluster (DIR/data, made by initdb the first time),
# its log (DIR/postgres.log) and its Unix socket. PostgreSQL refuses to run as root, so as root
# the server runs as the `postgres` user (runuser) and DIR is handed to it; as anyone else it
# runs as that user. If the `postgres` user cannot reach DIR (a checkout under /root, mode 0700)
# or DIR's path is too long for a Unix socket, the cluster lives in a fresh folder under /tmp
# instead, named in DIR/home, and `stop` deletes that folder.
set -euo pipefail

usage() { echo "usage: $0 start DIR | stop DIR" >&2; exit 64; }
say() { echo "test-postgres: $*" >&2; }
[ $# -eq 2 ] || usage
command=$1
[ -n "$2" ] || usage

# The server's binaries: pg_config's (libpq-dev) if the server is installed beside it, else the
# newest Debian installs under /usr/lib/postgresql.
find_bindir() {
    local candidate
    if command -v pg_config >/dev/null; then
        candidate=$(pg_config --bindir 2>/dev/null || true)
        [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ] && { echo "$candidate"; return; }
    fi
    for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ] && { echo "$candidate"; return; }
    done
    say "no PostgreSQL server found (pg_config --bindir, /usr/lib/postgresql/*/bin): install Debian's postgresql (scripts/install-deps.sh postgresql)"
    exit 1
}

if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || { say "running as root needs the 'postgres' user (Debian's postgresql package makes it)"; exit 1; }
    as_server() { runuser -u postgres -- "$@"; }
    server_user=postgres
else
    as_server() { "$@"; }
    server_user=$(id -un)
fi

mkdir -p "$2"
dir=$(cd "$2" && pwd)

# Where the cluster lives: DIR itself, or the /tmp folder DIR/home names (see the top).
home_of() {
    if [ -f "$dir/home" ]; then cat "$dir/home"; else echo "$dir"; fi
}

# True when PostgreSQL's running postmaster owns the cluster in $1/data.
running() {
    [ -f "$1/data/PG_VERSION" ] && as_server "$bindir/pg_ctl" -D "$1/data" status >/dev/null 2>&1
}

bindir=$(find_bindir)

stop() {
    local home
    home=$(home_of)
    if ! running "$home"; then
        say "no server running in $home"
    else
        # fast: disconnect clients, shut down cleanly; immediate: if that hangs, abort (the data
        # is throwaway, and recovery on the next start is quick).
        as_server "$bindir/pg_ctl" -D "$home/data" -m fast -w -t 20 -s stop \
            || as_server "$bindir/pg_ctl" -D "$home/data" -m immediate -w -t 20 -s stop \
            || { say "could not stop the server in $home (see $home/postgres.log)"; exit 1; }
        say "stopped the server in $home"
    fi
    if [ "$home" != "$dir" ]; then
        rm -rf "$home" "$dir/home"
    fi
}

# The folder the cluster can live in: DIR when the server user can write it and its socket
# path fits (sun_path holds 107 bytes; ".s.PGSQL.NNNNN" is 15 of them), else a /tmp folder.
choose_home() {
    local home
    home=$(home_of)
    if [ "$home" = "$dir" ]; then
        [ "$(id -u)" -eq 0 ] && chown "$server_user": "$dir"
        chmod 700 "$dir"
        if [ ${#dir} -le 90 ] && as_server test -w "$dir" -a -x "$dir"; then
            echo "$dir"
            return
        fi
        home=$(mktemp -d "${TMPDIR:-/tmp}/retrorapid-test-postgres.XXXXXX")
        echo "$home" >"$dir/home"
        say "the '$server_user' user cannot use $dir (or its path is too long for a socket): the cluster lives in $home"
    fi
    mkdir -p "$home"
    [ "$(id -u)" -eq 0 ] && chown "$server_user": "$home"
    chmod 700 "$home"
    echo "$home"
}

# TEST-ONLY settings, rewritten at every start. fsync, full_page_writes and synchronous_commit
# off: a crash of the machine (not of the server) may corrupt or lose the data, which a test
# server does not keep; never use them elsewhere. max_connections: each test server keeps a
# pool, and several run at once.
write_settings() {
    local home=$1 port=$2
    cat >"$home/data/retrorapid-test.conf" <<EOF
# Written by scripts/test-postgres.sh at every start: a throwaway TEST server, never for data.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$home'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
    # Trust, for loopback only: the socket (in a folder only the server user and root can enter)
    # and 127.0.0.1; nothing else may connect at all.
    cat >"$home/data/pg_hba.conf" <<EOF
# Written by scripts/test-postgres.sh: a throwaway test server, trust on loopback only.
local all all trust
host  all all 127.0.0.1/32 trust
EOF
    [ "$(id -u)" -eq 0 ] && chown "$server_user": "$home/data/retrorapid-test.conf" "$home/data/pg_hba.conf"
    return 0
}

random_port() { # below Linux's ephemeral range (32768-60999), where free_port() picks
    echo $((20000 + (RANDOM * 32768 + RANDOM) % 12000))
}

start() {
    local home port attempt offset started=
    home=$(choose_home)
    if running "$home"; then
        say "a server already runs in $home: stop it first (scripts/test-postgres.sh stop $dir)"
        exit 1
    fi
    if [ ! -f "$home/data/PG_VERSION" ]; then
        rm -rf "$home/data"
        # -U postgres: the superuser is `postgres` whoever runs it, so the URL is the same.
        # --no-sync: nothing here needs to survive a power cut.
        as_server "$bindir/initdb" -D "$home/data" -U postgres --auth=trust -E UTF8 --no-locale \
            --no-sync --no-instructions >"$home/initdb.log" 2>&1 \
            || { cat "$home/initdb.log" >&2; say "initdb failed"; exit 1; }
        echo "include_if_exists = 'retrorapid-test.conf'" | as_server tee -a "$home/data/postgresql.conf" >/dev/null
    fi
    for attempt in $(seq 20); do
        port=$(random_port)
        # Something already listens there: pick again without trying.
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
        write_settings "$home" "$port"
        offset=$(stat -c %s "$home/postgres.log" 2>/dev/null || echo 0)
        if as_server "$bindir/pg_ctl" -D "$home/data" -l "$home/postgres.log" -w -t 60 -s start >/dev/null 2>&1; then
            started=yes
            break
        fi
        # Taken between the check and the bind: another port. Anything else is a real failure.
        if tail -c +"$((offset + 1))" "$home/postgres.log" 2>/dev/null | grep -q "could not bind\|Address already in use"; then
            say "port $port was taken, trying another"
            continue
        fi
        tail -c +"$((offset + 1))" "$home/postgres.log" >&2 2>/dev/null || true
        say "the server did not start (log: $home/postgres.log)"
        exit 1
    done
    [ -n "$started" ] || { say "no free port after 20 tries"; exit 1; }
    # pg_ctl -w waited for the postmaster; now check what the tests will do: TCP on loopback.
    if ! "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -t 30 \
        || ! "$bindir/psql" -X -q -At -h 127.0.0.1 -p "$port" -U postgres -d postgres -c 'select 1' >/dev/null; then
        say "the server started but does not accept connections on 127.0.0.1:$port (log: $home/postgres.log)"
        stop
        exit 1
    fi
    # Any database but the built-in ones was left by a run killed before its teardown (the
    # tests drop theirs): nobody can be connected to it yet, so drop it now.
    printf '%s\n' "SELECT format('DROP DATABASE %I WITH (FORCE)', datname) FROM pg_database" \
        "WHERE datname NOT IN ('postgres', 'template0', 'template1') \\gexec" \
        | "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres -f - >/dev/null \
        || { say "could not drop the databases an earlier run left"; stop; exit 1; }
    say "PostgreSQL $(cat "$home/data/PG_VERSION") running in $home on 127.0.0.1:$port as $server_user"
    echo "postgres://postgres@127.0.0.1:$port/postgres"
}

case "$command" in
    start) start ;;
    stop) stop ;;
    *) usage ;;
esac
