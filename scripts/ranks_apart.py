#!/usr/bin/env python3
"""How far apart a run's ranks go through the same step, from their timelines.

For each run directory (trace-<rank>.json of every rank: `profile.trace_steps`, or
validate_predict.sh's TRACE_STEPS), and for each step of the last traced epoch that every rank
traced: how far apart the ranks began its forward, and how far apart their communication ended
(latest less earliest). Prints the median and the most over those steps. Each rank's times are set
on the run's reference clock (rank 0's, or parameter server 0's) as `dtbench report --traces` sets
them: its steady-clock origin less its measured offset (Cristian's algorithm, tens of microseconds
uncertain). Synchronous transports keep their ranks near each other; an asynchronous one's drift
apart, and each rank then computes while the others communicate.

    scripts/ranks_apart.py RUN_DIR [RUN_DIR...]
"""
import json
import pathlib
import statistics
import sys


def rank_events(trace: pathlib.Path) -> tuple:
    """The trace's reference clock, and its complete events in ms on that clock."""
    events = json.loads(trace.read_text())
    process = next(e for e in events if e.get("name") == "process_name")
    clock = process["args"].get("clock", {})
    if "origin_steady_ns" not in clock or "reference" not in clock:
        raise ValueError(f"{trace}: no clock record (origin_steady_ns, reference) in its process_name event")
    origin_ms = (clock["origin_steady_ns"] - clock.get("offset_ns", 0)) / 1e6
    spans = [(e["name"], e["args"].get("epoch"), e["args"].get("step"), origin_ms + e["ts"] / 1e3,
              origin_ms + (e["ts"] + e["dur"]) / 1e3) for e in events if e.get("ph") == "X" and "args" in e]
    return clock["reference"], spans


def apart(run: pathlib.Path) -> str:
    traces = sorted(run.glob("trace-*.json"))
    if len(traces) < 2:
        raise ValueError(f"{run}: {len(traces)} trace-<rank>.json; expected one per rank, at least 2")
    per_rank = [rank_events(t) for t in traces]
    references = {reference for reference, _ in per_rank}
    if len(references) > 1:
        raise ValueError(f"{run}: the ranks' clocks have different references ({', '.join(sorted(references))})")
    last_epochs = [max((e for name, e, *_ in spans if name == "forward"), default=None) for _, spans in per_rank]
    if None in last_epochs:
        raise ValueError(f"{traces[last_epochs.index(None)]}: no traced step")
    epoch = min(last_epochs)  # the last epoch every rank traced
    starts, ends = {}, {}
    for _, spans in per_rank:
        for name, e, step, begin, end in spans:
            if e != epoch:
                continue
            if name == "forward":
                starts.setdefault(step, []).append(begin)
            elif name == "comm":
                ends.setdefault(step, []).append(end)
    ranks = len(per_rank)
    forward = [max(v) - min(v) for v in starts.values() if len(v) == ranks]
    comm = [max(v) - min(v) for v in ends.values() if len(v) == ranks]
    if not forward or not comm:
        raise ValueError(f"{run}: no step of epoch {epoch} traced by all {ranks} ranks")
    return (f"{run.name}: {ranks} ranks, {len(forward)} steps of epoch {epoch}: forward began "
            f"{statistics.median(forward):.0f} ms apart (median), {max(forward):.0f} at most; "
            f"comm ended {statistics.median(comm):.0f} ms apart, {max(comm):.0f} at most")


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    failed = False
    for arg in sys.argv[1:]:
        try:
            print(apart(pathlib.Path(arg)))
        except (ValueError, OSError, KeyError, StopIteration, json.JSONDecodeError) as e:
            print(f"ranks_apart.py: {e}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
