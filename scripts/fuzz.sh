#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer (Debian's clang), AddressSanitizer and UBSan: builds
# the targets in build-fuzz/, then runs each for SECONDS (default 60) on a copy of its seed corpus
# with its dictionary, and prints how many inputs each ran and how many new ones it kept.
# A crash leaves its input in build-fuzz/crashes/; add it to fuzz/corpus/<target>/ (the tests
# replay that folder) together with a unit test, then fix it.
# json_schema also starts from the official test suite's files (Debian's json-schema-test-suite)
# and, where SCHEMASTORE names a checkout of github:SchemaStore/schemastore, its schemas.
#   ./scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. ./scripts/fuzz.sh 600 jinja gguf
#   SCHEMASTORE=~/schemastore ./scripts/fuzz.sh 1800 json_schema
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
TARGETS=${*:-gguf safetensors llama2c hf_tokenizer tokenize jinja openai gbnf json_schema regex reply imatrix}
command -v clang++ >/dev/null || { echo "error: clang++ is missing (apt-get install clang)" >&2; exit 1; }
CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DBRISK_FUZZ=ON -DBRISK_BUILD_TESTS=OFF \
  -DBRISK_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz --target $(for t in $TARGETS; do echo "fuzz_$t"; done)
rm -rf build-fuzz/crashes && mkdir -p build-fuzz/crashes build-fuzz/logs
JOBS=$(nproc)
run_one() {
  local t=$1 work=build-fuzz/work/$1
  rm -rf "$work" && mkdir -p "$work" && cp fuzz/corpus/"$t"/* "$work"/
  if [ "$t" = json_schema ]; then
    local d
    for d in /usr/share/json-schema-test-suite/tests/draft{4,6,7}; do
      [ -d "$d" ] && for f in "$d"/*.json; do cp "$f" "$work/suite-$(basename "$d")-$(basename "$f")"; done
    done
    [ -n "${SCHEMASTORE:-}" ] && cp "$SCHEMASTORE"/src/schemas/json/*.json "$work"/
  fi
  local before; before=$(ls "$work" | wc -l)
  # -rss_limit_mb / -malloc_limit_mb: an input that makes brisk allocate over 2 GiB is a finding.
  build-fuzz/fuzz/fuzz_"$t" "$work" -dict=fuzz/dict/"$t".dict -max_total_time="$SECONDS_EACH" \
    -timeout=20 -rss_limit_mb=2560 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/crashes/"$t"- >build-fuzz/logs/"$t".log 2>&1 || true
  local execs new crashes
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' build-fuzz/logs/"$t".log | grep -o '[0-9]*$' || echo 0)
  new=$(( $(ls "$work" | wc -l) - before ))
  crashes=$(ls build-fuzz/crashes/ | grep -c "^$t-" || true)
  echo "$t $execs $new $crashes" >build-fuzz/logs/"$t".summary
}
export -f run_one
export SECONDS_EACH SCHEMASTORE
printf '%s\n' $TARGETS | xargs -P "$JOBS" -I{} bash -c 'run_one {}'
printf '%-14s %14s %12s %9s\n' target executions new-inputs crashes
total=0; bad=0
for t in $TARGETS; do
  read -r name execs new crashes <build-fuzz/logs/"$t".summary
  printf '%-14s %14s %12s %9s\n' "$name" "$execs" "$new" "$crashes"
  total=$((total + execs)); bad=$((bad + crashes))
done
printf '%-14s %14s\n' total "$total"
if [ "$bad" -gt 0 ]; then
  echo "crash inputs are in build-fuzz/crashes/, logs in build-fuzz/logs/" >&2
  exit 1
fi
