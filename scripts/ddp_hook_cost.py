#!/usr/bin/python3
"""What the PyTorch engine's DDP timing hook costs against DDP's own allreduce (a benchmark, not a
test).

The engine times each bucket's allreduce through a Python communication hook
(pytorch/phases.py: timed_allreduce_hook, `pytorch.ddp_hook: timed`); without one DDP runs its
built-in allreduce in C++ (`pytorch.ddp_hook: builtin`). This runs two DDP ranks on loopback (gloo,
CPU), one model wrapped twice — with the hook and without — from the same weights, on the same
batch, and alternates them step by step (which goes first alternating too), so that both see the
same machine: a load that comes and goes falls on both. It prints, per round of steps, the median
step of each; at the end the median of each over every step, and the median of the paired
differences (hook − builtin) with its interquartile range, the noise to read it against.

    /usr/bin/python3 scripts/ddp_hook_cost.py [--model lenet5] [--batch 32] [--steps 30]
                                              [--warmup 5] [--rounds 6] [--bucket-mb 25] [--threads 1]
"""
import argparse
import os
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "pytorch"))
import parity  # noqa: E402

MODES = ("timed", "builtin")
INPUT = {"mlp": (1, 28, 28), "lenet5": (1, 28, 28), "resnet18": (3, 32, 32)}


def quartiles(values):
    q = statistics.quantiles(values, n=4)
    return q[0], statistics.median(values), q[2]


def rank_main(rank, args, address):
    chosen = parity.settings("matched", args.threads)
    parity.prepare(chosen)
    import torch
    import torch.distributed as dist

    import models
    import phases
    parity.apply(chosen, torch)
    dist.init_process_group("gloo", init_method=address, rank=rank, world_size=2)
    shape = INPUT[args.model]
    generator = torch.Generator().manual_seed(100 + rank)
    x = torch.randn((args.batch, *shape), generator=generator)
    y = torch.randint(0, 10, (args.batch,), generator=generator)
    runs = {}
    for mode in MODES:
        torch.manual_seed(1)  # the same initial weights for both
        model = models.build(args.model, shape, 10)
        net = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=args.bucket_mb, broadcast_buffers=False)
        buckets = None
        if mode == "timed":
            buckets = phases.BucketTimes()
            net.register_comm_hook(buckets, phases.timed_allreduce_hook)
        runs[mode] = (net, torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9), buckets)

    def step(mode):
        net, optimizer, buckets = runs[mode]
        start = time.perf_counter()
        if buckets is not None:
            buckets.clear()  # as the engine's step does
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(net(x), y).backward()
        optimizer.step()
        return time.perf_counter() - start

    times = {mode: [] for mode in MODES}
    dist.barrier()
    for index in range(args.warmup + args.rounds * args.steps):
        order = MODES if index % 2 == 0 else MODES[::-1]
        took = {mode: step(mode) for mode in order}
        if index < args.warmup:
            continue
        for mode in MODES:
            times[mode].append(took[mode])
        done = index - args.warmup + 1
        if rank == 0 and done % args.steps == 0:
            print(f"round {done // args.steps}: " + ", ".join(
                f"{m} {1e3 * statistics.median(times[m][-args.steps:]):.3f} ms" for m in MODES), flush=True)
    dist.destroy_process_group()
    if rank == 0:
        timed, builtin = (1e3 * statistics.median(times[m]) for m in MODES)
        low, mid, high = (1e3 * v for v in quartiles([a - b for a, b in zip(times["timed"], times["builtin"])]))
        print(f"median step over {len(times['timed'])} steps each: timed hook {timed:.3f} ms, builtin allreduce "
              f"{builtin:.3f} ms; paired difference (hook - builtin): median {mid:+.3f} ms "
              f"({100 * mid / builtin:+.1f} % of the builtin step), interquartile range {low:+.3f} .. {high:+.3f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="lenet5", choices=sorted(INPUT))
    parser.add_argument("--batch", type=int, default=32, help="per rank (default 32)")
    parser.add_argument("--steps", type=int, default=30, help="steps of each mode a round (default 30)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps of each mode first (default 5)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds, printed as they end (default 6)")
    parser.add_argument("--bucket-mb", type=float, default=25.0, help="DDP's bucket_cap_mb (default 25, the engine's)")
    parser.add_argument("--threads", type=int, default=1, help="threads per rank (default 1)")
    args = parser.parse_args()
    if min(args.batch, args.steps, args.rounds, args.threads) < 1 or args.warmup < 0 or args.bucket_mb <= 0:
        parser.error("--batch, --steps, --rounds and --threads must be positive, --warmup >= 0, --bucket-mb > 0")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    print(f"{args.model}, batch {args.batch} per rank, 2 ranks (gloo, loopback), bucket_cap_mb {args.bucket_mb}, "
          f"{args.threads} thread(s) a rank, {args.rounds} rounds of {args.steps} steps of each mode alternated, "
          f"after {args.warmup} warm-up",
          flush=True)
    children = []
    for rank in (1, 0):
        pid = os.fork()
        if pid == 0:  # each rank in a process of its own, torch imported after the fork
            status = 0
            try:
                rank_main(rank, args, address)
            except BaseException:  # noqa: BLE001 - printed, then the child ends with 1
                import traceback
                traceback.print_exc()
                status = 1
            os._exit(status)
        children.append(pid)
    failed = [pid for pid in children if os.waitpid(pid, 0)[1] != 0]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
