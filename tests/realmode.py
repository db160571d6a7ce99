"""Helpers of the real-mode tests: free ports, ``sctpsim real`` processes, usrsctp's programs."""

from __future__ import annotations

import csv
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

USRSCTP = Path(os.environ.get("USRSCTP_PROGRAMS", "/usr/lib/usrsctp"))

#: tsctp's closing line as a receiver: length of the first message, messages, recv calls,
#: bytes, seconds, throughput, notifications (usrsctp programs/tsctp.c, handle_connection).
TSCTP_RESULT = re.compile(r"^(\d+), (\d+), (\d+), (\d+), ([\d.]+), ([\d.]+), (\d+)$")


def free_udp_port() -> int:
    """A UDP port free on every address now (usrsctp binds the wildcard address)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("0.0.0.0", 0))
        return int(s.getsockname()[1])


def usrsctp(program: str) -> Path:
    """The path of one of usrsctp's example programs, or skip the test saying why."""
    path = USRSCTP / program
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.skip(
            f"usrsctp's example programs are not installed ({path} missing): "
            "apt-get install libusrsctp-examples"
        )
    return path


def scalars(run_dir: Path) -> dict[tuple[str, str, str], float]:
    with (run_dir / "scalars.csv").open(newline="") as f:
        return {(r["kind"], r["entity"], r["metric"]): float(r["value"]) for r in csv.DictReader(f)}


class Proc:
    """A background process whose stdout and stderr are read as they come (so a chatty
    program never blocks on a full pipe); ``lines`` keep what matched ``keep``."""

    def __init__(self, args: list[str], keep: re.Pattern[str] | None = None, cwd: Path | None = None) -> None:
        self.p = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace", cwd=cwd
        )
        self.keep = keep
        self.out: list[str] = []
        self.err: list[str] = []
        self.ready = threading.Event()
        self._threads = [
            threading.Thread(target=self._read, args=(self.p.stdout, self.out), daemon=True),
            threading.Thread(target=self._read, args=(self.p.stderr, self.err), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _read(self, stream, into: list[str]) -> None:  # type: ignore[no-untyped-def]
        for line in stream:
            line = line.rstrip("\n")
            self.ready.set()
            if self.keep is None or self.keep.search(line):
                into.append(line)
        self.ready.set()

    def wait_ready(self, timeout: float = 20.0) -> None:
        """Until the process has written its first line (sctpsim's first progress line
        comes once its sockets are bound)."""
        assert self.ready.wait(timeout), "process wrote nothing"

    def wait(self, timeout: float) -> int:
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise
        for t in self._threads:
            t.join(5)
        return rc

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def sctpsim_real(*args: str) -> list[str]:
    return [sys.executable, "-m", "sctpsim", "real", *args]


