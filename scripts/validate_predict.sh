#!/usr/bin/env bash
# Measures what `dtbench predict` is checked against, on the emulated cluster (as root): for each
# host count and link rate it first brings a cluster up and fits the transports'
# constants there (`bench allreduce` across every host, at doubling sizes and the models' buckets;
# `bench ps` of one worker against a server on another host, at the three models' payloads; `bench
# ps` of a worker on every host against a shard beside each, sync and async); it trains each model
# two short epochs with each transport at every host count in turn, one worker per host and, for
# the parameter servers, one shard beside each worker (the study's layout), each run on a cluster
# made for it. The cluster goes down after each run, also on failure or Ctrl-C. Afterwards run
# scripts/validate_predict_compare.py OUT to set predicted against measured.
#
#   scripts/validate_predict.sh OUT [HOSTS="2 3"] [LINKS="1gbit 10gbit"] [MODELS="lenet5 alexnet resnet18"] \
#       [CORES_PER_HOST]
#
# CORES_PER_HOST (e.g. 0.5) gives every host that CPU quota at every host count, so compute per
# host stays the same as N grows, as on a real cluster: what changes with N is then what a cluster
# of N hosts changes (the held-out validation, fit on 2 and 3 hosts, predict 4). Left out, the
# machine's cores are split among the hosts (1, 0.67, 0.5 core at 2, 3, 4 hosts on 2 cores).
# CLUSTER_PREFIX (default pred) names the clusters, so two validations on one machine do not meet.
# TRAIN_SAMPLES (default 96) sizes AlexNet's and ResNet-18's epoch (192: 12, 8 and 6 steps at 2, 3, 4);
# EPOCH_STEPS instead gives their epoch that many steps at every host count (a data set of hosts x
# batch x EPOCH_STEPS samples each), so the runs at 4 hosts are timed over as many steps as at 2.
# TRAIN_LR (default 0.001) is every run's SGD learning rate.
# LENET5_SAMPLES (default 53760: 640, 426 and 320 steps at 2, 3, 4) sizes LeNet-5's.
# TRACE_STEPS (default 0) writes each rank's timeline of that many steps an epoch into its run
# (trace-<rank>.json, the profiler's `profile.trace_steps`), to see when ranks and buckets meet.
# REPEATS (default 1) trains every run that many times, in rounds over all of them, each on its
# cluster made afresh (runs/MODEL-TRANSPORT-H-LINK, then ...-r2, ...): the compare script fits on every repeat and sets
# each prediction against their mean, beside how far the repeats lie apart.
# TRANSPORTS (default "ring mpi ps-sync ps-async ddp", ddp being PyTorch DDP, engine pytorch) narrows the runs; CLUSTER_CPUSET (a cpu list, e.g.
# 0-1) puts every host on those cores, each still held to its quota (`cluster up --cpuset`);
# CLUSTER_SPREAD=1 gives hosts of less than a core one core each where the cores allow (`cluster up --spread`).
# PS_PLACEMENT (balanced or hash) sets the parameter servers' and their workers' `ps.placement`.
# HOST_CPU=1 samples the CPU of every process in the hosts' cgroups into OUT/logs/host-cpu.txt
# while the script runs; `scripts/host_cpu.py report OUT` then gives each run's CPU a step per
# host, worker and server apart, and the host's share of its quota.
#
# Layout of OUT: fit/ar-H-LINK.json, fit/ps-H-LINK.json, fit/psworld-{sync,async}-H-LINK.json (bench
# outputs), runs/MODEL-TRANSPORT-H-LINK[-rK]/
# (run directories), logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: $0 OUT [HOSTS] [LINKS] [MODELS]}")
hosts_list=${2:-"2 3"}
links=${3:-"1gbit 10gbit"}
models=${4:-"lenet5 alexnet resnet18"}
cores_per_host=${5:-}
prefix=${CLUSTER_PREFIX:-pred}
train_samples=${TRAIN_SAMPLES:-96}  # AlexNet's and ResNet-18's epoch; more steps, less noise, longer runs
lenet5_samples=${LENET5_SAMPLES:-53760}
epoch_steps=${EPOCH_STEPS:-}
if [ -n "$epoch_steps" ] && ! [[ $epoch_steps =~ ^[1-9][0-9]*$ ]]; then
  echo "EPOCH_STEPS=$epoch_steps: expected a positive whole number of steps an epoch" >&2; exit 2
fi
# The step's time does not depend on the learning rate, but a run that diverges ends: at the
# study's 0.01, AlexNet's ps-async (gradients N-1 versions stale, momentum 0.9) reached a NaN loss
# by step 7 of 192 samples on random images.
train_lr=${TRAIN_LR:-0.001}
transports=${TRANSPORTS:-"ring mpi ps-sync ps-async ddp"}
dtbench=$(realpath "${DTBENCH:-build/dtbench}")  # a copy keeps a rebuild from changing it mid-run
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Waiting ranks yield their core, else every message between the emulated hosts waits a scheduler
# tick for the softirq that delivers it (docs/cluster.md, "Yielding ranks where hosts share a
# core"); on whole-core hosts too, where it is a little faster.
yield_when_idle=(-x OMPI_MCA_mpi_yield_when_idle=1)
mkdir -p "$out"/{fit,runs,logs,psbench}

# AlexNet and ResNet-18 train at batch 8 (not the study's 42), which keeps their compute short on 2
# cores; the gradient, which is what the transports move, is the same. LeNet-5 keeps the study's 42:
# at 8 its compute is a millisecond, and a step would time little but the emulated hosts taking
# turns on the machine's two cores. Two epochs, the first a warm-up the model leaves out: 96
# samples are 6 steps of 2 x 8, 4 of 3 x 8, 3 of 4 x 8; LeNet-5's step takes a few ms, so it gets
# 53760 samples (640 steps of 2 x 42, 426 of 3, 320 of 4), a few seconds a run: at 13440, a machine
# slower for a second or two moved a run's repeats 8.1 % apart (median; 35.5 % at most), at 53760
# 2.9 % (11.4 %); at 3360, one step held 30-50 ms moved a run's mean by up to 30 % (docs/predict.md).
[ -d "$out/data" ] || "$dtbench" data synth --format cifar10 --out "$out/data" --train "$train_samples" --test 16 >/dev/null
[ -d "$out/data-lenet5" ] || "$dtbench" data synth --format cifar10 --out "$out/data-lenet5" --train "$lenet5_samples" --test 16 >/dev/null
batch_for() { if [ "$1" = lenet5 ]; then echo 42; else echo 8; fi; }
# bench ps rounds per payload: LeNet-5's take milliseconds, and five of them are mostly noise.
ps_iters_for() { if [ "$1" = lenet5 ]; then echo 100; else echo 5; fi; }
data_for() {  # model hosts
  if [ "$1" = lenet5 ]; then echo "$out/data-lenet5"; return; fi
  if [ -z "$epoch_steps" ]; then echo "$out/data"; return; fi
  local dir="$out/data-$2x${epoch_steps}steps"
  [ -d "$dir" ] || "$dtbench" data synth --format cifar10 --out "$dir" --train "$(($2 * $(batch_for "$1") * epoch_steps))" --test 16 >/dev/null
  echo "$dir"
}

cluster="" sampler=""
cleanup() { [ -n "$cluster" ] && "$dtbench" cluster down "$cluster" >/dev/null 2>&1 || true; cluster=""; }
finish() { cleanup; if [ -n "$sampler" ]; then kill "$sampler" 2>/dev/null || true; fi; }
trap finish EXIT
if [ -n "${HOST_CPU:-}" ]; then
  # Started from a subshell, so that it is no child of this one: the bare `wait`s below wait for
  # the servers and workers they started, and the sampler runs until the script ends.
  sampler=$(python3 scripts/host_cpu.py sample "$out/logs/host-cpu.txt" > /dev/null 2>&1 & echo $!)
fi
trap 'exit 130' INT TERM  # through the EXIT trap

host_address() { grep -v '^#' "$1/hostfile" | sed -n "$(($2 + 1))p" | cut -d' ' -f1; }

# Waits until a server's log says where it listens (or 60 s).
wait_listening() {
  for _ in $(seq 600); do grep -q " listening on " "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "server did not start: $1" >&2; return 1
}

# The doubling sizes, and the three models' own buckets (`dtbench predict` lists a run's in
# predict.json, bucket_bytes: LeNet-5's whole gradient, ResNet-18's two, AlexNet's three), which the
# model reads its allreduce times off; MPI_Allreduce changes algorithm between doubling sizes.
allreduce_sizes=64KiB:32MiB,248256,9006336,15823104,28872768,67125248,67289152

bench_allreduce() {  # dir hosts link
  mpirun $(cat "$1/mpirun-args") "${yield_when_idle[@]}" -np "$2" "$dtbench" bench allreduce --sizes "$allreduce_sizes" --iters 5 --warmup 2 \
    --json "$out/fit/ar-$2-$3.json" > "$out/logs/ar-$2-$3.log" 2>&1
}

# A bench server's model: the study's blueprint, run at SGD lr 1 so that bench ps can check it.
bench_server_model() {  # model
  printf '%s\n' --config "configs/study/$1-cifar10.yaml" --set "dataset.path=$out/data" --set optimizer.lr=1 \
    --set optimizer.momentum=0 --set optimizer.weight_decay=0
}

# One file of every payload's row (the three models'), in bench ps's own format.
merge_rows() {  # out file...
  python3 - "$@" <<'EOF'
import json, sys
files = [json.load(open(f)) for f in sys.argv[2:]]
merged = dict(files[0]); merged["rows"] = [r for f in files for r in f["rows"]]
json.dump(merged, open(sys.argv[1], "w"), indent=2)
EOF
}

# One worker on host 1 against a sync server on host 0, at three payloads (the three models).
bench_ps() {  # dir hosts link
  local server port=51000 rows=() model
  server=$(host_address "$1" 0)
  for model in lenet5 alexnet resnet18; do
    port=$((port + 1))
    local log="$out/logs/psbench-$2-$3-$model.log" tok="$out/psbench/$2-$3-$model" blueprint
    mapfile -t blueprint < <(bench_server_model "$model")
    "$dtbench" cluster exec "$cluster" 0 --timeout-s 300 -- "$dtbench" ps --listen "$server:$port" --workers 1 \
      --mode sync --no-checkpoint --run-id bench-ps --output "$tok" "${blueprint[@]}" > "$log" 2>&1 &
    wait_listening "$log"
    "$dtbench" cluster exec "$cluster" 1 --timeout-s 300 -- "$dtbench" bench ps --servers "$server:$port" --iters "$(ps_iters_for $model)" \
      --run-id bench-ps --auth-token-file "$tok/ps.token" --json "$tok.json" >> "$log" 2>&1
    wait
    rows+=("$tok.json")
  done
  merge_rows "$out/fit/ps-$2-$3.json" "${rows[@]}"
}

# The study's layout without the training: a shard of the model beside each host's worker, sync or
# async, one bench ps process per host (--first-worker h --world H), so every worker pushes to every
# shard on the machine's shared cores, as a ps step does (async servers count from version 0).
bench_ps_world() {  # dir hosts link mode file
  local rows=() token="$out/psbench/token-world" port=52000 model h
  [ -f "$token" ] || (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$token")
  for model in lenet5 alexnet resnet18; do
    local servers="" log="$out/logs/psworld-$4-$2-$3-$model.log" tag="$out/psbench/world-$4-$2-$3-$model" blueprint
    mapfile -t blueprint < <(bench_server_model "$model")
    port=$((port + 1))
    for ((h = 0; h < $2; h++)); do
      local address; address=$(host_address "$1" "$h")
      "$dtbench" cluster exec "$cluster" "$h" --timeout-s 300 -- "$dtbench" ps --listen "$address:$port" --shard "$h" \
        --shards "$2" --workers "$2" --mode "$4" --no-checkpoint --run-id bench-ps --output "$tag" \
        --auth-token-file "$token" "${blueprint[@]}" > "$log.server$h" 2>&1 &
      servers+="${servers:+,}$address:$port"
    done
    for ((h = 0; h < $2; h++)); do wait_listening "$log.server$h"; done
    for ((h = 0; h < $2; h++)); do
      "$dtbench" cluster exec "$cluster" "$h" --timeout-s 300 -- "$dtbench" bench ps --servers "$servers" \
        --first-worker "$h" --world "$2" --iters "$(ps_iters_for $model)" --run-id bench-ps --auth-token-file "$token" \
        --json "$tag-worker$h.json" > "$log.worker$h" 2>&1 &
    done
    wait
    rows+=("$tag-worker0.json")
  done
  merge_rows "$5" "${rows[@]}"
}

train_run() {  # dir hosts link model transport repeat
  local name="$4-$5-$2-$3${6:+-r$6}"
  local run="$out/runs/$name" log="$out/logs/$name.log" servers="" token="$out/psbench/token"
  [ -f "$run/report.json" ] && return 0
  rm -rf "$run"
  local common=(--config "configs/study/$4-cifar10.yaml" --set "dataset.path=$(data_for "$4" "$2")" --set dataset.augment=false --set "batch=$(batch_for "$4")"
                --set "optimizer.lr=$train_lr" --set epochs=2 --set steps=0 --set threads=1 --set "profile.trace_steps=${TRACE_STEPS:-0}"
                ${PS_PLACEMENT:+--set "ps.placement=$PS_PLACEMENT"})
  if [[ $5 == ps-* ]]; then
    [ -f "$token" ] || (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$token")
    for ((h = 0; h < $2; h++)); do
      local address; address=$(host_address "$1" "$h")
      "$dtbench" cluster exec "$cluster" "$h" --timeout-s 600 -- "$dtbench" ps "${common[@]}" --set transport=none \
        --mode "${5#ps-}" --listen "$address:50051" --shard "$h" --shards "$2" --workers "$2" \
        --output "$run/servers" --no-checkpoint --auth-token-file "$token" > "$log.server$h" 2>&1 &
      servers+="${servers:+,}$address:50051"
    done
    for ((h = 0; h < $2; h++)); do wait_listening "$log.server$h"; done
    common+=(--set "ps.servers=$servers" --set "ps.auth_token_file=$token")
  fi
  # PyTorch DDP (gloo) as the engines' sweep runs it beside dtbench: matched to dtbench's settings.
  [ "$5" = ddp ] && common+=(--set engine=pytorch --set pytorch.profile=matched)
  mpirun $(cat "$1/mpirun-args") "${yield_when_idle[@]}" -np "$2" "$dtbench" train "${common[@]}" --set "transport=$5" --run-dir "$run" \
    > "$log" 2>&1 || echo "FAILED: $4 $5 $2 hosts $3 (see $log)"
  wait
}

# The runs a prediction sets side by side are made minutes apart: each model and transport is
# trained at every host count in turn (2, 3, 4 hosts, each cluster made for its run), then the next;
# repeats are rounds over all of it. Made in rounds over the host counts instead (every run at 2
# hosts, then at 3, then at 4), pass HC's runs at 2 hosts of the second round came 4-32 % faster
# than the first round's and those at 4 hosts up to 37 % slower: the machine's speed drifted by a
# third within the hour, and the repeats of a run lay 20 % apart at the median (HB's 2.5 %).
# The benches run first, on each cluster in turn.
bring_up() {  # hosts link
  cluster="${prefix}${1}${2%bit}"
  dir="$out/cluster-$cluster"
  "$dtbench" cluster up "$cluster" --hosts "$1" --link "$2" --dir "$dir" \
    ${cores_per_host:+--cores-per-host "$cores_per_host"} ${CLUSTER_CPUSET:+--cpuset "$CLUSTER_CPUSET"} \
    ${CLUSTER_SPREAD:+--spread} >> "$out/logs/up-$cluster.log"
}

for hosts in $hosts_list; do
  for link in $links; do
    bring_up "$hosts" "$link"
    echo "$(date -u +%T) cluster $cluster: $hosts hosts at $link${cores_per_host:+, $cores_per_host core(s) each}: benches"
    [ -f "$out/fit/ar-$hosts-$link.json" ] || bench_allreduce "$dir" "$hosts" "$link"
    [ -f "$out/fit/ps-$hosts-$link.json" ] || bench_ps "$dir" "$hosts" "$link"
    for mode in sync async; do
      file="$out/fit/psworld-$mode-$hosts-$link.json"
      [ -f "$file" ] || bench_ps_world "$dir" "$hosts" "$link" "$mode" "$file"
    done
    cleanup
  done
done

for ((repeat = 1; repeat <= ${REPEATS:-1}; repeat++)); do
  suffix=""  # the first run of each is named as without repeats
  if ((repeat > 1)); then suffix=$repeat; fi
  for model in $models; do
    for transport in $transports; do
      for hosts in $hosts_list; do
        for link in $links; do
          bring_up "$hosts" "$link"
          train_run "$dir" "$hosts" "$link" "$model" "$transport" "$suffix"
          echo "$(date -u +%T) $model $transport, $hosts hosts at $link${cores_per_host:+, $cores_per_host core(s) each} done${REPEATS:+ (repeat $repeat)}"
          cleanup
        done
      done
    done
  done
done
