"""config.py's keys of the engine and the run that parity.py applies: pytorch.profile,
pytorch.ddp_hook and precision, each optional, each refused by name when it holds what the worker
cannot honour."""
from __future__ import annotations

import unittest

from worker_input import PYTORCH_DIR  # noqa: F401 - puts pytorch/ on sys.path

import config


def minimal(**overrides):
    raw = {"model": "mlp", "input": [1, 28, 28], "classes": 10, "batch": 4, "epochs": 1,
           "optimizer": {"name": "sgd", "lr": 0.1}, "rank": 0, "world": 1, "transport": "none",
           "data": {"format": "idx", "path": "/nowhere", "normalization": {"mean": [0.5], "std": [0.25]}}}
    raw.update(overrides)
    return raw


class EngineAndPrecisionKeys(unittest.TestCase):
    def test_absent_keys_are_the_matched_profile_the_timed_hook_and_fp32(self):
        got = config.parse_config(minimal())
        self.assertEqual((got.profile, got.ddp_hook, got.precision), ("matched", "timed", "fp32"))

    def test_present_keys_are_read(self):
        got = config.parse_config(minimal(pytorch={"profile": "defaults", "ddp_hook": "builtin"}))
        self.assertEqual((got.profile, got.ddp_hook), ("defaults", "builtin"))

    def test_an_unknown_profile_names_the_key_the_value_and_the_choices(self):
        with self.assertRaisesRegex(config.ConfigError, r"pytorch\.profile is 'fast'; expected one of matched, defaults"):
            config.parse_config(minimal(pytorch={"profile": "fast"}))

    def test_an_unknown_hook_is_named(self):
        with self.assertRaisesRegex(config.ConfigError, r"pytorch\.ddp_hook is 'none'"):
            config.parse_config(minimal(pytorch={"ddp_hook": "none"}))

    def test_pytorch_must_be_an_object(self):
        with self.assertRaisesRegex(config.ConfigError, r"pytorch must be a JSON object"):
            config.parse_config(minimal(pytorch="matched"))

    def test_an_unknown_precision_is_named(self):
        with self.assertRaisesRegex(config.ConfigError, r"precision is 'bf16'; expected one of fp32, tf32"):
            config.parse_config(minimal(precision="bf16"))

    def test_tf32_on_the_cpu_is_refused(self):
        with self.assertRaisesRegex(config.ConfigError, r"precision is 'tf32'; expected fp32 on the cpu"):
            config.parse_config(minimal(precision="tf32"))
        with self.assertRaisesRegex(config.ConfigError, r"precision is 'tf32'"):
            config.parse_config(minimal(precision="tf32", device="cpu"))

    def test_tf32_is_accepted_on_a_gpu(self):
        self.assertEqual(config.parse_config(minimal(precision="tf32", device="cuda")).precision, "tf32")


if __name__ == "__main__":
    unittest.main()
