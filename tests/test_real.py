"""Real mode (``sctpsim real``, ``sctpsim.real``): the engine on UDP sockets over loopback."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from programs import tshark_or_skip
from realmode import Proc, free_udp_port, scalars, sctpsim_real

import sctpsim.real

FAST = [
    "--set", "sctp.rto_initial=200ms", "--set", "sctp.rto_min=200ms", "--set", "sctp.rto_max=800ms",
    "--set", "sctp.sack_delay=40ms", "--set", "sctp.path_max_retrans=2",
]  # fmt: skip

# SCTP chunk types (RFC 9260 §3.2).
DATA, INIT, INIT_ACK, SACK, SHUTDOWN, SHUTDOWN_ACK, COOKIE_ECHO, COOKIE_ACK, SHUTDOWN_COMPLETE = (
    "0", "1", "2", "3", "7", "8", "10", "11", "14",
)  # fmt: skip


def closed_reasons(run_dir: Path) -> list[str]:
    events = pd.read_parquet(run_dir / "events.parquet")
    return [d for d in events["detail"] if d.startswith("Closed")]


def test_multihomed_transfer_fails_over_and_writes_the_results_of_a_run(tmp_path: Path) -> None:
    port = free_udp_port()
    sink = Proc(sctpsim_real(
        "sink", "--bind", "127.0.0.1,127.0.0.2", "--udp-port", str(port), "--once", "--check", "pattern",
        "--out", str(tmp_path / "sink"), *FAST,
    ))  # fmt: skip
    try:
        sink.wait_ready()
        send = Proc(sctpsim_real(
            "send", "--bind", "127.0.0.1,127.0.0.2", "--udp-port", "0", "--peer", "127.0.0.1,127.0.0.2",
            "--peer-udp-port", str(port), "--time", "2.5s", "--message-size", "4KiB", "--streams", "3",
            "--fault", "127.0.0.1@0.8s", "--out", str(tmp_path / "send"), *FAST,
        ))  # fmt: skip
        assert send.wait(60) == 0, send.err
        assert sink.wait(30) == 0, sink.err
    finally:
        sink.stop()
    s, k = scalars(tmp_path / "send"), scalars(tmp_path / "sink")
    queued = s["sctp", "send", "queued_bytes"]
    assert queued > 1e6
    # Every byte arrived once and intact, and both ends closed gracefully.
    assert s["sctp", "send", "acked_bytes"] == queued
    assert k["sctp", "sink", "delivered_bytes"] == queued
    assert k["real", "sink", "check_errors"] == 0 and k["real", "sink", "duplicate_messages"] == 0
    assert closed_reasons(tmp_path / "send") == ["Closed { reason: Shutdown }"]
    assert closed_reasons(tmp_path / "sink") == ["Closed { reason: Shutdown }"]
    # The primary path broke at 0.8 s (the sender's 127.0.0.1): found inactive after three
    # timeouts, new data moved to the second path.
    assert s["sctp", "send", "primary_break_at"] == 0.8
    assert 1.0 < s["sctp", "send", "failover_time"] < 3.0
    assert s["sctp_path", "send/path1", "bytes_sent"] > 0
    assert s["sctp_path", "send/path0", "state"] == 2
    assert s["real", "send", "fault_dropped_tx"] > 0
    # The summary has the simulated run's tables.
    text = "\n".join(send.out)
    for title in ("SCTP senders", "SCTP failover", "SCTP paths", "SRTT ms", "Real sockets"):
        assert title in text, title
    assert "SCTP receivers" in "\n".join(sink.out)
    for name in ("scenario.toml", "scalars.csv", "timeseries.parquet", "events.parquet"):
        assert (tmp_path / "send" / name).is_file(), name
    assert not list((tmp_path / "send").glob("*.pcap"))
    # scenario.toml describes the run, the SCTP settings and the check included.
    described = tomllib.loads((tmp_path / "send" / "scenario.toml").read_text())
    assert described["preset"] == "rfc9260" and described["set"] == list(FAST[1::2])
    assert described["faults"] == ["127.0.0.1@0.8s:1"] and described["crc32c"] is True
    assert tomllib.loads((tmp_path / "sink" / "scenario.toml").read_text())["check"] == "pattern"
    series = pd.read_parquet(tmp_path / "send" / "timeseries.parquet")
    assert {"cwnd", "srtt", "rto", "state"} <= set(series["metric"])



def test_the_capture_decodes_in_tshark_as_sctp_over_udp(tmp_path: Path) -> None:
    exe = tshark_or_skip()
    port = free_udp_port()
    sink = Proc(sctpsim_real("sink", "--bind", "127.0.0.1,127.0.0.2", "--udp-port", str(port), "--once", "--pcap",
                             "--out", str(tmp_path / "sink")))  # fmt: skip
    try:
        sink.wait_ready()
        send = Proc(sctpsim_real("send", "--bind", "127.0.0.1,127.0.0.2", "--udp-port", "0", "--peer",
                                 "127.0.0.1,127.0.0.2", "--peer-udp-port", str(port), "--bytes", "5MB", "--pcap",
                                 "--out", str(tmp_path / "send")))  # fmt: skip
        assert send.wait(60) == 0, send.err
        assert sink.wait(30) == 0, sink.err
    finally:
        sink.stop()
    for pcap in (tmp_path / "sink" / "sink.pcap", tmp_path / "send" / "send.pcap"):
        rows = subprocess.run(
            [exe, "-r", str(pcap), "-d", f"udp.port=={port},sctp", "-o", "sctp.checksum:CRC-32C", "-T", "fields",
             "-e", "ip.dst", "-e", "sctp.chunk_type", "-e", "sctp.checksum.status", "-e", "_ws.malformed"],
            capture_output=True, text=True, check=True,
        ).stdout.splitlines()  # fmt: skip
        fields = [r.split("\t") for r in rows]
        assert len(fields) > 1000, pcap
        # Every packet is SCTP with a good CRC32c (status 1), none malformed.
        assert {f[2] for f in fields} == {"1"}, pcap
        assert all(f[3] == "" for f in fields), pcap
        types = {t for f in fields for t in f[1].split(",")}
        for chunk in (INIT, INIT_ACK, COOKIE_ECHO, COOKIE_ACK, DATA, SACK, SHUTDOWN, SHUTDOWN_ACK, SHUTDOWN_COMPLETE):
            assert chunk in types, (pcap, chunk)
        # Both of the sink's addresses appear: data to the first, a heartbeat to the second.
        assert {f[0] for f in fields} >= {"127.0.0.1", "127.0.0.2"}


def test_python_api_runs_sink_and_sender_in_one_process() -> None:
    # Both loops run at once only because each releases the GIL.
    port = free_udp_port()
    got: dict[str, sctpsim.RunResult] = {}

    def sink() -> None:
        got["sink"] = sctpsim.real.sink(["127.0.0.1"], udp_port=port, once=True, check="pattern", time=30)

    t = threading.Thread(target=sink)
    t.start()
    time.sleep(0.3)
    sent = sctpsim.real.send(["127.0.0.1"], ["127.0.0.1"], udp_port=0, peer_udp_port=port, bytes=3_000_000,
                             message_size=1500, streams=2, unordered=True)  # fmt: skip
    t.join(30)
    k = got["sink"]
    assert isinstance(sent, sctpsim.RunResult) and isinstance(k, sctpsim.RunResult)
    assert sent.scalar("sctp", "send", "acked_bytes") == 3_000_000
    assert k.scalar("sctp", "sink", "delivered_bytes") == 3_000_000
    assert k.scalar("real", "sink", "checked_messages") == 2000
    assert k.scalar("real", "sink", "check_errors") == 0
    assert not sent.interrupted  # type: ignore[attr-defined]


def test_ctrl_c_ends_a_sender_gracefully_with_its_results(tmp_path: Path) -> None:
    port = free_udp_port()
    sink = Proc(sctpsim_real("sink", "--bind", "127.0.0.1", "--udp-port", str(port), "--once",
                             "--check", "pattern", "--out", str(tmp_path / "sink")))  # fmt: skip
    try:
        sink.wait_ready()
        send = Proc(sctpsim_real("send", "--bind", "127.0.0.1", "--udp-port", "0", "--peer", "127.0.0.1",
                                 "--peer-udp-port", str(port), "--time", "60s", "--out", str(tmp_path / "send")))  # fmt: skip
        send.wait_ready()
        time.sleep(1.5)
        send.p.send_signal(signal.SIGINT)
        assert send.wait(20) == 130, send.err
        assert sink.wait(20) == 0, sink.err
    finally:
        sink.stop()
    s, k = scalars(tmp_path / "send"), scalars(tmp_path / "sink")
    assert s["run", "run", "interrupted"] == 1
    assert s["run", "run", "wall_time"] < 10
    # Shut down, not aborted: what was queued was delivered.
    assert closed_reasons(tmp_path / "send") == ["Closed { reason: Shutdown }"]
    assert s["sctp", "send", "acked_bytes"] == s["sctp", "send", "queued_bytes"] > 0
    assert k["sctp", "sink", "delivered_bytes"] == s["sctp", "send", "queued_bytes"]
    assert any("interrupted" in line for line in send.err)


def test_ctrl_c_ends_a_sink_with_its_results(tmp_path: Path) -> None:
    sink = Proc(sctpsim_real("sink", "--bind", "127.0.0.1", "--udp-port", "0", "--out", str(tmp_path / "k")))
    try:
        sink.wait_ready()
        time.sleep(0.3)
        sink.p.send_signal(signal.SIGINT)
        assert sink.wait(20) == 130, sink.err
    finally:
        sink.stop()
    k = scalars(tmp_path / "k")
    assert k["run", "run", "interrupted"] == 1
    assert k["real", "sink", "associations"] == 0


@pytest.mark.parametrize(
    ("args", "message", "status"),
    [
        (["send", "--bind", "127.0.0.1", "--peer", "127.0.0.1", "--bytes", "1MB", "--set", "sctp.rto_min=fast"],
         "sctp.rto_min", 2),
        (["send", "--bind", "127.0.0.1", "--peer", "127.0.0.1", "--bytes", "1MB", "--set", "duration=1s"],
         "sctp.KEY=VALUE", 2),
        (["send", "--bind", "127.0.0.1", "--peer", "127.0.0.1"], "exactly one of --bytes and --time", 2),
        (["send", "--bind", "127.0.0.1", "--peer", "nowhere", "--bytes", "1MB"], "not an IPv4 address", 2),
        (["sink", "--bind", "192.0.2.123", "--udp-port", "0"], "binding UDP 192.0.2.123", 1),
        (["sink", "--bind", "127.0.0.1", "--fault", "127.0.0.9@1s"], "not a local address", 2),
        (["sink", "--bind", "127.0.0.1", "--fault", "127.0.0.1@established+soon"], "is not a time", 2),
    ],
)  # fmt: skip
def test_invalid_real_mode_input_is_one_error_line(args: list[str], message: str, status: int, tmp_path: Path) -> None:
    proc = subprocess.run(sctpsim_real(*args, "--out", str(tmp_path / "o"), "-q"), capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert proc.returncode == status, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], proc.stderr
    assert not (tmp_path / "o").exists()
