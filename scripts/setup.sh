#!/usr/bin/env bash
# Installs what is missing, then configures and builds dtbench in build/ (Release, Ninja).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
