#!/usr/bin/env bash
# Prompt processing (512 tokens) and generation (128 tokens) with 1 and 2 threads on random-weight
# TinyLlama-1.1B-shaped models (F32, F16, BF16, Q8_0, Q4_0, Q4_K_M), plus the real stories260K; each
# figure is printed against this machine's roofline measured in the same run.
# Usage: [TYPES="q4_0 q8_0"] bench/run.sh [BUILD_DIR] [MODEL_DIR]   (models are made once in MODEL_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MODELS=${2:-$BUILD/bench-models}
REPS=${REPS:-3}
TYPES=${TYPES:-f32 f16 bf16 q8_0 q4_0 q4_k_m}
mkdir -p "$MODELS"
for t in $TYPES; do
  f="$MODELS/tinyllama-1.1b-$t.gguf"
  [ -f "$f" ] && continue
  case $t in
    q4_k_m) # a mix, made the way users make one: quantizing the F16 model
      [ -f "$MODELS/tinyllama-1.1b-f16.gguf" ] ||
        "$BUILD/brisk-genmodel" --preset tinyllama-1.1b --type f16 -o "$MODELS/tinyllama-1.1b-f16.gguf"
      "$BUILD/brisk" quantize "$MODELS/tinyllama-1.1b-f16.gguf" "$f" q4_k_m >/dev/null ;;
    *) "$BUILD/brisk-genmodel" --preset tinyllama-1.1b --type "$t" -o "$f" ;;
  esac
done
echo "## $(date -u +%Y-%m-%d) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
"$BUILD/brisk" bench -m ../shared/models/stories260K/stories260K.gguf -p 512 -n 128 -t 1,2 -r 5 --no-peaks
for t in $TYPES; do
  "$BUILD/brisk" bench -m "$MODELS/tinyllama-1.1b-$t.gguf" -p 512 -n 128 -t 1,2 -r "$REPS"
done
