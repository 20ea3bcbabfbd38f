#!/usr/bin/env bash
# The capacity benchmark behind docs/BENCHMARKS.md ("Capacity"): how many players one server
# core holds, how fast it answers, what each costs, and how that compares with the C
# broadcaster in bench/ (the same library doing nothing but moving frames), run twice: as
# `broadcaster` (queued writes, one per WRITEABLE) and as `broadcaster-direct`
# (--direct-writes: messages written at once, as RetroRapid writes them).
#
# Every run starts a fresh server (or broadcaster) pinned to CPU 1 and `retrorapid loadtest`
# pinned to CPU 0, ramps, settles, measures a window, and keeps the load generator's JSON
# report. Each figure is the median of --runs runs. Loopback only.
#
#   scripts/bench-capacity.sh            the full sweep behind docs/BENCHMARKS.md (33 minutes measured)
#   scripts/bench-capacity.sh --quick    one short run of each kind (`make bench`, ~1 minute)
#
# Options: --runs N, --games "N N …" (running-game counts to sweep), --idle N (idle players),
# --level L, --hold S, --settle S. Results: .build/bench/capacity/results.md and runs.jsonl.
# TARGETS="…" picks targets (default "retrorapid broadcaster broadcaster-direct"); with
# --baseline B (another build's server binary, e.g. main's) the target `baseline` runs B the
# way `retrorapid` runs this checkout's build, in turn with the others, so a before and an
# after are measured on the same machine in the same minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
games="5000 10000 12500 15000 19900"
idle=10000
level=fast
hold=20
settle=5
baseline=
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) runs=1; games="2000"; idle=2000; hold=10; settle=3 ;;
        --runs) runs="$2"; shift ;;
        --games) games="$2"; shift ;;
        --idle) idle="$2"; shift ;;
        --level) level="$2"; shift ;;
        --hold) hold="$2"; shift ;;
        --settle) settle="$2"; shift ;;
        --baseline) baseline="$2"; shift ;;
        *) echo "bench-capacity: unknown option $1" >&2; exit 64 ;;
    esac
    shift
done

# TARGETS="broadcaster-direct" (or any subset) re-measures some targets only.
targets=${TARGETS:-retrorapid broadcaster broadcaster-direct}
for target in $targets; do
    case "$target" in
        retrorapid|broadcaster|broadcaster-direct) ;;
        baseline) [ -x "$baseline" ] || { echo "bench-capacity: target baseline needs --baseline BINARY" >&2; exit 64; } ;;
        *) echo "bench-capacity: unknown target $target (retrorapid, broadcaster, broadcaster-direct, baseline)" >&2; exit 64 ;;
    esac
done

cpus=$(nproc)
if [ "$cpus" -lt 2 ]; then
    echo "bench-capacity: needs 2 CPUs (server on one, load generator on the other); this machine has $cpus" >&2
    exit 1
fi

scripts/install-deps.sh
swift build -c release --product retrorapid >/dev/null
binary=$PWD/.build/release/retrorapid
work=$PWD/.build/bench/capacity
rm -rf "$work"
mkdir -p "$work"
cc -O2 -Wall -Wextra -std=c11 -o .build/bench/broadcaster bench/broadcaster.c \
    $(pkg-config --cflags --libs libwebsockets)

# Players with unlimited play for the largest count; tokens stay in the work folder (0600).
most=$idle
for n in $games; do [ "$n" -gt "$most" ] && most=$n; done
"$binary" migrate --database-path "$work/db.sqlite" >/dev/null
"$binary" seed-players --count "$most" --tokens-file "$work/tokens" --database-path "$work/db.sqlite"

# Each source address carries at most 5,000 connections (docs/LIBWEBSOCKETS-4.1.6.md).
sources="127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5"
port=18490
results=$work/runs.jsonl
: > "$results"

wait_for_port() {
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "bench-capacity: nothing listens on port $1" >&2
    return 1
}

stop() {
    kill -TERM "$1" 2>/dev/null || true
    timeout 20 tail --pid="$1" -f /dev/null || kill -KILL "$1" 2>/dev/null || true
}

# run TARGET(retrorapid|broadcaster|broadcaster-direct) KIND(idle|games) N
run() {
    local target=$1 kind=$2 n=$3 pid
    port=$((port + 1))
    case "$target" in
        retrorapid|baseline)
            local server=$binary
            [ "$target" = baseline ] && server=$baseline
            taskset -c 1 "$server" serve --host 127.0.0.1 --port "$port" \
                --database-path "$work/db.sqlite" --log-level warning \
                --max-connections-per-ip 20000 --websocket-idle-timeout-seconds 3600 \
                >>"$work/server.log" 2>&1 & ;;
        broadcaster)
            taskset -c 1 .build/bench/broadcaster --port "$port" >>"$work/server.log" 2>&1 & ;;
        broadcaster-direct)
            taskset -c 1 .build/bench/broadcaster --port "$port" --direct-writes \
                >>"$work/server.log" 2>&1 & ;;
        *) echo "bench-capacity: unknown target $target" >&2; exit 64 ;;
    esac
    pid=$!
    wait_for_port "$port"
    local flags=(--level "$level")
    [ "$kind" = idle ] && flags=(--idle)
    echo "== $target, $n $( [ "$kind" = idle ] && echo "idle players" || echo "games at $level" )" >&2
    # RetroRapid says how late its own steps went out (GET /metrics): scraped when the load
    # generator starts measuring and a second before it stops, so the window's steps only.
    local watcher=
    rm -f "$work/lateness-start" "$work/lateness-end"
    if { [ "$target" = retrorapid ] || [ "$target" = baseline ]; } && [ "$kind" = games ]; then
        local seen
        seen=$(grep -c "measuring for" "$work/loadtest.log" || true)
        (
            while [ "$(grep -c "measuring for" "$work/loadtest.log" || true)" = "$seen" ]; do sleep 0.2; done
            scrape_lateness "$port" "$work/lateness-start"
            sleep $((hold - 1))
            scrape_lateness "$port" "$work/lateness-end"
        ) &
        watcher=$!
    fi
    local status=0
    taskset -c 0 "$binary" loadtest --tokens-file "$work/tokens" --connections "$n" --port "$port" \
        --server-pid "$pid" --source-addresses "$sources" --ramp-per-second 1000 \
        --settle-seconds "$settle" --hold-seconds "$hold" "${flags[@]}" --json \
        2>>"$work/loadtest.log" > "$work/report.json" || status=$?
    if [ -n "$watcher" ]; then kill "$watcher" 2>/dev/null || true; wait "$watcher" 2>/dev/null || true; fi
    if [ "$status" -ne 0 ]; then
        stop "$pid"
        echo "bench-capacity: loadtest failed (exit $status); see $work/loadtest.log" >&2
        exit 1
    fi
    python3 scripts/bench-capacity-lateness.py "$work/lateness-start" "$work/lateness-end" < "$work/report.json" |
        sed "s/^{/{\"target\":\"$target\",\"kind\":\"$kind\",/" | tee -a "$results" >&2
    stop "$pid"
}

# The step-lateness histogram's bucket lines, from the server on PORT into FILE.
scrape_lateness() {
    python3 - "$1" > "$2" <<'SCRAPE' || true
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode()
print("\n".join(l for l in text.splitlines() if l.startswith("retrorapid_game_step_lateness_seconds_bucket")))
SCRAPE
}

for r in $(seq 1 "$runs"); do
    echo "== run $r of $runs" >&2
    case " $targets " in *" retrorapid "*) run retrorapid idle "$idle" ;; esac
    for n in $games; do
        for target in $targets; do run "$target" games "$n"; done
    done
done

python3 scripts/bench-capacity-summary.py "$results" | tee "$work/results.md"
