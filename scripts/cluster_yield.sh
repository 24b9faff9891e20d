#!/usr/bin/env bash
# Step time across an emulated cluster's hosts with the ranks launched by the cluster's own files,
# then told to yield explicitly (-x OMPI_MCA_mpi_yield_when_idle=1), then to poll (=0): LeNet-5,
# batch 42, 1 BLAS thread, one worker per host, ring and mpi, rounds alternated (a benchmark, not
# a test; as root, on a cluster made with `dtbench cluster up NAME --hosts N --dir DIR`).
#
#   scripts/cluster_yield.sh DIR [HOSTS] [ROUNDS] [STEPS]     (defaults: 3 hosts, 3 rounds, 300 steps)
#
# Prints each setting's median over the rounds of each run's median step. DTBENCH names the binary.
set -euo pipefail
dir="${1:?usage: cluster_yield.sh CLUSTER_DIR [HOSTS] [ROUNDS] [STEPS]}"
hosts="${2:-3}" rounds="${3:-3}" steps="${4:-300}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dtbench="${DTBENCH:-$root/build/dtbench}"
[[ -f "$dir/mpirun-args" ]] || { echo "cluster_yield.sh: no $dir/mpirun-args (cluster up ... --dir $dir)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for round in $(seq "$rounds"); do
  for transport in ring mpi; do
    for mode in files explicit polling; do
      extra=()
      [[ $mode == explicit ]] && extra=(-x OMPI_MCA_mpi_yield_when_idle=1)
      [[ $mode == polling ]] && extra=(-x OMPI_MCA_mpi_yield_when_idle=0)
      # shellcheck disable=SC2046  # mpirun-args is a list of arguments
      mpirun $(cat "$dir/mpirun-args") "${extra[@]}" -np "$hosts" "$dtbench" train --set model=lenet5 --set batch=42 \
        --set threads=1 --set transport="$transport" --set steps="$steps" --set eval.max_samples=64 \
        --set profile.trace_steps=0 --set output="$out/$mode-$transport-$round" >/dev/null
    done
  done
done
python3 - "$out" "$hosts" <<'PY'
import collections, glob, json, statistics, sys
out, hosts = sys.argv[1], sys.argv[2]
rows = collections.defaultdict(list)
for path in glob.glob(f"{out}/*/*/report.json"):
    mode, transport, _ = path[len(out) + 1:].split("/")[0].split("-")
    rows[(transport, mode)].append(1e3 * json.load(open(path))["epochs"][0]["phases"]["step"]["median_s"])
print(f"{hosts} hosts, LeNet-5 batch 42, 1 thread: median step ms (each round's run median)")
print(f"{'transport':<10} {'cluster files':>14} {'explicit =1':>12} {'polling =0':>11}")
for t in ("ring", "mpi"):
    print(f"{t:<10}" + "".join(f"{statistics.median(rows[(t, m)]):>{w}.1f}" for m, w in
                               (("files", 15), ("explicit", 13), ("polling", 12))))
PY
