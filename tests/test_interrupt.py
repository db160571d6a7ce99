"""Ctrl-C: a run stops at once, whatever is left of its simulated time, and writes nothing.

The run is started as a user would (``python -m sctpsim run`` in a subprocess) for a
simulated time that would take many minutes, and interrupted once it is simulating (its
staging directory exists). The limits are generous: they only tell "stopped when asked"
from "finished the simulation first".
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "two-path-cbr.toml"
# Months of simulated time, nothing recorded that grows with it.
ENDLESS = ["--set", "duration=10000000s", "--set", "record.interval=0s", "--set", "record.capture=[]"]


def test_ctrl_c_stops_a_run_while_it_simulates(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sctpsim", "run", str(EXAMPLE), *ENDLESS, "--out", str(out), "-q"],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not any(p.name.startswith(".out.partial-") for p in tmp_path.iterdir()):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the run did not start"
            time.sleep(0.05)
        time.sleep(0.5)  # well into the simulation
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=60)
    finally:
        proc.kill()
    err = proc.stderr.read() if proc.stderr else ""
    assert rc == 130, err
    assert "Traceback" not in err
    assert err.strip() == "error: interrupted, nothing written"
    assert sorted(p.name for p in tmp_path.iterdir()) == []
