#!/usr/bin/env bash
# Server benchmark for docs/BENCH.md ("Server"): redis-benchmark against bloomkv-server and a
# real redis-server (appendonly yes, appendfsync everysec) on this machine, interleaved, RUNS
# runs each; prints CSV lines "server,test,pipeline,rps,p50,p99". Needs redis-server and
# redis-tools (apt-get install -y redis-server redis-tools); not part of CI.
#
#   cargo build --release -p bloomkv-server && server/bench/server_bench.sh > bench-out/server.csv
set -euo pipefail
RUNS=${RUNS:-3}
KEYS=${KEYS:-1000000}          # keyspace: 1M keys x 100-byte values, >10x the 8 MiB block cache
                               # (KEYS=0: redis-benchmark's default single key, no preload)
N=${N:-200000}                 # requests per unpipelined run
NP=${NP:-1000000}              # requests per pipelined run
TESTS=${TESTS:-set,get}        # redis-benchmark tests, e.g. set,get,lpush,rpop,zadd,hset,sadd
                               # (the collection tests use one key with -r random members;
                               # rpop pops what the lpush before it pushed: keep lpush first)
BF=${BF:-1}                    # 0: skip the BF.ADD / BF.EXISTS runs
BKV_PORT=${BKV_PORT:-7101}
REDIS_PORT=${REDIS_PORT:-7102}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/server-bench.XXXXXX)

"$ROOT/target/release/bloomkv-server" --dir "$WORK/bkv" --port "$BKV_PORT" ${BKV_ARGS:-} 2> "$WORK/bkv.log" &
BKV_PID=$!
redis-server --port "$REDIS_PORT" --appendonly yes --appendfsync everysec --save "" \
  --dir "$WORK" --daemonize no > "$WORK/redis.log" 2>&1 &
REDIS_PID=$!
trap 'kill $BKV_PID $REDIS_PID 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
sleep 1

RANDOM_KEYS=(-r "$KEYS")
[ "$KEYS" = 0 ] && RANDOM_KEYS=()
for port in $BKV_PORT $REDIS_PORT; do
  [ "$KEYS" = 0 ] && break
  # Preload: every key of the keyspace once, 100-byte values.
  redis-benchmark -p "$port" -t set -n "$KEYS" -r "$KEYS" -d 100 -c 50 -P 64 -q > /dev/null
done

one() { # server port test pipeline n
  local out
  out=$(redis-benchmark -p "$2" -t "$3" -n "$5" "${RANDOM_KEYS[@]}" -d 100 -c 50 -P "$4" --csv 2>/dev/null | tail -1)
  # "SET","123.4","avg","min","p50","p95","p99","max"
  echo "$1,$3,$4,$(echo "$out" | tr -d '"' | awk -F, '{print $2","$5","$7}')"
}
custom() { # port pipeline n command...
  local port=$1 p=$2 n=$3; shift 3
  local out
  out=$(redis-benchmark -p "$port" -n "$n" -r "${KEYS/#0/1000000}" -c 50 -P "$p" --csv "$@" 2>/dev/null | tail -1)
  echo "bloomkv,$1,$p,$(echo "$out" | tr -d '"' | awk -F, '{print $2","$5","$7}')"
}

redis-cli -p "$BKV_PORT" bf.reserve bf 0.01 1000000 > /dev/null
for run in $(seq "$RUNS"); do
  for s in redis bloomkv; do
    port=$REDIS_PORT; [ "$s" = bloomkv ] && port=$BKV_PORT
    for t in ${TESTS//,/ }; do one "$s" "$port" "$t" 1 "$N"; done
    for t in ${TESTS//,/ }; do one "$s" "$port" "$t" 16 "$NP"; done
  done
  [ "$BF" = 0 ] && continue
  custom "$BKV_PORT" 1 "$N" BF.ADD bf __rand_int__
  custom "$BKV_PORT" 1 "$N" BF.EXISTS bf __rand_int__
  custom "$BKV_PORT" 16 "$NP" BF.ADD bf __rand_int__
  custom "$BKV_PORT" 16 "$NP" BF.EXISTS bf __rand_int__
done
echo "# bloomkv INFO after the runs:" >&2
redis-cli -p "$BKV_PORT" info bloomkv >&2
redis-cli -p "$BKV_PORT" dbsize >&2
