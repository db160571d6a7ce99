"""Whole-product checks through the installed command: the invalid-scenario corpus, every
bundled example, pcap captures decoded by tshark, and the generated reference page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from programs import tshark_or_skip

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


def test_captures_decode_in_tshark_without_malformed_packets(tmp_path: Path) -> None:
    exe = tshark_or_skip()
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


def tshark_rows(exe: str, pcap: Path, *fields: str) -> list[list[str]]:
    """One row per packet of ``fields``; SCTP checksums are verified as CRC-32C (RFC 9260
    appendix B), which Wireshark does not do by default."""
    args = [exe, "-r", str(pcap), "-o", "sctp.checksum:CRC-32C", "-T", "fields"]
    for field in fields:
        args += ["-e", field]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


# Wireshark's expert severities; PI_WARN is allowed ("More than 100 TSNs were
# gap-acknowledged in this SACK" is a legitimate SACK during a loss burst).
_PI_ERROR = 0x00800000
_SCTP = {"DATA": "0", "INIT": "1", "INIT ACK": "2", "SACK": "3", "HEARTBEAT": "4", "HEARTBEAT ACK": "5",
         "COOKIE ECHO": "10", "COOKIE ACK": "11"}


def test_sctp_captures_decode_with_valid_checksums(tmp_path: Path) -> None:
    exe = tshark_or_skip()
    out = tmp_path / "out"
    proc = sctpsim("run", str(ROOT / "examples" / "failover.toml"), "--out", str(out), "--set", "duration=20s",
                   "--set", 'record.capture=["A/eth0", "A/eth1"]')
    assert proc.returncode == 0, proc.stderr
    chunks = {}
    for name in ("A-eth0.pcap", "A-eth1.pcap"):
        rows = tshark_rows(exe, out / name, "frame.time_epoch", "sctp.chunk_type", "sctp.checksum.status",
                           "_ws.malformed", "_ws.expert.severity")
        assert len(rows) > 100
        assert all(r[3] == "" for r in rows), "malformed packets in " + name
        # checksum status 1 = good (0 would be bad, 2 unverified).
        assert {r[2] for r in rows} == {"1"}, name
        severities = [int(s) for r in rows for s in r[4].split(",") if s]
        assert all(s < _PI_ERROR for s in severities), name
        chunks[name] = rows
    primary_types = {t for r in chunks["A-eth0.pcap"] for t in r[1].split(",")}
    # The handshake runs on the primary path; data and SACKs flow there until it breaks.
    for chunk in ("INIT", "INIT ACK", "COOKIE ECHO", "COOKIE ACK", "DATA", "SACK"):
        assert _SCTP[chunk] in primary_types, chunk
    # The alternate path is confirmed by a heartbeat exchange right after set-up, carries
    # no data while the primary works, and carries the first retransmission one RTO
    # (1 s, RFC 9260 6.3.3 and 6.4) after the break at 10 s.
    alternate = chunks["A-eth1.pcap"]
    assert [r[1] for r in alternate[:4]] == [_SCTP["HEARTBEAT"], _SCTP["HEARTBEAT"], _SCTP["HEARTBEAT ACK"],
                                              _SCTP["HEARTBEAT ACK"]]
    first_data = next(float(r[0]) for r in alternate if _SCTP["DATA"] in r[1].split(","))
    assert 11.0 < first_data < 11.01
    # Both endpoints list both of their addresses (RFC 9260 5.1.2).
    listed = tshark_rows(exe, out / "A-eth0.pcap", "sctp.parameter_ipv4_address")
    assert ["10.1.0.1,10.2.0.1"] in listed and ["10.1.1.1,10.2.1.1"] in listed


def test_reference_page_is_generated_from_the_schema() -> None:
    proc = sctpsim("params", "--markdown")
    assert proc.returncode == 0
    page = ROOT / "docs" / "scenario-reference.md"
    assert page.read_text() == proc.stdout, "regenerate: sctpsim params --markdown > docs/scenario-reference.md"
