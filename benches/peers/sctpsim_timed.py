#!/usr/bin/env python3
"""`sctpsim` with the simulation timed: runs the sctpsim command line with the arguments
given (as the `sctpsim` entry point does) and prints to stderr, for each call of the core's
run function (`sctpsim._core.run`: it builds the simulation from the scenario text, runs it,
writes the results files but scenario.toml and returns the results), one line
`sctpsim-core-run SECONDS` of wall time.

Everything else (interpreter start-up, imports, argument handling, writing scenario.toml)
is outside that figure and inside the process's total, so the whole process costs what
`sctpsim ARGS...` costs plus this file's few lines.
"""

from __future__ import annotations

import sys
import time

from sctpsim import _core

_run = _core.run


def _timed_run(*args, **kwargs):
    start = time.perf_counter()
    try:
        return _run(*args, **kwargs)
    finally:
        print(f"sctpsim-core-run {time.perf_counter() - start:.6f}", file=sys.stderr, flush=True)


_core.run = _timed_run

if __name__ == "__main__":
    from sctpsim.cli import main

    sys.exit(main(sys.argv[1:]))
