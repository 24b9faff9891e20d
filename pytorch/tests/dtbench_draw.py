"""dtbench's sample order, ported for tests (dtbench computes the order files itself):
core/util/rng.h (splitmix64 seeding xoshiro256**) and core/data/shard.h (one shared permutation
per (seed, epoch), Fisher-Yates; rank r takes every world-th sample from r, size // world in all).
"""
from __future__ import annotations

from typing import List

import numpy as np

MASK = (1 << 64) - 1
SHARD_STREAM = 0x5348415244  # "SHARD"


class Rng:
    def __init__(self, seed: int) -> None:
        self.state = []
        seed &= MASK
        for _ in range(4):
            seed = (seed + 0x9E3779B97F4A7C15) & MASK
            z = seed
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
            self.state.append(z ^ (z >> 31))

    @staticmethod
    def derive(seed: int, stream_a: int, stream_b: int = 0) -> "Rng":
        return Rng(seed ^ ((stream_a * 0xD1B54A32D192ED03) & MASK) ^ ((stream_b * 0x8CB92BA72F3D8DD7) & MASK))

    def next_u64(self) -> int:
        s0, s1, s2, s3 = self.state
        x = (s1 * 5) & MASK
        result = ((((x << 7) | (x >> 57)) & MASK) * 9) & MASK
        t = (s1 << 17) & MASK
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = ((s3 << 45) | (s3 >> 19)) & MASK
        self.state = [s0, s1, s2, s3]
        return result

    def below(self, bound: int) -> int:
        return self.next_u64() % bound


def shard_indices(size: int, rank: int, world: int, seed: int, epoch: int, shuffle: bool = True) -> np.ndarray:
    order: List[int] = list(range(size))
    if shuffle:
        rng = Rng.derive(seed, SHARD_STREAM, epoch)
        for i in range(size, 1, -1):
            j = rng.below(i)
            order[i - 1], order[j] = order[j], order[i - 1]
    shard = size // world
    return np.asarray([order[rank + k * world] for k in range(shard)], dtype=np.int64)


def write_orders(directory: str, size: int, rank: int, world: int, seed: int, epochs: int) -> None:
    """order-1.bin .. order-<epochs>.bin as dtbench writes them (the loader's epochs count from 1)."""
    for epoch in range(1, epochs + 1):
        shard_indices(size, rank, world, seed, epoch).astype("<i8").tofile(f"{directory}/order-{epoch}.bin")
