#!/usr/bin/env bash
# Instructions per command of bloomkv-server, per command type, under callgrind: the CPU cost
# of the command path, independent of the machine's load (docs/BENCH.md, "Server").
#
# The server is preloaded at full speed (KEYS keys of 100 bytes, as server_bench.sh does),
# restarted under `valgrind --tool=callgrind`, and for each test redis-benchmark runs N
# requests while callgrind counts; the count is divided by N. Only the I/O workers count
# (tokio's worker loop, also where `block_in_place` moved it: parsing, commands, engine reads
# and writes, the WAL append, replies): the engine's flushes and compactions run on threads of
# their own, at times that depend on the machine, and are left out. Prints CSV lines
# "name,test,pipeline,instructions_per_command" and keeps each run's callgrind output in
# OUT (callgrind_annotate OUT/<test>-P<p>.<pid>... shows where the instructions go).
#
#   server/bench/server_callgrind.sh [name=binary ...]
#                                      (default: today=target/release/bloomkv-server)
#
# Environment: TESTS (default set,get,lpush,rpop,zadd,hset,sadd), PIPELINES (default "1 16"),
# N (requests per test, default 20000), KEYS (default 1000000), CLIENTS (default 50),
# OUT (default bench-out/callgrind), BKV_PORT (default 7131), BKV_ARGS (extra server flags),
# CACHESIM=1 (also simulate the caches: a fifth column estimates cycles per command as
# Ir + 10 x first-level misses + 100 x last-level misses, which sees what instruction counts
# miss, such as a lookup in a big memtable that misses the caches at every level; LL sets the
# simulated last level, default 33554432,16,64: this machine's 32 MiB L3).
# Needs valgrind and redis-tools; not part of CI.
set -euo pipefail
TESTS=${TESTS:-set,get,lpush,rpop,zadd,hset,sadd}
PIPELINES=${PIPELINES:-1 16}
N=${N:-20000}
KEYS=${KEYS:-1000000}
CLIENTS=${CLIENTS:-50}
BKV_PORT=${BKV_PORT:-7131}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/bench-out/callgrind}
BINS=("$@")
[ ${#BINS[@]} = 0 ] && BINS=("today=$ROOT/target/release/bloomkv-server")
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/server-callgrind.XXXXXX)
PID=
stop() { # ends the server this script started, and waits for it
  if [ -n "$PID" ]; then
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=
  fi
}
trap 'stop; rm -rf "$WORK"' EXIT

up() { # waits until the server answers PING (valgrind starts slowly)
  for _ in $(seq 600); do
    redis-cli -p "$BKV_PORT" ping > /dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "server did not start" >&2
  exit 1
}

for named in "${BINS[@]}"; do
  name=${named%%=*}
  bin=${named#*=}
  rm -rf "$WORK/db"
  "$bin" --dir "$WORK/db" --port "$BKV_PORT" ${BKV_ARGS:-} 2> "$WORK/server.log" &
  PID=$!
  up
  [ "$KEYS" != 0 ] && redis-benchmark -p "$BKV_PORT" -t set -n "$KEYS" -r "$KEYS" -d 100 \
    -c 50 -P 64 -q > /dev/null
  stop
  SIM=()
  # The last level as this machine's L3 (valgrind's own guess on a VM can be far off).
  [ "${CACHESIM:-0}" = 1 ] && SIM=(--cache-sim=yes --LL="${LL:-33554432,16,64}")
  valgrind --tool=callgrind "${SIM[@]}" --collect-atstart=no \
    --toggle-collect='tokio::runtime::scheduler::multi_thread::worker::run'  --callgrind-out-file="$OUT/$name-%p.out" \
    "$bin" --dir "$WORK/db" --port "$BKV_PORT" ${BKV_ARGS:-} 2> "$WORK/valgrind.log" &
  PID=$!
  up
  for t in ${TESTS//,/ }; do
    for p in $PIPELINES; do
      callgrind_control -z "$PID" > /dev/null 2>&1
      redis-benchmark -p "$BKV_PORT" -t "$t" -n "$N" -r "$KEYS" -d 100 -c "$CLIENTS" -P "$p" \
        -q > /dev/null
      callgrind_control -d "$t-P$p" "$PID" > /dev/null 2>&1
      # The newest dump is this test's: its "totals:" line counts since the zeroing.
      dump=$(ls -t "$OUT/$name-$PID.out".* | head -1)
      mv "$dump" "$OUT/$name-$t-P$p.out"
      # "events:" names the columns of "totals:" (Ir, and with the cache simulation the
      # first-level misses I1mr D1mr D1mw and last-level misses ILmr DLmr DLmw among others).
      awk -v name="$name" -v t="$t" -v p="$p" -v n="$N" '
        /^events:/ { for (i = 2; i <= NF; i++) col[$i] = i }
        /^totals:/ {
          line = name "," t "," p "," int($col["Ir"] / n)
          if ("DLmr" in col) {
            l1 = $col["I1mr"] + $col["D1mr"] + $col["D1mw"]
            ll = $col["ILmr"] + $col["DLmr"] + $col["DLmw"]
            line = line "," int(($col["Ir"] + 10 * l1 + 100 * ll) / n)
          }
          print line
        }' "$OUT/$name-$t-P$p.out"
    done
  done
  stop
done
