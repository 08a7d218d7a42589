#!/usr/bin/env bash
# Cross-compiles brisk for 64-bit Arm (Debian's g++-aarch64-linux-gnu and arm64 libraries, see
# scripts/install-deps.sh) and runs the tests labelled "portable" (core, quant, ops, kv, tokenizer, chat
# and the stories260K reference texts) under qemu-user. Arm builds run the portable kernels, which these
# tests hold to the scalar references and to the x86 tiers' bits where the tests say so. The
# emulator loads the arm64 libraries of the multiarch install (-L /): Debian 12's cross-toolchain
# libc (/usr/aarch64-linux-gnu) hangs in pthread_create under qemu-user 7.2.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  -DCMAKE_BUILD_TYPE=Release -DBRISK_WERROR=ON -DBRISK_BUILD_BENCH=OFF >/dev/null
cmake --build build-arm64 --target brisk_portable_tests
# The tests labelled "portable-..." (tests/CMakeLists.txt), each run through qemu-aarch64 (the
# toolchain file's emulator).
(cd build-arm64 && ctest -L "^portable-" -j"$(nproc)" --output-on-failure --timeout 900)
