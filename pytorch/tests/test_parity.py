"""parity.py: what each profile sets, that the pools are sized before torch loads them (in a fresh
interpreter, as the runners start), the precision flags, and prefetch.py's batches made ahead."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import unittest

from worker_input import PYTORCH_DIR, TORCH_MISSING

import parity
import prefetch

# In a fresh interpreter without the thread variables: prepare, import torch, apply; print the
# sizes of the pools as torch and OpenBLAS (libblas.so.3, Debian's torch's BLAS) report them.
PROBE = """
import ctypes, json, os, sys
sys.path.insert(0, {dir!r})
import parity
chosen = parity.settings({profile!r}, {threads})
parity.prepare(chosen)
import torch
parity.apply(chosen, torch)
try:
    blas = ctypes.CDLL("libblas.so.3").openblas_get_num_threads()
except (OSError, AttributeError):
    blas = -1
print(json.dumps({{"intra": torch.get_num_threads(), "inter": torch.get_num_interop_threads(), "blas": blas,
                   "omp": os.environ.get("OMP_NUM_THREADS", "")}}))
"""


def probe(profile: str, threads: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in parity.THREAD_VARIABLES}
    out = subprocess.run([sys.executable, "-c", PROBE.format(dir=PYTORCH_DIR, profile=profile, threads=threads)],
                         env=env, capture_output=True, text=True, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


class Profiles(unittest.TestCase):
    def test_each_profile_states_its_settings_in_one_line(self):
        matched = parity.settings("matched", 2).line()
        defaults = parity.settings("defaults", 2).line()
        self.assertEqual(matched, "pytorch matched: threads 2, OMP/OpenBLAS/MKL 2, inter-op 1, allocator keeps freed "
                                  "memory, loader prefetch thread, zeroing outside update, precision fp32")
        self.assertEqual(defaults, "pytorch defaults: threads 2, OMP/OpenBLAS/MKL library default, inter-op library "
                                   "default, allocator glibc default, loader synchronous, zeroing inside update, "
                                   "precision library")
        self.assertNotIn("\n", matched + defaults)

    def test_matched_with_no_thread_count_takes_one_per_core_as_dtbench(self):
        self.assertEqual(parity.settings("matched", 0).threads, len(os.sched_getaffinity(0)))
        self.assertEqual(parity.settings("defaults", 0).threads, 0)

    def test_an_explicit_precision_overrides_the_profile(self):
        self.assertEqual(parity.settings("defaults", 1, "fp32").precision, "fp32")
        self.assertEqual(parity.settings("matched", 1, "tf32", device="cuda").precision, "tf32")

    def test_what_cannot_be_honoured_is_refused_by_name(self):
        with self.assertRaisesRegex(parity.ParityError, "profile 'fast'"):
            parity.settings("fast", 1)
        with self.assertRaisesRegex(parity.ParityError, "precision 'bf16'"):
            parity.settings("matched", 1, "bf16")
        with self.assertRaisesRegex(parity.ParityError, "precision 'tf32' needs a GPU"):
            parity.settings("matched", 1, "tf32", device="cpu")


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class Pools(unittest.TestCase):
    def test_matched_sizes_every_pool_before_torch_loads_them(self):
        got = probe("matched", 1)
        self.assertEqual((got["intra"], got["inter"], got["omp"]), (1, 1, "1"))
        self.assertIn(got["blas"], (1, -1))  # -1: a torch without OpenBLAS, nothing to size

    def test_defaults_leave_every_pool_but_the_intra_op_one_as_the_libraries_size_them(self):
        plain = probe("defaults", 0)  # threads 0: nothing set at all
        got = probe("defaults", 1)
        self.assertEqual((got["intra"], got["omp"]), (1, ""))
        self.assertEqual((got["inter"], got["blas"]), (plain["inter"], plain["blas"]))

    def test_prepare_after_torch_is_refused(self):
        import torch  # noqa: F401 - the point: torch already loaded
        with self.assertRaisesRegex(parity.ParityError, "before torch is imported"):
            parity.prepare(parity.settings("matched", 1))

    def test_precision_sets_the_three_flags(self):
        import torch
        before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
                  torch.get_float32_matmul_precision())
        try:
            parity.apply(parity.settings("defaults", 0, "tf32", device="cuda"), torch)
            self.assertEqual((torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
                              torch.get_float32_matmul_precision()), (True, True, "high"))
            parity.apply(parity.settings("matched", 0), torch)
            self.assertEqual((torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
                              torch.get_float32_matmul_precision()), (False, False, "highest"))
        finally:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before[:2]
            torch.set_float32_matmul_precision(before[2])


class Prefetch(unittest.TestCase):
    def test_both_ways_give_the_batches_in_order(self):
        for ahead in (False, True):
            batches = prefetch.Batches(lambda i: i * i, range(5), ahead)
            self.assertEqual([batches.next() for _ in range(5)], [0, 1, 4, 9, 16])
            with self.assertRaises(IndexError):
                batches.next()
            batches.close()

    def test_the_thread_makes_the_next_batch_while_the_step_holds_one_and_no_more(self):
        made = []
        lock = threading.Lock()

        def make(i):
            with lock:
                made.append(i)
            return i

        batches = prefetch.Batches(make, range(10), True)
        self.assertEqual(batches.next(), 0)
        deadline = time.monotonic() + 30
        while len(made) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # room to run further ahead, were it allowed to
        self.assertEqual(made, [0, 1])  # the step holds 0, 1 is ready: two buffers
        self.assertEqual(batches.next(), 1)  # 0 freed: 2 may be made
        deadline = time.monotonic() + 30
        while len(made) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        self.assertEqual(made, [0, 1, 2])
        batches.close()
        self.assertFalse(batches.thread.is_alive())

    def test_synchronous_batches_are_made_when_asked(self):
        made = []
        batches = prefetch.Batches(lambda i: made.append(i) or i, range(3), False)
        time.sleep(0.05)
        self.assertEqual(made, [])
        batches.next()
        self.assertEqual(made, [0])

    def test_a_failure_in_the_thread_reaches_the_step(self):
        def make(i):
            if i == 1:
                raise ValueError("sample 1 is unreadable")
            return i

        batches = prefetch.Batches(make, range(3), True)
        self.assertEqual(batches.next(), 0)
        with self.assertRaisesRegex(ValueError, "sample 1 is unreadable"):
            batches.next()
        batches.close()


if __name__ == "__main__":
    unittest.main()
