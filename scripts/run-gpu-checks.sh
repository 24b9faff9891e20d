#!/usr/bin/env bash
# The whole GPU path checked on a GPU machine in one go, through the kit of scripts/gpu-kit.sh
# (this script is copied beside it as OUT/run-gpu-checks.sh). Run it from the repository's root
# there (scripts/compare_step.sh and scripts/torch_step_bench.py come from the checkout): copy the
# kit's folder (say .gpukit, which git ignores) beside the checkout and run
# `bash .gpukit/run-gpu-checks.sh`.
#
# Writes under $OUT (default: the kit's folder/out), at most 8 files:
#   summary.md          one row per check: PASS / FAIL (exit status) / SKIP, seconds, what it showed
#   log.txt             every check's output
#   gpu_layers.xml, gpu_training.xml   the `gpu` tests' results (GoogleTest XML)
#   compare_step.txt    `bench step --device cuda` beside PyTorch on the same GPU, every model
#                       (fp32), then dtbench's step at precision tf32
#   allreduce_staged.json, allreduce_nccl.json   bench allreduce on device buffers
#   device_marks.txt    median steps with CUDA-event marks against a wait per phase, and the verdict
# and, last, compute-sanitizer's memcheck over the layer tests (into log.txt), where the machine has it.
#
# Each check has its own time limit; the whole script ends within about 8 minutes on an H100.
#
# --rehearse: the same checks on the CPU (--device cpu; the nccl checks skipped), on a machine
# without a GPU: tests the kit and this script before a GPU run, which is rare.
# --budget-s S: the whole run ends within S seconds (default 540): each check's limit is cut to
# what is left, and a check with less than 15 s left is skipped, saying so, so that the summary
# is written even where a command may run for at most 10 minutes.
set -uo pipefail
device=cuda
budget=540
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rehearse) device=cpu; shift ;;
    --budget-s) budget="$2"; shift 2 ;;
    *) echo "run-gpu-checks.sh: unknown argument $1 (--rehearse, --budget-s S)" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(pwd)"
out="${OUT:-$here/out}"
mkdir -p "$out"
summary="$out/summary.md"
log="$out/log.txt"
: >"$log"
started=$(date +%s)
deadline=$((started + budget))

kit="$here/kit"
if [[ ! -x $kit/bin/run ]]; then
  [[ -f $here/kit.tar.xz ]] || { echo "run-gpu-checks.sh: neither $kit nor $here/kit.tar.xz" >&2; exit 1; }
  kit="${TMPDIR:-/tmp}/dtbench-gpu-kit/kit"
  rm -rf "$(dirname "$kit")" && mkdir -p "$(dirname "$kit")"
  tar -C "$(dirname "$kit")" -xJf "$here/kit.tar.xz" || { echo "run-gpu-checks.sh: cannot unpack the kit" >&2; exit 1; }
fi
dtbench="$kit/bin/dtbench"
mpirun="$kit/bin/mpirun"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The test binaries start dtbench and mpirun by these names instead of the paths they were built with.
export DTBENCH_TEST_BINARY="$dtbench" DTBENCH_TEST_MPIEXEC="$mpirun"
DTBENCH_KIT_CUDA_PATH="$("$kit/bin/cuda-library-path" "$kit")"
export DTBENCH_KIT_CUDA_PATH
# PyTorch's interpreter: the GPU machine's python3 holds it (TORCH_PYTHON names another).
torch_python="${TORCH_PYTHON:-python3}"

{
  echo "# dtbench GPU checks"
  echo
  echo "- kit: $(sed -n 2,3p "$kit/MANIFEST" | tr '\n' ' ')"
  gpu_names="$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | tr '\n' ';')"
  echo "- GPU: ${gpu_names:-none found (nvidia-smi)}"
  echo "- CPU: $(lscpu 2>/dev/null | awk -F: '/Model name/ { gsub(/^ +/, "", $2); print $2; exit }'), $(nproc) cores"
  echo "- CUDA libraries from: ${DTBENCH_KIT_CUDA_PATH:-none found}"
  echo "- PyTorch: $torch_python ($("$torch_python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1))"
  echo
  echo "| check | result | seconds | shows |"
  echo "|---|---|---|---|"
} >"$summary"

# check NAME LIMIT_S SHOWS COMMAND...: runs COMMAND with a time limit, its output into the log.
check() {
  local name="$1" limit="$2" shows="$3"
  shift 3
  local begin=$(date +%s) status result
  local left=$((deadline - begin))
  if [[ $left -lt 15 ]]; then
    echo "| $name | SKIP (the run's $budget s are spent) | | $shows |" >>"$summary"
    return 125
  fi
  [[ $limit -le $left ]] || limit=$left
  echo "=== $name: $*" >>"$log"
  timeout -k 10 "$limit" "$@" >>"$log" 2>&1
  status=$?
  case $status in
    0) result=PASS ;;
    124|137) result="FAIL (time limit $limit s)" ;;
    *) result="FAIL (exit $status)" ;;
  esac
  echo "=== $name: $result" >>"$log"
  echo "| $name | $result | $(( $(date +%s) - begin )) | $shows |" >>"$summary"
  return "$status"
}

check "kit starts" 30 "dtbench runs from the kit's loader and libraries" "$dtbench" --version
if ! check "device reachable" 60 "one step of the MLP on --device $device" \
     "$dtbench" bench step --device $device --model mlp --batch 2 --steps 1 --warmup 0; then
  echo "| (the rest) | SKIP | | no step ran on the device: see log.txt |" >>"$summary"
  cat "$summary"
  exit 1
fi

check "gpu tests: layers" 150 "every cuDNN/cuBLAS twin, device optimizer and the arena's copies against the CPU" \
  "$kit/bin/test_gpu_layers" --gtest_filter=-Gpu.AModelStepMatchesTheCpuStep --gtest_output="xml:$out/gpu_layers.xml"
# The model step in 5 processes of its own (a one-off mismatch came in the first run on a fresh
# machine): on a mismatch the test prints each parameter's gradient error and the cuDNN algorithms
# chosen, and how many of the 5 failed (log.txt).
model_step_runs() {
  local run failed=0
  for run in 1 2 3 4 5; do
    echo "--- model step, run $run of 5"
    "$kit/bin/test_gpu_layers" --gtest_filter=Gpu.AModelStepMatchesTheCpuStep || failed=$((failed + 1))
  done
  echo "model step: $failed of 5 runs failed"
  [[ $failed == 0 ]]
}
export -f model_step_runs
export kit
check "gpu tests: model step x5" 150 "each model's training step against the CPU's, 5 runs (log.txt: per-parameter errors, cuDNN's choices)" \
  bash -c model_step_runs
check "gpu tests: training" 200 "LeNet-5 on the GPU to the CPU's accuracy; nccl and the staged ring against the CPU" \
  "$kit/bin/test_gpu_training" --gtest_output="xml:$out/gpu_training.xml"

compare_models="mlp lenet5 alexnet vgg16 resnet18 resnet50" compare_steps=20
[[ $device == cpu ]] && compare_models="mlp lenet5" compare_steps=3
check "bench step vs PyTorch" 240 "step ms of dtbench and PyTorch on the GPU, every model (compare_step.txt)" \
  env DTBENCH="$dtbench" TORCH_PYTHON="$torch_python" bash -c \
  "set -o pipefail; '$repo/scripts/compare_step.sh' --device $device --steps $compare_steps --warmup 3 $compare_models | tee '$out/compare_step.txt'"
# Precision tf32 (TF32 tensor cores) on both engines: dtbench's and PyTorch matched at tf32, PyTorch's
# defaults as before (TF32 convolutions, fp32 matmuls), added to compare_step.txt beside the fp32 table.
if [[ $device == cuda ]]; then
  check "bench step vs PyTorch, tf32" 200 "step ms of dtbench and PyTorch matched, both at TF32 (compare_step.txt)" \
    env DTBENCH="$dtbench" TORCH_PYTHON="$torch_python" bash -c \
    "set -o pipefail; { echo; '$repo/scripts/compare_step.sh' --device cuda --precision tf32 --steps $compare_steps --warmup 3 lenet5 vgg16 resnet18 resnet50; } | tee -a '$out/compare_step.txt'"
else
  echo "| bench step vs PyTorch, tf32 | SKIP | | rehearsal on the CPU, which has fp32 only |" >>"$summary"
fi

check "staged ring, 2 ranks on 1 GPU" 90 "ring and MPI_Allreduce on device buffers through the host, every element checked" \
  "$mpirun" --oversubscribe -np 2 "$dtbench" bench allreduce --device $device --transport ring,mpi --sizes 4B:64MiB \
  --iters 5 --json "$out/allreduce_staged.json"
[[ $device == cpu ]] && echo "| nccl | SKIP | | rehearsal on the CPU |" >>"$summary"
[[ $device == cpu ]] || check "nccl, 1 rank" 90 "nccl on device buffers, every element checked" \
  "$mpirun" -np 1 "$dtbench" bench allreduce --device cuda --transport nccl --sizes 4B:256MiB --iters 5 \
  --json "$out/allreduce_nccl.json"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [[ $device == cuda && $gpus -lt 2 ]]; then
  # NCCL refuses two ranks on one GPU: dtbench must say so, clearly, and fail.
  check "nccl, 2 ranks on 1 GPU refused" 60 "dtbench's error names the shared GPU (log.txt)" \
    bash -c "said=\$('$mpirun' --oversubscribe -np 2 '$dtbench' bench allreduce --device cuda --transport nccl \
      --sizes 1MiB --iters 1 2>&1); status=\$?; echo \"\$said\"; [[ \$status != 0 && \$said == *'both use GPU'* ]]"
fi

# CUDA-event phase marks against waiting for the GPU at every phase boundary: same run otherwise,
# the two settings alternating for several rounds (each round in the other order), each run's
# median step compared (its steady state: the first steps' cold caches are a few of its 120 steps
# and do not move it). scripts/device_marks_verdict.py fails the check when the marks' median step
# is more than marks_threshold_pct slower than the waits', or when two rounds of one setting differ
# by more than that (then the check could not tell).
data="${TMPDIR:-/tmp}/dtbench-gpu-data"
check "synthetic CIFAR-10" 60 "a data set for the runs below" \
  "$dtbench" data synth --format cifar10 --out "$data" --train 8192 --test 1024
# marks_run MODEL MARKS ROUND: one short run; prints its median and mean step, images/s and the
# autotune before it (start-up) from report.json: a mean far above the median is a cold step timed.
marks_run() {
  local runs="${TMPDIR:-/tmp}/dtbench-marks/$1-$2-$3"
  rm -rf "$runs"
  "$dtbench" train --set model="$1" --set device="$device" --set dataset.format=cifar10 --set dataset.path="$data" \
    --set batch=64 --set steps="$marks_steps" --set profile.device_marks="$2" --set output="$runs" >/dev/null || return 1
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); e = r["epochs"][-1]; step = e["phases"]["step"]
print("%-10s device_marks=%-5s round %s: median step %8.3f ms, mean %8.3f ms, %9.1f images/s, autotune %.2f s" % (
      *sys.argv[2:5], 1e3 * step["median_s"], 1e3 * step["mean_s"], e["images_per_second"], r["autotune_seconds"]))' \
    "$(ls -d "$runs"/*/ | head -1)report.json" "$1" "$2" "$3"
}
# marks_rounds: every model, round by round, the settings alternating in order.
marks_rounds() {
  local model round order marks
  for model in $marks_models; do
    for round in $(seq 1 "$marks_round_count"); do
      if (( round % 2 )); then order="true false"; else order="false true"; fi
      for marks in $order; do marks_run "$model" "$marks" "$round" || return 1; done
    done
  done
}
# On the CPU the setting changes nothing (no device marks) and each run is 4 steps on a machine that
# other work shares (CI runs two tests at once): the rehearsal runs the same code and prints the
# figures, but does not judge them (--rehearsal) — a timing verdict there would judge the neighbours.
marks_steps=120 marks_models="lenet5 resnet18" marks_round_count=3 marks_threshold_pct=5 marks_judging=""
[[ $device == cpu ]] && marks_steps=4 marks_models=lenet5 marks_round_count=2 marks_judging="--rehearsal"
export -f marks_run marks_rounds
export dtbench data device marks_steps marks_models marks_round_count
marks_shows="median step with CUDA-event marks within ${marks_threshold_pct}% of a wait per phase, $marks_round_count alternating rounds (device_marks.txt)"
[[ -n $marks_judging ]] && marks_shows="both settings run, $marks_round_count alternating rounds; timing not judged on a shared CPU (device_marks.txt)"
check "device marks overhead" 150 "$marks_shows" \
  bash -c "set -o pipefail; marks_rounds | tee '$out/device_marks.txt' && \
           python3 '$repo/scripts/device_marks_verdict.py' --threshold-pct $marks_threshold_pct $marks_judging '$out/device_marks.txt' \
             | tee -a '$out/device_marks.txt'"

# compute-sanitizer's memcheck over the layer tests with what is left of the budget: a memory error
# (a host pointer handed to a kernel, an access past a buffer) that a test's numbers may not show.
sanitizer="$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)"
if [[ $device == cpu ]]; then
  echo "| memcheck | SKIP | | rehearsal on the CPU |" >>"$summary"
elif [[ -z $sanitizer ]]; then
  echo "| memcheck | SKIP | | no compute-sanitizer on this machine |" >>"$summary"
else
  check "memcheck" 150 "compute-sanitizer memcheck finds no memory error in the twins, the arena's copies and the optimizers (log.txt)" \
    "$sanitizer" --tool memcheck --target-processes all --error-exitcode 3 "$kit/bin/test_gpu_layers" \
    --gtest_filter='Gpu.EveryTwinMatchesItsCpuLayer:Gpu.MirroredMemoryMovesExactlyTheRangeAsked:Gpu.DeviceOptimizersMatchTheCpuOnes'
fi

echo >>"$summary"
echo "Whole run: $(( $(date +%s) - started )) s." >>"$summary"
cat "$summary"
! grep -q -e '| FAIL' -e 'are spent)' "$summary"
