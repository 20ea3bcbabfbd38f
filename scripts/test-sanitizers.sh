#!/usr/bin/env bash
# The Swift test suite once under AddressSanitizer and once under ThreadSanitizer, then the
# WebSocket and HTTP end-to-end tests against a server built with each (docs/FUZZING.md,
# "Sanitizers"). Each sanitizer builds in its own folder (.build/address-san,
# .build/thread-san); reports land in .build/sanitizer-reports and any report fails the run.
#
# Usage: scripts/test-sanitizers.sh [address|thread ...]   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=("$@")
[ ${#sanitizers[@]} -eq 0 ] && sanitizers=(address thread)
# The survival property tests play ~120 million steps with 10,000 seeds: hours under TSan.
# 200 seeds still run every level and bot on the simulation's two threads.
export RETRORAPID_TEST_SURVIVAL_SEEDS=${RETRORAPID_TEST_SURVIVAL_SEEDS:-200}
reports=$(pwd)/.build/sanitizer-reports
venv=.build/venv

for sanitizer in "${sanitizers[@]}"; do
    scratch=.build/$sanitizer-san
    rm -rf "$reports/$sanitizer"
    mkdir -p "$reports/$sanitizer"
    # Optimised with testing on, as `make test` builds: the sanitizers check optimised code
    # as well, and the suite runs in minutes instead of tens of minutes.
    flags=(-c release -Xswiftc -enable-testing --sanitize="$sanitizer" --scratch-path "$scratch")
    # Reports go to files as well as standard error, so that one from a server process the
    # end-to-end tests start (whose output they keep in a temporary log) is not lost.
    # detect_leaks=0: LeakSanitizer does not follow Swift's references (it reports ~10,000
    # "leaks" over the suite, and even objects a live global still holds: docs/FUZZING.md).
    export ASAN_OPTIONS="log_path=$reports/address/report:detect_leaks=0:abort_on_error=1"
    # The suppressions cover only Synchronization.Mutex, which TSan cannot see on Linux.
    export TSAN_OPTIONS="log_path=$reports/thread/report:suppressions=$(pwd)/scripts/tsan-suppressions.txt"
    echo "== swift test --sanitize=$sanitizer"
    start=$SECONDS
    swift build "${flags[@]}" --build-tests
    swift test "${flags[@]}" --skip-build
    echo "== swift test --sanitize=$sanitizer: $((SECONDS - start)) s"

    echo "== end-to-end WebSocket and HTTP tests against retrorapid --sanitize=$sanitizer"
    start=$SECONDS
    swift build "${flags[@]}" --product retrorapid
    make -s python-test-deps
    RETRORAPID_BINARY=$(pwd)/$scratch/release/retrorapid "$venv/bin/python" -m pytest -q \
        Tests/python/test_ws_*.py Tests/python/test_http_*.py
    echo "== end-to-end tests against retrorapid --sanitize=$sanitizer: $((SECONDS - start)) s"

    if [ -n "$(ls -A "$reports/$sanitizer")" ]; then
        echo "test-sanitizers: $sanitizer reports in $reports/$sanitizer:" >&2
        ls "$reports/$sanitizer" >&2
        exit 1
    fi
done
echo "test-sanitizers: ${sanitizers[*]}: no reports"
