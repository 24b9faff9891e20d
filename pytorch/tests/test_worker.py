"""worker.py as dtbench drives it: the input directory, the events, "go" before every epoch, the
final weights, and every kind of bad input named with exit status 2."""
from __future__ import annotations

import json
import os
import tempfile
import unittest
import zlib

from worker_input import TORCH_MISSING, idx_data, run_worker, start_worker, write_idx_set, write_input

if not TORCH_MISSING:
    import numpy as np

PHASES = ("load", "forward", "backward", "comm", "update", "other")


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class Worker(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        # 200 training samples: batches of 32 give 6 steps an epoch (8 samples dropped).
        cls.data_dir = write_idx_set(os.path.join(cls.tmp.name, "idx"), 200, 50, seed=1)
        cls.data = idx_data(cls.data_dir)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def input(self, name: str, model: str = "mlp", **overrides):
        settings = {"batch": 32, "train_size": 200}
        settings.update(overrides)
        shape = settings.pop("input", [1, 28, 28])
        return write_input(os.path.join(self.tmp.name, name), model, shape, 10,
                           settings.pop("data", self.data), **settings)

    def test_epochs_steps_and_the_final_weights(self):
        directory, _ = self.input("run", epochs=2, eval_max_samples=40,
                                  save_weights_path=os.path.join(self.tmp.name, "run.bin"))
        status, events, stderr = run_worker(directory)
        self.assertEqual(status, 0, stderr)
        kinds = [e["event"] for e in events]
        self.assertEqual(kinds, ["ready"] + ["step"] * 6 + ["epoch"] + ["step"] * 6 + ["epoch", "done"])
        ready = events[0]
        self.assertEqual((ready["parameters"], ready["threads"], ready["epochs"], ready["steps"]), (109386, 1, 2, 12))
        steps = [e for e in events if e["event"] == "step"]
        self.assertEqual([e["step"] for e in steps], list(range(12)))
        self.assertEqual([e["epoch"] for e in steps], [1] * 6 + [2] * 6)
        for step in steps:
            self.assertTrue(all(step[p] >= 0 for p in PHASES))
            self.assertAlmostEqual(sum(step[p] for p in PHASES), step["total"], delta=1e-9)
            self.assertEqual((step["comm"], step["comm_total"], step["buckets"], step["images"]), (0, 0, 0, 32))
            self.assertTrue(0 <= step["correct"] <= 32 and step["loss"] > 0)
        epoch = events[7]
        self.assertEqual(epoch["epoch"], 1)
        self.assertLessEqual(epoch["start_unix_s"], epoch["steps_end_unix_s"])
        self.assertLessEqual(epoch["steps_end_unix_s"], epoch["end_unix_s"])
        # Batches of min(32, 40) = 32; a second would pass 40.
        self.assertEqual(epoch["test_samples"], 32)
        self.assertAlmostEqual(epoch["train_loss"], sum(s["loss"] for s in steps[:6]) / 6, places=6)
        self.assertAlmostEqual(epoch["train_accuracy"], sum(s["correct"] for s in steps[:6]) / 192)
        with open(os.path.join(self.tmp.name, "run.bin"), "rb") as f:
            final = f.read()
        self.assertEqual(len(final), os.path.getsize(os.path.join(directory, "init-weights.bin")))
        self.assertEqual(events[-1]["weights_checksum"], f"{zlib.crc32(final):08x}")
        self.assertEqual(events[-1]["weights_path"], os.path.join(self.tmp.name, "run.bin"))

    def test_both_profiles_train_the_same_weights_and_say_which_they_ran(self):
        # Zeroed gradients inside the update or dropped before the forward, batches made in the
        # step or ahead on a thread: the same batches, the same arithmetic, the same weights. The
        # pools are sized alike from outside (OpenBLAS splits a product differently on 2 threads).
        checksums = {}
        saved = {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
        os.environ.update({name: "1" for name in saved})
        self.addCleanup(lambda: [os.environ.pop(name) if value is None else os.environ.update({name: value})
                                 for name, value in saved.items()])
        for profile in ("defaults", "matched"):
            directory, _ = self.input(f"profile-{profile}", pytorch={"profile": profile},
                                      optimizer={"name": "sgd", "lr": 0.05, "momentum": 0.9})
            status, events, stderr = run_worker(directory)
            self.assertEqual(status, 0, stderr)
            ready = events[0]
            self.assertEqual(ready["profile"], profile)
            self.assertTrue(ready["settings"].startswith(f"pytorch {profile}: threads 1,"), ready["settings"])
            steps = [e for e in events if e["event"] == "step"]
            self.assertEqual(len(steps), 6)
            for step in steps:
                self.assertAlmostEqual(sum(step[p] for p in PHASES), step["total"], delta=1e-9)
            checksums[profile] = events[-1]["weights_checksum"]
        self.assertEqual(checksums["defaults"], checksums["matched"])

    def test_max_steps_ends_inside_an_epoch_and_skips_the_rest(self):
        directory, _ = self.input("steps", epochs=3, max_steps=8)
        status, events, stderr = run_worker(directory)
        self.assertEqual(status, 0, stderr)
        self.assertEqual(events[0]["epochs"], 2)
        self.assertEqual([e["epoch"] for e in events if e["event"] == "step"], [1] * 6 + [2] * 2)
        self.assertEqual([e["epoch"] for e in events if e["event"] == "epoch"], [1, 2])
        self.assertEqual(events[-1]["weights_path"], "")

    def test_weights_come_from_the_arena_and_go_back_into_it(self):
        # A tiny learning rate: the final arena is the initial one, padding included.
        directory, layout = self.input("weights", max_steps=1, optimizer={"name": "sgd", "lr": 1e-30},
                                       save_weights_path=os.path.join(self.tmp.name, "weights.bin"))
        arena = np.fromfile(os.path.join(directory, "init-weights.bin"), dtype="<f4")
        status, _, stderr = run_worker(directory)
        self.assertEqual(status, 0, stderr)
        final = np.fromfile(os.path.join(self.tmp.name, "weights.bin"), dtype="<f4")
        np.testing.assert_allclose(final, arena, atol=1e-20)
        self.assertEqual(layout[1]["offset"], 100352)  # fc1.bias after 784·128 floats, 16-aligned

    def test_resize_and_a_convolutional_model(self):
        directory, _ = self.input("resize", model="lenet5", input=[1, 32, 32], max_steps=2,
                                  data=idx_data(self.data_dir, resize=32))
        status, events, stderr = run_worker(directory)
        self.assertEqual(status, 0, stderr)
        self.assertEqual(sum(e["event"] == "step" for e in events), 2)

    def test_waits_for_go_before_each_epoch(self):
        directory, _ = self.input("go", epochs=2, max_steps=7)
        process, events = start_worker(directory)
        ready = json.loads(events.readline())
        self.assertEqual(ready["event"], "ready")
        self.assertIsNone(process.poll())
        process.stdin.write("go\n")
        process.stdin.flush()
        lines = [json.loads(events.readline()) for _ in range(7)]
        self.assertEqual(lines[-1]["event"], "epoch")
        process.stdin.close()  # dtbench gone before the second epoch: exit 1, quietly
        self.assertEqual(process.wait(timeout=60), 1)
        self.assertEqual(events.read(), "")
        events.close()


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class BadInput(unittest.TestCase):
    """Every refusal: exit status 2 and an "error" event that names the key or file."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data_dir = write_idx_set(os.path.join(cls.tmp.name, "idx"), 64, 8)
        cls.data = idx_data(cls.data_dir)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def refused(self, name: str, edit=None, model: str = "mlp", **overrides) -> str:
        directory, _ = write_input(os.path.join(self.tmp.name, name), model, overrides.pop("input", [1, 28, 28]), 10,
                                   overrides.pop("data", self.data), train_size=64, **{"batch": 16, **overrides})
        if edit is not None:
            edit(directory)
        status, events, _ = run_worker(directory)
        self.assertEqual(status, 2)
        self.assertEqual(events[-1]["event"], "error")
        self.assertEqual(events[-1]["kind"], "input")
        return events[-1]["message"]

    @staticmethod
    def set_model(name: str):
        """An edit that names another model in config.json (the layout stays the MLP's)."""
        def edit(directory):
            path = os.path.join(directory, "config.json")
            with open(path) as f:
                config = json.load(f)
            config["model"] = name
            with open(path, "w") as f:
                json.dump(config, f)
        return edit

    def test_unknown_model(self):
        self.assertIn("model is 'resnet34'; expected one of mlp, lenet5",
                      self.refused("model", edit=self.set_model("resnet34")))

    def test_augment_without_its_crops_names_the_file(self):
        self.assertIn("augment-1.bin does not exist", self.refused("augment", augment=True))

    def test_crops_of_the_wrong_size_are_refused(self):
        def short_crops(directory):
            with open(os.path.join(directory, "augment-1.bin"), "wb") as f:
                f.write(bytes(3 * 63))
        self.assertIn("expected 3 bytes (dy, dx, flip) for each of the epoch's 64 samples, found 189",
                      self.refused("augment-short", edit=short_crops, augment=True))

    def test_a_crop_past_the_padding_is_refused(self):
        def far_crop(directory):
            with open(os.path.join(directory, "augment-1.bin"), "wb") as f:
                f.write(bytes([4, 9, 0]) + bytes(3 * 63))  # dx 9: past the 4-pixel padding
        self.assertIn("dy and dx must lie in 0..8 and flip in 0..1",
                      self.refused("augment-far", edit=far_crop, augment=True))

    def test_input_the_model_cannot_take(self):
        self.assertIn("model vgg16 cannot take input (1, 28, 28)", self.refused("vgg", edit=self.set_model("vgg16")))

    def test_input_that_is_not_the_data(self):
        self.assertIn("input is [1, 32, 32]", self.refused("shape", model="lenet5", input=[1, 32, 32]))

    def test_batch_larger_than_the_shard(self):
        self.assertIn("batch 100 is larger than rank 0's 64 samples", self.refused("batch", batch=100))

    def test_missing_order_file(self):
        message = self.refused("order", edit=lambda d: os.remove(os.path.join(d, "order-1.bin")))
        self.assertIn("order-1.bin does not exist", message)

    def test_parameters_that_do_not_fit(self):
        def edit(directory):
            path = os.path.join(directory, "parameters.json")
            with open(path) as f:
                layout = json.load(f)
            layout[0]["shape"] = [784, 128]  # dtbench's linear weight is (out, in)
            with open(path, "w") as f:
                json.dump(layout, f)
        self.assertIn("'fc1.weight' shape [784, 128]", self.refused("layout", edit=edit))

    def test_short_weights_file(self):
        def edit(directory):
            path = os.path.join(directory, "init-weights.bin")
            os.truncate(path, os.path.getsize(path) - 64)
        self.assertIn("outside the arena", self.refused("arena", edit=edit))

    def test_bad_optimizer(self):
        self.assertIn("optimizer.name 'lamb' is not known", self.refused("optim", optimizer={"name": "lamb", "lr": 0.1}))
        self.assertIn("optimizer.lr must be > 0", self.refused("lr", optimizer={"name": "sgd", "lr": 0}))

    def test_a_world_without_an_address(self):
        self.assertIn("init_method", self.refused("ddp", transport="ddp", world=2))

    def test_data_that_is_not_there(self):
        self.assertIn("does not exist", self.refused("nodata", data=dict(self.data, path="/nonexistent")))


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class Divergence(unittest.TestCase):
    def test_a_non_finite_loss_ends_the_run_as_dtbench_does(self):
        with tempfile.TemporaryDirectory() as tmp:
            data_dir = write_idx_set(os.path.join(tmp, "idx"), 256, 8)
            directory, _ = write_input(os.path.join(tmp, "in"), "mlp", [1, 28, 28], 10, idx_data(data_dir),
                                       train_size=256, batch=16, optimizer={"name": "sgd", "lr": 1e12})
            status, events, _ = run_worker(directory)
        self.assertEqual(status, 1)
        self.assertEqual(events[-1]["kind"], "diverged")
        self.assertRegex(events[-1]["message"], r"diverged: loss is (NaN|inf) at step \d+ \(epoch 1\); lower optimizer.lr")


if __name__ == "__main__":
    unittest.main()
