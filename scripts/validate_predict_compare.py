#!/usr/bin/env python3
"""Sets `dtbench predict` against what scripts/validate_predict.sh measured on the emulated cluster.

For every run directory OUT/runs/MODEL-TRANSPORT-HOSTS-LINK it predicts the step of TRANSPORT at
HOSTS workers and LINK from the run's own compute phases and the constants fitted on that cluster
(OUT/fit/ar-HOSTS-LINK.json, OUT/fit/ps-HOSTS-LINK.json, and OUT/fit/psworld-MODE-HOSTS-LINK.json
where bench ps ran one process per host against sync and async servers), and compares with the run's measured mean
step (epochs after the first). Beside it, where the validation measured other host counts, the
error held out: the same run predicted from the constants fitted at every other host count alone
(fit on 2 and 3 hosts, predict 4), as a user predicting a cluster larger than theirs would. Prints
one row per run, then the median absolute error and the worst case per transport and over all, at
the measured N and held out; writes OUT/validation.csv.

At the measured N the prediction of the run's own transport is carried to the rate its
communication had inside the run (`predict`'s calibration, from the run's per-bucket timings): its
step and its exposed comm are compared, and beside them the benches alone (`--no-calibrate`). Held
out, the run's own communication is the answer, so the benches alone predict it.

    scripts/validate_predict_compare.py OUT [--dtbench build/dtbench]
"""
import argparse
import csv
import json
import pathlib
import re
import statistics
import subprocess
import sys

RUN_NAME = re.compile(r"^(?P<model>[a-z0-9]+)-(?P<transport>ring|mpi|ps-sync|ps-async)-(?P<hosts>\d+)-(?P<link>\w+)$")


def measured_step(run: pathlib.Path) -> tuple:
    """The run's mean step and exposed comm per step, epochs after the first."""
    report = json.loads((run / "report.json").read_text())
    if report.get("status") != "complete":
        raise ValueError(f"{run}: status {report.get('status')}")
    epochs = report["epochs"]
    later = epochs[1:] if len(epochs) > 1 else epochs
    count = sum(e["steps"] for e in later)
    return tuple(sum(e["phases"][phase]["sum_s"] for e in later) / count for phase in ("step", "comm"))


def shared_cores(run: pathlib.Path) -> int:
    """The cores the run's emulated hosts share: the one machine's where its hosts take turns on
    them (more hosts than cores, or a fraction of a core each); 0 where each host has whole cores
    of its own, or the run was not on the emulated cluster."""
    report = json.loads((run / "report.json").read_text())
    cluster = report.get("network", {}).get("cluster")
    if not cluster:
        return 0
    own_cores = cluster.get("cores_per_host", 0) >= 1 and not cluster.get("time_sliced", True)
    return 0 if own_cores else report["provenance"]["cores"]


def fit_host_counts(out: pathlib.Path, link: str) -> list:
    """The host counts the validation fitted constants at for `link` (fit/ar-HOSTS-LINK.json)."""
    return sorted(int(f.name.split("-")[1]) for f in (out / "fit").glob(f"ar-*-{link}.json"))


def predicted_step(dtbench: str, out: pathlib.Path, run: pathlib.Path, m: dict, fit_hosts: list,
                   calibrate: bool) -> tuple:
    """The run's step and exposed comm predicted at its own N and link from the constants fitted at
    `fit_hosts` hosts, carried to the run's own comm or not."""
    link = m["link"]
    files = []
    for hosts in fit_hosts:
        files += [out / "fit" / f"{kind}-{hosts}-{link}.json" for kind in ("ar", "ps")]
        # bench ps one process per host, sync and async servers: optional, older validations lack them
        files += [f for f in (out / "fit" / f"psworld-{mode}-{hosts}-{link}.json" for mode in ("sync", "async"))
                  if f.exists()]
    fits = ",".join(f"{link}:{f}" for f in files)
    target = out / "predict" / (run.name + ("" if fit_hosts == [int(m["hosts"])] else "-held-out") +
                                ("" if calibrate else "-bench-alone"))
    subprocess.run([dtbench, "predict", str(run), "--workers", m["hosts"], "--link", m["link"], "--transport",
                    m["transport"], "--fit", fits, "--shared-cores", str(shared_cores(run)), "--out", str(target)] +
                   ([] if calibrate else ["--no-calibrate"]), check=True, capture_output=True, text=True)
    rows = json.loads((target / "predict.json").read_text())["predictions"]
    row = next(r for r in rows if r["workers"] == int(m["hosts"]))
    return row["step_s"], row["comm_exposed_s"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--dtbench", default="build/dtbench")
    args = parser.parse_args()
    rows = []
    for run in sorted((args.out / "runs").iterdir()):
        m = RUN_NAME.match(run.name)
        if not m:
            continue
        try:
            measured, measured_comm = measured_step(run)
            own = [int(m["hosts"])]
            predicted, predicted_comm = predicted_step(args.dtbench, args.out, run, m.groupdict(), own, True)
            bench_alone, _ = predicted_step(args.dtbench, args.out, run, m.groupdict(), own, False)
        except (ValueError, KeyError, FileNotFoundError, StopIteration, subprocess.CalledProcessError) as e:
            print(f"skipped {run.name}: {getattr(e, 'stderr', None) or e}", file=sys.stderr)
            continue
        row = {**m.groupdict(), "measured_ms": 1e3 * measured, "predicted_ms": 1e3 * predicted,
               "error": (predicted - measured) / measured,
               "measured_comm_ms": 1e3 * measured_comm, "predicted_comm_ms": 1e3 * predicted_comm,
               "comm_error": (predicted_comm - measured_comm) / measured_comm if measured_comm > 0 else None,
               "bench_alone_ms": 1e3 * bench_alone, "bench_alone_error": (bench_alone - measured) / measured,
               "held_out_ms": None, "held_out_error": None}
        others = [h for h in fit_host_counts(args.out, m["link"]) if h != int(m["hosts"])]
        if others:
            try:
                held_out, _ = predicted_step(args.dtbench, args.out, run, m.groupdict(), others, False)
                row.update(held_out_ms=1e3 * held_out, held_out_error=(held_out - measured) / measured)
            except subprocess.CalledProcessError as e:
                print(f"no held-out prediction for {run.name}: {e.stderr}", file=sys.stderr)
        rows.append(row)
    if not rows:
        print("no complete runs to compare", file=sys.stderr)
        return 1
    def percent(value) -> str:
        return f"{100 * value:>+6.1f}%" if value is not None else f"{'-':>7}"
    print(f"{'model':<9} {'transport':<9} {'hosts':>5} {'link':>7} {'measured ms':>12} {'predicted ms':>13} {'error':>7}"
          f" {'comm ms':>9} {'predicted':>9} {'error':>7} {'bench alone':>11} {'error':>7} {'held out ms':>12} {'error':>7}")
    for r in rows:
        held_out = f"{r['held_out_ms']:>12.1f}" if r["held_out_ms"] is not None else f"{'-':>12}"
        print(f"{r['model']:<9} {r['transport']:<9} {r['hosts']:>5} {r['link']:>7} {r['measured_ms']:>12.1f} "
              f"{r['predicted_ms']:>13.1f} {percent(r['error'])} {r['measured_comm_ms']:>9.1f} "
              f"{r['predicted_comm_ms']:>9.1f} {percent(r['comm_error'])} {r['bench_alone_ms']:>11.1f} "
              f"{percent(r['bench_alone_error'])} {held_out} {percent(r['held_out_error'])}")
    groups = {t: [r for r in rows if r["transport"] == t] for t in ("ring", "mpi", "ps-sync", "ps-async")}
    groups["all"] = rows
    for key, title in (("error", "step at the measured N (fitted at the run's own host count and carried to its comm)"),
                       ("comm_error", "exposed comm at the measured N (the same predictions)"),
                       ("bench_alone_error", "step at the measured N from the benches alone (--no-calibrate)"),
                       ("held_out_error", "step held out (fitted at the other host counts, the benches alone)")):
        print(f"\nabsolute error of the predicted {title}: median, worst (run)")
        for name, group in groups.items():
            group = [r for r in group if r[key] is not None]
            if not group:
                continue
            worst = max(group, key=lambda r: abs(r[key]))
            print(f"  {name:<9} n={len(group):<3} median {100 * statistics.median(abs(r[key]) for r in group):5.1f}%  "
                  f"worst {100 * abs(worst[key]):5.1f}% ({worst['model']}, {worst['hosts']} hosts, {worst['link']})")
    print("\nmedian / worst absolute error per transport and model, at the measured N")
    models = sorted({r["model"] for r in rows})
    print(f"  {'':<9} " + " ".join(f"{m:>15}" for m in models + ["all"]))
    for name, group in groups.items():
        cells = []
        for m in models + ["all"]:
            errors = [abs(r["error"]) for r in group if m == "all" or r["model"] == m]
            cells.append(f"{100 * statistics.median(errors):5.1f}% /{100 * max(errors):5.1f}%" if errors else "-")
        print(f"  {name:<9} " + " ".join(f"{c:>15}" for c in cells))
    with open(args.out / "validation.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
