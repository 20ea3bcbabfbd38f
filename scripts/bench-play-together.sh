#!/usr/bin/env bash
# The play-together benchmark behind docs/BENCHMARKS.md ("Play together"): what racing in rooms
# and watching cost one server against the same number of solo games. Three shapes, run back
# to back on a fresh server each, interleaved run by run:
#
#   solo        N players, each in a game of its own
#   race        N racers in N/SEATS rooms (each room opens, fills, gets ready and starts)
#   race+watch  the same races and W watchers spread over the racers (four a room at 2,000
#               racers in 250 rooms and 1,000 watchers)
#
# The server is pinned to CPU 1 and `retrorapid loadtest` to CPU 0, as in
# scripts/bench-capacity.sh; the same bot plays every game. Each figure is the median of
# --runs runs. Loopback only.
#
#   scripts/bench-play-together.sh            2,000 racers, 250 rooms of 8, 1,000 watchers, 3 runs
#   scripts/bench-play-together.sh --quick    one short run of each shape at 200 racers, 100 watchers
#
# Options: --runs N, --players N, --seats K (2-8), --watchers W, --level L, --hold S,
# --settle S, --shapes "solo race race+watch", --miss-chance X (the bot's, default 0.02 as in
# bench-capacity: a racer who crashes waits for the race's end, so fewer games run than in
# solo; 0 keeps nearly every game running through the window). BINARY=path uses that build instead of building
# `-c release` (every shape of a run uses the same one). Results:
# .build/bench/play-together/results.md and runs.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
players=2000
seats=8
watchers=1000
level=fast
hold=20
settle=8
shapes="solo race race+watch"
miss=0.02
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) runs=1; players=200; watchers=100; hold=8; settle=6 ;;
        --runs) runs="$2"; shift ;;
        --players) players="$2"; shift ;;
        --seats) seats="$2"; shift ;;
        --watchers) watchers="$2"; shift ;;
        --level) level="$2"; shift ;;
        --hold) hold="$2"; shift ;;
        --settle) settle="$2"; shift ;;
        --shapes) shapes="$2"; shift ;;
        --miss-chance) miss="$2"; shift ;;
        *) echo "bench-play-together: unknown option $1" >&2; exit 64 ;;
    esac
    shift
done
for shape in $shapes; do
    case "$shape" in
        solo|race|race+watch) ;;
        *) echo "bench-play-together: unknown shape $shape (solo, race, race+watch)" >&2; exit 64 ;;
    esac
done
if [ $((players % seats)) -ne 0 ]; then
    echo "bench-play-together: --players $players is not a whole number of rooms of $seats" >&2
    exit 64
fi

cpus=$(nproc)
if [ "$cpus" -lt 2 ]; then
    echo "bench-play-together: needs 2 CPUs (server on one, load generator on the other); this machine has $cpus" >&2
    exit 1
fi

if [ -z "${BINARY:-}" ]; then
    scripts/install-deps.sh
    swift build -c release --product retrorapid >/dev/null
    BINARY=$PWD/.build/release/retrorapid
fi
binary=$BINARY
work=$PWD/.build/bench/play-together
rm -rf "$work"
mkdir -p "$work"

# Players with unlimited play, racers first and watchers after (loadtest takes them in order).
"$binary" migrate --database-path "$work/db.sqlite" >/dev/null
"$binary" seed-players --count $((players + watchers)) --tokens-file "$work/tokens" --database-path "$work/db.sqlite"

# Each source address carries at most 5,000 connections (docs/LIBWEBSOCKETS-4.1.6.md).
sources="127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5"
port=18590
results=$work/runs.jsonl
: > "$results"

wait_for_port() {
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "bench-play-together: nothing listens on port $1" >&2
    return 1
}

stop() {
    kill -TERM "$1" 2>/dev/null || true
    timeout 30 tail --pid="$1" -f /dev/null || kill -KILL "$1" 2>/dev/null || true
}

# run SHAPE RUN
run() {
    local shape=$1 round=$2 pid status=0
    port=$((port + 1))
    taskset -c 1 "$binary" serve --host 127.0.0.1 --port "$port" \
        --database-path "$work/db.sqlite" --log-level warning \
        --max-connections-per-ip 20000 --websocket-idle-timeout-seconds 3600 \
        >>"$work/server.log" 2>&1 &
    pid=$!
    wait_for_port "$port"
    local flags=()
    case "$shape" in
        race) flags=(--mode race --room-seats "$seats") ;;
        race+watch) flags=(--mode race --room-seats "$seats" --watchers "$watchers") ;;
    esac
    # The machine is shared: note how busy it was as the run began.
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    echo "== run $round: $shape, $players players${flags[*]:+ (${flags[*]})}, load average $load" >&2
    taskset -c 0 "$binary" loadtest --tokens-file "$work/tokens" --connections "$players" --port "$port" \
        --server-pid "$pid" --source-addresses "$sources" --ramp-per-second 1000 --level "$level" \
        --settle-seconds "$settle" --hold-seconds "$hold" --miss-chance "$miss" "${flags[@]}" --json \
        2>>"$work/loadtest.log" > "$work/report.json" || status=$?
    stop "$pid"
    if [ "$status" -ne 0 ]; then
        echo "bench-play-together: loadtest failed (exit $status); see $work/loadtest.log" >&2
        exit 1
    fi
    sed "s/^{/{\"shape\":\"$shape\",\"run\":$round,\"loadAverage\":$load,/" "$work/report.json" | tee -a "$results" >&2
}

for r in $(seq 1 "$runs"); do
    for shape in $shapes; do run "$shape" "$r"; done
done

python3 scripts/bench-play-together-summary.py "$results" | tee "$work/results.md"
