#!/usr/bin/env python3
"""Both engines on the same model, data and weights: the PyTorch worker against the dtbench binary.

    python3 pytorch/tests/compare_dtbench.py --model lenet5 --steps 20
    python3 pytorch/tests/compare_dtbench.py --model resnet18 --format cifar10 --data DIR --batch 32

dtbench gives the initial weights (a 1-step run at lr 1e-30: the weights it starts from, to within
1e-30 · gradient) and the weights after one step; the worker starts from the same arena, with the
same sample order (dtbench's draw, ported) and normalisation, and the two are compared number by
number. Per-step losses: dtbench reports a loss per epoch, so either the data set holds exactly
one batch and every epoch is one step (--per-step epochs: one run), or dtbench runs 1, 2, ..., N
steps and step k's loss is k·mean_k − (k−1)·mean_(k−1) (--per-step runs: N runs).
Prints one JSON object; exit 1 when a tolerance is missed.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Any, Dict, List

from worker_input import FASHION_MNIST, dtbench_binary, run_worker, write_input

import numpy as np  # noqa: E402  (worker_input puts pytorch/ on the path first)

import data as data_module  # noqa: E402


def dtbench_train(binary: str, out: str, sets: Dict[str, Any]) -> str:
    """One `dtbench train` run; returns its run directory."""
    shutil.rmtree(out, ignore_errors=True)
    args = [binary, "train"] + [a for k, v in sets.items() for a in ("--set", f"{k}={v}")] + ["--set", f"output={out}"]
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"dtbench failed ({' '.join(args)}):\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    return glob.glob(os.path.join(out, "*"))[0]


def epochs_of(run_dir: str) -> List[dict]:
    with open(os.path.join(run_dir, "worker-0.json")) as f:
        return json.load(f)["epochs"]


def compare(argv: List[str]) -> Dict[str, Any]:
    """Runs both engines as the arguments say; returns what the tool prints, with "ok"."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="lenet5")
    parser.add_argument("--format", default="idx")
    parser.add_argument("--data", default=FASHION_MNIST)
    parser.add_argument("--resize", type=int, default=0)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--per-step", choices=("epochs", "runs"), default="runs")
    parser.add_argument("--optimizer", default="sgd")
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--nesterov", action="store_true")
    parser.add_argument("--weight-tolerance", type=float, default=1e-4)
    parser.add_argument("--loss-tolerance", type=float, default=0.01, help="relative")
    args = parser.parse_args(argv)
    binary = dtbench_binary()
    if binary is None:
        raise RuntimeError("no dtbench binary: build it or set DTBENCH")

    work = tempfile.mkdtemp(prefix="dtb-compare-")
    common = {"model": args.model, "dataset.format": args.format, "dataset.path": args.data,
              "dataset.resize": args.resize, "batch": args.batch, "threads": args.threads, "seed": 1,
              "eval.max_samples": args.batch, "profile.trace_steps": 0, "optimizer.name": args.optimizer,
              "optimizer.momentum": args.momentum, "optimizer.weight_decay": args.weight_decay,
              "optimizer.nesterov": str(args.nesterov).lower()}
    init_dir = dtbench_train(binary, f"{work}/init", {**common, "steps": 1, "save_weights": "true",
                                                     "optimizer.lr": 1e-30})
    one_dir = dtbench_train(binary, f"{work}/one", {**common, "steps": 1, "save_weights": "true",
                                                   "optimizer.lr": args.lr})
    init = np.fromfile(f"{init_dir}/weights.bin", dtype="<f4")
    after_one = np.fromfile(f"{one_dir}/weights.bin", dtype="<f4")

    train, _ = data_module.open_dataset(args.format, args.data)
    mean, std = data_module.compute_normalization(train)
    shape = list(train.sample_shape)
    if args.resize:
        shape = [shape[0], args.resize, args.resize]
    optimizer = {"name": args.optimizer, "lr": args.lr, "momentum": args.momentum, "weight_decay": args.weight_decay,
                 "nesterov": args.nesterov}
    one_steps = len(train) // args.batch
    per_epoch = args.per_step == "epochs"
    if per_epoch and one_steps != 1:
        raise RuntimeError(f"--per-step epochs needs a training set of exactly one batch ({args.batch}), "
                           f"not {len(train)}")

    def worker(name: str, steps: int) -> tuple:
        epochs = steps if per_epoch else 1
        directory, layout = write_input(
            f"{work}/{name}", args.model, shape, train.classes,
            {"format": args.format, "path": args.data, "resize": args.resize,
             "normalization": {"mean": mean, "std": std}},
            arena=init, train_size=len(train), batch=args.batch, epochs=epochs, max_steps=steps,
            eval_max_samples=args.batch, threads=args.threads, optimizer=optimizer,
            save_weights_path=f"{work}/{name}.bin")
        status, events, stderr = run_worker(directory)
        if status != 0:
            raise RuntimeError(f"worker failed ({status}): {events[-1]}\n{stderr[-3000:]}")
        return np.fromfile(f"{work}/{name}.bin", dtype="<f4"), events, layout

    py_one, one_events, layout = worker("py-one", 1)
    py_test = next(e for e in one_events if e["event"] == "epoch")
    dt_test = epochs_of(one_dir)[0]
    diff = np.abs(py_one - after_one)
    per_param = {p["name"]: float(diff[p["offset"]:p["offset"] + p["count"]].max()) for p in layout}

    # dtbench's per-step losses, and its phases over the longest run.
    if per_epoch:
        run = dtbench_train(binary, f"{work}/steps", {**common, "epochs": args.steps, "optimizer.lr": args.lr})
        dt_epochs = epochs_of(run)
        dt_losses = [e["train_loss"] for e in dt_epochs]
    else:
        means, dt_epochs = [], []
        for k in range(1, args.steps + 1):
            run = dtbench_train(binary, f"{work}/steps", {**common, "steps": k, "optimizer.lr": args.lr})
            dt_epochs = epochs_of(run)
            means.append(dt_epochs[0]["train_loss"])
        dt_losses = [k * m - (k - 1) * (means[k - 2] if k > 1 else 0.0) for k, m in enumerate(means, start=1)]
    dt_phases = {name: statistics.median(
        [e["phases"][name]["median_s"] for e in dt_epochs[1:] or dt_epochs])
        for name in ("load", "forward", "backward", "comm", "update", "other", "step")}

    _, events, _ = worker("py-steps", args.steps)
    steps = [e for e in events if e["event"] == "step"]
    py_losses = [e["loss"] for e in steps]
    relative = [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(py_losses, dt_losses)]
    timed = steps[1:] if len(steps) > 1 else steps
    py_phases = {name: statistics.median(e[name] for e in timed)
                 for name in ("load", "forward", "backward", "comm", "update", "other", "total")}

    result = {
        "model": args.model, "data": f"{args.format} {args.data}", "input": shape, "batch": args.batch,
        "threads": args.threads, "optimizer": optimizer,
        "one_step_max_weight_difference": float(diff.max()),
        "one_step_max_weight_movement": float(np.abs(after_one - init).max()),
        "one_step_worst_parameter": max(per_param, key=per_param.get),
        "one_step_test_loss": [dt_test["test_loss"], py_test["test_loss"]],
        "one_step_test_accuracy": [dt_test["test_accuracy"], py_test["test_accuracy"]],
        "losses_dtbench": [round(v, 6) for v in dt_losses], "losses_pytorch": [round(v, 6) for v in py_losses],
        "max_relative_loss_difference": max(relative),
        "step_median_ms_dtbench": {k: round(1e3 * v, 3) for k, v in dt_phases.items()},
        "step_median_ms_pytorch": {k: round(1e3 * v, 3) for k, v in py_phases.items()},
    }
    shutil.rmtree(work, ignore_errors=True)
    result["ok"] = result["one_step_max_weight_difference"] <= args.weight_tolerance and \
        max(relative) <= args.loss_tolerance
    return result


def main() -> int:
    try:
        result = compare(sys.argv[1:])
    except RuntimeError as error:
        print(error, file=sys.stderr)
        return 2
    print("{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in result.items()) + "\n}")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
