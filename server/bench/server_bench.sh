#!/usr/bin/env bash
# Server benchmark and regression guard for docs/BENCH.md ("Server"): redis-benchmark against
# today's bloomkv-server, a real redis-server (appendonly yes, appendfsync everysec) and, with
# --baseline, the bloomkv-server of an earlier commit or tag, all on this machine, run after
# run interleaved (server order rotating every round), RUNS rounds. Prints each run as CSV
# ("server,test,pipeline,rps,p50,p99") to stdout as it goes, then a table of medians, ratios
# (vs redis-server, vs the baseline) and the runs' spread, and flags every test where today's
# server is slower than the baseline by more than the spread (exit status 2 then).
# Needs redis-server and redis-tools (apt-get install -y redis-server redis-tools); not CI.
#
#   cargo build --release -p bloomkv-server
#   server/bench/server_bench.sh --baseline e33c0d1 > bench-out/server.csv
#
# --baseline REV   build bloomkv-server at REV (a commit or a tag) in a git worktree under
#                  $CACHE (default target/server-bench) with its own target dir, both kept
#                  between runs, and run it beside today's.
# --baseline-bin PATH   run the bloomkv-server binary at PATH as the baseline (one built
#                  earlier), naming it by PATH in the report.
# Environment: RUNS (3), KEYS (1000000: the keyspace, preloaded with 100-byte values; each
# server gets the same keys), N (requests per unpipelined run, 200000), NP (per pipelined run,
# 1000000), TESTS (default set,get,lpush,rpop,zadd,hset,sadd: redis-benchmark's tests, each
# unpipelined and with -P 16; the collection tests use one key with random members, and rpop
# pops what lpush pushed: keep lpush first), EXTRA (default set4k,get4k,getbit,setbit,bfmadd,evalsha;
# "" for none; see bench() below), BKV_ARGS (flags for both bloomkv-servers), CACHE.
set -euo pipefail
RUNS=${RUNS:-3}
KEYS=${KEYS:-1000000}
N=${N:-200000}
NP=${NP:-1000000}
TESTS=${TESTS:-set,get,lpush,rpop,zadd,hset,sadd}
EXTRA=${EXTRA-set4k,get4k,getbit,setbit,bfmadd,evalsha}
# The script of the evalsha test (a job queue's step: every BullMQ command is a script).
SCRIPT="return redis.call('INCR', KEYS[1])"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${CACHE:-$ROOT/target/server-bench}
BASELINE=
BASE_BIN=
while [ $# -gt 0 ]; do
  case $1 in
    --baseline) BASELINE=$2; shift 2 ;;
    --baseline-bin) BASE_BIN=$2; BASELINE=$2; shift 2 ;;
    *) echo "usage: $0 [--baseline <commit|tag> | --baseline-bin <path>]" >&2; exit 64 ;;
  esac
done

# The baseline's binary: REV checked out in a worktree of this repository, built with a
# target dir of its own (both cached, so a second run with the same REV builds nothing).
build_baseline() {
  local rev src
  rev=$(git -C "$ROOT" rev-parse --verify "$1^{commit}")
  src=$CACHE/baseline-src
  mkdir -p "$CACHE"
  if [ ! -e "$src/.git" ]; then
    git -C "$ROOT" worktree add --detach "$src" "$rev" >&2
  else
    git -C "$src" checkout --quiet --detach "$rev"
  fi
  (cd "$src" && CARGO_TARGET_DIR=$CACHE/target cargo build --release --quiet \
    -p bloomkv-server --bin bloomkv-server) >&2
  echo "$CACHE/target/release/bloomkv-server"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

WORK=$(mktemp -d /tmp/server-bench.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$WORK"' EXIT

declare -A PORT
SERVERS=(redis today)
start_bkv() { # name binary
  PORT[$1]=$(free_port)
  "$2" --dir "$WORK/$1" --port "${PORT[$1]}" ${BKV_ARGS:-} 2> "$WORK/$1.log" &
  PIDS+=($!)
}
if [ -n "$BASELINE" ]; then
  [ -n "$BASE_BIN" ] || BASE_BIN=$(build_baseline "$BASELINE")
  SERVERS+=(baseline)
  start_bkv baseline "$BASE_BIN"
fi
start_bkv today "$ROOT/target/release/bloomkv-server"
PORT[redis]=$(free_port)
redis-server --port "${PORT[redis]}" --appendonly yes --appendfsync everysec --save "" \
  --dir "$WORK" --daemonize no > "$WORK/redis.log" 2>&1 &
PIDS+=($!)
for s in "${SERVERS[@]}"; do
  until redis-cli -p "${PORT[$s]}" ping > /dev/null 2>&1; do sleep 0.2; done
done

# Preload: every key of the keyspace once with 100-byte values, 100k keys with 4 KiB values,
# and the crawler's Bloom filters (a 2^30-bit bitmap as scrapy-redis-bloomfilter keeps, a
# BF.RESERVE'd filter where the server has BF.*).
for s in "${SERVERS[@]}"; do
  p=${PORT[$s]}
  [ "$KEYS" != 0 ] && redis-benchmark -p "$p" -t set -n "$KEYS" -r "$KEYS" -d 100 -c 50 -P 64 -q > /dev/null
  if [[ ,$EXTRA, == *,get4k,* ]]; then
    redis-benchmark -p "$p" -n 100000 -r 100000 -c 50 -P 16 -q \
      SET "big:__rand_int__" "$(head -c 4096 /dev/zero | tr '\0' v)" > /dev/null
  fi
  redis-cli -p "$p" setbit bloomfilter 1073741823 0 > /dev/null
  SHA=$(redis-cli -p "$p" script load "$SCRIPT")
  [ "$s" != redis ] && redis-cli -p "$p" bf.reserve bf 0.001 100000000 > /dev/null
done

csv() { # server test pipeline: redis-benchmark's last CSV line as "server,test,p,rps,p50,p99"
  local out
  out=$(cat | tail -1 | tr -d '"')
  # "SET","123.4","avg","min","p50","p95","p99","max"; nothing when the server refused the
  # command (a baseline older than the command).
  case $out in
    *,[0-9]*) echo "$1,$2,$3,$(echo "$out" | awk -F, '{print $2","$5","$7}')" ;;
  esac
}
bench() { # server test pipeline: one run
  local s=$1 t=$2 p=$3 port=${PORT[$1]} n=$N
  [ "$p" != 1 ] && n=$NP
  local rb=(redis-benchmark -p "$port" -c 50 -P "$p" --csv)
  case $t in
    set4k) "${rb[@]}" -n $((n / 4)) -r 100000 SET "big:__rand_int__" "$(head -c 4096 /dev/zero | tr '\0' w)" ;;
    get4k) "${rb[@]}" -n $((n / 4)) -r 100000 GET "big:__rand_int__" ;;
    # scrapy-redis-bloomfilter: 6 bit probes of one URL, pipelined, into a 2^30-bit map.
    getbit) "${rb[@]}" -n "$n" -r 1073741824 GETBIT bloomfilter __rand_int__ ;;
    setbit) "${rb[@]}" -n "$n" -r 1073741824 SETBIT bloomfilter __rand_int__ 1 ;;
    # The crawler example's dedup: 16 URLs per BF.MADD.
    bfmadd) "${rb[@]}" -n $((n / 16)) -r 100000000 BF.MADD bf \
      $(for i in $(seq 16); do printf 'https://example.com/page/__rand_int__ '; done) ;;
    # A one-command script, unpipelined: what a script costs beside its command.
    evalsha) "${rb[@]}" -n $((N / 4)) -r 100000 EVALSHA "$SHA" 1 "counter:__rand_int__" ;;
    *) "${rb[@]}" -n "$n" -r "${KEYS/#0/1}" -d 100 -t "$t" ;;
  esac 2>/dev/null | csv "$s" "$t" "$p" || true
}

RESULTS=$WORK/results.csv
for run in $(seq "$RUNS"); do
  # Rotate the order each round, so no server always runs after the same one.
  order=("${SERVERS[@]:$(( (run - 1) % ${#SERVERS[@]} ))}" "${SERVERS[@]:0:$(( (run - 1) % ${#SERVERS[@]} ))}")
  for t in ${TESTS//,/ }; do
    for p in 1 16; do
      for s in "${order[@]}"; do bench "$s" "$t" "$p" | tee -a "$RESULTS"; done
    done
  done
  for t in ${EXTRA//,/ }; do
    p=16
    [ "$t" = getbit ] || [ "$t" = setbit ] && p=6
    [ "$t" = evalsha ] && p=1
    for s in "${order[@]}"; do
      [ "$s" = redis ] && [ "$t" = bfmadd ] && continue
      bench "$s" "$t" "$p" | tee -a "$RESULTS"
    done
  done
done

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg);" \
  "today $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD || echo +dirty)" \
  "${BASELINE:+baseline $BASELINE}" >&2
python3 "$(dirname "$0")/bench_table.py" "$RESULTS" >&2
