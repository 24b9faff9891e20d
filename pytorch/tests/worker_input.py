"""Test helpers: write a worker's input directory as dtbench would, and run the worker.

The paths to pytorch/ are put on sys.path here, so tests import the worker's modules by name.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
PYTORCH_DIR = os.path.dirname(HERE)
REPO = os.path.dirname(PYTORCH_DIR)
WORKER = os.path.join(PYTORCH_DIR, "worker.py")
sys.path.insert(0, PYTORCH_DIR)
sys.path.insert(0, HERE)

try:
    import numpy as np
    import torch
    TORCH_MISSING = ""
except ImportError as error:  # every test that needs torch skips with this reason
    TORCH_MISSING = f"PyTorch is not installed for {sys.executable} ({error}); apt-get install python3-torch"

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def dtbench_binary() -> Optional[str]:
    """The built dtbench: $DTBENCH, else build/dtbench of this repository or of /work/main."""
    for path in (os.environ.get("DTBENCH", ""), os.path.join(REPO, "build", "dtbench")):
        if path and os.access(path, os.X_OK):
            return path
    return None


def write_input(directory: str, model: str, input_shape: List[int], classes: int, data: Dict[str, Any],
                arena: Optional["np.ndarray"] = None, rank: int = 0, world: int = 1, orders: Optional[int] = None,
                train_size: Optional[int] = None, **overrides: Any) -> Tuple[str, List[dict]]:
    """config.json, parameters.json, init-weights.bin (`arena`, or PyTorch's own initialisation
    laid out as dtbench's arena) and order files (from dtbench's draw when `train_size` is given).
    Returns the directory and the layout."""
    import models
    import weights
    from dtbench_draw import write_orders

    os.makedirs(directory, exist_ok=True)
    config: Dict[str, Any] = {
        "model": model, "input": input_shape, "classes": classes, "batch": 64, "epochs": 1, "max_steps": 0,
        "optimizer": {"name": "sgd", "lr": 0.01, "momentum": 0.0, "weight_decay": 0.0, "nesterov": False,
                      "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8},
        "threads": 1, "seed": 1, "data": data, "augment": False, "eval_max_samples": 0, "rank": rank,
        "world": world, "transport": "none", "bucket_mb": 25.0, "init_method": "", "timeout_s": 60.0,
        "save_weights_path": "", "trace_steps": 0,
    }
    config.update(overrides)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    torch.manual_seed(1234)
    net = models.build(model, input_shape, classes)
    layout = models.arena_layout(net)
    with open(os.path.join(directory, "parameters.json"), "w") as f:
        json.dump(layout, f)
    if arena is None:
        arena = weights.arena_of(net, layout, models.arena_size(layout))
    weights.write_arena(os.path.join(directory, "init-weights.bin"), arena)
    if train_size is not None:
        write_orders(directory, train_size, rank, world, int(config["seed"]), orders or int(config["epochs"]))
    return directory, layout


def start_worker(directory: str, python: str = sys.executable, stderr: Any = None) -> Tuple[subprocess.Popen, Any]:
    """The worker with a pipe for its events; returns the process and the events' read end."""
    read_fd, write_fd = os.pipe()
    process = subprocess.Popen([python, WORKER, "--input", directory, "--events-fd", str(write_fd)],
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr,
                               pass_fds=(write_fd,), text=True)
    os.close(write_fd)
    return process, os.fdopen(read_fd, "r")


def run_worker(directory: str, go_lines: int = 100, timeout: float = 600) -> Tuple[int, List[dict], str]:
    """Runs the worker to its end, answering every "ready" / "epoch" with "go"; returns its exit
    status, its events and its stderr."""
    stderr_file = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: nothing blocks on it
    process, events_file = start_worker(directory, stderr=stderr_file)
    events: List[dict] = []
    sent = 0
    for line in events_file:
        event = json.loads(line)
        events.append(event)
        if event["event"] in ("ready", "epoch") and sent < go_lines:
            try:
                process.stdin.write("go\n")
                process.stdin.flush()
            except BrokenPipeError:
                pass
            sent += 1
        if event["event"] in ("done", "error"):
            break
    process.stdin.close()
    process.wait(timeout=timeout)
    events_file.close()
    stderr_file.seek(0)
    stderr = stderr_file.read()
    stderr_file.close()
    return process.returncode, events, stderr


def write_idx_set(directory: str, train: int, test: int, side: int = 28, gzip_files: bool = False,
                  seed: int = 0) -> str:
    """A small IDX data set of random pixels and labels, in dtbench's file names."""
    import gzip

    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(seed)
    for split, count in (("train", train), ("t10k", test)):
        pixels = rng.integers(0, 256, size=(count, side, side), dtype=np.uint8)
        labels = rng.integers(0, 10, size=count, dtype=np.uint8)
        files = {f"{split}-images-idx3-ubyte": np.array([0x803, count, side, side], dtype=">u4").tobytes()
                 + pixels.tobytes(),
                 f"{split}-labels-idx1-ubyte": np.array([0x801, count], dtype=">u4").tobytes() + labels.tobytes()}
        for name, raw in files.items():
            if gzip_files:
                with gzip.open(os.path.join(directory, name + ".gz"), "wb") as f:
                    f.write(raw)
            else:
                with open(os.path.join(directory, name), "wb") as f:
                    f.write(raw)
    return directory


def idx_data(directory: str, resize: int = 0) -> Dict[str, Any]:
    """The config's data section for an IDX set, with dtbench's statistics of its training set."""
    import data as data_module

    train, _ = data_module.open_dataset("idx", directory)
    mean, std = data_module.compute_normalization(train)
    return {"format": "idx", "path": directory, "resize": resize, "normalization": {"mean": mean, "std": std}}
