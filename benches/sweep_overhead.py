#!/usr/bin/env python3
"""What a sweep costs beyond its runs: 1,000 tiny runs with `--jobs 2`, as a user starts it.

Usage (from the repository root, with sctpsim installed):

    python benches/sweep_overhead.py                  # 1,000 runs, 2 jobs
    python benches/sweep_overhead.py --runs 200 --jobs 2 --duration 0.5s

The sweep is `examples/two-path-cbr.toml` (two UDP paths, a queue that overflows, a link
failure) with `--set duration=<duration>` (default 0.2 s) and N replications: N runs that
differ only in their seed. The script times, on the same machine, one after the other:

1. `sctpsim sweep FILE --jobs J` into an empty directory: the whole command, start to exit
   (runs, each run's result files, runs.parquet and summary.csv);
2. the same command again: a resume that finds every run done (what an interrupted sweep
   pays before it continues);
3. the core alone: the same scenario run in this process with `Scenario.run` (the core's run
   and its results in memory, nothing written), 50 times, for the simulation's own cost.

It prints runs per second, the wall time per run per job slot (the sweep's wall time x jobs /
runs), the core's time per run, and their difference: the sweep's overhead per run (worker
start-up, reading the scenario, writing each run's files and the bookkeeping that makes
sweeps resumable).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "examples" / "two-path-cbr.toml"


def sweep_file(directory: Path, runs: int, duration: str) -> Path:
    path = directory / "tiny.toml"
    path.write_text(
        f'name = "tiny"\nscenario = "{TINY}"\nseed = 1\nreplications = {runs}\n'
        'metrics = ["flow/*/goodput", "flow/*/loss_rate"]\n'
        f'[set]\nduration = "{duration}"\n'
    )
    return path


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def core_seconds(duration: str, repeat: int) -> float:
    import sctpsim

    scenario = sctpsim.Scenario(TINY.read_text()).with_overrides([f"duration={duration}"])
    times = []
    for seed in range(repeat):
        start = time.perf_counter()
        scenario.run(seed=seed + 1)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--duration", default="0.2s")
    parser.add_argument("--sctpsim", default=shutil.which("sctpsim") or "sctpsim")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sweep = sweep_file(work, args.runs, args.duration)
        cmd = [args.sctpsim, "sweep", str(sweep), "--jobs", str(args.jobs), "--out", str(work / "out")]
        first = timed(cmd)
        done = len(list((work / "out" / "runs").iterdir()))
        resume = timed(cmd)
    core = core_seconds(args.duration, 50)
    per_slot = first * args.jobs / args.runs
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    print(f"sweep of {args.runs} runs ({done} written), {args.duration} each, --jobs {args.jobs}:")
    print(f"  whole command         {first:8.2f} s   {args.runs / first:7.1f} runs/s")
    print(f"  per run per job slot  {per_slot * 1e3:8.2f} ms")
    print(f"  core alone per run    {core * 1e3:8.2f} ms   (Scenario.run, median of 50)")
    print(f"  overhead per run      {(per_slot - core) * 1e3:8.2f} ms")
    print(f"  resume, all done      {resume:8.2f} s   ({resume / args.runs * 1e3:.2f} ms per run)")
    if done != args.runs:
        sys.exit(f"expected {args.runs} run directories, found {done}")


if __name__ == "__main__":
    main()
