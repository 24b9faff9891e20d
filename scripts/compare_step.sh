#!/usr/bin/env bash
# Side-by-side training-step time of dtbench and PyTorch (a benchmark, not a test).
#
#   scripts/compare_step.sh [--batch B] [--threads T] [--steps S] [--warmup W] [--device cpu|cuda]
#                           [--input CxHxW] [--precision fp32|tf32] [MODEL ...]
#
# For each model (default: mlp lenet5 resnet18) runs `dtbench bench step` and
# scripts/torch_step_bench.py under both of pytorch/parity.py's profiles — defaults (PyTorch as its
# users run it) and matched (dtbench's thread pools, zeroing outside the update, fp32) — one model
# per process (so that peak RSS is that model's own), alternating between the three, and prints
# step ms of each, the ratios torch/dtbench (>1: dtbench is faster) and each peak RSS, under a
# header that states each profile's settings. Defaults: batch 64, threads = nproc, 20 timed steps after 3
# warm-up, device cpu (cuda: both on the first GPU), each model's own input (`dtbench models`;
# --input 3x32x32 gives every model that shape, e.g. LeNet-5 on CIFAR). DTBENCH names the dtbench
# binary (default build/dtbench); TORCH_PYTHON the interpreter with torch (default
# /usr/bin/python3, Debian's python3-torch). --precision (cuda only for tf32) sets dtbench's and the
# matched profile's precision; the defaults profile keeps PyTorch's own (TF32 convolutions on a GPU).
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
precision=fp32
models=()

usage() { sed -n '2,18s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --batch) batch="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --device) device="$2"; shift 2 ;;
    --input) input="$2"; shift 2 ;;
    --precision) precision="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "compare_step.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
[[ ${#models[@]} -gt 0 ]] || models=(mlp lenet5 resnet18)
case "$precision" in
  fp32) ;;
  tf32) [[ $device == cuda ]] || { echo "compare_step.sh: --precision tf32 needs --device cuda (the CPU computes in fp32 only)" >&2; exit 2; } ;;
  *) echo "compare_step.sh: --precision $precision: expected fp32 or tf32" >&2; exit 2 ;;
esac

[[ -x "$dtbench" ]] || { echo "compare_step.sh: no dtbench at $dtbench (set DTBENCH)" >&2; exit 1; }
"$python" -c 'import torch' 2>/dev/null ||
  { echo "compare_step.sh: $python has no torch (set TORCH_PYTHON)" >&2; exit 1; }

# The row of MODEL in a bench table: "step_ms peak_mib" (columns 6 and 8).
row() { awk -v m="$1" '$1 == m { print $6, $8; found = 1 } END { exit !found }'; }

profiles=(defaults matched)
echo "batch $batch, $threads threads, device $device, input ${input:-as listed by dtbench models}, median of $steps steps after $warmup warm-up"
echo "dtbench: its engine, $threads threads, $precision"
# Each profile's settings, as torch_step_bench.py states them (a line of its header).
for profile in "${profiles[@]}"; do
  "$python" -c 'import sys; sys.path.insert(0, sys.argv[1]); import parity
p = sys.argv[4] if sys.argv[2] == "matched" else ""
print(parity.settings(sys.argv[2], int(sys.argv[3]), p, sys.argv[5]).line())' "$root/pytorch" "$profile" "$threads" \
    "$precision" "$device"
done
printf '%-10s %10s %12s %12s %10s %10s %11s %12s %12s\n' model "dtbench ms" "defaults ms" "matched ms" \
  "defaults/d" "matched/d" "dtbench MiB" "defaults MiB" "matched MiB"
for model in "${models[@]}"; do
  common=(--model "$model" --batch "$batch" --threads "$threads" --steps "$steps" --warmup "$warmup"
          --device "$device")
  [[ -z "$input" ]] || common+=(--input "$input")
  d_out="$("$dtbench" bench step "${common[@]}" --precision "$precision")" ||
    { echo "compare_step.sh: dtbench failed on $model" >&2; exit 1; }
  read -r d_ms d_mib < <(row "$model" <<<"$d_out")
  t_ms=() t_mib=() ratios=()
  for profile in "${profiles[@]}"; do
    matched_precision=()
    [[ $profile == matched ]] && matched_precision=(--precision "$precision")
    t_out="$("$python" "$root/scripts/torch_step_bench.py" "${common[@]}" --profile "$profile" "${matched_precision[@]}")" ||
      { echo "compare_step.sh: torch_step_bench.py --profile $profile failed on $model" >&2; exit 1; }
    read -r ms mib < <(row "$model" <<<"$t_out")
    t_ms+=("$ms") t_mib+=("$mib")
    ratios+=("$(awk -v t="$ms" -v d="$d_ms" 'BEGIN { printf "%.2f", t / d }')")
  done
  printf '%-10s %10s %12s %12s %10s %10s %11s %12s %12s\n' "$model" "$d_ms" "${t_ms[0]}" "${t_ms[1]}" \
    "${ratios[0]}" "${ratios[1]}" "$d_mib" "${t_mib[0]}" "${t_mib[1]}"
done
