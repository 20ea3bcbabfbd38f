#!/usr/bin/env bash
# Instructions the server executes per game step, counted by callgrind, so a change can be
# judged by a number this shared machine's noise does not move (docs/BENCHMARKS.md).
#
#   scripts/bench-instructions.sh [BINARY]    (default .build/release/retrorapid)
#
# 300 games at Fast (about 500 steps a second, with the load generator's moves) against one
# server run under `valgrind --tool=callgrind`; after 15 s the counters are zeroed, 20 s later
# dumped, and the instructions of every thread in between are divided by the steps the server
# took in the same window (retrorapid_game_steps_total on GET /metrics). Moves answered,
# checkpoints and the storage thread's work are in the figure, as they are in a step's cost.
# About 1.5 minutes. Needs valgrind (Debian's `valgrind`) and 2 CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(realpath "${1:-.build/release/retrorapid}")
command -v valgrind >/dev/null || { echo "bench-instructions: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
work=$PWD/.build/bench/instructions
rm -rf "$work" && mkdir -p "$work"
"$binary" migrate --database-path "$work/db.sqlite" --migrations-path Migrations >/dev/null
"$binary" seed-players --count 300 --tokens-file "$work/tokens" --database-path "$work/db.sqlite" --migrations-path Migrations >/dev/null
port=18890
taskset -c 1 valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" \
    "$binary" serve --host 127.0.0.1 --port "$port" --database-path "$work/db.sqlite" \
    --web-root Web --migrations-path Migrations --log-level warning --hello-timeout-seconds 60 \
    --websocket-idle-timeout-seconds 3600 --max-connections-per-ip 20000 > "$work/server.log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.5; done
taskset -c 0 "$binary" loadtest --tokens-file "$work/tokens" --connections 300 --port "$port" \
    --source-addresses 127.0.0.2 --ramp-per-second 100 --settle-seconds 5 --hold-seconds 40 \
    --level fast --json > "$work/report.json" 2> "$work/loadtest.log" &
load=$!
steps() { curl -s "http://127.0.0.1:$port/metrics" | awk '$1 == "retrorapid_game_steps_total" { print $2 }'; }
sleep 15
before=$(steps)
callgrind_control -z "$server" >/dev/null 2>&1
sleep 20
callgrind_control -d "$server" >/dev/null 2>&1
after=$(steps)
wait "$load" || true
ir=$(awk '/^summary:/ { print $2 }' "$work"/callgrind.out.1)
taken=$((${after%.*} - ${before%.*}))
echo "steps=$taken instructions=$ir per_step=$((ir / taken))"
