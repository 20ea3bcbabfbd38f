#!/usr/bin/env bash
# End-to-end check of `retrorapid serve` as an operator runs it: starts the binary on a
# free loopback port with a fresh database, waits for /healthz, checks the database was
# migrated, then sends SIGTERM and expects a clean exit 0.
# Usage: scripts/smoke-serve.sh PATH-TO-RETRORAPID
set -euo pipefail
binary=${1:?usage: smoke-serve.sh PATH-TO-RETRORAPID}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

"$binary" serve --host 127.0.0.1 --port "$port" --database-path "$work/data/rr.sqlite" >"$work/log" 2>&1 &
pid=$!

get() { # GET $1 on the server with bash's /dev/tcp, printing the whole response
    exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
    printf 'GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' "$1" >&3
    cat <&3
    exec 3<&-
}
for _ in $(seq 50); do
    response=$(get /healthz 2>/dev/null) && break
    sleep 0.1
done
echo "$response" | grep -q '"status":"ok"' || { echo "smoke: /healthz did not answer"; cat "$work/log"; exit 1; }
get / | grep -q "<h1" || { echo "smoke: / did not serve the client"; exit 1; }
migrations=$(ls Migrations/*.sql | wc -l)
applied=$(grep -c "applied migration" "$work/log" || true)
[ "$applied" -eq "$migrations" ] || { echo "smoke: applied $applied of $migrations migrations"; cat "$work/log"; exit 1; }

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[ "$status" -eq 0 ] || { echo "smoke: serve exited $status after SIGTERM"; cat "$work/log"; exit 1; }
echo "smoke: serve answered, migrated $applied migrations, and stopped cleanly on SIGTERM"
