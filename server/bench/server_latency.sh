#!/usr/bin/env bash
# Latency figures for docs/BENCH.md ("Server"), bloomkv-server beside a real redis-server
# (appendonly yes, appendfsync everysec), RUNS runs each, interleaved:
#   del_big   the time from sending DEL of a set of MEMBERS members to its reply (ms)
#   ping_p99  PING's p99 (ms, one client) while 50 other clients write 4000-byte values with
#             -P 16 (the load that stalled the old server)
# Prints CSV lines "server,figure,value". Needs redis-server, redis-tools and python3.
#
#   cargo build --release -p bloomkv-server && server/bench/server_latency.sh
set -euo pipefail
RUNS=${RUNS:-3}
MEMBERS=${MEMBERS:-10000000}
BKV_PORT=${BKV_PORT:-7111}
REDIS_PORT=${REDIS_PORT:-7112}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/server-latency.XXXXXX)

"$ROOT/target/release/bloomkv-server" --dir "$WORK/bkv" --port "$BKV_PORT" 2> "$WORK/bkv.log" &
BKV_PID=$!
redis-server --port "$REDIS_PORT" --appendonly yes --appendfsync everysec --save "" \
  --dir "$WORK" --daemonize no > "$WORK/redis.log" 2>&1 &
REDIS_PID=$!
trap 'kill $BKV_PID $REDIS_PID 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
sleep 1

# SADD big m0 .. m999, 10,000 times for 10M members, as raw protocol for redis-cli --pipe.
python3 - "$MEMBERS" > "$WORK/sadd.resp" <<'PY'
import sys
n = int(sys.argv[1]); per = 1000; out = sys.stdout.buffer
for start in range(0, n, per):
    members = [b"m%d" % i for i in range(start, min(n, start + per))]
    parts = [b"SADD", b"big"] + members
    out.write(b"*%d\r\n" % len(parts))
    for p in parts:
        out.write(b"$%d\r\n%s\r\n" % (len(p), p))
PY

# Seconds from sending one command to its whole reply, over a fresh connection.
timed() { # port command...
  python3 - "$@" <<'PY'
import socket, sys, time
port = int(sys.argv[1]); args = [a.encode() for a in sys.argv[2:]]
s = socket.create_connection(("127.0.0.1", port))
req = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)
t = time.perf_counter(); s.sendall(req); reply = s.recv(65536)
while not reply.endswith(b"\r\n"):
    reply += s.recv(65536)
print("%.3f" % ((time.perf_counter() - t) * 1000), reply.strip().decode())
PY
}

for run in $(seq "$RUNS"); do
  for s in redis bloomkv; do
    port=$REDIS_PORT; [ "$s" = bloomkv ] && port=$BKV_PORT
    redis-cli -p "$port" --pipe --pipe-timeout 0 < "$WORK/sadd.resp" > "$WORK/pipe.out" || { cat "$WORK/pipe.out" >&2; exit 1; }
    card=$(redis-cli -p "$port" scard big)
    [ "$card" = "$MEMBERS" ] || { echo "$s: SCARD big is $card, not $MEMBERS" >&2; exit 1; }
    read -r ms reply < <(timed "$port" DEL big)
    [ "$reply" = ":1" ] || { echo "$s: DEL big answered $reply" >&2; exit 1; }
    echo "$s,del_big_ms,$ms"

    redis-benchmark -p "$port" -t set -P 16 -d 4000 -c 50 -n 400000 -r 1000000 -q > /dev/null 2>&1 &
    load=$!
    sleep 1
    p99=$(redis-benchmark -p "$port" -t ping_mbulk -c 1 -n 20000 --csv 2>/dev/null | tail -1 |
      tr -d '"' | awk -F, '{print $7}')
    kill "$load" 2>/dev/null || true; wait "$load" 2>/dev/null || true
    echo "$s,ping_p99_ms_under_writes,$p99"
  done
done
