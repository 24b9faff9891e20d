"""The worker's data: dtbench's files read as dtbench reads them, and its floats made as dtbench
makes them (normalisation table, bilinear resize, evaluation batches, sample order)."""
from __future__ import annotations

import gzip
import os
import tempfile
import unittest

from worker_input import TORCH_MISSING, write_idx_set

if not TORCH_MISSING:
    import numpy as np
    import torch

    import data
    from dtbench_draw import Rng, shard_indices


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class Readers(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_idx_plain_and_gzip_read_the_same(self):
        plain = write_idx_set(os.path.join(self.dir, "plain"), 20, 5, seed=3)
        packed = write_idx_set(os.path.join(self.dir, "gz"), 20, 5, gzip_files=True, seed=3)
        a_train, a_test = data.open_dataset("idx", plain)
        b_train, b_test = data.open_dataset("idx", packed)
        self.assertEqual(a_train.pixels.shape, (20, 1, 28, 28))
        self.assertEqual(a_test.sample_shape, (1, 28, 28))
        np.testing.assert_array_equal(a_train.pixels, b_train.pixels)
        np.testing.assert_array_equal(a_test.labels, b_test.labels)
        self.assertEqual(a_train.classes, 10)

    def test_idx_dot_spelling_is_found(self):
        d = write_idx_set(os.path.join(self.dir, "dot"), 4, 2)
        os.rename(os.path.join(d, "train-images-idx3-ubyte"), os.path.join(d, "train.images-idx3-ubyte"))
        self.assertEqual(len(data.open_dataset("idx", d)[0]), 4)

    def test_idx_missing_file_is_named(self):
        d = write_idx_set(os.path.join(self.dir, "missing"), 4, 2)
        os.remove(os.path.join(d, "t10k-labels-idx1-ubyte"))
        with self.assertRaisesRegex(data.DataError, r"not found: t10k-labels-idx1-ubyte\[\.gz\]"):
            data.open_dataset("idx", d)

    def test_idx_bad_magic_is_named(self):
        d = write_idx_set(os.path.join(self.dir, "magic"), 4, 2)
        with open(os.path.join(d, "train-images-idx3-ubyte"), "r+b") as f:
            f.write(b"\x00\x00\x08\x01")
        with self.assertRaisesRegex(data.DataError, "expected IDX image magic 0x00000803, found 0x00000801"):
            data.open_dataset("idx", d)

    def write_cifar(self, path: str, labels: list, fine: bool, compress: bool = False) -> np.ndarray:
        pixels = np.random.default_rng(len(labels)).integers(0, 256, (len(labels), 3072), dtype=np.uint8)
        rows = []
        for label, row in zip(labels, pixels):
            head = bytes([label // 5, label]) if fine else bytes([label])
            rows.append(head + row.tobytes())
        raw = b"".join(rows)
        with open(path, "wb") as f:
            f.write(gzip.compress(raw) if compress else raw)
        return pixels.reshape(-1, 3, 32, 32)

    def test_cifar10_from_its_subdirectory_in_file_order(self):
        root = os.path.join(self.dir, "cifar-10-batches-bin")
        os.makedirs(root)
        written = [self.write_cifar(os.path.join(root, f"data_batch_{i}.bin"), [i, 9 - i], fine=False)
                   for i in range(1, 6)]
        self.write_cifar(os.path.join(root, "test_batch.bin"), [3], fine=False, compress=True)
        train, test = data.open_dataset("cifar10", self.dir)
        self.assertEqual(list(train.labels), [1, 8, 2, 7, 3, 6, 4, 5, 5, 4])
        np.testing.assert_array_equal(train.pixels[2:4], written[1])
        self.assertEqual((len(test), test.sample_shape, test.classes), (1, (3, 32, 32), 10))

    def test_cifar100_reads_the_fine_label(self):
        self.write_cifar(os.path.join(self.dir, "train.bin"), [99, 0, 57], fine=True)
        self.write_cifar(os.path.join(self.dir, "test.bin"), [12], fine=True)
        train, test = data.open_dataset("cifar100", self.dir)
        self.assertEqual(list(train.labels), [99, 0, 57])
        self.assertEqual(test.classes, 100)

    def test_cifar_partial_record_is_refused(self):
        self.write_cifar(os.path.join(self.dir, "train.bin"), [1], fine=True)
        with open(os.path.join(self.dir, "test.bin"), "wb") as f:
            f.write(b"\x00" * 100)
        with self.assertRaisesRegex(data.DataError, "whole number of 3074-byte records"):
            data.open_dataset("cifar100", self.dir)


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class Floats(unittest.TestCase):
    def test_normalization_table_is_the_float32_formula(self):
        table = data.normalization_table([0.2860406], [0.3530242])
        for v in (0, 1, 128, 254, 255):
            expected = (np.float32(v) / np.float32(255) - np.float32(0.2860406)) / np.float32(0.3530242)
            self.assertEqual(table[0, v], expected)

    def test_batches_are_the_table_for_every_pixel_value(self):
        pixels = np.arange(3 * 256, dtype=np.int64).reshape(1, 3, 16, 16) % 256
        pixels = pixels.astype(np.uint8)
        mean, std = [0.4913997, 0.4821584, 0.4465309], [0.2470322, 0.2434851, 0.2615878]
        maker = data.BatchMaker(data.Dataset(pixels, np.zeros(1, np.int64), 10, "t"), mean, std, 0)
        got = maker.images(np.array([0]))[0]
        table = data.normalization_table(mean, std)
        for c in range(3):
            np.testing.assert_array_equal(got[c], table[c][pixels[0, c]])

    def test_compute_normalization_from_integer_sums(self):
        pixels = np.zeros((2, 2, 1, 2), dtype=np.uint8)
        pixels[:, 0] = [[0, 255]]
        pixels[:, 1] = 7  # a constant channel: stddev 1
        mean, std = data.compute_normalization(data.Dataset(pixels, np.zeros(2, np.int64), 10, "t"))
        self.assertAlmostEqual(mean[0], 0.5, places=7)
        self.assertAlmostEqual(std[0], 0.5, places=7)
        self.assertEqual(std[1], 1.0)

    def scalar_resize(self, image: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
        """dtbench's resize_bilinear loop by loop, in float32."""
        f = np.float32
        c_count, in_h, in_w = image.shape

        def tap(o, n_in, n_out):
            s = min(max((f(o) + f(0.5)) * (f(n_in) / f(n_out)) - f(0.5), f(0)), f(n_in - 1))
            low = int(s)
            return low, min(low + 1, n_in - 1), f(s - f(low))

        out = np.zeros((c_count, out_h, out_w), np.float32)
        for c in range(c_count):
            for y in range(out_h):
                yl, yh, wy = tap(y, in_h, out_h)
                for x in range(out_w):
                    xl, xh, wx = tap(x, in_w, out_w)
                    top = image[c, yl, xl] + wx * (image[c, yl, xh] - image[c, yl, xl])
                    bottom = image[c, yh, xl] + wx * (image[c, yh, xh] - image[c, yh, xl])
                    out[c, y, x] = top + wy * (bottom - top)
        return out

    def test_resize_is_dtbench_loop_bit_for_bit(self):
        image = np.random.default_rng(1).standard_normal((2, 3, 7, 5)).astype(np.float32)
        for out_h, out_w in ((14, 10), (4, 3), (7, 5)):
            got = data.resize_bilinear(image, out_h, out_w)
            for b in range(2):
                np.testing.assert_array_equal(got[b], self.scalar_resize(image[b], out_h, out_w))

    def test_resize_agrees_with_torch_half_pixel_bilinear(self):
        image = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype(np.float32)
        ours = data.resize_bilinear(image, 64, 64)
        theirs = torch.nn.functional.interpolate(torch.from_numpy(image), size=(64, 64), mode="bilinear",
                                                 align_corners=False).numpy()
        np.testing.assert_allclose(ours, theirs, atol=1e-5)

    def test_resize_keeps_a_constant_image_constant(self):
        image = np.full((1, 1, 28, 28), 0.3712, np.float32)
        self.assertTrue(np.all(data.resize_bilinear(image, 64, 64) == np.float32(0.3712)))

    def test_crop_flip_is_dtbench_formula_for_every_pixel(self):
        raw = np.random.default_rng(5).integers(1, 256, (4, 2, 6, 5), dtype=np.uint8)
        crops = np.array([[4, 4, 0], [0, 8, 1], [8, 0, 0], [3, 6, 1]], dtype=np.uint8)
        got = data.crop_flip(raw, crops)
        pad = data.AUGMENT_PAD
        for i, (dy, dx, flip) in enumerate(crops.astype(int)):
            for c in range(2):
                for y in range(6):
                    for x in range(5):
                        sy, sx = y + dy - pad, (5 - 1 - x if flip else x) + dx - pad
                        inside = 0 <= sy < 6 and 0 <= sx < 5
                        self.assertEqual(got[i, c, y, x], raw[i, c, sy, sx] if inside else 0, (i, c, y, x))
        np.testing.assert_array_equal(got[0], raw[0])  # dy = dx = pad, no flip: the identity

    def test_batch_maker_normalises_then_resizes(self):
        pixels = np.random.default_rng(4).integers(0, 256, (3, 1, 28, 28), dtype=np.uint8)
        maker = data.BatchMaker(data.Dataset(pixels, np.arange(3), 10, "t"), [0.25], [0.5], 32)
        got = maker.images(np.array([2, 0]))
        table = data.normalization_table([0.25], [0.5])
        expected = data.resize_bilinear(table[0][pixels[[2, 0]]], 32, 32)
        np.testing.assert_array_equal(got, expected)
        self.assertEqual(maker.sample_shape, (1, 32, 32))


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class Batches(unittest.TestCase):
    def test_evaluation_batches_as_dtbench(self):
        self.assertEqual(data.test_batches(10, 4, 0), [(0, 4), (4, 8), (8, 10)])
        # eval.max_samples: batches no larger than it, and none that would pass it.
        self.assertEqual(data.test_batches(10000, 64, 100), [(0, 64)])
        self.assertEqual(data.test_batches(10000, 64, 50), [(0, 50)])
        self.assertEqual(data.test_batches(10, 4, 9), [(0, 4), (4, 8)])
        self.assertEqual(data.test_batches(10, 64, 0), [(0, 10)])

    def test_order_file_checks_its_indices(self):
        with tempfile.NamedTemporaryFile(suffix=".bin") as f:
            np.array([0, 5, 9], dtype="<i8").tofile(f.name)
            self.assertEqual(list(data.read_order(f.name, 10)), [0, 5, 9])
            with self.assertRaisesRegex(data.DataError, r"must lie in 0\.\.8"):
                data.read_order(f.name, 9)


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class Draw(unittest.TestCase):
    """The test helper's port of dtbench's generator and shard (the numerics tests show it gives
    dtbench's batches; these pin the generator to its published definitions)."""

    def test_splitmix64_seeding(self):
        # splitmix64's first output from state 0 is 0xe220a8397b1dcdaf.
        self.assertEqual(Rng(0).state[0], 0xE220A8397B1DCDAF)

    def test_xoshiro256_starstar_reference_sequence(self):
        rng = Rng(0)
        rng.state = [1, 2, 3, 4]
        self.assertEqual([rng.next_u64() for _ in range(4)], [11520, 0, 1509978240, 1215971899390074240])

    def test_shards_are_disjoint_strides_of_one_permutation(self):
        ranks = [shard_indices(103, r, 3, seed=7, epoch=2) for r in range(3)]
        self.assertTrue(all(len(r) == 34 for r in ranks))
        together = np.concatenate(ranks)
        self.assertEqual(len(set(together.tolist())), 102)
        whole = shard_indices(103, 0, 1, seed=7, epoch=2)
        np.testing.assert_array_equal(ranks[1], whole[1::3][:34])
        self.assertFalse(np.array_equal(whole, shard_indices(103, 0, 1, seed=7, epoch=3)))


if __name__ == "__main__":
    unittest.main()
