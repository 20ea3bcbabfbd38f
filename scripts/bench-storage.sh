#!/usr/bin/env bash
# The storage benchmark behind docs/BENCHMARKS.md ("Storage"): finished games
# stored per second (synchronous=FULL as the server runs, NORMAL for comparison), then
# leaderboard top-20 and around-me latency (median, p99) with a million best scores.
# Usage: scripts/bench-storage.sh [retrorapid bench-storage options, e.g. --scores 100000]
# The databases go in a temporary folder on the disk of $TMPDIR (default /tmp), removed
# afterwards; pass --dir DIR to measure another disk.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build -c release --product retrorapid >/dev/null
binary=.build/release/retrorapid

echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# The defaults: --scores 1000000 --games 20000 --queries 2000 (a board the size a popular game reaches).
echo "== $binary bench-storage $*"
"$binary" bench-storage "$@"
