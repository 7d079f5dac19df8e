#!/usr/bin/env bash
# Interleaved A/B of bloomkv-server builds (or flag sets), each on a database of its own
# preloaded the same way (1M 100-byte keys), so that a difference between builds is not a
# difference between the databases' shapes. redis-benchmark, 50 clients.
#
#   ROUNDS=4 N=300000 TESTS="get:16:100:1000000 set:16:4096:100000" \
#     server/bench/server_ab.sh old=/path/to/old/bloomkv-server new=target/release/bloomkv-server
#
# Each TESTS item is test:pipeline:value_bytes:keyspace (values over 1 KB run N/3 requests).
# A setup is name=command (the command may carry flags). Prints one CSV line per run:
# round,setup,test,pipeline,value_bytes,requests_per_second, then each setup's median per test.
# The setups' order rotates every round: every server stays up, so the one that runs after
# another competes with that one's flushes and compactions (with 4 KB writes a fixed order
# made the second build look 0.64x the first; swapped, 1.16x).
set -euo pipefail
ROUNDS=${ROUNDS:-5}
TESTS=${TESTS:-"get:16:100:1000000"}
N=${N:-300000}
[[ $# -ge 1 ]] || { echo "usage: $0 name=command ..." >&2; exit 64; }
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
declare -A PORT
i=0
for cfg in "$@"; do
  name=${cfg%%=*}; cmd=${cfg#*=}
  port=$((7200 + i)); i=$((i + 1)); PORT[$name]=$port
  # shellcheck disable=SC2086 # the command's flags split on purpose
  $cmd --dir "$WORK/$name" --port "$port" 2>"$WORK/$name.log" &
done
for cfg in "$@"; do
  name=${cfg%%=*}
  for _ in $(seq 1 200); do redis-cli -p "${PORT[$name]}" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-benchmark -p "${PORT[$name]}" -t set -n 1000000 -r 1000000 -d 100 -c 50 -P 64 -q >/dev/null
done
sleep 10 # the preload's flushes and compactions settle
echo "round,setup,test,pipeline,value_bytes,requests_per_second" | tee "$WORK/runs.csv"
SETUPS=("$@")
for r in $(seq 1 "$ROUNDS"); do
  k=$(( (r - 1) % ${#SETUPS[@]} ))
  order=("${SETUPS[@]:$k}" "${SETUPS[@]:0:$k}")
  for t in $TESTS; do
    IFS=: read -r test pipe bytes keys <<<"$t"
    for cfg in "${order[@]}"; do
      name=${cfg%%=*}
      n=$N; [[ $bytes -gt 1000 ]] && n=$((N / 3))
      rps=$(redis-benchmark -p "${PORT[$name]}" -t "$test" -n "$n" -r "$keys" -d "$bytes" -c 50 -P "$pipe" -q \
        | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
      echo "$r,$name,$test,$pipe,$bytes,$rps" | tee -a "$WORK/runs.csv"
    done
  done
done
echo "setup,test,pipeline,value_bytes,median"
tail -n +2 "$WORK/runs.csv" | cut -d, -f2-5 | sort -u | while IFS=, read -r name test pipe bytes; do
  grep ",$name,$test,$pipe,$bytes," "$WORK/runs.csv" | cut -d, -f6 | sort -n |
    awk -v k="$name,$test,$pipe,$bytes" '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%s,%.0f\n", k, m}'
done
