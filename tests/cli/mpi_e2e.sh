#!/usr/bin/env bash
# brisk under mpirun (Open MPI on loopback, ranks as processes of this machine): the same greedy
# text, perplexity and served text as one process for 2 and 4 ranks; a draft model beside the split
# target; the refusals (heads that do not divide, different files, one-process commands); and the
# job's end: SIGTERM to rank 0 exits 0, a killed rank ends the job. Every step is bounded in time and
# prints its name first, so a stuck job fails that step (with its ranks' messages) instead of the
# suite's ctest timeout.
set -uo pipefail
BRISK=$1
GENMODEL=$2
SHARED=$(cd ../shared && pwd) || { echo "FAIL: ../shared is missing"; exit 1; }
M="$SHARED/models/stories260K"
T=$(mktemp -d)
pids=() ports=()
# mpirun killed with -9 cannot end its ranks: they go by their port.
trap 'kill -9 "${pids[@]}" 2>/dev/null; for p in "${ports[@]}"; do pkill -9 -f "port $p " 2>/dev/null; done; rm -rf "$T"' EXIT
. "$(dirname "$0")/check.sh"
# Sanitizer builds: Open MPI's own allocations outlive MPI_Finalize.
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0
# Shared memory between the ranks and loopback to mpirun: the machine's other network interfaces
# (a container's, unreachable ones) play no part.
MPI="mpirun --allow-run-as-root --oversubscribe --mca btl self,vader --mca oob_tcp_if_include lo"
# Foreground jobs: 3 minutes each at most (a sanitizer build on a busy 2-core machine takes 20 s).
RUN="timeout -k 10 180 $MPI"
step() { echo "-- $1 (at ${SECONDS}s)"; }
# Ends with the status of background job $1 once it exits; after $2 seconds it is killed (status
# 137) and the step fails rather than hang.
wait_gone() {
  for _ in $(seq $(($2 * 10))); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$1" 2>/dev/null && { echo "   (pid $1 still running after $2 s: killed)"; kill -9 "$1"; }
  wait "$1"
}

# Greedy text: stories260K (8 heads of 8 values, 4 KV heads) and a quantized TinyLlama-shaped file
# with 2 layers (32 query heads, 4 KV heads, Q4_K interleaved).
step "greedy text on 2 and 4 ranks"
"$GENMODEL" --preset tinyllama-1.1b --layers 2 --vocab 2000 --type q4_k -o "$T/tl.gguf" >/dev/null 2>&1
for model in "$M/stories260K.gguf" "$T/tl.gguf"; do
  "$BRISK" run -m "$model" -p "Once upon a time" -n 40 --temp 0 -t 1 >"$T/one" 2>/dev/null
  for np in 2 4; do
    $RUN -np $np "$BRISK" run -m "$model" -p "Once upon a time" -n 40 --temp 0 -t 1 >"$T/split" 2>"$T/e"
    check "run on $np ranks = one process ($(basename "$model"))" 'cmp -s "$T/one" "$T/split" && [ -s "$T/one" ]' "$T/e"
  done
done
check "stories on 2 ranks: the reference text" '$RUN -np 2 "$BRISK" run -m "$M/stories260K.gguf" -p "Once upon a time" -n 60 --temp 0 2>/dev/null | cmp -s - "$M/expected_greedy_once_upon_a_time_n64.txt"'

# Perplexity: the same figure to the last digit printed.
step "perplexity"
"$BRISK" perplexity -m "$M/stories260K.gguf" -f "$M/expected_greedy_empty_prompt_n256.txt" -c 64 -t 1 2>&1 | grep "Final estimate" >"$T/p1"
$RUN -np 2 "$BRISK" perplexity -m "$M/stories260K.gguf" -f "$M/expected_greedy_empty_prompt_n256.txt" -c 64 -t 1 2>&1 | grep "Final estimate" >"$T/p2"
check "perplexity on 2 ranks = one process" 'cmp -s "$T/p1" "$T/p2" && [ -s "$T/p1" ]'

# A draft model runs whole on rank 0 beside the split target: the same greedy text.
step "a draft model beside the split target"
K="$SHARED/models/kjv-pair"
KP="And God said, Let there be light: and there was light."
"$BRISK" run -m "$K/target.gguf" -p "$KP" -n 60 --temp 0 -t 1 >"$T/k1" 2>/dev/null
$RUN -np 2 "$BRISK" run -m "$K/target.gguf" -md "$K/draft.gguf" --draft-fixed -p "$KP" -n 60 --temp 0 -t 1 >"$T/k2" 2>"$T/e"
check "run -md on 2 ranks = one process" 'cmp -s "$T/k1" "$T/k2" && [ -s "$T/k1" ]' "$T/e"

# bench reports the ranks' collectives.
step "bench"
$RUN -np 2 "$BRISK" bench -m "$M/stories260K.gguf" -p 16 -n 16 -r 1 -t 1 --no-peaks >"$T/b" 2>&1
check "bench on 2 ranks reports its collectives" 'grep -q "split over 2 ranks" "$T/b" && grep -q "ranks. collectives: pp16" "$T/b"' "$T/b"

# Refusals, each a message and a non-zero exit, never a hang.
step "refusals"
timeout -k 10 60 $MPI -np 3 "$BRISK" run -m "$M/stories260K.gguf" -p "x" -n 4 >/dev/null 2>"$T/e"
check "8 heads on 3 ranks refused" '[ $? -ne 0 ] && grep -q "divides head_count" "$T/e"'
timeout -k 10 60 $MPI -np 1 "$BRISK" run -m "$M/stories260K.gguf" -p "x" -n 4 : -np 1 "$BRISK" run -m "$M/stories260K.bin" -z "$M/tok512.bin" -p "x" -n 4 >/dev/null 2>"$T/e"
check "different files on the ranks refused" '[ $? -ne 0 ] && grep -q "not the model rank 0 loaded" "$T/e"'
timeout -k 10 60 $MPI -np 2 "$BRISK" tokenize -m "$M/stories260K.gguf" -p "x" >/dev/null 2>"$T/e"
check "one-process commands refused" '[ $? -ne 0 ] && grep -q "start the others without mpirun" "$T/e"'

# The server: the same streamed text as one process; then SIGTERM to rank 0 ends every rank, 0.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Up to 60 s: two ranks of a sanitizer build start slowly on a busy 2-core machine.
wait_health() { for _ in $(seq 600); do curl -sf "http://127.0.0.1:$1/health" >/dev/null && return 0; sleep 0.1; done; return 1; }
ask() {
  curl -sN --max-time 120 "http://127.0.0.1:$1/v1/completions" -H 'Content-Type: application/json' \
    -d '{"prompt":"Once upon a time","max_tokens":40,"temperature":0,"stream":true}' |
    python3 -c 'import json,sys
print("".join(json.loads(l[6:])["choices"][0]["text"] for l in sys.stdin if l.startswith("data: {")))'
}
step "a server on 2 ranks"
P1=$(port); ports+=("$P1")
"$BRISK" serve -m "$M/stories260K.gguf" --port "$P1" -t 1 >/dev/null 2>&1 & ONE=$!; pids+=($ONE)
P2=$(port); ports+=("$P2")
$MPI -np 2 "$BRISK" serve -m "$M/stories260K.gguf" --port "$P2" -t 1 >/dev/null 2>"$T/se" & MPIRUN=$!; pids+=($MPIRUN)
check "servers up" 'wait_health "$P1" && wait_health "$P2"' "$T/se"
ask "$P1" >"$T/s1"; ask "$P2" >"$T/s2"
check "streamed text on 2 ranks = one process" 'cmp -s "$T/s1" "$T/s2" && [ -s "$T/s1" ]' "$T/se"
kill -TERM "$ONE"; wait_gone "$ONE" 30
rank_pid() {  # the brisk process of rank $1 under mpirun $2
  for p in $(pgrep -f "brisk serve -m $M/stories260K.gguf --port $3"); do
    [ "$p" = "$2" ] && continue
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && echo "$p"
  done
}
step "SIGTERM to rank 0"
R0=$(rank_pid 0 "$MPIRUN" "$P2")
check "rank 0 of the server found" '[ -n "$R0" ]'
[ -n "$R0" ] && kill -TERM "$R0"
wait_gone "$MPIRUN" 30; rc=$?
check "SIGTERM to rank 0: every rank exits, status 0 (got $rc)" '[ $rc -eq 0 ] && ! pgrep -f "port $P2" >/dev/null' "$T/se"

# A rank killed under a running server ends the whole job within seconds, naming what happened.
step "a rank killed under a server"
P3=$(port); ports+=("$P3")
$MPI -np 2 "$BRISK" serve -m "$M/stories260K.gguf" --port "$P3" -t 1 >/dev/null 2>"$T/ke" & MPIRUN=$!; pids+=($MPIRUN)
check "server up" 'wait_health "$P3"' "$T/ke"
R1=$(rank_pid 1 "$MPIRUN" "$P3")
check "rank 1 of the server found" '[ -n "$R1" ]'
[ -n "$R1" ] && kill -9 "$R1"
for _ in $(seq 150); do kill -0 "$MPIRUN" 2>/dev/null || break; sleep 0.1; done
check "a killed rank ends the job" '! kill -0 "$MPIRUN" 2>/dev/null && ! pgrep -f "port $P3" >/dev/null' "$T/ke"
wait_gone "$MPIRUN" 10; rc=$?
check "  with a non-zero status" '[ $rc -ne 0 ]'
pkill -9 -f "port $P3" 2>/dev/null

# A rank that stops (hangs) mid-job: the next request's collectives time out and end the job.
step "a rank stopped under a server"
P4=$(port); ports+=("$P4")
BRISK_MPI_TIMEOUT=3 $MPI -x BRISK_MPI_TIMEOUT -np 2 "$BRISK" serve -m "$M/stories260K.gguf" --port "$P4" -t 1 >/dev/null 2>"$T/he" & MPIRUN=$!; pids+=($MPIRUN)
check "server up" 'wait_health "$P4"' "$T/he"
R1=$(rank_pid 1 "$MPIRUN" "$P4")
check "rank 1 of the server found" '[ -n "$R1" ]'
[ -n "$R1" ] && kill -STOP "$R1"
ask "$P4" >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 200); do kill -0 "$MPIRUN" 2>/dev/null || break; sleep 0.1; done
check "a hung rank ends the job" '! kill -0 "$MPIRUN" 2>/dev/null && grep -q "waited 3 s for the other ranks" "$T/he"' "$T/he"
pkill -9 -f "port $P4" 2>/dev/null
wait_gone "$MPIRUN" 10 >/dev/null

report
