#!/usr/bin/env bash
# Failover at load (docs/BENCHMARKS.md, "Failover at load"): two nodes on a throwaway
# PostgreSQL behind nginx (node a first, node b its backup), N load-generator players each
# playing Fast games on node a and reconnecting as the browser does (`loadtest --reconnect`:
# 0.5 s after a drop, through nginx, then `resume`). Mid-window node a is killed with SIGKILL.
# Measured: how long after the kill the games run again on node b (half, 99 %, all), the play
# each lost, and, from the database once b has stopped: every game acknowledged (`gameOver`
# with `saved`) stored, each game stored once, and each game holding exactly one play.
#
#   scripts/bench-failover.sh [--games N] [--runs R] [--hold S] [--kill-after S] [--work DIR] [BINARY]
#
# --hold is the measured window (45 s), --kill-after how far into it node a dies (15 s); the
# games need the lease (6 s) and a few seconds more to come back within the window.
#
# The nodes, nginx and PostgreSQL share CPU 1; the load generator runs on CPU 0. Results:
# DIR/runs.jsonl (.build/bench/failover unless --work says) and a summary on stdout. The players have 1,000 free plays a
# day instead of unlimited play, so that every game takes one play and a game charged twice
# would show.
set -euo pipefail
cd "$(dirname "$0")/.."

games=2000
runs=1
hold=45
kill_after=15
work=$PWD/.build/bench/failover
binary=
while [ $# -gt 0 ]; do
    case "$1" in
        --games) games="$2"; shift ;;
        --runs) runs="$2"; shift ;;
        --hold) hold="$2"; shift ;;
        --kill-after) kill_after="$2"; shift ;;
        --work) work="$2"; shift ;;
        -*) echo "bench-failover: unknown option $1" >&2; exit 64 ;;
        *) binary="$1" ;;
    esac
    shift
done
[ "$(nproc)" -ge 2 ] || { echo "bench-failover: needs 2 CPUs" >&2; exit 1; }
nginx_binary=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx_binary" ] || { echo "bench-failover: needs nginx" >&2; exit 1; }
if [ -z "$binary" ]; then
    scripts/install-deps.sh postgresql nginx
    swift build -c release --product retrorapid >/dev/null
    binary=$PWD/.build/release/retrorapid
fi
rm -rf "$work"
mkdir -p "$work"
results=$work/runs.jsonl
: > "$results"

admin=$(RETRORAPID_POSTGRES_DURABLE=1 scripts/test-postgres.sh start "$work/postgres")
cleanup() {
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    pkill -KILL -f "$work/node-" 2>/dev/null || true
    scripts/test-postgres.sh stop "$work/postgres" >/dev/null 2>&1 || true
}
trap cleanup EXIT
export RETRORAPID_CLUSTER_SECRET=${RETRORAPID_CLUSTER_SECRET:-$(openssl rand -base64 48 | tr -d '\n')}
sources="127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5"

wait_for_port() {
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "bench-failover: nothing listens on port $1" >&2
    return 1
}

sql() { psql -X -qAt -d "$database" -c "$1"; }

for r in $(seq 1 "$runs"); do
    echo "== run $r of $runs: $games games" >&2
    psql -X -q -d "$admin" -c "DROP DATABASE IF EXISTS retrorapid_failover WITH (FORCE)" -c "CREATE DATABASE retrorapid_failover"
    database=${admin%/postgres}/retrorapid_failover
    "$binary" migrate --database-url "$database" >/dev/null
    rm -f "$work/tokens"
    "$binary" seed-players --count "$games" --tokens-file "$work/tokens" --database-url "$database" >/dev/null
    # Free plays, not unlimited play: every game takes one, so a second charge would show.
    sql "DELETE FROM unlimited_entitlements"

    read -r port_a port_b front < <(python3 -c 'import socket
ports = []
for _ in range(3):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ports.append(s)
print(*(s.getsockname()[1] for s in ports))')
    for node in a b; do
        node_port=$([ "$node" = a ] && echo "$port_a" || echo "$port_b")
        mkdir -p "$work/node-$node"
        taskset -c 1 "$binary" serve --host 127.0.0.1 --port "$node_port" --database-url "$database" --node-id "$node" \
            --log-level notice --max-connections-per-ip 20000 --websocket-idle-timeout-seconds 3600 \
            --daily-free-plays 1000 --trusted-proxies 127.0.0.1 --web-root Web --migrations-path Migrations \
            >"$work/node-$node/server.log" 2>&1 &
        eval "pid_$node=$!"
        disown "$!"  # its SIGKILL is the benchmark, not news for the shell
        wait_for_port "$node_port"
    done
    cat >"$work/nginx.conf" <<EOF
worker_processes 1;
worker_cpu_affinity 10;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 16000; }
http {
    access_log off;
    upstream retrorapid {
        server 127.0.0.1:$port_a max_fails=2 fail_timeout=10s;
        server 127.0.0.1:$port_b backup;
        keepalive 64;
    }
    map \$http_upgrade \$connection_upgrade { default upgrade; '' close; }
    server {
        listen 127.0.0.1:$front;
        location / {
            proxy_pass http://retrorapid;
            proxy_http_version 1.1;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection \$connection_upgrade;
            proxy_set_header Host \$http_host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_buffering off;
            proxy_connect_timeout 2s;
            proxy_read_timeout 3600s;
        }
    }
}
EOF
    ulimit -n "$(ulimit -Hn)"
    "$nginx_binary" -c "$work/nginx.conf" -p "$work" -e "$work/nginx-error.log"
    wait_for_port "$front"

    # Node a dies mid-window: once the window opens (the load generator's progress line), wait, then SIGKILL.
    : > "$work/loadtest.log"
    (
        while ! grep -q "measuring for" "$work/loadtest.log" 2>/dev/null; do sleep 0.2; done
        sleep "$kill_after"
        kill -KILL "$pid_a"
        echo "killed node a" >&2
    ) &
    killer=$!
    status=0
    taskset -c 0 "$binary" loadtest --tokens-file "$work/tokens" --connections "$games" --port "$front" \
        --source-addresses "$sources" --ramp-per-second 500 --settle-seconds 5 --hold-seconds "$hold" \
        --level fast --reconnect --json 2>>"$work/loadtest.log" > "$work/report.json" || status=$?
    wait "$killer" 2>/dev/null || true
    # b stores what still runs (shutdown), so the database holds every game.
    kill -TERM "$pid_b"
    timeout 60 tail --pid="$pid_b" -f /dev/null || kill -KILL "$pid_b"
    kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -f "$work/nginx.pid"
    [ "$status" -eq 0 ] || { echo "bench-failover: loadtest failed (exit $status); see $work/loadtest.log" >&2; exit 1; }

    stored=$(sql "SELECT count(*) FROM games")
    twice=$(sql "SELECT count(*) FROM (SELECT public_id FROM games GROUP BY public_id HAVING count(*) > 1) AS t")
    running=$(sql "SELECT count(*) FROM running_games")
    plays=$(sql "SELECT count(*) FROM plays")
    playless=$(sql "SELECT count(*) FROM games g WHERE NOT EXISTS (SELECT 1 FROM plays p WHERE p.game_id = g.public_id)")
    orphan_plays=$(sql "SELECT count(*) FROM plays p WHERE NOT EXISTS (SELECT 1 FROM games g WHERE g.public_id = p.game_id)")
    crashed=$(sql "SELECT count(*) FROM games WHERE end_reason = 'server_crash'")
    python3 - "$work/report.json" "$stored" "$twice" "$running" "$plays" "$playless" "$orphan_plays" "$crashed" <<'PY' | tee -a "$results" >&2
import json, sys
report = json.load(open(sys.argv[1]))
stored, twice, running, plays, playless, orphan, crashed = (int(x) for x in sys.argv[2:9])
failover = report.get("failover", {})
line = {"games": report["connections"], "failover": failover, "stored": stored, "storedTwice": twice,
        "leftRunning": running, "plays": plays, "gamesWithoutPlay": playless, "playsWithoutGame": orphan,
        "serverCrash": crashed, "acknowledged": failover.get("gamesSaved"),
        "ok": twice == 0 and running == 0 and playless == 0 and orphan == 0
              and stored >= (failover.get("gamesSaved") or 0) and plays == stored}
print(json.dumps(line))
PY
done

python3 - "$results" <<'PY'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
print("| games on node a | taken back / dropped while playing | running again: half | 99 % | all (s after the kill) | play lost p50 / p99 / max (ms) | checks |")
print("|---|---|---|---|---|---|---|")
for r in runs:
    f = r["failover"]
    again, lost = f.get("runningAgainMs", {}), f.get("lostMs", {})
    print(f"| {r['games']} | {f.get('takenBack')} / {f.get('droppedWhilePlaying')} | {again.get('p50', 0) / 1000:.1f} | "
          f"{again.get('p99', 0) / 1000:.1f} | {again.get('max', 0) / 1000:.1f} | {lost.get('p50')} / {lost.get('p99')} / {lost.get('max')} | "
          f"{'ok' if r['ok'] else 'FAILED'}: {r['acknowledged']} acknowledged, {r['stored']} stored, none twice; {r['plays']} plays |")
print(f"\nraw lines in {sys.argv[1]}")
sys.exit(0 if all(r["ok"] for r in runs) else 1)
PY
