"""Ctrl-C, dying processes and closed pipes: a run stops at once when asked, a sweep
survives a killed worker, a killed sweep leaves no worker behind, and a reader that stops
early is no failure.

Ctrl-C: a run stops at once, whatever is left of its simulated time, and writes nothing.

The run is started as a user would (``python -m sctpsim run`` in a subprocess) for a
simulated time that would take many minutes, and interrupted once it is simulating (its
staging directory exists). The limits are generous: they only tell "stopped when asked"
from "finished the simulation first".
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sctpsim

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
        # A shell that started the tests in the background made them ignore SIGINT, and
        # Python keeps it ignored: give the run the default, as in a terminal.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
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


# ------------------------------------------------------------ sweep workers

SWEEP = """\
name = "workers"
scenario = "{scenario}"
replications = 4
metrics = ["flow/*/goodput"]
[set]
duration = "{duration}"
"record.capture" = []
"""


def _children(pid: int, marker: bytes = b"spawn_main") -> list[int]:
    """The processes whose parent is ``pid`` and whose command line holds ``marker``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and marker in (stat.parent / "cmdline").read_bytes():
                found.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return found


def _wait_for(what: str, check: Callable[[], Any], limit: float = 120.0) -> Any:
    deadline = time.monotonic() + limit
    while not (value := check()):
        assert time.monotonic() < deadline, what
        time.sleep(0.05)
    return value


def test_a_killed_worker_costs_no_run(tmp_path: Path) -> None:
    # A worker killed from outside (as the system's out-of-memory killer would) breaks the
    # pool; the runs it broke run again, and every run is stored as done.
    path = tmp_path / "w.toml"
    path.write_text(SWEEP.format(scenario=EXAMPLE.as_posix(), duration="300s"))
    sweep = sctpsim.load_sweep(path)
    outcome: list[Any] = []
    thread = threading.Thread(
        target=lambda: outcome.append(
            sctpsim.run_sweep(sweep, tmp_path / "out", jobs=2, progress=False)
        )
    )
    thread.start()
    workers = _wait_for("two workers", lambda: len(w := _children(os.getpid())) == 2 and w)
    time.sleep(0.5)
    os.kill(workers[0], signal.SIGKILL)
    thread.join(timeout=600)
    assert outcome, "the sweep did not finish"
    result = outcome[0]
    assert len(result.failed) == 0, result.failed["error"].tolist()
    assert (result.runs["status"] == "ok").sum() == 4


def test_workers_end_when_the_sweep_process_is_killed(tmp_path: Path) -> None:
    path = tmp_path / "w.toml"
    path.write_text(SWEEP.format(scenario=EXAMPLE.as_posix(), duration="100000s"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "sctpsim", "sweep", str(path), "--jobs", "2", "--out", "out"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        workers = _wait_for("two workers", lambda: len(w := _children(proc.pid)) == 2 and w)
    finally:
        proc.kill()
        proc.wait()
    alive = lambda: [w for w in workers if Path(f"/proc/{w}").exists() and _not_zombie(w)]  # noqa: E731
    try:
        _wait_for("the workers to end", lambda: not alive(), limit=30)
    finally:
        for w in alive():
            os.kill(w, signal.SIGKILL)


def _not_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_reader_that_stops_early_is_no_failure(tmp_path: Path) -> None:
    # `sctpsim run ... | head -1`: the results are written; the summary nobody reads is
    # no error (rich alone would exit with status 1).
    proc = subprocess.Popen(
        [sys.executable, "-m", "sctpsim", "run", str(EXAMPLE), "--set", "duration=1s", "--out", "o"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0, err
    assert err == ""
    assert (tmp_path / "o" / "scalars.csv").is_file()
