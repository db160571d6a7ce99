"""Helpers of the real-mode tests: free ports, ``sctpsim real`` processes, usrsctp's programs."""

from __future__ import annotations

import collections
import csv
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
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


#: Lines of a process's output kept for the message of a test that fails on it.
TAIL_LINES = 40


def _tail(lines: collections.deque[str] | list[str], n: int = TAIL_LINES) -> str:
    return "\n".join(list(lines)[-n:])


def _children_hear_ctrl_c() -> None:
    """A test run started in the background by a shell without job control (`cmd &`,
    `nohup`) ignores SIGINT, and the processes it starts inherit that: `sctpsim real` would
    then be deaf to the Ctrl-C the tests send it. With a handler here, they start with the
    default action."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


class Proc:
    """A background process whose stdout and stderr are read as they come (so a chatty
    program never blocks on a full pipe); ``out`` and ``err`` keep the lines that matched
    ``keep``, and the last lines of each are kept anyway for failure messages. Every wait
    has a timeout: a process that does not finish in time is killed and the test fails with
    the end of its output, instead of hanging."""

    def __init__(
        self,
        args: list[str],
        keep: re.Pattern[str] | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.args = args
        _children_hear_ctrl_c()
        self.p = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace", cwd=cwd, env=env
        )
        self.keep = keep
        self.out: list[str] = []
        self.err: list[str] = []
        self.tail_out: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self.tail_err: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self.ready = threading.Event()
        self._threads = [
            threading.Thread(target=self._read, args=(self.p.stdout, self.out, self.tail_out), daemon=True),
            threading.Thread(target=self._read, args=(self.p.stderr, self.err, self.tail_err), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _read(self, stream, into: list[str], tail: collections.deque[str]) -> None:  # type: ignore[no-untyped-def]
        for line in stream:
            line = line.rstrip("\n")
            self.ready.set()
            tail.append(line)
            if self.keep is None or self.keep.search(line):
                into.append(line)
        self.ready.set()

    def describe(self) -> str:
        """The command and the end of its output, for a failure message."""
        return (
            f"{' '.join(self.args)}\n--- its stdout ends:\n{_tail(self.tail_out)}"
            f"\n--- its stderr ends:\n{_tail(self.tail_err)}"
        )

    def wait_ready(self, timeout: float = 20.0) -> None:
        """Until the process has written its first line (sctpsim's first progress line
        comes once its sockets are bound)."""
        if not self.ready.wait(timeout):
            self.stop()
            raise AssertionError(f"process wrote nothing in {timeout} s: {self.describe()}")

    def wait(self, timeout: float) -> int:
        """Its exit status; killed, and the test failed with its output, after `timeout` s."""
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise AssertionError(f"process did not finish in {timeout} s (killed): {self.describe()}") from None
        for t in self._threads:
            t.join(5)
        return rc

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(10)
        for t in self._threads:
            t.join(5)


def run_logged(args: list[str], log: Path, timeout: float, env: Mapping[str, str] | None = None) -> str:
    """Runs `args` to its end with its stdout and stderr written to `log` (a program that logs
    every packet, like Debian's usrsctp programs, then never waits on a pipe), and returns
    that output. A nonzero exit, or no exit within `timeout` s (the process is killed), fails
    the test with the end of the log."""
    with log.open("w") as f:
        p = subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT, env=env)
        try:
            rc = p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)
            rc = None
    text = log.read_text(errors="replace")
    if rc != 0:
        what = f"did not finish in {timeout} s (killed)" if rc is None else f"exited with {rc}"
        raise AssertionError(f"{' '.join(args)} {what}; its output ({log}) ends:\n{_tail(text.splitlines())}")
    return text


def sctpsim_real(*args: str) -> list[str]:
    return [sys.executable, "-m", "sctpsim", "real", *args]


