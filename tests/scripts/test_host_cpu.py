#!/usr/bin/env python3
"""scripts/host_cpu.py's report against a run and samples made by hand: the CPU a step of each
host's worker and server over the timed epochs only, and the host's share of its quota."""
import contextlib
import importlib.util
import io
import json
import os
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("host_cpu", os.path.join(HERE, "..", "..", "scripts", "host_cpu.py"))
host_cpu = importlib.util.module_from_spec(spec)
spec.loader.exec_module(host_cpu)
TICKS = host_cpu.TICKS_PER_SECOND


def worker(start, end, steps, step_s):
    warmup = {"start_unix_s": start - 5, "steps_end_unix_s": start - 1, "steps": steps,
              "phases": {"step": {"sum_s": 9.0}}}
    timed = {"start_unix_s": start, "steps_end_unix_s": end, "steps": steps,
             "phases": {"step": {"sum_s": steps * step_s}}}
    return {"epochs": [warmup, timed], "network": {"cluster": {"cores_per_host": 0.5}}}


class Report(unittest.TestCase):
    def run_report(self, out):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            host_cpu.report(out)
        return [line.split() for line in printed.getvalue().splitlines()[2:]]

    def test_cpu_a_step_of_each_process_over_the_timed_epochs_only(self):
        with tempfile.TemporaryDirectory() as out:
            run = os.path.join(out, "runs", "alexnet-ps-sync-2-10gbit")
            os.makedirs(run)
            os.makedirs(os.path.join(out, "logs"))
            # 10 steps of 1 s from t=100 to t=110, the workers together throughout.
            for rank in (0, 1):
                with open(os.path.join(run, f"worker-{rank}.json"), "w") as f:
                    json.dump(worker(100.0, 110.0, 10, 1.0), f)
            # Host 0: its worker uses 0.3 core, its server 0.1, sampled each second from t=90; the
            # worker used 4 s more in its warm-up (before the window), which must not count.
            with open(os.path.join(out, "logs", "host-cpu.txt"), "w") as f:
                for t in range(90, 121):
                    worker_s = 0.3 * (t - 90) + (4 if t >= 99 else 0)
                    f.write(f"{t}.000 11:5 dtb-t-h0 train {round(worker_s * TICKS)}\n")
                    f.write(f"{t}.000 12:5 dtb-t-h0 ps {round(0.1 * (t - 90) * TICKS)}\n")
                    f.write(f"{t}.000 13:5 dtb-t-f0 cluster {round(0.5 * (t - 90) * TICKS)}\n")
            rows = self.run_report(out)
        self.assertEqual(len(rows), 1)
        name, step_ms, host, worker_ms, server_ms, other_ms, share = rows[0]
        self.assertEqual((name, host), ("alexnet-ps-sync-2-10gbit", "dtb-t-h0"))
        self.assertEqual(float(step_ms), 1000)
        self.assertEqual(float(worker_ms), 300)  # 0.3 core x 1 s a step
        self.assertEqual(float(server_ms), 100)
        self.assertEqual(float(other_ms), 0)
        self.assertEqual(share, "80%")  # 0.4 of the host's 0.5 core

    def test_a_last_line_cut_short_is_left_out_and_a_bad_line_named(self):
        with tempfile.TemporaryDirectory() as out:
            path = os.path.join(out, "host-cpu.txt")
            with open(path, "w") as f:
                f.write("100.000 11:5 dtb-t-h0 train 30\n101.000 11:5 dtb-t-h0 train 60\n101.1 11:5 dtb-t")
            series = host_cpu.load_samples(path)
            self.assertEqual(series[("11:5", "dtb-t-h0", "train")], [(100.0, 30 / TICKS), (101.0, 60 / TICKS)])
            with open(path, "w") as f:
                f.write("100.000 11:5 dtb-t-h0 train 30\n101.000 garbage\n")
            with self.assertRaises(SystemExit) as stop:
                host_cpu.load_samples(path)
            self.assertIn("host-cpu.txt:2", str(stop.exception))

    def test_a_fillers_cgroup_is_no_host(self):
        self.assertTrue(host_cpu.HOST_CGROUP.fullmatch("dtb-gf410g-h3"))
        self.assertFalse(host_cpu.HOST_CGROUP.fullmatch("dtb-gf410g-f0"))
        self.assertFalse(host_cpu.HOST_CGROUP.fullmatch("user.slice"))

    def test_worker_and_server_by_their_subcommand_whatever_the_binary_is_called(self):
        self.assertEqual(host_cpu.kind_of(["/tmp/copy-of-dtbench", "train", "--config", "x"]), "train")
        self.assertEqual(host_cpu.kind_of(["dtbench", "ps", "--listen", "198.18.0.1:50051"]), "ps")
        self.assertEqual(host_cpu.kind_of(["/usr/bin/python3", "pytorch/worker.py"]), "python3")

    def test_without_samples_it_says_how_to_make_them(self):
        with tempfile.TemporaryDirectory() as out:
            with self.assertRaises(SystemExit) as stop:
                host_cpu.report(out)
        self.assertIn("HOST_CPU=1", str(stop.exception))


if __name__ == "__main__":
    unittest.main()
