#!/usr/bin/env bash
# Installs brisk's build and test dependencies from Debian 12's packages.
set -euo pipefail
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# arm64 libraries beside the native ones (multiarch): the Arm cross build links against them.
$SUDO dpkg --add-architecture arm64
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  g++ cmake ninja-build pkg-config python3 clang clang-format \
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libfmt-dev \
  libcurl4-openssl-dev libpcre2-dev libutf8proc-dev libboost-dev ca-certificates curl \
  json-schema-test-suite python3-jsonschema python3-jinja2 >/dev/null
# Open MPI: the multi-process engine (mpirun brisk ...; a model split over ranks).
$SUDO apt-get install -y -qq --no-install-recommends libopenmpi-dev openmpi-bin >/dev/null
# The chat page's libraries (embedded at build time from their Debian paths) and the browser its
# tests drive.
$SUDO apt-get install -y -qq --no-install-recommends \
  libjs-marked node-dompurify libjs-highlight.js libjs-katex chromium >/dev/null
# The Arm cross build and its test run under qemu-user (scripts/test-arm64.sh).
$SUDO apt-get install -y -qq --no-install-recommends g++-aarch64-linux-gnu qemu-user \
  libfmt-dev:arm64 libpcre2-dev:arm64 libutf8proc-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64 \
  libcurl4-openssl-dev:arm64 >/dev/null
# Node.js and npm run the server tests with OpenAI's official client (versions pinned by the lockfile).
command -v npm >/dev/null || $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
(cd "$(dirname "$0")/../tests/server" && npm ci --no-audit --no-fund --loglevel=error)
# The independent GGUF reader that checks the files brisk writes (tests/formats/gguf_spec).
(cd "$(dirname "$0")/../tests/formats/gguf_spec" && npm ci --no-audit --no-fund --loglevel=error)
