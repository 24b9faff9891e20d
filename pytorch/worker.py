#!/usr/bin/env python3
"""dtbench's PyTorch engine: one worker, started by `dtbench train` for a blueprint with
`engine: pytorch`, training the model dtbench would train on the same data from the same weights,
and reporting each step's phases back as JSON lines (README.md in this folder has the contract).

    python3 worker.py --input DIR --events-fd N

DIR holds config.json, parameters.json, init-weights.bin, order-<epoch>.bin (and, with augment,
augment-<epoch>.bin). Events go to the inherited file descriptor N; before each epoch the worker
reads a line "go" from stdin.
Exit status: 0 done, 2 bad input (an "error" event names the key), 1 any other failure or stdin
closed.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys
import time
import traceback
from typing import Any, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


import parity  # noqa: E402 - needs the path above; imports no torch


def prepare_before_torch(argv: List[str]) -> None:
    """The parity settings that must be in place before torch is imported (the thread variables
    OpenMP and OpenBLAS read when torch loads them, the allocator), from config.json read here:
    config.py checks it properly later, and a config it refuses changes nothing here."""
    if "--input" not in argv[:-1]:
        return
    try:
        with open(os.path.join(argv[argv.index("--input") + 1], "config.json")) as f:
            raw = json.load(f)
        chosen = parity.settings(raw.get("pytorch", {}).get("profile", "matched"), raw.get("threads", 0),
                                 raw.get("precision", "fp32"))
    except (OSError, ValueError, AttributeError, TypeError):
        return
    parity.prepare(chosen)


prepare_before_torch(sys.argv)


def end_with_dtbench() -> None:
    """The worker ends when the dtbench process that started it does, however that one ended
    (mpirun's SIGKILL after its grace period, say): else it would train on, alone, holding a core.
    If dtbench is already gone, end now."""
    try:
        import ctypes
        import signal

        parent = os.getppid()
        pr_set_pdeathsig = 1  # linux/prctl.h
        ctypes.CDLL("libc.so.6").prctl(pr_set_pdeathsig, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)
    except (OSError, AttributeError):
        pass  # not Linux/glibc: the closed stdin ends it at the next epoch instead


end_with_dtbench()

try:
    import numpy as np
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn

    import config as config_module
    import data as data_module
    import models
    import optim
    import phases
    import prefetch
    import weights
    IMPORT_ERROR: ImportError | None = None
except ImportError as missing:  # reported as an event, so dtbench can say which python lacks torch
    IMPORT_ERROR = missing

EXIT_INPUT = 2
EXIT_FAILURE = 1


class InputError(Exception):
    """Bad input from dtbench: exit 2."""


class StdinClosed(Exception):
    """dtbench closed our stdin: it is gone or wants us gone; exit 1 quietly."""


class Diverged(Exception):
    """A non-finite loss, as dtbench's DivergedError."""


class Events:
    """JSON lines to dtbench, one object per line, each flushed as written."""

    def __init__(self, fd: int) -> None:
        self.stream = os.fdopen(fd, "w", buffering=1)

    def send(self, event: str, **fields: Any) -> None:
        self.stream.write(json.dumps({"event": event, **fields}, separators=(",", ":")) + "\n")


class RunClock:
    """perf_counter for durations; wall-clock (Unix) times derived from one reading of both, so
    they never step back with the system clock (as dtbench's RunClock)."""

    def __init__(self) -> None:
        self.start, self.start_unix = phases.now(), time.time()

    def unix(self, at: float) -> float:
        return self.start_unix + (at - self.start)


def wait_for_go() -> None:
    line = sys.stdin.readline()
    if not line:
        raise StdinClosed()
    if line.strip() != "go":
        raise InputError(f"expected the line 'go' on standard input before an epoch, got {line.strip()!r}")


class Worker:
    def __init__(self, input_dir: str, events: Events) -> None:
        self.events = events
        self.clock = RunClock()
        try:
            self.config = config_module.load_config(os.path.join(input_dir, "config.json"))
        except config_module.ConfigError as error:
            raise InputError(str(error)) from None
        cfg = self.config
        self.parity = parity.settings(cfg.profile, cfg.threads, cfg.precision)
        parity.apply(self.parity, torch)
        torch.manual_seed(cfg.seed)  # dropout's masks (AlexNet); the weights come from dtbench

        self.model = self._build_model()
        self.layout, self.arena_floats = self._load_weights(os.path.join(input_dir, "parameters.json"),
                                                            os.path.join(input_dir, "init-weights.bin"))
        self.train_batches, self.test_batches = self._open_data()
        self.orders = self._read_orders(input_dir)
        self.crops = self._read_crop_flips(input_dir) if cfg.data.augment else {}
        self.optimizer = self._make_optimizer()
        self.buckets: phases.BucketTimes | None = None
        self.net: nn.Module = self.model  # what training calls: the model, or DDP around it
        if cfg.transport == "ddp" and cfg.world > 1:
            self._join_process_group()

    # --- set-up -------------------------------------------------------------------------------

    def _build_model(self) -> nn.Module:
        cfg = self.config
        try:
            return models.build(cfg.model, cfg.input, cfg.classes)
        except models.InputShapeError as error:
            raise InputError(f"config.json: input {cfg.input}: {error}") from None

    def _load_weights(self, layout_path: str, arena_path: str):
        for path in (layout_path, arena_path):
            if not os.path.isfile(path):
                raise InputError(f"{path} does not exist: dtbench writes it before starting the worker")
        try:
            layout = weights.read_layout(layout_path)
            arena = weights.read_arena(arena_path)
            weights.check_layout(layout, self.model, arena.size)
        except (weights.LayoutError, json.JSONDecodeError) as error:
            raise InputError(str(error)) from None
        weights.load_arena(self.model, layout, arena)
        return layout, int(arena.size)

    def _open_data(self):
        cfg, d = self.config, self.config.data
        try:
            train, test = data_module.open_dataset(d.format, d.path)
            train_batches = data_module.BatchMaker(train, d.mean, d.std, d.resize)
            test_batches = data_module.BatchMaker(test, d.mean, d.std, d.resize)
        except data_module.DataError as error:
            raise InputError(f"config.json: data ({d.format} at {d.path}): {error}") from None
        if list(train_batches.sample_shape) != cfg.input:
            raise InputError(f"config.json: input is {cfg.input}, but {d.path} holds samples of "
                             f"{list(train.sample_shape)}" + (f", {list(train_batches.sample_shape)} after resize "
                                                              f"{d.resize}" if d.resize else ""))
        if cfg.classes != train.classes:
            raise InputError(f"config.json: classes is {cfg.classes}, but the {d.format} data set has {train.classes}")
        return train_batches, test_batches

    def _read_orders(self, input_dir: str) -> Dict[int, np.ndarray]:
        """Every epoch's order that this run will train on, read and checked before 'ready'."""
        cfg = self.config
        orders, steps = {}, 0
        for epoch in range(1, cfg.epochs + 1):
            if cfg.max_steps > 0 and steps >= cfg.max_steps:
                break
            path = os.path.join(input_dir, f"order-{epoch}.bin")
            if not os.path.isfile(path):
                raise InputError(f"{path} does not exist: dtbench writes order-1.bin .. order-{cfg.epochs}.bin")
            try:
                order = data_module.read_order(path, len(self.train_batches.data))
            except data_module.DataError as error:
                raise InputError(str(error)) from None
            if order.size < cfg.batch:
                raise InputError(f"config.json: batch {cfg.batch} is larger than rank {cfg.rank}'s {order.size} "
                                 f"samples of epoch {epoch} ({path})")
            orders[epoch] = order
            steps += order.size // cfg.batch
        return orders

    def _read_crop_flips(self, input_dir: str) -> Dict[int, np.ndarray]:
        """Every trained epoch's crops and flips (augment-<e>.bin), one row per sample of its order."""
        crops = {}
        for epoch, order in self.orders.items():
            path = os.path.join(input_dir, f"augment-{epoch}.bin")
            if not os.path.isfile(path):
                raise InputError(f"{path} does not exist: with augment, dtbench writes augment-<epoch>.bin beside "
                                 f"order-<epoch>.bin")
            try:
                crops[epoch] = data_module.read_crop_flips(path, order.size)
            except data_module.DataError as error:
                raise InputError(str(error)) from None
        return crops

    def _make_optimizer(self) -> torch.optim.Optimizer:
        try:
            return optim.make_optimizer(self.config.optimizer, self.model.parameters())
        except optim.OptimizerConfigError as error:
            raise InputError(f"config.json: {error}") from None

    def _join_process_group(self) -> None:
        cfg = self.config
        if cfg.iface and "GLOO_SOCKET_IFNAME" not in os.environ:
            # gloo's connections leave from the address the host name resolves to unless told
            # which interface: on an emulated host that is loopback, unreachable from the others.
            os.environ["GLOO_SOCKET_IFNAME"] = cfg.iface
        dist.init_process_group("gloo", init_method=cfg.init_method, rank=cfg.rank, world_size=cfg.world,
                                timeout=datetime.timedelta(seconds=cfg.timeout_s))
        # bucket_mb 0 is dtbench's "the whole arena as one buffer": one bucket as large as the model.
        bucket_mb = cfg.bucket_mb if cfg.bucket_mb > 0 else 4 * self.arena_floats / 2**20 + 1
        # DDP caps its first bucket (the last layers' gradients) at 1 MB whatever bucket_cap_mb
        # says; dtbench's buckets are all of bucket_mb. DDP reads this module attribute, which is
        # there to be set, when it is constructed.
        dist._DEFAULT_FIRST_BUCKET_BYTES = int(bucket_mb * 2**20)
        # No buffer broadcast: dtbench keeps each worker's batch-norm statistics its own.
        self.net = nn.parallel.DistributedDataParallel(self.model, bucket_cap_mb=bucket_mb, broadcast_buffers=False)
        if cfg.ddp_hook == "timed":  # builtin: DDP's own allreduce, its buckets untimed (docs/engines.md)
            self.buckets = phases.BucketTimes()
            self.net.register_comm_hook(self.buckets, phases.timed_allreduce_hook)

    # --- training -----------------------------------------------------------------------------

    def run(self) -> None:
        cfg = self.config
        self.events.send("ready", torch=torch.__version__, threads=torch.get_num_threads(),
                         profile=self.parity.profile, settings=self.parity.line(), ddp_hook=cfg.ddp_hook,
                         parameters=sum(p.numel() for p in self.model.parameters()), epochs=len(self.orders),
                         steps=self._planned_steps())
        global_step = 0
        for epoch in sorted(self.orders):
            wait_for_go()
            global_step = self._train_epoch(epoch, global_step)
        arena = weights.arena_of(self.model, self.layout, self.arena_floats)
        if cfg.save_weights_path:
            weights.write_arena(cfg.save_weights_path, arena)
        if dist.is_initialized():
            dist.destroy_process_group()
        self.events.send("done", weights_checksum=weights.checksum(arena), weights_path=cfg.save_weights_path)

    def _planned_steps(self) -> int:
        steps = sum(order.size // self.config.batch for order in self.orders.values())
        return min(steps, self.config.max_steps) if self.config.max_steps > 0 else steps

    def _train_epoch(self, epoch: int, global_step: int) -> int:
        cfg = self.config
        order = self.orders[epoch]
        steps = order.size // cfg.batch  # the last incomplete batch is dropped, as dtbench's drop_last
        self.net.train()
        epoch_start = phases.now()
        previous_end = epoch_start
        loss_sum, correct_sum, images = 0.0, 0, 0
        if cfg.max_steps > 0:
            steps = max(0, min(steps, cfg.max_steps - global_step))
        crops = self.crops.get(epoch)

        def make(step: int):
            batch = slice(step * cfg.batch, (step + 1) * cfg.batch)
            indices = order[batch]
            x = torch.from_numpy(self.train_batches.images(indices, crops[batch] if crops is not None else None))
            return x, torch.from_numpy(self.train_batches.labels(indices))

        batches = prefetch.Batches(make, range(steps), self.parity.prefetch)
        try:
            for _ in range(steps):
                start = previous_end
                loss, correct, count, times, previous_end = self._step(batches, start, epoch, global_step)
                loss_sum += loss * count
                correct_sum += correct
                images += count
                self._send_step(epoch, global_step, loss, correct, count, times, start)
                global_step += 1
        finally:
            batches.close()
        steps_end = previous_end
        test_loss, test_accuracy, test_samples = self._evaluate()
        end = phases.now()
        self.events.send("epoch", epoch=epoch, start_unix_s=self.clock.unix(epoch_start),
                         steps_end_unix_s=self.clock.unix(steps_end), end_unix_s=self.clock.unix(end),
                         test_loss=test_loss, test_accuracy=test_accuracy, test_samples=test_samples,
                         train_loss=loss_sum / images if images else 0.0,
                         train_accuracy=correct_sum / images if images else 0.0, images=images)
        return global_step

    def _send_step(self, epoch: int, global_step: int, loss: float, correct: int, count: int,
                   times: phases.StepPhases, start: float) -> None:
        self.events.send("step", epoch=epoch, step=global_step, load=times.load, forward=times.forward,
                         backward=times.backward, comm=times.comm, update=times.update, other=times.other,
                         total=times.total, comm_total=times.comm_total, buckets=times.buckets,
                         bucket_spans=times.bucket_spans, loss=loss,
                         correct=correct, images=count, start_unix_s=self.clock.unix(start))

    def _step(self, batches: prefetch.Batches, start: float, epoch: int, global_step: int):
        if self.buckets is not None:
            self.buckets.clear()
        if not self.parity.zero_in_update:
            # Dropped, not zeroed: backward writes the gradients anew, as dtbench's backward
            # overwrites its gradient arena; the time goes to other, before the load.
            self.optimizer.zero_grad(set_to_none=True)
        load_start = phases.now()
        x, y = batches.next()
        forward_start = phases.now()
        logits = self.net(x)
        loss = F.cross_entropy(logits, y)  # softmax cross-entropy, the mean over the batch
        loss_value = loss.item()
        correct = int((logits.argmax(dim=1) == y).sum().item())
        if not math.isfinite(loss_value):
            what = "NaN" if math.isnan(loss_value) else ("inf" if loss_value > 0 else "-inf")
            raise Diverged(f"diverged: loss is {what} at step {global_step} (epoch {epoch}); lower optimizer.lr")
        backward_start = phases.now()
        loss.backward()
        backward_end = phases.now()
        self.optimizer.step()
        if self.parity.zero_in_update:
            self.optimizer.zero_grad(set_to_none=False)  # torch 1.13's default, as its users' loops
        step_end = phases.now()
        times = phases.split_step(start, load_start, forward_start, backward_start, backward_end, step_end,
                                  self.buckets)
        return loss_value, correct, int(y.numel()), times, step_end

    def _evaluate(self):
        """The test set as dtbench evaluates it: in file order, batches of min(batch, samples)."""
        with torch.no_grad():  # a decorator would need torch when the class is defined
            cfg = self.config
            self.model.eval()
            loss_sum, correct, samples = 0.0, 0, 0
            everything = np.arange(len(self.test_batches.data))
            for start, end in data_module.test_batches(len(everything), cfg.batch, cfg.eval_max_samples):
                indices = everything[start:end]
                logits = self.model(torch.from_numpy(self.test_batches.images(indices)))
                y = torch.from_numpy(self.test_batches.labels(indices))
                loss_sum += F.cross_entropy(logits, y).item() * (end - start)
                correct += int((logits.argmax(dim=1) == y).sum().item())
                samples += end - start
            self.model.train()
            if samples == 0:
                return 0.0, 0.0, 0
            return loss_sum / samples, correct / samples, samples


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="dtbench's PyTorch engine: one training worker")
    parser.add_argument("--input", required=True, help="directory dtbench wrote: config.json, parameters.json, ...")
    parser.add_argument("--events-fd", type=int, required=True, help="inherited file descriptor for JSON-line events")
    args = parser.parse_args(argv)
    try:
        events = Events(args.events_fd)
    except OSError as error:
        print(f"worker: cannot write events to file descriptor {args.events_fd}: {error}", file=sys.stderr)
        return EXIT_INPUT
    if IMPORT_ERROR is not None:
        return report(events, f"{sys.executable} cannot import what the PyTorch engine needs ({IMPORT_ERROR}); "
                              "Debian's python3-torch installs it for /usr/bin/python3", "environment", EXIT_FAILURE)
    worker = None  # alive until exit_now ends the process: see there
    try:
        worker = Worker(args.input, events)
        worker.run()
        status = 0
    except StdinClosed:
        status = EXIT_FAILURE
    except BrokenPipeError:
        status = EXIT_FAILURE  # dtbench is gone: nobody to tell
    except InputError as error:
        status = report(events, str(error), "input", EXIT_INPUT)
    except Diverged as error:
        status = report(events, str(error), "diverged", EXIT_FAILURE)
    except Exception as error:  # noqa: BLE001 - every failure is reported to dtbench, then ends the worker
        traceback.print_exc(file=sys.stderr)
        status = report(events, f"{type(error).__name__}: {error}", "failure", EXIT_FAILURE)
    exit_now(status)  # does not return


def report(events: Events, message: str, kind: str, status: int) -> int:
    try:
        events.send("error", message=message, kind=kind)
    except OSError:
        pass
    print(f"worker: {message}", file=sys.stderr)
    return status


def exit_now(status: int) -> None:
    """Ends the process at once, without destroying the Worker or the interpreter's finalization.
    Destroying DDP's reducer joins gloo's threads while this thread holds the GIL, and a gloo thread
    still releasing a Python object (the comm hook's) waits for the GIL: a deadlock after "done" —
    seen in about one run of six with two tests at once, the rank alive until it was killed. All
    the worker had to say is sent and its files written by then; only the output buffers remain."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    exit_now(main())
