# Sourced by the examples' run.sh scripts: starts a 3-node bloomkv-cluster on loopback.
#
#   start_cluster PORT [FLAGS...]
#
# Client ports PORT..PORT+2, Raft ports PORT+100..PORT+102; data and logs under $WORK; the
# binary built from $ROOT; each node's pid appended to the caller's $pids; FLAGS go to every
# node. Until a leader is elected writes answer -CLUSTERDOWN: the caller waits for one.
start_cluster() {
  local port=$1
  shift
  (cd "$ROOT" && cargo build --release -q -p bloomkv-cluster)
  local initial="1=127.0.0.1:$((port + 100)),2=127.0.0.1:$((port + 101)),3=127.0.0.1:$((port + 102))"
  for i in 1 2 3; do
    "$ROOT/target/release/bloomkv-cluster" --node-id "$i" --port $((port + i - 1)) \
      --dir "$WORK/node$i" --cluster-addr "127.0.0.1:$((port + 99 + i))" \
      --initial-cluster "$initial" --logfile "$WORK/node$i.log" "$@" &
    pids+=($!)
  done
}
