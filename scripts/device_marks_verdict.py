#!/usr/bin/env python3
"""The verdict of run-gpu-checks.sh's "device marks overhead" check.

Reads the runs' lines that the check wrote (one per run, from report.json):
    lenet5     device_marks=true  round 1: median step    0.851 ms,   75123.4 images/s
and, per model, compares the median step with CUDA-event marks (device_marks=true) against the
median step with a wait for the device at every phase boundary (false). A run's median is its
steady state: the first steps (cold caches) are a few of its 120 and do not move it. Each setting's
figure is the median over its rounds. The check fails when, for any model,
  - the marks' step is more than --threshold-pct slower than the waits' (the marks cost too much), or
  - two rounds of one setting differ by more than --threshold-pct (too noisy to tell).
With --rehearsal (the kit's rehearsal on a CPU, where the setting changes nothing and each run is a few
steps on a shared machine) the figures are printed but not judged: only runs of both settings for every
model are required, since a timing verdict there would judge the machine's other load.
Prints one line per model and the verdict; exits 1 on a failure, 2 on unreadable input.
"""
import argparse
import re
import statistics
import sys

LINE = re.compile(r"^(\S+)\s+device_marks=(true|false)\s+round (\d+): median step\s+([0-9.]+) ms")


def read_runs(lines):
    runs = {}  # model -> setting -> [median ms]
    for line in lines:
        match = LINE.match(line)
        if match:
            model, marks, _, median = match.groups()
            runs.setdefault(model, {}).setdefault(marks, []).append(float(median))
    return runs


def verdict(runs, threshold_pct, judge_timing=True):
    """Lines to print and whether every model passed (its timing judged only when judge_timing)."""
    out, passed = [], True
    if not runs:
        return ["no runs to compare"], False
    for model, settings in runs.items():
        if "true" not in settings or "false" not in settings:
            out.append(f"{model}: FAIL, runs of only one setting")
            passed = False
            continue
        marks, waits = statistics.median(settings["true"]), statistics.median(settings["false"])
        overhead = 100 * (marks / waits - 1)
        spread = max(100 * (max(v) / min(v) - 1) for v in settings.values())
        figures = (f"{model}: median step {marks:.3f} ms with marks, {waits:.3f} ms waiting per phase: "
                   f"marks {overhead:+.1f}%, rounds of one setting within {spread:.1f}%")
        if not judge_timing:
            out.append(f"{figures} -> not judged (rehearsal)")
            continue
        ok = overhead <= threshold_pct and spread <= threshold_pct
        passed &= ok
        out.append(f"{figures} -> {'PASS' if ok else 'FAIL'} (threshold {threshold_pct:g}%)")
    return out, passed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", help="the check's file of run lines (device_marks.txt)")
    parser.add_argument("--threshold-pct", type=float, default=5.0)
    parser.add_argument("--rehearsal", action="store_true",
                        help="print the figures without judging them; require runs of both settings only")
    args = parser.parse_args()
    try:
        with open(args.runs) as f:
            runs = read_runs(f)
    except OSError as error:
        print(f"device_marks_verdict: {error}", file=sys.stderr)
        return 2
    lines, passed = verdict(runs, args.threshold_pct, judge_timing=not args.rehearsal)
    print("\n".join(lines))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
