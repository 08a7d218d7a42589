#!/usr/bin/env bash
# The core-engine benchmark: prompt processing (512 tokens) and generation (128 tokens) with 1 and 2
# threads on random-weight TinyLlama-1.1B-shaped models in F32, F16 and BF16, plus the real
# stories260K; each figure is printed against this machine's roofline measured in the same run.
# Usage: bench/run.sh [BUILD_DIR] [MODEL_DIR]   (models are generated once into MODEL_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MODELS=${2:-$BUILD/bench-models}
REPS=${REPS:-3}
mkdir -p "$MODELS"
for t in f32 f16 bf16; do
  f="$MODELS/tinyllama-1.1b-$t.gguf"
  [ -f "$f" ] || "$BUILD/brisk-genmodel" --preset tinyllama-1.1b --type "$t" -o "$f"
done
echo "## $(date -u +%Y-%m-%d) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
"$BUILD/brisk" bench -m ../shared/models/stories260K/stories260K.gguf -p 512 -n 128 -t 1,2 -r 5 --no-peaks
for t in f32 f16 bf16; do
  "$BUILD/brisk" bench -m "$MODELS/tinyllama-1.1b-$t.gguf" -p 512 -n 128 -t 1,2 -r "$REPS"
done
