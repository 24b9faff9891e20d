#!/usr/bin/env bash
# `bench allreduce` across an emulated cluster made for the purpose and removed after it (a
# benchmark, not a test; as root): HOSTS hosts of CORES_PER_HOST cores at LINK, one rank per host,
# its ranks told to yield as the validation's are, each size timed ITERS times after 3 warm-ups.
#
#   scripts/cluster_allreduce.sh HOSTS LINK [SIZES] [CORES_PER_HOST] [TRANSPORTS] [ITERS]
#       defaults: 248256,1MiB,4MiB,16MiB  0.5  ring  20
#
# Prints the bench's table (p50 us is the median). DTBENCH names the binary (default build/dtbench);
# CLUSTER the cluster's name (default ca); CLUSTER_UP_ARGS more options of `cluster up` (e.g.
# "--cpuset 0-1": every host on both cores).
set -euo pipefail
hosts="${1:?usage: cluster_allreduce.sh HOSTS LINK [SIZES] [CORES_PER_HOST] [TRANSPORTS] [ITERS]}"
link="${2:?usage: cluster_allreduce.sh HOSTS LINK [SIZES] [CORES_PER_HOST] [TRANSPORTS] [ITERS]}"
sizes="${3:-248256,1MiB,4MiB,16MiB}" cores="${4:-0.5}" transports="${5:-ring}" iters="${6:-20}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dtbench="$(realpath "${DTBENCH:-$root/build/dtbench}")"
name="${CLUSTER:-ca}"
dir="$(mktemp -d)"
trap '"$dtbench" cluster down "$name" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM  # through the EXIT trap
"$dtbench" cluster up "$name" --hosts "$hosts" --link "$link" --cores-per-host "$cores" ${CLUSTER_UP_ARGS:-} --dir "$dir/cluster" >/dev/null
"$dtbench" cluster status "$name" | grep -m1 "out:" || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck disable=SC2046  # mpirun-args is a list of arguments
mpirun $(cat "$dir/cluster/mpirun-args") -x OMPI_MCA_mpi_yield_when_idle=1 -np "$hosts" "$dtbench" bench allreduce \
  --transport "$transports" --sizes "$sizes" --iters "$iters" --warmup 3 2>&1 | grep -v "^\[" || true
