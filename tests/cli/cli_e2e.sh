#!/usr/bin/env bash
# The brisk command as a user runs it: text on stdout only, statistics on stderr, flags, the
# default model, seeded sampling, info, Ctrl-C, and one-line errors for bad input.
set -uo pipefail
BRISK=$1
SHARED=$(cd ../shared && pwd) || { echo "FAIL: ../shared is missing"; exit 1; }
M="$SHARED/models/stories260K"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/check.sh"

"$BRISK" run -m "$M/stories260K.gguf" -p "Once upon a time" -n 60 --temp 0 >"$T/o" 2>"$T/e"
check "greedy run reproduces the reference" 'cmp -s "$T/o" "$M/expected_greedy_once_upon_a_time_n64.txt"'
check "stats on stderr" 'grep -q "generation:.*tokens/s" "$T/e" && grep -q "prompt:.*tokens/s" "$T/e" && grep -q "load time" "$T/e"'
check "no stats on stdout" '! grep -q "tokens/s" "$T/o"'

"$BRISK" run -n 256 --temp 0 >"$T/o" 2>/dev/null
check "default model, empty prompt" 'cmp -s "$T/o" "$M/expected_greedy_empty_prompt_n256.txt"'

# Every kernel family this CPU runs reproduces the reference (BRISK_ISA caps the dispatch).
for isa in generic avx2 avx2vnni avx512; do
  BRISK_ISA=$isa "$BRISK" run -m "$M/stories260K.gguf" -p "Once upon a time" -n 60 --temp 0 >"$T/o" 2>/dev/null
  check "reference text with $isa kernels" 'cmp -s "$T/o" "$M/expected_greedy_once_upon_a_time_n64.txt"'
done

# Prompt lookup (speculative decoding) changes nothing in greedy output, and reports what it did.
K="$SHARED/models/kjv-pair/target.gguf"
KP="And God said, Let there be light: and there was light. And God saw the light, that it was good: and God divided the light from the darkness. And God said, Let there be light: and there was light."
"$BRISK" run -m "$K" -p "$KP" -n 200 --temp 0 -t 1 >"$T/k0" 2>/dev/null
"$BRISK" run -m "$K" -p "$KP" -n 200 --temp 0 -t 1 --spec ngram --draft-max 6 >"$T/k1" 2>"$T/e"
check "run --spec ngram: the same greedy text" 'cmp -s "$T/k0" "$T/k1"'
check "run --spec ngram: acceptance on stderr" 'grep -q "speculation: *[0-9]* drafts, [1-9][0-9]* of [0-9]* tokens accepted" "$T/e"'
# A draft model (-md, llama.cpp's spelling), likewise; one with another vocabulary is refused.
# --draft-fixed: the adaptive policy may rightly stop drafting where the draft model runs slowly
# beside the target (a loaded machine, a sanitizer build), which would leave nothing to check.
KD="$SHARED/models/kjv-pair/draft.gguf"
"$BRISK" run -m "$K" -md "$KD" --draft-fixed --draft-max 4 -p "$KP" -n 200 --temp 0 -t 1 >"$T/k2" 2>"$T/e"
check "run -md: the same greedy text" 'cmp -s "$T/k0" "$T/k2"'
check "run -md: acceptance on stderr" 'grep -q "speculation: *[0-9]* drafts, [1-9][0-9]* of [0-9]* tokens accepted" "$T/e"'
"$BRISK" run -m "$M/stories260K.gguf" -md "$KD" -p "Once" -n 4 >"$T/o" 2>"$T/e"
rc=$?
check "run -md with another vocabulary: refused by name" '[ $rc -ne 0 ] && grep -q "draft.gguf.*vocabulary" "$T/e" && [ $(wc -l <"$T/e") -le 2 ]'

printf 'Once upon a time' >"$T/prompt.txt"
"$BRISK" run -m "$M/stories260K.bin" -z "$M/tok512.bin" -f "$T/prompt.txt" -n 60 --temp 0 -t 1 >"$T/o" 2>/dev/null
check "llama2.c checkpoint, -z, -f, -t 1" 'cmp -s "$T/o" "$M/expected_greedy_once_upon_a_time_n64.txt"'

"$BRISK" run -m "$M/stories260K.gguf" -p "Lily" -n 80 --temp 0.9 --top-k 20 --top-p 0.9 --min-p 0.02 \
  --repeat-penalty 1.1 --presence-penalty 0.1 --frequency-penalty 0.1 --seed 7 >"$T/s1" 2>/dev/null
"$BRISK" run -m "$M/stories260K.gguf" -p "Lily" -n 80 --temp 0.9 --top-k 20 --top-p 0.9 --min-p 0.02 \
  --repeat-penalty 1.1 --presence-penalty 0.1 --frequency-penalty 0.1 --seed 7 -t 1 >"$T/s2" 2>/dev/null
"$BRISK" run -m "$M/stories260K.gguf" -p "Lily" -n 80 --temp 0.9 --seed 8 >"$T/s3" 2>/dev/null
check "same seed, same text (any thread count)" 'cmp -s "$T/s1" "$T/s2"'
check "another seed, another text" '! cmp -s "$T/s1" "$T/s3"'
check "-n counts generated tokens" '[ $(wc -c <"$T/s1") -gt 40 ]'

"$BRISK" run --help >"$T/h"
for flag in -m -p -f -n --threads --ctx-size --temp --top-k --top-p --min-p --repeat-penalty --presence-penalty \
  --frequency-penalty --seed --ignore-eos --verbose --tokenizer --hf-repo; do
  check "--help explains $flag" 'grep -q -- "$flag" "$T/h"'
done

"$BRISK" info "$M/stories260K.gguf" >"$T/i"
check "info: architecture" 'grep -q "architecture:  llama" "$T/i"'
check "info: tokenizer and specials" 'grep -q "tokenizer:     llama" "$T/i" && grep -q "bos.*<s>" "$T/i"'
check "info: tensor table and total" 'grep -q "blk.4.ffn_down.weight.*F32.*\[172, 64\]" "$T/i" && grep -q "^total:" "$T/i"'

# brisk tokenize on a vocab-only GGUF and on a tokenizer.json, like llama-tokenize.
V=../shared/tokenizers
"$BRISK" tokenize -m "$V/llama.cpp-vocab/ggml-vocab-llama-spm.gguf" -p "Hello world" >"$T/t"
check "tokenize: pieces and ids" 'grep -q "^ *1 -> .<s>." "$T/t" && grep -q "15043 -> . Hello." "$T/t"'
"$BRISK" tokenize -m "$V/qwen3-hf/tokenizer.json" -p "<|im_start|>user" --ids --parse-special >"$T/t"
check "tokenize: --ids --parse-special on tokenizer.json" 'grep -qx "\[151644, 872\]" "$T/t"'
"$BRISK" tokenize -m "$V/qwen3-hf/tokenizer.json" -p "<|im_start|>" --ids >"$T/t"
check "tokenize: specials are plain text unless asked" '! grep -q 151644 "$T/t"'
"$BRISK" info "$V/llama.cpp-vocab/ggml-vocab-bert-bge.gguf" >"$T/i"
check "info on a vocab-only file" 'grep -q "vocabulary only" "$T/i" && grep -q "tokenizer:     bert" "$T/i"'

# brisk grammar: a constraint compiled against a vocabulary, texts checked token by token; a
# refused constraint exits 2 naming the keyword.
printf '{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}' >"$T/s.json"
printf '{"text": "{\\"n\\": 5}"}\n{"text": "{\\"n\\": 0}"}\n' >"$T/c.jsonl"
"$BRISK" grammar -m "$V/llama3-hf/tokenizer.json" --json-schema "$T/s.json" --check "$T/c.jsonl" >"$T/g"
check "grammar: verdicts and a summary" 'sed -n 1p "$T/g" | grep -q "\"accepted\":true" && sed -n 2p "$T/g" | grep -q "\"index\":1,\"accepted\":false,\"error_at\":6" && grep -q "mask_us_p99" "$T/g"'
printf '{"type":"string","not":{"pattern":"a"}}' >"$T/bad.json"
"$BRISK" grammar -m "$V/llama3-hf/tokenizer.json" --json-schema "$T/bad.json" 2>"$T/e" >/dev/null
rc=$?
check "grammar: a refused schema exits 2 naming the keyword" '[ $rc -eq 2 ] && grep -q "'"'"'not'"'"'" "$T/e"'

# brisk run under a schema: the text (prompt not echoed) validates and ends with the schema's end;
# a refused one is a one-line error naming the keyword.
printf '{"type":"object","properties":{"pet":{"enum":["cat","dog"]},"age":{"type":"integer","minimum":0,"maximum":20}},"required":["pet","age"],"additionalProperties":false}' >"$T/p.json"
"$BRISK" run -m "$M/stories260K.gguf" -p "A pet:" --json-schema "$T/p.json" --json-whitespace 2 --temp 1 -s 3 -n 200 --no-display-prompt >"$T/r" 2>/dev/null
check "run --json-schema: valid JSON" 'python3 -c "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))" "$T/r" "$T/p.json"'
"$BRISK" run -m "$M/stories260K.gguf" -p "x" --json-schema "$T/bad.json" -n 5 >/dev/null 2>"$T/e"
check "run --json-schema: a refused schema names the keyword" 'grep -q "'"'"'not'"'"'" "$T/e"'
"$BRISK" run -m "$M/stories260K.gguf" -p "The answer:" --choice "yes,no" --temp 1 -s 1 -n 20 --no-display-prompt >"$T/r" 2>/dev/null
check "run --choice: one of the strings" 'grep -qx "yes\|no" "$T/r"'

# brisk run with tools: the output is a call in the family's syntax whose arguments validate.
printf '[{"type":"function","function":{"name":"pick","parameters":%s}}]' "$(cat "$T/p.json")" >"$T/tools.json"
"$BRISK" run -m "$M/stories260K.gguf" -p "Pick:" --tools "$T/tools.json" --tool-choice required --tool-call-parser hermes \
  --temp 1 -s 2 -n 200 --no-display-prompt >"$T/r" 2>/dev/null
check "run --tools: a Hermes call with valid arguments" 'python3 -c "
import json, re, sys, jsonschema
m = re.fullmatch(r\"\s*<tool_call>\n(.*)\n</tool_call>\s*\", open(sys.argv[1]).read(), re.S)
call = json.loads(m.group(1))
assert call[\"name\"] == \"pick\"
jsonschema.validate(call[\"arguments\"], json.load(open(sys.argv[2])))" "$T/r" "$T/p.json"'
"$BRISK" run -m "$M/stories260K.gguf" -p "x" --tools "$T/tools.json" --tool-choice nope -n 5 >/dev/null 2>"$T/e"
check "run --tools: an unknown --tool-choice is named" 'grep -q "tool-choice nope" "$T/e"'

# brisk bench throughput over several --max-seqs, with --plot.
"$BRISK" bench throughput -m "$M/stories260K.gguf" --num-prompts 8 --input-len 8 --output-len 16 --max-seqs 1,4 \
  --plot "$T/tp.svg" >"$T/o" 2>/dev/null
check "bench throughput: a report per --max-seqs value" '[ $(grep -c "^throughput:" "$T/o") -eq 2 ]'
check "bench throughput --plot: throughput and latency against concurrency" 'python3 tests/cli/check_svg.py "$T/tp.svg" "output tokens/s" "time to first token (median)" >/dev/null'
# brisk bench spec --plot: an SVG document with a series per concurrency.
"$BRISK" bench spec -m "$M/stories260K.gguf" --drafts 2,4 --concurrency 1,2 -n 16 -r 1 --plot "$T/spec.svg" >/dev/null 2>&1
check "bench spec --plot: speedup and acceptance by draft length" 'python3 tests/cli/check_svg.py "$T/spec.svg" "1 sequence" "2 sequences" >/dev/null'

# brisk chat: the second turn reuses the cached conversation; /reset starts over.
printf 'Once upon a time\nThe cat sat\n/reset\nHi\n' | "$BRISK" chat -m "$M/stories260K.gguf" --temp 0 -n 16 \
  --chat-template tests/chat/jinja/templates/chatml.jinja >"$T/o" 2>"$T/e"
check "chat: three replies" '[ $(grep -c "generated" "$T/e") -eq 3 ]'
check "chat: turn 2 reuses the cache" 'sed -n 2p <(grep "prompt tokens" "$T/e") | grep -qv " 0 reused"'
check "chat: /reset clears it" 'sed -n 3p <(grep "prompt tokens" "$T/e") | grep -q " 0 reused"'
printf 'Hello\n' | "$BRISK" chat -m "$M/stories260K.gguf" --temp 0 -n 8 >"$T/o" 2>"$T/e"
check "chat: ChatML when the model has none" 'grep -q "using ChatML" "$T/e"'

# Ctrl-C stops generation cleanly and still prints the statistics.
# The signal goes once text has come out: a slow start (a sanitizer build on a busy machine) must
# not turn this into the load-time case below.
"$BRISK" run -m "$M/stories260K.gguf" -c 200000 -n -1 --ignore-eos --temp 0 >"$T/o" 2>"$T/e" &
pid=$!
for _ in $(seq 300); do [ -s "$T/o" ] && break; sleep 0.1; done
sleep 0.2
kill -INT $pid
wait $pid
rc=$?
check "Ctrl-C exits with 130" '[ $rc -eq 130 ]'
check "Ctrl-C still prints statistics" 'grep -q "interrupted" "$T/e" && grep -q "generation:" "$T/e"'
# An interrupt that arrives while starting or loading is honoured too. (A shell starts background
# jobs with SIGINT ignored, and a signal that comes before main() can be caught is then lost; an
# interactive Ctrl-C never is, so SIGINT gets its default action here, as in a terminal. The
# check above, with the signal ignored at start, shows the handler installed by main takes over.)
env --default-signal=INT "$BRISK" run -m "$M/stories260K.gguf" -c 200000 -n -1 --ignore-eos --temp 0 >/dev/null 2>&1 &
pid=$!
sleep 0.05
kill -INT $pid
for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
check "an early Ctrl-C ends the run" '! kill -0 $pid 2>/dev/null'
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null

# Speculative decoding's benchmark: plain decoding and prompt lookup side by side, greedy text
# unchanged at every draft length and concurrency.
"$BRISK" bench spec -m "$M/stories260K.gguf" -n 24 --drafts 2,5 --concurrency 1,3 -r 1 -t 2 >"$T/o" 2>"$T/e"
rc=$?
check "bench spec runs" '[ $rc -eq 0 ] && [ $(grep -c "^ngram" "$T/o") -eq 4 ] && [ $(grep -c "^none" "$T/o") -eq 2 ]'
check "bench spec: the same greedy text" '! grep -q " NO$" "$T/o" && [ $(grep -c " yes$" "$T/o") -eq 4 ]'
"$BRISK" bench spec -m "$M/stories260K.gguf" --spec layer-skip -n 24 --drafts 3 --concurrency 2 -r 1 -t 2 >"$T/o" 2>"$T/e"
rc=$?
check "bench spec --spec layer-skip: the same greedy text" '[ $rc -eq 0 ] && [ $(grep -c "^layer-skip .* yes$" "$T/o") -eq 1 ]'
"$BRISK" bench spec -m "$K" -md "$KD" -p "And God said" -n 24 --drafts 3 --concurrency 1,2 -r 1 -t 2 --draft-fixed >"$T/o" 2>"$T/e"
rc=$?
check "bench spec -md: the same greedy text" '[ $rc -eq 0 ] && [ $(grep -c "^draft .* yes$" "$T/o") -eq 2 ]'

# Offline throughput through the batching engine: every request completes, the shared prefix hits
# the cache, a tiny KV pool forces preemptions, and no block is left over (the command checks).
"$BRISK" bench throughput -m "$M/stories260K.gguf" --num-prompts 12 --input-len 20 --output-len 16 \
  --shared-prefix-len 48 --prime-prefix -t 2 >"$T/o" 2>"$T/e"
rc=$?
check "bench throughput runs" '[ $rc -eq 0 ] && grep -q "requests/s" "$T/o"'
check "bench throughput reports the KV pool" 'grep -q "KV cache: .* blocks of 16 tokens" "$T/e"'
check "bench throughput: shared prefix hits" 'grep -q "prefix cache: 576 of 816 prompt tokens hit" "$T/o"'
"$BRISK" bench throughput -m "$M/stories260K.gguf" --num-prompts 8 --input-len 40 --output-len 30 \
  --kv-cache-size 64KiB --kv-cache-dtype q8_0 --max-batched-tokens 32 >"$T/o" 2>"$T/e"
rc=$?
check "bench throughput with a tiny pool" '[ $rc -eq 0 ] && ! grep -q " 0 preemptions" "$T/o"'

# An importance matrix from calibration text, then a quantization that reads it (recorded under
# llama-quantize's keys); a matrix of another model is refused by name.
"$BRISK" imatrix -m "$KD" -f "$SHARED/models/kjv-pair/valid.txt" -c 128 --chunks 8 -o "$T/im.gguf" -t 2 >"$T/o" 2>"$T/e"
rc=$?
check "imatrix writes a file" '[ $rc -eq 0 ] && grep -q "wrote .*im.gguf: 28 matrices, 8 windows of 128 tokens" "$T/e"'
"$BRISK" quantize "$KD" "$T/q.gguf" iq4_nl --imatrix "$T/im.gguf" >"$T/o" 2>"$T/e"
rc=$?
check "quantize --imatrix" '[ $rc -eq 0 ] && grep -q "28 of its 28 matrices" "$T/e"'
check "quantize --imatrix records the file" 'grep -aq "quantize.imatrix.file" "$T/q.gguf"'

# Bad input: a one-line error naming the problem and a non-zero exit, never a crash.
bad() {  # $1: description, $2: expected fragment, rest: command
  local what=$1 frag=$2; shift 2
  "$@" >/dev/null 2>"$T/err"; local rc=$?
  check "$what: exit code" '[ $rc -ne 0 ] && [ $rc -lt 128 ]'
  check "$what: message mentions '$frag'" 'grep -q -- "$frag" "$T/err"'
}
bad "missing model" "no such file" "$BRISK" run -m "$T/nope.gguf" -p x
head -c 5000 "$M/stories260K.gguf" >"$T/trunc.gguf"
bad "truncated GGUF" "trunc.gguf" "$BRISK" run -m "$T/trunc.gguf" -p x
head -c 100000 "$M/stories260K.bin" >"$T/trunc.bin"
bad "truncated llama2.c" "truncated llama2.c" "$BRISK" run -m "$T/trunc.bin" -z "$M/tok512.bin" -p x
printf 'hello world, not a model' >"$T/junk.bin"
bad "unknown format" "unrecognized model format" "$BRISK" run -m "$T/junk.bin" -p x
bad "negative temperature" "temp" "$BRISK" run -m "$M/stories260K.gguf" --temp -1
bad "prompt over the context" "context size" "$BRISK" run -m "$M/stories260K.gguf" -c 4 -p "Once upon a time there was"
bad "unknown flag" "--bogus" "$BRISK" run --bogus
bad "bad KV size" "kv-cache-size" "$BRISK" bench throughput -m "$M/stories260K.gguf" --kv-cache-size 12XB
bad "bad KV type" "KV cache type" "$BRISK" bench throughput -m "$M/stories260K.gguf" --kv-cache-dtype q3
bad "prompt longer than the model" "maximum context length" "$BRISK" bench throughput -m "$M/stories260K.gguf" --input-len 600

bad "imatrix of another model" "columns" "$BRISK" quantize "$K" "$T/q2.gguf" iq4_nl --imatrix "$T/im.gguf"
bad "imatrix that is not one" "not an importance matrix" "$BRISK" quantize "$KD" "$T/q2.gguf" q4_0 --imatrix "$KD"
printf '{%% if %%}' >"$T/bad.jinja"
bad "chat template syntax error" "line 1" "$BRISK" chat -m "$M/stories260K.gguf" --chat-template "$T/bad.jinja"
bad "tokenize without text" "exactly one of" "$BRISK" tokenize -m "$M/stories260K.gguf"
printf '{"model": {"type": "Unigram", "vocab": []}}' >"$T/tokenizer.json"
bad "unsupported tokenizer.json" "Unigram" "$BRISK" tokenize -m "$T/tokenizer.json" -p x

# brisk template: the exact prompt text, from a template file or a model, with a context or messages.
J=tests/chat/jinja
printf '{"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": true, "bos_token": "<s>", "who": "x"}' >"$T/ctx.json"
"$BRISK" template --chat-template $J/templates/chatml.jinja --context "$T/ctx.json" >"$T/o" 2>"$T/e"
printf '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n' >"$T/want"
check "template --context renders exactly (no newline added)" 'cmp -s "$T/o" "$T/want"'
printf '[{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]' >"$T/msgs.json"
printf '{%% for m in messages %%}{{ m.role + ": " + m.content }}{%% endfor %%}{{ tools | length if tools is defined }}' >"$T/t.jinja"
printf '[{"type": "function", "function": {"name": "f"}}]' >"$T/tools.json"
"$BRISK" template --chat-template "$T/t.jinja" --messages "$T/msgs.json" --tools "$T/tools.json" >"$T/o" 2>"$T/e"
check "template --messages joins text parts for a string template" '[ "$(cat "$T/o")" = "$(printf "user: a\nb1")" ]'
"$BRISK" template -m "$SHARED/tokenizers/llama3-hf/tokenizer.json" --messages "$T/msgs.json" --add-generation-prompt >"$T/o" 2>"$T/e"
check "template -m uses the model's template and BOS" 'grep -q "^<|begin_of_text|><|start_header_id|>user" "$T/o" && tail -c 60 "$T/o" | grep -q "assistant<|end_header_id|>"'
printf 'a\n{{ 1 // 0 }}' >"$T/zero.jinja"
bad "template runtime error" "line 2, column" "$BRISK" template --chat-template "$T/zero.jinja" --context "$T/ctx.json"
printf '{%% set ns = namespace() %%}{%% set ns.me = ns %%}{{ ns }}' >"$T/self.jinja"
bad "template holding itself" "levels deep" "$BRISK" template --chat-template "$T/self.jinja" --context "$T/ctx.json"
bad "template without a context" "--context" "$BRISK" template --chat-template "$T/t.jinja"
printf '[1,' >"$T/broken.json"
bad "template with broken JSON" "broken.json" "$BRISK" template --chat-template "$T/t.jinja" --messages "$T/broken.json"

report
