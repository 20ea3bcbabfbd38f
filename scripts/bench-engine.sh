#!/usr/bin/env bash
# The engine benchmark behind docs/BENCHMARKS.md: steps per second on one core
# (median of 5 runs, pinned to one CPU) and heap allocations per step (valgrind's
# count for a long run minus a short one, divided by the extra steps).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh valgrind
swift build -c release --product retrorapid >/dev/null
binary=.build/release/retrorapid

echo "== steps per second (one core: taskset -c 1)"
taskset -c 1 "$binary" bench-engine --runs 5 --steps 20000000

echo "== heap allocations per step (valgrind memcheck)"
allocations() {
    valgrind --tool=memcheck "$binary" bench-engine --runs 1 --steps "$1" 2>&1 >/dev/null |
        sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ,
}
short=100000
long=1100000
a=$(allocations $short)
b=$(allocations $long)
echo "allocs_at_${short}_steps=$a allocs_at_${long}_steps=$b"
awk -v a="$a" -v b="$b" -v s="$short" -v l="$long" \
    'BEGIN { printf "allocations_per_step=%.7f\n", (b - a) / (l - s) }'
