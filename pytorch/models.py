"""dtbench's six architectures in PyTorch, layer for layer (core/models/*.cpp).

Every module is named as dtbench names its layers, so that `named_parameters()` yields exactly
dtbench's parameter names ("layer1.0.main.conv1.weight"), in dtbench's arena order (a layer's own
parameters, then its children in order) and with dtbench's shapes: dtbench stores a convolution's
weight as (out, in, k, k), a linear weight as (out, in) and batch norm's gamma/beta as "weight" /
"bias" of shape (C), all as PyTorch does, so the weights map name for name with no transpose.
Batch norm's running statistics are buffers in both engines and are not in the arena.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Dict, List, Sequence, Tuple

import torch
from torch import nn

Shape = Tuple[int, int, int]


class InputShapeError(ValueError):
    """The architecture cannot take this sample shape (dtbench's reject_input)."""


class GlobalAvgPool(nn.Module):
    """Mean over each channel's plane, (B, C, H, W) -> (B, C), as dtbench's GlobalAvgPool."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=(2, 3))


class Residual(nn.Module):
    """relu(main(x) + shortcut(x)); no `shortcut` child when it is the identity, as in dtbench
    (whose empty shortcut Sequential is no child and owns no parameters)."""

    def __init__(self, main: nn.Sequential, shortcut: nn.Sequential | None) -> None:
        super().__init__()
        self.main = main
        if shortcut is not None:
            self.shortcut = shortcut
        self.identity = shortcut is None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skip = x if self.identity else self.shortcut(x)
        return torch.relu(self.main(x) + skip)


def _seq(layers: List[Tuple[str, nn.Module]]) -> nn.Sequential:
    return nn.Sequential(OrderedDict(layers))


def _reject(model: str, shape: Sequence[int], accepts: str) -> None:
    raise InputShapeError(
        f"model {model} cannot take input ({', '.join(str(s) for s in shape)}): it accepts {accepts}")


def _require_image(model: str, shape: Sequence[int], accepts: str) -> Shape:
    if len(shape) != 3 or any(int(s) <= 0 for s in shape):
        _reject(model, shape, accepts)
    return int(shape[0]), int(shape[1]), int(shape[2])


def _bn(channels: int) -> nn.BatchNorm2d:
    # dtbench's BatchNorm2d: momentum 0.1, epsilon 1e-5, biased variance to normalise and the
    # unbiased one for the running variance: PyTorch's defaults.
    return nn.BatchNorm2d(channels, eps=1e-5, momentum=0.1)


def build_mlp(shape: Sequence[int], classes: int) -> nn.Sequential:
    accepts = "a (C, H, W) sample of C·H·W = 784 values, e.g. (1, 28, 28)"
    c, h, w = _require_image("mlp", shape, accepts)
    if c * h * w != 784:
        _reject("mlp", shape, accepts)
    return _seq([
        ("flatten", nn.Flatten()),
        ("fc1", nn.Linear(784, 128)), ("relu1", nn.ReLU(inplace=True)),
        ("fc2", nn.Linear(128, 64)), ("relu2", nn.ReLU(inplace=True)),
        ("fc3", nn.Linear(64, classes)),
    ])


def build_lenet5(shape: Sequence[int], classes: int) -> nn.Sequential:
    accepts = "(C, 32, 32), or (C, 28, 28) padded to 32x32"
    c, h, w = _require_image("lenet5", shape, accepts)
    if h != w or h not in (28, 32):
        _reject("lenet5", shape, accepts)
    padding = (32 - h) // 2  # a 28x28 input is padded back to the classic 32x32 geometry
    return _seq([
        ("conv1", nn.Conv2d(c, 6, 5, stride=1, padding=padding)), ("relu1", nn.ReLU(inplace=True)),
        ("pool1", nn.MaxPool2d(2, 2)),
        ("conv2", nn.Conv2d(6, 16, 5)), ("relu2", nn.ReLU(inplace=True)),
        ("pool2", nn.MaxPool2d(2, 2)),
        ("flatten", nn.Flatten()),
        ("fc1", nn.Linear(16 * 5 * 5, 120)), ("relu3", nn.ReLU(inplace=True)),
        ("fc2", nn.Linear(120, 84)), ("relu4", nn.ReLU(inplace=True)),
        ("fc3", nn.Linear(84, classes)),
    ])


def build_alexnet(shape: Sequence[int], classes: int) -> nn.Sequential:
    accepts = "(C, H, W) with H and W multiples of 16, e.g. (3, 64, 64) or (3, 32, 32)"
    c, h, w = _require_image("alexnet", shape, accepts)
    if h % 16 or w % 16:
        _reject("alexnet", shape, accepts)
    hidden = 4096
    relu = lambda: nn.ReLU(inplace=True)  # noqa: E731
    # Dropout draws its masks from torch's generator, not dtbench's: same probability and
    # scaling (inverted dropout), different masks, so AlexNet's steps match dtbench's only in
    # distribution.
    return _seq([
        ("conv1", nn.Conv2d(c, 64, 3, stride=2, padding=1)), ("relu1", relu()),
        ("pool1", nn.MaxPool2d(2, 2)),
        ("conv2", nn.Conv2d(64, 192, 3, padding=1)), ("relu2", relu()),
        ("pool2", nn.MaxPool2d(2, 2)),
        ("conv3", nn.Conv2d(192, 384, 3, padding=1)), ("relu3", relu()),
        ("conv4", nn.Conv2d(384, 256, 3, padding=1)), ("relu4", relu()),
        ("conv5", nn.Conv2d(256, 256, 3, padding=1)), ("relu5", relu()),
        ("pool5", nn.MaxPool2d(2, 2)),
        ("flatten", nn.Flatten()),
        ("dropout1", nn.Dropout(0.5)),
        ("fc1", nn.Linear(256 * (h // 16) * (w // 16), hidden)), ("relu6", relu()),
        ("dropout2", nn.Dropout(0.5)),
        ("fc2", nn.Linear(hidden, hidden)), ("relu7", relu()),
        ("fc3", nn.Linear(hidden, classes)),
    ])


_VGG16_STAGES = ((64, 2), (128, 2), (256, 3), (512, 3), (512, 3))


def build_vgg16(shape: Sequence[int], classes: int) -> nn.Sequential:
    accepts = "(C, H, W) with H and W multiples of 32, e.g. (3, 32, 32)"
    c, h, w = _require_image("vgg16", shape, accepts)
    if h % 32 or w % 32:
        _reject("vgg16", shape, accepts)
    layers: List[Tuple[str, nn.Module]] = []
    channels = c
    for stage, (out, convolutions) in enumerate(_VGG16_STAGES, start=1):
        for i in range(1, convolutions + 1):
            suffix = f"{stage}_{i}"
            # The convolutions keep their bias before batch norm, as dtbench's (and the reference) do.
            layers += [(f"conv{suffix}", nn.Conv2d(channels, out, 3, padding=1)),
                       (f"bn{suffix}", _bn(out)), (f"relu{suffix}", nn.ReLU(inplace=True))]
            channels = out
        layers.append((f"pool{stage}", nn.MaxPool2d(2, 2)))
    layers += [("flatten", nn.Flatten()), ("fc", nn.Linear(channels * (h // 32) * (w // 32), classes))]
    return _seq(layers)


_STAGE_PLANES = (64, 128, 256, 512)


def _conv_bn(index: int, cin: int, cout: int, kernel: int, stride: int) -> List[Tuple[str, nn.Module]]:
    # Convolutions feeding batch norm have no bias; padding kernel/2 as in dtbench's conv_bn.
    return [(f"conv{index}", nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False)),
            (f"bn{index}", _bn(cout))]


def _shortcut(cin: int, cout: int, stride: int) -> nn.Sequential | None:
    if stride == 1 and cin == cout:
        return None
    return _seq([("0", nn.Conv2d(cin, cout, 1, stride=stride, bias=False)), ("1", _bn(cout))])


def _basic_block(cin: int, planes: int, stride: int) -> Residual:
    main = _seq(_conv_bn(1, cin, planes, 3, stride) + [("relu1", nn.ReLU(inplace=True))]
                + _conv_bn(2, planes, planes, 3, 1))
    return Residual(main, _shortcut(cin, planes, stride))


def _bottleneck_block(cin: int, planes: int, stride: int) -> Residual:
    # The stride sits on the 3x3 convolution ("ResNet v1.5"), as in dtbench.
    main = _seq(_conv_bn(1, cin, planes, 1, 1) + [("relu1", nn.ReLU(inplace=True))]
                + _conv_bn(2, planes, planes, 3, stride) + [("relu2", nn.ReLU(inplace=True))]
                + _conv_bn(3, planes, 4 * planes, 1, 1))
    return Residual(main, _shortcut(cin, 4 * planes, stride))


def _build_resnet(model: str, shape: Sequence[int], classes: int, blocks: Sequence[int],
                  bottleneck: bool) -> nn.Sequential:
    c, _, _ = _require_image(model, shape, "any (C, H, W), e.g. (3, 32, 32)")
    expansion = 4 if bottleneck else 1
    layers: List[Tuple[str, nn.Module]] = _conv_bn(1, c, _STAGE_PLANES[0], 3, 1)
    layers.append(("relu", nn.ReLU(inplace=True)))
    channels = _STAGE_PLANES[0]
    for stage, count in enumerate(blocks):
        stage_blocks: List[Tuple[str, nn.Module]] = []
        for block in range(count):
            stride = 2 if stage > 0 and block == 0 else 1
            planes = _STAGE_PLANES[stage]
            make = _bottleneck_block if bottleneck else _basic_block
            stage_blocks.append((str(block), make(channels, planes, stride)))
            channels = planes * expansion
        layers.append((f"layer{stage + 1}", _seq(stage_blocks)))
    layers += [("avgpool", GlobalAvgPool()), ("fc", nn.Linear(channels, classes))]
    return _seq(layers)


def build_resnet18(shape: Sequence[int], classes: int) -> nn.Sequential:
    return _build_resnet("resnet18", shape, classes, (2, 2, 2, 2), False)


def build_resnet50(shape: Sequence[int], classes: int) -> nn.Sequential:
    return _build_resnet("resnet50", shape, classes, (3, 4, 6, 3), True)


BUILDERS: Dict[str, Callable[[Sequence[int], int], nn.Sequential]] = {
    "mlp": build_mlp,
    "lenet5": build_lenet5,
    "alexnet": build_alexnet,
    "vgg16": build_vgg16,
    "resnet18": build_resnet18,
    "resnet50": build_resnet50,
}


def build(name: str, shape: Sequence[int], classes: int) -> nn.Sequential:
    """The architecture `name` for one (C, H, W) sample and `classes` outputs. KeyError for an
    unknown name, InputShapeError for an input the architecture cannot take."""
    if name not in BUILDERS:
        raise KeyError(f"unknown model '{name}'; valid models: {', '.join(BUILDERS)}")
    if classes < 1:
        raise InputShapeError(f"model {name}: classes must be at least 1, got {classes}")
    return BUILDERS[name](shape, classes)


ARENA_ALIGNMENT = 16  # floats: dtbench starts every parameter on a 16-float boundary (param_arena.cpp)


def arena_layout(model: nn.Module) -> List[dict]:
    """The parameters.json dtbench writes for this architecture, derived from the module:
    name, shape, offset and count in floats, each parameter aligned to 16 floats. For tests and
    for writing weights without dtbench; the worker itself reads dtbench's file."""
    layout, offset = [], 0
    for name, param in model.named_parameters():
        count = param.numel()
        layout.append({"name": name, "shape": list(param.shape), "offset": offset, "count": count})
        offset += (count + ARENA_ALIGNMENT - 1) // ARENA_ALIGNMENT * ARENA_ALIGNMENT
    return layout


def arena_size(layout: List[dict]) -> int:
    """Floats in the arena: the last parameter's end, rounded up to the alignment."""
    if not layout:
        return 0
    end = max(p["offset"] + p["count"] for p in layout)
    return (end + ARENA_ALIGNMENT - 1) // ARENA_ALIGNMENT * ARENA_ALIGNMENT
