#!/usr/bin/python3
"""PyTorch reference for `dtbench bench step` (a benchmark, not a test).

Builds the same six architectures as core/models/ (mlp, lenet5, alexnet, vgg16, resnet18,
resnet50: same layers, same parameter counts, checked against the counts `dtbench models`
prints) and times one training step the way launch/cmd_bench.cpp does: random normal input of
the model's default shape, random labels, cross-entropy, SGD lr 0.01 momentum 0.9, train mode;
warm-up steps first, then the median over the timed steps of forward (with the loss), backward
and update, each timed on its own. Gradients are cleared (set to None) before each forward,
outside the timed region.

Run it with Debian's interpreter, which has python3-torch:
    /usr/bin/python3 scripts/torch_step_bench.py --model resnet18 --batch 64 --threads 2
"""
import argparse
import os
import resource
import statistics
import sys
import time

import torch
from torch import nn

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


# core/models/classic.cpp ----------------------------------------------------------------------

def build_mlp(c, h, w, classes):
    if c * h * w != 784:
        raise ValueError("mlp takes C*H*W = 784 values")
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(784, 128), nn.ReLU(inplace=True),
        nn.Linear(128, 64), nn.ReLU(inplace=True),
        nn.Linear(64, classes),
    )


def build_lenet5(c, h, w, classes):
    if h != w or h not in (28, 32):
        raise ValueError("lenet5 takes (C, 32, 32) or (C, 28, 28)")
    padding = (32 - h) // 2
    return nn.Sequential(
        nn.Conv2d(c, 6, 5, stride=1, padding=padding), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 16, 5), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.ReLU(inplace=True),
        nn.Linear(120, 84), nn.ReLU(inplace=True),
        nn.Linear(84, classes),
    )


def build_alexnet(c, h, w, classes):
    if h % 16 or w % 16:
        raise ValueError("alexnet takes H and W multiples of 16")
    hidden = 4096
    return nn.Sequential(
        nn.Conv2d(c, 64, 3, stride=2, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
        nn.Conv2d(64, 192, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
        nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Dropout(0.5), nn.Linear(256 * (h // 16) * (w // 16), hidden), nn.ReLU(inplace=True),
        nn.Dropout(0.5), nn.Linear(hidden, hidden), nn.ReLU(inplace=True),
        nn.Linear(hidden, classes),
    )


# core/models/vgg.cpp --------------------------------------------------------------------------

def build_vgg16(c, h, w, classes):
    if h % 32 or w % 32:
        raise ValueError("vgg16 takes H and W multiples of 32")
    layers = []
    channels = c
    for out, convolutions in ((64, 2), (128, 2), (256, 3), (512, 3), (512, 3)):
        for _ in range(convolutions):
            # The convolution keeps its bias, as in dtbench (and pytorch-cifar).
            layers += [nn.Conv2d(channels, out, 3, padding=1, bias=True), nn.BatchNorm2d(out),
                       nn.ReLU(inplace=True)]
            channels = out
        layers.append(nn.MaxPool2d(2, 2))
    layers += [nn.Flatten(), nn.Linear(channels * (h // 32) * (w // 32), classes)]
    return nn.Sequential(*layers)


# core/models/resnet.cpp -----------------------------------------------------------------------

def conv_bn(cin, cout, kernel, stride):
    return [nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False),
            nn.BatchNorm2d(cout)]


def shortcut(cin, cout, stride):
    if stride != 1 or cin != cout:
        return nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
    return nn.Sequential()  # identity


class Residual(nn.Module):
    """out = relu(main(x) + shortcut(x)), as dtbench's Residual layer."""

    def __init__(self, main, short):
        super().__init__()
        self.main = main
        self.shortcut = short

    def forward(self, x):
        out = self.main(x)
        out += self.shortcut(x)  # main ends in batch norm, whose output may be overwritten
        return torch.relu_(out)


def basic_block(cin, planes, stride):
    main = nn.Sequential(*conv_bn(cin, planes, 3, stride), nn.ReLU(inplace=True),
                         *conv_bn(planes, planes, 3, 1))
    return Residual(main, shortcut(cin, planes, stride))


def bottleneck_block(cin, planes, stride):
    main = nn.Sequential(*conv_bn(cin, planes, 1, 1), nn.ReLU(inplace=True),
                         *conv_bn(planes, planes, 3, stride), nn.ReLU(inplace=True),  # v1.5
                         *conv_bn(planes, 4 * planes, 1, 1))
    return Residual(main, shortcut(cin, 4 * planes, stride))


def build_resnet(c, classes, blocks, bottleneck):
    expansion = 4 if bottleneck else 1
    layers = [*conv_bn(c, 64, 3, 1), nn.ReLU(inplace=True)]  # no max-pool
    channels = 64
    for stage, (planes, count) in enumerate(zip((64, 128, 256, 512), blocks)):
        stage_blocks = []
        for block in range(count):
            stride = 2 if stage > 0 and block == 0 else 1
            make = bottleneck_block if bottleneck else basic_block
            stage_blocks.append(make(channels, planes, stride))
            channels = planes * expansion
        layers.append(nn.Sequential(*stage_blocks))
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, classes)]
    return nn.Sequential(*layers)


def build_resnet18(c, h, w, classes):
    return build_resnet(c, classes, (2, 2, 2, 2), False)


def build_resnet50(c, h, w, classes):
    return build_resnet(c, classes, (3, 4, 6, 3), True)


BUILDERS = {
    "mlp": build_mlp,
    "lenet5": build_lenet5,
    "alexnet": build_alexnet,
    "vgg16": build_vgg16,
    "resnet18": build_resnet18,
    "resnet50": build_resnet50,
}


def build(name, shape, classes):
    net = BUILDERS[name](*shape, classes)
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
    for step in range(args.warmup + args.steps):
        optimizer.zero_grad(set_to_none=True)
        t0 = now()
        loss = criterion(model(images), labels)
        t1 = now()
        loss.backward()
        t2 = now()
        optimizer.step()
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
                        help="torch.set_num_threads (0 or absent: os.cpu_count())")
    parser.add_argument("--classes", type=int, default=10, help="number of classes (default 10)")
    parser.add_argument("--input", default="", help="input shape CxHxW (default: the model's own)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="cpu, or cuda: the first GPU, each phase ended by torch.cuda.synchronize")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: this torch sees no usable CUDA device")
    if args.model != "all" and args.model not in BUILDERS:
        parser.error(f"unknown model '{args.model}'; valid models: {', '.join(MODELS)}, all")
    if args.batch < 1 or args.steps < 1 or args.warmup < 0 or args.threads < 0 or args.classes < 1:
        parser.error("--batch, --steps and --classes must be positive; --warmup and --threads non-negative")

    threads = args.threads or os.cpu_count() or 1
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    where = torch.cuda.get_device_name(0) if args.device == "cuda" else f"{torch.get_num_threads()} threads"
    print(f"PyTorch {torch.__version__}, {where}; median of {args.steps} steps after {args.warmup} warm-up")
    print(f"{'model':<10} {'batch':>6} {'forward ms':>11} {'backward ms':>12} {'update ms':>10} "
          f"{'step ms':>10} {'images/s':>10} {'peak RSS MiB':>12}", flush=True)
    for name in MODELS:
        if args.model in ("all", name):
            bench_one_model(name, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
