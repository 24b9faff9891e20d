#!/usr/bin/env bash
# Installs what is missing, then configures and builds dtbench in build/ (Release, Ninja).
#
#   scripts/setup.sh            everything: dtbench and the tests
#   scripts/setup.sh TARGET...  only these targets, e.g. `dtbench` for a first run (the tests are
#                               most of the build)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ $# -gt 0 ]; then
  cmake --build build --target "$@"
else
  cmake --build build
fi
