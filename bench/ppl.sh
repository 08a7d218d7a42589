#!/usr/bin/env bash
# Perplexity of the real models in ../shared at each quantization, with and without AWQ: prints the
# README's table. stories260K is scored on bench/text/stories.txt (calibrated on the model's own
# sampled stories, bench/text/stories-calib.txt); the kjv pair on its held-out valid.txt
# (calibrated on train.txt). Usage: bench/ppl.sh [build dir]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}/brisk
S=../shared/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ppl() {  # model text ctx
  "$B" perplexity -m "$1" -f "$2" -c "$3" 2>/dev/null | sed -n 's/Final estimate: PPL = \([0-9.]*\) +\/- \([0-9.]*\).*/\1 ± \2/p'
}
size() { "$B" info "$1" 2>/dev/null | sed -n 's/.*total[^0-9]*\([0-9.]* MiB\).*/\1/p' | head -1; }

row() {  # label model text ctx calib
  local name=$1 model=$2 text=$3 ctx=$4 calib=$5
  local base; base=$(ppl "$model" "$text" "$ctx")
  echo "| $name | F32 | $base | |"
  for t in q8_0 q4_0 q4_1 q4_k_m q5_0 q5_k_m; do
    "$B" quantize "$model" "$tmp/q.gguf" "$t" >/dev/null 2>&1
    local plain; plain=$(ppl "$tmp/q.gguf" "$text" "$ctx")
    local awq=""
    if [ "$t" != q8_0 ]; then
      "$B" quantize "$model" "$tmp/a.gguf" "$t" --awq --calib "$calib" --calib-ctx "$ctx" >/dev/null 2>&1
      awq=$(ppl "$tmp/a.gguf" "$text" "$ctx")
    fi
    echo "| $name | ${t^^} | $plain | $awq |"
  done
}

echo "| model | type | perplexity | with AWQ |"
echo "|---|---|--:|--:|"
row "stories260K (-c 256)" "$S/stories260K/stories260K.gguf" bench/text/stories.txt 256 bench/text/stories-calib.txt
row "kjv draft 1.3M (-c 256)" "$S/kjv-pair/draft.gguf" "$S/kjv-pair/valid.txt" 256 "$S/kjv-pair/train.txt"
row "kjv target 14.2M (-c 256)" "$S/kjv-pair/target.gguf" "$S/kjv-pair/valid.txt" 256 "$S/kjv-pair/train.txt"
