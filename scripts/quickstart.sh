#!/usr/bin/env bash
# From a fresh Debian 12 machine: install dependencies, build, and tell a story with the default model.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
./build/brisk run -p "Once upon a time" -n 64
