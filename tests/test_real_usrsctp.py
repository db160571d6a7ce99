"""Interoperability of ``sctpsim real`` with usrsctp (Debian ``libusrsctp-examples``): its
``tsctp`` program as receiver and as sender, with UDP encapsulation (RFC 6951).

tsctp's options (usrsctp programs/tsctp.c): ``-E`` its own UDP encapsulation port, ``-U``
the peer's, ``-p`` the SCTP port, ``-L`` the local address, ``-l``/``-n`` message length
and count, ``-T`` seconds to send; without an address it is a server that reads each
association to its end and prints ``first length, messages, recv calls, bytes, seconds,
throughput, notifications``; it sends messages of the byte ``b``. The Debian build logs
every packet on stdout, which the tests read and throw away.

tsctp offers no way to shorten usrsctp's RTO.Min (1 s) or Path.Max.Retrans (5), with which
it keeps sending new data to a failed primary for a minute (about 63 s). For failover in the
direction usrsctp -> sctpsim the tests build ``usrsctp-timers/usrsctp_timers.c``, an
LD_PRELOAD shim that sets those defaults through usrsctp's own sysctl API after
``usrsctp_init`` (from ``USRSCTP_*`` environment variables), with the system's C compiler;
the test is skipped, saying so, if there is none.

Every process the tests start is waited for with a timeout; one that does not finish is
killed and the test fails with the end of its output (``realmode.Proc``,
``realmode.run_logged``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd
from realmode import TSCTP_RESULT, Proc, free_udp_port, run_logged, scalars, sctpsim_real, usrsctp

MB100 = 100_000_000


def closed_reasons(run_dir: Path) -> list[str]:
    events = pd.read_parquet(run_dir / "events.parquet")
    return [d for d in events["detail"] if d.startswith("Closed")]


def tsctp_server(port: int, udp_port: int, *extra: str) -> Proc:
    server = Proc([str(usrsctp("tsctp")), "-E", str(udp_port), "-p", str(port), *extra], keep=TSCTP_RESULT)
    server.wait_ready()  # its first debug line comes once it has bound its UDP socket
    return server


def tsctp_result(server: Proc) -> tuple[int, int]:
    """(messages, bytes) of the association tsctp served."""
    deadline = time.monotonic() + 10
    while not server.out and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.out, "tsctp printed no result"
    m = TSCTP_RESULT.match(server.out[0])
    assert m is not None
    return int(m.group(2)), int(m.group(4))


def test_usrsctp_receives_100_mb_from_sctpsim(tmp_path: Path) -> None:
    udp = free_udp_port()
    server = tsctp_server(5001, udp)
    try:
        send = Proc(sctpsim_real(
            "send", "--bind", "127.0.0.1", "--udp-port", "0", "--peer", "127.0.0.1", "--peer-udp-port", str(udp),
            "--peer-port", "5001", "--bytes", "100MB", "--message-size", "8KiB", "--out", str(tmp_path / "send"),
        ))  # fmt: skip
        assert send.wait(120) == 0, send.err
        messages, nbytes = tsctp_result(server)
    finally:
        server.stop()
    s = scalars(tmp_path / "send")
    # Handshake, every byte counted by usrsctp, graceful shutdown.
    assert nbytes == MB100 == s["sctp", "send", "acked_bytes"] == s["sctp", "send", "queued_bytes"]
    assert messages == s["sctp", "send", "queued_messages"] == -(-MB100 // 8192)
    assert closed_reasons(tmp_path / "send") == ["Closed { reason: Shutdown }"]
    assert s["real", "send", "bad_checksum"] == 0


def test_sctpsim_receives_100_mb_from_usrsctp(tmp_path: Path) -> None:
    ours, theirs = free_udp_port(), free_udp_port()
    sink = Proc(sctpsim_real("sink", "--bind", "127.0.0.1", "--udp-port", str(ours), "--once", "--check", "fill:98",
                             "--time", "120s", "--out", str(tmp_path / "sink")))  # fmt: skip
    try:
        sink.wait_ready()
        client = Proc(
            [str(usrsctp("tsctp")), "-E", str(theirs), "-U", str(ours), "-p", "5001", "-l", "1000", "-n", "100000",
             "127.0.0.1"],
            keep=re.compile(r"^(Sending of|Throughput)"),
        )  # fmt: skip
        try:
            assert client.wait(120) == 0, client.describe()
        finally:
            client.stop()
        assert sink.wait(60) == 0, sink.err
    finally:
        sink.stop()
    assert any(line.startswith("Sending of 100000 messages of length 1000") for line in client.out), client.out
    k = scalars(tmp_path / "sink")
    # Every byte arrived, each message whole and made of tsctp's 'b' (98).
    assert k["sctp", "sink", "delivered_bytes"] == MB100
    assert k["sctp", "sink", "delivered_messages"] == 100_000
    assert k["real", "sink", "checked_messages"] == 100_000
    assert k["real", "sink", "check_errors"] == 0
    assert closed_reasons(tmp_path / "sink") == ["Closed { reason: Shutdown }"]


def test_a_multihomed_sctpsim_keeps_its_association_with_usrsctp_when_one_address_fails(tmp_path: Path) -> None:
    udp = free_udp_port()
    # usrsctp bound to 127.0.0.1 alone: one destination; our side has two addresses.
    server = tsctp_server(5001, udp, "-L", "127.0.0.1")
    try:
        send = Proc(sctpsim_real(
            "send", "--bind", "127.0.0.1,127.0.0.2", "--udp-port", "0", "--peer", "127.0.0.1",
            "--peer-udp-port", str(udp), "--peer-port", "5001", "--time", "3s", "--fault", "127.0.0.1@1s",
            "--set", "sctp.rto_initial=200ms", "--set", "sctp.rto_min=200ms", "--set", "sctp.rto_max=800ms",
            "--out", str(tmp_path / "send"),
        ))  # fmt: skip
        assert send.wait(60) == 0, send.err
        messages, nbytes = tsctp_result(server)
    finally:
        server.stop()
    s = scalars(tmp_path / "send")
    # Everything sent before and after the loss of 127.0.0.1 was delivered, and the
    # association ended gracefully.
    assert nbytes == s["sctp", "send", "acked_bytes"] == s["sctp", "send", "queued_bytes"]
    assert messages == s["sctp", "send", "queued_messages"]
    assert closed_reasons(tmp_path / "send") == ["Closed { reason: Shutdown }"]
    # The one destination timed out and its packets moved to 127.0.0.2.
    assert s["sctp", "send", "t3_timeouts"] >= 1
    assert s["real", "send", "source_changes"] >= 1
    assert s["real", "send", "fault_dropped_tx"] + s["real", "send", "fault_dropped_rx"] > 0
    events = pd.read_parquet(tmp_path / "send" / "events.parquet")
    moved = events[events["detail"].str.contains("source_changed")]
    assert len(moved) and (moved["time_s"] >= 1.0).all()
    assert "to=127.0.0.2" in moved["detail"].iloc[0]
    # Data kept flowing after the fault: megabytes acknowledged after the first second.
    series = pd.read_parquet(tmp_path / "send" / "timeseries.parquet")
    acked = series[(series["entity"] == "send") & (series["metric"] == "acked_bytes")]
    at_fault = acked[acked["time_s"] <= 1.0]["value"].max()
    assert acked["value"].max() - at_fault > 1e6


def usrsctp_timers_shim(tmp_path: Path) -> Path:
    """The LD_PRELOAD shim that sets usrsctp's timer defaults, built into ``tmp_path``."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        import pytest

        pytest.skip("no C compiler to build the usrsctp timer shim (tests/usrsctp-timers)")
    source = Path(__file__).parent / "usrsctp-timers" / "usrsctp_timers.c"
    shim = tmp_path / "usrsctp_timers.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(shim), str(source), "-ldl"], check=True, timeout=120)
    return shim


def test_usrsctp_keeps_its_association_with_a_multihomed_sctpsim_when_one_address_fails(tmp_path: Path) -> None:
    tsctp = usrsctp("tsctp")
    shim = usrsctp_timers_shim(tmp_path)
    ours, theirs = free_udp_port(), free_udp_port()
    # Our sink has two addresses; everything through 127.0.0.1, the address tsctp connects
    # to (its primary), is lost, both ways, from half a second after the association was
    # established: into tsctp's 4-s transfer however long the processes took to start.
    sink = Proc(sctpsim_real("sink", "--bind", "127.0.0.1,127.0.0.2", "--udp-port", str(ours), "--once",
                             "--check", "fill:98", "--time", "60s", "--fault", "127.0.0.1@established+500ms",
                             "--out", str(tmp_path / "sink")))  # fmt: skip
    # usrsctp's timers shortened so that it fails over in about a second: RTO 1 s (RTO.Min =
    # RTO.Max = RTO.Initial), Path.Max.Retrans 1, HB.interval 200 ms.
    #
    # RTO.Min is kept above the fault's 0.5 s on purpose. usrsctp (0.9.5, Debian's) does not
    # restart T3-rtx on a SACK, so during a transfer T3-rtx expires every RTO and, marking
    # nothing sent within the last SRTT + 4 RTTVAR, is left to the next SACK to re-arm
    # (sctp_t3rxt_timer, sctp_mark_all_for_resend). Its safeguard that re-arms it on the spot
    # counts running T3 timers (num_send_timers_up), and that count goes one too high when
    # the timer thread fires T3 while the input thread, holding the association's lock,
    # starts it again (and perhaps stops it): the handler then leaves early without counting
    # its expiry (sctputil.c, sctp_timeout_handler). After that, an expiry
    # just after the loss (chunks too young to mark) leaves no T3 running, no SACK ever comes
    # again, our window is full, and usrsctp sends only HEARTBEATs, answered by 127.0.0.2,
    # forever: captures show its last DATA to 127.0.0.1, a T3 expiry some 10-35 ms later that
    # sends nothing, then heartbeats alone until the test's timeout (6 runs in 30 with both
    # cores loaded and RTO.Min 100 ms). With no T3 expiry before the fault there is nothing to
    # miscount, and its first expiry comes long enough after the fault to mark everything.
    env = {**os.environ, "LD_PRELOAD": str(shim), "USRSCTP_RTO_MIN": "1000", "USRSCTP_RTO_MAX": "1000",
           "USRSCTP_RTO_INITIAL": "1000", "USRSCTP_PATH_MAX_RETRANS": "1", "USRSCTP_HB_INTERVAL": "200"}
    try:
        sink.wait_ready()
        start = time.monotonic()
        try:
            out = run_logged(
                [str(tsctp), "-E", str(theirs), "-U", str(ours), "-p", "5001", "-l", "1000", "-T", "4", "127.0.0.1"],
                tmp_path / "tsctp.log", timeout=60, env=env,
            )  # fmt: skip
        except AssertionError as e:
            sink.stop()
            raise AssertionError(f"{e}\n--- the sink: {sink.describe()}") from None
        took = time.monotonic() - start
        assert sink.wait(60) == 0, sink.describe()
    finally:
        sink.stop()
    sent = re.search(r"^Sending of (\d+) messages of length 1000", out, re.M)
    assert sent, out[-2000:]
    (tmp_path / "tsctp.log").unlink()  # tens of MB of usrsctp's packet log
    k = scalars(tmp_path / "sink")
    # Every message tsctp sent arrived whole, and the association ended gracefully.
    assert k["sctp", "sink", "delivered_messages"] == int(sent.group(1)) == k["real", "sink", "checked_messages"]
    assert k["real", "sink", "check_errors"] == 0
    assert closed_reasons(tmp_path / "sink") == ["Closed { reason: Shutdown }"]
    # The fault struck half a second after the association came up and took packets.
    events = pd.read_parquet(tmp_path / "sink" / "events.parquet")
    connected = events[events["detail"] == "Connected"]["time_s"].min()
    fault = events[events["kind"] == "fault"]["time_s"]
    assert len(fault) == 1 and abs(fault.iloc[0] - connected - 0.5) < 1e-6, events
    assert k["real", "sink", "fault_dropped_rx"] > 0
    # Megabytes kept arriving after it (through 127.0.0.2).
    series = pd.read_parquet(tmp_path / "sink" / "timeseries.parquet")
    delivered = series[(series["entity"] == "sink") & (series["metric"] == "delivered_bytes")]
    at_fault = delivered[delivered["time_s"] <= fault.iloc[0]]["value"].max()
    assert delivered["value"].max() - at_fault > 1e6
    # Seconds, not usrsctp's default minute: 4 s of sending and the shutdown.
    assert took < 20, took
