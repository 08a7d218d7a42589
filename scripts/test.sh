#!/usr/bin/env bash
# Builds brisk and runs every test twice: the Release build (warnings as errors), then a build with
# AddressSanitizer and UndefinedBehaviorSanitizer; then the Arm cross build's unit tests under
# qemu-user. Tests read ../shared beside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d ../shared/models/stories260K ] || { echo "error: ../shared (models and fixtures) is missing beside the checkout" >&2; exit 1; }
JOBS=$(nproc)
# Formatting follows the committed .clang-format.
find src tests tools bench fuzz -name '*.cpp' -o -name '*.h' | xargs clang-format --dry-run --Werror
# The src/ folders include each other in the architecture's order only.
python3 scripts/check-layout.py
# No function over 120 lines outside the kernels.
python3 scripts/check-functions.py
./scripts/build.sh
(cd build && ctest -j"$JOBS" --output-on-failure --timeout 600)
# Line tables only (-g1): reports keep file:line without the variable tracking of full debug info,
# which is slow to compile for the template-heavy kernel sources.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DBRISK_WERROR=ON -DBRISK_SANITIZE=ON -DBRISK_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan
(cd build-asan && ctest -j"$JOBS" --output-on-failure --timeout 900)
./scripts/test-arm64.sh
