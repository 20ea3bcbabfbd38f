#!/usr/bin/env bash
# What the scale-out costs (docs/BENCHMARKS.md, "Scale out"): the capacity run on PostgreSQL
# in four shapes, each --runs times, interleaved:
#   direct        one node, the load generator straight at it;
#   nginx-one     the same node behind nginx (the proxy hop alone);
#   nginx-two     two nodes behind nginx, the load split between them by nginx;
#   straight-two  the same two nodes behind nginx, each with --game-url: every connection
#                 comes through nginx, is moved to the node's own URL its welcome names
#                 (`loadtest --follow-game-url`, as the browser does), and plays there.
# Every node, nginx and PostgreSQL share CPU 1; `retrorapid loadtest` runs on CPU 0. PostgreSQL
# is a throwaway server with its durable defaults (scripts/test-postgres.sh with
# RETRORAPID_POSTGRES_DURABLE=1), on loopback. Besides the load generator's latency and
# jitter, the CPU seconds each process used over the measured window are read from
# /proc/PID/stat, so the figures say what the proxy and the database cost per game.
#
#   scripts/bench-cluster.sh [--runs N] [--games N] [--hold S] [--settle S] [--shapes A,B] [BINARY]
#
# Results: .build/bench/cluster/runs.jsonl (one line per run) and a summary on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
games=2000
hold=20
settle=5
shapes="direct,nginx-one,nginx-two,straight-two"
binary=
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift ;;
        --games) games="$2"; shift ;;
        --hold) hold="$2"; shift ;;
        --settle) settle="$2"; shift ;;
        --shapes) shapes="$2"; shift ;;
        -*) echo "bench-cluster: unknown option $1" >&2; exit 64 ;;
        *) binary="$1" ;;
    esac
    shift
done
[ "$(nproc)" -ge 2 ] || { echo "bench-cluster: needs 2 CPUs" >&2; exit 1; }
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "bench-cluster: needs nginx (apt install nginx-light)" >&2; exit 1; }
nginx_binary=$(command -v nginx || echo /usr/sbin/nginx)

if [ -z "$binary" ]; then
    scripts/install-deps.sh postgresql
    swift build -c release --product retrorapid >/dev/null
    binary=$PWD/.build/release/retrorapid
fi
work=$PWD/.build/bench/cluster
rm -rf "$work"
mkdir -p "$work"
results=$work/runs.jsonl
: > "$results"

admin=$(RETRORAPID_POSTGRES_DURABLE=1 scripts/test-postgres.sh start "$work/postgres")
trap 'scripts/test-postgres.sh stop "$work/postgres" >/dev/null 2>&1 || true; [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true' EXIT
psql -X -q -d "$admin" -c "CREATE DATABASE retrorapid_bench"
database=${admin%/postgres}/retrorapid_bench
postgres_pid=$(head -1 "$(psql -X -Atd "$admin" -c 'SHOW data_directory')/postmaster.pid")
"$binary" migrate --database-url "$database" >/dev/null
"$binary" seed-players --count "$games" --tokens-file "$work/tokens" --database-url "$database" >/dev/null

sources="127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5"
port=18590

wait_for_port() {
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "bench-cluster: nothing listens on port $1" >&2
    return 1
}

stop() {
    kill -TERM "$1" 2>/dev/null || true
    timeout 20 tail --pid="$1" -f /dev/null || kill -KILL "$1" 2>/dev/null || true
}

# CPU seconds (user + system) a process has used so far.
cpu_seconds() {
    awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# A process and its children's: PostgreSQL's postmaster and what it runs (a backend per node
# connection, the WAL writer, the checkpointer…), nginx's master and its worker.
tree_cpu_seconds() {
    local total=0 pid
    [ "$1" -gt 0 ] || { echo 0; return; }
    for pid in "$1" $(ps -o pid= --ppid "$1"); do
        total=$(awk -v a="$total" -v b="$(cpu_seconds "$pid")" 'BEGIN { print a + b }')
    done
    echo "$total"
}

# The nodes sign their bus messages (docs/OPERATIONS.md, "Signing the cluster bus"); one
# throwaway secret per run, passed in the environment so that it is not in `ps`.
export RETRORAPID_CLUSTER_SECRET=${RETRORAPID_CLUSTER_SECRET:-$(openssl rand -base64 48 | tr -d '\n')}

start_node() {
    local node_port=$1 name=$2; shift 2
    taskset -c 1 "$binary" serve --host 127.0.0.1 --port "$node_port" --database-url "$database" --node-id "$name" \
        --log-level warning --max-connections-per-ip 20000 --websocket-idle-timeout-seconds 3600 \
        --trusted-proxies 127.0.0.1 "$@" >>"$work/node-$name.log" 2>&1 &
    echo $!
}

# nginx in front of the given node ports: plain HTTP on loopback (the hop, without TLS), the
# WebSocket upgrade and buffering off, as Deploy/nginx/retrorapid-cluster.conf proxies /ws.
start_nginx() {
    local listen=$1; shift
    local upstreams=""
    for node_port in "$@"; do upstreams+="        server 127.0.0.1:$node_port;"$'\n'; done
    cat >"$work/nginx.conf" <<EOF
worker_processes 1;
worker_cpu_affinity 10;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 16000; }
http {
    access_log off;
    upstream retrorapid_nodes {
        least_conn;
$upstreams        keepalive 64;
    }
    map \$http_upgrade \$connection_upgrade { default upgrade; '' close; }
    server {
        listen 127.0.0.1:$listen;
        location / {
            proxy_pass http://retrorapid_nodes;
            proxy_http_version 1.1;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection \$connection_upgrade;
            proxy_set_header Host \$http_host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_buffering off;
            proxy_read_timeout 3600s;
        }
    }
}
EOF
    # Two sockets a player (client side, node side): as many files as the hard limit allows.
    ulimit -n "$(ulimit -Hn)"
    "$nginx_binary" -c "$work/nginx.conf" -p "$work" -e "$work/nginx-error.log"
    wait_for_port "$listen"
    cat "$work/nginx.pid"
}

run() {
    local shape=$1 target nodes=() pids=() nginx_pid= follow=()
    port=$((port + 3))
    case "$shape" in
        direct)
            pids+=("$(start_node "$port" a)"); wait_for_port "$port"; target=$port ;;
        nginx-one)
            pids+=("$(start_node "$port" a)"); wait_for_port "$port"
            nginx_pid=$(start_nginx $((port + 2)) "$port"); target=$((port + 2)) ;;
        nginx-two)
            pids+=("$(start_node "$port" a)" "$(start_node $((port + 1)) b)"); wait_for_port "$port"; wait_for_port $((port + 1))
            nginx_pid=$(start_nginx $((port + 2)) "$port" $((port + 1))); target=$((port + 2)) ;;
        straight-two)
            pids+=("$(start_node "$port" a --game-url "ws://127.0.0.1:$port/ws")"
                   "$(start_node $((port + 1)) b --game-url "ws://127.0.0.1:$((port + 1))/ws")")
            wait_for_port "$port"; wait_for_port $((port + 1))
            nginx_pid=$(start_nginx $((port + 2)) "$port" $((port + 1))); target=$((port + 2)); follow=(--follow-game-url) ;;
    esac
    echo "== $shape, $games games" >&2
    local seen
    seen=$(grep -c "measuring for" "$work/loadtest.log" 2>/dev/null || true)
    (
        while [ "$(grep -c "measuring for" "$work/loadtest.log" 2>/dev/null || true)" = "$seen" ]; do sleep 0.2; done
        { for pid in "${pids[@]}"; do cpu_seconds "$pid"; done; tree_cpu_seconds "${nginx_pid:-0}"; tree_cpu_seconds "$postgres_pid"; } > "$work/cpu-start"
        sleep "$hold"
        { for pid in "${pids[@]}"; do cpu_seconds "$pid"; done; tree_cpu_seconds "${nginx_pid:-0}"; tree_cpu_seconds "$postgres_pid"; } > "$work/cpu-end"
    ) &
    local watcher=$!
    local status=0
    taskset -c 0 "$binary" loadtest --tokens-file "$work/tokens" --connections "$games" --port "$target" \
        --server-pid "${pids[0]}" --source-addresses "$sources" --ramp-per-second 1000 \
        --settle-seconds "$settle" --hold-seconds "$hold" --level fast --json "${follow[@]}" \
        2>>"$work/loadtest.log" > "$work/report.json" || status=$?
    wait "$watcher" 2>/dev/null || true
    [ -n "$nginx_pid" ] && stop "$nginx_pid"
    for pid in "${pids[@]}"; do stop "$pid"; done
    if [ "$status" -ne 0 ]; then
        echo "bench-cluster: loadtest failed (exit $status); see $work/loadtest.log" >&2
        exit 1
    fi
    python3 - "$shape" "${#pids[@]}" "$hold" "$work/cpu-start" "$work/cpu-end" "$work/report.json" <<'PY' | tee -a "$results" >&2
import json, sys
shape, nodes, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
start = [float(x) for x in open(sys.argv[4]).read().split()]
end = [float(x) for x in open(sys.argv[5]).read().split()]
used = [b - a for a, b in zip(start, end)]
report = json.load(open(sys.argv[6]))
line = {"shape": shape, "nodes_cpu_percent": round(100 * sum(used[:nodes]) / hold, 1),
        "nginx_cpu_percent": round(100 * used[nodes] / hold, 1), "postgres_cpu_percent": round(100 * used[nodes + 1] / hold, 1),
        "report": report}
print(json.dumps(line))
PY
}

for r in $(seq 1 "$runs"); do
    echo "== run $r of $runs" >&2
    for shape in ${shapes//,/ }; do run "$shape"; done
done

python3 - "$results" "$games" <<'PY'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
games = int(sys.argv[2])
def find(report, *names):
    for name in names:
        node = report
        try:
            for part in name.split("."):
                node = node[part]
            return node
        except (KeyError, TypeError):
            continue
    return None
print(f"| shape ({games} games at Fast) | nodes CPU % | nginx CPU % | PostgreSQL CPU % | all, per 1,000 games | p99 input→result ms | p99 jitter ms |")
print("|---|---|---|---|---|---|---|")
for shape in ["direct", "nginx-one", "nginx-two", "straight-two"]:
    mine = [r for r in runs if r["shape"] == shape]
    if not mine:
        continue
    med = lambda values: statistics.median(v for v in values if v is not None) if any(v is not None for v in values) else float("nan")
    nodes = med([r["nodes_cpu_percent"] for r in mine])
    proxy = med([r["nginx_cpu_percent"] for r in mine])
    database = med([r["postgres_cpu_percent"] for r in mine])
    p99 = med([find(r["report"], "latencyMs.p99") for r in mine])
    jitter = med([find(r["report"], "jitterMs.p99") for r in mine])
    print(f"| {shape} | {nodes:.1f} | {proxy:.1f} | {database:.1f} | {(nodes + proxy + database) * 1000 / games:.1f} | {p99} | {jitter} |")
print(f"\nmedians of {max(len([r for r in runs if r['shape'] == s]) for s in {r['shape'] for r in runs})} runs each; raw lines in {sys.argv[1]}")
PY
