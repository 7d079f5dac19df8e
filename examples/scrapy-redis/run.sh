#!/usr/bin/env bash
# A three-process Scrapy crawl sharing one bloomkv-server: scrapy-redis keeps the request
# queue (a sorted set), start URLs (a list), items (a list) and stats (a hash) in it, and
# scrapy-redis-bloomfilter dedups URLs with SETBIT/GETBIT. The site is a local one
# (site.py), so no network is needed. Installs its Python packages into a venv of its own.
#
#   examples/scrapy-redis/run.sh            # against bloomkv-server (built if needed)
#   SERVER=redis examples/scrapy-redis/run.sh   # the same crawl against redis-server
#   SERVER=cluster examples/scrapy-redis/run.sh # against a 3-node bloomkv-cluster answering
#                                               # as Redis Cluster (--cluster-redirects yes),
#                                               # through redis-py's RedisCluster (REDIS_CLS)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VENV=${VENV:-$HERE/.venv}
PAGES=${PAGES:-300}
CRAWLERS=${CRAWLERS:-3}
SERVER=${SERVER:-bloomkv}
PORT=${PORT:-7391}
SITE_PORT=${SITE_PORT:-7390}
WORK=$(mktemp -d /tmp/scrapy-redis-example.XXXXXX)

if [ ! -x "$VENV/bin/scrapy" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q -r "$HERE/requirements.txt"
fi

pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

if [ "$SERVER" = redis ]; then
  redis-server --port "$PORT" --save "" --appendonly yes --dir "$WORK" > "$WORK/server.log" 2>&1 &
elif [ "$SERVER" = cluster ]; then
  . "$ROOT/examples/cluster.sh"
  start_cluster "$PORT" --cluster-redirects yes
  # Cluster clients: redis-py's RedisCluster, and a queue it can pop (crawler.py says why).
  export REDIS_CLS=redis.cluster.RedisCluster SCHEDULER_QUEUE_CLASS=scrapy_redis.queue.FifoQueue
  # Until a leader is elected, CLUSTER SLOTS is empty and a cluster client cannot start.
  "$VENV/bin/python" - "$PORT" <<'PY'
import sys, time, redis
for _ in range(300):
    try:
        redis.cluster.RedisCluster(port=int(sys.argv[1])).set("site:ready", 1)
        break
    except (redis.RedisError, redis.exceptions.RedisClusterException, IndexError):
        time.sleep(0.1)
PY
else
  (cd "$ROOT" && cargo build --release -q -p bloomkv-server)
  "$ROOT/target/release/bloomkv-server" --dir "$WORK/db" --port "$PORT" 2> "$WORK/server.log" &
fi
pids+=($!)
"$VENV/bin/python" "$HERE/site.py" "$SITE_PORT" "$PAGES" &
pids+=($!)
export REDIS_URL="redis://127.0.0.1:$PORT" SITE_PORT CRAWLERS
for _ in $(seq 50); do
  "$VENV/bin/python" "$HERE/check.py" --ping 2>/dev/null && break
  sleep 0.1
done
"$VENV/bin/python" "$HERE/check.py" --seed "http://127.0.0.1:$SITE_PORT/page/0"

start=$(date +%s.%N)
crawls=()
for i in $(seq "$CRAWLERS"); do
  (cd "$HERE" && "$VENV/bin/scrapy" runspider crawler.py > "$WORK/crawl-$i.log" 2>&1) &
  crawls+=($!)
done
status=0
for p in "${crawls[@]}"; do wait "$p" || status=1; done
end=$(date +%s.%N)
if [ $status != 0 ]; then
  echo "a crawler failed:"; tail -n 20 "$WORK"/crawl-*.log; exit 1
fi
echo "$CRAWLERS crawlers against $SERVER, $PAGES pages: $(echo "$end - $start" | bc) s (including ${MAX_IDLE:-8} s of idle wait at the end)"
"$VENV/bin/python" "$HERE/check.py" "$PAGES"
