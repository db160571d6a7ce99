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
