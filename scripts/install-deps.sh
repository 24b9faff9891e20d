#!/usr/bin/env bash
# Installs the Debian packages dtbench builds, tests and trains with. Idempotent: when everything
# is already there it asks apt nothing and prints nothing.
#
#   scripts/install-deps.sh          everything: building, training, the tests and the comparisons
#   scripts/install-deps.sh dtbench  only what building and training with dtbench needs (the first
#                                    command of the README: PyTorch and GoogleTest are most of the
#                                    download and none of the first run)
#   scripts/install-deps.sh slurm    only Slurm and MUNGE, for `dtbench cluster up --slurm` (nothing
#                                    else needs them)
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config git
  libopenblas-dev zlib1g-dev
  libopenmpi-dev openmpi-bin
  libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc
  libspdlog-dev libfmt-dev libcli11-dev libyaml-cpp-dev nlohmann-json3-dev
  dataset-fashion-mnist  # the real Fashion-MNIST, IDX files under /usr/share/datasets/fashion-mnist
)
if [ "${1:-all}" = slurm ]; then
  packages=(munge slurmctld slurmd slurm-client)
elif [ "${1:-all}" != dtbench ]; then
  packages+=(
    libgtest-dev
    python3  # scripts/check_docs.py, the docs_links test
    python3-torch  # the PyTorch engine (pytorch/worker.py) and comparisons against it
    xz-utils  # scripts/gpu-kit.sh packs the GPU kit
  )
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
