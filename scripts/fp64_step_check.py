#!/usr/bin/env python3
"""How far float32 rounding alone moves one training step's gradients: dtbench's CPU step (fp32)
against the same step in float64 computed independently by PyTorch, from the same weights, input
and labels.

    scripts/fp64_step_check.py [--dtbench PATH] [--threads N] [--bound R] MODEL:BATCH ...
    scripts/fp64_step_check.py resnet18:4 vgg16:4 resnet50:4 resnet50:32

For each MODEL:BATCH, `dtbench bench step --dump-step DIR` writes the model's initial weights, a
random batch with its labels and dtbench's gradients of one forward and backward in train mode;
PyTorch (pytorch/models.py, the architectures named and shaped as dtbench's) recomputes the step
in float64 and in float32 from those weights. The error is the largest gradient difference over
the whole arena relative to the largest float64 gradient, the measure of the GPU model-step test
(tests/gpu/model_step_reference.h). Prints one row per model: loss, largest gradient, dtbench's
error, PyTorch-fp32's error, the float64 step's sensitivity (its gradients again from the input
nudged by a relative 1e-6: how ill-conditioned the step itself is) and the parameter where
dtbench's error is largest relative to that parameter's own largest gradient. --bound R: exit 1 when a dtbench error is over R. DTBENCH names
the binary (default build/dtbench); TORCH_PYTHON is not used: run this with an interpreter that has
torch (Debian's /usr/bin/python3).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "pytorch"))

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("fp64_step_check.py: this python has no torch (run it with /usr/bin/python3, Debian's python3-torch)")

import models  # noqa: E402  (pytorch/, put on the path above)
import weights  # noqa: E402


def dump_step(binary: str, model: str, batch: int, threads: int, out: str) -> None:
    args = [binary, "bench", "step", "--model", model, "--batch", str(batch), "--dump-step", out]
    if threads > 0:
        args += ["--threads", str(threads)]
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"fp64_step_check.py: {' '.join(args)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")


def read(path: str, dtype: str) -> np.ndarray:
    with open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=dtype)


def torch_step(step: dict, layout: List[dict], arena: np.ndarray, images: np.ndarray, labels: np.ndarray,
               dtype: torch.dtype) -> Tuple[float, Dict[str, np.ndarray]]:
    """The loss and every parameter's gradient of one train-mode step, computed in `dtype`."""
    model = models.build(step["model"], step["input"], step["classes"]).to(dtype)
    weights.load_arena(model, layout, arena)
    model.train()
    x = torch.from_numpy(images.copy()).to(dtype).view(step["batch"], *step["input"])
    loss = F.cross_entropy(model(x), torch.from_numpy(labels.astype(np.int64)))
    loss.backward()
    return float(loss), {name: p.grad.detach().double().numpy().ravel() for name, p in model.named_parameters()}


def compare(layout: List[dict], reference: Dict[str, np.ndarray], grads: Dict[str, np.ndarray]) -> Tuple[float, str, float]:
    """(largest error / largest reference gradient, the parameter worst relative to its own largest
    gradient, that parameter's relative error)."""
    largest = max(float(np.abs(g).max()) for g in reference.values())
    error, worst, worst_relative = 0.0, "", 0.0
    for entry in layout:
        name = entry["name"]
        diff = float(np.abs(grads[name] - reference[name]).max())
        error = max(error, diff)
        # a parameter whose gradient is all but zero (a bias before batch norm) is not "worst"
        own = max(float(np.abs(reference[name]).max()), 1e-6 * largest, 1e-30)
        if diff / own > worst_relative:
            worst, worst_relative = name, diff / own
    return error / max(largest, 1e-30), worst, worst_relative


def check(binary: str, model: str, batch: int, threads: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="fp64-step-") as out:
        dump_step(binary, model, batch, threads, out)
        with open(os.path.join(out, "step.json")) as f:
            step = json.load(f)
        layout = weights.read_layout(os.path.join(out, "parameters.json"))
        arena = read(os.path.join(out, "weights.bin"), "<f4")
        arena_grads = read(os.path.join(out, "grads.bin"), "<f4").astype(np.float64)
        images = read(os.path.join(out, "input.bin"), "<f4")
        labels = read(os.path.join(out, "labels.bin"), "<i4")
    weights.check_layout(layout, models.build(step["model"], step["input"], step["classes"]), arena.size)
    dtbench = {e["name"]: arena_grads[e["offset"]:e["offset"] + e["count"]] for e in layout}
    loss64, grads64 = torch_step(step, layout, arena, images, labels, torch.float64)
    loss32, grads32 = torch_step(step, layout, arena, images, labels, torch.float32)
    error, worst, worst_relative = compare(layout, grads64, dtbench)
    torch_error, _, _ = compare(layout, grads64, grads32)
    # The step's own conditioning, with no fp32 in it: float64 again from the input times
    # (1 + 1e-6 · noise), a change the size of fp32 rounding.
    noise = np.random.default_rng(1).standard_normal(images.size)
    _, nudged = torch_step(step, layout, arena, images.astype(np.float64) * (1 + 1e-6 * noise), labels, torch.float64)
    sensitivity, _, _ = compare(layout, grads64, nudged)
    return {"model": model, "batch": batch, "loss_dtbench": step["loss"], "loss_float64": loss64,
            "largest_gradient": max(float(np.abs(g).max()) for g in grads64.values()),
            "dtbench_fp32_error": error, "torch_fp32_error": torch_error,
            "float64_sensitivity": sensitivity, "worst_parameter": worst,
            "worst_parameter_error": worst_relative}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="MODEL:BATCH")
    parser.add_argument("--dtbench", default=os.environ.get("DTBENCH", os.path.join(ROOT, "build", "dtbench")))
    parser.add_argument("--threads", type=int, default=0, help="threads of both (0: one per core)")
    parser.add_argument("--bound", type=float, default=0.0, help="exit 1 when a dtbench error is over this")
    parser.add_argument("--json", default="", help="also write the rows to this file")
    args = parser.parse_args()
    runs = []
    for text in args.runs:
        model, _, batch = text.partition(":")
        if not batch.isdigit() or int(batch) < 1:
            parser.error(f"'{text}': expected MODEL:BATCH with a batch >= 1, e.g. resnet50:4")
        runs.append((model, int(batch)))
    if not os.access(args.dtbench, os.X_OK):
        sys.exit(f"fp64_step_check.py: no dtbench at {args.dtbench} (set DTBENCH or --dtbench)")
    if args.threads > 0:
        torch.set_num_threads(args.threads)

    print("one train-mode step, dtbench's CPU (fp32) and PyTorch fp32 against PyTorch float64 from the same weights;")
    print("error: largest gradient difference / largest float64 gradient; sensitivity: the same for float64 from an")
    print("input nudged by a relative 1e-6 (no fp32 involved: how ill-conditioned the step is)")
    print(f"{'model':<10} {'batch':>5} {'loss dtbench':>13} {'loss f64':>10} {'largest grad':>13} "
          f"{'dtbench error':>14} {'torch32 error':>14} {'sensitivity':>12}  worst parameter (error / its largest)")
    rows, over = [], []
    for model, batch in runs:
        row = check(args.dtbench, model, batch, args.threads)
        rows.append(row)
        print(f"{model:<10} {batch:>5} {row['loss_dtbench']:>13.6f} {row['loss_float64']:>10.6f} "
              f"{row['largest_gradient']:>13.4g} {row['dtbench_fp32_error']:>14.2e} {row['torch_fp32_error']:>14.2e} "
              f"{row['float64_sensitivity']:>12.2e}  "
              f"{row['worst_parameter']} ({row['worst_parameter_error']:.2e})", flush=True)
        if args.bound > 0 and row["dtbench_fp32_error"] > args.bound:
            over.append(f"{model}:{batch} {row['dtbench_fp32_error']:.2e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if over:
        print(f"over the bound {args.bound:.1e}: {', '.join(over)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
