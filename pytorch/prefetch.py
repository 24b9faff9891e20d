"""Batches made ahead on a thread of their own, as dtbench's Loader does (core/data/loader.h: two
buffers, the producer fills one while the step trains on the other), or in the step that asks for
them. Either way `next()` returns the batches in order; what it costs the step is the wait.
"""
from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Sequence


class Batches:
    """`make(item)` for each item in order. prefetch: a thread makes them into two slots, as
    dtbench's two buffers: the batch the step holds and the next; the step's next() frees the one
    it held, and only then does the thread make the one after."""

    def __init__(self, make: Callable[[Any], Any], items: Sequence[Any], prefetch: bool) -> None:
        self.make, self.items, self.position = make, list(items), 0
        self.ready: "queue.Queue[tuple]" | None = None
        self.stopped = threading.Event()
        self.free_slots = threading.Semaphore(2)
        if prefetch and self.items:
            self.ready = queue.Queue()
            self.thread = threading.Thread(target=self._produce, name="prefetch", daemon=True)
            self.thread.start()

    def _produce(self) -> None:
        for item in self.items:
            while not self.free_slots.acquire(timeout=0.1):
                if self.stopped.is_set():
                    return
            if self.stopped.is_set():
                return
            try:
                made = (self.make(item), None)
            except Exception as error:  # noqa: BLE001 - handed to the step, which raises it
                made = (None, error)
            self.ready.put(made)
            if made[1] is not None:
                return

    def next(self) -> Any:
        if self.position >= len(self.items):
            raise IndexError(f"all {len(self.items)} batches were taken")
        self.position += 1
        if self.ready is None:
            return self.make(self.items[self.position - 1])
        if self.position > 1:
            self.free_slots.release()  # the batch the step held is done with
        batch, error = self.ready.get()
        if error is not None:
            raise error
        return batch

    def close(self) -> None:
        """Stops the thread, also in the middle of the items (a step limit, a failure)."""
        self.stopped.set()
        if self.ready is not None:
            self.thread.join()
