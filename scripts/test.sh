#!/usr/bin/env bash
# Builds brisk and runs every test twice: the Release build (warnings as errors), then a build with
# AddressSanitizer and UndefinedBehaviorSanitizer; then the Arm cross build's unit tests under
# qemu-user. Tests read ../shared beside the checkout.
#   scripts/test.sh            everything (what CI runs)
#   scripts/test.sh --quick    the checks, the Release build and its tests alone
set -euo pipefail
QUICK=0
case "${1:-}" in
  --quick) QUICK=1 ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
[ -d ../shared/models/stories260K ] || { echo "error: ../shared (models and fixtures) is missing beside the checkout" >&2; exit 1; }
JOBS=$(nproc)
# Each phase's start, with the seconds spent so far: CI's time budget is split among them.
phase() { echo "== $1 (at ${SECONDS}s, $(nproc) cores)"; }
phase "format, layout and function-length checks"
# Formatting follows the committed .clang-format.
find src tests tools bench fuzz -name '*.cpp' -o -name '*.h' | xargs clang-format --dry-run --Werror
# The src/ folders include each other in the architecture's order only.
python3 scripts/check-layout.py
# No function over 120 lines outside the kernels.
python3 scripts/check-functions.py
phase "Release build"
./scripts/build.sh
phase "Release tests"
(cd build && ctest -j"$JOBS" --output-on-failure --timeout 600)
if [ "$QUICK" = 1 ]; then phase "done (quick: no sanitizer or Arm run)"; exit 0; fi
phase "sanitizer build"
# Line tables only (-g1): reports keep file:line without the variable tracking of full debug info,
# which is slow to compile for the template-heavy kernel sources. -O1, as the sanitizers' own docs
# advise: on 2 cores the build took 687 s (6447cc3) where -O2 took 1170 s (1a73c79, whose grid
# kernels were larger), and the tests as long (635 s against 644 s).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DBRISK_WERROR=ON -DBRISK_SANITIZE=ON -DBRISK_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan
phase "sanitizer tests"
(cd build-asan && ctest -j"$JOBS" --output-on-failure --timeout 900)
phase "Arm build and tests"
./scripts/test-arm64.sh
phase "done"
