#!/usr/bin/env bash
# docs/speed.md's table against PyTorch and the wire, on the machine at hand, in one command (a
# benchmark, not a test; as root, for the 2-host row's network namespaces):
#
#   scripts/speed_table.sh [OUT]      (OUT default /tmp/dtbench-speed-table; DTBENCH, TORCH_PYTHON)
#
# It runs, one after the other, on a machine left alone:
#   1. `dtbench bench step --explain` of ResNet-18 (CIFAR input, batch 32, 2 threads): which
#      algorithm each convolution got, and the times it was chosen by;
#   2. scripts/compare_step.sh --input 3x32x32 --threads 1, then 2, lenet5 resnet18 (batch 64):
#      dtbench beside PyTorch as its users run it (defaults) and matched to dtbench;
#   3. `dtbench bench ps --workers 2 --sizes 64MiB`, three times: a round of two workers against
#      a plain TCP round of the same size in the same minute (%tcp);
#   4. configs/sweeps/speed-2hosts.yaml, 5 repetitions: ResNet-18 across 2 emulated hosts of a core
#      each at 1 Gbit, dtbench's ring beside PyTorch DDP (defaults and matched);
# and prints the table with the machine named (CPU model, vendor, AVX-512 or not) and the aims of
# the speed work beside each ratio. Everything each step printed stays in OUT. About 12 minutes
# on a 2-core machine.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dtbench="$(realpath "${DTBENCH:-$root/build/dtbench}")"
out="$(realpath -m "${1:-/tmp/dtbench-speed-table}")"
[[ -x "$dtbench" ]] || { echo "speed_table.sh: no dtbench at $dtbench (set DTBENCH)" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "speed_table.sh: the 2-host row needs root (network namespaces)" >&2; exit 1; }
mkdir -p "$out"
cd "$root"
export DTBENCH="$dtbench"

step() { echo "$(date -u +%T) $*" >&2; }

{
  lscpu | sed -n 's/^Model name: *//p' | head -1
  lscpu | sed -n 's/^Vendor ID: *//p' | head -1
  nproc
  if grep -qw avx512f /proc/cpuinfo; then echo "AVX-512"; else echo "no AVX-512"; fi
} > "$out/machine.txt"

step "ResNet-18's convolutions (bench step --explain)"
"$dtbench" bench step --model resnet18 --input 3x32x32 --batch 32 --threads 2 --steps 3 --warmup 1 --explain \
  > "$out/explain.txt" 2>&1
for threads in 1 2; do
  step "scripts/compare_step.sh --input 3x32x32 --threads $threads lenet5 resnet18"
  scripts/compare_step.sh --input 3x32x32 --threads "$threads" lenet5 resnet18 > "$out/step-$threads.txt"
done
for round in 1 2 3; do
  step "bench ps --workers 2 --sizes 64MiB, round $round of 3"
  "$dtbench" bench ps --workers 2 --sizes 64MiB --iters 5 --json "$out/ps-$round.json" > "$out/ps-$round.txt" 2>&1
done
step "the 2-host sweep (configs/sweeps/speed-2hosts.yaml, 5 repetitions)"
rm -rf "$out/sweep"
"$dtbench" sweep configs/sweeps/speed-2hosts.yaml --repetitions 5 --output "$out/sweep" > "$out/sweep.txt" 2>&1

python3 - "$out" <<'EOF'
import json, pathlib, statistics, sys

out = pathlib.Path(sys.argv[1])
model, vendor, cores, avx512 = out.joinpath("machine.txt").read_text().splitlines()
print(f"{model} ({vendor}, {cores} cores, {avx512}), {__import__('datetime').date.today()}")
print()
print("| | dtbench images/s | PyTorch defaults | PyTorch matched | ratio: defaults, matched | aim |")
print("|---|---|---|---|---|---|")
aims = {"lenet5": "≥ 2.0", "resnet18": "≥ 1.2"}
names = {"lenet5": "LeNet-5", "resnet18": "ResNet-18"}
for threads in (1, 2):
    lines = out.joinpath(f"step-{threads}.txt").read_text().splitlines()
    batch = int(lines[0].split()[1].rstrip(","))
    for line in lines:
        cells = line.split()
        if cells and cells[0] in names:
            ms = [float(c) for c in cells[1:4]]
            rate = [f"{batch * 1000 / t:,.1f}" for t in ms]
            print(f"| {names[cells[0]]}, batch {batch}, {threads} thread{'s' if threads > 1 else ''} | {rate[0]} | "
                  f"{rate[1]} | {rate[2]} | {cells[4]}×, {cells[5]}× | {aims[cells[0]]} |")

sweep = json.loads(next(out.joinpath("sweep").glob("*/results.json")).read_text())
step = {c["values"]["configuration"]: c["stats"]["step_ms"] for c in sweep["configurations"]}
p_value = {c["configuration"].rsplit("=", 1)[1]: c["p_value"] for c in sweep["comparisons"]}
ring = step["ring"]["median"]
print()
print(f"ResNet-18 across 2 emulated hosts (a core each, 1 Gbit, batch 42; {step['ring']['n']} runs each, "
      f"median step): dtbench's ring {ring:,.1f} ms; PyTorch DDP "
      + ", ".join(f"{label} {step['pytorch-ddp-' + label]['median']:,.1f} ms "
                  f"({step['pytorch-ddp-' + label]['median'] / ring:.2f}×, Mann-Whitney p = {p_value['pytorch-ddp-' + label]:.3f})"
                  for label in ("defaults", "matched"))
      + " (aim ≥ 1.0×)")

rows = [json.loads(out.joinpath(f"ps-{r}.json").read_text())["rows"][0] for r in (1, 2, 3)]
shares = [100 * row["gbps_over_tcp"] for row in rows]
print()
print(f"`bench ps --workers 2 --sizes 64MiB`: a round of two workers at "
      + ", ".join(f"{s:.0f} %" for s in shares)
      + f" of the same minute's plain TCP round (median {statistics.median(shares):.0f} %; aim ≥ 50 %)")
print()
print("Each ResNet-18 convolution's algorithm (bench step --explain, batch 32, 2 threads):")
for line in out.joinpath("explain.txt").read_text().splitlines():
    if line.startswith("  "):
        print("   ", line.strip().split(";")[0])
EOF
