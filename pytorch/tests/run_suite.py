#!/usr/bin/env python3
"""The PyTorch engine's tests as CTest runs them (`pytorch_worker`): unittest's discovery over this
folder, but failing where unittest alone would pass without having tested anything — when no test
ran, or when a test skipped although torch imports here. Every skip in this suite stands for
something this machine lacks (torch, the dtbench binary); with torch present a skip is a test lost,
not a machine without it. Without torch every test skips by design, and that passes, saying so.

    /usr/bin/python3 pytorch/tests/run_suite.py [-v]
"""
from __future__ import annotations

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def torch_imports() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def verdict(result: unittest.TestResult, have_torch: bool) -> str:
    """"" when the run counts as passed, else why not."""
    if not result.wasSuccessful():
        return f"{len(result.failures)} failed, {len(result.errors)} errors"
    if result.testsRun == 0:
        return "no test ran: discovery found none (a renamed folder, an import that hides them?)"
    if have_torch and result.skipped:
        names = "; ".join(f"{test.id()}: {why}" for test, why in result.skipped)
        return f"{len(result.skipped)} skipped although torch imports here: {names}"
    return ""


def main(argv: list) -> int:
    verbosity = 2 if "-v" in argv else 1
    suite = unittest.defaultTestLoader.discover(HERE, top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=verbosity).run(suite)
    have_torch = torch_imports()
    why = verdict(result, have_torch)
    if why:
        print(f"pytorch tests: FAILED: {why}", file=sys.stderr)
        return 1
    skipped = f", {len(result.skipped)} skipped (no torch for {sys.executable})" if result.skipped else ""
    print(f"pytorch tests: {result.testsRun} ran{skipped}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
