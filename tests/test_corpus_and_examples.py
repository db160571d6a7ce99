"""Whole-product checks through the installed command: the invalid-scenario corpus, every
bundled example, pcap captures decoded by tshark, and the generated reference page."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INVALID = sorted((ROOT / "tests" / "invalid").glob("*.toml"))
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))


def sctpsim(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sctpsim", *args], capture_output=True, text=True, cwd=cwd, check=False
    )


def test_corpus_is_large_enough() -> None:
    assert len(INVALID) >= 20


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_invalid_scenario_is_rejected_with_its_message(path: Path, tmp_path: Path) -> None:
    expected = path.read_text().splitlines()[0].removeprefix("# expect: ")
    out = tmp_path / "out"
    proc = sctpsim("run", str(path), "--out", str(out))
    assert proc.returncode == 2
    assert proc.stderr == f"error: {path}: {expected}\n"
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no partial directory either
    check = sctpsim("check", str(path))
    assert check.returncode == 2 and check.stderr == proc.stderr


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_runs(path: Path, tmp_path: Path) -> None:
    proc = sctpsim("run", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "scalars.csv").is_file()


def tshark() -> str:
    found = shutil.which("tshark")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("tshark is required in CI (.ci/run installs it)")
        pytest.skip("tshark not installed")
    return found


def test_captures_decode_in_tshark_without_malformed_packets(tmp_path: Path) -> None:
    exe = tshark()
    out = tmp_path / "out"
    proc = sctpsim("run", str(ROOT / "examples" / "two-path-cbr.toml"), "--out", str(out), "--set", "duration=2s")
    assert proc.returncode == 0, proc.stderr
    pcaps = sorted(out.glob("*.pcap"))
    assert [p.name for p in pcaps] == ["A-eth0.pcap", "B-eth1.pcap"]
    first = {}
    for pcap in pcaps:
        fields = subprocess.run(
            [exe, "-r", str(pcap), "-T", "fields", "-e", "frame.time_epoch", "-e", "ip.src", "-e", "udp.dstport", "-e", "_ws.malformed", "-e", "_ws.expert"],
            capture_output=True, text=True, check=True,
        ).stdout.splitlines()
        assert len(fields) > 100
        rows = [line.split("\t") for line in fields]
        assert all(r[3] == "" for r in rows), "malformed packets in " + pcap.name
        assert all(r[1].startswith("10.") and r[2] in {"9000", "9001"} for r in rows)
        first[pcap.name] = rows[0][0]
    # Nanosecond timestamps survive: A sends its first datagram at t = 0; B/eth1 receives
    # path2's first 1028-byte datagram after two 50 Mbit/s serialisations (164.48 us each)
    # and two 10 ms propagation delays.
    assert first == {"A-eth0.pcap": "0.000000000", "B-eth1.pcap": "0.020328960"}
    # A-eth0 carries flow "path1": 8 Mbit/s of 1000-byte payloads, one every ms, 0..2 s inclusive.
    count = subprocess.run([exe, "-r", str(pcaps[0]), "-T", "fields", "-e", "frame.number"], capture_output=True, text=True, check=True).stdout.split()
    assert len(count) == 2001


def test_reference_page_is_generated_from_the_schema() -> None:
    proc = sctpsim("params", "--markdown")
    assert proc.returncode == 0
    page = ROOT / "docs" / "scenario-reference.md"
    assert page.read_text() == proc.stdout, "regenerate: sctpsim params --markdown > docs/scenario-reference.md"
