#!/usr/bin/env bash
# Throughput of a 3-node cluster on one machine against one bloomkv-server with
# --appendfsync always: redis-benchmark, 50 clients, SET of 100-byte values on random keys,
# unpipelined and with -P 16, interleaved run by run (RUNS times each).
#
#   cargo build --release -p bloomkv-server -p bloomkv-cluster --bins
#   RUNS=3 N=20000 cluster/bench/throughput.sh
#   BASELINE=/path/to/older/bloomkv-cluster RUNS=3 cluster/bench/throughput.sh
#   TEST=get RUNS=3 cluster/bench/throughput.sh   # linearizable GETs of 100k keys, filled first
#
# Prints one CSV line per run: setup,pipeline,run,requests_per_second, then the median of
# each setup and pipeline depth and the cluster/single ratio. With BASELINE, a cluster of
# that binary runs in the same loop (setup cluster3-base) and the ratio of this build's
# cluster to it is printed too. The cluster is driven through
# its leader (a follower would forward every write: one more hop). Figures and the machine
# they were taken on: docs/CLUSTER.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
N=${N:-20000}
TEST=${TEST:-set}
case $TEST in
  set) KEYS=1000000 ;;
  get) KEYS=100000 ;;
  *) echo "TEST is set or get" >&2; exit 2 ;;
esac
BIN=target/release
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

wait_port() { for _ in $(seq 1 200); do redis-cli -p "$1" ping >/dev/null 2>&1 && return; sleep 0.1; done; echo "port $1 not up" >&2; exit 1; }

bench() { # port pipeline
  if [[ $TEST == get ]]; then # most GETs find their key
    redis-benchmark -p "$1" -c 50 -n 100000 -t set -d 100 -r 100000 -P 16 -q >/dev/null 2>&1
  fi
  redis-benchmark -p "$1" -c 50 -n "$N" -t "$TEST" -d 100 -r "$KEYS" -P "$2" -q 2>/dev/null \
    | tr '\r' '\n' | awk '/requests per second/ {for (i=1;i<=NF;i++) if ($i ~ /^[0-9.]+$/) v=$i} END {print v}'
}

start_single() {
  rm -rf "$WORK/single"
  "$BIN/bloomkv-server" --dir "$WORK/single" --port 16400 --appendfsync always 2>"$WORK/single.log" &
  SINGLE=$!
  wait_port 16400
}

start_cluster() { # [binary]
  local bin=${1:-$BIN/bloomkv-cluster}
  local ic=1=127.0.0.1:17401,2=127.0.0.1:17402,3=127.0.0.1:17403
  for i in 1 2 3; do
    rm -rf "$WORK/n$i"
    "$bin" --node-id $i --port 1640$i --dir "$WORK/n$i" \
      --cluster-addr 127.0.0.1:1740$i --initial-cluster $ic 2>"$WORK/n$i.log" &
    NODES[$i]=$!
  done
  for i in 1 2 3; do wait_port 1640$i; done
  for _ in $(seq 1 100); do
    LEADER=$(redis-cli -p 16401 cluster leader 2>/dev/null || true)
    [[ "$LEADER" =~ ^[0-9]+$ ]] && break
    sleep 0.1
  done
}

row() { echo "$1" | tee -a "$WORK/results.csv"; }

stop_all() { kill "$@" 2>/dev/null || true; wait "$@" 2>/dev/null || true; }

echo "setup,pipeline,run,requests_per_second"
for run in $(seq 1 "$RUNS"); do
  for p in 1 16; do
    start_single
    row "single-always,$p,$run,$(bench 16400 "$p")"
    stop_all "$SINGLE"
    start_cluster
    row "cluster3,$p,$run,$(bench 1640"$LEADER" "$p")"
    stop_all "${NODES[@]}"
    if [[ -n "${BASELINE:-}" ]]; then
      start_cluster "$BASELINE"
      row "cluster3-base,$p,$run,$(bench 1640"$LEADER" "$p")"
      stop_all "${NODES[@]}"
    fi
  done
done

median() { # setup pipeline
  grep "^$1,$2," "$WORK/results.csv" | cut -d, -f4 | sort -n |
    awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2]+v[NR/2+1])/2}'
}
for p in 1 16; do
  s=$(median single-always "$p"); c=$(median cluster3 "$p")
  echo "median -P $p: single-always $s, cluster3 $c, ratio $(awk -v c="$c" -v s="$s" 'BEGIN {printf "%.2f", c/s}')"
  if [[ -n "${BASELINE:-}" ]]; then
    b=$(median cluster3-base "$p")
    echo "median -P $p: cluster3-base $b, this build / baseline $(awk -v c="$c" -v b="$b" 'BEGIN {printf "%.2f", c/b}')"
  fi
done
