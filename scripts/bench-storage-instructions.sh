#!/usr/bin/env bash
# Instructions per stored game on SQLite, behind docs/BENCHMARKS.md ("Instructions per stored
# game"): a count the shared machine's noise does not move, where bench-storage's timings do.
# `retrorapid bench-storage` records its --games three times (synchronous FULL, NORMAL, and
# onto the board), so two runs under valgrind's callgrind with G1 and G2 games differ by
# 3 × (G2 − G1) stored games and nothing else; their instructions' difference over that count
# is the cost of one `GameRepository.record` (the game, its three best scores and ranks, the
# commit), in user space. The game pool is random, so quote more than one run.
# Usage: scripts/bench-storage-instructions.sh [BINARY] (default: the release build, built first)
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-}
if [ -z "$binary" ]; then
    scripts/install-deps.sh valgrind
    swift build -c release --product retrorapid >/dev/null
    binary=.build/release/retrorapid
fi
small=300 large=1200
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
count() {
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1" "$binary" bench-storage --scores 100 --games "$1" \
        --queries 10 --running-games 0 --migrations-path Migrations 2>&1 >/dev/null | awk '/Collected :/ { print $4 }'
}
first=$(count $small)
second=$(count $large)
echo "instructions: $first with $small games, $second with $large"
echo "per stored game: $(( (second - first) / (3 * (large - small)) ))"
