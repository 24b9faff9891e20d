#!/usr/bin/env bash
# Installs what is missing, then configures and builds dtbench in build/ (Release, Ninja).
#
#   scripts/setup.sh            everything: dtbench and the tests
#   scripts/setup.sh TARGET...  only these targets, e.g. `dtbench` for a first run (the tests are
#                               most of the build; their packages are not installed either)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then
  scripts/install-deps.sh dtbench
  # Configured without the tests when GoogleTest is missing; a later `scripts/setup.sh` adds them.
  testing=ON
  dpkg-query -W -f='${Status}' libgtest-dev 2>/dev/null | grep -q "install ok installed" || testing=OFF
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=$testing >/dev/null
  cmake --build build --target "$@"
else
  scripts/install-deps.sh
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON >/dev/null
  cmake --build build
fi
