#!/usr/bin/env bash
# walrus (coleifer's Redis toolkit for Python) runs its own test suite, unchanged, against one
# bloomkv-server: 131 tests in database 15 (SELECT), covering its containers (hashes, sets,
# sorted sets, lists, arrays, BitField over BITFIELD, HyperLogLog over PFADD/PFCOUNT/PFMERGE),
# streams with consumer groups (XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO,
# XSETID), Lua-scripted locks, rate limits, caches, counters, autocomplete, a graph store,
# full-text search and its ORM. Installs walrus into a venv of its own.
#
#   examples/walrus/run.sh                  # against bloomkv-server (built if needed)
#   SERVER=redis examples/walrus/run.sh     # the same against redis-server
#
# Cluster mode serves database 0 only (as Redis Cluster does), and walrus's tests use 15.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VENV=${VENV:-$HERE/.venv}
SERVER=${SERVER:-bloomkv}
PORT=${PORT:-7396}
WORK=$(mktemp -d /tmp/walrus-example.XXXXXX)

if ! cmp -s "$HERE/requirements.txt" "$VENV/requirements.txt"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q -r "$HERE/requirements.txt"
  cp "$HERE/requirements.txt" "$VENV/requirements.txt"
fi

pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ "$SERVER" = redis ]; then
  redis-server --port "$PORT" --save "" --appendonly yes --dir "$WORK" > "$WORK/server.log" 2>&1 &
  pid=$!
else
  (cd "$ROOT" && cargo build --release -q -p bloomkv-server)
  "$ROOT/target/release/bloomkv-server" --dir "$WORK/db" --port "$PORT" 2> "$WORK/server.log" &
  pid=$!
fi
for _ in $(seq 50); do
  "$VENV/bin/python" -c "import redis,sys; redis.Redis(port=int(sys.argv[1])).ping()" "$PORT" \
    2>/dev/null && break
  sleep 0.1
done

# The suite flushes database 15 around each test; it is walrus's own, from the installed package.
if ! WALRUS_REDIS_PORT=$PORT "$VENV/bin/python" -m unittest walrus.tests > "$WORK/tests.log" 2>&1; then
  cat "$WORK/tests.log"
  echo "--- server log"; tail -20 "$WORK/server.log"
  exit 1
fi
tail -3 "$WORK/tests.log"
echo "walrus's test suite against $SERVER: passed"
