"""The PyTorch models have dtbench's parameters: the same names, in dtbench's arena order, with
dtbench's shapes and counts (core/models/*.cpp), for every input shape dtbench takes."""
from __future__ import annotations

import re
import subprocess
import unittest

from worker_input import TORCH_MISSING, dtbench_binary

if not TORCH_MISSING:
    import models

# `dtbench models --input S --classes K`'s parameter counts ("-": the model cannot take S).
DTBENCH_COUNTS = {
    ("1x28x28", 10): {"mlp": 109386, "lenet5": 61706, "alexnet": None, "vgg16": None,
                      "resnet18": 11172810, "resnet50": 23519690},
    ("1x28x28", 100): {"mlp": 115236, "lenet5": 69356, "alexnet": None, "vgg16": None,
                       "resnet18": 11218980, "resnet50": 23704100},
    ("3x32x32", 10): {"mlp": None, "lenet5": 62006, "alexnet": 23272266, "vgg16": 14728266,
                      "resnet18": 11173962, "resnet50": 23520842},
    ("3x32x32", 100): {"mlp": None, "lenet5": 69656, "alexnet": 23640996, "vgg16": 14774436,
                       "resnet18": 11220132, "resnet50": 23705252},
    ("3x64x64", 10): {"mlp": None, "lenet5": None, "alexnet": 35855178, "vgg16": 14743626,
                      "resnet18": 11173962, "resnet50": 23520842},
}


def shape_of(text: str) -> list:
    return [int(s) for s in text.split("x")]


def count_or_none(model: str, shape: list, classes: int):
    try:
        net = models.build(model, shape, classes)
    except models.InputShapeError:
        return None
    return sum(p.numel() for p in net.parameters())


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class ParameterCounts(unittest.TestCase):
    def test_counts_equal_dtbench_models(self):
        for (shape, classes), expected in DTBENCH_COUNTS.items():
            for model, count in expected.items():
                with self.subTest(model=model, input=shape, classes=classes):
                    self.assertEqual(count_or_none(model, shape_of(shape), classes), count)

    @unittest.skipIf(dtbench_binary() is None, "no dtbench binary (build it, or set DTBENCH)")
    def test_counts_equal_the_dtbench_binary(self):
        for shape in ("1x28x28", "1x32x32", "3x32x32", "3x64x64"):
            for classes in (10, 100):
                listing = subprocess.run([dtbench_binary(), "models", "--input", shape, "--classes", str(classes)],
                                         capture_output=True, text=True, check=True).stdout
                for line in listing.splitlines()[1:]:
                    model, _, count = line.split()[:3]
                    with self.subTest(model=model, input=shape, classes=classes):
                        expected = None if count == "-" else int(count)
                        self.assertEqual(count_or_none(model, shape_of(shape), classes), expected)


def layout(model: str, shape: list, classes: int) -> list:
    return [(name, list(p.shape)) for name, p in models.build(model, shape, classes).named_parameters()]


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class ParameterLayout(unittest.TestCase):
    """Names and shapes as dtbench's layers declare them: conv weight (out, in, k, k) then bias,
    linear weight (out, in) then bias, batch norm gamma "weight" then beta "bias", each (C)."""

    def test_mlp(self):
        for classes in (10, 100):
            self.assertEqual(layout("mlp", [1, 28, 28], classes), [
                ("fc1.weight", [128, 784]), ("fc1.bias", [128]), ("fc2.weight", [64, 128]), ("fc2.bias", [64]),
                ("fc3.weight", [classes, 64]), ("fc3.bias", [classes])])

    def test_lenet5(self):
        for channels, side in ((1, 28), (3, 32)):
            for classes in (10, 100):
                self.assertEqual(layout("lenet5", [channels, side, side], classes), [
                    ("conv1.weight", [6, channels, 5, 5]), ("conv1.bias", [6]),
                    ("conv2.weight", [16, 6, 5, 5]), ("conv2.bias", [16]),
                    ("fc1.weight", [120, 400]), ("fc1.bias", [120]), ("fc2.weight", [84, 120]), ("fc2.bias", [84]),
                    ("fc3.weight", [classes, 84]), ("fc3.bias", [classes])])

    def test_alexnet(self):
        for side, features in ((32, 1024), (64, 4096)):
            self.assertEqual(layout("alexnet", [3, side, side], 10), [
                ("conv1.weight", [64, 3, 3, 3]), ("conv1.bias", [64]),
                ("conv2.weight", [192, 64, 3, 3]), ("conv2.bias", [192]),
                ("conv3.weight", [384, 192, 3, 3]), ("conv3.bias", [384]),
                ("conv4.weight", [256, 384, 3, 3]), ("conv4.bias", [256]),
                ("conv5.weight", [256, 256, 3, 3]), ("conv5.bias", [256]),
                ("fc1.weight", [4096, features]), ("fc1.bias", [4096]),
                ("fc2.weight", [4096, 4096]), ("fc2.bias", [4096]),
                ("fc3.weight", [10, 4096]), ("fc3.bias", [10])])

    def test_vgg16(self):
        for channels in (1, 3):
            for classes in (10, 100):
                expected, cin = [], channels
                for stage, (out, convs) in enumerate(((64, 2), (128, 2), (256, 3), (512, 3), (512, 3)), start=1):
                    for i in range(1, convs + 1):
                        s = f"{stage}_{i}"
                        expected += [(f"conv{s}.weight", [out, cin, 3, 3]), (f"conv{s}.bias", [out]),
                                     (f"bn{s}.weight", [out]), (f"bn{s}.bias", [out])]
                        cin = out
                expected += [("fc.weight", [classes, 512]), ("fc.bias", [classes])]
                self.assertEqual(layout("vgg16", [channels, 32, 32], classes), expected)

    def resnet_expected(self, channels: int, classes: int, blocks: tuple, bottleneck: bool) -> list:
        expected = [("conv1.weight", [64, channels, 3, 3]), ("bn1.weight", [64]), ("bn1.bias", [64])]
        cin, expansion = 64, 4 if bottleneck else 1
        for stage, (planes, count) in enumerate(zip((64, 128, 256, 512), blocks), start=1):
            for block in range(count):
                stride = 2 if stage > 1 and block == 0 else 1
                p = f"layer{stage}.{block}"
                if bottleneck:
                    convs = [(cin, planes, 1), (planes, planes, 3), (planes, 4 * planes, 1)]
                else:
                    convs = [(cin, planes, 3), (planes, planes, 3)]
                for i, (a, b, k) in enumerate(convs, start=1):
                    expected += [(f"{p}.main.conv{i}.weight", [b, a, k, k]), (f"{p}.main.bn{i}.weight", [b]),
                                 (f"{p}.main.bn{i}.bias", [b])]
                out = planes * expansion
                if stride != 1 or cin != out:
                    expected += [(f"{p}.shortcut.0.weight", [out, cin, 1, 1]), (f"{p}.shortcut.1.weight", [out]),
                                 (f"{p}.shortcut.1.bias", [out])]
                cin = out
        return expected + [("fc.weight", [classes, cin]), ("fc.bias", [classes])]

    def test_resnets(self):
        for channels, side in ((1, 28), (3, 32)):
            for classes in (10, 100):
                with self.subTest(input=(channels, side), classes=classes):
                    self.assertEqual(layout("resnet18", [channels, side, side], classes),
                                     self.resnet_expected(channels, classes, (2, 2, 2, 2), False))
                    self.assertEqual(layout("resnet50", [channels, side, side], classes),
                                     self.resnet_expected(channels, classes, (3, 4, 6, 3), True))

    def test_resnet_shortcuts_where_dtbench_has_them(self):
        names = {n for n, _ in layout("resnet18", [3, 32, 32], 10)}
        self.assertEqual(sorted({re.sub(r"\.shortcut.*", "", n) for n in names if ".shortcut." in n}),
                         ["layer2.0", "layer3.0", "layer4.0"])
        names = {n for n, _ in layout("resnet50", [3, 32, 32], 10)}
        self.assertEqual(sorted({re.sub(r"\.shortcut.*", "", n) for n in names if ".shortcut." in n}),
                         ["layer1.0", "layer2.0", "layer3.0", "layer4.0"])

    def test_arena_layout_aligns_every_parameter_to_16_floats(self):
        entries = models.arena_layout(models.build("lenet5", [1, 28, 28], 10))
        self.assertEqual([e["offset"] for e in entries][:4], [0, 160, 176, 2576])
        self.assertTrue(all(e["offset"] % 16 == 0 for e in entries))
        # dtbench's weights.bin for lenet5 on 1x28x28 holds 61,760 floats (61,706 and the padding).
        self.assertEqual(models.arena_size(entries), 61760)


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class ForwardShapes(unittest.TestCase):
    def test_every_model_gives_batch_by_classes(self):
        import torch

        for model, shape in (("mlp", [1, 28, 28]), ("lenet5", [1, 28, 28]), ("lenet5", [3, 32, 32]),
                             ("alexnet", [3, 32, 32]), ("vgg16", [3, 32, 32]), ("resnet18", [1, 28, 28]),
                             ("resnet50", [3, 32, 32])):
            with self.subTest(model=model, input=shape):
                net = models.build(model, shape, 7).eval()
                with torch.no_grad():
                    self.assertEqual(list(net(torch.zeros([2] + shape)).shape), [2, 7])

    def test_misfit_inputs_are_refused_naming_what_is_accepted(self):
        with self.assertRaisesRegex(models.InputShapeError, r"model vgg16 cannot take input \(1, 28, 28\)"):
            models.build("vgg16", [1, 28, 28], 10)
        with self.assertRaisesRegex(KeyError, "valid models: mlp, lenet5"):
            models.build("resnet34", [3, 32, 32], 10)


if __name__ == "__main__":
    unittest.main()
