#!/usr/bin/env bash
# From a fresh Debian 12 machine: install dependencies, build, tell a story with the default model,
# then do brisk's main job: serve the model over OpenAI's API, ask it one chat question with curl,
# print the reply and stop the server.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
./build/brisk run -p "Once upon a time" -n 64

PORT=${PORT:-8080}
./build/brisk serve --port "$PORT" 2>/tmp/brisk-serve.log &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "localhost:$PORT/health" >/dev/null && break; sleep 0.1; done
echo "brisk serve is listening on localhost:$PORT; one chat request:"
curl -s "localhost:$PORT/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"messages": [{"role": "user", "content": "Tell me a story about a cat."}], "max_tokens": 64}' |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["choices"][0]["message"]["content"])'
kill -TERM "$pid"
wait "$pid"
