#!/usr/bin/env bash
# Builds the libFuzzer targets with AddressSanitizer and runs each for a bounded time, one
# after the other (docs/FUZZING.md). Everything it writes stays under .build/fuzz: new corpus
# entries in .build/fuzz/corpus/<target>/, crash files in .build/fuzz/artifacts/<target>/.
# The committed seed corpus (Tests/Fuzz/corpus/<target>/) is only read, except by `merge`.
#
# Usage: scripts/fuzz.sh [run|merge|build]
#   run    (default) build, then fuzz each target for FUZZ_SECONDS (and at most FUZZ_RUNS inputs)
#   merge  build, then add to Tests/Fuzz/corpus/<target>/ the inputs of .build/fuzz/corpus/<target>/
#          that reach code the committed corpus does not (libFuzzer -merge=1); review and commit
#   build  only build the fuzz binaries
# Environment: FUZZ_TARGETS (default: every folder of Tests/Fuzz/corpus), FUZZ_SECONDS (60),
# FUZZ_RUNS (unset: no limit), FUZZ_FLAGS (more libFuzzer flags, e.g. -jobs=2).
set -euo pipefail
# A broken property ends in fatalError: let libFuzzer report it and save the input, without
# the Swift runtime's backtracer running inside the sanitized process first.
export SWIFT_BACKTRACE=enable=no
cd "$(dirname "$0")/.."

mode=${1:-run}
seconds=${FUZZ_SECONDS:-60}
# The targets are the corpus folders; FuzzCorpusTests holds them to the targets in
# Sources/RetroRapidFuzz (and Package.swift's fuzzTargets).
read -r -a targets <<< "${FUZZ_TARGETS:-$(ls Tests/Fuzz/corpus | tr '\n' ' ')}"
scratch=.build/fuzz
# -DFUZZING gives the fuzz executables libFuzzer's driver as their main (Sources/Fuzz/*);
# -sanitize=fuzzer,address instruments every module for coverage and memory errors.
# The toolchain's lld links: Debian's ld.gold stops with an internal error on these objects.
flags=(-c release --scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
       -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld)

for target in "${targets[@]}"; do
    swift build "${flags[@]}" --product "fuzz-$target"
done
bin=$(swift build "${flags[@]}" --show-bin-path)
[ "$mode" = build ] && exit 0

failed=()
for target in "${targets[@]}"; do
    corpus=$scratch/corpus/$target
    artifacts=$scratch/artifacts/$target
    mkdir -p "$corpus" "$artifacts"
    dictionary=()
    [ -f "Tests/Fuzz/dictionaries/$target.dict" ] && dictionary=(-dict="Tests/Fuzz/dictionaries/$target.dict")
    case "$mode" in
    run)
        echo "== fuzz-$target: ${seconds}s${FUZZ_RUNS:+, at most $FUZZ_RUNS runs}"
        runs=()
        [ -n "${FUZZ_RUNS:-}" ] && runs=(-runs="$FUZZ_RUNS")
        # The first folder receives new inputs; the seeds are read only. -timeout: an input
        # that takes 10 s is a bug too (a hang or something quadratic).
        # shellcheck disable=SC2086
        "$bin/fuzz-$target" -max_total_time="$seconds" "${runs[@]}" "${dictionary[@]}" -timeout=10 \
            -print_final_stats=1 -artifact_prefix="$artifacts/" ${FUZZ_FLAGS:-} \
            "$corpus" "Tests/Fuzz/corpus/$target" || failed+=("$target")
        ;;
    merge)
        "$bin/fuzz-$target" -merge=1 "${dictionary[@]}" "Tests/Fuzz/corpus/$target" "$corpus"
        ;;
    *)
        echo "usage: scripts/fuzz.sh [run|merge|build]" >&2
        exit 2
        ;;
    esac
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failures in ${failed[*]}; crash files are in $scratch/artifacts/<target>/ (replay one with" \
         "swift run fuzz-<target> FILE)" >&2
    exit 1
fi
