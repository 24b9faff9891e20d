#!/usr/bin/env bash
# Renders a report.html to a PNG with headless Chromium, to look at its charts where there is no
# desktop (a build machine, a cluster's login node):
#
#   scripts/screenshot_report.sh runs/<run>/report.html report.png [WIDTH,HEIGHT]
#
# The page is opened as a file and needs no network; the flags keep Chromium from reaching out
# (updates, sync, field trials) and from touching the user's profile. Chromium is not a dependency
# of dtbench and scripts/install-deps.sh does not install it (Debian: apt-get install chromium).
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 REPORT_HTML OUT_PNG [WIDTH,HEIGHT (default 1200,2400)]" >&2
  exit 2
fi
html=$(realpath "$1")
out=$(realpath -m "$2")
size=${3:-1200,2400}

browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "$0: no chromium found (Debian: apt-get install chromium)" >&2
  exit 1
fi

profile=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$profile" "$log"' EXIT
rm -f "$out"
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --window-size="$size" --screenshot="$out" "file://$html" >"$log" 2>&1 || true
if [ ! -s "$out" ]; then
  echo "$0: chromium wrote no screenshot; its output:" >&2
  cat "$log" >&2
  exit 1
fi
echo "$out"
