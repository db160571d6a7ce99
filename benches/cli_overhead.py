#!/usr/bin/env python3
"""Whole-process wall time and peak RSS of the `sctpsim` command, as a user runs it.

Usage (from the repository root, with sctpsim installed):

    python benches/cli_overhead.py              # 10 runs of each command, alternating
    python benches/cli_overhead.py --runs 20 --only version,help
    python benches/cli_overhead.py --sctpsim /path/to/other/venv/bin/sctpsim

Each run is one process started with `sctpsim ...`; the commands take turns (round 1 runs
every command once, then round 2, ...) so that a change of machine load hits all alike. Per
command it prints min / median / max of the wall time from start to exit and of the peak
resident set (ru_maxrss of the child, from wait4()). `python -c pass` is timed beside them:
the interpreter's own start-up, which no change to sctpsim can remove.

Commands:

- `version`, `help`: `sctpsim --version`, `sctpsim --help`;
- `params`: `sctpsim params --markdown` (every scenario key);
- `tiny`: `sctpsim run examples/two-path-cbr.toml --set duration=1s` (writes scalars.csv and
  the time-series and event Parquet files of a 1-second run);
- `failover`, `stable`: the failover-tuning study's `wifi-lte.toml` (300 simulated seconds),
  with the Wi-Fi failure at 100 s and without it (`--set faults=[]`), as
  `benches/peers/run.py` runs them.

The `run` commands write into a temporary directory with `--quiet` (the summary tables are
timed by `--summary`, which drops `--quiet`; their output goes to /dev/null).
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
STUDY = ROOT / "python" / "sctpsim" / "studies" / "failover-tuning" / "wifi-lte.toml"
TINY = ROOT / "examples" / "two-path-cbr.toml"


def commands(sctpsim: str, out: Path, quiet: bool) -> dict[str, list[str]]:
    q = ["-q"] if quiet else []
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "version": [sctpsim, "--version"],
        "help": [sctpsim, "--help"],
        "params": [sctpsim, "params", "--markdown"],
        "tiny": [sctpsim, "run", str(TINY), "--set", "duration=1s", "--out", str(out / "tiny"), *q],
        "failover": [sctpsim, "run", str(STUDY), "--out", str(out / "failover"), *q],
        "stable": [sctpsim, "run", str(STUDY), "--set", "faults=[]", "--out", str(out / "stable"), *q],
    }


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MiB) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {proc.returncode}: {err.strip()}")
    return wall, usage.ru_maxrss / 1024.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--only", default="", help="comma-separated command names (default: all)")
    ap.add_argument("--summary", action="store_true", help="run commands print their summary tables")
    ap.add_argument("--sctpsim", default=None, help="the sctpsim executable (default: the one on PATH)")
    args = ap.parse_args()
    sctpsim = args.sctpsim or shutil.which("sctpsim")
    if sctpsim is None:
        raise SystemExit("sctpsim is not on PATH (pip install . first)")
    with tempfile.TemporaryDirectory(prefix="sctpsim-overhead-") as tmp:
        cmds = commands(sctpsim, Path(tmp), quiet=not args.summary)
        if args.only:
            wanted = {"python -c pass", *args.only.split(",")}
            cmds = {k: v for k, v in cmds.items() if k in wanted}
        walls: dict[str, list[float]] = {k: [] for k in cmds}
        rss: dict[str, list[float]] = {k: [] for k in cmds}
        for _ in range(args.runs):
            for name, cmd in cmds.items():
                w, r = timed(cmd)
                walls[name].append(w)
                rss[name].append(r)
    print(f"load average {os.getloadavg()[0]:.1f} / {os.getloadavg()[1]:.1f} / {os.getloadavg()[2]:.1f}; "
          f"{args.runs} runs each (min / median / max)")
    print("| command | wall time (s) | peak RSS (MiB) |")
    print("|---|---|---|")
    for name in cmds:
        w, r = walls[name], rss[name]
        print(f"| {name} | {min(w):.3f} / {statistics.median(w):.3f} / {max(w):.3f} "
              f"| {min(r):.1f} / {statistics.median(r):.1f} / {max(r):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
