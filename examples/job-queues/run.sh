#!/usr/bin/env bash
# The job queues crawler stacks run on, against one bloomkv-server: an RQ 3 worker, a
# Celery 5 worker (broker and result backend on the server) and a BullMQ 5 worker (Node)
# each process a batch of jobs, and every result is read back and checked. RQ keeps results
# in streams and runs Lua scripts for unique enqueue, scheduling and locks; kombu runs Lua
# scripts for its bindings and Celery's result backend for chords; BullMQ's scripts use
# cjson and cmsgpack. Installs its Python packages into a venv of its own and its Node
# packages into node_modules here (Node itself from Debian's nodejs if it is missing).
#
#   examples/job-queues/run.sh                  # against bloomkv-server (built if needed)
#   SERVER=cluster examples/job-queues/run.sh   # against a 3-node bloomkv-cluster, every
#                                               # client on node 1 (leader or follower)
#   SERVER=redis examples/job-queues/run.sh     # the same against redis-server
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VENV=${VENV:-$HERE/.venv}
SERVER=${SERVER:-bloomkv}
PORT=${PORT:-7393}
export JOBS=${JOBS:-100} TASKS=${TASKS:-200}
WORK=$(mktemp -d /tmp/job-queues-example.XXXXXX)

if ! cmp -s "$HERE/requirements.txt" "$VENV/requirements.txt"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q -r "$HERE/requirements.txt"
  cp "$HERE/requirements.txt" "$VENV/requirements.txt"
fi

if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  apt-get install -y -q nodejs npm > /dev/null
fi
if ! cmp -s "$HERE/package-lock.json" "$HERE/node_modules/.package-lock.installed"; then
  (cd "$HERE" && npm ci --no-audit --no-fund --silent)
  cp "$HERE/package-lock.json" "$HERE/node_modules/.package-lock.installed"
fi

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ "$SERVER" = redis ]; then
  redis-server --port "$PORT" --save "" --appendonly yes --dir "$WORK" > "$WORK/server.log" 2>&1 &
  pids+=($!)
elif [ "$SERVER" = cluster ]; then
  . "$ROOT/examples/cluster.sh"
  start_cluster "$PORT"
  # Until a leader is elected, writes answer -CLUSTERDOWN: wait for one to succeed.
  "$VENV/bin/python" - "$PORT" <<'PY'
import sys, time, redis
r = redis.Redis(port=int(sys.argv[1]))
for _ in range(300):
    try:
        r.set("job-queues:ready", 1)
        break
    except redis.RedisError:
        time.sleep(0.1)
PY
else
  (cd "$ROOT" && cargo build --release -q -p bloomkv-server)
  "$ROOT/target/release/bloomkv-server" --dir "$WORK/db" --port "$PORT" 2> "$WORK/server.log" &
  pids+=($!)
fi
export REDIS_URL="redis://127.0.0.1:$PORT/0"
for _ in $(seq 50); do
  "$VENV/bin/python" -c "import redis,os; redis.Redis.from_url(os.environ['REDIS_URL']).ping()" 2>/dev/null && break
  sleep 0.1
done

status=0
cd "$HERE"
# RQ: one worker with its scheduler, processing until the checks are done.
"$VENV/bin/rq" worker --url "$REDIS_URL" --with-scheduler default > "$WORK/rq-worker.log" 2>&1 &
rq_worker=$!
pids+=($rq_worker)
"$VENV/bin/python" rq_check.py || status=1
kill -INT "$rq_worker" 2>/dev/null || true

# Celery: a prefork worker of two processes.
"$VENV/bin/celery" -A tasks worker --concurrency 2 --loglevel INFO > "$WORK/celery-worker.log" 2>&1 &
celery_worker=$!
pids+=($celery_worker)
"$VENV/bin/python" celery_check.py || status=1
kill -TERM "$celery_worker" 2>/dev/null || true

# BullMQ: a worker of concurrency 4 in the checking process itself.
node bullmq_check.mjs || status=1

if [ $status != 0 ]; then
  for log in "$WORK"/server.log "$WORK"/node*.log; do
    [ -f "$log" ] && { echo "--- $(basename "$log")"; tail -20 "$log"; }
  done
  echo "--- rq worker log"; tail -30 "$WORK/rq-worker.log"
  echo "--- celery worker log"; tail -30 "$WORK/celery-worker.log"
  exit 1
fi
echo "job queues against $SERVER: all results right"
