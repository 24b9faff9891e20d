"""How PyTorch is set up beside dtbench: one place for both runners (the engine, worker.py, and the
step benchmark, scripts/torch_step_bench.py), so that what differs between the engines is the
engines, not the harness around one of them.

Two profiles:
  defaults  PyTorch as its users run it: torch.set_num_threads(T) (the one knob they set), every
            other thread pool (OpenMP's, OpenBLAS's, the inter-op pool), the allocator and the
            precision as the libraries set them; batches made in the step (a DataLoader with no
            workers); zero_grad() after optimizer.step(), inside the update.
  matched   dtbench's settings: T threads in every pool that computes (intra-op, OpenMP, OpenBLAS,
            MKL) and one inter-op thread (dtbench's step runs on one thread); freed memory kept for
            reuse, as dtbench reuses its buffers; the next batch made on a thread of its own while
            the step runs (dtbench's Loader double-buffers); gradients dropped before the forward
            (backward writes them anew, as dtbench's backward overwrites its gradient arena), so
            the update is the optimizer alone; fp32 everywhere.

The thread variables are read by OpenMP and OpenBLAS when torch loads them, so `prepare` must run
before `import torch` (it refuses otherwise); `apply` runs after, with torch.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

PROFILES = ("matched", "defaults")
PRECISIONS = ("fp32", "tf32")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class ParityError(ValueError):
    """A profile, precision or device that cannot be honoured; the message names it."""


@dataclass(frozen=True)
class Settings:
    profile: str
    threads: int          # intra-op threads; 0: the library's choice
    interop_threads: int  # 0: the library's choice
    thread_variables: bool  # OMP/OpenBLAS/MKL pools sized to `threads` before torch loads them
    keep_freed_memory: bool
    prefetch: bool        # the next batch made on a thread while the step runs
    zero_in_update: bool  # zero_grad() after step(), timed as update; else grads dropped before forward
    precision: str        # fp32 | tf32 | library (torch's own: TF32 convolutions, fp32 matmuls on a GPU)

    def line(self) -> str:
        """The settings in one printable line, for headers, reports and provenance."""
        threads = str(self.threads) if self.threads > 0 else "library default"
        pools = f"OMP/OpenBLAS/MKL {self.threads}" if self.thread_variables else "OMP/OpenBLAS/MKL library default"
        interop = str(self.interop_threads) if self.interop_threads > 0 else "library default"
        return (f"pytorch {self.profile}: threads {threads}, {pools}, inter-op {interop}, "
                f"allocator {'keeps freed memory' if self.keep_freed_memory else 'glibc default'}, "
                f"loader {'prefetch thread' if self.prefetch else 'synchronous'}, "
                f"zeroing {'inside update' if self.zero_in_update else 'outside update'}, "
                f"precision {self.precision}")


def settings(profile: str, threads: int, precision: str = "", device: str = "cpu") -> Settings:
    """The settings of `profile` for `threads` (0: one per core under matched, the library's choice
    under defaults). `precision` "" is the profile's own (matched fp32, defaults torch's); tf32 on the
    CPU is refused, as dtbench refuses it: the CPU has no TF32 and torch would silently run fp32."""
    if profile not in PROFILES:
        raise ParityError(f"profile '{profile}': expected one of {', '.join(PROFILES)}")
    if precision not in ("",) + PRECISIONS:
        raise ParityError(f"precision '{precision}': expected one of {', '.join(PRECISIONS)}")
    if precision == "tf32" and device == "cpu":
        raise ParityError("precision 'tf32' needs a GPU (device cuda): the CPU computes in fp32 only")
    if profile == "defaults":
        return Settings(profile, threads, 0, False, False, False, True, precision or "library")
    threads = threads if threads > 0 else len(os.sched_getaffinity(0))
    return Settings(profile, threads, 1, True, True, True, False, precision or "fp32")


def prepare(chosen: Settings) -> None:
    """What must happen before torch is imported: the thread variables (an environment that sets
    one itself wins) and the allocator."""
    if "torch" in sys.modules:
        raise ParityError("parity.prepare must run before torch is imported: OpenMP and OpenBLAS size "
                          "their pools when torch loads them")
    if chosen.thread_variables:
        for name in THREAD_VARIABLES:
            os.environ.setdefault(name, str(chosen.threads))
    if chosen.keep_freed_memory:
        keep_freed_memory()


def apply(chosen: Settings, torch) -> None:
    """What is set through torch: its two pools and the precision of float32 maths."""
    if chosen.interop_threads > 0:
        torch.set_num_interop_threads(chosen.interop_threads)  # first: fixed once parallel work has run
    if chosen.threads > 0:
        torch.set_num_threads(chosen.threads)
    if chosen.precision in PRECISIONS:
        tf32 = chosen.precision == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        torch.set_float32_matmul_precision("high" if tf32 else "highest")


def keep_freed_memory() -> None:
    """glibc's malloc hands large blocks back to the kernel when they are freed (mmap'd blocks,
    heap trimming) and takes them back, page by page, when they are allocated again: every step
    allocates and frees the same activations, and a freshly allocated 800 KB batch was seen taking
    10 ms instead of 0.3. Keeping freed memory in the heap, as a caching allocator (jemalloc,
    tcmalloc, which PyTorch's CPU tuning guide suggests) does, makes the allocations cheap; dtbench's
    engine reuses its buffers the same way. An environment that sets MALLOC_* itself wins."""
    if any(key.startswith("MALLOC_") for key in os.environ):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's malloc.h
        libc.mallopt(m_mmap_threshold, 32 * 2**20)  # glibc's largest: blocks up to 32 MB from the heap
        libc.mallopt(m_trim_threshold, 2**30)  # return freed heap to the kernel only past 1 GB
    except (OSError, AttributeError):
        pass  # not glibc: its allocator as it is
