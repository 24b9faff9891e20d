"""Weights in dtbench's arena layout: one float32 little-endian block, every parameter at its
offset (in floats) as parameters.json says, the alignment padding between them zero.

The PyTorch modules (models.py) name and shape every parameter as dtbench does, so a parameter
maps to its arena slice by name, reshaped, with no transpose.
"""
from __future__ import annotations

import json
import zlib
from typing import Dict, List

import numpy as np
import torch
from torch import nn


class LayoutError(ValueError):
    """parameters.json or the weights file does not fit the model."""


def read_layout(path: str) -> List[dict]:
    with open(path) as f:
        layout = json.load(f)
    if not isinstance(layout, list):
        raise LayoutError(f"{path}: expected a JSON list of parameters, got {type(layout).__name__}")
    for i, entry in enumerate(layout):
        for key in ("name", "shape", "offset", "count"):
            if not isinstance(entry, dict) or key not in entry:
                raise LayoutError(f"{path}: parameter {i} lacks '{key}' (expected name, shape, offset, count)")
    return layout


def check_layout(layout: List[dict], model: nn.Module, arena_floats: int) -> None:
    """Every model parameter appears once, with its shape and count, inside the arena; nothing else."""
    params: Dict[str, nn.Parameter] = dict(model.named_parameters())
    seen = set()
    for entry in layout:
        name = entry["name"]
        if name not in params:
            raise LayoutError(f"parameters.json names '{name}', which the PyTorch model lacks "
                              f"(its first parameters: {', '.join(list(params)[:4])}, ...)")
        if name in seen:
            raise LayoutError(f"parameters.json names '{name}' twice")
        seen.add(name)
        shape = [int(s) for s in entry["shape"]]
        if shape != list(params[name].shape):
            raise LayoutError(f"parameters.json gives '{name}' shape {shape}; the PyTorch model's is "
                              f"{list(params[name].shape)}")
        count, offset = int(entry["count"]), int(entry["offset"])
        if count != params[name].numel():
            raise LayoutError(f"parameters.json gives '{name}' {count} floats; its shape {shape} holds "
                              f"{params[name].numel()}")
        if offset < 0 or offset + count > arena_floats:
            raise LayoutError(f"parameters.json places '{name}' at floats {offset}..{offset + count}, outside the "
                              f"arena of {arena_floats} floats (init-weights.bin)")
    missing = [name for name in params if name not in seen]
    if missing:
        raise LayoutError(f"parameters.json lacks {len(missing)} of the model's parameters, e.g. {missing[0]}")


def read_arena(path: str) -> np.ndarray:
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) % 4:
        raise LayoutError(f"{path}: expected float32 values (a multiple of 4 bytes), found {len(raw)} bytes")
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


@torch.no_grad()
def load_arena(model: nn.Module, layout: List[dict], arena: np.ndarray) -> None:
    params = dict(model.named_parameters())
    for entry in layout:
        offset, count = int(entry["offset"]), int(entry["count"])
        values = torch.from_numpy(arena[offset:offset + count].copy())
        params[entry["name"]].copy_(values.view(params[entry["name"]].shape))


@torch.no_grad()
def arena_of(model: nn.Module, layout: List[dict], arena_floats: int) -> np.ndarray:
    """The model's weights as dtbench's arena (padding zero)."""
    arena = np.zeros(arena_floats, dtype=np.float32)
    params = dict(model.named_parameters())
    for entry in layout:
        offset, count = int(entry["offset"]), int(entry["count"])
        arena[offset:offset + count] = params[entry["name"]].detach().reshape(-1).numpy()
    return arena


def checksum(arena: np.ndarray) -> str:
    """CRC-32 (zlib's, the IEEE polynomial) of the arena's float32 little-endian bytes, 8 hex
    digits. Cheap in Python for 100+ MB (FNV-1a, dtbench's weights checksum, is not: it runs a
    byte at a time), and one call in C++ through zlib: crc32(crc32(0, nullptr, 0), bytes, size)."""
    return f"{zlib.crc32(arena.astype('<f4', copy=False).tobytes()) & 0xFFFFFFFF:08x}"


def write_arena(path: str, arena: np.ndarray) -> None:
    with open(path, "wb") as f:
        f.write(arena.astype("<f4", copy=False).tobytes())
