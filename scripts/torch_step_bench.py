#!/usr/bin/python3
"""PyTorch reference for `dtbench bench step` (a benchmark, not a test).

Builds the six architectures of core/models/ (mlp, lenet5, alexnet, vgg16, resnet18, resnet50)
as the PyTorch engine does (pytorch/models.py: layer for layer, name for name; the parameter
counts are checked against those `dtbench models` prints) and times one training step the way launch/cmd_bench.cpp does: random normal input of
the model's default shape, random labels, cross-entropy, SGD lr 0.01 momentum 0.9, train mode;
warm-up steps first, then the median over the timed steps of forward (with the loss), backward
and update, each timed on its own. PyTorch is set up as pytorch/parity.py's profile says, as the
engine is: `--profile matched` (dtbench's thread pools, gradients dropped before the forward,
outside the timed update, fp32) or `--profile defaults` (library defaults but the thread count,
zero_grad() after the optimizer's step, inside the timed update). The batch is made once, as
bench step's, so the profile's loader has nothing to do here.

Run it with Debian's interpreter, which has python3-torch:
    /usr/bin/python3 scripts/torch_step_bench.py --model resnet18 --batch 64 --threads 2 --profile matched
"""
import argparse
import os
import resource
import sys
import time

# The PyTorch engine's architectures (pytorch/models.py), the ones `--set engine=pytorch` trains,
# and its parity settings, which must be applied before torch is imported (main does).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "pytorch"))
import parity  # noqa: E402

torch = nn = models = None  # imported by main, after parity.prepare

# The default input of each model (as `dtbench models` lists it) and its parameter count there,
# with 10 classes.
DEFAULT_INPUT = {
    "mlp": (1, 28, 28),
    "lenet5": (1, 28, 28),
    "alexnet": (3, 64, 64),
    "vgg16": (3, 32, 32),
    "resnet18": (3, 32, 32),
    "resnet50": (3, 32, 32),
}
EXPECTED_PARAMETERS = {  # (model, input) -> count for 10 classes
    ("mlp", (1, 28, 28)): 109_386,
    ("lenet5", (1, 28, 28)): 61_706,
    ("lenet5", (3, 32, 32)): 62_006,
    ("alexnet", (3, 64, 64)): 35_855_178,
    ("vgg16", (3, 32, 32)): 14_728_266,
    ("resnet18", (3, 32, 32)): 11_173_962,
    ("resnet50", (3, 32, 32)): 23_520_842,
}
MODELS = list(DEFAULT_INPUT)


def init_weights(module, final):
    """dtbench's initialisation: Kaiming-normal N(0, 2/fan_in) for layers followed by ReLU,
    Xavier-uniform for the final classifier, zero biases, batch norm gamma 1 and beta 0."""
    for m in module.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            if m is final:
                nn.init.xavier_uniform_(m.weight)
            else:
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


def build(name, shape, classes):
    net = models.build(name, shape, classes)
    final = [m for m in net.modules() if isinstance(m, nn.Linear)][-1]
    init_weights(net, final)
    count = sum(p.numel() for p in net.parameters())
    expected = EXPECTED_PARAMETERS.get((name, tuple(shape))) if classes == 10 else None
    assert expected is None or count == expected, (
        f"{name} on {shape}: {count} parameters, dtbench has {expected}")
    return net, count


def peak_rss_mib():
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def bench_one_model(name, args):
    shape = parse_shape(args.input) if args.input else DEFAULT_INPUT[name]
    model, _ = build(name, shape, args.classes)
    device = torch.device(args.device)
    model.to(device).train()
    gen = torch.Generator().manual_seed(7)
    images = torch.randn((args.batch, *shape), generator=gen).to(device)
    labels = torch.randint(0, args.classes, (args.batch,), generator=gen).to(device)

    def now():
        # A phase ends when the device has done its work, as dtbench's loop waits for it.
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        return time.perf_counter()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    forward, backward, update = [], [], []
    zero_in_update = args.settings.zero_in_update
    for step in range(args.warmup + args.steps):
        if not zero_in_update:
            optimizer.zero_grad(set_to_none=True)  # dropped, outside the timed step
        t0 = now()
        loss = criterion(model(images), labels)
        t1 = now()
        loss.backward()
        t2 = now()
        optimizer.step()
        if zero_in_update:
            optimizer.zero_grad(set_to_none=False)  # torch 1.13's default, timed with the update
        t3 = now()
        if step < args.warmup:
            continue
        forward.append(t1 - t0)
        backward.append(t2 - t1)
        update.append(t3 - t2)

    def median_ms(seconds):
        # dtbench's median: the upper middle element of the sorted list.
        return 1e3 * sorted(seconds)[len(seconds) // 2]

    f, b, u = median_ms(forward), median_ms(backward), median_ms(update)
    step_ms = f + b + u
    print(f"{name:<10} {args.batch:>6} {f:>11.3f} {b:>12.3f} {u:>10.3f} {step_ms:>10.3f} "
          f"{1e3 * args.batch / step_ms:>10.1f} {peak_rss_mib():>12.1f}", flush=True)


def parse_shape(text):
    try:
        shape = tuple(int(v) for v in text.lower().split("x"))
    except ValueError:
        shape = ()
    if len(shape) != 3 or min(shape) < 1:
        raise SystemExit(f"--input: expected CxHxW, e.g. 3x32x32, got '{text}'")
    return shape


def import_torch(settings):
    """torch, after what must precede it (parity.prepare); the modules that need it with it."""
    global torch, nn, models
    parity.prepare(settings)
    import torch as torch_module
    from torch import nn as nn_module

    import models as models_module
    torch, nn, models = torch_module, nn_module, models_module
    parity.apply(settings, torch)


def main():
    parser = argparse.ArgumentParser(
        description="PyTorch reference for `dtbench bench step`: forward, backward and update "
                    "milliseconds and images/s of one training step of the same architectures. "
                    "Peak RSS is the process's high-water mark, so it is only meaningful for one "
                    "model per process (with --model all every row after the first includes the "
                    "earlier models); scripts/compare_step.sh runs one model per process.")
    parser.add_argument("--model", default="lenet5", help=f"{', '.join(MODELS)}, or 'all' (default lenet5)")
    parser.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps; the median is reported (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first (default 3)")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads (0 or absent: os.cpu_count()); which pools get them is the profile's")
    parser.add_argument("--profile", default="matched", choices=parity.PROFILES,
                        help="pytorch/parity.py: matched (dtbench's settings, the default) or defaults "
                             "(PyTorch's own but the thread count)")
    parser.add_argument("--precision", default="", choices=parity.PRECISIONS,
                        help="fp32 or tf32 (tf32: cuda only); default: the profile's (matched fp32, "
                             "defaults torch's own)")
    parser.add_argument("--classes", type=int, default=10, help="number of classes (default 10)")
    parser.add_argument("--input", default="", help="input shape CxHxW (default: the model's own)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="cpu, or cuda: the first GPU, each phase ended by torch.cuda.synchronize")
    args = parser.parse_args()
    if args.model != "all" and args.model not in MODELS:
        parser.error(f"unknown model '{args.model}'; valid models: {', '.join(MODELS)}, all")
    if args.batch < 1 or args.steps < 1 or args.warmup < 0 or args.threads < 0 or args.classes < 1:
        parser.error("--batch, --steps and --classes must be positive; --warmup and --threads non-negative")
    try:
        args.settings = parity.settings(args.profile, args.threads or os.cpu_count() or 1, args.precision,
                                        args.device)
    except parity.ParityError as error:
        parser.error(f"--precision {args.precision} on --device {args.device}: {error}")
    import_torch(args.settings)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: this torch sees no usable CUDA device")

    torch.manual_seed(1)
    where = torch.cuda.get_device_name(0) if args.device == "cuda" else f"{torch.get_num_threads()} threads"
    print(f"PyTorch {torch.__version__}, {where}; median of {args.steps} steps after {args.warmup} warm-up")
    print(f"{args.settings.line()} (loader unused: one batch, made once)")
    print(f"{'model':<10} {'batch':>6} {'forward ms':>11} {'backward ms':>12} {'update ms':>10} "
          f"{'step ms':>10} {'images/s':>10} {'peak RSS MiB':>12}", flush=True)
    for name in MODELS:
        if args.model in ("all", name):
            bench_one_model(name, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
