#!/usr/bin/env bash
# Hub downloads through the real binary against a fake hub on loopback: -hf with a file and with a
# quant tag, resuming a cut-off download, the default model fetched when ../shared is not beside
# the binary, and clear errors when offline or when a file does not exist.
set -euo pipefail
BRISK=$1
PY=$2
SHARED=$(cd ../shared && pwd) || { echo "FAIL: ../shared is missing"; exit 1; }
EXPECT64="$SHARED/models/stories260K/expected_greedy_once_upon_a_time_n64.txt"
T=$(mktemp -d)
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
. "$(dirname "$0")/check.sh"

mkdir -p "$T/root/test/stories" "$T/root/karpathy/tinyllamas/stories260K"
cp "$SHARED/models/stories260K/stories260K.gguf" "$T/root/test/stories/stories260K-f32.gguf"
cp "$SHARED/models/stories260K/stories260K.bin" "$SHARED/models/stories260K/tok512.bin" "$T/root/karpathy/tinyllamas/stories260K/"

start_hub() {  # $1: extra args
  rm -f "$T/port"
  "$PY" "$(dirname "$0")/../tools/fake_hub.py" --root "$T/root" --port-file "$T/port" --log "$T/log" $1 &
  SERVER=$!
  for _ in $(seq 100); do [ -f "$T/port" ] && break; sleep 0.05; done
  export HF_ENDPOINT="http://127.0.0.1:$(cat "$T/port")"
}
stop_hub() { kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true; SERVER=""; }

export BRISK_CACHE="$T/cache"
start_hub "--cut-first 300000"

# 1. A cut-off download fails cleanly, leaves only a .part file, and the next run resumes it.
set +e
"$BRISK" run -hf test/stories:stories260K-f32.gguf -p "Once upon a time" -n 60 --temp 0 >"$T/out1" 2>"$T/err1"
rc=$?
set -e
check "cut-off download exits non-zero" '[ $rc -ne 0 ]'
check "cut-off download error names the URL" 'grep -q "cannot download" "$T/err1"'
check "no final file after a cut" '[ ! -f "$BRISK_CACHE/hub/test/stories/stories260K-f32.gguf" ]'
check "partial file kept" '[ -f "$BRISK_CACHE/hub/test/stories/stories260K-f32.gguf.part" ]'
"$BRISK" run -hf test/stories:stories260K-f32.gguf -p "Once upon a time" -n 60 --temp 0 >"$T/out2" 2>"$T/err2"
check "resumed download generates the reference text" 'cmp -s "$T/out2" "$EXPECT64"'
check "resume used a Range request" 'grep -q "stories260K-f32.gguf range=bytes=300000-" "$T/log"'
check "downloaded file is complete" 'cmp -s "$BRISK_CACHE/hub/test/stories/stories260K-f32.gguf" "$SHARED/models/stories260K/stories260K.gguf"'

# 2. A quant tag is resolved through the repository's file list.
rm -rf "$BRISK_CACHE"
"$BRISK" run -hf test/stories:F32 -p "Once upon a time" -n 60 --temp 0 >"$T/out3" 2>"$T/err3"
check "quant tag picks the matching file" 'cmp -s "$T/out3" "$EXPECT64"'
stop_hub

# 3. The default model: with no ../shared next to the binary or the working directory, it is
# downloaded once from karpathy/tinyllamas and used.
start_hub ""
rm -rf "$BRISK_CACHE"
mkdir -p "$T/elsewhere/bin" "$T/elsewhere/cwd"
cp "$BRISK" "$T/elsewhere/bin/brisk"
(cd "$T/elsewhere/cwd" && "$T/elsewhere/bin/brisk" run -p "Once upon a time" -n 60 --temp 0 >"$T/out4" 2>"$T/err4")
check "default model downloaded and run" 'cmp -s "$T/out4" "$EXPECT64"'
check "default model cached" '[ -f "$BRISK_CACHE/hub/karpathy/tinyllamas/stories260K/stories260K.bin" ]'

# 4. Missing files and repositories give clear errors.
set +e
"$BRISK" run -hf test/stories:nothere.gguf -n 1 >/dev/null 2>"$T/err5"; rc5=$?
"$BRISK" run -hf test/missing -n 1 >/dev/null 2>"$T/err6"; rc6=$?
"$BRISK" run -hf not-a-spec -n 1 >/dev/null 2>"$T/err7"; rc7=$?
set -e
check "missing file: HTTP 404" '[ $rc5 -ne 0 ] && grep -q "HTTP 404" "$T/err5"'
check "missing repository named" '[ $rc6 -ne 0 ] && grep -q "test/missing" "$T/err6"'
check "bad -hf spec explained" '[ $rc7 -ne 0 ] && grep -q "OWNER/REPO" "$T/err7"'
stop_hub

# 5. Offline: a refused connection is reported as such, and nothing half-written is left.
export HF_ENDPOINT="http://127.0.0.1:9"
rm -rf "$BRISK_CACHE"
set +e
"$BRISK" run -hf test/stories:stories260K-f32.gguf -n 1 >/dev/null 2>"$T/err8"; rc8=$?
set -e
check "offline error" '[ $rc8 -ne 0 ] && grep -q "offline" "$T/err8"'
check "offline leaves no model file" '[ ! -f "$BRISK_CACHE/hub/test/stories/stories260K-f32.gguf" ]'

report
