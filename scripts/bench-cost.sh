#!/usr/bin/env bash
# The cost per frame behind docs/BENCHMARKS.md ("Cost per frame"): instructions and heap
# allocations the server process executes per step frame sent and per move answered, counted by
# valgrind's callgrind on a fixed, bounded workload, so that a change is judged by a number this
# shared machine's noise does not move.
#
#   scripts/bench-cost.sh                                  RetroRapid and the direct C broadcaster
#   scripts/bench-cost.sh --runs 3                         the figures in docs/BENCHMARKS.md
#   TARGETS=retrorapid scripts/bench-cost.sh --binary OTHER/.build/release/retrorapid --source OTHER
#
# The workload: `retrorapid loadtest --steps S` with N players at Fast, the bots' seed fixed
# (--seed 1), no missed moves: every player plays one game of S steps, quits it and the run
# ends. The server (or bench/broadcaster.c with --direct-writes, target broadcaster-direct, or
# queued, target broadcaster) runs under `valgrind --tool=callgrind --instr-atstart=no` pinned
# to CPU 1, the load generator to CPU 0. Counting is switched on (callgrind_control -i on) once
# the server listens and dumped (callgrind_control -d) once the load generator has exited, so
# start-up and shutdown are never counted; the sign-ins, starts and quits are taken out by a
# third run of the same players with S = 0 (scaled to the games each run had, should the ramp
# have given up on a player that never signed in). Each repetition is three runs on fresh copies of
# one database:
#   base    S = 0: sign in, start, quit at once
#   calm    S steps, moves only where the road needs one (--wander-chance 0)
#   wander  S steps, a move on nearly every step (--wander-chance 1)
# and, with I the instructions counted, F the step frames and M the moves answered,
#   calm − base·G/Gb = F·f + M·m,  wander − base·G'/Gb = F'·f + M'·m   (G: games played)
# gives f (per step frame, no move) and m (per move answered); likewise for allocations.
# Counted: every thread of the server process (storage thread and SQLite included), in user
# space; the kernel's side of each system call is not visible to valgrind. The roads are the
# server's own (random seeds), so the calm run's moves differ a little from run to run; the
# two equations take that out.
#
# Options: --games N (default 30), --steps S (30), --runs R (repetitions, 2), --level L (fast),
# --binary B (the server, default the load generator's binary), --loadtest B (the load
# generator: a build of this checkout; default its release build, built first), --source DIR (the checkout
# whose Migrations/ and Web/ go with it, default this one), --label L (names the results),
# --work DIR (where they go instead).
# TARGETS="retrorapid broadcaster-direct" (the default; also broadcaster).
# BENCH_COST_PORT: the first run's port less one (default 18950); each run takes the next.
# Results: .build/bench/cost/LABEL/results.md, figures.json (the medians) and runs.jsonl (one
# line a run), the callgrind
# files beside them (callgrind_annotate reads them). About 2 minutes a repetition a target at
# the defaults. Needs valgrind, ss (iproute2) and 2 CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."

games=30
steps=30
runs=2
level=fast
binary=
loadtest=
source_dir=$PWD
label=
work=
while [ $# -gt 0 ]; do
    case "$1" in
        --games) games="$2"; shift ;;
        --steps) steps="$2"; shift ;;
        --runs) runs="$2"; shift ;;
        --level) level="$2"; shift ;;
        --binary) binary="$2"; shift ;;
        --loadtest) loadtest="$2"; shift ;;
        --source) source_dir="$2"; shift ;;
        --label) label="$2"; shift ;;
        --work) work="$2"; shift ;;
        *) echo "bench-cost: unknown option $1" >&2; exit 64 ;;
    esac
    shift
done
targets=${TARGETS:-retrorapid broadcaster-direct}
for target in $targets; do
    case "$target" in
        retrorapid|broadcaster|broadcaster-direct) ;;
        *) echo "bench-cost: unknown target $target (retrorapid, broadcaster, broadcaster-direct)" >&2; exit 64 ;;
    esac
done
if [ "$steps" -lt 1 ] || [ "$games" -lt 1 ] || [ "$runs" -lt 1 ]; then
    echo "bench-cost: --games, --steps and --runs must be at least 1" >&2; exit 64
fi
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null ||
    { echo "bench-cost: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
command -v ss >/dev/null || { echo "bench-cost: needs ss (apt-get install iproute2)" >&2; exit 1; }
if [ "$(nproc)" -lt 2 ]; then
    echo "bench-cost: needs 2 CPUs (server on one, load generator on the other)" >&2; exit 1
fi

# The load generator is this checkout's (it has --steps); the server may be another's.
if [ -z "$loadtest" ]; then
    swift build -c release --product retrorapid >/dev/null
    loadtest=$PWD/.build/release/retrorapid
fi
loadtest=$(realpath "$loadtest")
binary=$(realpath "${binary:-$loadtest}")
source_dir=$(realpath "$source_dir")
work=${work:-$PWD/.build/bench/cost/${label:-$(basename "$source_dir")}}
rm -rf "$work" && mkdir -p "$work" && work=$(realpath "$work")
mkdir -p .build/bench
cc -O2 -g -Wall -Wextra -std=c11 -o .build/bench/broadcaster bench/broadcaster.c \
    $(pkg-config --cflags --libs libwebsockets)

# One database with N players of unlimited play, copied fresh for every run.
"$binary" migrate --database-path "$work/template.sqlite" --migrations-path "$source_dir/Migrations" >/dev/null
"$binary" seed-players --count "$games" --tokens-file "$work/tokens" --database-path "$work/template.sqlite" \
    --migrations-path "$source_dir/Migrations" >/dev/null

# Each run listens on the next port up from here (BENCH_COST_PORT, so two checkouts can run at once).
port=${BENCH_COST_PORT:-18950}
results=$work/runs.jsonl
: > "$results"

wait_for_port() {
    for _ in $(seq 1 300); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.2
    done
    echo "bench-cost: nothing listens on port $1" >&2
    return 1
}

# Waits until no TCP connection to port $1 is open on the server's side.
wait_for_closes() {
    for _ in $(seq 1 300); do
        if [ -z "$(ss -Htn state established state close-wait "( sport = :$1 )")" ]; then return 0; fi
        sleep 0.2
    done
    echo "bench-cost: connections to port $1 still open after 60 s; a count now would miss their closes" >&2
    return 1
}

# run TARGET KIND(base|calm|wander) REPETITION
run() {
    local target=$1 kind=$2 rep=$3 pid run_steps=$steps wander=0 out
    [ "$kind" = base ] && run_steps=0
    [ "$kind" = wander ] && wander=1
    port=$((port + 1))
    out=$work/$target-$kind-$rep
    rm -f "$work/db.sqlite"*
    cp "$work/template.sqlite" "$work/db.sqlite"
    local grind=(valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out.final")
    case "$target" in
        retrorapid)
            taskset -c 1 "${grind[@]}" "$binary" serve --host 127.0.0.1 --port "$port" \
                --database-path "$work/db.sqlite" --web-root "$source_dir/Web" \
                --migrations-path "$source_dir/Migrations" --log-level warning \
                --hello-timeout-seconds 60 --websocket-idle-timeout-seconds 3600 \
                --max-connections-per-ip 20000 >>"$work/server.log" 2>&1 & ;;
        broadcaster)
            taskset -c 1 "${grind[@]}" .build/bench/broadcaster --port "$port" >>"$work/server.log" 2>&1 & ;;
        broadcaster-direct)
            taskset -c 1 "${grind[@]}" .build/bench/broadcaster --port "$port" --direct-writes \
                >>"$work/server.log" 2>&1 & ;;
    esac
    pid=$!
    wait_for_port "$port"
    # Counting starts here, after start-up; the command returns once callgrind has taken it.
    callgrind_control -i on "$pid" >/dev/null
    echo "== $target $kind, repetition $rep: $games games of $run_steps steps at $level" >&2
    local status=0
    taskset -c 0 "$loadtest" loadtest --tokens-file "$work/tokens" --connections "$games" --port "$port" \
        --source-addresses 127.0.0.2 --ramp-per-second 50 --level "$level" --steps "$run_steps" \
        --hold-seconds 600 --seed 1 --miss-chance 0 --wander-chance "$wander" --json \
        2>>"$work/loadtest.log" > "$out.json" || status=$?
    # The load generator's connections closed as it exited; the server's side of each is done
    # once it has closed its socket too (none left ESTABLISHED or CLOSE-WAIT). Counting up to
    # that moment, not the moment the load generator exits, counts every run's 30 closes
    # (about 120,000 instructions each in libwebsockets) instead of however many the server
    # had reached, which moved a run's per-frame figure by up to 10 %.
    wait_for_closes "$port" || { kill -KILL "$pid" 2>/dev/null || true; exit 1; }
    # The counters up to here, into $out.final.1; the exit's own dump (shutdown) is not used.
    callgrind_control -d "$pid" >/dev/null
    callgrind_control -i off "$pid" >/dev/null
    kill -TERM "$pid" 2>/dev/null || true
    timeout 60 tail --pid="$pid" -f /dev/null || kill -KILL "$pid" 2>/dev/null || true
    if [ "$status" -ne 0 ]; then
        echo "bench-cost: loadtest failed (exit $status); see $work/loadtest.log" >&2
        exit 1
    fi
    # Every game started must have ended, within the bound; a player the ramp gave up on
    # (never signed in, on a starved machine) plays none: the summary scales the base run to
    # the games each run had, and refuses a run with fewer than 80 % of them.
    python3 - "$out.json" "$games" <<'CHECK' || { echo "bench-cost: the games did not run as asked; see $work/loadtest.log" >&2; exit 1; }
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["gamesStarted"] == r["gamesEnded"] >= 0.8 * int(sys.argv[2]) and not r["interrupted"] else 1)
CHECK
    mv "$out.final.1" "$out.callgrind"
    rm -f "$out.final"
    python3 scripts/bench-cost-summary.py run "$target" "$kind" "$rep" "$out.json" "$out.callgrind" >> "$results"
    tail -n 1 "$results" | python3 -c 'import json, sys; r = json.load(sys.stdin); print("   ", ", ".join(
        f"{k} {r[k]:,}" for k in ("instructions", "allocations", "stepFrames", "movesAnswered", "crashes", "errors")))' >&2
}

for rep in $(seq 1 "$runs"); do
    for target in $targets; do
        for kind in base calm wander; do run "$target" "$kind" "$rep"; done
    done
done

python3 scripts/bench-cost-summary.py figures "$results" > "$work/figures.json"
python3 scripts/bench-cost-summary.py summary "$results" | tee "$work/results.md"
