"""The PyTorch worker against the dtbench binary on real Fashion-MNIST, one worker, the same
initial weights and batches: after one step every weight within 1e-4 of dtbench's, and each of
the first 20 steps' losses within 1 %. Skipped without a built dtbench or the data set."""
from __future__ import annotations

import os
import unittest

from worker_input import FASHION_MNIST, TORCH_MISSING, dtbench_binary

SKIP = TORCH_MISSING or ("" if dtbench_binary() else "no dtbench binary (build it, or set DTBENCH)") or (
    "" if os.path.isdir(FASHION_MNIST) else f"no Fashion-MNIST at {FASHION_MNIST} (dataset-fashion-mnist)")

if not SKIP:
    from compare_dtbench import compare


@unittest.skipIf(SKIP, SKIP)
class AgainstDtbench(unittest.TestCase):
    def check(self, result: dict) -> None:
        self.assertLessEqual(result["one_step_max_weight_difference"], 1e-4, result)
        self.assertLessEqual(result["max_relative_loss_difference"], 0.01, result)
        dt, py = result["one_step_test_loss"]
        self.assertAlmostEqual(dt, py, delta=1e-4 * abs(dt))

    def test_lenet5_sgd_with_momentum_20_steps(self):
        self.check(compare(["--model", "lenet5", "--steps", "20"]))

    def test_mlp_adam_with_weight_decay(self):
        self.check(compare(["--model", "mlp", "--steps", "5", "--optimizer", "adam", "--lr", "0.001",
                            "--momentum", "0", "--weight-decay", "0.0005"]))


if __name__ == "__main__":
    unittest.main()
