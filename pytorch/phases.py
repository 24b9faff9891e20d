"""One training step split into dtbench's phases, and the DDP hook that times communication.

  load      the batch: indexing the in-memory arrays, normalising, making the tensors (made in
            the step), or the wait for the prefetch thread to have made it (parity.py)
  forward   the model's forward and the loss (with the batch's correct count, as dtbench's loss)
  backward  autograd's computation: from its start to the moment the last gradient bucket is
            handed to communication (with no buckets: until backward() returns)
  comm      communication not hidden behind backward: from that last hand-over until backward()
            returns (DDP waits there for every bucket's allreduce)
  update    optimizer.step(), and zero_grad() where the profile zeroes inside the update (parity.py)
  other     from the end of the previous step to this one's load: the previous step's event being
            written and, where the profile zeroes outside the update, the gradients dropped
  total     from the end of the previous step (the epoch's start for its first) to this one's end
Every phase is measured from its own clock reads, none is what is left of the step: so the phases
summing to the total is a check (tests/launch/test_cli_pytorch.cpp, pytorch/tests) that fails when
a phase is lost or counted twice on its way to the report, instead of one that holds by definition.
comm_total is the time communication was in progress, hidden or not, as dtbench's comm_total: the
sum over buckets of the span from the bucket's hand-over, or the previous bucket's completion if
later, to its own completion. gloo runs a process group's collectives on two threads, so a bucket
handed over while the one before it is in flight shares the wire with it (a 4 KiB allreduce handed
over after a 128 MiB one completes first): such spans split the time both were in flight, they are
no bucket's own time (the cost model's fit times those buckets together, launch/predict/run_fit.h),
and each completion is paired with its own hand-over, whichever completes first. bucket_spans gives
each bucket's hand-over (ready), start and end, in seconds from backward's start, and its bytes.
"""
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import torch
import torch.distributed as dist

now = time.perf_counter


@dataclass
class BucketTimes:
    """The hand-over and completion times of this step's buckets (perf_counter seconds)."""

    handed: List[float] = field(default_factory=list)
    completed: Dict[int, float] = field(default_factory=dict)  # by the bucket's place in hand-over order
    sizes: List[int] = field(default_factory=list)  # bytes, in hand-over order
    lock: threading.Lock = field(default_factory=threading.Lock)

    def clear(self) -> None:
        with self.lock:
            self.handed.clear()
            self.completed.clear()
            self.sizes.clear()


# No `from __future__ import annotations` in this file: DDP checks the hook's annotations as objects.
def timed_allreduce_hook(state: BucketTimes, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """DDP's default allreduce_hook (torch 1.13, ddp_comm_hooks/default_hooks.py: divide the
    bucket by the world size, then allreduce it asynchronously), timestamping the hand-over and,
    from the future's callback, the completion."""
    handed = now()
    tensor = bucket.buffer()
    with state.lock:
        place = len(state.handed)
        state.handed.append(handed)
        state.sizes.append(tensor.numel() * tensor.element_size())
    tensor.div_(dist.get_world_size())
    future = dist.all_reduce(tensor, async_op=True).get_future()

    def completed(fut: torch.futures.Future) -> torch.Tensor:
        done = now()
        with state.lock:
            state.completed[place] = done
        return fut.value()[0]

    return future.then(completed)


@dataclass
class StepPhases:
    load: float
    forward: float
    backward: float
    comm: float
    update: float
    other: float
    total: float
    comm_total: float
    buckets: int
    bucket_spans: List[List[float]] = field(default_factory=list)  # [ready, start, end, bytes] each


def split_step(start: float, load_start: float, forward_start: float, backward_start: float,
               backward_end: float, step_end: float, buckets: Optional[BucketTimes]) -> StepPhases:
    """The phases from the step's clock reads and its buckets' times (None: no communication).
    `start` is the previous step's end; other runs from it to `load_start`. The update runs from
    backward_end to step_end."""
    backward_compute_end = backward_end
    comm_total, count, spans = 0.0, 0, []
    if buckets is not None:
        with buckets.lock:
            handed, sizes = list(buckets.handed), list(buckets.sizes)
            completed = [buckets.completed[place] for place in range(len(handed))]
        count = len(handed)
        if handed:
            backward_compute_end = min(max(handed), backward_end)
        # A bucket's span starts at its hand-over or at the previous bucket's completion, whichever
        # is later, and ends at its own completion (no earlier than it starts): the spans cover the
        # time any bucket was in flight once.
        previous_done = backward_start
        for given, done, size in zip(handed, completed, sizes):
            begun = min(max(given, previous_done), done)
            comm_total += done - begun
            spans.append([given - backward_start, begun - backward_start, done - backward_start, size])
            previous_done = max(previous_done, done)
    other = load_start - start
    load = forward_start - load_start
    forward = backward_start - forward_start
    backward = backward_compute_end - backward_start
    comm = backward_end - backward_compute_end
    update = step_end - backward_end
    total = step_end - start
    return StepPhases(load, forward, backward, comm, update, other, total, comm_total, count, spans)
