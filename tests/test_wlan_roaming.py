"""The roaming example through the command line and the Python API: the run with its report
works, the station associates with AP1, scans below -80 dBm and hands over to AP2 below -90 dBm
(the instants the path-loss model gives), taking the address with its host number in AP2's
subnet, and the management counters and the RSS series reach the results."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import sctpsim
from programs import tshark_or_skip

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "wlan-roaming.toml"


def _crossing_time(rss_dbm: float) -> float:
    """When the walker (10 m from AP1 at t = 0, 15.5 km/h away from it) sees AP1 at rss_dbm:
    log-distance path loss, exponent 3, free space at 1 m on channel 1, 16.02 dBm."""
    l0 = 20 * math.log10(4 * math.pi * 2412e6 / 299_792_458)
    d = 10 ** ((16.02 - l0 - rss_dbm) / 30)
    return (d - 10) / (15.5 / 3.6)


def test_run_with_report_shows_the_handover(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "sctpsim", "run", str(EXAMPLE), "--out", "x", "--report"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "240"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "x" / "report.html").exists()
    roaming = proc.stdout.split("WLAN roaming")[1]
    assert "mn/wlan0" in roaming and f"{_crossing_time(-90.0):.3f}" in roaming
    result = sctpsim.RunResult.load(tmp_path / "x")
    ev = result.events
    wlan = ev[(ev.kind == "wlan") & (ev.entity == "mn/wlan0")]
    steps = wlan.detail.str.split(" ").str[0]
    handover = wlan[steps == "step=handover"].time_s.tolist()
    assert len(handover) == 1
    assert abs(handover[0] - _crossing_time(-90.0)) < 1e-6
    scans = wlan[steps == "step=scan-start"].time_s.tolist()
    assert abs(scans[1] - _crossing_time(-80.0)) < 1e-6
    assoc = wlan[steps == "step=associated"].detail.tolist()
    assert "addr=10.0.1.10" in assoc[0] and "addr=10.0.2.10" in assoc[1]
    assert result.scalar("iface", "mn/wlan0", "wlan_handovers") == 1
    assert result.scalar("iface", "ap2/wlan0", "mgmt_tx_assoc_resp") == 1
    ts = result.timeseries
    rss = ts[(ts.entity == "mn/wlan0") & (ts.metric == "rss")]
    assert rss.value.iloc[0] > -60 and rss.value.min() < -85


def test_same_seed_same_events() -> None:
    scenario = sctpsim.load_scenario(EXAMPLE).with_overrides(["duration=3s"])
    a, b = scenario.run(), scenario.run()
    assert a.events.equals(b.events)
    assert (a.events.kind == "wlan").sum() >= 3


# IEEE 802.11 frame types as tshark's wlan.fc.type_subtype gives them.
_SUBTYPES = {"assoc-req": 0x00, "assoc-resp": 0x01, "probe-req": 0x04, "probe-resp": 0x05, "beacon": 0x08,
             "disassoc": 0x0A, "auth": 0x0B, "data": 0x20, "ack": 0x1D}


def test_air_captures_decode_in_tshark(tmp_path: Path) -> None:
    """record.capture_wlans writes each channel's air with radiotap headers: every frame the
    channel counted, none malformed, each management step of the roaming and the TCP upload's
    data frames, at the radiotap rate and frequency of the channel."""
    exe = tshark_or_skip()
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "sctpsim", "run", str(EXAMPLE), "--out", str(out), "-q",
         "--set", 'record.capture_wlans=["bss1", "bss2"]', "--set", "duration=40s"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = sctpsim.RunResult.load(out)
    seen: dict[str, set[int]] = {}
    for bss, mhz in (("bss1", "2412"), ("bss2", "2437")):
        rows = subprocess.run(
            [exe, "-r", str(out / f"wlan-{bss}.pcap"), "-T", "fields", "-e", "wlan.fc.type_subtype",
             "-e", "radiotap.channel.freq", "-e", "radiotap.datarate", "-e", "ip.dst", "-e", "_ws.malformed"],
            capture_output=True, text=True, check=True,
        ).stdout.splitlines()
        rows = [r.split("\t") for r in rows]
        assert len(rows) == result.scalar("wlan", bss, "frames")
        assert all(r[4] == "" for r in rows), f"malformed frames on {bss}"
        assert {r[1] for r in rows} == {mhz}
        seen[bss] = {int(r[0], 16) if r[0].startswith("0x") else int(r[0]) for r in rows}
        data = [r for r in rows if r[0] in ("0x0020", "32")]
        if bss == "bss1":
            assert data and all(r[3] in ("10.0.9.2", "10.0.1.10") for r in data)
            assert {r[2] for r in data} >= {"54"}
    sub = _SUBTYPES
    assert {sub[k] for k in ("beacon", "probe-req", "probe-resp", "auth", "assoc-req", "assoc-resp", "data", "ack",
                             "disassoc")} <= seen["bss1"]
    assert {sub[k] for k in ("beacon", "auth", "assoc-req", "assoc-resp")} <= seen["bss2"]
