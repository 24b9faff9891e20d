#!/bin/bash
# A two-host parameter-server layout: one server shard on each of node1 and node2, and four
# workers, two per host, started by mpirun with the hostfile beside this script. Run it from the
# repository root on node1, with dtbench built at the same path on both hosts (a shared file
# system, or the same checkout) and passwordless ssh between them.
#
#   configs/cluster/parameter-servers-two-hosts.sh [sync|async]
set -euo pipefail
mode="${1:-sync}"
config=configs/lenet5-fashion-mnist.yaml
servers=node1:50051,node2:50051
token_file=runs/ps-token   # shared secret: servers refuse calls without it

mkdir -p runs
# Mode 0600: servers and workers refuse a token file that group or others can read.
[ -f "$token_file" ] || (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$token_file")

# One shard per host. Each builds the model from the same blueprint and seed as the workers.
for shard in 0 1; do
  host="node$((shard + 1))"
  ssh "$host" "cd $(pwd) && nohup build/dtbench ps --config $config --listen 0.0.0.0:50051 \
      --shard $shard --shards 2 --workers 4 --mode $mode --auth-token-file $token_file \
      --output runs/ps-servers > runs/ps-$shard.log 2>&1 &"
done

# The workers: rank and world size from mpirun; the servers' addresses from the blueprint key.
mpirun --hostfile configs/cluster/hostfile.example -np 4 \
  build/dtbench train --config "$config" --set transport="ps-$mode" --set ps.servers="$servers" \
    --set ps.auth_token_file="$token_file"
# The servers exit once every worker has said goodbye; their reports are in runs/ps-servers on
# each host.
