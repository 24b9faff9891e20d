#!/usr/bin/env python3
"""Freezes (SIGSTOP) or kills (SIGKILL) one rank of a small 3-rank training run at a random moment,
start-up and shut-down included, many times, and counts how the runs ended:

  in time   mpirun ended within comm.timeout_s + 2 s of the signal
  named     every surviving rank's report (or, before any report exists, the log) names the rank
  failed    every surviving rank's report says "failed" (runs with no report at all are counted apart)

    scripts/fault_loop.py --dtbench build/dtbench --runs 20 --signal STOP --transport ring

Not a CTest test: it takes minutes, and its figures describe a machine, not a pass or a fail.
"""
import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def rank_pid(job_pid, rank):
    """The pid of `rank` among mpirun's children (Open MPI puts its rank in their environment)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            if parent != job_pid:
                continue
            environ = (entry / "environ").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ:
            return int(entry.name)
    return None


def start(args, out, data):
    command = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "3", args.dtbench, "train",
               "--set", "model=lenet5", "--set", "dataset.format=cifar10", "--set", f"dataset.path={data}",
               "--set", f"output={out}", "--set", "threads=1", "--set", f"steps={args.steps}",
               "--set", "batch=8", "--set", f"transport={args.transport}",
               "--set", f"comm.timeout_s={args.timeout}"]
    log = open(out.parent / (out.name + ".log"), "w")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT), log


def examine(out, victim, log_text):
    """(named, all_failed, has_report, errors) for the survivors of one run."""
    runs = list(out.glob("*")) if out.exists() else []
    pattern = re.compile(rf"silent: ranks? [0-9, ]*\b{victim}\b")
    if not runs:
        # Before any run directory: the ranks' error lines, or mpirun's own for a killed rank.
        by_mpirun = re.search(rf"rank {victim} with PID \d+ on node \S+ exited on signal", log_text)
        in_init = "MPI_Init did not return" in log_text
        return bool(pattern.search(log_text) or by_mpirun), False, False, [
            "no run directory" + (" (a rank timed out in MPI_Init)" if in_init else "")]
    named, failed, errors = True, True, []
    for rank in range(3):
        if rank == victim:
            continue
        path = runs[0] / f"worker-{rank}.json"
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError):
            named = failed = False
            errors.append(f"worker-{rank}.json missing")
            continue
        error = report.get("error", "")
        errors.append(f"{rank}: {report.get('status')}: {error[:160]}")
        failed &= report.get("status") == "failed"
        named &= bool(pattern.search(error))
    return named, failed, True, errors


def one_run(args, index, data, root, span):
    out = root / f"run-{index}"
    victim = random.randrange(3)
    moment = random.uniform(0, span)
    began = time.monotonic()
    job, log = start(args, out, data)
    pid = None
    while time.monotonic() - began < moment or pid is None:
        if job.poll() is not None:
            break
        pid = rank_pid(job.pid, victim) or pid
        time.sleep(0.01)
    if job.poll() is not None:  # the run ended before the signal
        log.close()
        return {"index": index, "skipped": True}
    os.kill(pid, getattr(signal, "SIG" + args.signal))
    signalled = time.monotonic()
    try:
        job.wait(timeout=args.timeout + 20)
        seconds = time.monotonic() - signalled
    except subprocess.TimeoutExpired:
        job.kill()
        job.wait()
        seconds = float("inf")
    try:
        os.kill(pid, signal.SIGKILL)  # a frozen rank mpirun did not end
    except ProcessLookupError:
        pass
    log.close()
    log_text = (out.parent / (out.name + ".log")).read_text(errors="replace")
    named, failed, has_report, errors = examine(out, victim, log_text)
    return {"index": index, "skipped": False, "victim": victim, "moment": round(moment, 2),
            "seconds": round(seconds, 2), "exit": job.returncode, "in_time": seconds <= args.timeout + 2,
            "named": named, "failed": failed, "has_report": has_report, "errors": errors}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtbench", default="build/dtbench")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--signal", choices=["STOP", "KILL"], default="STOP")
    parser.add_argument("--transport", choices=["ring", "mpi"], default="ring")
    parser.add_argument("--timeout", type=float, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    args.dtbench = str(Path(args.dtbench).resolve())
    random.seed(args.seed)
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    root = Path(tempfile.mkdtemp(prefix="dtbench-faults-"))
    data = root / "data"
    subprocess.run([args.dtbench, "data", "synth", "--format", "cifar10", "--out", str(data), "--train", "480",
                    "--test", "48"], check=True, stdout=subprocess.DEVNULL)
    began = time.monotonic()
    clean, _ = start(args, root / "clean", data)
    clean.wait()
    span = time.monotonic() - began  # the whole run, start-up and shut-down included
    print(f"unfaulted run: {span:.1f} s, exit {clean.returncode}; SIG{args.signal} on {args.transport}", flush=True)
    results = []
    for index in range(args.runs):
        result = one_run(args, index, data, root, span)
        results.append(result)
        print(json.dumps(result), flush=True)
    done = [r for r in results if not r["skipped"]]
    times = sorted(r["seconds"] for r in done)
    print(f"SIG{args.signal} {args.transport}: {len(done)} faulted runs ({len(results) - len(done)} ended before "
          f"the signal); in time {sum(r['in_time'] for r in done)}, named {sum(r['named'] for r in done)}, "
          f"every survivor failed {sum(r['failed'] for r in done)} (no report at all: "
          f"{sum(not r['has_report'] for r in done)}, of which in MPI_Init: "
          f"{sum('MPI_Init' in r['errors'][0] for r in done if not r['has_report'])}); seconds signal->end: min {times[0] if times else '-'} "
          f"median {statistics.median(times) if times else '-'} max {times[-1] if times else '-'}")
    print(f"kept in {root}")


if __name__ == "__main__":
    sys.exit(main())
