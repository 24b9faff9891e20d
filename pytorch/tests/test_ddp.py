"""Two workers on loopback with DistributedDataParallel over gloo: both end with the same weights,
those of one worker with the doubled batch (dtbench's shard makes batch b of the two ranks the
samples of batch b of one worker), and the phases show the communication."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import unittest

from worker_input import TORCH_MISSING, idx_data, run_worker, start_worker, write_idx_set, write_input

if not TORCH_MISSING:
    import numpy as np

STEPS = 10  # the first step's single bucket, then nine bucketed ones: enough to see both
# How long a rank may wait for the other (gloo's rendezvous and collectives) and for its end: a
# rank that imports torch while `ctest -j` builds beside it can start a minute after its peer, and
# a wait that only ends a failed run may be long.
PATIENCE_S = 300.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(process, events, into: list) -> None:
    """Reads one rank's events to its end, answering each "ready" / "epoch" with "go", as dtbench."""
    for line in events:
        event = json.loads(line)
        into.append(event)
        if event["event"] in ("ready", "epoch"):
            try:
                process.stdin.write("go\n")
                process.stdin.flush()
            except BrokenPipeError:
                pass
        if event["event"] in ("done", "error"):
            break


def run_world(directories: list) -> list:
    """Every rank's worker at once, each served by its own thread (a rank's step waits for the
    others' inside the allreduce); returns each rank's exit status and events."""
    started = [start_worker(d) for d in directories]
    collected = [[] for _ in started]
    threads = [threading.Thread(target=serve, args=(p, e, c)) for (p, e), c in zip(started, collected)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=2 * PATIENCE_S)
    results = []
    for rank, ((process, events), rank_events) in enumerate(zip(started, collected)):
        process.stdin.close()
        try:
            status = process.wait(timeout=PATIENCE_S)
        except subprocess.TimeoutExpired:  # ended, so that nothing is left running, and told
            process.kill()
            process.wait()
            raise AssertionError(f"rank {rank} had not exited {PATIENCE_S:.0f} s after its events "
                                 f"ended; its last events: {rank_events[-3:]}") from None
        results.append((status, rank_events))
        events.close()
    return results


# Two ranks on loopback hand gloo a 128 MiB allreduce, then a 4 KiB one, and print the order the
# two completed in. What phases.py's bucket spans and predict's fit (buckets in flight together,
# timed together) rest on: gloo runs a process group's collectives on two threads, so the small one
# does not wait for the large one.
IN_FLIGHT_SCRIPT = """
import os, sys, torch, torch.distributed as dist
rank = int(sys.argv[1])
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[2], rank=rank, world_size=2)
large, small, order = torch.ones(32 << 20), torch.ones(1024), []
futures = [dist.all_reduce(t, async_op=True).get_future().then(lambda f, name=name: order.append(name))
           for name, t in (("large", large), ("small", small))]
for f in futures:
    f.wait()
if rank == 0:
    print(" ".join(order))
dist.destroy_process_group()
"""


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class GlooInFlight(unittest.TestCase):
    def test_a_small_allreduce_handed_over_after_a_large_one_completes_first(self):
        port = str(free_port())
        ranks = [subprocess.Popen(["/usr/bin/python3", "-c", IN_FLIGHT_SCRIPT, str(rank), port],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for rank in (0, 1)]
        outputs = [rank.communicate(timeout=PATIENCE_S) for rank in ranks]
        for rank, (out, err) in zip(ranks, outputs):
            self.assertEqual(rank.returncode, 0, err)
        self.assertEqual(outputs[0][0].split(), ["small", "large"])


@unittest.skipIf(TORCH_MISSING, TORCH_MISSING)
class TwoWorkers(unittest.TestCase):
    def world(self, tmp: str, data: dict, steps: int, **overrides) -> tuple:
        """Two ranks of lenet5 over one address, batch 16, run to their end: (directories, results);
        each rank saves its final weights as rank<r>.bin in `tmp`."""
        address = f"tcp://127.0.0.1:{free_port()}"
        directories = []
        for rank in range(2):
            directory, _ = write_input(
                os.path.join(tmp, f"rank{rank}"), "lenet5", [1, 28, 28], 10, data, rank=rank, world=2,
                train_size=2 * 16 * STEPS, batch=16, max_steps=steps, transport="ddp", init_method=address,
                bucket_mb=0.05, timeout_s=PATIENCE_S, optimizer={"name": "sgd", "lr": 0.02, "momentum": 0.9},
                save_weights_path=os.path.join(tmp, f"rank{rank}.bin"), **overrides)
            directories.append(directory)
        results = run_world(directories)
        for rank, (status, events) in enumerate(results):
            self.assertEqual(status, 0, f"rank {rank}: {events[-1]}")
        return directories, results

    def test_ddp_with_its_builtin_allreduce_keeps_both_ranks_identical_untimed(self):
        with tempfile.TemporaryDirectory() as tmp:
            data = idx_data(write_idx_set(os.path.join(tmp, "idx"), 2 * 16 * STEPS, 16, seed=5))
            _, results = self.world(tmp, data, 4, pytorch={"ddp_hook": "builtin"})
            np.testing.assert_array_equal(np.fromfile(os.path.join(tmp, "rank0.bin"), dtype="<f4"),
                                          np.fromfile(os.path.join(tmp, "rank1.bin"), dtype="<f4"))
            for _, events in results:
                self.assertEqual(events[0]["ddp_hook"], "builtin")
                steps = [e for e in events if e["event"] == "step"]
                self.assertEqual(len(steps), 4)
                self.assertEqual({(s["buckets"], s["comm"], s["comm_total"]) for s in steps}, {(0, 0, 0)})

    def test_ddp_keeps_both_ranks_identical_and_times_its_buckets(self):
        with tempfile.TemporaryDirectory() as tmp:
            data_dir = write_idx_set(os.path.join(tmp, "idx"), 2 * 16 * STEPS, 16, seed=5)
            data = idx_data(data_dir)
            directories, results = self.world(tmp, data, STEPS)
            rank0 = np.fromfile(os.path.join(tmp, "rank0.bin"), dtype="<f4")
            rank1 = np.fromfile(os.path.join(tmp, "rank1.bin"), dtype="<f4")
            np.testing.assert_array_equal(rank0, rank1)
            self.assertEqual(results[0][1][-1]["weights_checksum"], results[1][1][-1]["weights_checksum"])

            for _, events in results:
                steps = [e for e in events if e["event"] == "step"]
                self.assertEqual(len(steps), STEPS)
                # DDP reduces the first step's gradients as one bucket and buckets them from the
                # second step on; lenet5's 247 KB in 50 KB buckets are then 2 (fc1.weight alone
                # is 192 KB), as dtbench's arena buckets would be.
                self.assertEqual([s["buckets"] for s in steps], [1] + [2] * (STEPS - 1))
                for step in steps:
                    self.assertGreater(step["comm_total"], 0)
                    self.assertGreaterEqual(step["comm"], 0)
                    self.assertGreaterEqual(step["backward"], 0)
                    self.assertGreaterEqual(step["other"], 0)
                    # Each bucket's span: handed over within backward, started no earlier, ended
                    # later; their busy times are comm_total; their bytes the whole gradient.
                    spans = step["bucket_spans"]
                    self.assertEqual(len(spans), step["buckets"])
                    for ready, begun, done, _ in spans:
                        self.assertLessEqual(0, ready)
                        self.assertLessEqual(ready, begun)
                        self.assertLessEqual(begun, done)
                    self.assertAlmostEqual(sum(done - begun for _, begun, done, _ in spans), step["comm_total"])
                    self.assertEqual(sum(size for *_, size in spans), 61706 * 4)

            # One worker with the doubled batch trains on the same samples: the same weights, up
            # to the order of float additions.
            single, _ = write_input(
                os.path.join(tmp, "single"), "lenet5", [1, 28, 28], 10, data, train_size=2 * 16 * STEPS,
                batch=32, max_steps=STEPS, optimizer={"name": "sgd", "lr": 0.02, "momentum": 0.9},
                save_weights_path=os.path.join(tmp, "single.bin"))
            shutil.copyfile(os.path.join(directories[0], "init-weights.bin"), os.path.join(single, "init-weights.bin"))
            status, events, stderr = run_worker(single)
            self.assertEqual(status, 0, stderr)
            alone = np.fromfile(os.path.join(tmp, "single.bin"), dtype="<f4")
            np.testing.assert_allclose(rank0, alone, atol=1e-4)


if __name__ == "__main__":
    unittest.main()
