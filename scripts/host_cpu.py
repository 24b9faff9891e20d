#!/usr/bin/env python3
"""How much CPU each emulated host's processes used in a run's timed epochs, against its quota.

An emulated host (`dtbench cluster up --cores-per-host C`) is held to C cores by its cgroup; where
its worker and the parameter-server shard beside it together use about C, the step is the host's
CPU, not its link, and a model of the link alone misses it. The cgroup of a host (v1 `cpu`) keeps
no CPU total, so this samples the processes in it:

  scripts/host_cpu.py sample FILE        every 0.1 s, each process in a host's cgroup (dtb-*): its
                                          CPU time so far, one line each (scripts/validate_predict.sh
                                          runs it with HOST_CPU=1, into OUT/logs/host-cpu.txt)
  scripts/host_cpu.py report OUT         for every run OUT/runs/*: the CPU each host's worker and
                                          server used per step over the epochs after the first,
                                          and the host's share of its quota

A process's CPU counts what the kernel does for it in its own time (its sends, and the receives it
is interrupted for), which is where a host's network stack runs on the emulated cluster.
"""
import bisect
import collections
import glob
import json
import os
import re
import sys
import time

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
# An emulated host's cgroup (launch/cluster/naming.cpp): dtb-CLUSTER-hK; a filler's, dtb-CLUSTER-fK,
# is the spare part of a core, not a host's.
HOST_CGROUP = re.compile(r"dtb-.+-h[0-9]+")
# dtbench's worker and server, by their subcommand, whatever the binary is called.
KINDS = ("train", "ps")


def host_of(pid):
    """The emulated host's cgroup name a process is in (v1 `cpu` controller), or None."""
    with open(f"/proc/{pid}/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if "cpu" in controllers.split(","):
                name = path.rsplit("/", 1)[-1]
                return name if HOST_CGROUP.fullmatch(name) else None
    return None


def kind_of(argv):
    """'train' or 'ps' for dtbench's worker and server; else the program's name."""
    if len(argv) > 1 and argv[1] in KINDS:
        return argv[1]
    return os.path.basename(argv[0]) if argv and argv[0] else "?"


def command_line(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return [word.decode(errors="replace") for word in f.read().split(b"\0")]


def cpu_ticks(pid):
    """The process's start (in ticks since boot: a pid used again is another process) and its CPU."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return fields[19], int(fields[11]) + int(fields[12])  # starttime; utime + stime


def sample(path):
    with open(path, "a") as out:
        while True:
            now = time.time()
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                try:
                    host = host_of(entry)
                    if host is None:
                        continue
                    started, ticks = cpu_ticks(entry)
                    out.write(f"{now:.3f} {entry}:{started} {host} {kind_of(command_line(entry))} {ticks}\n")
                except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
                    pass  # the process ended between listing and reading
            out.flush()
            time.sleep(0.1)


def load_samples(path):
    series = collections.defaultdict(list)  # (pid, host, kind) -> [(time, cpu seconds)]
    with open(path) as f:
        lines = f.read().split("\n")
    # The sampler is killed when the validation ends, so its last line may be cut short; one cut
    # anywhere else is a file this did not write.
    for number, line in enumerate(lines[:-1], start=1):
        try:
            t, pid, host, kind, ticks = line.split()
            series[(pid, host, kind)].append((float(t), int(ticks) / TICKS_PER_SECOND))
        except ValueError:
            sys.exit(f"{path}:{number}: {line!r} is not a sample (expected: time pid:start host kind ticks)")
    return series


def cpu_at(points, t):
    """CPU seconds at time t, linear between samples; held before the first and after the last."""
    times = [p[0] for p in points]
    i = bisect.bisect_left(times, t)
    if i == 0:
        return points[0][1]
    if i == len(points):
        return points[-1][1]
    (t0, c0), (t1, c1) = points[i - 1], points[i]
    return c0 + (c1 - c0) * (t - t0) / (t1 - t0)


def report(out):
    samples_path = os.path.join(out, "logs", "host-cpu.txt")
    if not os.path.exists(samples_path):
        sys.exit(f"{samples_path}: no samples (run scripts/validate_predict.sh with HOST_CPU=1)")
    series = load_samples(samples_path)
    print(f"{'run':34} {'step ms':>8} {'host':>16} {'worker':>7} {'server':>7} {'other':>6} {'of quota':>9}")
    print(f"{'':34} {'':>8} {'':>16} {'(CPU ms a step)':>22} {'':>9}")
    for run in sorted(glob.glob(os.path.join(out, "runs", "*"))):
        workers = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(run, "worker-*.json")))]
        if not workers or any(len(w["epochs"]) < 2 for w in workers):
            continue
        # The window every rank was in its timed epochs (after the first) at once.
        timed = [w["epochs"][1:] for w in workers]
        start = max(e[0]["start_unix_s"] for e in timed)
        end = min(e[-1]["steps_end_unix_s"] for e in timed)
        steps = sum(x["steps"] for e in timed for x in e)
        if not (end > start) or steps == 0:
            continue
        step_s = sum(x["phases"]["step"]["sum_s"] for e in timed for x in e) / steps
        quota = workers[0].get("network", {}).get("cluster", {}).get("cores_per_host", 0)
        steps_in_window = (end - start) / step_s
        used = collections.defaultdict(lambda: collections.defaultdict(float))  # host -> kind -> s
        for (_, host, kind), points in series.items():
            if HOST_CGROUP.fullmatch(host) and points[0][0] < end and points[-1][0] > start:
                used[host][kind] += cpu_at(points, end) - cpu_at(points, start)
        for host, kinds in sorted(used.items()):
            per_step = {k: 1e3 * v / steps_in_window for k, v in kinds.items()}
            other = sum(v for k, v in per_step.items() if k not in ("train", "ps"))
            share = sum(kinds.values()) / (end - start) / quota if quota else float("nan")
            print(f"{os.path.basename(run):34} {1e3 * step_s:8.0f} {host:>16} {per_step.get('train', 0):7.0f} "
                  f"{per_step.get('ps', 0):7.0f} {other:6.0f} {100 * share:8.0f}%")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "sample":
        sample(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "report":
        report(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
