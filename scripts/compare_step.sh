#!/usr/bin/env bash
# Side-by-side training-step time of dtbench and PyTorch (a benchmark, not a test).
#
#   scripts/compare_step.sh [--batch B] [--threads T] [--steps S] [--warmup W] [--device cpu|cuda]
#                           [--input CxHxW] [MODEL ...]
#
# For each model (default: mlp lenet5 resnet18) runs `dtbench bench step` and
# scripts/torch_step_bench.py, one model per process (so that peak RSS is that model's own),
# alternating between the two, and prints step ms of each, the ratio torch/dtbench (>1: dtbench
# is faster) and each peak RSS. Defaults: batch 64, threads = nproc, 20 timed steps after 3
# warm-up, device cpu (cuda: both on the first GPU), each model's own input (`dtbench models`;
# --input 3x32x32 gives every model that shape, e.g. LeNet-5 on CIFAR). DTBENCH names the dtbench
# binary (default build/dtbench); TORCH_PYTHON the interpreter with torch (default
# /usr/bin/python3, Debian's python3-torch).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dtbench="${DTBENCH:-$root/build/dtbench}"
python="${TORCH_PYTHON:-/usr/bin/python3}"
batch=64
threads="$(nproc)"
steps=20
warmup=3
device=cpu
input=""
models=()

usage() { sed -n '2,14s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --batch) batch="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --device) device="$2"; shift 2 ;;
    --input) input="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "compare_step.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
[[ ${#models[@]} -gt 0 ]] || models=(mlp lenet5 resnet18)

[[ -x "$dtbench" ]] || { echo "compare_step.sh: no dtbench at $dtbench (set DTBENCH)" >&2; exit 1; }
"$python" -c 'import torch' 2>/dev/null ||
  { echo "compare_step.sh: $python has no torch (set TORCH_PYTHON)" >&2; exit 1; }

# The row of MODEL in a bench table: "step_ms peak_mib" (columns 6 and 8).
row() { awk -v m="$1" '$1 == m { print $6, $8; found = 1 } END { exit !found }'; }

echo "batch $batch, $threads threads, device $device, input ${input:-as listed by dtbench models}, median of $steps steps after $warmup warm-up"
printf '%-10s %16s %14s %12s %14s %12s\n' model "dtbench step ms" "torch step ms" "torch/dtb" \
  "dtbench MiB" "torch MiB"
for model in "${models[@]}"; do
  common=(--model "$model" --batch "$batch" --threads "$threads" --steps "$steps" --warmup "$warmup"
          --device "$device")
  [[ -z "$input" ]] || common+=(--input "$input")
  d_out="$("$dtbench" bench step "${common[@]}")" ||
    { echo "compare_step.sh: dtbench failed on $model" >&2; exit 1; }
  t_out="$("$python" "$root/scripts/torch_step_bench.py" "${common[@]}")" ||
    { echo "compare_step.sh: torch_step_bench.py failed on $model" >&2; exit 1; }
  read -r d_ms d_mib < <(row "$model" <<<"$d_out")
  read -r t_ms t_mib < <(row "$model" <<<"$t_out")
  ratio="$(awk -v t="$t_ms" -v d="$d_ms" 'BEGIN { printf "%.2f", t / d }')"
  printf '%-10s %16s %14s %12s %14s %12s\n' "$model" "$d_ms" "$t_ms" "$ratio" "$d_mib" "$t_mib"
done
