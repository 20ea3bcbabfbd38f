#ifndef RETRORAPID_CLIBFUZZER_SHIM_H
#define RETRORAPID_CLIBFUZZER_SHIM_H

// libFuzzer's driver, for the fuzz targets (Sources/RetroRapidFuzz/FuzzEntry.swift). Only a
// declaration: the definition is in the toolchain's libclang_rt.fuzzer, linked by
// `-sanitize=fuzzer` (scripts/fuzz.sh), and only builds with -DFUZZING call it, so the normal
// build needs no fuzzer runtime. Called from our own main rather than libFuzzer's, because
// SwiftPM points an executable's `main` at its module's entry point (`<module>_main`).
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));

#endif
