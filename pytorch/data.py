"""The data as dtbench's loader gives it (core/data/): the same files, the same pixels, the same
floats.

Readers of the files dtbench reads (open_dataset.cpp), each plain or gzip-compressed (recognised
by its magic bytes, as dtbench does):
  idx       {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (or the train.images-idx3-ubyte
            spelling); big-endian header, then bytes. Ten classes.
  cifar10   data_batch_1..5.bin, test_batch.bin: records of <label> <3072 pixels>
  cifar100  train.bin, test.bin: records of <coarse> <fine> <3072 pixels>, read with the fine label
            (CIFAR files are looked for in the directory, or under cifar-10-batches-bin/ /
            cifar-100-binary/ when that holds them.)
A batch is made as dtbench's Loader::fill makes it: uint8 pixels -> (augment) the crop of the image
zero-padded by 4 and flip dtbench drew for the sample -> (v / 255 - mean[c]) / std[c],
each operation in float32 (dtbench looks the value up in a table computed so) -> bilinear resize
(half-pixel centres, float32, dtbench's resize_bilinear) when resize > 0.
"""
from __future__ import annotations

import gzip
import os
import struct
from dataclasses import dataclass
from typing import List, Sequence, Tuple

import numpy as np

IDX_IMAGES_MAGIC = 0x00000803
IDX_LABELS_MAGIC = 0x00000801
CIFAR_PIXELS = 3 * 32 * 32


class DataError(ValueError):
    """A missing or malformed data file, naming it and what was expected."""


@dataclass
class Dataset:
    pixels: np.ndarray  # (N, C, H, W) uint8
    labels: np.ndarray  # (N,) int64
    classes: int
    name: str

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    @property
    def sample_shape(self) -> Tuple[int, int, int]:
        _, c, h, w = self.pixels.shape
        return int(c), int(h), int(w)


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        raw = f.read()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def _find_one_of(directory: str, names: Sequence[str]) -> str:
    for name in names:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    return ""


def read_idx_pair(images_path: str, labels_path: str, classes: int = 10) -> Tuple[np.ndarray, np.ndarray]:
    images = _read_bytes(images_path)
    labels = _read_bytes(labels_path)
    if len(images) < 16:
        raise DataError(f"{images_path}: expected an IDX image file (16-byte header), got {len(images)} bytes")
    magic, count, height, width = struct.unpack(">IIII", images[:16])
    if magic != IDX_IMAGES_MAGIC:
        raise DataError(f"{images_path}: expected IDX image magic 0x{IDX_IMAGES_MAGIC:08x}, found 0x{magic:08x}")
    if len(images) != 16 + count * height * width:
        raise DataError(f"{images_path}: expected {16 + count * height * width} bytes for {count} images of "
                        f"{height}x{width}, found {len(images)}")
    if len(labels) < 8:
        raise DataError(f"{labels_path}: expected an IDX label file (8-byte header), got {len(labels)} bytes")
    magic, label_count = struct.unpack(">II", labels[:8])
    if magic != IDX_LABELS_MAGIC:
        raise DataError(f"{labels_path}: expected IDX label magic 0x{IDX_LABELS_MAGIC:08x}, found 0x{magic:08x}")
    if label_count != count or len(labels) != 8 + count:
        raise DataError(f"{labels_path}: expected {count} labels (as {images_path} has images), found {label_count}")
    pixels = np.frombuffer(images, dtype=np.uint8, offset=16).reshape(count, 1, height, width)
    label_array = np.frombuffer(labels, dtype=np.uint8, offset=8).astype(np.int64)
    if label_count and int(label_array.max()) >= classes:
        raise DataError(f"{labels_path}: labels must lie in 0..{classes - 1}, found {int(label_array.max())}")
    return pixels, label_array


def read_cifar(paths: Sequence[str], fine: bool) -> Tuple[np.ndarray, np.ndarray]:
    label_bytes = 2 if fine else 1
    record = label_bytes + CIFAR_PIXELS
    classes = 100 if fine else 10
    parts: List[np.ndarray] = []
    for path in paths:
        raw = _read_bytes(path)
        if len(raw) % record:
            raise DataError(f"{path}: expected a whole number of {record}-byte records, found {len(raw)} bytes")
        parts.append(np.frombuffer(raw, dtype=np.uint8).reshape(-1, record))
    records = np.concatenate(parts) if len(parts) > 1 else parts[0]
    labels = records[:, label_bytes - 1].astype(np.int64)  # CIFAR-100: the fine label, the second byte
    if labels.size and int(labels.max()) >= classes:
        raise DataError(f"{', '.join(paths)}: labels must lie in 0..{classes - 1}, found {int(labels.max())}")
    pixels = np.ascontiguousarray(records[:, label_bytes:]).reshape(-1, 3, 32, 32)
    return pixels, labels


def open_dataset(fmt: str, path: str) -> Tuple[Dataset, Dataset]:
    """The training and test sets in `path`, found as dtbench finds them."""
    if not os.path.isdir(path):
        raise DataError(f"data set directory {path} does not exist (format {fmt})")
    if fmt == "idx":
        found, missing = [], []
        for split in ("train", "t10k"):
            for kind in ("images-idx3", "labels-idx1"):
                hyphen, dot = f"{split}-{kind}-ubyte", f"{split}.{kind}-ubyte"
                found.append(_find_one_of(path, [hyphen, hyphen + ".gz", dot, dot + ".gz"]))
                if not found[-1]:
                    missing.append(hyphen + "[.gz]")
        if missing:
            raise DataError(f"idx data set incomplete in {path}: not found: {', '.join(missing)}")
        train = Dataset(*read_idx_pair(found[0], found[1]), classes=10, name="idx train")
        test = Dataset(*read_idx_pair(found[2], found[3]), classes=10, name="idx test")
        return train, test
    if fmt in ("cifar10", "cifar100"):
        fine = fmt == "cifar100"
        train_names = ["train.bin"] if fine else [f"data_batch_{i}.bin" for i in range(1, 6)]
        test_names = ["test.bin"] if fine else ["test_batch.bin"]
        subdir = "cifar-100-binary" if fine else "cifar-10-batches-bin"
        root = path
        last = test_names[-1]
        if not os.path.exists(os.path.join(path, last)) and os.path.exists(os.path.join(path, subdir, last)):
            root = os.path.join(path, subdir)
        missing = [n for n in train_names + test_names if not os.path.isfile(os.path.join(root, n))]
        if missing:
            raise DataError(f"{fmt} data set incomplete in {root}: not found: {', '.join(missing)} "
                            f"(also looked under {subdir}/)")
        classes = 100 if fine else 10
        train = Dataset(*read_cifar([os.path.join(root, n) for n in train_names], fine), classes, f"{fmt} train")
        test = Dataset(*read_cifar([os.path.join(root, n) for n in test_names], fine), classes, f"{fmt} test")
        return train, test
    raise DataError(f"unknown data format '{fmt}': expected idx, cifar10 or cifar100")


def compute_normalization(train: Dataset) -> Tuple[List[float], List[float]]:
    """dtbench's compute_normalization: per channel, the mean and population standard deviation of
    every pixel, from exact integer sums, in units of x / 255 (float32); stddev 1 for a constant
    channel. The worker is given these in its config; tests use this to make that config."""
    n, c, h, w = train.pixels.shape
    means, stds = [], []
    count = float(n * h * w)
    for channel in range(c):
        plane = train.pixels[:, channel].astype(np.uint64)
        total = int(plane.sum())
        squares = int((plane * plane).sum())
        mean = total / count
        variance = max(0.0, squares / count - mean * mean)
        std = variance ** 0.5
        means.append(float(np.float32(mean / 255.0)))
        stds.append(float(np.float32(std / 255.0)) if std > 1e-9 else 1.0)
    return means, stds


def normalization_table(mean: Sequence[float], std: Sequence[float]) -> np.ndarray:
    """(C, 256) float32: table[c, v] = (v / 255 - mean[c]) / std[c], each operation in float32,
    as dtbench's normalization_table computes it."""
    values = np.arange(256, dtype=np.float32) / np.float32(255.0)
    mean32 = np.asarray(mean, dtype=np.float32)[:, None]
    std32 = np.asarray(std, dtype=np.float32)[:, None]
    return ((values[None, :] - mean32) / std32).astype(np.float32)


def _taps(in_size: int, out_size: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    # dtbench's tap(): source = clamp((o + 0.5) * in/out - 0.5, 0, in - 1) in float32, its floor,
    # the next pixel (clamped) and the fraction between them.
    scale = np.float32(in_size) / np.float32(out_size)
    o = np.arange(out_size, dtype=np.float32)
    source = (o + np.float32(0.5)) * scale - np.float32(0.5)
    source = np.clip(source, np.float32(0.0), np.float32(in_size - 1)).astype(np.float32)
    low = source.astype(np.int64)
    high = np.minimum(low + 1, in_size - 1)
    return low, high, (source - low.astype(np.float32)).astype(np.float32)


def resize_bilinear(images: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """(B, C, H, W) float32 -> (B, C, out_h, out_w), dtbench's resize_bilinear: half-pixel centres
    (PyTorch's align_corners=False without antialiasing), a + w * (b - a) in float32 so that a
    constant image stays exactly constant."""
    _, _, in_h, in_w = images.shape
    ylow, yhigh, wy = _taps(in_h, out_h)
    xlow, xhigh, wx = _taps(in_w, out_w)
    upper, lower = images[:, :, ylow, :], images[:, :, yhigh, :]
    top = upper[..., xlow] + wx * (upper[..., xhigh] - upper[..., xlow])
    bottom = lower[..., xlow] + wx * (lower[..., xhigh] - lower[..., xlow])
    return (top + wy[:, None] * (bottom - top)).astype(np.float32, copy=False)


class BatchMaker:
    """Normalised (and resized) float32 batches of a data set, by sample index."""

    def __init__(self, data: Dataset, mean: Sequence[float], std: Sequence[float], resize: int) -> None:
        channels = data.sample_shape[0]
        if len(mean) != channels or len(std) != channels:
            raise DataError(f"normalisation statistics for {len(mean)} channels ({len(std)} stddevs) do not fit "
                            f"{data.name}, whose samples are {data.sample_shape}")
        if any(not (s > 0) for s in std):
            raise DataError(f"normalisation stddev must be positive, got {list(std)}")
        self.data = data
        self.table = normalization_table(mean, std)
        self.mean = np.asarray(mean, dtype=np.float32).reshape(1, -1, 1, 1)
        self.std = np.asarray(std, dtype=np.float32).reshape(1, -1, 1, 1)
        self.resize = resize

    @property
    def sample_shape(self) -> Tuple[int, int, int]:
        c, h, w = self.data.sample_shape
        return (c, self.resize, self.resize) if self.resize > 0 else (c, h, w)

    def images(self, indices: np.ndarray, crops: np.ndarray | None = None) -> np.ndarray:
        """The samples `indices`; `crops` (B, 3) uint8 rows of (dy, dx, flip) crop and flip them
        first, as dtbench's augmentation."""
        raw = self.data.pixels[indices]  # (B, C, H, W) uint8
        if crops is not None:
            raw = crop_flip(raw, crops)
        # The table's formula, computed in float32 in the same order: the same floats as a lookup
        # (tests check every value), with no gather from the table.
        out = raw.astype(np.float32)
        out /= np.float32(255.0)
        out -= self.mean
        out /= self.std
        if self.resize > 0:
            out = resize_bilinear(out, self.resize, self.resize)
        return out

    def labels(self, indices: np.ndarray) -> np.ndarray:
        return self.data.labels[indices]


AUGMENT_PAD = 4  # dtbench's kAugmentPad


def crop_flip(raw: np.ndarray, crops: np.ndarray) -> np.ndarray:
    """dtbench's crop_flip (core/data/transforms.h) of each image of raw (B, C, H, W) uint8:
    out(c, y, x) = padded(c, y + dy, x' + dx), x' = W - 1 - x when flipped, padded the image with
    AUGMENT_PAD zeros on every side: the crop, then the flip."""
    b, _, h, w = raw.shape
    padded = np.pad(raw, ((0, 0), (0, 0), (AUGMENT_PAD, AUGMENT_PAD), (AUGMENT_PAD, AUGMENT_PAD)))
    out = np.empty_like(raw)
    for i in range(b):
        dy, dx, flip = (int(v) for v in crops[i])
        crop = padded[i, :, dy:dy + h, dx:dx + w]
        out[i] = crop[:, :, ::-1] if flip else crop
    return out


def read_crop_flips(path: str, samples: int) -> np.ndarray:
    """An epoch's crops and flips, (samples, 3) uint8 rows of (dy, dx, flip), checked."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) != 3 * samples:
        raise DataError(f"{path}: expected 3 bytes (dy, dx, flip) for each of the epoch's {samples} samples, "
                        f"found {len(raw)} bytes")
    crops = np.frombuffer(raw, dtype=np.uint8).reshape(samples, 3)
    if samples and (int(crops[:, :2].max()) > 2 * AUGMENT_PAD or int(crops[:, 2].max()) > 1):
        raise DataError(f"{path}: dy and dx must lie in 0..{2 * AUGMENT_PAD} and flip in 0..1")
    return crops


def read_order(path: str, samples: int) -> np.ndarray:
    """An epoch's sample indices (int64 little-endian), each checked to lie in the training set."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) % 8:
        raise DataError(f"{path}: expected int64 sample indices (a multiple of 8 bytes), found {len(raw)} bytes")
    order = np.frombuffer(raw, dtype="<i8").astype(np.int64)
    if order.size and (int(order.min()) < 0 or int(order.max()) >= samples):
        raise DataError(f"{path}: sample indices must lie in 0..{samples - 1} (the training set), "
                        f"found {int(order.min())}..{int(order.max())}")
    return order


def test_batches(samples: int, batch: int, max_samples: int) -> List[Tuple[int, int]]:
    """The evaluation's batches as [start, end) ranges, as dtbench evaluates: the test set in file
    order in batches of min(batch, n) where n is the whole set or max_samples (when > 0 and
    smaller), the last batch possibly smaller, and evaluation stops before a batch that would
    take it past max_samples."""
    limit = min(max_samples, samples) if max_samples > 0 else samples
    size = min(batch, limit)
    ranges, start = [], 0
    while start < samples:
        end = min(start + size, samples)
        if max_samples > 0 and end > max_samples:
            break
        ranges.append((start, end))
        start = end
    return ranges
